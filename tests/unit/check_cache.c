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
#include "cache_fixture.h"
#include "test_main.h"

#define EXPIRES_10 "Mon, 23 Nov 2026 10:00:00 GMT" /* SCRIPT_T0 + 7200 */

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
 * The lines read together (one stamp) share one reading of the wall
 * clock, the test offset applied anew to each; another stamp, or a frozen
 * clock, reads it again.
 */
START_TEST(test_hold_at_one_stamp_reads_the_clock_once)
{
	struct clock c = { .offset = 10 };
	double t;

	clock_hold_at(&c, 1.5);
	t = clock_now(&c);
	clock_release(&c);
	while (clock_wall(NULL) + 10 <= t)
		; /* until the wall clock has moved on */
	clock_hold_at(&c, 1.5);
	ck_assert_double_eq(clock_now(&c), t);
	clock_release(&c);
	clock_advance(&c, 5);
	clock_hold_at(&c, 1.5);
	ck_assert_double_eq(clock_now(&c), t + 5);
	clock_release(&c);
	clock_hold_at(&c, 2.5);
	ck_assert_double_gt(clock_now(&c), t + 5);
	clock_release(&c);
	c = (struct clock){ .offset = 10, .frozen = 100 };
	clock_hold_at(&c, 1.5);
	ck_assert_double_eq(clock_now(&c), 110);
	c.frozen = 200;
	clock_hold_at(&c, 1.5);
	ck_assert_double_eq(clock_now(&c), 210);
	clock_release(&c);
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

/* The suite: the policy. */
static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = cache_fixture(s, "policy");

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
	tcase_add_test(tc, test_hold_at_one_stamp_reads_the_clock_once);
	tcase_add_test(
	    tc, test_restored_rules_without_prefs_are_refreshed_at_once);
	return s;
}

TEST_PROGRAM(cache_suite, cache_quiet_log, NULL);
