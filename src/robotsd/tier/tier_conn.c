/*
 * tier_conn.c: the tier's connections to one Redis server: resolve the
 * host name without blocking (evdns), connect, handshake (AUTH, SELECT, then
 * PING or SUBSCRIBE) under a deadline, and after any failure a reconnection
 * with doubling backoff. The subscriber connection hands every notice up
 * through the tier's hooks (tier_conn_hooks), its only way to the calls.
 */
#include <config.h>

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <hiredis/hiredis.h>
#include <hiredis/sds.h>

#include "base/log.h"
#include "tier/tier_int.h"
#include "tier/tier_tls.h"

#define LOG_EVERY 10 /* seconds between two warnings of one server */
/*
 * The largest reply accepted, buffered or built: a value is at most a
 * 500 KiB body and its metadata (tier_value.h); the read buffer may hold
 * one more read (16 KiB) before it is looked at. No reply robotsd asks for
 * has more than 3 elements or nests an array.
 */
#define TIER_REPLY_MAX_BYTES (2u << 20)
#define TIER_REPLY_MAX_ITEMS 64

/* --- replies: every object hiredis builds is checked here first --------- */

static const redisReplyObjectFunctions *reply_default;

/* hiredis 1.x counts an array's elements in a size_t, 0.14 in an int. */
#if HIREDIS_MAJOR >= 1
typedef size_t reply_count;
#else
typedef int reply_count;
#endif

/*
 * The reply types of RESP2, the only protocol robotsd speaks (it never
 * sends HELLO 3): hiredis 1.x also reads RESP3's doubles, booleans, maps,
 * sets, attributes, pushes, big numbers and verbatim strings, which a
 * server has no reason to send robotsd.
 */
static int
reply_type_known(int type)
{
	return type == REDIS_REPLY_STRING || type == REDIS_REPLY_ARRAY ||
	       type == REDIS_REPLY_INTEGER || type == REDIS_REPLY_NIL ||
	       type == REDIS_REPLY_STATUS || type == REDIS_REPLY_ERROR;
}

/*
 * A reply broke the protocol: refuse the object. hiredis's reader then
 * fails (its error says "Out of memory"), the connection is closed, every
 * call on it ends with why, and on_disconnect() counts and logs it.
 */
static int
reply_refuse(struct tier_conn *c, const char *why)
{
	if (c->proto_why == NULL) {
		c->proto_why = why;
		c->drop_result = TIER_ERROR;
		c->drop_why = why;
	}
	return -1;
}

/*
 * May the reader build an object of this type (an array of n elements, a
 * string of n bytes) at task's place? hiredis 0.14 asserts (aborts) on a
 * reply no command waits for outside pub/sub, and on a pub/sub message
 * that is not an array of strings; it allocates whatever length a reply
 * announces. So: on the command connection, nothing without a command
 * waiting; on the subscriber, messages of 3 elements whose first two are
 * strings, never an unsubscribe; nowhere nesting or more than the bounds.
 */
static int
reply_admit(const redisReadTask *task, int type, size_t n, const char *str)
{
	struct tier_conn *c = task->privdata;
	int unasked = c->ac == NULL || c->ac->replies.head == NULL;

	if (c->proto_why != NULL)
		return -1;
	if (!reply_type_known(type))
		return reply_refuse(c, "a RESP3 reply robotsd never asked for");
	if (task->parent == NULL) { /* a new reply */
		c->reply_items = c->reply_bytes = 0;
		if (unasked && !c->is_sub)
			return reply_refuse(c, "a reply to no command");
		if (unasked && (type != REDIS_REPLY_ARRAY || n != 3))
			return reply_refuse(c, "a notice of the wrong shape");
	} else if (task->parent->parent != NULL || type == REDIS_REPLY_ARRAY)
		return reply_refuse(c, "a nested array");
	else if (unasked && task->idx < 2) {
		if (type != REDIS_REPLY_STRING)
			return reply_refuse(c, "a notice of the wrong shape");
		if (task->idx == 0 && (strcasecmp(str, "unsubscribe") == 0 ||
		                          strcasecmp(str, "punsubscribe") == 0))
			return reply_refuse(
			    c, "an unsubscribe robotsd never sent");
	}
	if (type == REDIS_REPLY_ARRAY)
		c->reply_items += n;
	else
		c->reply_bytes += n;
	if (++c->reply_items > TIER_REPLY_MAX_ITEMS ||
	    c->reply_bytes > TIER_REPLY_MAX_BYTES)
		return reply_refuse(c, "a reply larger than robotsd accepts");
	return 0;
}

static void *
reply_string(const redisReadTask *task, char *str, size_t len)
{
	char first[16];

	/* the first element of a notice, NUL-terminated for the check */
	snprintf(first, sizeof(first), "%.*s",
	    (int)(len < sizeof(first) - 1 ? len : sizeof(first) - 1), str);
	if (reply_admit(task, task->type, len, first) == -1)
		return NULL;
	return reply_default->createString(task, str, len);
}

static void *
reply_array(const redisReadTask *task, reply_count elements)
{
	if (reply_admit(task, task->type, (size_t)elements, NULL) == -1)
		return NULL;
	return reply_default->createArray(task, elements);
}

static void *
reply_integer(const redisReadTask *task, long long value)
{
	if (reply_admit(task, REDIS_REPLY_INTEGER, 0, NULL) == -1)
		return NULL;
	return reply_default->createInteger(task, value);
}

static void *
reply_nil(const redisReadTask *task)
{
	if (reply_admit(task, REDIS_REPLY_NIL, 0, NULL) == -1)
		return NULL;
	return reply_default->createNil(task);
}

#if HIREDIS_MAJOR >= 1
/* RESP3 only: refused by reply_admit(), whatever the value. */
static void *
reply_double(const redisReadTask *task, double d, char *str, size_t len)
{
	(void)d, (void)str, (void)len;
	reply_admit(task, task->type, 0, NULL);
	return NULL;
}

static void *
reply_bool(const redisReadTask *task, int b)
{
	(void)b;
	reply_admit(task, task->type, 0, NULL);
	return NULL;
}
#endif

static void
reply_free(void *reply)
{
	reply_default->freeObject(reply);
}

static redisReplyObjectFunctions reply_checked = {
	.createString = reply_string,
	.createArray = reply_array,
	.createInteger = reply_integer,
	.createNil = reply_nil,
#if HIREDIS_MAJOR >= 1
	.createDouble = reply_double,
	.createBool = reply_bool,
#endif
	.freeObject = reply_free,
};

/* --- events: hiredis's libevent adapter, with the events in the conn ---- */

static void
tier_conn_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct tier_conn *c = arg;
	const redisReader *r;

	(void)fd, (void)what;
	if (c->ac == NULL)
		return;
	/* A reply announcing more than it may be is never waited for. */
	r = c->ac->c.reader;
	if (r->len - r->pos > TIER_REPLY_MAX_BYTES) {
		reply_refuse(c, "a reply larger than robotsd accepts");
		tier_conn_drop(c, TIER_ERROR, c->proto_why);
		return;
	}
	redisAsyncHandleRead(c->ac);
}

/* At most this many reads when a deadline is due (16 KiB each). */
#define DRAIN_READS 64

void
tier_conn_drain(struct tier_conn *c)
{
	int n = 0, i;

	for (i = 0; i < DRAIN_READS && c->ac != NULL; i++) {
		if (ioctl(c->ac->c.fd, FIONREAD, &n) == -1 || n <= 0)
			break;
		tier_conn_on_read(c->ac->c.fd, EV_READ, c);
	}
}

size_t
tier_conn_unsent(const struct tier_conn *c)
{
	return c->ac != NULL ? sdslen(c->ac->c.obuf) : 0;
}

/* Write; the calls whose bytes are out now start their deadlines. */
static void
tier_conn_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct tier_conn *c = arg;
	size_t before;

	(void)fd, (void)what;
	if (c->ac == NULL)
		return;
	before = tier_conn_unsent(c);
	redisAsyncHandleWrite(c->ac);
	if (c->ac == NULL) /* lost: its calls have ended */
		return;
	c->written += before - tier_conn_unsent(c);
	c->srv->t->hooks.written(c);
}

static void
tier_conn_add_read(void *arg)
{
	event_add(&((struct tier_conn *)arg)->rev, NULL);
}

static void
tier_conn_del_read(void *arg)
{
	event_del(&((struct tier_conn *)arg)->rev);
}

static void
tier_conn_add_write(void *arg)
{
	event_add(&((struct tier_conn *)arg)->wev, NULL);
}

static void
tier_conn_del_write(void *arg)
{
	event_del(&((struct tier_conn *)arg)->wev);
}

static void
tier_conn_cleanup(void *arg)
{
	tier_conn_del_read(arg);
	tier_conn_del_write(arg);
}

/* Hook ac to the loop and check its replies. */
static void
tier_conn_attach(struct tier_conn *c, redisAsyncContext *ac)
{
	struct event_base *base = c->srv->t->base;

	if (reply_default == NULL)
		reply_default = ac->c.reader->fn;
	ac->c.reader->fn = &reply_checked;
	ac->c.reader->privdata = c;
	c->proto_why = NULL;
	ac->ev.addRead = tier_conn_add_read;
	ac->ev.delRead = tier_conn_del_read;
	ac->ev.addWrite = tier_conn_add_write;
	ac->ev.delWrite = tier_conn_del_write;
	ac->ev.cleanup = tier_conn_cleanup;
	ac->ev.data = c;
	event_assign(&c->rev, base, ac->c.fd, EV_READ, tier_conn_on_read, c);
	event_assign(&c->wev, base, ac->c.fd, EV_WRITE, tier_conn_on_write, c);
	event_add(&c->rev, NULL);
	event_add(&c->wev, NULL);
}

void
tier_server_warn(struct tier_server *srv, const char *fmt, ...)
{
	time_t now = time(NULL);
	char msg[256], kv[LOG_KV_BUF], name[LOG_KV_BUF];
	va_list ap;

	if (srv->log_at != 0 && now - srv->log_at < LOG_EVERY) {
		srv->log_held++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_event(LOG_WARNING, "redis", "server=%s error=%s held=%u",
	    log_kvs(srv->url.name, name, sizeof(name)),
	    log_kvs(msg, kv, sizeof(kv)), srv->log_held);
	srv->log_at = now;
	srv->log_held = 0;
}

/* The connection is gone (ac already freed or being freed): retry later. */
static void
tier_conn_lost(struct tier_conn *c, const char *why)
{
	struct tier *t = c->srv->t;
	struct timeval tv;

	c->ac = NULL;
	c->tls = NULL; /* freed with ac */
	c->sent = 0;
	c->written = 0;
	c->state = TIER_SERVER_DOWN;
	if (!c->is_sub)
		c->srv->st.state = TIER_SERVER_DOWN;
	else
		c->srv->st.subscribed = 0;
	evtimer_del(&c->handshake);
	if (c->proto_why != NULL) {
		t->stats.protocol_errors++;
		why = c->proto_why;
		c->proto_why = NULL;
	}
	if (t->freeing)
		return;
	if (!c->is_sub) /* a wait can no longer poll: it ends now */
		t->hooks.lost(c->srv);
	tier_server_warn(c->srv, "%s connection: %s; retrying in %ld ms",
	    c->is_sub ? "subscriber" : "command", why, c->backoff_ms);
	tier_ms_to_tv(c->backoff_ms, &tv);
	evtimer_add(&c->retry, &tv);
	c->backoff_ms *= 2;
	if (c->backoff_ms > t->cf.reconnect_max_ms)
		c->backoff_ms = t->cf.reconnect_max_ms;
}

void
tier_conn_drop(struct tier_conn *c, enum tier_result result, const char *why)
{
	redisAsyncContext *ac = c->ac;

	if (ac == NULL)
		return;
	tier_conn_lost(c, why);
	c->drop_result = result;
	c->drop_why = why;
	redisAsyncFree(ac); /* its calls' callbacks run now, reply NULL */
	c->drop_result = TIER_ERROR;
	c->drop_why = NULL;
}

/* The handshake is complete: the connection serves. */
static void
tier_conn_up(struct tier_conn *c)
{
	char name[LOG_KV_BUF];

	evtimer_del(&c->handshake);
	c->state = TIER_SERVER_UP;
	c->srv->st.connects++;
	if (c->is_sub) {
		c->srv->st.subscribed = 1;
		/* it works; a command connection, once a call is answered */
		c->backoff_ms = c->srv->t->cf.reconnect_min_ms;
	} else
		c->srv->st.state = TIER_SERVER_UP;
	log_event(LOG_INFO, "redis_connected", "server=%s connection=%s",
	    log_kvs(c->srv->url.name, name, sizeof(name)),
	    c->is_sub ? "subscriber" : "command");
}

/* A reply to AUTH, SELECT or PING on the command connection. */
static void
on_hello(redisAsyncContext *ac, void *reply, void *priv)
{
	struct tier_conn *c = priv;
	redisReply *r = reply;
	char why[160];

	if (r == NULL || c->ac != ac)
		return; /* the connection is going away */
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, sizeof(why), "handshake refused: %.100s", r->str);
		tier_conn_drop(c, TIER_ERROR, why);
		return;
	}
	if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0)
		tier_conn_up(c);
}

/* A message on one of the channels: a lock notice or a feed message. */
static void
on_message(struct tier_conn *c, const char *channel, const redisReply *m)
{
	struct tier *t = c->srv->t;

	if (strcmp(channel, TIER_CHANNEL) == 0)
		t->hooks.notified(c->srv, m->str, m->len);
	else if (strcmp(channel, TIER_FEED_CHANNEL) == 0 && t->feed_cb != NULL)
		t->feed_cb(t->feed_arg, m->str, m->len);
}

/* A subscriber connection's reply: the SUBSCRIBE answer or a notice. */
static void
on_notice(redisAsyncContext *ac, void *reply, void *priv)
{
	struct tier_conn *c = priv;
	redisReply *r = reply;

	if (r == NULL || c->ac != ac)
		return;
	if (r->type == REDIS_REPLY_ERROR) {
		tier_conn_drop(c, TIER_ERROR, "SUBSCRIBE refused");
		return;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (r->element[1]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(r->element[0]->str, "subscribe") == 0) {
		/* up once both channels are subscribed */
		if (strcmp(r->element[1]->str, TIER_FEED_CHANNEL) == 0)
			tier_conn_up(c);
	} else if (strcmp(r->element[0]->str, "message") == 0 &&
	           r->element[2]->type == REDIS_REPLY_STRING)
		on_message(c, r->element[1]->str, r->element[2]);
}

/*
 * Why ac ended: TLS's own reason first (hiredis says only "Success" or
 * "Server closed the connection" when a handshake fails), else hiredis's,
 * else fallback. A reader's protocol error counts as the guard's do.
 */
static const char *
conn_why(struct tier_conn *c, const redisAsyncContext *ac, const char *fallback,
    char *buf, size_t size)
{
	const char *why =
	    c->tls != NULL ? tier_tls_why(c->tls, buf, size) : NULL;

	if (why != NULL)
		return why;
	if (ac->err == REDIS_ERR_PROTOCOL && c->proto_why == NULL)
		c->srv->t->stats.protocol_errors++;
	return ac->errstr[0] != '\0' ? ac->errstr : fallback;
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	struct tier_conn *c = ac->data;
	char buf[256];

	if (status != REDIS_OK && c->ac == ac)
		tier_conn_lost(
		    c, conn_why(c, ac, "connect failed", buf, sizeof(buf)));
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	struct tier_conn *c = ac->data;
	char buf[256];

	(void)status;
	if (c->ac == ac)
		tier_conn_lost(c,
		    conn_why(c, ac, "closed by the server", buf, sizeof(buf)));
	if (c->ac == NULL) { /* the calls on it have ended: forget why */
		c->drop_result = TIER_ERROR;
		c->drop_why = NULL;
	}
}

static void
on_handshake_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct tier_conn *c = arg;

	(void)fd, (void)what;
	c->srv->st.timeouts++;
	tier_conn_drop(c, TIER_TIMEOUT,
	    c->tls != NULL && !tier_tls_established(c->tls)
	        ? "no TLS handshake in time (does the server speak TLS?)"
	        : "no answer to the handshake in time");
}

/* Queue AUTH, SELECT and PING (or SUBSCRIBE) behind the connect. */
static int
tier_conn_hello(struct tier_conn *c)
{
	const struct tier_url *u = &c->srv->url;
	redisAsyncContext *ac = c->ac;

	if (u->password != NULL && u->user != NULL &&
	    redisAsyncCommand(ac, on_hello, c, "AUTH %s %s", u->user,
	        u->password) != REDIS_OK)
		return -1;
	if (u->password != NULL && u->user == NULL &&
	    redisAsyncCommand(ac, on_hello, c, "AUTH %s", u->password) !=
	        REDIS_OK)
		return -1;
	if (c->is_sub)
		return redisAsyncCommand(ac, on_notice, c, "SUBSCRIBE %s %s",
		    TIER_CHANNEL, TIER_FEED_CHANNEL);
	if (u->db != 0 &&
	    redisAsyncCommand(ac, on_hello, c, "SELECT %d", u->db) != REDIS_OK)
		return -1;
	return redisAsyncCommand(ac, on_hello, c, "PING");
}

/* Connect to ip (a numeric address; NULL: the URL's socket or host). */
static void
tier_conn_connect(struct tier_conn *c, const char *ip)
{
	const struct tier_url *u = &c->srv->url;
	redisAsyncContext *ac;
	struct timeval tv;

	ac = u->is_unix ? redisAsyncConnectUnix(u->path)
	                : redisAsyncConnect(ip != NULL ? ip : u->host, u->port);
	if (ac == NULL || ac->err) {
		c->ac = NULL;
		tier_conn_lost(c, ac != NULL ? ac->errstr : "out of memory");
		if (ac != NULL)
			redisAsyncFree(ac);
		return;
	}
	ac->data = c;
	c->ac = ac;
	c->state = TIER_SERVER_CONNECTING;
	if (!c->is_sub)
		c->srv->st.state = TIER_SERVER_CONNECTING;
	tier_conn_attach(c, ac);
	if (u->tls &&
	    tier_tls_start(c->srv->t->tls, &ac->c, u->host, &c->tls) == -1) {
		tier_conn_drop(c, TIER_ERROR,
		    ac->c.errstr[0] != '\0' ? ac->c.errstr
		                            : "cannot start TLS");
		return;
	}
	if (redisAsyncSetConnectCallback(ac, on_connect) != REDIS_OK ||
	    redisAsyncSetDisconnectCallback(ac, on_disconnect) != REDIS_OK ||
	    tier_conn_hello(c) != REDIS_OK) {
		tier_conn_drop(c, TIER_ERROR, "cannot start the handshake");
		return;
	}
	tier_ms_to_tv(c->srv->t->cf.timeout_ms, &tv);
	evtimer_add(&c->handshake, &tv);
}

static void
on_last_lookup(evutil_socket_t fd, short what, void *arg)
{
	struct tier *t = arg;

	(void)fd, (void)what;
	t->hooks.destroy(t);
}

static void
on_resolved(int err, struct evutil_addrinfo *res, void *arg)
{
	struct tier_conn *c = arg;
	struct tier *t = c->srv->t;
	struct timeval now = { 0, 0 };
	char ip[INET6_ADDRSTRLEN] = "";
	struct evutil_addrinfo *ai;
	const void *a;

	if (c->dns !=
	    NULL) /* else answered before evdns_getaddrinfo returned */
		t->lookups--;
	c->dns = NULL;
	c->resolving = 0;
	if (t->freeing) { /* cancelled by tier_free: the tier is ours to end */
		if (res != NULL)
			evutil_freeaddrinfo(res);
		if (t->lookups == 0)
			event_base_once(t->base, -1, EV_TIMEOUT, on_last_lookup,
			    t, &now); /* not from inside evdns */
		return;
	}
	if (err != 0 || res == NULL) {
		tier_conn_lost(
		    c, err != 0 ? evutil_gai_strerror(err) : "no address");
		return;
	}
	for (ai = res; ai->ai_next != NULL && ai->ai_family != AF_INET;)
		ai = ai->ai_next; /* IPv4 first, as Redis binds it by default */
	if (ai->ai_family != AF_INET)
		ai = res;
	a = ai->ai_family == AF_INET6
	        ? (const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)
	              ->sin6_addr
	        : (const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)
	              ->sin_addr;
	inet_ntop(ai->ai_family, a, ip, sizeof(ip));
	evutil_freeaddrinfo(res);
	tier_conn_connect(c, ip);
}

/* Start a connection; a host name is resolved first, off the loop. */
void
tier_conn_start(struct tier_conn *c)
{
	const struct tier_url *u = &c->srv->url;
	struct evdns_getaddrinfo_request *req;
	struct evutil_addrinfo hints;

	if (u->is_unix || c->srv->t->dns == NULL) {
		tier_conn_connect(c, NULL);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	c->state = TIER_SERVER_CONNECTING;
	if (!c->is_sub)
		c->srv->st.state = TIER_SERVER_CONNECTING;
	c->resolving = 1;
	req = evdns_getaddrinfo(
	    c->srv->t->dns, u->host, NULL, &hints, on_resolved, c);
	if (c->resolving) { /* under way: on_resolved comes later */
		c->dns = req;
		c->srv->t->lookups++;
	}
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	tier_conn_start(arg);
}

void
tier_conn_init(struct tier_server *srv, struct tier_conn *c, int is_sub)
{
	memset(c, 0, sizeof(*c));
	c->srv = srv;
	c->is_sub = is_sub;
	c->state = TIER_SERVER_DOWN;
	c->backoff_ms = srv->t->cf.reconnect_min_ms;
	c->drop_result = TIER_ERROR;
	TAILQ_INIT(&c->unwritten);
	evtimer_assign(&c->retry, srv->t->base, on_retry, c);
	evtimer_assign(&c->handshake, srv->t->base, on_handshake_timeout, c);
}

void
tier_conn_stop(struct tier_conn *c)
{
	if (c->dns != NULL) /* on_resolved runs later, from the loop */
		evdns_getaddrinfo_cancel(c->dns);
	evtimer_del(&c->retry);
	tier_conn_drop(c, TIER_ERROR, "shutting down");
	evtimer_del(&c->handshake);
}
