/*
 * check_cache.c: the cache's policy (docs/internals/cache.md, the contract's
 * "Policy" section) driven through cache_check() with a scripted fetcher
 * (scripted_fetch.h) and a frozen clock: every fetch the cache starts is
 * seen, every outcome is handed in by the test, and every lifetime and
 * retry delay is asserted exactly.
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
#include "cache/fetchlog.h"
#include "base/histo.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "scripted_fetch.h"

#define DAY 86400.0
#define RULES_BODY "User-agent: *\nDisallow: /private\n"
#define EXPIRES_10 "Mon, 23 Nov 2026 10:00:00 GMT" /* SCRIPT_T0 + 7200 */

/* fetch_now() with a 200 whose body disallows everything. */
static void
fetch_rules(const char *origin)
{
	static const char body[] = "User-agent: *\nDisallow: /\n";
	struct fetch_result r = script_result(FETCH_OK, 200);

	r.body = body;
	r.body_len = sizeof(body) - 1;
	fetch_now(origin, &r);
}

/* Move the clock so that clock_now() is exactly t. */
static void
advance_to(double t)
{
	clk.offset = t - clk.frozen; /* exact: t and frozen are close */
	ck_assert_double_eq(clock_now(&clk), t);
}

/* The origin's hash: cache.c seeds the jitter with FNV-1a (64 bits). */
static uint64_t
origin_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The delay of failure streak on [lo, hi]: lifetime.h's formula. */
static double
want_backoff(const char *origin, unsigned streak, double lo, double hi)
{
	double base = fmin(lo * pow(2, streak - 1), hi);

	return fmin(
	    base * (1 + lifetime_jitter(origin_hash(origin), streak)), hi);
}

/* origin failed streak times in a row; the retry is due exactly then. */
static void
assert_retry(const char *origin, unsigned streak, double lo, double hi)
{
	const struct cache_entry *e = entry(origin);

	ck_assert_uint_eq(e->fail_streak, streak);
	ck_assert_double_eq(e->next_retry,
	    e->fetched_at + want_backoff(origin, streak, lo, hi));
	ck_assert_double_eq(e->expires_at, e->next_retry);
}

#define RETRY -1.0 /* the normal schedule, retry-min to retry-max */
#define SOON -2.0  /* the short schedule of 503 and 429 */

/* The contract's status table: what each outcome means for the entry. */
static const struct {
	enum fetch_error err;
	int status;
	const char *cc;
	enum cache_policy policy;
	int want_status;
	double ttl; /* seconds, or RETRY or SOON */
	/*
	 * The version: SHA-256 (first 16 hex digits, from sha256sum) of
	 * RULES_BODY, "status:NNN" or "error:CLASS".
	 */
	const char *version;
} outcomes[] = {
	{ FETCH_OK, 200, NULL, CACHE_RULES, 200, DAY, "38ee13a89fd0de18" },
	{ FETCH_OK, 204, NULL, CACHE_RULES, 204, DAY, "38ee13a89fd0de18" },
	{ FETCH_OK, 304, NULL, CACHE_ALLOW_ALL, 304, DAY, "f2829bb073b753a6" },
	{ FETCH_OK, 401, NULL, CACHE_ALLOW_ALL, 401, DAY, "8297f5f104177555" },
	{ FETCH_OK, 403, NULL, CACHE_ALLOW_ALL, 403, DAY, "38e596955fca39c2" },
	{ FETCH_OK, 404, NULL, CACHE_ALLOW_ALL, 404, DAY, "c4a3b17cef32e92b" },
	{ FETCH_OK, 410, NULL, CACHE_ALLOW_ALL, 410, DAY, "2b755767b829abdb" },
	{ FETCH_REDIRECTS, 301, "max-age=600", CACHE_ALLOW_ALL, 301, 600,
	    "9340f8272316737e" },
	{ FETCH_OK, 500, NULL, CACHE_DISALLOW_ALL, 500, RETRY,
	    "4e9ca58cfe98c218" },
	{ FETCH_OK, 502, NULL, CACHE_DISALLOW_ALL, 502, RETRY,
	    "d74eadede4de5eb3" },
	{ FETCH_OK, 503, NULL, CACHE_DISALLOW_ALL, 503, SOON,
	    "69e4c6db8741dc34" },
	{ FETCH_OK, 429, NULL, CACHE_DISALLOW_ALL, 429, SOON,
	    "7cf7064a14612944" },
	{ FETCH_NETWORK, 0, NULL, CACHE_DISALLOW_ALL, 0, RETRY,
	    "4696fab8f48b3837" },
	{ FETCH_TIMEOUT, 0, NULL, CACHE_DISALLOW_ALL, 0, RETRY,
	    "b36ef9474f22db64" },
	{ FETCH_PRIVATE_ADDR, 0, NULL, CACHE_DISALLOW_ALL, 0, RETRY,
	    "81d2d790c229151f" },
};

START_TEST(test_outcome_sets_policy_status_and_lifetime)
{
	struct fetch_result r =
	    script_result(outcomes[_i].err, outcomes[_i].status);
	const struct cache_entry *e;
	int failed = outcomes[_i].ttl < 0, rules;

	r.body = RULES_BODY;
	r.body_len = strlen(RULES_BODY);
	r.cache_control = outcomes[_i].cc;
	fetch_now("https://a.test", &r);
	e = entry("https://a.test");
	rules = e->policy == CACHE_RULES;
	ck_assert_int_eq(e->policy, outcomes[_i].policy);
	ck_assert_int_eq(e->http_status, outcomes[_i].want_status);
	ck_assert_int_eq(e->robots != NULL, rules);
	ck_assert_uint_eq(e->body_bytes, rules ? strlen(RULES_BODY) : 0);
	ck_assert_int_eq(e->last_error != NULL, failed);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, failed);
	if (failed)
		assert_retry("https://a.test", 1,
		    outcomes[_i].ttl == SOON ? 30 : 60,
		    outcomes[_i].ttl == SOON ? 3600 : 21600);
	else
		ck_assert_double_eq(
		    expires_in("https://a.test"), outcomes[_i].ttl);
	ck_assert_str_eq(e->version, outcomes[_i].version);
	ck_assert_double_eq(e->version_since, SCRIPT_T0);
	ck_assert_double_eq(e->validated_at, SCRIPT_T0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_uint_eq(sc.n, 1);
}
END_TEST

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
	/* Memory: the array of 3 records, counted in the cache's bytes. */
	ck_assert_uint_le(cache_stats(cache)->bytes - base, 4 + 3 * 20);
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

START_TEST(test_2xx_compiles_rules_and_truncated_body_is_success)
{
	struct fetch_result r = script_result(FETCH_OK, 200);
	struct robots_verdict v;
	const struct cache_entry *e;

	r.body = RULES_BODY;
	r.body_len = strlen(RULES_BODY);
	r.truncated = 1;
	r.final_url = "https://b.test/robots.txt";
	fetch_now("https://a.test", &r);
	e = entry("https://a.test");
	ck_assert_int_eq(e->truncated, 1);
	ck_assert_str_eq(e->final_url, "https://b.test/robots.txt");
	ck_assert_uint_eq(e->fail_streak, 0);
	ck_assert_double_eq(e->fetched_at, SCRIPT_T0);
	robots_check(e->robots, "FooBot", 6, "/private/x", 10, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.line, 2);
	robots_check(e->robots, "FooBot", 6, "/public", 7, &v);
	ck_assert_int_eq(v.allowed, 1);
}
END_TEST

/* How long a 404 with these headers is used (RFC 9111 section 4.2.1). */
static const struct {
	const char *cc, *expires, *date, *age;
	double shift; /* days the test clock is moved first */
	double ttl;
} ttls[] = {
	{ NULL, NULL, NULL, NULL, 0, DAY },
	{ "public, max-age=3600", NULL, NULL, NULL, 0, 3600 },
	{ "max-age=3600, s-maxage=7200", NULL, NULL, NULL, 0, 7200 },
	{ "s-maxage=120, max-age=7200", NULL, NULL, NULL, 0, 120 },
	{ "max-age=5", NULL, NULL, NULL, 0, 60 },
	{ "max-age=99999999", NULL, NULL, NULL, 0, 2592000 },
	{ "max-age=0", NULL, NULL, NULL, 0, 60 },
	{ "no-store, max-age=3600", NULL, NULL, NULL, 0, 60 },
	{ "max-age=3600, no-cache", NULL, NULL, NULL, 0, 60 },
	{ NULL, EXPIRES_10, SCRIPT_DATE, NULL, 0, 7200 },
	{ "max-age=600", EXPIRES_10, SCRIPT_DATE, NULL, 0, 600 },
	{ NULL, "0", SCRIPT_DATE, NULL, 0, 60 },
	/* The test clock does not move an origin's dates. */
	{ NULL, EXPIRES_10, SCRIPT_DATE, NULL, 10, 7200 },
	/* Without Date, the wall clock (never the test offset) stands in. */
	{ NULL, EXPIRES_10, NULL, NULL, 0, 7200 },
	{ NULL, EXPIRES_10, NULL, NULL, 10, 7200 },
	{ "max-age=3600", NULL, NULL, "600", 0, 3000 },
	{ NULL, EXPIRES_10, SCRIPT_DATE, "600", 0, 6600 },
	{ "max-age=3600", NULL, NULL, "3590", 0, 60 },
};

START_TEST(test_caching_headers_set_lifetime)
{
	struct fetch_result r = script_result(FETCH_OK, 404);

	r.cache_control = ttls[_i].cc;
	r.expires = ttls[_i].expires;
	r.date = ttls[_i].date;
	r.age = ttls[_i].age;
	clock_advance(&clk, ttls[_i].shift * DAY);
	fetch_now("https://a.test", &r);
	ck_assert_double_eq(expires_in("https://a.test"), ttls[_i].ttl);
}
END_TEST

START_TEST(test_expired_entry_served_stale_while_one_refresh_runs)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	const struct cache_entry *e;

	r.cache_control = "max-age=3600";
	fetch_now("https://a.test", &r);
	clock_advance(&clk, 3599);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_uint_eq(sc.n, 1);
	clock_advance(&clk, 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(e->fetching, 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_uint_eq(sc.n, 2);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 2);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_double_eq(expires_in("https://a.test"), DAY);
	ck_assert_uint_eq(cache_stats(cache)->stale, 2);
	ck_assert_uint_eq(cache_stats(cache)->hits, 2);
	ck_assert_uint_eq(script_count(&sc, "https://a.test"), 0);
}
END_TEST

/* The retry schedules: 13 failures in a row, each retried when due. */
static const struct {
	enum fetch_error err;
	int status;
	double lo, hi;
} schedules[] = {
	{ FETCH_OK, 500, 60, 21600 },
	{ FETCH_NETWORK, 0, 60, 21600 },
	{ FETCH_OK, 503, 30, 3600 },
	{ FETCH_OK, 429, 30, 3600 },
};

START_TEST(test_backoff_doubles_exactly_and_retries_once_when_due)
{
	const struct cache_entry *e;
	unsigned k;

	fetch_status("https://a.test", schedules[_i].err, schedules[_i].status);
	for (k = 1; k <= 12; k++) {
		assert_retry(
		    "https://a.test", k, schedules[_i].lo, schedules[_i].hi);
		advance_to(entry("https://a.test")->next_retry - 1);
		ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
		ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
		ck_assert_uint_eq(sc.n, k);
		advance_to(e->next_retry);
		ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
		ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
		ck_assert_uint_eq(sc.n, k + 1);
		fill_status(
		    "https://a.test", schedules[_i].err, schedules[_i].status);
	}
	assert_retry("https://a.test", 13, schedules[_i].lo, schedules[_i].hi);
	ck_assert_double_eq(want_backoff("https://a.test", 13, schedules[_i].lo,
	                        schedules[_i].hi),
	    schedules[_i].hi);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 13);
}
END_TEST

START_TEST(test_backoff_jitter_spreads_origins_failing_together)
{
	const struct cache_entry *e;
	double first = -1;
	char origin[64];
	int i, differ = 0;

	for (i = 0; i < 50; i++) {
		snprintf(origin, sizeof(origin), "https://o%d.test", i);
		fetch_status(origin, FETCH_TIMEOUT, 0);
		assert_retry(origin, 1, 60, 21600);
		e = entry(origin);
		if (first < 0)
			first = e->next_retry;
		else if (e->next_retry != first)
			differ++;
	}
	ck_assert_int_gt(differ, 25);
}
END_TEST

/* Retry-After (seconds or a date) within the short schedule's bounds. */
static const struct {
	int status;
	const char *retry_after, *date;
	double shift; /* days the test clock is moved first */
	double delay; /* or RETRY: not honored */
} retry_afters[] = {
	{ 503, "120", NULL, 0, 120 },
	{ 429, "5", NULL, 0, 30 },
	{ 503, "99999", NULL, 0, 3600 },
	{ 503, "Mon, 23 Nov 2026 08:10:00 GMT", SCRIPT_DATE, 0, 600 },
	{ 429, "Tue, 24 Nov 2026 08:00:00 GMT", SCRIPT_DATE, 0, 3600 },
	{ 503, "Mon, 23 Nov 2026 07:00:00 GMT", SCRIPT_DATE, 0, 30 },
	/* The test clock does not move an origin's dates. */
	{ 503, "Mon, 23 Nov 2026 08:10:00 GMT", SCRIPT_DATE, 5, 600 },
	{ 503, "Mon, 23 Nov 2026 08:10:00 GMT", NULL, 0, 600 },
	{ 503, "Mon, 23 Nov 2026 08:10:00 GMT", NULL, 5, 600 },
	/* Only 503 and 429 honor it: a 500 backs off from retry-min. */
	{ 500, "5", NULL, 0, RETRY },
};

START_TEST(test_retry_after_sets_the_short_delay)
{
	struct fetch_result r =
	    script_result(FETCH_OK, retry_afters[_i].status);
	const struct cache_entry *e;

	r.retry_after = retry_afters[_i].retry_after;
	r.date = retry_afters[_i].date;
	clock_advance(&clk, retry_afters[_i].shift * DAY);
	fetch_now("https://a.test", &r);
	e = entry("https://a.test");
	if (retry_afters[_i].delay == RETRY)
		assert_retry("https://a.test", 1, 60, 21600);
	else
		ck_assert_double_eq(
		    e->next_retry, e->fetched_at + retry_afters[_i].delay);
}
END_TEST

START_TEST(test_unreachable_30_days_without_good_copy_allows_all)
{
	const struct cache_entry *e;

	fetch_status("https://a.test", FETCH_OK, 500);
	fetch_status("https://b.test", FETCH_OK, 500);
	fetch_status("https://c.test", FETCH_OK, 500);
	clock_advance(&clk, 30 * DAY - 10);
	fetch_status("https://a.test", FETCH_OK, 502);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_DISALLOW_ALL);
	(void)check_now("https://b.test", &e); /* retries, in flight */
	(void)check_now("https://c.test", &e);
	/* Decided by a check, with no fetch, or by a fetch that ends. */
	clock_advance(&clk, 9);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	fill_status("https://b.test", FETCH_NETWORK, 0);
	ck_assert_int_eq(entry("https://b.test")->policy, CACHE_DISALLOW_ALL);
	clock_advance(&clk, 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	fill_status("https://c.test", FETCH_NETWORK, 0);
	ck_assert_int_eq(entry("https://c.test")->policy, CACHE_ALLOW_ALL);
	ck_assert_uint_eq(sc.n, 6);
	/* Further failures keep it allowed, still retrying. */
	advance_to(e->next_retry);
	fetch_status("https://a.test", FETCH_TIMEOUT, 0);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	assert_retry("https://a.test", 3, 60, 21600);
	/* A success ends the streak. */
	advance_to(e->next_retry);
	fetch_status("https://a.test", FETCH_OK, 404);
	ck_assert_uint_eq(e->fail_streak, 0);
	ck_assert_double_eq(e->next_retry, 0);
	ck_assert_double_eq(e->fail_since, 0);
}
END_TEST

/* The backoff gauge: settled origins failing, kept without a walk. */
START_TEST(test_backoff_count_follows_failures_recoveries_and_purges)
{
	const struct cache_entry *e;

	fetch_status("https://a.test", FETCH_OK, 503);
	fetch_status("https://b.test", FETCH_NETWORK, 0);
	fetch_rules("https://c.test");
	ck_assert_uint_eq(cache_stats(cache)->backoff, 2);
	/* A second failure of the same origin counts it once. */
	advance_to(entry("https://a.test")->next_retry);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	fill_status("https://a.test", FETCH_OK, 500);
	ck_assert_uint_eq(e->fail_streak, 2);
	ck_assert_uint_eq(cache_stats(cache)->backoff, 2);
	/* A success ends the backoff. */
	advance_to(e->next_retry);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_uint_eq(cache_stats(cache)->backoff, 1);
	/* A good copy failing is in backoff too; a purge takes it out. */
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_STALE);
	fill_status("https://c.test", FETCH_OK, 503);
	ck_assert_uint_eq(cache_stats(cache)->backoff, 2);
	ck_assert_uint_eq(cache_purge(cache, "https://b.test"), 1);
	ck_assert_uint_eq(cache_stats(cache)->backoff, 1);
	ck_assert_uint_eq(cache_purge_all(cache), 2);
	ck_assert_uint_eq(cache_stats(cache)->backoff, 0);
}
END_TEST

START_TEST(test_good_copy_kept_through_failures_and_30_days)
{
	const struct cache_entry *e;
	const struct robots *rb;

	fetch_rules("https://a.test");
	rb = entry("https://a.test")->robots;
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	fill_status("https://a.test", FETCH_OK, 503);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_int_eq(e->http_status, 503);
	assert_retry("https://a.test", 1, 30, 3600);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 1);
	/* Past 30 days of failures the good copy still answers. */
	clock_advance(&clk, 30 * DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	fill_status("https://a.test", FETCH_NETWORK, 0);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	assert_retry("https://a.test", 2, 60, 21600);
	/* A later success replaces the copy and ends staleness. */
	advance_to(e->next_retry);
	fetch_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(e->stale, 0);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
}
END_TEST

START_TEST(test_max_waiting_overloads_new_waiters_only)
{
	struct probe p[3];
	const struct cache_entry *e;

	set.max_waiting = 2;
	cache_configure(cache, &set);
	fetch_status("https://cached.test", FETCH_OK, 404);
	wait_on("https://a.test", &p[0]);
	wait_on("https://b.test", &p[1]);
	memset(&p[2], 0, sizeof(p[2]));
	ck_assert_int_eq(check_wait("https://a.test", &p[2]), CACHE_OVERLOADED);
	ck_assert_int_eq(check_wait("https://c.test", &p[2]), CACHE_OVERLOADED);
	ck_assert_ptr_null(cache_find(cache, "https://c.test"));
	ck_assert_uint_eq(sc.n, 3);
	ck_assert_int_eq(check_now("https://cached.test", &e), CACHE_HIT);
	ck_assert_int_eq(check_now("https://d.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(cache_stats(cache)->overloaded, 2);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	/* Once a fetch ends, waiting drops and new waiters are let in. */
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p[0].calls, 1);
	ck_assert_int_eq(check_wait("https://c.test", &p[2]), CACHE_WAIT);
	cache_waiter_cancel(&p[1].w);
	cache_waiter_cancel(&p[2].w);
}
END_TEST

START_TEST(test_queued_fetches_capped_by_max_waiting_even_without_wait)
{
	const struct cache_entry *e;

	set.max_waiting = 2;
	cache_configure(cache, &set);
	sc.slots = 1;
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_PENDING);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(script_queued(&sc), 2);
	/* A fourth origin would queue a third fetch: refused, no entry. */
	ck_assert_int_eq(check_now("https://d.test", &e), CACHE_OVERLOADED);
	ck_assert_ptr_null(cache_find(cache, "https://d.test"));
	ck_assert_uint_eq(sc.n, 3);
	/* An origin already being fetched is still joined. */
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(sc.n, 3);
	ck_assert_uint_eq(cache_stats(cache)->overloaded, 1);
}
END_TEST

START_TEST(test_coalescing_many_waiters_one_fetch)
{
	struct probe p[5];
	const struct cache_stats *st = cache_stats(cache);
	int i;

	for (i = 0; i < 5; i++)
		wait_on("https://a.test", &p[i]);
	ck_assert_uint_eq(sc.n, 1);
	ck_assert_str_eq(sc.f[0].url, "https://a.test/robots.txt");
	ck_assert_uint_eq(st->fetches, 1);
	ck_assert_uint_eq(st->misses, 5);
	ck_assert_uint_eq(st->coalesced, 4);
	ck_assert_uint_eq(st->waiting, 5);
	fill_status("https://a.test", FETCH_OK, 410);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(p[i].calls, 1);
		ck_assert_int_eq(p[i].policy, CACHE_ALLOW_ALL);
	}
	ck_assert_uint_eq(st->waiting, 0);
	ck_assert_uint_eq(st->fetches, 1);
}
END_TEST

/*
 * A fetch robotsd's own shortage failed (FETCH_LOCAL): the waiters get the
 * error, the origin keeps what it had (nothing on a first fetch; a good
 * copy as it was), nothing counts as the origin failing.
 */
START_TEST(test_local_shortage_is_not_the_origins_state)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	struct probe p[2];
	struct fetch_result r = script_result(FETCH_LOCAL, 0);

	r.error_message =
	    "robotsd could not open a socket: Too many open files";
	wait_on("https://a.test", &p[0]);
	wait_on("https://a.test", &p[1]);
	script_fill(&sc, "https://a.test", &r);
	ck_assert_int_eq(p[0].calls, 1);
	ck_assert_int_eq(p[1].calls, 1);
	ck_assert_str_eq(p[0].error, r.error_message);
	ck_assert_int_eq(p[0].policy, CACHE_NONE);
	ck_assert_uint_eq(st->waiting, 0);
	ck_assert_uint_eq(st->backoff, 0);
	/* the next check fetches again */
	ck_assert_int_eq(
	    cache_check(cache, "https://a.test", 0, NULL, &e), CACHE_PENDING);
	ck_assert_uint_eq(sc.n, 2);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(
	    cache_check(cache, "https://a.test", 0, NULL, &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	/* a refresh failing so: the copy stays as it was, not failing */
	advance_to(e->expires_at + 1);
	ck_assert_int_eq(
	    cache_check(cache, "https://a.test", 0, NULL, &e), CACHE_STALE);
	script_fill(&sc, "https://a.test", &r);
	ck_assert_int_eq(
	    cache_check(cache, "https://a.test", 0, NULL, &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_uint_eq(e->fail_streak, 0);
	ck_assert_uint_eq(st->backoff, 0);
}
END_TEST

START_TEST(test_cancelled_waiter_is_not_called_and_fetch_fills_cache)
{
	struct probe p[3];
	int i;

	for (i = 0; i < 3; i++)
		wait_on("https://a.test", &p[i]);
	cache_waiter_cancel(&p[1].w);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	cache_waiter_cancel(&p[0].w);
	cache_waiter_cancel(&p[2].w);
	cache_waiter_cancel(&p[2].w); /* twice is harmless */
	ck_assert_uint_eq(cache_stats(cache)->waiting, 0);
	ck_assert_uint_eq(script_count(&sc, "https://a.test"), 1);
	fill_status("https://a.test", FETCH_OK, 404);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(p[i].calls, 0);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_ALLOW_ALL);
	cache_waiter_cancel(&p[0].w); /* after the end too */
}
END_TEST

START_TEST(test_purge_while_waiting_answers_waiters_from_the_fetch)
{
	struct probe p[2];
	const struct cache_entry *e;

	fetch_rules("https://a.test");
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	/* Purge forgets the old copy: new checks wait for the refresh. */
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 1);
	ck_assert_ptr_null(entry("https://a.test")->robots);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_NONE);
	wait_on("https://a.test", &p[0]);
	wait_on("https://a.test", &p[1]);
	ck_assert_uint_eq(cache_purge_all(cache), 1);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	ck_assert_uint_eq(sc.n, 2);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p[0].calls, 1);
	ck_assert_int_eq(p[1].calls, 1);
	ck_assert_int_eq(p[1].policy, CACHE_ALLOW_ALL);
	/* An idle entry simply goes. */
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 0);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(cache)->bytes, 0);
}
END_TEST

START_TEST(test_purge_from_waiter_callback_still_answers_the_rest)
{
	struct probe p[3];
	int i;

	for (i = 0; i < 3; i++)
		wait_on("https://a.test", &p[i]);
	p[0].purge_in_cb = 1;
	p[0].origin = "https://a.test";
	fill_status("https://a.test", FETCH_OK, 404);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(p[i].calls, 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(cache)->bytes, 0);
}
END_TEST

START_TEST(test_free_with_waiters_and_fetches_in_flight)
{
	static struct probe p; /* outlives the cache */
	const struct cache_entry *e;

	wait_on("https://a.test", &p);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	fetch_rules("https://c.test");
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_STALE);
	ck_assert_uint_eq(sc.n, 4);
	cache_free(cache);
	cache = NULL;
	/* Each fetch in flight is cancelled once; no waiter is called. */
	ck_assert_int_eq(sc.f[0].cancelled, 1);
	ck_assert_int_eq(sc.f[1].cancelled, 1);
	ck_assert_int_eq(sc.f[2].cancelled, 0);
	ck_assert_int_eq(sc.f[3].cancelled, 1);
	ck_assert_int_eq(p.calls, 0);
	ck_assert_ptr_null(p.w.entry);
}
END_TEST

START_TEST(test_fetch_that_cannot_start_leaves_nothing)
{
	struct probe p;
	const struct cache_entry *e;

	sc.nomem = 1;
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_NOMEM);
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(check_wait("https://a.test", &p), CACHE_NOMEM);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 0);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 0);
	sc.nomem = 0;
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_PENDING);
	fill_status("https://a.test", FETCH_OK, 404);
}
END_TEST

/*
 * A held clock answers one reading, moved only by clock_advance(), until
 * it is released; the running wall clock (not the fixture's frozen one).
 */
START_TEST(test_held_clock_is_one_instant)
{
	struct clock c = { .offset = 10 };
	double t;

	clock_hold(&c);
	t = clock_now(&c);
	while (clock_wall(NULL) + 10 <= t)
		; /* until the wall clock has moved on */
	ck_assert_double_eq(clock_now(&c), t);
	clock_advance(&c, 5);
	ck_assert_double_eq(clock_now(&c), t + 5);
	clock_release(&c);
	ck_assert_double_gt(clock_now(&c), t + 5);
}
END_TEST

/*
 * A ruleset restored from the state file of an older robotsd has no usage
 * preferences (robots_has_prefs() 0, from a version-3 image): the restore
 * makes it due, so the first check starts its refresh and is answered
 * from the restored copy meanwhile. One with preferences keeps its
 * lifetime.
 */
START_TEST(test_restored_rules_without_prefs_are_refreshed_at_once)
{
	static const char body[] = "User-agent: *\nDisallow: /p\n";
	static char old_origin[] = "https://old.test";
	static char new_origin[] = "https://new.test";
	struct fetch_result r = script_result(FETCH_OK, 200);
	struct cache_entry saved = { .policy = CACHE_RULES,
		.http_status = 200,
		.fetched_at = SCRIPT_T0,
		.expires_at = SCRIPT_T0 + DAY };
	struct robots *fresh = robots_parse(body, sizeof(body) - 1);
	const struct cache_entry *e;
	const void *img;
	size_t len;

	ck_assert_ptr_nonnull(fresh);
	ck_assert_ptr_nonnull(img = robots_image(fresh, &len));
	saved.origin = old_origin;
	saved.robots = robots_from_image_version(img, len, 3);
	ck_assert_ptr_nonnull(saved.robots);
	ck_assert_int_eq(robots_has_prefs(saved.robots), 0);
	ck_assert_int_eq(cache_restore(cache, &saved, 1), 0);
	saved.origin = new_origin;
	saved.robots = robots_ref(fresh);
	ck_assert_int_eq(cache_restore(cache, &saved, 1), 0);
	cache_restore_end(cache, 2, 1);
	ck_assert_double_eq(expires_in("https://new.test"), DAY);
	ck_assert_double_eq(expires_in("https://old.test"), 0);
	ck_assert_int_eq(check_now("https://new.test", &e), CACHE_HIT);
	ck_assert_uint_eq(sc.n, 0);
	ck_assert_int_eq(check_now("https://old.test", &e), CACHE_STALE);
	ck_assert_uint_eq(script_count(&sc, "https://old.test"), 1);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	r.body = body;
	r.body_len = sizeof(body) - 1;
	script_fill(&sc, "https://old.test", &r);
	ck_assert_int_eq(
	    robots_has_prefs(entry("https://old.test")->robots), 1);
	ck_assert_double_eq(expires_in("https://old.test"), DAY);
	robots_unref(fresh);
}
END_TEST

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* A test case of the cache suite, on the fixture. */
static TCase *
fixture(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, cache_setup, cache_teardown);
	suite_add_tcase(s, tc);
	return tc;
}

/* The suite: the policy, the waiters, the memory. */
static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = fixture(s, "policy");

	tcase_add_loop_test(tc, test_outcome_sets_policy_status_and_lifetime, 0,
	    NROWS(outcomes));
	tcase_add_test(
	    tc, test_2xx_compiles_rules_and_truncated_body_is_success);
	tcase_add_loop_test(
	    tc, test_caching_headers_set_lifetime, 0, NROWS(ttls));
	tcase_add_test(
	    tc, test_expired_entry_served_stale_while_one_refresh_runs);
	tcase_add_loop_test(tc,
	    test_backoff_doubles_exactly_and_retries_once_when_due, 0,
	    NROWS(schedules));
	tcase_add_test(
	    tc, test_backoff_jitter_spreads_origins_failing_together);
	tcase_add_loop_test(
	    tc, test_retry_after_sets_the_short_delay, 0, NROWS(retry_afters));
	tcase_add_test(
	    tc, test_unreachable_30_days_without_good_copy_allows_all);
	tcase_add_test(tc, test_good_copy_kept_through_failures_and_30_days);
	tcase_add_test(
	    tc, test_backoff_count_follows_failures_recoveries_and_purges);
	tcase_add_test(tc, test_held_clock_is_one_instant);
	tcase_add_test(
	    tc, test_restored_rules_without_prefs_are_refreshed_at_once);
	tcase_add_test(tc, test_listeners_told_of_new_versions_only);
	tcase_add_loop_test(tc,
	    test_refresh_outcomes_with_and_without_validators, 0,
	    sizeof(refreshes) / sizeof(refreshes[0]));
	tcase_add_test(tc, test_304_updates_validators);
	tcase_add_test(tc, test_history_keeps_the_last_distinct_versions);
	tcase_add_test(tc, test_history_depth_0_keeps_only_the_current_version);
	tc = fixture(s, "waiters");
	tcase_add_test(tc, test_max_waiting_overloads_new_waiters_only);
	tcase_add_test(
	    tc, test_queued_fetches_capped_by_max_waiting_even_without_wait);
	tcase_add_test(tc, test_coalescing_many_waiters_one_fetch);
	tcase_add_test(tc, test_local_shortage_is_not_the_origins_state);
	tcase_add_test(
	    tc, test_cancelled_waiter_is_not_called_and_fetch_fills_cache);
	tcase_add_test(
	    tc, test_purge_while_waiting_answers_waiters_from_the_fetch);
	tcase_add_test(
	    tc, test_purge_from_waiter_callback_still_answers_the_rest);
	tcase_add_test(tc, test_free_with_waiters_and_fetches_in_flight);
	tcase_add_test(tc, test_fetch_that_cannot_start_leaves_nothing);
	return s;
}

/* Run the suite; the exit status is the verdict. */
int
main(void)
{
	SRunner *sr;
	int failed;

	log_init(1, LOG_WARNING);
	sr = srunner_create(cache_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
