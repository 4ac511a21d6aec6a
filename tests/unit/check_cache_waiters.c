/*
 * check_cache_waiters.c: the cache's waiters (docs/internals/cache.md):
 * --max-waiting, one fetch for many waiters, cancels and purges while they
 * wait, the cache freed with fetches in flight; a scripted fetcher and a frozen
 * clock (check_cache.c).
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

static Suite *
cache_waiters_suite(void)
{
	Suite *s = suite_create("cache_waiters");
	TCase *tc = cache_fixture(s, "waiters");

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

TEST_PROGRAM(cache_waiters_suite, cache_quiet_log, NULL);
