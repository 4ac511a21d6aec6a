/*
 * check_ruldiff.c: the change feed's rule difference (ruldiff.h), by table.
 * Each row is two versions of a robots.txt (or a state), an agent, and the
 * patterns newly disallowed and newly allowed for it, written by hand from
 * the definition in docs/protocol.md ("watch"): RFC 9309 group selection
 * on each side, patterns compared as written, sorted by bytes.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "robots.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "feed/ruldiff.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

#define R RULDIFF_RULES
#define A RULDIFF_ALLOW_ALL
#define D RULDIFF_DISALLOW_ALL
#define N RULDIFF_NONE

static const struct row {
	const char *name;
	enum ruldiff_state os;
	const char *old;
	enum ruldiff_state ns;
	const char *new;
	const char *agent;
	const char *dis;   /* expected, joined by '|' */
	const char *allow; /* expected, joined by '|' */
} rows[] = {
	{ "same rules", R, "User-agent: *\nDisallow: /a\n", R,
	    "User-agent: *\nDisallow: /a\n# comment\n", "foobot", "", "" },
	{ "disallow added", R, "User-agent: *\nDisallow: /a\n", R,
	    "User-agent: *\nDisallow: /a\nDisallow: /b\n", "foobot", "/b", "" },
	{ "disallow removed", R, "User-agent: *\nDisallow: /a\nDisallow: /b\n",
	    R, "User-agent: *\nDisallow: /a\n", "foobot", "", "/b" },
	{ "allow added", R, "User-agent: *\nDisallow: /\n", R,
	    "User-agent: *\nDisallow: /\nAllow: /pub\n", "foobot", "", "/pub" },
	{ "allow removed", R, "User-agent: *\nDisallow: /\nAllow: /pub\n", R,
	    "User-agent: *\nDisallow: /\n", "foobot", "/pub", "" },
	{ "pattern edited", R, "User-agent: *\nDisallow: /x/\n", R,
	    "User-agent: *\nDisallow: /x/*.pdf\n", "foobot", "/x/*.pdf",
	    "/x/" },
	{ "sorted by bytes", R, "User-agent: *\n", R,
	    "User-agent: *\nDisallow: /b\nDisallow: /B\nDisallow: /a\n",
	    "foobot", "/B|/a|/b", "" },
	{ "repeats once", R, "User-agent: *\n", R,
	    "User-agent: *\nDisallow: /a\nDisallow: /a\n", "foobot", "/a", "" },
	{ "own group only", R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\nDisallow: /s\n",
	    R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\nDisallow: "
	    "/t\n",
	    "foobot", "", "" },
	{ "star change seen by others", R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\nDisallow: /s\n",
	    R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\nDisallow: "
	    "/t\n",
	    "barbot", "/t", "/s" },
	{ "full user-agent reduced to its token", R, "User-agent: *\n", R,
	    "User-agent: FooBot\nDisallow: /f\n", "FooBot/2.1 (+http://x)",
	    "/f", "" },
	{ "agent gets a group of its own", R, "User-agent: *\nDisallow: /s\n",
	    R, "User-agent: *\nDisallow: /s\n\nUser-agent: foobot\nAllow: /\n",
	    "foobot", "", "/|/s" },
	{ "groups merged", R, "User-agent: foobot\nDisallow: /1\n", R,
	    "User-agent: foobot\nDisallow: /1\n\nUser-agent: foobot\n"
	    "Disallow: /2\n",
	    "foobot", "/2", "" },
	{ "rules to disallow-all", R, "User-agent: *\nDisallow: /a\n", D, NULL,
	    "foobot", "/", "" },
	{ "disallow-all to rules", D, NULL, R, "User-agent: *\nDisallow: /a\n",
	    "foobot", "", "/" },
	{ "allow-all to rules", A, NULL, R,
	    "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "foobot", "/a",
	    "/a/b" },
	{ "rules to allow-all", R, "User-agent: *\nDisallow: /a\nAllow: /a/b\n",
	    A, NULL, "foobot", "/a/b", "/a" },
	{ "disallow-all to allow-all", D, NULL, A, NULL, "foobot", "", "/" },
	{ "allow-all to disallow-all", A, NULL, D, NULL, "foobot", "/", "" },
	{ "disallow-all twice", D, NULL, D, NULL, "foobot", "", "" },
	{ "no old version", N, NULL, R, "User-agent: *\nDisallow: /a\n",
	    "foobot", "/a", "" },
	{ "no old version to disallow-all", N, NULL, D, NULL, "foobot", "/",
	    "" },
	{ "index.html allow once", R, "User-agent: *\nDisallow: /\n", R,
	    "User-agent: *\nDisallow: /\nAllow: /d/index.html\n", "foobot", "",
	    "/d/index.html" },
};

/* d's patterns of one list joined by '|'. */
static void
join(char *out, size_t cap, const struct ruldiff_pat *v, size_t n)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(len + v[i].len + 2, cap);
		if (i > 0)
			out[len++] = '|';
		memcpy(out + len, v[i].p, v[i].len);
		len += v[i].len;
		out[len] = '\0';
	}
}

START_TEST(test_row)
{
	const struct row *t = &rows[_i];
	struct robots *ro = NULL, *rn = NULL;
	struct ruldiff_side o = { t->os, NULL }, n = { t->ns, NULL };
	struct ruldiff d;
	char got[256];

	if (t->old != NULL)
		o.robots = ro = robots_parse(t->old, strlen(t->old));
	if (t->new != NULL)
		n.robots = rn = robots_parse(t->new, strlen(t->new));
	ck_assert_int_eq(
	    ruldiff_agent(&o, &n, t->agent, strlen(t->agent), &d), 0);
	join(got, sizeof(got), d.dis, d.ndis);
	ck_assert_msg(
	    strcmp(got, t->dis) == 0, "%s: newly_disallowed %s", t->name, got);
	join(got, sizeof(got), d.allow, d.nallow);
	ck_assert_msg(
	    strcmp(got, t->allow) == 0, "%s: newly_allowed %s", t->name, got);
	ruldiff_clear(&d);
	robots_unref(ro);
	robots_unref(rn);
}
END_TEST

START_TEST(test_json)
{
	const char *body = "User-agent: *\nDisallow: /a\"b\nAllow: /c\n";
	struct robots *r = robots_parse(body, strlen(body));
	struct ruldiff_side o = { RULDIFF_ALLOW_ALL, NULL },
	                    n = { RULDIFF_RULES, r };
	struct ruldiff d;
	struct buf b = BUF_INIT(0);
	struct jw w;

	ck_assert_int_eq(ruldiff_agent(&o, &n, "x", 1, &d), 0);
	jw_init(&w, &b);
	jw_obj(&w);
	ruldiff_json(&w, &d);
	jw_end(&w);
	ck_assert(jw_ok(&w));
	buf_terminate(&b);
	ck_assert_str_eq(b.p,
	    "{\"newly_disallowed\":[\"/a\\\"b\"],\"newly_allowed\":[\"/c\"],"
	    "\"usage_changed\":false}");
	buf_clear(&b);
	ruldiff_clear(&d);
	robots_unref(r);
}
END_TEST

/* usage_changed: the agent's preference statements, old and new. */
static const struct urow {
	const char *name;
	enum ruldiff_state os;
	const char *old;
	enum ruldiff_state ns;
	const char *new;
	const char *agent;
	int changed;
} urows[] = {
	{ "none either side", R, "User-agent: *\nDisallow: /a\n", R,
	    "User-agent: *\nDisallow: /b\n", "foobot", 0 },
	{ "statement added", R, "User-agent: *\nDisallow: /a\n", R,
	    "User-agent: *\nDisallow: /a\nContent-Usage: train-ai=n\n",
	    "foobot", 1 },
	{ "value edited", R, "User-agent: *\nContent-Usage: train-ai=n\n", R,
	    "User-agent: *\nContent-Usage: train-ai=y\n", "foobot", 1 },
	{ "same statements, other lines", R,
	    "User-agent: *\nContent-Usage: train-ai=n\nDisallow: /a\n", R,
	    "User-agent: *\nDisallow: /b\ncontent-usage: train-ai=n\n",
	    "foobot", 0 },
	{ "another agent's group", R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\n"
	    "Content-Usage: train-ai=n\n",
	    R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\n"
	    "Content-Usage: train-ai=y\n",
	    "foobot", 0 },
	{ "star group for others", R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\n"
	    "Content-Usage: train-ai=n\n",
	    R,
	    "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\n"
	    "Content-Usage: train-ai=y\n",
	    "barbot", 1 },
	{ "file-scope signal for all", R,
	    "Content-Signal: ai-train=no\nUser-agent: foobot\nDisallow: /f\n",
	    R,
	    "Content-Signal: ai-train=yes\nUser-agent: foobot\nDisallow: /f\n",
	    "foobot", 1 },
	{ "rules to disallow-all", R,
	    "User-agent: *\nContent-Usage: train-ai=n\n", D, NULL, "foobot",
	    1 },
	{ "allow-all to disallow-all", A, NULL, D, NULL, "foobot", 0 },
};

START_TEST(test_usage_row)
{
	const struct urow *t = &urows[_i];
	struct robots *ro = NULL, *rn = NULL;
	struct ruldiff_side o = { t->os, NULL }, n = { t->ns, NULL };
	struct ruldiff d;

	if (t->old != NULL)
		o.robots = ro = robots_parse(t->old, strlen(t->old));
	if (t->new != NULL)
		n.robots = rn = robots_parse(t->new, strlen(t->new));
	ck_assert_int_eq(
	    ruldiff_agent(&o, &n, t->agent, strlen(t->agent), &d), 0);
	ck_assert_msg(d.usage_changed == t->changed, "%s: usage_changed %d",
	    t->name, d.usage_changed);
	ruldiff_clear(&d);
	robots_unref(ro);
	robots_unref(rn);
}
END_TEST

/*
 * Keys: by RFC 9309 selection an agent's difference depends only on its
 * product token, and only when a group of either side names it; the
 * work is the agent and extra lines of both files (6 here) and the rules
 * the selection picks on each side, counted by hand.
 */
static const char key_old[] = "User-agent: *\nDisallow: /s\n\n"
                              "User-agent: FooBot\nDisallow: /f1\n"
                              "Disallow: /f2\n";
static const char key_new[] = "User-agent: *\nDisallow: /s\nDisallow: /t\n\n"
                              "User-agent: barbot\nUser-agent: foobot\n"
                              "Allow: /\nContent-Usage: train-ai=n\n";

static const struct krow {
	const char *agent;
	const char *key;
	size_t rules;
} krows[] = {
	{ "FooBot/2.1 (+http://x)", "foobot", 6 + 2 + 1 },
	{ "FOOBOT", "foobot", 6 + 2 + 1 },
	{ "barbot", "barbot", 6 + 1 + 1 }, /* old: the '*' group's one */
	{ "bazbot", "", 6 + 1 + 2 },
	{ "*", "", 6 + 1 + 2 },
	{ "123bot", "", 6 + 1 + 2 },      /* no token at all */
	{ "foobot-news", "", 6 + 1 + 2 }, /* another token */
	{ "foo", "", 6 + 1 + 2 },
};

/* d's lists and usage as one string. */
static void
diff_text(const struct ruldiff_side *o, const struct ruldiff_side *n,
    const char *agent, char *out, size_t cap)
{
	struct ruldiff d;
	char dis[256], allow[256];

	ck_assert_int_eq(ruldiff_agent(o, n, agent, strlen(agent), &d), 0);
	join(dis, sizeof(dis), d.dis, d.ndis);
	join(allow, sizeof(allow), d.allow, d.nallow);
	snprintf(out, cap, "-%s +%s u%d", dis, allow, d.usage_changed);
	ruldiff_clear(&d);
}

START_TEST(test_key_row)
{
	const struct krow *t = &krows[_i];
	struct robots *ro = robots_parse(key_old, strlen(key_old));
	struct robots *rn = robots_parse(key_new, strlen(key_new));
	struct ruldiff_side o = { RULDIFF_RULES, ro },
	                    n = { RULDIFF_RULES, rn };
	struct ruldiff_names *x = ruldiff_names_new(&o, &n);
	char key[RULDIFF_TOKEN_MAX + 1], got[600], same[600];
	size_t rules, len;

	ck_assert_ptr_nonnull(x);
	len = ruldiff_key(x, t->agent, strlen(t->agent), key, &rules);
	ck_assert_str_eq(key, t->key);
	ck_assert_uint_eq(len, strlen(t->key));
	ck_assert_uint_eq(rules, t->rules);
	/* the agent's difference is its key's: an agent no group names for
	 * "", the token itself otherwise */
	diff_text(&o, &n, t->agent, got, sizeof(got));
	diff_text(
	    &o, &n, len > 0 ? key : "nobody-names-me", same, sizeof(same));
	ck_assert_str_eq(got, same);
	ruldiff_names_free(x);
	robots_unref(ro);
	robots_unref(rn);
}
END_TEST

/* Sides without rules name nothing: every agent has the key "". */
START_TEST(test_key_without_rules)
{
	struct ruldiff_side o = { RULDIFF_NONE, NULL },
	                    n = { RULDIFF_DISALLOW_ALL, NULL };
	struct ruldiff_names *x = ruldiff_names_new(&o, &n);
	char key[RULDIFF_TOKEN_MAX + 1];
	size_t rules;

	ck_assert_uint_eq(ruldiff_key(x, "foobot", 6, key, &rules), 0);
	ck_assert_str_eq(key, "");
	ck_assert_uint_eq(rules, 0);
	ruldiff_names_free(x);
}
END_TEST

static Suite *
ruldiff_suite(void)
{
	Suite *s = suite_create("ruldiff");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_row, 0, NROWS(rows));
	tcase_add_test(tc, test_json);
	tcase_add_loop_test(tc, test_usage_row, 0, NROWS(urows));
	tcase_add_loop_test(tc, test_key_row, 0, NROWS(krows));
	tcase_add_test(tc, test_key_without_rules);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(ruldiff_suite, NULL, NULL);
