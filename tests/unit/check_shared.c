/*
 * check_shared.c: the fleet loader's pure decisions (shared_value.c): when
 * a shared value may answer, what the cache installs from it, the value a
 * fetch here publishes, and its Redis expiry.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "tier/shared_value.h"
#include "test_main.h"

#define NOW 1795420800000LL /* ms */

START_TEST(test_ms_round_trip)
{
	ck_assert_int_eq(shared_ms(1795420800.5), 1795420800500LL);
	ck_assert_int_eq(shared_ms(1795420800.0009), 1795420800000LL);
	ck_assert(shared_secs(1795420800250LL) == 1795420800.25);
}
END_TEST

/* Usable or not: policy x expiry, as a table. */
static const struct {
	enum tier_policy policy;
	int64_t expires_at;
	int usable;
} usable_cases[] = {
	{ TIER_POLICY_RULES, NOW + 1, 1 },
	{ TIER_POLICY_RULES, NOW, 0 }, /* expiring now: refresh */
	{ TIER_POLICY_RULES, NOW - 1000, 0 },
	{ TIER_POLICY_ALLOW, NOW + 60000, 1 },
	{ TIER_POLICY_DISALLOW, NOW + 120000, 1 }, /* retry still ahead */
	{ TIER_POLICY_DISALLOW, NOW - 1, 0 },      /* retry due */
	{ TIER_POLICY_NONE, NOW + 60000, 0 },      /* nothing to install */
	{ (enum tier_policy)7, NOW + 60000, 0 },
};

START_TEST(test_usable)
{
	struct tier_value v = { .policy = usable_cases[_i].policy,
		.expires_at = usable_cases[_i].expires_at };

	ck_assert_int_eq(shared_usable(&v, NOW, NULL), usable_cases[_i].usable);
}
END_TEST

/* Recent enough for a change told of at since (ms): fetched then or later. */
static const struct {
	int64_t fetched_at, since;
	int recent;
} recent_cases[] = {
	{ NOW, 0, 1 }, /* no change told of: any */
	{ NOW, NOW, 1 },
	{ NOW + 1, NOW, 1 },
	{ NOW - 1, NOW, 0 },
	{ 0, NOW, 0 },
};

START_TEST(test_recent)
{
	struct tier_value v = { .fetched_at = recent_cases[_i].fetched_at };

	ck_assert_int_eq(
	    shared_recent(&v, recent_cases[_i].since), recent_cases[_i].recent);
}
END_TEST

/*
 * With this instance's bounds (max-ttl 30 days, retries up to 6 h): a
 * value from a clock more than 60 s ahead is refetched; one whose lifetime
 * from its fetch ran past max-ttl too; a lifetime of 292 million years is
 * read as 30 days; a failure state ends at most 6 h after the fetch that
 * failed, whenever it is read.
 */
static const struct lifetime_settings bounds = {
	.max_ttl = 30 * 86400.0, .retry_max = 21600, .retry_503_max = 3600
};
static const struct {
	enum tier_policy policy;
	unsigned streak;
	int64_t fetched_at, expires_at;
	int usable;
} bounded_cases[] = {
	{ TIER_POLICY_RULES, 0, NOW - 1000, NOW + 60000, 1 },
	{ TIER_POLICY_RULES, 0, NOW + 59000, NOW + 120000, 1 },
	{ TIER_POLICY_RULES, 0, NOW + 61000, NOW + 120000, 0 },
	{ TIER_POLICY_ALLOW, 0, NOW + 365 * 86400000LL, NOW + 366 * 86400000LL,
	    0 },
	{ TIER_POLICY_ALLOW, 0, NOW - 31 * 86400000LL, NOW + 86400000LL, 0 },
	{ TIER_POLICY_ALLOW, 0, NOW - 29 * 86400000LL, NOW + 86400000LL, 1 },
	{ TIER_POLICY_ALLOW, 0, NOW, INT64_MAX, 1 },
	{ TIER_POLICY_DISALLOW, 2, NOW, NOW + 365 * 86400000LL, 1 },
	/* a retry is due at most 6 h after the failed fetch, not after now */
	{ TIER_POLICY_DISALLOW, 2, NOW - 21600001, NOW + 1000, 0 },
	{ TIER_POLICY_DISALLOW, 2, NOW - 21599000, NOW + 1000, 1 },
	{ TIER_POLICY_DISALLOW, 2, NOW - 21600000, INT64_MAX, 0 },
	{ TIER_POLICY_RULES, 1, NOW - 21601000, INT64_MAX, 0 },
};

START_TEST(test_usable_within_bounds)
{
	struct tier_value v = { .policy = bounded_cases[_i].policy,
		.fail_streak = bounded_cases[_i].streak,
		.fetched_at = bounded_cases[_i].fetched_at,
		.expires_at = bounded_cases[_i].expires_at };

	ck_assert_int_eq(
	    shared_usable(&v, NOW, &bounds), bounded_cases[_i].usable);
}
END_TEST

/* Value -> cache state: policy, good and stale, as a table. */
static const struct {
	enum tier_policy policy;
	unsigned streak;
	int cache_policy, good, stale;
} state_cases[] = {
	{ TIER_POLICY_RULES, 0, CACHE_RULES, 1, 0 },
	{ TIER_POLICY_RULES, 2, CACHE_RULES, 1, 1 }, /* failing: stale copy */
	{ TIER_POLICY_ALLOW, 0, CACHE_ALLOW_ALL, 1, 0 },
	{ TIER_POLICY_ALLOW, 1, CACHE_ALLOW_ALL, 1, 1 },
	{ TIER_POLICY_DISALLOW, 3, CACHE_DISALLOW_ALL, 0, 0 },
};

START_TEST(test_state_of)
{
	struct tier_value v = { .origin = (char *)"http://a.test",
		.policy = state_cases[_i].policy,
		.fail_streak = state_cases[_i].streak,
		.http_status = 503,
		.fetched_at = NOW,
		.expires_at = NOW + 1500,
		.fail_since = NOW - 500,
		.next_retry = NOW + 1500,
		.final_url = (char *)"http://a.test/robots.txt" };
	struct cache_version hist[TIER_VALUE_MAX_HISTORY];
	struct shared_state s;

	shared_state_of(&v, 0, &s, hist);
	ck_assert_int_eq(s.policy, state_cases[_i].cache_policy);
	ck_assert_int_eq(s.good, state_cases[_i].good);
	ck_assert_int_eq(s.stale, state_cases[_i].stale);
	ck_assert_int_eq(s.http_status, 503);
	ck_assert_uint_eq(s.fail_streak, state_cases[_i].streak);
	ck_assert(s.fetched_at == shared_secs(NOW));
	ck_assert(s.expires_at == shared_secs(NOW + 1500));
	ck_assert(s.next_retry == shared_secs(NOW + 1500));
	ck_assert(s.fail_since == shared_secs(NOW - 500));
	ck_assert_str_eq(s.final_url, "http://a.test/robots.txt");
	ck_assert_ptr_nonnull(s.body); /* an empty body compiles too */
	ck_assert_uint_eq(s.body_len, 0);
}
END_TEST

/* An entry settled here; times in clock seconds. */
static struct cache_entry
entry(enum cache_policy p, double fetched, double expires, unsigned streak)
{
	return (struct cache_entry){ .origin = (char *)"http://a.test",
		.policy = p,
		.http_status = streak > 0 ? 503 : 200,
		.fetched_at = fetched,
		.expires_at = expires,
		.fail_streak = streak,
		.fail_since = streak > 0 ? fetched : 0,
		.next_retry = streak > 0 ? expires : 0,
		.stale = streak > 0 };
}

START_TEST(test_value_fresh_copy)
{
	struct cache_entry e = entry(CACHE_RULES, 1000.0, 1600.0, 0);
	struct fetch_result r = { .body = "Disallow: /", .body_len = 11 };
	struct tier_value v;

	ck_assert_int_eq(shared_value_of(&e, 1, &r, NULL, -1, &v), 0);
	ck_assert_int_eq(v.policy, TIER_POLICY_RULES);
	ck_assert_ptr_eq(v.body, r.body);
	ck_assert_uint_eq(v.body_len, 11);
	ck_assert_int_eq(v.expires_at, 1600000);
	/* served stale for as long again as its lifetime */
	ck_assert_int_eq(v.stale_until, 2200000);
	ck_assert_int_eq(v.fail_streak, 0);
	ck_assert_int_eq(v.next_retry, 0);
	ck_assert_int_eq(v.retry_after, 0);
	/* PX: remaining lifetime + stale window, from a later now */
	ck_assert_int_eq(shared_px(&v, 1000500), 1199500);
}
END_TEST

START_TEST(test_value_failure_state)
{
	struct cache_entry e = entry(CACHE_ALLOW_ALL, 1000.0, 1120.0, 1);
	struct fetch_result r = {
		.http_status = 503, .body = "down", .body_len = 4
	};
	struct tier_value v;

	/* no good copy (allowed by the 30-day allowance or not) */
	ck_assert_int_eq(shared_value_of(&e, 0, &r, NULL, 120, &v), 0);
	ck_assert_int_eq(v.policy, TIER_POLICY_DISALLOW);
	ck_assert_ptr_null(v.body);
	ck_assert_int_eq(v.next_retry, 1120000);
	ck_assert_int_eq(v.retry_after, 120000);
	ck_assert_int_eq(v.fail_since, 1000000);
	ck_assert_int_eq(v.stale_until, 0);
	/* PX: until the next retry */
	ck_assert_int_eq(shared_px(&v, 1000000), 120000);
	ck_assert_int_eq(shared_px(&v, 1200000), 1); /* never 0 or less */
}
END_TEST

START_TEST(test_value_stale_copy)
{
	struct cache_entry e = entry(CACHE_RULES, 2000.0, 2060.0, 1);
	struct fetch_result r = { .http_status = 503 };
	struct tier_value prev = { .policy = TIER_POLICY_RULES,
		.body = (char *)"Disallow: /x",
		.body_len = 12,
		.final_url = (char *)"http://a.test/robots.txt",
		.stale_until = 2500000 };
	struct tier_value v;

	/* a failing rules copy without its body: nothing true to publish */
	ck_assert_int_eq(shared_value_of(&e, 1, &r, NULL, -1, &v), -1);
	ck_assert_int_eq(shared_value_of(&e, 1, &r, &prev, -1, &v), 0);
	ck_assert_int_eq(v.policy, TIER_POLICY_RULES);
	ck_assert_ptr_eq(v.body, prev.body);
	ck_assert_int_eq(v.fail_streak, 1);
	ck_assert_int_eq(v.expires_at, 2060000);
	ck_assert_int_eq(v.stale_until, 2500000); /* prev's window kept */
	ck_assert_int_eq(shared_px(&v, 2000000), 500000);
	prev.stale_until = 2010000; /* a window ending before the retry */
	ck_assert_int_eq(shared_value_of(&e, 1, &r, &prev, -1, &v), 0);
	ck_assert_int_eq(v.stale_until, 2060000);
	/* an allow-all copy needs no body */
	e.policy = CACHE_ALLOW_ALL;
	ck_assert_int_eq(shared_value_of(&e, 1, &r, NULL, -1, &v), 0);
	ck_assert_int_eq(v.policy, TIER_POLICY_ALLOW);
	ck_assert_int_eq(v.stale_until, 2060000);
}
END_TEST

/*
 * The cause travels with a failing origin's value, both ways; a value
 * not failing carries none, and one from an older writer (0) or naming a
 * cause this build does not know reads as none kept (the cache then goes
 * by the status).
 */
static const struct {
	unsigned streak;
	uint8_t cause;     /* the entry's, then the value's */
	uint8_t published; /* what the value carries */
	uint8_t installed; /* what shared_state_of() reads from it */
} cause_cases[] = {
	{ 1, CAUSE_CONNECT, CAUSE_CONNECT, CAUSE_CONNECT },
	{ 2, CAUSE_PRIVATE_ADDRESS, CAUSE_PRIVATE_ADDRESS,
	    CAUSE_PRIVATE_ADDRESS },
	{ 1, CAUSE_HTTP_503, CAUSE_HTTP_503, CAUSE_HTTP_503 },
	{ 1, CAUSE_NONE, CAUSE_NONE, CAUSE_NONE },   /* an older writer */
	{ 1, CAUSE_COUNT, CAUSE_COUNT, CAUSE_NONE }, /* a later one's */
	{ 0, CAUSE_DNS, CAUSE_NONE, CAUSE_NONE },    /* not failing */
};

START_TEST(test_cause_published_and_read)
{
	struct cache_entry e =
	    entry(CACHE_ALLOW_ALL, 1000.0, 1120.0, cause_cases[_i].streak);
	struct fetch_result r = { .http_status = 503 };
	struct tier_value v;
	struct cache_version hist[TIER_VALUE_MAX_HISTORY];
	struct shared_state s;

	e.cause = cause_cases[_i].cause;
	ck_assert_int_eq(shared_value_of(&e, 0, &r, NULL, -1, &v), 0);
	ck_assert_uint_eq(v.cause, cause_cases[_i].published);
	v.cause = cause_cases[_i].cause; /* as a writer put it */
	shared_state_of(&v, 0, &s, hist);
	ck_assert_uint_eq(s.cause, cause_cases[_i].installed);
}
END_TEST

/*
 * A copy revalidated here (a 304, no body) is published with the body of
 * the tier's value of the same version, and only then: the version is the
 * SHA-256 of that body, so no other body can be claimed for it.
 */
static const struct {
	int prev;                  /* 0: no value in the tier */
	enum tier_policy prev_pol; /* the tier value's policy */
	const char *prev_ver;      /* its version */
	const char *entry_ver;     /* the entry's ("": unknown) */
	int want;                  /* shared_value_of's answer */
} reval_cases[] = {
	{ 1, TIER_POLICY_RULES, "00112233aabbccdd", "00112233aabbccdd", 0 },
	{ 0, TIER_POLICY_NONE, "", "00112233aabbccdd", -1 },
	{ 1, TIER_POLICY_RULES, "ffffffffffffffff", "00112233aabbccdd", -1 },
	{ 1, TIER_POLICY_ALLOW, "00112233aabbccdd", "00112233aabbccdd", -1 },
	{ 1, TIER_POLICY_DISALLOW, "00112233aabbccdd", "00112233aabbccdd", -1 },
	{ 1, TIER_POLICY_RULES, "", "", -1 },
};

START_TEST(test_value_revalidated)
{
	struct cache_entry e = entry(CACHE_RULES, 3000.0, 3600.0, 0);
	struct fetch_result r = { .http_status = 304 };
	struct tier_value prev = { .policy = reval_cases[_i].prev_pol,
		.body = (char *)"Disallow: /x",
		.body_len = 12,
		.truncated = 1,
		.final_url = (char *)"http://a.test/robots.txt" };
	struct tier_value v;

	snprintf(e.version, sizeof(e.version), "%s", reval_cases[_i].entry_ver);
	snprintf(
	    prev.version, sizeof(prev.version), "%s", reval_cases[_i].prev_ver);
	ck_assert_int_eq(shared_value_of(&e, 1, &r,
	                     reval_cases[_i].prev ? &prev : NULL, -1, &v),
	    reval_cases[_i].want);
	if (reval_cases[_i].want == -1)
		return;
	ck_assert_int_eq(v.policy, TIER_POLICY_RULES);
	ck_assert_ptr_eq(v.body, prev.body);
	ck_assert_uint_eq(v.body_len, 12);
	ck_assert_int_eq(v.truncated, 1);
	ck_assert_str_eq(v.version, e.version);
	ck_assert_str_eq(v.final_url, "http://a.test/robots.txt");
	/* the new lifetime, served stale for as long again */
	ck_assert_int_eq(v.expires_at, 3600000);
	ck_assert_int_eq(v.stale_until, 4200000);
}
END_TEST

/*
 * After a purge at NOW: a value fetched before it or in its own
 * millisecond is refused (a fetch and a purge after it can share one),
 * one fetched later taken; no record, or one more than 60 s ahead of the
 * reader, refuses nothing.
 */
static const struct {
	int64_t fetched_at, purged_at, now;
	int purged;
} purge_cases[] = {
	{ NOW - 1, NOW, NOW, 1 },
	{ NOW - 86400000LL, NOW, NOW + 3600000LL, 1 },
	{ NOW, NOW, NOW, 1 },
	{ NOW + 1, NOW, NOW, 0 },
	{ NOW - 1, 0, NOW, 0 },
	{ NOW - 1, NOW + 60000, NOW, 1 },
	{ NOW - 1, NOW + 60001, NOW, 0 },
	{ NOW, INT64_MAX, NOW, 0 },
};

START_TEST(test_purged)
{
	struct tier_value v = { .fetched_at = purge_cases[_i].fetched_at };

	ck_assert_int_eq(
	    shared_purged(&v, purge_cases[_i].purged_at, purge_cases[_i].now),
	    purge_cases[_i].purged);
}
END_TEST

/* A purge record outlives what it refuses: twice max-ttl, or a retry. */
START_TEST(test_purge_px)
{
	struct lifetime_settings ls = bounds;

	ck_assert_int_eq(shared_purge_px(&ls), (2 * 30 * 86400LL + 60) * 1000);
	ls.max_ttl = 60;
	ck_assert_int_eq(shared_purge_px(&ls), (21600 + 60) * 1000);
}
END_TEST

/*
 * A value's history as the cache's versions at NOW: a version first seen
 * more than the skew (60 s) ahead is dropped, a last_seen past it brought
 * back to it, the others kept as they are, in their order.
 */
static const struct {
	int64_t first, last;
	int kept;
	double last_secs; /* the last_seen kept */
} hist_cases[] = {
	{ NOW - 5000, NOW - 1000, 1, (NOW - 1000) / 1000.0 },
	{ NOW + 60000, NOW + 60000, 1, (NOW + 60000) / 1000.0 },
	{ NOW - 5000, NOW + 3600000, 1, (NOW + 60000) / 1000.0 },
	{ NOW + 60001, NOW + 60001, 0, 0 },
};

START_TEST(test_versions_of_a_value)
{
	struct tier_hist h[2] = {
		{ "0123456789abcdef", hist_cases[_i].first, hist_cases[_i].last,
		    404, TIER_POLICY_ALLOW, 0 },
		{ "fedcba9876543210", NOW - 9000, NOW - 8000, 200,
		    TIER_POLICY_RULES, 0 },
	};
	struct tier_value v = { .hist = h, .nhist = 2 };
	struct cache_version out[2];
	size_t n = shared_versions_of(&v, NOW, out, 2);

	ck_assert_uint_eq(n, 1 + (size_t)hist_cases[_i].kept);
	if (hist_cases[_i].kept) {
		ck_assert_str_eq(out[0].version, "0123456789abcdef");
		ck_assert_double_eq(
		    out[0].first_seen, hist_cases[_i].first / 1000.0);
		ck_assert_double_eq(out[0].last_seen, hist_cases[_i].last_secs);
		ck_assert_int_eq(out[0].http_status, 404);
		ck_assert_int_eq(out[0].policy, CACHE_ALLOW_ALL);
	}
	ck_assert_str_eq(out[n - 1].version, "fedcba9876543210");
	ck_assert_int_eq(out[n - 1].policy, CACHE_RULES);
	ck_assert_uint_eq(shared_versions_of(&v, NOW, out, 0), 0);
}
END_TEST

/*
 * The versions a value tells of to an instance without the origin: its
 * history when it has one; from a writer that kept none, its own version
 * (first seen at version_since, last at the later of it and validated_at,
 * its status and policy), unless that is more than the skew ahead; none
 * without a version.
 */
static const struct {
	const char *version;
	int64_t since, validated;
	size_t nhist, n;
	double first, last; /* out[0]'s */
} known_cases[] = {
	{ "0123456789abcdef", NOW - 9000, NOW - 1000, 0, 1, (NOW - 9000) / 1e3,
	    (NOW - 1000) / 1e3 },
	{ "0123456789abcdef", NOW - 9000, 0, 0, 1, (NOW - 9000) / 1e3,
	    (NOW - 9000) / 1e3 },
	{ "0123456789abcdef", NOW + 60001, NOW + 60001, 0, 0, 0, 0 },
	{ "", 0, 0, 0, 0, 0, 0 },
	{ "0123456789abcdef", NOW - 9000, NOW - 1000, 1, 1, (NOW - 5000) / 1e3,
	    (NOW - 4000) / 1e3 },
};

START_TEST(test_known_versions_of_a_value)
{
	struct tier_hist h = { "fedcba9876543210", NOW - 5000, NOW - 4000, 200,
		TIER_POLICY_RULES, 0 };
	struct tier_value v = { .policy = TIER_POLICY_ALLOW,
		.http_status = 404,
		.version_since = known_cases[_i].since,
		.validated_at = known_cases[_i].validated,
		.hist = &h,
		.nhist = known_cases[_i].nhist };
	struct cache_version out[TIER_VALUE_MAX_HISTORY];
	size_t n;

	snprintf(v.version, sizeof(v.version), "%s", known_cases[_i].version);
	n = shared_known_versions(&v, NOW, out);
	ck_assert_uint_eq(n, known_cases[_i].n);
	if (n == 0)
		return;
	ck_assert_str_eq(out[0].version,
	    known_cases[_i].nhist ? h.version : known_cases[_i].version);
	ck_assert_double_eq(out[0].first_seen, known_cases[_i].first);
	ck_assert_double_eq(out[0].last_seen, known_cases[_i].last);
	ck_assert_int_eq(out[0].http_status, known_cases[_i].nhist ? 200 : 404);
	ck_assert_int_eq(out[0].policy,
	    known_cases[_i].nhist ? CACHE_RULES : CACHE_ALLOW_ALL);
}
END_TEST

static Suite *
shared_suite(void)
{
	Suite *s = suite_create("shared");
	TCase *tc = tcase_create("decisions");

	tcase_add_test(tc, test_ms_round_trip);
	tcase_add_loop_test(tc, test_recent, 0,
	    (int)(sizeof(recent_cases) / sizeof(recent_cases[0])));
	tcase_add_loop_test(tc, test_usable_within_bounds, 0,
	    sizeof(bounded_cases) / sizeof(bounded_cases[0]));
	tcase_add_loop_test(tc, test_usable, 0,
	    (int)(sizeof(usable_cases) / sizeof(usable_cases[0])));
	tcase_add_loop_test(tc, test_state_of, 0,
	    (int)(sizeof(state_cases) / sizeof(state_cases[0])));
	tcase_add_loop_test(tc, test_purged, 0,
	    (int)(sizeof(purge_cases) / sizeof(purge_cases[0])));
	tcase_add_test(tc, test_purge_px);
	tcase_add_test(tc, test_value_fresh_copy);
	tcase_add_test(tc, test_value_failure_state);
	tcase_add_test(tc, test_value_stale_copy);
	tcase_add_loop_test(tc, test_versions_of_a_value, 0,
	    (int)(sizeof(hist_cases) / sizeof(hist_cases[0])));
	tcase_add_loop_test(tc, test_known_versions_of_a_value, 0,
	    (int)(sizeof(known_cases) / sizeof(known_cases[0])));
	tcase_add_loop_test(tc, test_cause_published_and_read, 0,
	    (int)(sizeof(cause_cases) / sizeof(cause_cases[0])));
	tcase_add_loop_test(tc, test_value_revalidated, 0,
	    (int)(sizeof(reval_cases) / sizeof(reval_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(shared_suite, NULL, NULL);
