/*
 * tier.c: the shared tier's calls (get, publish, lock, unlock, wait,
 * purge) on the connections of tier_conn.c. A call lives until both its
 * callback has run and hiredis owes it no reply; its timer is its deadline
 * (the caller's, then --redis-timeout's for the connection), armed when its
 * commands are written to the socket, or delivers a result decided before
 * any I/O (a server that is down, a full queue). Its commands are formatted at
 * once and sent while fewer than max_inflight are out on the server's
 * connection; else they queue in the server's queue, sent in order as answers
 * come. The answers are read in tier_reply.c.
 */
#include <config.h>

#include <sys/random.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "base/log.h"
#include "tier/tier_int.h"
#include "tier/tier_ring.h"
#include "tier/tier_value.h"
#include "base/xmalloc.h"

/* Release the lock only when it still holds our token. */
#define UNLOCK_LUA                                                             \
	"if redis.call('get', KEYS[1]) == ARGV[1] then "                       \
	"return redis.call('del', KEYS[1]) else return 0 end"

/* Push the lock's expiry back only while it still holds our token. */
#define RENEW_LUA                                                              \
	"if redis.call('get', KEYS[1]) == ARGV[1] then "                       \
	"return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"

/*
 * A takeover, for ARGV[2] ms: the lock if free, or if what holds it would
 * outlive any lock a robotsd sets (no expiry, or one longer than ARGV[3]
 * ms): written by hand or by something else, nobody would ever release it.
 */
#define TAKEOVER_LUA                                                           \
	"local r = redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2]) "  \
	"if r then return r end "                                              \
	"local ttl = redis.call('pttl', KEYS[1]) "                             \
	"if ttl == -1 or ttl > tonumber(ARGV[3]) then "                        \
	"return redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2]) end "       \
	"return false"

/* The Redis keys of origin: an entry, its lock, its purge record. */
char *
tier_entry_key(const char *origin)
{
	char *k;

	xasprintf(&k, "robotsd:v1:e:{%s}", origin);
	return k;
}

char *
tier_lock_key(const char *origin)
{
	char *k;

	xasprintf(&k, "robotsd:v1:l:{%s}", origin);
	return k;
}

char *
tier_purge_key(const char *origin)
{
	char *k;

	xasprintf(&k, "robotsd:v1:p:{%s}", origin);
	return k;
}

static const char *const result_names[] = { "ok", "miss", "busy", "notified",
	"unlocked", "corrupt", "timeout", "down", "error", "shed" };

const char *
tier_result_name(enum tier_result r)
{
	return (unsigned)r < sizeof(result_names) / sizeof(result_names[0])
	           ? result_names[r]
	           : "?";
}

static size_t
wait_bucket(const char *origin, size_t len)
{
	return (size_t)(tier_hash(origin, len) % TIER_WAIT_BUCKETS);
}

static const char *const stage_names[] = { "new", "queued", "unwritten", "sent",
	"deferred", "done" };

const char *
tier_stage_name(enum call_stage s)
{
	return (unsigned)s < CALL_NSTAGES ? stage_names[s] : "?";
}

/*
 * The moves of a call, by stage: a bit per stage it may go to, for any
 * call, and the more a wait may make (its poll is sent again, or its
 * server lost, after a poll was handed or written).
 */
#define TO(s) (1u << (s))
static const unsigned stage_moves[CALL_NSTAGES] = {
	[CALL_NEW] = TO(CALL_QUEUED) | TO(CALL_UNWRITTEN) | TO(CALL_DEFERRED) |
	             TO(CALL_DONE),
	[CALL_QUEUED] = TO(CALL_UNWRITTEN) | TO(CALL_DEFERRED) | TO(CALL_DONE),
	[CALL_UNWRITTEN] = TO(CALL_SENT) | TO(CALL_DONE),
	[CALL_SENT] = TO(CALL_DONE),
	[CALL_DEFERRED] = TO(CALL_DONE),
};
static const unsigned wait_moves[CALL_NSTAGES] = {
	[CALL_UNWRITTEN] =
	    TO(CALL_UNWRITTEN) | TO(CALL_QUEUED) | TO(CALL_DEFERRED),
	[CALL_SENT] = TO(CALL_QUEUED) | TO(CALL_UNWRITTEN) | TO(CALL_DEFERRED),
};
#undef TO

int
tier_stage_legal(int is_wait, enum call_stage from, enum call_stage to)
{
	unsigned moves;

	if ((unsigned)from >= CALL_NSTAGES || (unsigned)to >= CALL_NSTAGES)
		return 0;
	moves = stage_moves[from] | (is_wait ? wait_moves[from] : 0);
	return (moves >> to) & 1;
}

/* The one writer of c->stage: a move the table refuses is logged, not made. */
static int
call_stage_set(struct tier_call *c, enum call_stage to)
{
	if (!tier_stage_legal(c->kind == CALL_WAIT, c->stage, to)) {
		log_event(LOG_ERR, "redis", "bug=stage from=%s to=%s",
		    tier_stage_name(c->stage), tier_stage_name(to));
		return -1;
	}
	c->stage = to;
	return 0;
}

/* Take c out of its server's queue or the unwritten calls, if there. */
static void
call_unlist(struct tier_call *c)
{
	if (c->stage == CALL_QUEUED) {
		TAILQ_REMOVE(&c->srv->queue, c, qlink);
		c->srv->nqueued--;
	} else if (c->stage == CALL_UNWRITTEN)
		TAILQ_REMOVE(&c->srv->cmd.unwritten, c, qlink);
}

/* Take c out of its server's lists, its commands unsent (freed). */
static void
call_unqueue(struct tier_call *c)
{
	int i;

	call_unlist(c);
	for (i = 0; i < c->ncmds; i++)
		free(c->cmd[i]);
	c->ncmds = 0;
}

void
tier_call_free_if_idle(struct tier_call *c)
{
	if (c->stage != CALL_DONE || c->owed > 0 || c->pinned)
		return;
	call_unqueue(c);
	evtimer_del(&c->timer);
	evtimer_del(&c->poll);
	TAILQ_REMOVE(&c->t->calls, c, all);
	free(c->origin);
	free(c);
}

static void
count(struct tier_call *c, enum tier_result r)
{
	struct tier_stats *st = &c->t->stats;

	if (r == TIER_ERROR || r == TIER_DOWN) {
		st->errors++;
		c->srv->st.errors++;
	} else if (r == TIER_TIMEOUT && c->kind != CALL_WAIT) {
		st->timeouts++;
		c->srv->st.timeouts++;
	}
	if (c->kind == CALL_GET) {
		st->hits += r == TIER_OK;
		st->misses += r == TIER_MISS || r == TIER_CORRUPT;
		st->corrupt += r == TIER_CORRUPT;
	}
	if (c->kind == CALL_PUBLISH && r == TIER_OK)
		st->publishes++;
	if (c->kind == CALL_LOCK && r == TIER_OK) {
		st->locks++;
		st->lock_takeovers += (c->flags & TIER_LOCK_TAKEOVER) != 0;
	}
	if (c->kind == CALL_WAIT && r == TIER_NOTIFIED)
		st->notifications++;
}

/* Run the callback, once; why is copied. */
void
tier_call_finish(struct tier_call *c, enum tier_result r, const char *why)
{
	struct tier_value *v;

	if (c->stage == CALL_DONE)
		return;
	call_unqueue(c);
	call_stage_set(c, CALL_DONE);
	evtimer_del(&c->timer);
	evtimer_del(&c->poll);
	if (c->kind == CALL_WAIT)
		TAILQ_REMOVE(
		    &c->t->waits[wait_bucket(c->origin, strlen(c->origin))], c,
		    link);
	c->reply.result = r;
	c->reply.error = NULL;
	if (why != NULL) {
		if (why != c->why)
			snprintf(c->why, sizeof(c->why), "%s", why);
		c->reply.error = c->why;
	}
	if (r == TIER_ERROR || r == TIER_TIMEOUT || r == TIER_CORRUPT)
		tier_server_warn(
		    c->srv, "%s of %s: %s", result_names[r], c->origin, c->why);
	count(c, r);
	if (!c->t->freeing && c->cb != NULL)
		c->cb(&c->reply, c->arg);
	if ((v = c->reply.value) != NULL) {
		tier_value_clear(v);
		free(v);
		c->reply.value = NULL;
	}
	tier_call_free_if_idle(c);
}

/* Deliver r from the loop, not from inside the caller. */
static void
call_defer(struct tier_call *c, enum tier_result r, const char *why)
{
	call_unqueue(c);
	call_stage_set(c, CALL_DEFERRED);
	c->reply.result = r;
	if (why != c->why)
		snprintf(c->why, sizeof(c->why), "%s", why);
	evtimer_del(&c->timer);
	event_active(&c->timer, EV_TIMEOUT, 1);
}

/*
 * A deadline of c is due: read the answers already here first (a loop
 * busy past the deadline is robotsd's delay, not Redis's). 0 when none is
 * owed any more (c may be gone), else the replies c still waits for.
 */
static int
call_drain(struct tier_call *c)
{
	int owed;

	c->pinned = 1;
	tier_conn_drain(&c->srv->cmd);
	c->pinned = 0;
	if ((owed = c->owed) == 0)
		tier_call_free_if_idle(c);
	return owed;
}

/*
 * A call's deadline: the caller's, which ends the call; then, if that was
 * sooner, --redis-timeout's, which drops the connection.
 */
static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct tier_call *c = arg;
	struct tier_conn *conn = &c->srv->cmd;
	long rest = c->t->cf.timeout_ms - c->limit_ms;
	struct timeval tv;

	(void)fd, (void)what;
	if (c->stage == CALL_DEFERRED) {
		tier_call_finish(c, c->reply.result, c->why);
		return;
	}
	if (c->kind == CALL_WAIT) {
		tier_call_finish(
		    c, TIER_TIMEOUT, "no publish nor release in time");
		return;
	}
	if (call_drain(c) == 0) /* answered after all */
		return;
	if (c->stage != CALL_DONE) {
		snprintf(c->why, sizeof(c->why), "no answer within %ld ms",
		    c->limit_ms);
		tier_call_finish(
		    c, TIER_TIMEOUT, c->why); /* owed > 0: c stays */
		if (rest > 0) { /* the caller's haste says nothing of Redis */
			tier_ms_to_tv(rest, &tv);
			evtimer_add(&c->timer, &tv);
			return;
		}
	}
	/* Replies come in order: the ones behind it are late too. */
	tier_conn_drop(conn, TIER_TIMEOUT, "a call timed out");
}

static void on_wait_poll(evutil_socket_t, short, void *);

static struct tier_call *
call_new(struct tier *t, enum call_kind kind, const char *origin, tier_cb cb,
    void *arg)
{
	struct tier_call *c = xcalloc(1, sizeof(*c));

	c->t = t;
	c->kind = kind;
	c->cb = cb;
	c->arg = arg;
	c->origin = xstrdup(origin);
	c->reply.server = tier_ring_lookup(t->ring, origin);
	c->srv = &t->servers[c->reply.server];
	evtimer_assign(&c->timer, t->base, on_timer, c);
	evtimer_assign(&c->poll, t->base, on_wait_poll, c);
	TAILQ_INSERT_TAIL(&t->calls, c, all);
	return c;
}

static void
call_down(struct tier_call *c)
{
	snprintf(c->why, sizeof(c->why), "server %s is down", c->srv->url.name);
	call_defer(c, TIER_DOWN, c->why);
}

/*
 * Set the caller's deadline (0: --redis-timeout; a wait's may be longer),
 * armed when the call is sent (a wait's, which is no Redis call, now);
 * 0, or -1 when the server is down (result deferred).
 */
static int
call_start(struct tier_call *c, long limit_ms)
{
	struct timeval tv;

	if (c->srv->cmd.ac == NULL) {
		call_down(c);
		return -1;
	}
	if (limit_ms <= 0 ||
	    (c->kind != CALL_WAIT && limit_ms > c->t->cf.timeout_ms))
		limit_ms = c->t->cf.timeout_ms;
	c->limit_ms = limit_ms;
	if (c->kind == CALL_WAIT) {
		tier_ms_to_tv(limit_ms, &tv);
		evtimer_add(&c->timer, &tv);
	}
	return 0;
}

/* Format one command of c, to send with call_go; -1: the call ended. */
static int
call_cmd(struct tier_call *c, const char *fmt, ...)
{
	va_list ap;
	char *cmd = NULL;
	int len;

	if (c->stage == CALL_DONE || c->stage == CALL_DEFERRED)
		return -1;
	va_start(ap, fmt);
	len = redisvFormatCommand(&cmd, fmt, ap);
	va_end(ap);
	if (len < 0 || c->ncmds == CALL_MAX_CMDS) {
		free(cmd);
		call_defer(c, TIER_ERROR, "cannot format the command");
		return -1;
	}
	c->cmd[c->ncmds] = cmd;
	c->cmdlen[c->ncmds++] = (size_t)len;
	return 0;
}

/* The deadline of a call just written to the socket. */
static void
call_arm(struct tier_call *c)
{
	struct timeval tv;

	c->reply.queued_ms += (long)((clock_monotonic() - c->queued_at) * 1e3);
	if (c->kind == CALL_WAIT) { /* the poll's deadline */
		tier_ms_to_tv(c->t->cf.timeout_ms, &tv);
		evtimer_add(&c->poll, &tv);
	} else {
		tier_ms_to_tv(c->limit_ms, &tv);
		evtimer_add(&c->timer, &tv);
	}
}

void
tier_calls_written(struct tier_conn *conn)
{
	struct tier_call *c;

	while ((c = TAILQ_FIRST(&conn->unwritten)) != NULL &&
	       c->until <= conn->written) {
		TAILQ_REMOVE(&conn->unwritten, c, qlink);
		call_stage_set(c, CALL_SENT);
		call_arm(c);
	}
}

/*
 * Hand c's commands to hiredis (pipelined); its deadline is armed once
 * they are written to the socket (tier_calls_written).
 */
static void
call_send(struct tier_call *c)
{
	struct tier_conn *conn = &c->srv->cmd;
	int i, n = c->ncmds;

	for (i = 0; i < n; i++) {
		if (redisAsyncFormattedCommand(conn->ac, tier_on_reply, c,
		        c->cmd[i], c->cmdlen[i]) != REDIS_OK) {
			call_defer(c, TIER_ERROR, "cannot send the command");
			return;
		}
		c->owed++;
		conn->sent++;
	}
	call_unqueue(c); /* frees what was sent */
	c->until = conn->written + tier_conn_unsent(conn);
	call_stage_set(c, CALL_UNWRITTEN);
	TAILQ_INSERT_TAIL(&conn->unwritten, c, qlink);
}

/*
 * Send c's commands now if the connection has room and nobody queues
 * before it; else queue them, or shed c when the queue is full.
 */
static void
call_go(struct tier_call *c)
{
	struct tier_server *srv = c->srv;
	struct tier *t = c->t;

	if (c->stage == CALL_DONE || c->stage == CALL_DEFERRED || c->ncmds == 0)
		return;
	c->queued_at = clock_monotonic(); /* until written */
	if (srv->cmd.ac == NULL) {
		call_down(c);
	} else if (TAILQ_EMPTY(&srv->queue) &&
	           srv->cmd.sent < t->cf.max_inflight) {
		call_send(c);
	} else if (srv->nqueued >= t->cf.max_queued) {
		t->stats.shed++;
		snprintf(c->why, sizeof(c->why),
		    "%zu calls already wait for server %s", srv->nqueued,
		    srv->url.name);
		call_defer(c, TIER_SHED, c->why);
	} else {
		call_unlist(
		    c); /* a wait's poll again, its last one unwritten */
		call_stage_set(c, CALL_QUEUED);
		TAILQ_INSERT_TAIL(&srv->queue, c, qlink);
		srv->nqueued++;
	}
}

/* Send queued calls while the connection has room. */
void
tier_queue_pump(struct tier_server *srv)
{
	struct tier_call *c;

	while (srv->cmd.ac != NULL && !srv->t->freeing &&
	       srv->cmd.sent < srv->t->cf.max_inflight &&
	       (c = TAILQ_FIRST(&srv->queue)) != NULL)
		call_send(c); /* takes c out of the queue */
}

/* Send a wait's poll; its deadline is armed once it is sent. */
void
tier_wait_poll(struct tier_call *c)
{
	char *key = tier_lock_key(c->origin);
	int rc;

	rc = call_cmd(c, "PTTL %s", key);
	free(key);
	if (rc == -1)
		return;
	c->polling = 1;
	call_go(c);
}

static void
on_wait_poll(evutil_socket_t fd, short what, void *arg)
{
	struct tier_call *c = arg;
	struct tier_server *srv = c->srv;

	(void)fd, (void)what;
	if (!c->polling) {
		tier_wait_poll(c);
		return;
	}
	if (call_drain(c) == 0) /* the poll's answer was here */
		return;
	c->t->stats.timeouts++;
	srv->st.timeouts++;
	snprintf(c->why, sizeof(c->why), "no answer to a poll within %ld ms",
	    c->t->cf.timeout_ms);
	tier_call_finish(c, TIER_TIMEOUT, c->why);
	tier_conn_drop(&srv->cmd, TIER_TIMEOUT, "a call timed out");
}

void
tier_server_lost(struct tier_server *srv)
{
	struct tier_call *c;

	while ((c = TAILQ_FIRST(&srv->queue)) != NULL) {
		snprintf(c->why, sizeof(c->why),
		    "lost the connection to server %s", srv->url.name);
		evtimer_del(&c->poll);
		call_defer(c, TIER_DOWN, c->why); /* unqueues c */
	}
	TAILQ_FOREACH(c, &srv->t->calls, all) {
		if (c->kind != CALL_WAIT || c->srv != srv ||
		    c->stage == CALL_DONE || c->stage == CALL_DEFERRED)
			continue;
		evtimer_del(&c->poll);
		snprintf(c->why, sizeof(c->why),
		    "lost the connection to server %s", srv->url.name);
		call_defer(c, TIER_DOWN, c->why);
	}
}

/*
 * A notice of origin (anyone may publish one): its waits read the lock
 * again, at once, and end only when Redis says it is gone (got_poll).
 * One poll at a time per wait: a flood of notices costs a wait one more.
 */
void
tier_notified(struct tier_server *srv, const char *origin, size_t len)
{
	struct tier *t = srv->t;
	struct tier_calls *b = &t->waits[wait_bucket(origin, len)];
	struct tier_call *c;
	uint64_t seq = ++t->seq;

	TAILQ_FOREACH(c, b, link) {
		if (c->seq >= seq || c->srv != srv ||
		    strlen(c->origin) != len ||
		    memcmp(c->origin, origin, len) != 0 ||
		    c->stage == CALL_DEFERRED)
			continue;
		c->noticed = 1;
		if (c->polling) {
			c->repoll = 1;
			continue;
		}
		evtimer_del(&c->poll);
		tier_wait_poll(c);
	}
}

/* --- operations ---------------------------------------------------------- */

/* A held lock is due for renewal: send it, and arm the next. */
static void
on_hold(evutil_socket_t fd, short what, void *arg)
{
	struct tier_hold *h = arg;
	struct tier *t = h->t;
	struct tier_call *c = call_new(t, CALL_RENEW, h->origin, NULL, NULL);
	struct timeval tv;
	char *key;

	(void)fd, (void)what;
	if (call_start(c, 0) == 0) {
		key = tier_lock_key(h->origin);
		call_cmd(c, "EVAL %s 1 %s %s %ld", RENEW_LUA, key, h->token,
		    t->cf.hold_ms);
		free(key);
		call_go(c);
	}
	tier_ms_to_tv(t->cf.hold_ms / 2, &tv);
	evtimer_add(&h->timer, &tv);
}

void
tier_hold(struct tier *t, const char *origin, const char *token)
{
	struct tier_hold *h = xcalloc(1, sizeof(*h));
	struct timeval tv;

	h->t = t;
	h->origin = xstrdup(origin);
	snprintf(h->token, sizeof(h->token), "%s", token);
	evtimer_assign(&h->timer, t->base, on_hold, h);
	tier_ms_to_tv(t->cf.hold_ms / 2, &tv);
	evtimer_add(&h->timer, &tv);
	TAILQ_INSERT_TAIL(&t->holds, h, link);
}

static void
hold_free(struct tier_hold *h)
{
	TAILQ_REMOVE(&h->t->holds, h, link);
	evtimer_del(&h->timer);
	free(h->origin);
	free(h);
}

/* The holder lets the lock of token go: no more renewals. */
static void
hold_drop(struct tier *t, const char *token)
{
	struct tier_hold *h;

	TAILQ_FOREACH(h, &t->holds, link)
		if (strcmp(h->token, token) == 0) {
			hold_free(h);
			return;
		}
}

/* The origin's value, then its purge record (one pipeline). */
void
tier_get(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_GET, origin, cb, arg);
	char *key, *rec;

	if (call_start(c, timeout_ms) == -1)
		return;
	key = tier_entry_key(origin);
	rec = tier_purge_key(origin);
	if (call_cmd(c, "GET %s", key) == 0)
		call_cmd(c, "GET %s", rec);
	free(key);
	free(rec);
	call_go(c);
}

/* buf[0..*len) with its trailer, when the tier has a key (tier_tag.h). */
static char *
tier_tagged(const struct tier *t, char *buf, size_t *len)
{
	if (!t->keyed)
		return buf;
	buf = xreallocarray(buf, 1, *len + TIER_TAG_LEN);
	tier_tag_make(t->key, buf, *len, (unsigned char *)buf + *len);
	*len += TIER_TAG_LEN;
	return buf;
}

void
tier_publish(struct tier *t, const struct tier_value *v, long long px_ms,
    const char *token, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_PUBLISH, v->origin, cb, arg);
	char *key, *lock, *buf;
	size_t len;

	if (token != NULL) /* released by this pipeline, or left to expire */
		hold_drop(t, token);

	if ((buf = tier_value_encode(v, &len)) == NULL) {
		call_defer(c, TIER_ERROR, "value cannot be encoded");
		return;
	}
	buf = tier_tagged(t, buf, &len);
	if (call_start(c, 0) == 0) {
		key = tier_entry_key(v->origin);
		lock = tier_lock_key(v->origin);
		if (call_cmd(c, "SET %s %b PX %lld", key, buf, len,
		        px_ms < 1 ? 1LL : px_ms) == 0 &&
		    (token == NULL || call_cmd(c, "EVAL %s 1 %s %s", UNLOCK_LUA,
		                          lock, token) == 0))
			call_cmd(c, "PUBLISH %s %s", TIER_CHANNEL, v->origin);
		free(key);
		free(lock);
		call_go(c);
	}
	free(buf);
}

/* A change feed message, on origin's server; nobody waits for the end. */
void
tier_feed_publish(
    struct tier *t, const char *origin, const char *msg, size_t len)
{
	struct tier_call *c = call_new(t, CALL_FEED, origin, NULL, NULL);

	if (call_start(c, 0) == 0 &&
	    call_cmd(c, "PUBLISH %s %b", TIER_FEED_CHANNEL, msg, len) == 0)
		call_go(c);
}

/* A random lock token: TIER_TOKEN_LEN hex digits. */
static void
make_token(char *out)
{
	unsigned char raw[TIER_TOKEN_LEN / 2];
	size_t i;
	int fd;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1 ||
		    read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw))
			abort(); /* no randomness: a lock could not be told
			            apart */
		close(fd);
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

void
tier_lock(struct tier *t, const char *origin, int flags, long timeout_ms,
    tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_LOCK, origin, cb, arg);
	char *key;

	c->flags = flags;
	make_token(c->token);
	if (call_start(c, timeout_ms) == -1)
		return;
	key = tier_lock_key(origin);
	if (flags & TIER_LOCK_TAKEOVER)
		call_cmd(c, "EVAL %s 1 %s %s %ld %ld", TAKEOVER_LUA, key,
		    c->token, t->cf.hold_ms, t->cf.lock_ms);
	else
		call_cmd(
		    c, "SET %s %s NX PX %ld", key, c->token, t->cf.hold_ms);
	free(key);
	call_go(c);
}

void
tier_unlock(struct tier *t, const char *origin, const char *token, tier_cb cb,
    void *arg)
{
	struct tier_call *c = call_new(t, CALL_UNLOCK, origin, cb, arg);
	char *key;

	hold_drop(t, token);

	if (call_start(c, 0) == -1)
		return;
	key = tier_lock_key(origin);
	call_cmd(c, "EVAL %s 1 %s %s", UNLOCK_LUA, key, token);
	free(key);
	call_go(c);
}

void
tier_wait(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_WAIT, origin, cb, arg);

	t->stats.lock_waits++;
	c->seq = t->seq;
	TAILQ_INSERT_TAIL(/* until it is done, as every wait (tier_int.h) */
	    &t->waits[wait_bucket(origin, strlen(origin))], c, link);
	if (call_start(c, timeout_ms) == -1)
		return;
	tier_wait_poll(c); /* at once: the publish may have come before */
}

/* The purge record first: a value written after the DEL is refused. */
void
tier_purge(struct tier *t, const char *origin, int64_t purged_at,
    long long px_ms, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_PURGE, origin, cb, arg);
	char *key, *rec, *buf;
	size_t len;

	if ((buf = tier_purge_encode(origin, purged_at, &len)) == NULL) {
		call_defer(c, TIER_ERROR, "purge record cannot be encoded");
		return;
	}
	buf = tier_tagged(t, buf, &len);
	if (call_start(c, 0) == 0) {
		key = tier_entry_key(origin);
		rec = tier_purge_key(origin);
		if (call_cmd(c, "SET %s %b PX %lld", rec, buf, len,
		        px_ms < 1 ? 1LL : px_ms) == 0)
			call_cmd(c, "DEL %s", key);
		free(key);
		free(rec);
		call_go(c);
	}
	free(buf);
}

void
tier_free(struct tier *t)
{
	struct tier_call *c;
	size_t i;

	if (t == NULL)
		return;
	t->freeing = 1;
	while (!TAILQ_EMPTY(&t->holds)) /* left to expire */
		hold_free(TAILQ_FIRST(&t->holds));
	for (i = 0; i < t->nservers && t->ring != NULL; i++) {
		tier_conn_stop(&t->servers[i].cmd);
		tier_conn_stop(&t->servers[i].sub);
	}
	while ((c = TAILQ_FIRST(&t->calls)) != NULL) {
		c->owed = 0; /* no callback; hiredis owes nothing any more */
		c->pinned = 0;
		if (c->stage != CALL_DONE) {
			if (c->kind == CALL_WAIT)
				TAILQ_REMOVE(&t->waits[wait_bucket(
				                 c->origin, strlen(c->origin))],
				    c, link);
			call_unqueue(c);
			call_stage_set(c, CALL_DONE);
		}
		tier_call_free_if_idle(c);
	}
	if (t->lookups == 0) /* else the last cancelled lookup ends it */
		t->hooks.destroy(t); /* tier_setup.c's, set by tier_new */
}
