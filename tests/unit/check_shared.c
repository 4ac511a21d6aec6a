/*
 * check_shared.c: the fleet loader's pure decisions (shared_value.c): when
 * a shared value may answer, what the cache installs from it, the value a
 * fetch here publishes, and its Redis expiry.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include <check.h>

#include "tier/shared_value.h"

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

/*
 * With this instance's bounds (max-ttl 30 days, retries up to 6 h): a
 * value from a clock more than 60 s ahead is refetched; one whose lifetime
 * from its fetch ran past max-ttl too; a lifetime of 292 million years is
 * read as 30 days.
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
	{ TIER_POLICY_DISALLOW, 2, NOW - 21600001, NOW + 1000, 1 },
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
	struct shared_state s;

	shared_state_of(&v, &s);
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

int
main(void)
{
	Suite *s = suite_create("shared");
	TCase *tc = tcase_create("decisions");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ms_round_trip);
	tcase_add_loop_test(tc, test_usable_within_bounds, 0,
	    sizeof(bounded_cases) / sizeof(bounded_cases[0]));
	tcase_add_loop_test(tc, test_usable, 0,
	    (int)(sizeof(usable_cases) / sizeof(usable_cases[0])));
	tcase_add_loop_test(tc, test_state_of, 0,
	    (int)(sizeof(state_cases) / sizeof(state_cases[0])));
	tcase_add_test(tc, test_value_fresh_copy);
	tcase_add_test(tc, test_value_failure_state);
	tcase_add_test(tc, test_value_stale_copy);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
