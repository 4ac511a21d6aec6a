/*
 * check_tier_queue.c: the tier's pipeline against a real redis-server
 * (tier_fixture.c): at most max_inflight commands out per server, the rest
 * queued in robotsd; a call's deadline counts from when its command is
 * written to the socket, never while it queues nor while robotsd has not
 * written it yet, and from then on the call is sent (its stage, read
 * through tier_int.h); past max_queued a call is shed at once (TIER_SHED).
 * Redis is made slow with CLIENT PAUSE, its own clock: the outcomes are
 * asserted, with margins of 150 ms or more around each deadline.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "tier/tier.h"
#include "tier/tier_int.h"
#include "tier_fixture.h"
#include "tier/tier_value.h"
#include "test_main.h"

struct qres {
	int n;
	enum tier_result r;
	long queued_ms;
	long pause_ms; /* > 0: pause Redis this long when the answer comes */
	int *count;    /* incremented too, when not NULL */
};

static void
on_qres(struct tier_reply *rep, void *arg)
{
	struct qres *q = arg;

	q->n++;
	q->r = rep->result;
	q->queued_ms = rep->queued_ms;
	if (q->count != NULL)
		(*q->count)++;
	if (q->pause_ms > 0)
		freeReplyObject(
		    redis_cmd(0, "CLIENT PAUSE %ld ALL", q->pause_ms));
}

static struct tier *
queue_tier(long timeout_ms, size_t inflight, size_t queued)
{
	const char *urls[] = { srv[0].url };
	struct tier_config cf = { .urls = urls,
		.nurls = 1,
		.timeout_ms = timeout_ms,
		.reconnect_min_ms = 20,
		.reconnect_max_ms = 100,
		.max_inflight = inflight,
		.max_queued = queued };
	struct tier_server_stats st;
	char *cause = NULL;
	double end = now_ms() + 5000;
	struct tier *t;

	redis_start(0, NULL);
	t = tier_new(base, &cf, &cause);
	ck_assert_msg(t != NULL, "tier_new: %s", cause);
	do {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		tier_server_stats(t, 0, &st);
		if (st.state != TIER_SERVER_UP || !st.subscribed)
			usleep(1000);
	} while (
	    (st.state != TIER_SERVER_UP || !st.subscribed) && now_ms() < end);
	ck_assert(st.state == TIER_SERVER_UP && st.subscribed);
	return t;
}

/*
 * One command out at a time; Redis paused 250 ms before each answer. B
 * queues behind A for about 250 ms and is then answered about 250 ms after
 * it is sent: 500 ms after the call, 250 ms after the send, with a
 * deadline of 400 ms. It is answered (the time queued does not count) and
 * says how long it queued.
 */
START_TEST(queued_time_not_counted)
{
	struct tier *t = queue_tier(400, 1, 10);
	struct qres a = { .pause_ms = 250 }, b = { 0 };

	freeReplyObject(redis_cmd(0, "CLIENT PAUSE 250 ALL"));
	tier_get(t, "https://a.example", 0, on_qres, &a);
	tier_get(t, "https://b.example", 0, on_qres, &b);
	ck_assert(drive_until(&b.n, 1, 5000));
	ck_assert_int_eq(a.r, TIER_MISS);
	ck_assert_int_lt(a.queued_ms, 100); /* sent at once */
	ck_assert_msg(b.r == TIER_MISS, "b: %s", tier_result_name(b.r));
	ck_assert_int_ge(b.queued_ms, 200);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 0);
	tier_free(t);
}
END_TEST

/*
 * The time after the send does count: a call Redis leaves unanswered past
 * the deadline ends TIER_TIMEOUT, and the call queued behind it, never
 * sent, ends with the connection dropped for that (TIER_DOWN), not later.
 */
START_TEST(sent_time_counted)
{
	struct tier *t = queue_tier(200, 1, 10);
	struct qres a = { 0 }, b = { 0 };

	freeReplyObject(redis_cmd(0, "CLIENT PAUSE 1500 ALL"));
	tier_get(t, "https://a.example", 0, on_qres, &a);
	tier_get(t, "https://b.example", 0, on_qres, &b);
	ck_assert(drive_until(&b.n, 1, 1200)); /* before the pause ends */
	ck_assert_int_eq(a.n, 1);
	ck_assert_int_eq(a.r, TIER_TIMEOUT);
	ck_assert_int_eq(b.r, TIER_DOWN);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 1);
	tier_free(t);
}
END_TEST

/* The stage of the live call of origin on t; CALL_DONE when none is. */
static enum call_stage
call_stage_of(struct tier *t, const char *origin)
{
	struct tier_call *c;

	TAILQ_FOREACH(c, &t->calls, all)
		if (strcmp(c->origin, origin) == 0)
			return c->stage;
	return CALL_DONE;
}

/*
 * A call whose command was written to the socket is sent (CALL_SENT, out
 * of the connection's unwritten calls) while Redis, paused, has not
 * answered it yet; the loop is run until it is or 500 ms pass, well
 * inside the 800 ms pause.
 */
START_TEST(written_call_is_sent)
{
	struct tier *t = queue_tier(2000, 1, 10);
	struct qres a = { 0 };
	int i;

	freeReplyObject(redis_cmd(0, "CLIENT PAUSE 800 ALL"));
	tier_get(t, "https://a.example", 0, on_qres, &a);
	ck_assert_int_eq(call_stage_of(t, "https://a.example"), CALL_UNWRITTEN);
	for (i = 0; i < 50 && a.n == 0; i++) {
		if (call_stage_of(t, "https://a.example") == CALL_SENT)
			break;
		drive_for(10);
	}
	ck_assert_int_eq(a.n, 0);
	ck_assert_msg(call_stage_of(t, "https://a.example") == CALL_SENT,
	    "stage %s", tier_stage_name(call_stage_of(t, "https://a.example")));
	ck_assert(TAILQ_EMPTY(&t->servers[0].cmd.unwritten));
	ck_assert(drive_until(&a.n, 1, 3000));
	ck_assert_int_eq(a.r, TIER_MISS);
	ck_assert_int_eq(call_stage_of(t, "https://a.example"), CALL_DONE);
	tier_free(t);
}
END_TEST

/*
 * robotsd busy past a deadline before its loop ever wrote the command
 * (the caller holds the loop 400 ms; the deadline is 150 ms): the
 * deadline starts when the loop writes the command, so the call is
 * answered, never timed out, and says it waited in robotsd.
 */
START_TEST(busy_before_the_write)
{
	struct tier *t = queue_tier(150, 0, 0);
	struct qres a = { 0 };

	tier_get(t, "https://a.example", 0, on_qres, &a);
	usleep(400 * 1000); /* the loop held, as by a long callback */
	ck_assert(drive_until(&a.n, 1, 5000));
	ck_assert_msg(a.r == TIER_MISS, "a: %s", tier_result_name(a.r));
	ck_assert_int_ge(a.queued_ms, 400);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 0);
	tier_free(t);
}
END_TEST

/*
 * Past max_queued calls waiting, a new one is shed at once (from the loop,
 * never before the call returns) and counted; the others are answered.
 */
START_TEST(full_queue_sheds)
{
	struct tier *t = queue_tier(1000, 1, 2);
	struct qres q[4];
	int done = 0, i;

	memset(q, 0, sizeof(q));
	freeReplyObject(redis_cmd(0, "CLIENT PAUSE 300 ALL"));
	for (i = 0; i < 4; i++) {
		char origin[64];

		q[i].count = &done;
		snprintf(origin, sizeof(origin), "https://%d.example", i);
		tier_get(t, origin, 0, on_qres, &q[i]);
	}
	ck_assert_int_eq(done, 0);
	ck_assert(drive_until(&q[3].n, 1, 200)); /* during the pause */
	ck_assert_int_eq(q[3].r, TIER_SHED);
	ck_assert_int_eq(done, 1);
	ck_assert_uint_eq(tier_stats(t)->shed, 1);
	ck_assert(drive_until(&done, 4, 5000));
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(q[i].r, TIER_MISS);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 0);
	tier_free(t);
}
END_TEST

/*
 * A burst: 20,000 calls at once with the defaults, each answered (none
 * timed out, none shed), over one connection.
 */
START_TEST(burst_pipelined)
{
	enum { N = 20000 };
	struct tier *t = queue_tier(250, 0, 0);
	struct qres *q = calloc(N, sizeof(*q));
	int done = 0, i, miss = 0;

	ck_assert_ptr_nonnull(q);
	for (i = 0; i < N; i++) {
		char origin[64];

		q[i].count = &done;
		snprintf(origin, sizeof(origin), "https://%d.example", i);
		tier_get(t, origin, 0, on_qres, &q[i]);
	}
	ck_assert(drive_until(&done, N, 20000));
	for (i = 0; i < N; i++)
		miss += q[i].r == TIER_MISS;
	ck_assert_int_eq(miss, N);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 0);
	ck_assert_uint_eq(tier_stats(t)->shed, 0);
	free(q);
	tier_free(t);
}
END_TEST

static Suite *
tier_queue_suite(void)
{
	Suite *s = suite_create("tier_queue");
	TCase *tc = tcase_create("queue");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, queued_time_not_counted);
	tcase_add_test(tc, sent_time_counted);
	tcase_add_test(tc, written_call_is_sent);
	tcase_add_test(tc, busy_before_the_write);
	tcase_add_test(tc, full_queue_sheds);
	tcase_add_test(tc, burst_pipelined);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tier_queue_suite, fixture_setup, NULL);
