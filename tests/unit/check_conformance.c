/*
 * check_conformance.c: librobots against Google's reference parser. Runs
 * every case of tests/data/google-differential.jsonl (robots, agent, url,
 * expect, features; see its README): robots_parse(robots),
 * robots_url_parse(url), robots_check(agent, path) must give the verdict
 * Google's parser gave.
 */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "test_main.h"

#define CASES_FILE TESTDATADIR "/google-differential.jsonl"
#define CASES_EXPECTED 3000

/* A string member of a case, or NULL. */
static const char *
member(json_t *c, const char *key, size_t *len)
{
	json_t *v = json_object_get(c, key);

	if (!json_is_string(v))
		return NULL;
	if (len != NULL)
		*len = json_string_length(v);
	return json_string_value(v);
}

/* Run case c (line idx); 0 when it agrees, else a message in why. */
static int
run_case(json_t *c, int idx, char *why, size_t whylen)
{
	size_t body_len = 0, url_len = 0;
	const char *body = member(c, "robots", &body_len);
	const char *url = member(c, "url", &url_len);
	const char *agent = member(c, "agent", NULL);
	const char *expect = member(c, "expect", NULL);
	const char *features = member(c, "features", NULL);
	struct robots_verdict v;
	struct robots *r;
	struct url u;
	int want;

	if (!body || !url || !agent || !expect) {
		snprintf(why, whylen, "case %d: malformed", idx);
		return -1;
	}
	if (robots_url_parse(url, url_len, &u) != URL_OK) {
		snprintf(why, whylen, "case %d: robots_url_parse(%s) failed",
		    idx, url);
		return -1;
	}
	if ((r = robots_parse(body, body_len)) == NULL) {
		robots_url_clear(&u);
		snprintf(why, whylen, "case %d: out of memory", idx);
		return -1;
	}
	robots_check(r, agent, strlen(agent), u.path, u.path_len, &v);
	want = strcmp(expect, "allow") == 0;
	if (v.allowed != want)
		snprintf(why, whylen,
		    "case %d (%s) features %s: %s %s: want %s, got %s (%s, "
		    "line %u)",
		    idx, member(c, "name", NULL), features ? features : "?",
		    agent, url, expect, v.allowed ? "allow" : "disallow",
		    robots_reason_name(v.reason), v.rule.line);
	robots_unref(r);
	robots_url_clear(&u);
	return v.allowed == want ? 0 : -1;
}

START_TEST(test_every_google_differential_case_agrees)
{
	FILE *f = fopen(CASES_FILE, "r");
	char *line = NULL, why[1024], first[1024] = "";
	size_t cap = 0;
	int idx = 0, failed = 0;
	json_error_t err;
	json_t *c;

	ck_assert_msg(f != NULL, "cannot open %s", CASES_FILE);
	while (getline(&line, &cap, f) > 0) {
		c = json_loads(line, 0, &err);
		ck_assert_msg(
		    c != NULL, "case %d: bad JSON: %s", idx, err.text);
		if (run_case(c, idx, why, sizeof(why)) != 0) {
			if (failed++ == 0)
				memcpy(first, why, sizeof(first));
			if (failed <= 20)
				fprintf(stderr, "%s\n", why);
		}
		json_decref(c);
		idx++;
	}
	free(line);
	fclose(f);
	ck_assert_int_eq(idx, CASES_EXPECTED);
	ck_assert_msg(failed == 0, "%d of %d cases disagree; first: %s", failed,
	    idx, first);
}
END_TEST

static Suite *
conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("google");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_google_differential_case_agrees);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(conformance_suite, NULL, NULL);
