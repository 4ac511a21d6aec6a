/*
 * check_cache_versions.c: the cache's versions (docs/provenance.md): who is
 * told of a new version, conditional refreshes and their 304s, the history of
 * the last distinct versions; a scripted fetcher and a frozen clock
 * (check_cache.c).
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "robots.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "scripted_fetch.h"
#include "cache_fixture.h"
#include "test_main.h"

/* What the change listener saw. */
static struct {
	int n;
	char old[VERSION_HEX + 1], new[VERSION_HEX + 1];
	int had_old_robots, fetched, raw_len;
	double at;
} seen;

/* A cache_change_cb recording the last change. */
static void
record_change(const struct cache_change *ch, void *arg)
{
	ck_assert_ptr_eq(arg, &seen);
	seen.n++;
	snprintf(seen.old, sizeof(seen.old), "%s",
	    ch->old_version != NULL ? ch->old_version : "none");
	snprintf(seen.new, sizeof(seen.new), "%s", ch->new_version);
	ck_assert_str_eq(ch->entry->version, ch->new_version);
	seen.had_old_robots = ch->old_robots != NULL;
	seen.fetched = ch->fetched != NULL;
	seen.raw_len =
	    ch->fetched != NULL ? (int)ch->fetched->raw_headers_len : -1;
	seen.at = ch->at;
}

/* Refresh origin (its entry has expired) with r. */
static void
refresh_with(const char *origin, const struct fetch_result *r)
{
	advance_to(clock_now(&clk) + 2 * DAY);
	fetch_now(origin, r);
}

START_TEST(test_listeners_told_of_new_versions_only)
{
	static const char other[] = "User-agent: *\nDisallow: /x\n";
	struct fetch_result r = script_result(FETCH_OK, 200);

	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(cache_listen(cache, record_change, &seen), 0);
	r.body = RULES_BODY;
	r.body_len = strlen(RULES_BODY);
	r.raw_headers = "HTTP/1.1 200 OK\r\n";
	r.raw_headers_len = 17;
	fetch_now("https://a.test", &r);
	ck_assert_int_eq(seen.n, 1); /* a new entry */
	ck_assert_str_eq(seen.old, "none");
	ck_assert_str_eq(seen.new, "38ee13a89fd0de18");
	ck_assert_int_eq(seen.had_old_robots, 0);
	ck_assert_int_eq(seen.fetched, 1);
	ck_assert_int_eq(seen.raw_len, 17);
	ck_assert_double_eq(seen.at, SCRIPT_T0);
	refresh_with("https://a.test", &r); /* the same bytes again */
	ck_assert_int_eq(seen.n, 1);
	ck_assert_double_eq(entry("https://a.test")->version_since, SCRIPT_T0);
	ck_assert_double_eq(
	    entry("https://a.test")->validated_at, SCRIPT_T0 + 2 * DAY);
	r = script_result(FETCH_OK, 503); /* failing: the good copy stays */
	refresh_with("https://a.test", &r);
	ck_assert_int_eq(seen.n, 1);
	ck_assert_str_eq(entry("https://a.test")->version, "38ee13a89fd0de18");
	r = script_result(FETCH_OK, 200);
	r.body = other; /* different bytes: sha256sum of other */
	r.body_len = sizeof(other) - 1;
	refresh_with("https://a.test", &r);
	ck_assert_int_eq(seen.n, 2);
	ck_assert_str_eq(seen.old, "38ee13a89fd0de18");
	ck_assert_str_eq(seen.new, "a92d287a72a3f39a");
	ck_assert_int_eq(seen.had_old_robots, 1);
	ck_assert_double_eq(seen.at, SCRIPT_T0 + 6 * DAY);
	r = script_result(FETCH_OK, 404); /* a state without rules */
	refresh_with("https://a.test", &r);
	ck_assert_int_eq(seen.n, 3);
	ck_assert_str_eq(seen.new, "c4a3b17cef32e92b");
}
END_TEST

#define V_RULES "38ee13a89fd0de18" /* sha256sum of RULES_BODY */
#define V_OTHER "a92d287a72a3f39a" /* of "User-agent: *\nDisallow: /x\n" */
#define LM "Sun, 22 Nov 2026 08:00:00 GMT"

/*
 * Each outcome a refresh can get back, after a 200 that had validators or
 * none: only a 304 to a request that sent them keeps the ruleset (the same
 * compiled object: no parse), with the 304's lifetime; a 304 to a request
 * without validators is a 3xx without Location, as on a first fetch.
 */
static const struct {
	int validators; /* the 200 had an ETag and a Last-Modified */
	enum fetch_error err;
	int status;
	enum cache_policy policy;
	int status_after;    /* http_status of the entry */
	const char *body;    /* of the refresh's answer */
	const char *version; /* sha256sum, 16 hex digits */
	int same_robots;     /* the ruleset object is kept */
	int revalidated, stale;
} refreshes[] = {
	{ 1, FETCH_OK, 304, CACHE_RULES, 200, "", V_RULES, 1, 1, 0 },
	{ 0, FETCH_OK, 304, CACHE_ALLOW_ALL, 304, "", "f2829bb073b753a6", 0, 0,
	    0 },
	{ 1, FETCH_OK, 200, CACHE_RULES, 200, "User-agent: *\nDisallow: /x\n",
	    V_OTHER, 0, 0, 0 },
	{ 0, FETCH_OK, 200, CACHE_RULES, 200, "User-agent: *\nDisallow: /x\n",
	    V_OTHER, 0, 0, 0 },
	{ 1, FETCH_OK, 404, CACHE_ALLOW_ALL, 404, "", "c4a3b17cef32e92b", 0, 0,
	    0 },
	{ 1, FETCH_OK, 412, CACHE_ALLOW_ALL, 412, "", "f89213fbe148f305", 0, 0,
	    0 },
	{ 1, FETCH_OK, 503, CACHE_RULES, 503, "", V_RULES, 1, 0, 1 },
	{ 0, FETCH_OK, 500, CACHE_RULES, 500, "", V_RULES, 1, 0, 1 },
	{ 1, FETCH_TIMEOUT, 0, CACHE_RULES, 0, "", V_RULES, 1, 0, 1 },
	{ 1, FETCH_REDIRECTS, 304, CACHE_ALLOW_ALL, 304, "", "9340f8272316737e",
	    0, 0, 0 },
};

START_TEST(test_refresh_outcomes_with_and_without_validators)
{
	struct fetch_result r = script_result(FETCH_OK, 200);
	const struct cache_entry *e;
	const struct robots *before;
	struct script_fetch *f;

	r.body = RULES_BODY;
	r.body_len = strlen(RULES_BODY);
	if (refreshes[_i].validators) {
		r.etag = "\"v1\"";
		r.last_modified = LM;
	}
	fetch_now("https://a.test", &r);
	e = entry("https://a.test");
	before = e->robots;
	ck_assert_str_eq(e->version, V_RULES);
	advance_to(SCRIPT_T0 + 2 * DAY);
	(void)check_now("https://a.test", &e);
	f = &sc.f[sc.n - 1];
	ck_assert_str_eq(f->etag, refreshes[_i].validators ? "\"v1\"" : "");
	ck_assert_str_eq(f->last_modified, refreshes[_i].validators ? LM : "");
	r = script_result(refreshes[_i].err, refreshes[_i].status);
	r.body = refreshes[_i].body;
	r.body_len = strlen(refreshes[_i].body);
	r.cache_control = "max-age=600";
	script_fill(&sc, "https://a.test", &r);
	e = entry("https://a.test");
	ck_assert_int_eq(e->policy, refreshes[_i].policy);
	ck_assert_int_eq(e->http_status, refreshes[_i].status_after);
	ck_assert_str_eq(e->version, refreshes[_i].version);
	ck_assert_int_eq(e->robots == before, refreshes[_i].same_robots);
	ck_assert_uint_eq(cache_stats(cache)->revalidated,
	    (unsigned)refreshes[_i].revalidated);
	ck_assert_int_eq(e->stale, refreshes[_i].stale);
	ck_assert_double_eq(e->version_since,
	    refreshes[_i].same_robots ? SCRIPT_T0 : SCRIPT_T0 + 2 * DAY);
	ck_assert_double_eq(e->validated_at,
	    refreshes[_i].stale ? SCRIPT_T0 : SCRIPT_T0 + 2 * DAY);
	if (refreshes[_i].revalidated) {
		ck_assert_double_eq(expires_in("https://a.test"), 600);
		ck_assert_str_eq(cache_entry_etag(e), "\"v1\"");
		ck_assert_str_eq(cache_entry_last_modified(e), LM);
	}
}
END_TEST

/* A 304 that names new validators replaces the old ones. */
START_TEST(test_304_updates_validators)
{
	struct fetch_result r = script_result(FETCH_OK, 200);
	const struct cache_entry *e;

	r.body = RULES_BODY;
	r.body_len = strlen(RULES_BODY);
	r.etag = "\"v1\"";
	fetch_now("https://a.test", &r);
	advance_to(SCRIPT_T0 + 2 * DAY);
	r = script_result(FETCH_OK, 304);
	r.etag = "\"v1b\"";
	r.last_modified = LM;
	fetch_now("https://a.test", &r);
	e = entry("https://a.test");
	ck_assert_str_eq(cache_entry_etag(e), "\"v1b\"");
	ck_assert_str_eq(cache_entry_last_modified(e), LM);
	ck_assert_uint_eq(cache_stats(cache)->revalidated, 1);
	advance_to(SCRIPT_T0 + 4 * DAY);
	(void)check_now("https://a.test", &e);
	ck_assert_str_eq(sc.f[sc.n - 1].etag, "\"v1b\"");
	script_fill(&sc, "https://a.test", &r);
}
END_TEST

/* Refresh a.test with a 200 of body, or with status when body is NULL. */
static void
refresh_body(const char *body, int status)
{
	struct fetch_result r = script_result(FETCH_OK, status);

	if (body != NULL) {
		r.body = body;
		r.body_len = strlen(body);
	}
	refresh_with("https://a.test", &r);
}

/*
 * The history: distinct versions newest first, each with the times it was
 * first and last seen, bounded by the depth; the same bytes again move
 * last_seen only; a version seen again moves to the front.
 */
START_TEST(test_history_keeps_the_last_distinct_versions)
{
	static const struct {
		const char *body; /* NULL: a 404 */
		/* then the history: version letters, newest first */
		const char *want;
	} steps[] = {
		{ "A", "A" },
		{ "A", "A" },
		{ "B", "BA" },
		{ NULL, "NBA" },
		{ "B", "BNA" }, /* seen again: to the front */
		{ "C", "CBN" }, /* depth 3: A goes */
		{ "C", "CBN" },
	};
	/* sha256sum of "A", "B", "C" and of "status:404", 16 hex digits */
	static const struct {
		char letter;
		const char *version;
	} ids[] = {
		{ 'A', "559aead08264d579" },
		{ 'B', "df7e70e5021544f4" },
		{ 'C', "6b23c0d5f35d1b11" },
		{ 'N', "c4a3b17cef32e92b" },
	};
	struct cache_version v[CACHE_MAX_HISTORY];
	size_t i, j, k, n, base;
	const struct cache_entry *e;

	set.history_depth = 3;
	cache_configure(cache, &set);
	fetch_now("https://a.test",
	    &(struct fetch_result){
	        .body = "A", .body_len = 1, .http_status = 200 });
	base = cache_stats(cache)->bytes;
	for (i = 1; i < sizeof(steps) / sizeof(steps[0]); i++) {
		refresh_body(steps[i].body, steps[i].body ? 200 : 404);
		e = entry("https://a.test");
		n = cache_history(e, v, CACHE_MAX_HISTORY);
		ck_assert_uint_eq(n, strlen(steps[i].want));
		for (j = 0; j < n; j++) {
			for (k = 0; ids[k].letter != steps[i].want[j]; k++)
				;
			ck_assert_msg(strcmp(v[j].version, ids[k].version) == 0,
			    "step %zu, record %zu: %s", i, j, v[j].version);
			ck_assert_int_eq(v[j].policy, ids[k].letter == 'N'
			                                  ? CACHE_ALLOW_ALL
			                                  : CACHE_RULES);
			ck_assert_int_eq(
			    v[j].http_status, ids[k].letter == 'N' ? 404 : 200);
		}
		/* The current version was seen last at this fetch. */
		ck_assert_double_eq(v[0].last_seen, clock_now(&clk));
	}
	/* Times: C first seen at step 5, B's last sight was at step 4. */
	ck_assert_double_eq(v[0].first_seen, SCRIPT_T0 + 5 * 2 * DAY);
	ck_assert_double_eq(v[1].first_seen, SCRIPT_T0 + 4 * 2 * DAY);
	ck_assert_double_eq(v[1].last_seen, SCRIPT_T0 + 4 * 2 * DAY);
	/*
	 * Memory: the array of 3 records, counted in the cache's bytes as
	 * the allocator holds it (its size word, rounded up to 16 bytes).
	 */
	ck_assert_uint_le(
	    cache_stats(cache)->bytes - base, 4 + 3 * 20 + sizeof(size_t) + 15);
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 1);
	ck_assert_uint_eq(cache_stats(cache)->bytes, 0);
}
END_TEST

/* Depth 0 (or 1) keeps no array: the entry is its only version. */
START_TEST(test_history_depth_0_keeps_only_the_current_version)
{
	struct cache_version v[CACHE_MAX_HISTORY];
	size_t before;

	fetch_now("https://a.test",
	    &(struct fetch_result){
	        .body = "A", .body_len = 1, .http_status = 200 });
	before = cache_stats(cache)->bytes;
	refresh_body("B", 200);
	ck_assert_uint_eq(
	    cache_history(entry("https://a.test"), v, CACHE_MAX_HISTORY), 1);
	ck_assert_str_eq(v[0].version, "df7e70e5021544f4");
	ck_assert_double_eq(v[0].first_seen, SCRIPT_T0 + 2 * DAY);
	ck_assert_uint_eq(cache_stats(cache)->bytes, before);
}
END_TEST

static Suite *
cache_versions_suite(void)
{
	Suite *s = suite_create("cache_versions");
	TCase *tc = cache_fixture(s, "versions");

	tcase_add_test(tc, test_listeners_told_of_new_versions_only);
	tcase_add_loop_test(tc,
	    test_refresh_outcomes_with_and_without_validators, 0,
	    sizeof(refreshes) / sizeof(refreshes[0]));
	tcase_add_test(tc, test_304_updates_validators);
	tcase_add_test(tc, test_history_keeps_the_last_distinct_versions);
	tcase_add_test(tc, test_history_depth_0_keeps_only_the_current_version);
	return s;
}

TEST_PROGRAM(cache_versions_suite, cache_quiet_log, NULL);
