/*
 * check_shared_load.c: the fleet loader (shared.c) driven through every
 * stage by a scripted tier (scripted_tier.h), as docs/scaling.md tells
 * them: a usable shared value answers at once; a miss, or a value refused,
 * takes the lock, looks again under it and fetches here; a lock another
 * instance holds is waited on, then looked at again and taken over; any
 * other tier answer, and a budget spent, fetch here at once; a load
 * cancelled in the middle of a call leaves no callback and no lock held.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cache/cache.h"
#include "base/clock.h"
#include "cache/lifetime.h"
#include "scripted_tier.h"
#include "tier/shared.h"
#include "tier/shared_value.h"
#include "test_main.h"

#define T0 1795420800.0     /* s, the frozen clock */
#define NOW 1795420800000LL /* ms */
#define ORIGIN "https://a.test"
#define URL ORIGIN "/robots.txt"
#define WAIT_MS 5000
#define TOKEN "0123456789abcdef0123456789abcdef"

static struct clock clk = { .frozen = T0 };
static struct shared *sh;

/* What the cache was told. */
static struct {
	int calls;
	int shared; /* r->shared set: installed from the tier */
	enum fetch_error error;
} told;

static void
done_cb(const struct fetch_result *r, void *arg)
{
	(void)arg;
	told.calls++;
	told.shared = r->shared != NULL;
	told.error = r->error;
}

static void
setup(void)
{
	static const struct lifetime_settings life = { .max_ttl = 30 * 86400.0,
		.retry_max = 21600,
		.retry_503_max = 3600 };

	memset(&st, 0, sizeof(st));
	memset(&told, 0, sizeof(told));
	st.budget_left = 250;
	sh = shared_new(NULL, NULL, &clk, WAIT_MS);
	shared_configure(sh, &life, WAIT_MS);
}

static void
teardown(void)
{
	shared_free(sh);
}

/* A value the tier holds, expiring at expires_at (ms); the caller's. */
static struct tier_value *
value(int64_t expires_at)
{
	struct tier_value *v = calloc(1, sizeof(*v));

	ck_assert_ptr_nonnull(v);
	v->origin = strdup(ORIGIN);
	v->policy = TIER_POLICY_ALLOW;
	v->http_status = 404;
	v->fetched_at = NOW - 1000;
	v->expires_at = expires_at;
	return v;
}

static void *
start(void)
{
	void *l = shared_fetch_ops.start(sh, URL, done_cb, NULL);

	ck_assert_ptr_nonnull(l);
	ck_assert_str_eq(script_last(OP_GET)->origin, ORIGIN);
	ck_assert_int_eq(script_last(OP_GET)->timeout_ms, 0); /* the budget's */
	return l;
}

/* GET, usable value: installed as the fleet's, no lock, no fetch. */
START_TEST(test_read_hit_installs)
{
	start();
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_int_eq(told.shared, 1);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_int_eq(st.fetches, 0);
	ck_assert_uint_eq(shared_stats(sh)->hits, 1);
}
END_TEST

/* Run a miss through LOCK (taken) and RECHECK (still missing) to FETCH. */
static void
lock_and_recheck(void)
{
	struct script_call *c = script_last(OP_LOCK);

	ck_assert_int_eq(c->flags, 0);
	ck_assert_int_eq(c->timeout_ms, 250); /* what is left of the budget */
	st.budget_left = 120;
	script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	ck_assert_int_eq(script_last(OP_GET)->timeout_ms, 120);
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	ck_assert_int_eq(st.fetches, 1);
	ck_assert_str_eq(st.fetch_url, URL);
	ck_assert_uint_eq(shared_stats(sh)->misses, 1);
}

/* GET miss: lock, recheck, fetch here; the fetch's end unlocks. */
START_TEST(test_read_miss_locks_rechecks_fetches)
{
	start();
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	lock_and_recheck();
	ck_assert_int_eq(told.calls, 0);
	script_fetched(FETCH_OK);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_int_eq(told.shared, 0);
	ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
	ck_assert_uint_eq(shared_stats(sh)->local, 0);
}
END_TEST

/* A value expired, or refused (corrupt): like a miss, fetch under lock. */
START_TEST(test_read_bad_value_is_a_miss)
{
	start();
	if (_i == 0)
		script_answer(OP_GET, TIER_OK, value(NOW), NULL); /* expiring */
	else
		script_answer(OP_GET, TIER_CORRUPT, NULL, NULL);
	lock_and_recheck();
	script_fetched(FETCH_OK);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_uint_eq(shared_stats(sh)->hits, 0);
	ck_assert_uint_eq(shared_stats(sh)->local, 0);
}
END_TEST

/* Under the lock the holder's value has arrived: install it, unlock. */
START_TEST(test_recheck_finds_the_value)
{
	start();
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_int_eq(told.shared, 1);
	ck_assert_int_eq(st.fetches, 0);
}
END_TEST

/*
 * Lock lost: wait for the holder (until the answer is due, WAIT_MS from
 * the load's start), then look again, with a new budget; still missing,
 * take the lock over.
 */
static const enum tier_result waited[] = { TIER_NOTIFIED, TIER_UNLOCKED,
	TIER_TIMEOUT };

START_TEST(test_lock_lost_waits_then_takes_over)
{
	start();
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
	ck_assert_int_le(script_last(OP_WAIT)->timeout_ms, WAIT_MS + 1);
	ck_assert_int_gt(script_last(OP_WAIT)->timeout_ms, WAIT_MS - 1000);
	ck_assert_int_eq(st.fetches, 0);
	script_answer(OP_WAIT, waited[_i], NULL, NULL);
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	ck_assert_int_eq(script_last(OP_LOCK)->flags, TIER_LOCK_TAKEOVER);
	script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	ck_assert_int_eq(st.fetches, 1);
	script_fetched(FETCH_OK);
	ck_assert_int_eq(told.calls, 1);
}
END_TEST

/* A load after a change another instance told of (fetched at since). */
static void *
start_told(double since)
{
	struct fetch_cond cond = { NULL, NULL, since };
	void *l = shared_fetch_ops.start_cond(sh, URL, &cond, done_cb, NULL);

	ck_assert_ptr_nonnull(l);
	ck_assert_str_eq(script_last(OP_GET)->origin, ORIGIN);
	return l;
}

/*
 * After a wait the holder's value is there: installed, no fetch here;
 * also (_i 1) for a load after a change told of, whose first look found
 * the tier's copy (fetched at T0 - 1 s) older than the change.
 */
START_TEST(test_wait_then_value)
{
	if (_i == 0) {
		start();
		script_answer(OP_GET, TIER_MISS, NULL, NULL);
	} else {
		start_told(T0 - 0.5);
		script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	}
	script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
	script_answer(OP_WAIT, TIER_NOTIFIED, NULL, NULL);
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	ck_assert_int_eq(told.shared, 1);
	ck_assert_int_eq(st.fetches, 0);
}
END_TEST

/*
 * A holder that lives (its lock stays, renewed) however many waits it
 * takes: never a fetch here, nothing counted as the tier's failure; its
 * value, when it comes, is installed.
 */
START_TEST(test_living_holder_is_waited_on_to_the_end)
{
	int i;

	start();
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	for (i = 0; i < 10; i++) {
		script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
		ck_assert_int_gt(script_last(OP_WAIT)->timeout_ms, 0);
		script_answer(OP_WAIT, waited[i % 3], NULL, NULL);
		script_answer(OP_GET, TIER_MISS, NULL, NULL);
		ck_assert_int_eq(
		    script_last(OP_LOCK)->flags, TIER_LOCK_TAKEOVER);
	}
	ck_assert_int_eq(st.fetches, 0);
	script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
	script_answer(OP_WAIT, TIER_NOTIFIED, NULL, NULL);
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_int_eq(told.shared, 1);
	ck_assert_int_eq(st.fetches, 0);
	ck_assert_uint_eq(shared_stats(sh)->local, 0);
	ck_assert_uint_eq(shared_stats(sh)->hits, 1);
}
END_TEST

/* Any other answer at any step: fetch here at once, local-only. */
static const struct {
	int step; /* 0: get, 1: lock, 2: wait */
	enum tier_result result;
} failing[] = {
	{ 0, TIER_DOWN },
	{ 0, TIER_ERROR },
	{ 0, TIER_TIMEOUT },
	{ 1, TIER_DOWN },
	{ 1, TIER_TIMEOUT },
	{ 2, TIER_ERROR },
	{ 2, TIER_DOWN },
};

START_TEST(test_tier_failure_fetches_here)
{
	size_t calls;

	start();
	if (failing[_i].step > 0)
		script_answer(OP_GET, TIER_MISS, NULL, NULL);
	if (failing[_i].step > 1)
		script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
	script_answer(failing[_i].step == 0   ? OP_GET
	              : failing[_i].step == 1 ? OP_LOCK
	                                      : OP_WAIT,
	    failing[_i].result, NULL, NULL);
	calls = st.n;
	ck_assert_int_eq(st.fetches, 1);
	ck_assert_uint_eq(shared_stats(sh)->local, 1);
	ck_assert_uint_eq(shared_stats(sh)->misses, 0);
	script_fetched(FETCH_OK);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_uint_eq(st.n, calls); /* nothing held: no unlock */
}
END_TEST

/* The budget is spent after the GET: no lock is tried, fetch here. */
START_TEST(test_budget_spent_before_lock_fetches_here)
{
	start();
	st.budget_left = 0;
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_int_eq(st.fetches, 1);
	ck_assert_uint_eq(shared_stats(sh)->local, 1);
	script_fetched(FETCH_OK);
	ck_assert_uint_eq(st.n, 1);
}
END_TEST

/* Spent once the lock is taken: fetch under it without a recheck. */
START_TEST(test_budget_spent_under_lock_fetches_under_it)
{
	start();
	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	st.budget_left = 0;
	script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	ck_assert_uint_eq(st.n, 2); /* no recheck */
	ck_assert_int_eq(st.fetches, 1);
	ck_assert_uint_eq(shared_stats(sh)->misses, 1);
	ck_assert_uint_eq(shared_stats(sh)->local, 0);
	script_fetched(FETCH_OK);
	ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
}
END_TEST

/*
 * Cancelled while a call is out: its answer ends the load with no callback
 * and no further call but the unlock of a lock it holds (or just got).
 */
START_TEST(test_cancelled_mid_call)
{
	void *l = start();
	size_t calls;

	if (_i >= 1)
		script_answer(OP_GET, TIER_MISS, NULL, NULL);
	if (_i == 2)
		script_answer(OP_LOCK, TIER_BUSY, NULL, NULL);
	if (_i == 3)
		script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	shared_fetch_ops.cancel(l);
	calls = st.n;
	switch (_i) {
	case 0: /* in GET: a usable value comes, unused */
		script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
		ck_assert_uint_eq(st.n, calls);
		break;
	case 1: /* in LOCK: the lock taken is given back */
		script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
		ck_assert_uint_eq(st.n, calls + 1);
		ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
		break;
	case 2: /* in WAIT */
		script_answer(OP_WAIT, TIER_NOTIFIED, NULL, NULL);
		ck_assert_uint_eq(st.n, calls);
		break;
	case 3: /* in RECHECK, holding the lock */
		script_answer(OP_GET, TIER_MISS, NULL, NULL);
		ck_assert_uint_eq(st.n, calls + 1);
		ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
		break;
	}
	ck_assert_int_eq(told.calls, 0);
	ck_assert_int_eq(st.fetches, 0);
}
END_TEST

/* Cancelled while fetching under the lock: the fetch stops, unlock. */
START_TEST(test_cancelled_while_fetching)
{
	void *l = start();

	script_answer(OP_GET, TIER_MISS, NULL, NULL);
	lock_and_recheck();
	shared_fetch_ops.cancel(l);
	ck_assert_int_eq(st.fetch_cancels, 1);
	ck_assert_str_eq(script_last(OP_UNLOCK)->token, TOKEN);
	ck_assert_int_eq(told.calls, 0);
}
END_TEST

/* A purge here purges the tier's copy. */
START_TEST(test_purge_reaches_the_tier)
{
	shared_fetch_ops.purge(sh, ORIGIN);
	ck_assert_str_eq(script_last(OP_PURGE)->origin, ORIGIN);
}
END_TEST

/*
 * A load for a change another instance told of takes the tier's copy
 * (value(): fetched at T0 - 1 s) only when it was fetched at the change
 * or later (_i 1: a change at T0 - 2.5 s), else (_i 0: at T0 - 0.5 s) it
 * locks and fetches here (once it waited on a holder, what that holder
 * published answers: test_wait_then_value).
 */
START_TEST(test_told_change_takes_only_a_recent_copy)
{
	start_told(T0 - _i * 2.0 - 0.5);
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	if (_i == 1) {
		ck_assert_int_eq(told.shared, 1);
		ck_assert_uint_eq(st.n, 1);
		return;
	}
	ck_assert_int_eq(told.calls, 0);
	script_answer(OP_LOCK, TIER_OK, NULL, TOKEN);
	script_answer(OP_GET, TIER_OK, value(NOW + 60000), NULL);
	ck_assert_int_eq(told.calls, 0);
	ck_assert_int_eq(st.fetches, 1);
	script_fetched(FETCH_OK);
	ck_assert_int_eq(told.calls, 1);
	ck_assert_int_eq(told.shared, 0);
}
END_TEST

static Suite *
shared_load_suite(void)
{
	Suite *s = suite_create("shared_load");
	TCase *tc = tcase_create("stages");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_read_hit_installs);
	tcase_add_test(tc, test_read_miss_locks_rechecks_fetches);
	tcase_add_loop_test(tc, test_read_bad_value_is_a_miss, 0, 2);
	tcase_add_test(tc, test_recheck_finds_the_value);
	tcase_add_loop_test(tc, test_lock_lost_waits_then_takes_over, 0,
	    (int)(sizeof(waited) / sizeof(waited[0])));
	tcase_add_loop_test(tc, test_wait_then_value, 0, 2);
	tcase_add_test(tc, test_living_holder_is_waited_on_to_the_end);
	tcase_add_loop_test(tc, test_tier_failure_fetches_here, 0,
	    (int)(sizeof(failing) / sizeof(failing[0])));
	tcase_add_test(tc, test_budget_spent_before_lock_fetches_here);
	tcase_add_test(tc, test_budget_spent_under_lock_fetches_under_it);
	tcase_add_loop_test(tc, test_cancelled_mid_call, 0, 4);
	tcase_add_test(tc, test_cancelled_while_fetching);
	tcase_add_test(tc, test_purge_reaches_the_tier);
	tcase_add_loop_test(
	    tc, test_told_change_takes_only_a_recent_copy, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(shared_load_suite, NULL, NULL);
