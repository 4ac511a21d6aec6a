/*
 * check_usage.c: usage preferences in librobots (contract, "Usage
 * preferences"): the Content-Usage and Content-Signal value readers, the
 * deciding lines' fields, extra lines, images (version 4, and version 3
 * from the previous release) and the answer members robotsd and robotsctl
 * write (src/wire/usagew.c). Selection per URL, the drafts' worked
 * example, control tokens and warnings are golden pairs in
 * tests/data/robots (check_golden.c).
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/buf.h"
#include "robots_helpers.h"
#include "robots_int.h"
#include "robots_prefs.h"
#include "wire/usagew.h"
#include "test_main.h"

#define U ROBOTS_PREF_UNKNOWN
#define A ROBOTS_PREF_ALLOWED
#define D ROBOTS_PREF_DISALLOWED

/* Expected train-ai, search, ai-input and reader warning bits. */
struct read_case {
	const char *value;
	int train, search, input;
	unsigned warn;
};

START_TEST(test_read_usage)
{
	static const struct read_case cases[] = {
		{ "train-ai=n", D, U, U, 0 },
		{ "train-ai=y, search=n", A, D, U, 0 },
		{ "train-ai=y;why=\"x\"", A, U, U, 0 }, /* parameters ignored */
		{ "train-ai=n, train-ai=y", A, U, U, 0 }, /* the last wins */
		/* The vocabulary's example: all unknown (Boolean, String). */
		{ "train-ai=y, train-ai, search=n, search=\"n\"", U, U, U,
		    PREF_W_NONSTANDARD },
		{ "train-ai;allow=n, train-ai=y", A, U, U, PREF_W_NONSTANDARD },
		{ "train-ai=no", U, U, U, PREF_W_NONSTANDARD },
		{ "train-ai=Y", U, U, U, PREF_W_NONSTANDARD },
		{ "train-ai=?1", U, U, U, PREF_W_NONSTANDARD },
		{ "bots=n, train-ai=n", D, U, U, PREF_W_LABEL },
		{ "ai-input=n", U, U, U, PREF_W_LABEL }, /* not a Usage label */
		{ "Train-AI=n", U, U, U, PREF_W_PARSE }, /* uppercase key */
		{ "train-ai=n search=y", U, U, U, PREF_W_PARSE },
		{ "train-ai=n,", U, U, U, PREF_W_PARSE },
		{ "", U, U, U, PREF_W_PARSE },
	};
	struct pref_read rd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct read_case *c = &cases[i];

		robots_pref_read_usage(c->value, strlen(c->value), &rd);
		ck_assert_msg(
		    rd.pref[ROBOTS_PURPOSE_TRAIN_AI] == c->train &&
		        rd.pref[ROBOTS_PURPOSE_SEARCH] == c->search &&
		        rd.pref[ROBOTS_PURPOSE_AI_INPUT] == c->input &&
		        rd.warn == c->warn,
		    "'%s': got %d %d %d warn %u", c->value, rd.pref[0],
		    rd.pref[1], rd.pref[2], rd.warn);
	}
}
END_TEST

START_TEST(test_read_signal)
{
	static const struct read_case cases[] = {
		{ "search=yes, ai-train=no", D, A, U, 0 },
		{ "search=yes,ai-input=no,ai-train=no", D, A, D, 0 },
		{ "SEARCH=Yes, AI-Train=NO", D, A, U, 0 }, /* any case */
		{ "search = yes ,  ai-train\t=\tno", D, A, U, 0 },
		{ "ai-train=no, ai-train=yes", A, U, U, 0 }, /* the last wins */
		{ "ai-train=no, , search=yes", D, A, U,
		    0 }, /* empty: skipped */
		{ "ai-train=disallow", U, U, U, PREF_W_NONSTANDARD },
		{ "ai-train=no, ai-train=maybe", U, U, U, PREF_W_NONSTANDARD },
		{ "use=none, search=yes", U, A, U, PREF_W_LABEL },
		/* The comma missing: one member of a bad shape, both unknown.
		 */
		{ "search=yes ai-train=no", U, U, U, PREF_W_PARSE },
		{ "search, ai-train=no", D, U, U, PREF_W_PARSE },
		{ "search=", U, U, U, PREF_W_PARSE },
		{ "=yes", U, U, U, PREF_W_PARSE },
		{ "sea rch=yes", U, U, U, PREF_W_PARSE },
		{ "", U, U, U, PREF_W_PARSE },
	};
	struct pref_read rd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct read_case *c = &cases[i];

		robots_pref_read_signal(c->value, strlen(c->value), &rd);
		ck_assert_msg(
		    rd.pref[ROBOTS_PURPOSE_TRAIN_AI] == c->train &&
		        rd.pref[ROBOTS_PURPOSE_SEARCH] == c->search &&
		        rd.pref[ROBOTS_PURPOSE_AI_INPUT] == c->input &&
		        rd.warn == c->warn,
		    "'%s': got %d %d %d warn %u", c->value, rd.pref[0],
		    rd.pref[1], rd.pref[2], rd.warn);
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
	ck_assert_uint_eq(robots_warning_count(with), 1);
	robots_warning(with, 0, &w);
	ck_assert_str_eq(w.code, "group_split_ambiguous");
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

START_TEST(test_image_v4)
{
	struct robots *r = parse(attach_example), *copy;
	struct robots_usage u;
	size_t len;
	const void *img = robots_image(r, &len);

	ck_assert_ptr_nonnull(copy = robots_from_image_version(img, len, 4));
	ck_assert_int_eq(robots_has_prefs(copy), 1);
	u = usage(copy, "OtherBot", "/ai-ok/test");
	ck_assert_int_eq(u.pref[0], A);
	ck_assert_uint_eq(u.from[0].line, 5);
	ck_assert_uint_eq(robots_extra_count(copy), 3);
	robots_unref(copy);
	/* A preference section out of bounds is not an image. */
	{
		struct robots *bad = malloc(len);

		ck_assert_ptr_nonnull(bad);
		memcpy(bad, img, len);
		bad->prefs = (uint32_t)len + 8;
		ck_assert_ptr_null(robots_from_image_version(bad, len, 4));
		/*
		 * 0: a ruleset compiled without preference data (restored
		 * from a version-3 image) saved again as a version-4 one.
		 */
		bad->prefs = 0;
		ck_assert_ptr_eq(
		    copy = robots_adopt_image_version(bad, len, 4), bad);
		ck_assert_int_eq(robots_has_prefs(copy), 0);
		robots_unref(copy);
	}
	ck_assert_ptr_null(robots_from_image_version(img, len, 2));
	ck_assert_ptr_null(robots_from_image_version(img, len, 5));
	ck_assert_ptr_null(robots_from_image_version(img, len - 1, 4));
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

	/* Read as version 4 it is the same: a ruleset without preferences. */
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

	b = BUF_INIT(0);
	jw_usage(&b, &u);
	buf_terminate(&b);
	ck_assert_str_eq(b.p,
	    ",\"usage\":{\"train-ai\":\"disallowed\",\"search\":\"allowed\","
	    "\"ai-input\":\"unknown\"},\"usage_from\":["
	    "{\"directive\":\"content-signal\",\"pattern\":\"/\",\"line\":1,"
	    "\"value\":\"search=yes, ai-train=no\",\"scope\":\"file\"},"
	    "{\"directive\":\"content-usage\",\"pattern\":\"/\",\"line\":4,"
	    "\"value\":\"train-ai=n\"}]");
	buf_reset(&b);
	jw_usage(&b, NULL);
	buf_terminate(&b);
	ck_assert_str_eq(b.p, ",\"usage\":null,\"usage_from\":[]");
	buf_reset(&b);
	robots_check(r, "Google-Extended", 15, "/x", 2, &v);
	jw_token(&b, "Google-Extended", 15, &v);
	buf_terminate(&b);
	ck_assert_str_eq(b.p,
	    "\"google-extended\":{\"allowed\":false,\"rule\":{\"directive\":"
	    "\"disallow\",\"pattern\":\"/x\",\"line\":5}}");
	buf_reset(&b);
	robots_check(r, "a", 1, "/y", 2, &v);
	jw_rule(&b, &v);
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
	tcase_add_test(tc, test_image_v4);
	tcase_add_test(tc, test_image_v3);
	tcase_add_test(tc, test_answer_members);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(usage_suite, NULL, NULL);
