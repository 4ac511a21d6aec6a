/*
 * check_usage.c: usage preferences in librobots (contract, "Usage
 * preferences"): the Content-Usage and Content-Signal value readers, the
 * deciding lines' fields, extra lines, images (version 5, and versions 4
 * and 3 from previous releases), the warnings for the file's author and the
 * answer members robotsd and robotsctl write (src/wire/usagew.c). Selection per
 * URL, the drafts' worked example, control tokens and warnings are golden pairs
 * in tests/data/robots (check_golden.c).
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "robots_helpers.h"
#include "robots_int.h"
#include "robots_prefs.h"
#include "wire/usagew.h"
#include "test_main.h"

#define U ROBOTS_PREF_UNKNOWN
#define A ROBOTS_PREF_ALLOWED
#define D ROBOTS_PREF_DISALLOWED

/* Expected train-ai, search, ai-input, ai-use and reader warning bits. */
struct read_case {
	const char *value;
	int train, search, input, use;
	unsigned warn;
};

/* Whether the reader gave what c expects. */
static int
read_as(const struct read_case *c, const struct pref_read *rd)
{
	return rd->pref[ROBOTS_PURPOSE_TRAIN_AI] == c->train &&
	       rd->pref[ROBOTS_PURPOSE_SEARCH] == c->search &&
	       rd->pref[ROBOTS_PURPOSE_AI_INPUT] == c->input &&
	       rd->pref[ROBOTS_PURPOSE_AI_USE] == c->use && rd->warn == c->warn;
}

START_TEST(test_read_usage)
{
	static const struct read_case cases[] = {
		{ "train-ai=n", D, U, U, U, 0 },
		{ "train-ai=y, search=n", A, D, U, U, 0 },
		{ "train-ai=y;why=\"x\"", A, U, U, U,
		    0 }, /* parameters ignored */
		{ "train-ai=n, train-ai=y", A, U, U, U, 0 }, /* the last wins */
		/* The vocabulary's example: all unknown (Boolean, String). */
		{ "train-ai=y, train-ai, search=n, search=\"n\"", U, U, U, U,
		    PREF_W_NONSTANDARD },
		{ "train-ai;allow=n, train-ai=y", A, U, U, U,
		    PREF_W_NONSTANDARD },
		{ "train-ai=no", U, U, U, U, PREF_W_NONSTANDARD },
		{ "train-ai=Y", U, U, U, U, PREF_W_NONSTANDARD },
		{ "train-ai=?1", U, U, U, U, PREF_W_NONSTANDARD },
		{ "bots=n, train-ai=n", D, U, U, U, PREF_W_LABEL },
		{ "ai-input=n", U, U, U, U,
		    PREF_W_LABEL }, /* not a Usage label */
		{ "Train-AI=n", U, U, U, U, PREF_W_PARSE }, /* uppercase key */
		{ "train-ai=n search=y", U, U, U, U, PREF_W_PARSE },
		{ "train-ai=n,", U, U, U, U, PREF_W_PARSE },
		{ "", U, U, U, U, PREF_W_PARSE },
		/* vocab-08's ai-use: a category of its own, no other implied.
		 */
		{ "ai-use=n", U, U, U, D, 0 },
		{ "ai-use=y", U, U, U, A, 0 },
		{ "train-ai=n, ai-use=y", D, U, U, A, 0 },
		{ "train-ai=y, search=y", A, A, U, U,
		    0 }, /* ai-use not implied */
		{ "ai-use=n, ai-use=y", U, U, U, A, 0 }, /* the last wins */
		{ "ai-use=n;x=1", U, U, U, D, 0 }, /* parameters ignored */
		{ "ai-use=no", U, U, U, U, PREF_W_NONSTANDARD },
		{ "ai-use", U, U, U, U, PREF_W_NONSTANDARD }, /* a Boolean */
		{ "AI-Use=n", U, U, U, U, PREF_W_PARSE }, /* uppercase key */
		{ "ai_use=n", U, U, U, U, PREF_W_LABEL },
		{ "ai-user=n", U, U, U, U, PREF_W_LABEL },
		{ "ai-input=n, ai-use=n", U, U, U, D, PREF_W_LABEL },
	};
	struct pref_read rd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct read_case *c = &cases[i];

		robots_pref_read_usage(c->value, strlen(c->value), &rd);
		ck_assert_msg(read_as(c, &rd), "'%s': got %d %d %d %d warn %u",
		    c->value, rd.pref[0], rd.pref[1], rd.pref[2], rd.pref[3],
		    rd.warn);
	}
}
END_TEST

START_TEST(test_read_signal)
{
	static const struct read_case cases[] = {
		{ "search=yes, ai-train=no", D, A, U, U, 0 },
		{ "search=yes,ai-input=no,ai-train=no", D, A, D, U, 0 },
		{ "SEARCH=Yes, AI-Train=NO", D, A, U, U, 0 }, /* any case */
		{ "search = yes ,  ai-train\t=\tno", D, A, U, U, 0 },
		{ "ai-train=no, ai-train=yes", A, U, U, U,
		    0 }, /* the last wins */
		{ "ai-train=no, , search=yes", D, A, U, U,
		    0 }, /* empty: skipped */
		{ "ai-train=disallow", U, U, U, U, PREF_W_NONSTANDARD },
		{ "ai-train=no, ai-train=maybe", U, U, U, U,
		    PREF_W_NONSTANDARD },
		/* use is known (Cloudflare's managed files), answers nothing.
		 */
		{ "use=reference", U, U, U, U, 0 },
		{ "search=yes, ai-train=no, use=reference", D, A, U, U, 0 },
		{ "USE=Reference", U, U, U, U, 0 },
		{ "use=none, search=yes", U, A, U, U, 0 },
		{ "use=", U, U, U, U,
		    PREF_W_PARSE }, /* the shape still counts */
		{ "user=reference", U, U, U, U, PREF_W_LABEL },
		{ "ai-use=no", U, U, U, U, PREF_W_LABEL }, /* a Usage label */
		/* The comma missing: one member of a bad shape, both unknown.
		 */
		{ "search=yes ai-train=no", U, U, U, U, PREF_W_PARSE },
		{ "search, ai-train=no", D, U, U, U, PREF_W_PARSE },
		{ "search=", U, U, U, U, PREF_W_PARSE },
		{ "=yes", U, U, U, U, PREF_W_PARSE },
		{ "sea rch=yes", U, U, U, U, PREF_W_PARSE },
		{ "", U, U, U, U, PREF_W_PARSE },
	};
	struct pref_read rd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct read_case *c = &cases[i];

		robots_pref_read_signal(c->value, strlen(c->value), &rd);
		ck_assert_msg(read_as(c, &rd), "'%s': got %d %d %d %d warn %u",
		    c->value, rd.pref[0], rd.pref[1], rd.pref[2], rd.pref[3],
		    rd.warn);
	}
}
END_TEST

/* The preferences of agent for a raw path, normalized as a match path. */
static struct robots_usage
usage(const struct robots *r, const char *agent, const char *path)
{
	struct robots_usage u;
	char norm[1024];
	size_t n = robots_pct_normalize(path, strlen(path), norm, 0);

	robots_usage(r, agent, strlen(agent), norm, n, &u);
	return u;
}

START_TEST(test_usage_from_fields)
{
	struct robots *r = parse("Content-Signal: search=yes, ai-train=no\n"
	                         "User-agent: *\n"
	                         "Allow: /\n"
	                         "Content-Usage: train-ai=n   \n"
	                         "Content-Usage: /x\ttrain-ai=y\n");
	struct robots_usage u = usage(r, "bot", "/y");

	ck_assert_uint_eq(u.nfrom, 2);
	ck_assert_int_eq(u.from[0].kind, ROBOTS_CONTENT_SIGNAL);
	ck_assert_int_eq(u.from[0].file_scope, 1);
	ck_assert_uint_eq(u.from[0].pattern_len, 1);
	ck_assert(memcmp(u.from[0].pattern, "/", 1) == 0);
	ck_assert_uint_eq(u.from[0].value_len, 23);
	ck_assert(memcmp(u.from[0].value, "search=yes, ai-train=no", 23) == 0);
	ck_assert_int_eq(u.from[1].kind, ROBOTS_CONTENT_USAGE);
	ck_assert_int_eq(u.from[1].file_scope, 0);
	ck_assert_uint_eq(u.from[1].line, 4);
	ck_assert_uint_eq(u.from[1].value_len, 10);
	u = usage(r, "bot", "/x");
	ck_assert_uint_eq(u.nfrom, 2);
	ck_assert_uint_eq(u.from[1].pattern_len, 2);
	ck_assert(memcmp(u.from[1].pattern, "/x", 2) == 0);
	ck_assert(memcmp(u.from[1].value, "train-ai=y", 10) == 0);
	robots_unref(r);
}
END_TEST

START_TEST(test_usage_from_bounded)
{
	char body[4096];
	size_t off = 0, i;
	struct robots *r;
	struct robots_usage u;

	off +=
	    (size_t)snprintf(body + off, sizeof(body) - off, "User-agent: *\n");
	for (i = 0; i < 20; i++)
		off += (size_t)snprintf(body + off, sizeof(body) - off,
		    "Content-Usage: /a train-ai=y\n");
	off += (size_t)snprintf(
	    body + off, sizeof(body) - off, "Content-Usage: /a train-ai=n\n");
	r = parse(body);
	u = usage(r, "bot", "/a");
	/* All 21 ties combine; the first 16 are listed. */
	ck_assert_int_eq(u.pref[ROBOTS_PURPOSE_TRAIN_AI], D);
	ck_assert_uint_eq(u.nfrom, ROBOTS_USAGE_FROM_MAX);
	ck_assert_uint_eq(u.from[15].line, 17);
	robots_unref(r);
}
END_TEST

/* draft-ietf-aipref-attach-05, section "Example", verbatim. */
static const char attach_example[] = "User-Agent: *\n"
                                     "Allow: /\n"
                                     "Disallow: /never/\n"
                                     "Content-Usage: train-ai=n\n"
                                     "Content-Usage: /ai-ok/ train-ai=y\n"
                                     "\n"
                                     "User-Agent: ExampleBot\n"
                                     "Allow: /\n"
                                     "Content-Usage: train-ai=y\n";

START_TEST(test_group_split_keeps_access)
{
	/* The same file with and without the line between User-agent lines:
	 * the same verdicts for both agents; both get the line. */
	struct robots *with = parse("User-agent: a\n"
	                            "Content-Usage: train-ai=n\n"
	                            "User-agent: b\n"
	                            "Disallow: /x\n"
	                            "User-agent: *\n"
	                            "Disallow: /\n");
	struct robots *without = parse("User-agent: a\n"
	                               "User-agent: b\n"
	                               "Disallow: /x\n"
	                               "User-agent: *\n"
	                               "Disallow: /\n");
	static const char *agents[] = { "a", "b", "c" };
	static const char *paths[] = { "/", "/x", "/y", "/xy" };
	struct robots_verdict v1, v2;
	struct robots_warning w;
	size_t i, k;

	for (i = 0; i < 3; i++)
		for (k = 0; k < 4; k++) {
			v1 = check(with, agents[i], paths[k]);
			v2 = check(without, agents[i], paths[k]);
			ck_assert_int_eq(v1.allowed, v2.allowed);
			ck_assert_int_eq(v1.reason, v2.reason);
		}
	ck_assert(!check(with, "a", "/x").allowed);
	ck_assert(check(with, "a", "/y").allowed);
	ck_assert_int_eq(robots_group_count(with), 2);
	ck_assert_int_eq(usage(with, "a", "/y").pref[0], D);
	ck_assert_int_eq(usage(with, "b", "/y").pref[0], D);
	ck_assert_int_eq(usage(with, "c", "/y").pref[0], U);
	ck_assert_uint_eq(robots_warning_count(with), 2);
	robots_warning(with, 0, &w);
	ck_assert_str_eq(w.code, "group_split_ambiguous");
	ck_assert_uint_eq(w.line, 2);
	robots_warning(with, 1, &w); /* a and b get it, not '*' */
	ck_assert_str_eq(w.code, "pref_not_in_star_group");
	ck_assert_uint_eq(w.line, 2);
	robots_unref(with);
	robots_unref(without);
}
END_TEST

START_TEST(test_extras)
{
	struct robots *r = parse("License: https://example.com/license.xml\n"
	                         "User-agent: *\n"
	                         "Allow: /\n"
	                         "Content-Usage: train-ai=n\n"
	                         "Host: example.com\n"
	                         "User-agent: b\n"
	                         "Content-Signal: ai-train=no\n");
	struct robots_extra e;

	ck_assert_uint_eq(robots_extra_count(r), 4);
	robots_extra(r, 0, &e);
	ck_assert_int_eq(e.group, -1);
	ck_assert_uint_eq(e.line, 1);
	ck_assert_uint_eq(e.name_len, 7);
	ck_assert(memcmp(e.name, "License", 7) == 0);
	ck_assert_uint_eq(e.value_len, 31);
	robots_extra(r, 1, &e);
	ck_assert_int_eq(e.group, 0);
	ck_assert(memcmp(e.name, "Content-Usage", 13) == 0);
	robots_extra(r, 2, &e);
	ck_assert_int_eq(e.group, 0);
	ck_assert(memcmp(e.value, "example.com", 11) == 0);
	robots_extra(r, 3, &e);
	ck_assert_int_eq(e.group, 1);
	ck_assert_uint_eq(e.line, 7);
	robots_extra(r, 4, &e); /* out of range: empty */
	ck_assert_uint_eq(e.line, 0);
	ck_assert_ptr_null(e.name);
	robots_unref(r);
	/* Other lines are bounded (an HTML page has thousands), preference
	 * lines are all kept. */
	{
		char body[8192];
		size_t off = 0, i;

		for (i = 0; i < 100; i++)
			off += (size_t)snprintf(
			    body + off, sizeof(body) - off, "X-%zu: y\n", i);
		snprintf(body + off, sizeof(body) - off,
		    "User-agent: *\nContent-Usage: train-ai=n\n");
		r = parse(body);
		ck_assert_uint_eq(robots_extra_count(r), 65);
		robots_extra(r, 64, &e);
		ck_assert_uint_eq(e.line, 102);
		ck_assert_int_eq(usage(r, "a", "/").pref[0], D);
		robots_unref(r);
	}
	/* Nothing extra: no bytes spent, still a ruleset with preferences. */
	r = parse("User-agent: *\nDisallow: /p123456/\nAllow: /\n");
	ck_assert_uint_eq(robots_extra_count(r), 0);
	ck_assert_uint_eq(robots_warning_count(r), 0);
	ck_assert_int_eq(robots_has_prefs(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_image_v5)
{
	struct robots *r = parse(attach_example), *copy;
	struct robots_usage u;
	size_t len;
	const void *img = robots_image(r, &len);

	ck_assert_int_eq(ROBOTS_IMAGE_VERSION, 5);
	ck_assert_ptr_nonnull(copy = robots_from_image_version(img, len, 5));
	ck_assert_int_eq(robots_has_prefs(copy), 1);
	u = usage(copy, "OtherBot", "/ai-ok/test");
	ck_assert_int_eq(u.pref[0], A);
	ck_assert_uint_eq(u.from[0].line, 5);
	ck_assert_uint_eq(robots_extra_count(copy), 3);
	robots_unref(copy);
	/*
	 * A version-4 image (the same layout, compiled before ai-use and
	 * the author warnings) is read without its preferences: the body is
	 * parsed again to answer them; its section must still be in bounds.
	 */
	ck_assert_ptr_nonnull(copy = robots_from_image_version(img, len, 4));
	ck_assert_int_eq(robots_has_prefs(copy), 0);
	ck_assert_int_eq(usage(copy, "OtherBot", "/ai-ok/test").pref[0], U);
	ck_assert_uint_eq(robots_extra_count(copy), 0);
	ck_assert_uint_eq(robots_warning_count(copy), 0);
	ck_assert(!check(copy, "OtherBot", "/never/x").allowed);
	robots_unref(copy);
	/* A preference section out of bounds is not an image. */
	{
		struct robots *bad = malloc(len);

		ck_assert_ptr_nonnull(bad);
		memcpy(bad, img, len);
		bad->prefs = (uint32_t)len + 8;
		ck_assert_ptr_null(robots_from_image_version(bad, len, 5));
		ck_assert_ptr_null(robots_from_image_version(bad, len, 4));
		/*
		 * 0: a ruleset compiled without preference data (restored
		 * from a version-3 or 4 image) saved again as a version-5 one
		 * (or, by the release before, as a version-4 one).
		 */
		bad->prefs = 0;
		ck_assert_ptr_eq(
		    copy = robots_adopt_image_version(bad, len, 5), bad);
		ck_assert_int_eq(robots_has_prefs(copy), 0);
		robots_unref(copy);
	}
	ck_assert_ptr_null(robots_from_image_version(img, len, 2));
	ck_assert_ptr_null(robots_from_image_version(img, len, 6));
	ck_assert_ptr_null(robots_from_image_version(img, len - 1, 5));
	robots_unref(r);
}
END_TEST

/* Read a file of the test data; its length in *len. */
static char *
image_file(const char *name, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/image/%s", TESTDATADIR, name);
	return slurp(path, len);
}

START_TEST(test_image_v3)
{
	/*
	 * v3-x86_64.img: robots_image() of v3.txt by the previous release
	 * (ROBOTS_IMAGE_VERSION 3), host byte order as in a state file: read
	 * only where it was made.
	 */
#if defined(__x86_64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	static const char *agents[] = { "bot", "ExampleBot", "Google-Extended",
		"Applebot-Extended" };
	static const char *paths[] = { "/", "/private/x", "/private/ok",
		"/public", "/public/x", "/robots.txt" };
	size_t img_len, body_len, i, k;
	char *img = image_file("v3-x86_64.img", &img_len);
	char *body = image_file("v3.txt", &body_len);
	struct robots *old, *fresh = robots_parse(body, body_len);
	struct robots_verdict v1, v2;
	struct robots_usage u;

	/* Read as version 5 it is the same: a ruleset without preferences. */
	ck_assert_ptr_nonnull(old = robots_from_image(img, img_len));
	ck_assert_int_eq(robots_has_prefs(old), 0);
	robots_unref(old);
	ck_assert_ptr_nonnull(old = robots_from_image_version(img, img_len, 3));
	ck_assert_int_eq(robots_has_prefs(old), 0);
	ck_assert_int_eq(robots_has_prefs(fresh), 1);
	for (i = 0; i < 4; i++)
		for (k = 0; k < 6; k++) {
			v1 = check(old, agents[i], paths[k]);
			v2 = check(fresh, agents[i], paths[k]);
			ck_assert_int_eq(v1.allowed, v2.allowed);
			ck_assert_int_eq(v1.reason, v2.reason);
			ck_assert_uint_eq(v1.rule.line, v2.rule.line);
			ck_assert(v1.crawl_delay == v2.crawl_delay);
		}
	ck_assert(!check(old, "Google-Extended", "/x").allowed);
	ck_assert_uint_eq(robots_sitemap_count(old), 1);
	/* No preference data: all unknown, nothing listed. */
	u = usage(old, "bot", "/");
	ck_assert_int_eq(u.pref[0], U);
	ck_assert_uint_eq(u.nfrom, 0);
	ck_assert_int_eq(usage(fresh, "bot", "/").pref[0], D);
	ck_assert_uint_eq(robots_extra_count(old), 0);
	ck_assert_uint_eq(robots_warning_count(old), 0);
	robots_unref(old);
	/* The adopt form takes the buffer. */
	ck_assert_ptr_nonnull(
	    old = robots_adopt_image_version(img, img_len, 3));
	ck_assert(!check(old, "bot", "/private/x").allowed);
	robots_unref(old);
	robots_unref(fresh);
	free(body);
#endif
}
END_TEST

/*
 * The author warnings (contract, "Every signal"): the file that triggers
 * each, at which line, and near misses that must not (line 0).
 */
struct author_case {
	const char *body, *code;
	unsigned line;
};

static const struct author_case author_cases[] = {
	/* A Cloudflare-style line pasted at the end lands in the last group.
	 */
	{ "User-agent: *\nDisallow: /a\n\nUser-agent: Bot\nDisallow: /b\n"
	  "Content-Signal: search=yes, ai-train=no\n",
	    "pref_not_in_star_group", 6 },
	{ "User-agent: Bot\nDisallow: /p\nContent-Usage: train-ai=n\n"
	  "User-agent: *\nDisallow: /x\n",
	    "pref_not_in_star_group", 3 }, /* a '*' group after it */
	{ "User-agent: *\nContent-Usage: train-ai=n\n",
	    "pref_not_in_star_group", 0 },
	{ "User-agent: Bot\nContent-Usage: train-ai=n\n", /* no '*' group */
	    "pref_not_in_star_group", 0 },
	{ "User-agent: Bot\nUser-agent: *\nContent-Usage: train-ai=n\n",
	    "pref_not_in_star_group", 0 }, /* its group names '*' too */
	{ "Content-Signal: ai-train=no\nUser-agent: Bot\nDisallow: /\n"
	  "User-agent: *\nAllow: /\n",
	    "pref_not_in_star_group", 0 }, /* file scope: every agent */
	/* A prepended Allow: / beside the site's own Disallow: /. */
	{ "User-agent: *\nAllow: /\nDisallow: /\n", "allow_disallow_tie", 3 },
	{ "User-agent: *\nDisallow: /\nAllow: /\n", "allow_disallow_tie", 2 },
	{ "User-agent: *\nAllow: /\n\nUser-agent: *\nDisallow: /\n",
	    "allow_disallow_tie", 5 }, /* the '*' groups merged */
	{ "User-agent: a\nUser-agent: b\nAllow: /p\nUser-agent: B\n"
	  "Disallow: /p\n",
	    "allow_disallow_tie", 5 }, /* b's groups merged */
	{ "User-agent: *\nAllow: /%7Ea\nDisallow: /~a\n", "allow_disallow_tie",
	    3 }, /* after percent-encoding normalization */
	{ "User-agent: *\nAllow: /a\nDisallow: /A\n", "allow_disallow_tie", 0 },
	{ "User-agent: *\nAllow: /a$\nDisallow: /a\n", "allow_disallow_tie",
	    0 },
	{ "User-agent: *\nAllow: /a*\nDisallow: /a\n", "allow_disallow_tie",
	    0 }, /* the Allow is longer: it wins by length */
	{ "User-agent: *\nAllow: /\nUser-agent: Bot\nDisallow: /\n",
	    "allow_disallow_tie", 0 }, /* no agent gets both */
	{ "User-agent: *\nAllow: /\nDisallow: /x\nDisallow:\n",
	    "allow_disallow_tie", 0 },
	{ "User-agent: *\nAllow: /d/index.html\nDisallow: /d/$\n",
	    "allow_disallow_tie", 0 }, /* Google's twin is not a line */
	/* Content-Signal against Content-Usage, one group, one pattern. */
	{ "User-agent: *\nContent-Signal: ai-train=no\n"
	  "Content-Usage: train-ai=y\n",
	    "pref_conflict", 3 },
	{ "User-agent: *\nContent-Usage: /blog search=n\n"
	  "Content-Signal: /blog search=yes, ai-train=no\n",
	    "pref_conflict", 3 },
	{ "Content-Signal: ai-train=no\nUser-agent: *\nAllow: /\n"
	  "Content-Usage: / train-ai=y\n",
	    "pref_conflict", 4 }, /* file scope: part of every group */
	{ "User-agent: *\nContent-Signal: /%62log ai-train=no\n"
	  "Content-Usage: /blog train-ai=y\n",
	    "pref_conflict", 3 },
	{ "User-agent: *\nContent-Signal: ai-train=no\n"
	  "Content-Usage: train-ai=n\n",
	    "pref_conflict", 0 }, /* they agree */
	{ "User-agent: *\nContent-Signal: ai-train=no\n"
	  "Content-Usage: /blog train-ai=y\n",
	    "pref_conflict", 0 }, /* not the same pattern */
	{ "User-agent: *\nContent-Signal: ai-input=no\nContent-Usage: "
	  "ai-use=y\n",
	    "pref_conflict", 0 }, /* no purpose both name */
	{ "User-agent: *\nAllow: /\nContent-Signal: ai-train=no\n"
	  "User-agent: Bot\nDisallow: /x\nContent-Usage: train-ai=y\n",
	    "pref_conflict", 0 }, /* two groups */
	{ "User-agent: *\nContent-Signal: ai-train=no\n"
	  "Content-Usage: train-ai=\"y\"\n",
	    "pref_conflict", 0 }, /* unknown is no side */
};

/* The line of r's first warning of code, or 0. */
static unsigned
warned_at(const struct robots *r, const char *code)
{
	struct robots_warning w;
	size_t i;

	for (i = 0; i < robots_warning_count(r); i++) {
		robots_warning(r, i, &w);
		if (strcmp(w.code, code) == 0)
			return w.line;
	}
	return 0;
}

START_TEST(test_author_warnings)
{
	const struct author_case *c = &author_cases[_i];
	struct robots *r = parse(c->body);

	ck_assert_msg(warned_at(r, c->code) == c->line,
	    "%s at %u, want %u:\n%s", c->code, warned_at(r, c->code), c->line,
	    c->body);
	robots_unref(r);
}
END_TEST

/* A warning of each code once for a line, whatever pairs warned it. */
START_TEST(test_author_warnings_once)
{
	struct robots *r = parse("Content-Signal: ai-train=no\n"
	                         "User-agent: *\n"
	                         "Content-Signal: ai-train=no\n"
	                         "Content-Usage: train-ai=y\n"
	                         "Allow: /\nAllow: /\nDisallow: /\n");
	struct robots_warning w;

	ck_assert_uint_eq(robots_warning_count(r), 3);
	robots_warning(r, 0, &w);
	ck_assert_str_eq(w.code, "signal_outside_group");
	robots_warning(r, 1, &w);
	ck_assert_uint_eq(w.line, 4);
	ck_assert_str_eq(w.code, "pref_conflict");
	ck_assert_ptr_nonnull(strstr(w.message, "most restrictive"));
	robots_warning(r, 2, &w);
	ck_assert_uint_eq(w.line, 7);
	ck_assert_str_eq(w.code, "allow_disallow_tie");
	robots_unref(r);
}
END_TEST

START_TEST(test_answer_members)
{
	struct robots *r = parse("Content-Signal: search=yes, ai-train=no\n"
	                         "User-agent: *\n"
	                         "Allow: /\n"
	                         "Content-Usage: train-ai=n\n"
	                         "Disallow: /x\n");
	struct robots_usage u = usage(r, "bot", "/");
	struct robots_verdict v;
	struct buf b;
	struct jw w;

	b = BUF_INIT(0);
	jw_init(&w, &b);
	jw_obj(&w);
	jw_kvlit(&w, "id", "1");
	jw_usage(&w, &u);
	jw_end(&w);
	ck_assert(jw_ok(&w));
	buf_terminate(&b);
	ck_assert_str_eq(b.p,
	    "{\"id\":1,\"usage\":{\"train-ai\":\"disallowed\","
	    "\"search\":\"allowed\","
	    "\"ai-input\":\"unknown\",\"ai-use\":\"unknown\"},"
	    "\"usage_from\":["
	    "{\"directive\":\"content-signal\",\"pattern\":\"/\",\"line\":1,"
	    "\"value\":\"search=yes, ai-train=no\",\"scope\":\"file\"},"
	    "{\"directive\":\"content-usage\",\"pattern\":\"/\",\"line\":4,"
	    "\"value\":\"train-ai=n\"}]}");
	buf_reset(&b);
	jw_init(&w, &b);
	jw_obj(&w);
	jw_kvlit(&w, "id", "1");
	jw_usage(&w, NULL);
	jw_end(&w);
	ck_assert(jw_ok(&w));
	buf_terminate(&b);
	ck_assert_str_eq(b.p, "{\"id\":1,\"usage\":null,\"usage_from\":[]}");
	buf_reset(&b);
	robots_check(r, "Google-Extended", 15, "/x", 2, &v);
	jw_init(&w, &b);
	jw_obj(&w);
	jw_token(&w, "Google-Extended", 15, &v);
	jw_end(&w);
	ck_assert(jw_ok(&w));
	buf_terminate(&b);
	ck_assert_str_eq(b.p,
	    "{\"google-extended\":{\"allowed\":false,\"rule\":{\"directive\":"
	    "\"disallow\",\"pattern\":\"/x\",\"line\":5}}}");
	buf_reset(&b);
	robots_check(r, "a", 1, "/y", 2, &v);
	jw_init(&w, &b);
	jw_rule(&w, &v);
	ck_assert(jw_ok(&w));
	buf_terminate(&b);
	ck_assert_str_eq(
	    b.p, "{\"directive\":\"allow\",\"pattern\":\"/\",\"line\":3}");
	buf_clear(&b);
	robots_unref(r);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(
	    robots_purpose_name(ROBOTS_PURPOSE_TRAIN_AI), "train-ai");
	ck_assert_str_eq(robots_purpose_name(ROBOTS_PURPOSE_SEARCH), "search");
	ck_assert_str_eq(
	    robots_purpose_name(ROBOTS_PURPOSE_AI_INPUT), "ai-input");
	ck_assert_str_eq(robots_purpose_name(ROBOTS_PURPOSE_AI_USE), "ai-use");
	ck_assert_str_eq(robots_pref_name(ROBOTS_PREF_UNKNOWN), "unknown");
	ck_assert_str_eq(robots_pref_name(ROBOTS_PREF_ALLOWED), "allowed");
	ck_assert_str_eq(
	    robots_pref_name(ROBOTS_PREF_DISALLOWED), "disallowed");
	ck_assert_str_eq(
	    robots_pref_kind_name(ROBOTS_CONTENT_USAGE), "content-usage");
	ck_assert_str_eq(
	    robots_pref_kind_name(ROBOTS_CONTENT_SIGNAL), "content-signal");
}
END_TEST

static Suite *
usage_suite(void)
{
	Suite *s = suite_create("usage");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_read_usage);
	tcase_add_test(tc, test_read_signal);
	tcase_add_test(tc, test_usage_from_fields);
	tcase_add_test(tc, test_usage_from_bounded);
	tcase_add_test(tc, test_group_split_keeps_access);
	tcase_add_test(tc, test_extras);
	tcase_add_test(tc, test_image_v5);
	tcase_add_test(tc, test_image_v3);
	tcase_add_loop_test(tc, test_author_warnings, 0,
	    (int)(sizeof(author_cases) / sizeof(author_cases[0])));
	tcase_add_test(tc, test_author_warnings_once);
	tcase_add_test(tc, test_answer_members);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(usage_suite, NULL, NULL);
