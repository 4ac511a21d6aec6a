/*
 * check_tier_redis.c: the shared tier's client (tier.c, tier_conn.c)
 * against real redis-server processes, each started by the test on a
 * private Unix socket (or a free TCP port) without persistence. The event
 * loop is driven until the callbacks have run, with an upper bound; no
 * test sleeps except where Redis's own clock must pass (a lock expiry).
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "tier_fixture.h"
#include "tier/tier.h"
#include "tier/tier_value.h"
#include "test_main.h"

/* What one call's callback saw. */
struct res {
	int n; /* times the callback ran */
	enum tier_result r;
	char error[200];
	struct tier_value *v;
	char token[TIER_TOKEN_LEN + 1];
	double at; /* now_ms() when it ran */
	int64_t purged_at;
};

static void
on_res(struct tier_reply *rep, void *arg)
{
	struct res *res = arg;

	res->n++;
	res->r = rep->result;
	res->at = now_ms();
	snprintf(res->error, sizeof(res->error), "%s",
	    rep->error != NULL ? rep->error : "");
	if (rep->token != NULL)
		snprintf(res->token, sizeof(res->token), "%s", rep->token);
	res->v = rep->value; /* taken */
	rep->value = NULL;
	res->purged_at = rep->purged_at;
}

#define RUN(res, call)                                                         \
	do {                                                                   \
		memset(&(res), 0, sizeof(res));                                \
		call;                                                          \
		ck_assert_int_eq((res).n, 0); /* never before the return */    \
		ck_assert_msg(drive_until(&(res).n, 1, 5000), "no callback");  \
	} while (0)

static struct tier *
tier_up_locking(const char *const *urls, size_t n, long timeout_ms,
    long poll_ms, long lock_ms)
{
	struct tier_config cf = { .urls = urls,
		.nurls = n,
		.timeout_ms = timeout_ms,
		.lock_ms = lock_ms,
		.poll_ms = poll_ms,
		.reconnect_min_ms = 20,
		.reconnect_max_ms = 100 };
	struct tier_server_stats st;
	struct tier *t;
	char *cause = NULL;
	double end = now_ms() + 5000;
	size_t i, up;

	t = tier_new(base, &cf, &cause);
	ck_assert_msg(t != NULL, "tier_new: %s", cause);
	do { /* until every server's connections are up */
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		for (i = up = 0; i < n; i++) {
			tier_server_stats(t, i, &st);
			up += st.state == TIER_SERVER_UP && st.subscribed;
		}
		if (up < n)
			usleep(1000);
	} while (up < n && now_ms() < end);
	ck_assert_uint_eq(up, n);
	return t;
}

static struct tier *
tier_up(const char *const *urls, size_t n, long timeout_ms, long poll_ms)
{
	return tier_up_locking(urls, n, timeout_ms, poll_ms, 30000);
}

static void
sample(struct tier_value *v, const char *origin)
{
	memset(v, 0, sizeof(*v));
	v->origin = (char *)origin;
	v->policy = TIER_POLICY_RULES;
	v->http_status = 200;
	v->fetched_at = 1700000000000LL;
	v->expires_at = 1700086400000LL;
	v->stale_until = 1700090000000LL;
	v->body = (char *)"User-agent: *\nDisallow: /x\n";
	v->body_len = strlen(v->body);
}

/* --- tests ------------------------------------------------------------------
 */

#define O "https://example.com"

/* get misses, publish stores with the asked expiry, get returns the value. */
START_TEST(get_publish_get)
{
	const char *urls[] = { srv[0].url };
	struct tier_value v;
	struct res res;
	struct tier *t;
	long long pttl;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 1000);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_str_eq(tier_result_name(res.r), "miss");
	sample(&v, O);
	RUN(res, tier_publish(t, &v, 60000, NULL, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	pttl = redis_int(0, "PTTL %s", "robotsd:v1:e:{" O "}");
	ck_assert_msg(pttl > 59000 && pttl <= 60000, "PTTL %lld", pttl);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_ptr_nonnull(res.v);
	ck_assert_str_eq(res.v->origin, O);
	ck_assert_int_eq(res.v->http_status, 200);
	ck_assert(res.v->stale_until == v.stale_until);
	ck_assert_mem_eq(res.v->body, v.body, v.body_len);
	tier_value_clear(res.v);
	free(res.v);
	drive_for(20);
	ck_assert_int_eq(res.n, 1); /* exactly once */
	ck_assert_uint_eq(tier_stats(t)->hits, 1);
	ck_assert_uint_eq(tier_stats(t)->misses, 1);
	ck_assert_uint_eq(tier_stats(t)->publishes, 1);
	tier_free(t);
}
END_TEST

/* Only the holder's token releases a lock; the lock expires as asked. */
START_TEST(lock_unlock)
{
	const char *urls[] = { srv[0].url };
	struct res a, b, res;
	struct tier *t;
	long long pttl;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 1000);
	RUN(a, tier_lock(t, O, 0, 0, on_res, &a));
	ck_assert_int_eq(a.r, TIER_OK);
	ck_assert_uint_eq(strlen(a.token), TIER_TOKEN_LEN);
	pttl = redis_int(0, "PTTL %s", "robotsd:v1:l:{" O "}");
	ck_assert_msg(pttl > 29000 && pttl <= 30000, "PTTL %lld", pttl);
	RUN(b, tier_lock(t, O, 0, 0, on_res, &b));
	ck_assert_int_eq(b.r, TIER_BUSY);
	RUN(res, tier_unlock(
	             t, O, "0123456789abcdef0123456789abcdef", on_res, &res));
	ck_assert_int_eq(res.r, TIER_MISS); /* not the holder: kept */
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:l:{" O "}"), 1);
	RUN(res, tier_unlock(t, O, a.token, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:l:{" O "}"), 0);
	RUN(b, tier_lock(t, O, TIER_LOCK_TAKEOVER, 0, on_res, &b));
	ck_assert_int_eq(b.r, TIER_OK);
	ck_assert_str_ne(a.token, b.token); /* tokens are random */
	ck_assert_uint_eq(tier_stats(t)->locks, 2);
	ck_assert_uint_eq(tier_stats(t)->lock_takeovers, 1);
	tier_free(t);
}
END_TEST

/*
 * A lock lasts while its holder holds it, however long its fetch waits
 * for its turn: every half of the lock's lifetime (2 s here) the holder's
 * tier pushes its expiry back, while it still holds the holder's token.
 * Once released, it is renewed no more.
 */
START_TEST(lock_held_is_renewed)
{
	const char *urls[] = { srv[0].url };
	const char *key = "robotsd:v1:l:{" O "}";
	struct res a, res;
	struct tier *t;
	redisReply *r;

	redis_start(0, NULL);
	t = tier_up_locking(urls, 1, 1000, 1000, 2000);
	RUN(a, tier_lock(t, O, 0, 0, on_res, &a));
	ck_assert_int_eq(a.r, TIER_OK);
	drive_for(3000); /* Redis's clock: past the first lifetime */
	r = redis_cmd(0, "GET %s", key);
	ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
	ck_assert_str_eq(r->str, a.token);
	freeReplyObject(r);
	ck_assert_int_gt(redis_int(0, "PTTL %s", key), 0);
	RUN(res, tier_unlock(t, O, a.token, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	/* the same token again, by hand: not renewed past its 1.5 s */
	freeReplyObject(redis_cmd(0, "SET %s %s PX 1500", key, a.token));
	drive_for(2000);
	ck_assert_int_eq(redis_int(0, "EXISTS %s", key), 0);
	tier_free(t);
}
END_TEST

/*
 * A lock is set and renewed for hold_ms (tier_set_hold, at most lock_ms),
 * while only one longer than lock_ms counts as no robotsd's: a lock of
 * another instance with a longer hold is waited on, not taken over.
 */
START_TEST(lock_hold_below_lock_time)
{
	const char *urls[] = { srv[0].url };
	const char *key = "robotsd:v1:l:{" O "}";
	struct res a, b;
	struct tier *t;
	long long pttl;

	redis_start(0, NULL);
	t = tier_up_locking(urls, 1, 1000, 1000, 30000);
	tier_set_hold(t, 2000);
	RUN(a, tier_lock(t, O, 0, 0, on_res, &a));
	ck_assert_int_eq(a.r, TIER_OK);
	pttl = redis_int(0, "PTTL %s", key);
	ck_assert_msg(pttl > 1500 && pttl <= 2000, "PTTL %lld", pttl);
	drive_for(3000); /* renewed every second, for 2 s again */
	pttl = redis_int(0, "PTTL %s", key);
	ck_assert_msg(pttl > 0 && pttl <= 2000, "PTTL %lld", pttl);
	freeReplyObject(redis_cmd(0, "SET %s other PX 20000", key));
	RUN(b, tier_lock(t, O, TIER_LOCK_TAKEOVER, 0, on_res, &b));
	ck_assert_int_eq(b.r, TIER_BUSY); /* within 30 s: a robotsd's */
	freeReplyObject(redis_cmd(0, "SET %s other PX 40000", key));
	RUN(b, tier_lock(t, O, TIER_LOCK_TAKEOVER, 0, on_res, &b));
	ck_assert_int_eq(b.r, TIER_OK); /* past 30 s: nobody's, taken */
	pttl = redis_int(0, "PTTL %s", key);
	ck_assert_msg(pttl > 1500 && pttl <= 2000, "PTTL %lld", pttl);
	tier_set_hold(t, 50000); /* more than lock_ms: lock_ms */
	freeReplyObject(redis_cmd(0, "DEL %s", key));
	RUN(b, tier_lock(t, O, 0, 0, on_res, &b));
	pttl = redis_int(0, "PTTL %s", key);
	ck_assert_msg(pttl > 29000 && pttl <= 30000, "PTTL %lld", pttl);
	tier_free(t);
}
END_TEST

/*
 * Another instance waits; the holder's publish (with its token) stores the
 * value, releases the lock and wakes the waiter by notification, long
 * before its fallback poll would.
 */
START_TEST(wait_notified)
{
	const char *urls[] = { srv[0].url };
	struct res lk, w, pub;
	struct tier *holder, *other;
	struct tier_value v;
	double t0;

	redis_start(0, NULL);
	holder = tier_up(urls, 1, 1000, 60000);
	other = tier_up(urls, 1, 1000, 60000);
	RUN(lk, tier_lock(holder, O, 0, 0, on_res, &lk));
	ck_assert_int_eq(lk.r, TIER_OK);
	memset(&w, 0, sizeof(w));
	tier_wait(other, O, 10000, on_res, &w);
	drive_for(50); /* its first poll sees the lock */
	ck_assert_int_eq(w.n, 0);
	sample(&v, O);
	t0 = now_ms();
	RUN(pub, tier_publish(holder, &v, 60000, lk.token, on_res, &pub));
	ck_assert_int_eq(pub.r, TIER_OK);
	ck_assert(drive_until(&w.n, 1, 5000));
	ck_assert_str_eq(tier_result_name(w.r), "notified");
	ck_assert_msg(w.at - t0 < 1000, "notified after %.0f ms", w.at - t0);
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:l:{" O "}"), 0);
	ck_assert_uint_eq(tier_stats(other)->lock_waits, 1);
	ck_assert_uint_eq(tier_stats(other)->notifications, 1);
	tier_free(holder);
	tier_free(other);
}
END_TEST

/* The holder dies: its lock expires, and the poll ends the wait. */
START_TEST(wait_fallback_poll)
{
	const char *urls[] = { srv[0].url };
	struct res w;
	struct tier *t;
	redisReply *r;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 50);
	r = redis_cmd(0, "SET %s dead-holder PX 300", "robotsd:v1:l:{" O "}");
	freeReplyObject(r);
	RUN(w, tier_wait(t, O, 10000, on_res, &w));
	ck_assert_str_eq(tier_result_name(w.r), "unlocked");
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:l:{" O "}"), 0);
	/* No lock at all: the first poll answers at once. */
	RUN(w, tier_wait(t, O, 10000, on_res, &w));
	ck_assert_int_eq(w.r, TIER_UNLOCKED);
	tier_free(t);
}
END_TEST

/*
 * Server 0 up, its lock of O held by someone else (within a robotsd
 * lock's lifetime) and a tier waiting on it past its first poll, with no
 * poll after that one.
 */
static struct tier *
wait_on_held(const char *const *urls, struct res *w)
{
	struct tier *t;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 60000);
	freeReplyObject(
	    redis_cmd(0, "SET %s held PX 20000", "robotsd:v1:l:{" O "}"));
	memset(w, 0, sizeof(*w));
	tier_wait(t, O, 60000, on_res, w);
	drive_for(50); /* its first poll sees the lock */
	ck_assert_int_eq(w->n, 0);
	return t;
}

/*
 * Notices nobody's publish sent (anyone may PUBLISH on the channel) while
 * a holder still holds the lock: each makes the wait read the lock again,
 * and the wait goes on; once the lock is gone a notice ends it.
 */
START_TEST(wait_forged_notices)
{
	const char *urls[] = { srv[0].url };
	struct res w;
	struct tier *t;
	redisReply *r;
	int i;

	t = wait_on_held(urls, &w);
	for (i = 0; i < 200; i++) {
		r = redis_cmd(0, "PUBLISH %s %s", TIER_CHANNEL, O);
		ck_assert_int_eq(r->integer, 1);
		freeReplyObject(r);
	}
	drive_for(300);
	ck_assert_int_eq(w.n, 0);
	ck_assert_uint_eq(tier_stats(t)->notifications, 0);
	freeReplyObject(redis_cmd(0, "DEL %s", "robotsd:v1:l:{" O "}"));
	freeReplyObject(redis_cmd(0, "PUBLISH %s %s", TIER_CHANNEL, O));
	ck_assert(drive_until(&w.n, 1, 5000));
	ck_assert_str_eq(tier_result_name(w.r), "notified");
	ck_assert_uint_eq(tier_stats(t)->notifications, 1);
	tier_free(t);
}
END_TEST

/*
 * A lock no robotsd set (no expiry, or longer than --redis-lock-time)
 * would never be released: the first poll ends the wait, for a takeover.
 */
START_TEST(wait_foreign_lock)
{
	const char *urls[] = { srv[0].url };
	struct res w;
	struct tier *t;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 60000);
	freeReplyObject(redis_cmd(0, "SET %s by-hand", "robotsd:v1:l:{" O "}"));
	RUN(w, tier_wait(t, O, 60000, on_res, &w));
	ck_assert_str_eq(tier_result_name(w.r), "unlocked");
	freeReplyObject(
	    redis_cmd(0, "SET %s long PX 40000", "robotsd:v1:l:{" O "}"));
	RUN(w, tier_wait(t, O, 60000, on_res, &w));
	ck_assert_str_eq(tier_result_name(w.r), "unlocked");
	tier_free(t);
}
END_TEST

/* A wait that sees neither a publish nor a release ends at its timeout. */
START_TEST(wait_timeout)
{
	const char *urls[] = { srv[0].url };
	struct res w;
	struct tier *t;
	double t0;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 50);
	freeReplyObject(
	    redis_cmd(0, "SET %s held PX 20000", "robotsd:v1:l:{" O "}"));
	t0 = now_ms();
	RUN(w, tier_wait(t, O, 300, on_res, &w));
	ck_assert_int_eq(w.r, TIER_TIMEOUT);
	ck_assert_msg(
	    w.at - t0 >= 290 && w.at - t0 < 1000, "after %.0f ms", w.at - t0);
	ck_assert_uint_eq(tier_stats(t)->timeouts, 0); /* not Redis's fault */
	tier_free(t);
}
END_TEST

START_TEST(purge)
{
	const char *urls[] = { srv[0].url };
	struct tier_value v;
	struct res res;
	struct tier *t;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 1000);
	sample(&v, O);
	RUN(res, tier_publish(t, &v, 60000, NULL, on_res, &res));
	RUN(res, tier_purge(t, O, 1234567, 60000, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:e:{" O "}"), 0);
	ck_assert_int_gt(redis_int(0, "PTTL %s", "robotsd:v1:p:{" O "}"), 0);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_MISS);
	RUN(res, tier_purge(t, O, 1234568, 60000, on_res, &res));
	ck_assert_int_eq(res.r, TIER_MISS);
	/* a value written after it: the record's time comes with it */
	RUN(res, tier_publish(t, &v, 60000, NULL, on_res, &res));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_int_eq(res.purged_at, 1234568);
	tier_value_clear(res.v);
	free(res.v);
	tier_free(t);
}
END_TEST

/* Garbage, a truncated value and another version: refused with a reason. */
START_TEST(corrupt_values)
{
	const char *urls[] = { srv[0].url };
	const char *key = "robotsd:v1:e:{" O "}";
	struct tier_value v;
	struct res res;
	struct tier *t;
	size_t len;
	char *buf;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 1000);
	sample(&v, O);
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, &len));
	freeReplyObject(redis_cmd(0, "SET %s %s", key, "garbage"));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_CORRUPT);
	ck_assert_str_eq(res.error, "not a robotsd value (bad magic)");
	freeReplyObject(redis_cmd(0, "SET %s %b", key, buf, len - 10));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_CORRUPT);
	ck_assert_str_eq(res.error, "truncated value");
	buf[5] = 2; /* version 2 */
	freeReplyObject(redis_cmd(0, "SET %s %b", key, buf, len));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_str_eq(
	    res.error, "value written by an incompatible robotsd version");
	buf[5] = 1;
	freeReplyObject(redis_cmd(
	    0, "SET %s %b", "robotsd:v1:e:{http://x.test}", buf, len));
	RUN(res, tier_get(t, "http://x.test", 0, on_res, &res));
	ck_assert_str_eq(res.error, "value belongs to another origin");
	ck_assert_uint_eq(tier_stats(t)->corrupt, 4);
	ck_assert_uint_eq(tier_stats(t)->hits, 0);
	free(buf);
	tier_free(t);
}
END_TEST

#define NORIGINS 200

static void
origin_of(int i, char *buf, size_t size)
{
	snprintf(buf, size, "https://site%d.test", i);
}

/* Two servers: every origin's keys on exactly the one the ring names. */
START_TEST(two_servers)
{
	const char *urls[] = { srv[0].url, srv[1].url };
	char origin[64], key[96];
	struct tier_value v;
	struct res res[NORIGINS];
	size_t on[2] = { 0, 0 }, s;
	struct tier *t;
	int i, done = 0;

	redis_start(0, NULL);
	redis_start(1, NULL);
	t = tier_up(urls, 2, 1000, 1000);
	memset(res, 0, sizeof(res));
	for (i = 0; i < NORIGINS; i++) {
		origin_of(i, origin, sizeof(origin));
		sample(&v, origin);
		tier_publish(t, &v, 60000, NULL, on_res, &res[i]);
	}
	for (i = 0; i < NORIGINS; i++) {
		drive_until(&res[i].n, 1, 5000);
		ck_assert_int_eq(res[i].r, TIER_OK);
		done += res[i].n;
	}
	ck_assert_int_eq(done, NORIGINS);
	for (i = 0; i < NORIGINS; i++) {
		origin_of(i, origin, sizeof(origin));
		snprintf(key, sizeof(key), "robotsd:v1:e:{%s}", origin);
		s = tier_server_of(t, origin);
		ck_assert_int_eq(redis_int((int)s, "EXISTS %s", key), 1);
		ck_assert_int_eq(redis_int(1 - (int)s, "EXISTS %s", key), 0);
		on[s]++;
	}
	ck_assert_msg(on[0] > 40 && on[1] > 40, "%zu / %zu", on[0], on[1]);
	tier_free(t);
}
END_TEST

/* The first origin found on server want. */
static void
origin_on(struct tier *t, size_t want, char *buf, size_t size)
{
	int i;

	for (i = 0; i < 1000; i++) {
		origin_of(i, buf, size);
		if (tier_server_of(t, buf) == want)
			return;
	}
	ck_abort_msg("no origin on server %zu", want);
}

/* One server down: its calls fail at once, the other's work. */
START_TEST(server_down)
{
	const char *urls[] = { srv[0].url, srv[1].url };
	struct tier_server_stats st;
	char on0[64], on1[64];
	struct res res;
	struct tier *t;
	double t0;

	redis_start(0, NULL);
	redis_start(1, NULL);
	t = tier_up(urls, 2, 1000, 1000);
	origin_on(t, 0, on0, sizeof(on0));
	origin_on(t, 1, on1, sizeof(on1));
	redis_kill(1);
	tier_server_stats(t, 1, &st);
	while (st.state == TIER_SERVER_UP) { /* until it notices */
		event_base_loop(base, EVLOOP_ONCE);
		tier_server_stats(t, 1, &st);
	}
	t0 = now_ms();
	RUN(res, tier_get(t, on1, 0, on_res, &res));
	ck_assert_msg(res.r == TIER_DOWN || res.r == TIER_ERROR, "%s",
	    tier_result_name(res.r));
	/* at once: not at its 1000 ms deadline (a loaded machine may take
	   a while to run the loop, never that long) */
	ck_assert_msg(res.at - t0 < 1000, "failed after %.0f ms", res.at - t0);
	RUN(res, tier_lock(t, on1, 0, 0, on_res, &res));
	ck_assert(res.r == TIER_DOWN || res.r == TIER_ERROR);
	RUN(res, tier_get(t, on0, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_MISS);
	RUN(res, tier_lock(t, on0, 0, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_uint_ge(tier_stats(t)->errors, 2);
	tier_free(t);
}
END_TEST

/*
 * A server that is not there (0), or whose host name is still being
 * resolved (1): calls fail at once with the reason rather than wait, and
 * tier_free cancels the lookup.
 */
START_TEST(server_absent)
{
	const char *urls[] = { _i == 0 ? srv[0].url
		                       : "redis://robotsd-test.invalid:6379" };
	struct tier_config cf = { .urls = urls, .nurls = 1, .timeout_ms = 500 };
	struct tier_server_stats st;
	struct res res;
	struct tier *t;
	char *cause = NULL;

	ck_assert_ptr_nonnull(t = tier_new(base, &cf, &cause));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_DOWN);
	ck_assert_msg(strstr(res.error, "is down") != NULL, "%s", res.error);
	tier_server_stats(t, 0, &st);
	ck_assert_int_ne(st.state, TIER_SERVER_UP);
	tier_free(t);
	event_base_loop(base, EVLOOP_NONBLOCK); /* a lookup's end frees */
}
END_TEST

/* Redis restarted: the tier reconnects by itself. */
START_TEST(server_restart)
{
	const char *urls[] = { srv[0].url };
	struct tier_server_stats st;
	struct tier_value v;
	struct res res;
	struct tier *t;
	double end;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 1000, 1000);
	redis_kill(0);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert(res.r == TIER_DOWN || res.r == TIER_ERROR);
	redis_start(0, NULL);
	end = now_ms() + 5000;
	do {
		drive_for(10);
		tier_server_stats(t, 0, &st);
	} while (
	    !(st.state == TIER_SERVER_UP && st.subscribed) && now_ms() < end);
	ck_assert_str_eq(tier_state_name(st.state), "up");
	ck_assert_uint_ge(st.connects, 4); /* two connections, twice */
	sample(&v, O);
	RUN(res, tier_publish(t, &v, 60000, NULL, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	tier_value_clear(res.v);
	free(res.v);
	tier_free(t);
}
END_TEST

/*
 * A stopped (SIGSTOP) server: every call's callback runs with a timeout
 * within the deadline; once it runs again the tier is back by itself.
 */
START_TEST(server_slow)
{
	const char *urls[] = { srv[0].url };
	struct tier_server_stats st;
	struct res res[5];
	struct tier_value v;
	struct tier *t;
	double t0, end;
	int i;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 200, 1000);
	kill(srv[0].pid, SIGSTOP);
	memset(res, 0, sizeof(res));
	sample(&v, O);
	t0 = now_ms();
	tier_get(t, O, 0, on_res, &res[0]);
	tier_lock(t, O, 0, 0, on_res, &res[1]);
	tier_publish(t, &v, 1000, NULL, on_res, &res[2]);
	tier_wait(t, O, 5000, on_res, &res[3]);
	tier_purge(t, O, 1, 1000, on_res, &res[4]);
	for (i = 0; i < 5; i++) {
		ck_assert(drive_until(&res[i].n, 1, 2000));
		ck_assert_msg(res[i].r == TIER_TIMEOUT, "call %d: %s", i,
		    tier_result_name(res[i].r));
		/* at the 200 ms deadline, before a second one would end */
		ck_assert_msg(res[i].at - t0 < 2 * 200, "call %d after %.0f ms",
		    i, res[i].at - t0);
	}
	drive_for(50);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(res[i].n, 1);
	ck_assert_uint_ge(tier_stats(t)->timeouts, 1);
	kill(srv[0].pid, SIGCONT);
	end = now_ms() + 5000;
	do {
		drive_for(10);
		tier_server_stats(t, 0, &st);
	} while (st.state != TIER_SERVER_UP && now_ms() < end);
	RUN(res[0], tier_get(t, O, 0, on_res, &res[0]));
	ck_assert_int_eq(res[0].r, TIER_MISS);
	tier_free(t);
}
END_TEST

/*
 * A miss's budget (tier_budget_left), at instants given, not read: all of
 * --redis-timeout at its start, what is left later (a fraction of a
 * millisecond counts as one), nothing once it has run out.
 */
START_TEST(budget_left)
{
	const char *urls[] = { "unix:///nonexistent/redis.sock" };
	struct tier_config cf = { .urls = urls, .nurls = 1, .timeout_ms = 250 };
	char *cause = NULL;
	struct tier *t;

	ck_assert_ptr_nonnull(t = tier_new(base, &cf, &cause));
	ck_assert_int_eq(tier_budget_left(t, 100.0, 100.0), 250);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 100.125), 125);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 100.2004), 50);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 100.2499), 1);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 100.25), 0);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 160.0), 0);
	ck_assert_int_eq(tier_budget_left(t, 100.0, 99.0), 250); /* at most */
	tier_free(t);
}
END_TEST

/* Calls of one command since the server started, from INFO commandstats. */
static long
redis_calls(int i, const char *cmd)
{
	redisReply *r = redis_cmd(i, "INFO commandstats");
	char key[64];
	const char *p;
	long n = 0;

	ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
	snprintf(key, sizeof(key), "cmdstat_%s:calls=", cmd);
	if ((p = strstr(r->str, key)) != NULL)
		n = strtol(p + strlen(key), NULL, 10);
	freeReplyObject(r);
	return n;
}

/*
 * A caller's deadline shorter than --redis-timeout ends the call but not
 * the connection: Redis may only be slower than that caller can wait. Its
 * late answer is ignored, and a lock granted late is released at once.
 */
START_TEST(caller_deadline)
{
	const char *urls[] = { srv[0].url };
	struct tier_server_stats st;
	struct res res;
	struct tier *t;
	int i;

	redis_start(0, NULL);
	t = tier_up(urls, 1, 2000, 60000);
	for (i = 0; i < 2; i++) {
		kill(srv[0].pid, SIGSTOP);
		if (i == 0)
			RUN(res, tier_get(t, O, 50, on_res, &res));
		else
			RUN(res, tier_lock(t, O, 0, 50, on_res, &res));
		kill(srv[0].pid, SIGCONT);
		ck_assert_int_eq(res.r, TIER_TIMEOUT);
		ck_assert_str_eq(res.error, "no answer within 50 ms");
		tier_server_stats(t, 0, &st);
		ck_assert_str_eq(tier_state_name(st.state), "up");
		ck_assert_uint_eq(st.connects, 2); /* never dropped */
		ck_assert_uint_eq(tier_stats(t)->timeouts, (unsigned)i + 1);
	}
	/* The lock: taken once Redis ran again, then released by the tier. */
	for (i = 0; i < 300 && redis_calls(0, "eval") == 0; i++)
		drive_for(10);
	ck_assert_int_eq(redis_calls(0, "set"), 1);
	ck_assert_int_eq(redis_calls(0, "eval"), 1);
	ck_assert_int_eq(redis_int(0, "EXISTS %s", "robotsd:v1:l:{" O "}"), 0);
	ck_assert_int_eq(res.n, 1);
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_int_eq(res.r, TIER_MISS);
	tier_server_stats(t, 0, &st);
	ck_assert_uint_eq(st.connects, 2);
	ck_assert_uint_eq(tier_stats(t)->errors, 0);
	tier_free(t);
}
END_TEST

/*
 * A wait whose server's command connection is lost ends at once (down),
 * not at its next poll: the waiter goes local-only now.
 */
START_TEST(wait_ends_with_the_connection)
{
	const char *urls[] = { srv[0].url };
	char want[256];
	struct res w;
	struct tier *t;

	t = wait_on_held(urls, &w);
	ck_assert_int_eq(w.n, 0);
	redis_kill(0);
	ck_assert_msg(drive_until(&w.n, 1, 5000), "the wait goes on");
	ck_assert_str_eq(tier_result_name(w.r), "down");
	snprintf(want, sizeof(want), "lost the connection to server %s?db=0",
	    srv[0].url);
	ck_assert_str_eq(w.error, want);
	tier_free(t);
}
END_TEST

/* TCP to a host name (resolved off the loop), a password, a database. */
START_TEST(tcp_auth_db)
{
	const char *urls[1];
	char url[128];
	struct tier_value v;
	struct res res;
	struct tier *t;
	redisReply *r;
	redisContext *c;

	srv[0].sock[0] = '\0';
	srv[0].port = free_port();
	redis_start(0, "s3cret");
	snprintf(
	    url, sizeof(url), "redis://:s3cret@localhost:%d/3", srv[0].port);
	urls[0] = url;
	t = tier_up(urls, 1, 1000, 1000);
	sample(&v, O);
	RUN(res, tier_publish(t, &v, 60000, NULL, on_res, &res));
	ck_assert_int_eq(res.r, TIER_OK);
	ck_assert_ptr_nonnull(c = sync_client(&srv[0]));
	freeReplyObject(redisCommand(c, "AUTH s3cret"));
	freeReplyObject(redisCommand(c, "SELECT 3"));
	ck_assert_ptr_nonnull(
	    r = redisCommand(c, "EXISTS %s", "robotsd:v1:e:{" O "}"));
	ck_assert_int_eq(r->integer, 1);
	freeReplyObject(r);
	redisFree(c);
	tier_free(t);
}
END_TEST

/* A wrong password: the handshake is refused, calls fail, no crash. */
START_TEST(tcp_bad_password)
{
	struct tier_config cf = {
		.nurls = 1, .timeout_ms = 1000, .reconnect_min_ms = 50
	};
	const char *urls[1];
	char url[128], *cause = NULL;
	struct tier_server_stats st;
	struct res res;
	struct tier *t;

	srv[0].sock[0] = '\0';
	srv[0].port = free_port();
	redis_start(0, "s3cret");
	snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d", srv[0].port);
	urls[0] = url;
	cf.urls = urls;
	ck_assert_ptr_nonnull(t = tier_new(base, &cf, &cause));
	RUN(res, tier_get(t, O, 0, on_res, &res));
	ck_assert_msg(res.r == TIER_ERROR || res.r == TIER_DOWN, "%s: %s",
	    tier_result_name(res.r), res.error);
	drive_for(100);
	tier_server_stats(t, 0, &st);
	ck_assert_int_ne(st.state, TIER_SERVER_UP);
	tier_free(t);
}
END_TEST

START_TEST(config_errors)
{
	const char *bad[] = { "redis://host:0" };
	const char *twice[] = { "redis://a", "redis://a:6379/0" };
	struct tier_config cf = { .urls = bad, .nurls = 1 };
	char *cause = NULL;

	ck_assert_ptr_null(tier_new(base, &cf, &cause));
	ck_assert_str_eq(cause, "--redis redis://host:0: bad port (1-65535)");
	free(cause);
	cf.urls = twice;
	cf.nurls = 2;
	ck_assert_ptr_null(tier_new(base, &cf, &cause));
	ck_assert_str_eq(cause, "--redis redis://a:6379/0: given twice");
	free(cause);
}
END_TEST

static Suite *
tier_redis_suite(void)
{
	Suite *s = suite_create("tier_redis");
	TCase *tc = tcase_create("redis");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, get_publish_get);
	tcase_add_test(tc, lock_unlock);
	tcase_add_test(tc, lock_held_is_renewed);
	tcase_add_test(tc, lock_hold_below_lock_time);
	tcase_add_test(tc, wait_notified);
	tcase_add_test(tc, wait_fallback_poll);
	tcase_add_test(tc, wait_timeout);
	tcase_add_test(tc, wait_forged_notices);
	tcase_add_test(tc, wait_foreign_lock);
	tcase_add_test(tc, purge);
	tcase_add_test(tc, corrupt_values);
	tcase_add_test(tc, two_servers);
	tcase_add_test(tc, server_down);
	tcase_add_loop_test(tc, server_absent, 0, 2);
	tcase_add_test(tc, server_restart);
	tcase_add_test(tc, server_slow);
	tcase_add_test(tc, budget_left);
	tcase_add_test(tc, caller_deadline);
	tcase_add_test(tc, wait_ends_with_the_connection);
	tcase_add_test(tc, tcp_auth_db);
	tcase_add_test(tc, tcp_bad_password);
	tcase_add_test(tc, config_errors);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tier_redis_suite, fixture_setup, NULL);
