/*
 * tier.c: the shared tier's calls (get, publish, lock, unlock, wait,
 * purge) on the connections of tier_conn.c. A call lives until both its
 * callback has run and hiredis owes it no reply; its timer is its deadline
 * (the caller's, then --redis-timeout's for the connection), or delivers a
 * result decided before any I/O (a server that is down).
 */
#include <config.h>

#include <sys/random.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "tier/tier_int.h"
#include "tier/tier_ring.h"
#include "tier/tier_value.h"
#include "base/xmalloc.h"

/* Release the lock only when it still holds our token. */
#define UNLOCK_LUA                                                             \
	"if redis.call('get', KEYS[1]) == ARGV[1] then "                       \
	"return redis.call('del', KEYS[1]) else return 0 end"

/*
 * A takeover: the lock if free, or if what holds it would outlive any lock
 * a robotsd sets (no expiry, or one longer than ARGV[2] ms): written by
 * hand or by something else, nobody would ever release it.
 */
#define TAKEOVER_LUA                                                           \
	"local r = redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2]) "  \
	"if r then return r end "                                              \
	"local ttl = redis.call('pttl', KEYS[1]) "                             \
	"if ttl == -1 or ttl > tonumber(ARGV[2]) then "                        \
	"return redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2]) end "       \
	"return false"

enum call_kind {
	CALL_GET,
	CALL_PUBLISH,
	CALL_LOCK,
	CALL_UNLOCK,
	CALL_WAIT,
	CALL_PURGE,
	CALL_FEED
};

struct tier_call {
	struct tier *t;
	struct tier_server *srv;
	enum call_kind kind;
	tier_cb cb;
	void *arg;
	char *origin;
	struct event timer; /* deadline, or the moment to deliver reply */
	long limit_ms;      /* the caller's deadline, after the call began */
	struct event poll;  /* wait: next poll, or a poll's deadline */
	int deferred;       /* the timer delivers reply */
	int done;           /* the callback ran */
	int owed;           /* replies hiredis still owes */
	int nreplies;       /* replies seen */
	int polling;        /* wait: a poll is out */
	int waiting;        /* wait: in t->waits */
	int flags;          /* lock: TIER_LOCK_* */
	struct tier_reply reply;
	char token[TIER_TOKEN_LEN + 1];
	char why[200];
	uint64_t seq;                /* wait: t->seq when it began */
	TAILQ_ENTRY(tier_call) link; /* in t->waits */
	TAILQ_ENTRY(tier_call) all;  /* in t->calls */
};

static const char *const result_names[] = { "ok", "miss", "busy", "notified",
	"unlocked", "corrupt", "timeout", "down", "error" };

const char *
tier_result_name(enum tier_result r)
{
	return (unsigned)r < sizeof(result_names) / sizeof(result_names[0])
	           ? result_names[r]
	           : "?";
}

const char *
tier_state_name(enum tier_state s)
{
	return s == TIER_SERVER_UP           ? "up"
	       : s == TIER_SERVER_CONNECTING ? "connecting"
	                                     : "down";
}

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

static void
ms_to_tv(long ms, struct timeval *tv)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

static size_t
wait_bucket(const char *origin, size_t len)
{
	return (size_t)(tier_hash(origin, len) % TIER_WAIT_BUCKETS);
}

static void
call_free_if_idle(struct tier_call *c)
{
	if (!c->done || c->owed > 0)
		return;
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
static void
call_finish(struct tier_call *c, enum tier_result r, const char *why)
{
	struct tier_value *v;

	if (c->done)
		return;
	c->done = 1;
	evtimer_del(&c->timer);
	evtimer_del(&c->poll);
	if (c->waiting) {
		TAILQ_REMOVE(
		    &c->t->waits[wait_bucket(c->origin, strlen(c->origin))], c,
		    link);
		c->waiting = 0;
	}
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
	call_free_if_idle(c);
}

/* Deliver r from the loop, not from inside the caller. */
static void
call_defer(struct tier_call *c, enum tier_result r, const char *why)
{
	c->deferred = 1;
	c->reply.result = r;
	if (why != c->why)
		snprintf(c->why, sizeof(c->why), "%s", why);
	evtimer_del(&c->timer);
	event_active(&c->timer, EV_TIMEOUT, 1);
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
	if (c->deferred) {
		call_finish(c, c->reply.result, c->why);
		return;
	}
	if (c->kind == CALL_WAIT) {
		call_finish(c, TIER_TIMEOUT, "no publish nor release in time");
		return;
	}
	if (!c->done) {
		snprintf(c->why, sizeof(c->why), "no answer within %ld ms",
		    c->limit_ms);
		call_finish(c, TIER_TIMEOUT, c->why); /* owed > 0: c stays */
		if (rest > 0) { /* the caller's haste says nothing of Redis */
			ms_to_tv(rest, &tv);
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
 * Arm the caller's deadline (0: --redis-timeout; a wait's may be longer);
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
	ms_to_tv(limit_ms, &tv);
	evtimer_add(&c->timer, &tv);
	return 0;
}

static void on_reply_cb(redisAsyncContext *, void *, void *);

/* Queue one command of c; on failure the call ends (deferred). */
static int
call_cmd(struct tier_call *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (c->srv->cmd.ac == NULL) {
		call_down(c);
		return -1;
	}
	va_start(ap, fmt);
	rc = redisvAsyncCommand(c->srv->cmd.ac, on_reply_cb, c, fmt, ap);
	va_end(ap);
	if (rc != REDIS_OK) {
		call_defer(c, TIER_ERROR, "cannot send the command");
		return -1;
	}
	c->owed++;
	return 0;
}

static void
got_get(struct tier_call *c, const redisReply *r)
{
	struct tier_value *v;
	enum tier_value_err e;
	long n;

	if (r->type == REDIS_REPLY_NIL) {
		call_finish(c, TIER_MISS, NULL);
		return;
	}
	if (r->type != REDIS_REPLY_STRING) {
		call_finish(c, TIER_ERROR, "unexpected reply to GET");
		return;
	}
	if ((n = tier_tag_open(
	         c->t->keyed ? c->t->key : NULL, r->str, r->len)) == -1) {
		c->t->stats.untagged++;
		call_finish(c, TIER_CORRUPT, "no valid tag (--redis-key-file)");
		return;
	}
	v = xcalloc(1, sizeof(*v));
	if ((e = tier_value_decode(r->str, (size_t)n, c->origin, v)) != TV_OK) {
		free(v);
		call_finish(c, TIER_CORRUPT, tier_value_strerror(e));
		return;
	}
	c->reply.value = v;
	call_finish(c, TIER_OK, NULL);
}

/* Replies to SET, the optional unlock, then PUBLISH. */
static void
got_publish(struct tier_call *c, const redisReply *r)
{
	if (c->nreplies == 1 &&
	    (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)) {
		call_finish(c, TIER_ERROR, "unexpected reply to SET");
		return;
	}
	if (c->owed == 0)
		call_finish(c, TIER_OK, NULL);
}

static void
got_lock(struct tier_call *c, const redisReply *r)
{
	if (r->type == REDIS_REPLY_NIL) {
		call_finish(c, TIER_BUSY, NULL);
	} else if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
		c->reply.token = c->token;
		call_finish(c, TIER_OK, NULL);
	} else
		call_finish(c, TIER_ERROR, "unexpected reply to SET NX");
}

/* UNLOCK and PURGE: an integer, how many keys went. */
static void
got_count(struct tier_call *c, const redisReply *r)
{
	if (r->type != REDIS_REPLY_INTEGER)
		call_finish(c, TIER_ERROR, "unexpected reply");
	else
		call_finish(c, r->integer > 0 ? TIER_OK : TIER_MISS, NULL);
}

/* A wait's poll: does the lock still exist? */
static void
got_poll(struct tier_call *c, const redisReply *r)
{
	struct timeval tv;

	c->polling = 0;
	evtimer_del(&c->poll);
	if (r->type != REDIS_REPLY_INTEGER) {
		call_finish(c, TIER_ERROR, "unexpected reply to EXISTS");
	} else if (r->integer == 0) {
		call_finish(c, TIER_UNLOCKED, NULL);
	} else {
		ms_to_tv(c->t->cf.poll_ms, &tv);
		evtimer_add(&c->poll, &tv);
	}
}

static void
on_reply_cb(redisAsyncContext *ac, void *reply, void *priv)
{
	static void (*const got[])(struct tier_call *, const redisReply *) = {
		[CALL_GET] = got_get,
		[CALL_PUBLISH] = got_publish,
		[CALL_LOCK] = got_lock,
		[CALL_UNLOCK] = got_count,
		[CALL_WAIT] = got_poll,
		[CALL_PURGE] = got_count,
		[CALL_FEED] = got_count,
	};
	struct tier_call *c = priv;
	struct tier_conn *conn = &c->srv->cmd;
	redisReply *r = reply;

	c->owed--;
	c->nreplies++;
	/*
	 * An answer: the connection works. Not before: a peer that passes the
	 * handshake and garbles every call keeps its backoff growing.
	 */
	if (r != NULL && conn->ac == ac)
		conn->backoff_ms = c->t->cf.reconnect_min_ms;
	if (c->done) {
		if (c->kind == CALL_LOCK && r != NULL && !c->t->freeing &&
		    r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0)
			/* granted after its caller gave up: nobody fetches */
			tier_unlock(c->t, c->origin, c->token, NULL, NULL);
		call_free_if_idle(c);
	} else if (r == NULL && conn->drop_why != NULL) {
		call_finish(c, conn->drop_result, conn->drop_why);
	} else if (r == NULL) {
		call_finish(c, TIER_ERROR,
		    ac->errstr[0] != '\0' ? ac->errstr : "connection lost");
	} else if (r->type == REDIS_REPLY_ERROR) {
		snprintf(c->why, sizeof(c->why), "Redis: %.150s", r->str);
		call_finish(c, TIER_ERROR, c->why);
	} else
		got[c->kind](c, r);
}

/* Send a wait's poll and arm its deadline. */
static void
wait_poll(struct tier_call *c)
{
	char *key = tier_lock_key(c->origin);
	struct timeval tv;
	int rc;

	rc = call_cmd(c, "EXISTS %s", key);
	free(key);
	if (rc == -1)
		return;
	c->polling = 1;
	ms_to_tv(c->t->cf.timeout_ms, &tv);
	evtimer_add(&c->poll, &tv);
}

static void
on_wait_poll(evutil_socket_t fd, short what, void *arg)
{
	struct tier_call *c = arg;
	struct tier_server *srv = c->srv;

	(void)fd, (void)what;
	if (!c->polling) {
		wait_poll(c);
		return;
	}
	c->t->stats.timeouts++;
	srv->st.timeouts++;
	snprintf(c->why, sizeof(c->why), "no answer to a poll within %ld ms",
	    c->t->cf.timeout_ms);
	call_finish(c, TIER_TIMEOUT, c->why);
	tier_conn_drop(&srv->cmd, TIER_TIMEOUT, "a call timed out");
}

void
tier_server_lost(struct tier_server *srv)
{
	struct tier_call *c;

	TAILQ_FOREACH(c, &srv->t->calls, all)
	{
		if (c->kind != CALL_WAIT || c->srv != srv || c->done ||
		    c->deferred)
			continue;
		evtimer_del(&c->poll);
		snprintf(c->why, sizeof(c->why),
		    "lost the connection to server %s", srv->url.name);
		call_defer(c, TIER_DOWN, c->why);
	}
}

void
tier_notified(struct tier_server *srv, const char *origin, size_t len)
{
	struct tier *t = srv->t;
	struct tier_calls *b = &t->waits[wait_bucket(origin, len)];
	struct tier_call *c, *next;
	uint64_t seq = ++t->seq;

	for (c = TAILQ_FIRST(b); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		if (c->seq < seq && c->srv == srv && strlen(c->origin) == len &&
		    memcmp(c->origin, origin, len) == 0)
			call_finish(c, TIER_NOTIFIED, NULL);
	}
}

/* --- operations ---------------------------------------------------------- */

/* A call of one command on origin's entry key: GET or DEL. */
static void
entry_call(struct tier *t, enum call_kind kind, const char *origin,
    long timeout_ms, const char *cmd, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, kind, origin, cb, arg);
	char *key;

	if (call_start(c, timeout_ms) == -1)
		return;
	key = tier_entry_key(origin);
	call_cmd(c, cmd, key);
	free(key);
}

long
tier_budget_left(const struct tier *t, double started, double now)
{
	double left = t->cf.timeout_ms - (now - started) * 1000;

	if (left <= 0)
		return 0;
	return left < t->cf.timeout_ms ? (long)left + (left > (long)left)
	                               : t->cf.timeout_ms;
}

void
tier_get(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	entry_call(t, CALL_GET, origin, timeout_ms, "GET %s", cb, arg);
}

void
tier_publish(struct tier *t, const struct tier_value *v, long long px_ms,
    const char *token, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_PUBLISH, v->origin, cb, arg);
	char *key, *lock, *buf;
	size_t len;

	if ((buf = tier_value_encode(v, &len)) == NULL) {
		call_defer(c, TIER_ERROR, "value cannot be encoded");
		return;
	}
	if (t->keyed) { /* the trailer: tier_tag.h */
		buf = xreallocarray(buf, 1, len + TIER_TAG_LEN);
		tier_tag_make(t->key, buf, len, (unsigned char *)buf + len);
		len += TIER_TAG_LEN;
	}
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
	}
	free(buf);
}

/* A change feed message, on origin's server; nobody waits for the end. */
void
tier_feed_publish(
    struct tier *t, const char *origin, const char *msg, size_t len)
{
	struct tier_call *c = call_new(t, CALL_FEED, origin, NULL, NULL);

	if (call_start(c, 0) == 0)
		call_cmd(c, "PUBLISH %s %b", TIER_FEED_CHANNEL, msg, len);
}

void
tier_set_feed(struct tier *t, tier_feed_cb cb, void *arg)
{
	t->feed_cb = cb;
	t->feed_arg = arg;
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
		call_cmd(c, "EVAL %s 1 %s %s %ld", TAKEOVER_LUA, key, c->token,
		    t->cf.lock_ms);
	else
		call_cmd(
		    c, "SET %s %s NX PX %ld", key, c->token, t->cf.lock_ms);
	free(key);
}

void
tier_unlock(struct tier *t, const char *origin, const char *token, tier_cb cb,
    void *arg)
{
	struct tier_call *c = call_new(t, CALL_UNLOCK, origin, cb, arg);
	char *key;

	if (call_start(c, 0) == -1)
		return;
	key = tier_lock_key(origin);
	call_cmd(c, "EVAL %s 1 %s %s", UNLOCK_LUA, key, token);
	free(key);
}

void
tier_wait(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	struct tier_call *c = call_new(t, CALL_WAIT, origin, cb, arg);

	t->stats.lock_waits++;
	if (call_start(c, timeout_ms) == -1)
		return;
	c->seq = t->seq;
	TAILQ_INSERT_TAIL(
	    &t->waits[wait_bucket(origin, strlen(origin))], c, link);
	c->waiting = 1;
	wait_poll(c); /* at once: the publish may have come before the wait */
}

void
tier_purge(struct tier *t, const char *origin, tier_cb cb, void *arg)
{
	entry_call(t, CALL_PURGE, origin, 0, "DEL %s", cb, arg);
}

/* --- the tier --------------------------------------------------------------
 */

static void
config_defaults(struct tier_config *cf)
{
	if (cf->timeout_ms <= 0)
		cf->timeout_ms = 250;
	if (cf->lock_ms <= 0)
		cf->lock_ms = 40000;
	if (cf->poll_ms <= 0)
		cf->poll_ms = 1000;
	if (cf->reconnect_min_ms <= 0)
		cf->reconnect_min_ms = 100;
	if (cf->reconnect_max_ms < cf->reconnect_min_ms)
		cf->reconnect_max_ms =
		    cf->reconnect_min_ms > 5000 ? cf->reconnect_min_ms : 5000;
}

/* Parse every URL into t->servers; -1 with *cause on the first bad one. */
static int
servers_parse(struct tier *t, char **cause)
{
	const char *err;
	size_t i, j;

	t->servers = xcalloc(t->cf.nurls, sizeof(*t->servers));
	for (i = 0; i < t->cf.nurls; i++, t->nservers++) {
		if (tier_url_parse(t->cf.urls[i], &t->servers[i].url, &err) ==
		    -1) {
			char *m = tier_url_masked(t->cf.urls[i]);

			xasprintf(cause, "--redis %s: %s",
			    m != NULL ? m : "(URL)", err);
			free(m);
			return -1;
		}
		if (t->servers[i].url.password == NULL &&
		    t->cf.password != NULL)
			t->servers[i].url.password = xstrdup(t->cf.password);
		for (j = 0; j < i; j++)
			if (strcmp(t->servers[j].url.name,
			        t->servers[i].url.name) == 0) {
				xasprintf(cause, "--redis %s: given twice",
				    t->servers[i].url.name);
				t->nservers++;
				return -1;
			}
	}
	return 0;
}

struct tier *
tier_new(struct event_base *base, const struct tier_config *cf, char **cause)
{
	struct tier *t = xcalloc(1, sizeof(*t));
	const char **names;
	size_t i;

	t->base = base;
	t->cf = *cf;
	if (cf->key != NULL) {
		memcpy(t->key, cf->key, TIER_KEY_LEN);
		t->keyed = 1;
	}
	t->cf.key = NULL; /* the caller's copy may go */
	config_defaults(&t->cf);
	TAILQ_INIT(&t->calls);
	for (i = 0; i < TIER_WAIT_BUCKETS; i++)
		TAILQ_INIT(&t->waits[i]);
	if (cf->nurls == 0 || servers_parse(t, cause) == -1) {
		if (cf->nurls == 0)
			xasprintf(cause, "no Redis server given");
		t->freeing = 1;
		tier_free(t);
		return NULL;
	}
	t->cf.password = NULL; /* copied into each URL that needed it */
	/* Host names are resolved without blocking the loop. */
	t->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
	                                  EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	names = xcalloc(t->nservers, sizeof(*names));
	for (i = 0; i < t->nservers; i++)
		names[i] = t->servers[i].url.name;
	if ((t->ring = tier_ring_new(names, t->nservers)) == NULL)
		abort(); /* out of memory, as xmalloc would */
	free(names);
	for (i = 0; i < t->nservers; i++) {
		struct tier_server *srv = &t->servers[i];

		srv->t = t;
		srv->idx = i;
		srv->st.name = srv->url.name;
		tier_conn_init(srv, &srv->cmd, 0);
		tier_conn_init(srv, &srv->sub, 1);
		tier_conn_start(&srv->cmd);
		tier_conn_start(&srv->sub);
	}
	return t;
}

void
tier_free(struct tier *t)
{
	struct tier_call *c;
	size_t i;

	if (t == NULL)
		return;
	t->freeing = 1;
	for (i = 0; i < t->nservers && t->ring != NULL; i++) {
		tier_conn_stop(&t->servers[i].cmd);
		tier_conn_stop(&t->servers[i].sub);
	}
	while ((c = TAILQ_FIRST(&t->calls)) != NULL) {
		c->done = 1; /* no callback; hiredis owes nothing any more */
		c->owed = 0;
		if (c->waiting)
			TAILQ_REMOVE(&t->waits[wait_bucket(
			                 c->origin, strlen(c->origin))],
			    c, link);
		call_free_if_idle(c);
	}
	if (t->lookups == 0) /* else the last cancelled lookup ends it */
		tier_destroy(t);
}

void
tier_destroy(struct tier *t)
{
	size_t i;

	if (t->dns != NULL)
		evdns_base_free(t->dns, 0);
	for (i = 0; i < t->nservers; i++)
		tier_url_clear(&t->servers[i].url);
	free(t->servers);
	tier_ring_free(t->ring);
	free(t);
}

size_t
tier_server_of(const struct tier *t, const char *origin)
{
	return tier_ring_lookup(t->ring, origin);
}

size_t
tier_nservers(const struct tier *t)
{
	return t->nservers;
}

void
tier_server_stats(const struct tier *t, size_t i, struct tier_server_stats *out)
{
	*out = t->servers[i].st;
}

const struct tier_stats *
tier_stats(const struct tier *t)
{
	return &t->stats;
}
