/*
 * dispatch_session.c: one client as the dispatcher sees it. Each request
 * line is decoded here: a check by wire_fast when it can (no JSON tree),
 * anything else by proto_decode(); then answered through the op switch
 * (dispatch.c). A session also holds the checks it has parked (checkop.c).
 */
#include <config.h>

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>

#include "wire/buf.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "ops/dispatch.h"
#include "ops/dispatch_int.h"
#include "feed/feed.h"
#include "wire/proto.h"
#include "iface/reply.h"
#include "ops/session.h"
#include "iface/session_ops.h"
#include "wire/wire_fast.h"
#include "base/xmalloc.h"

/* A page's pairs the fast path takes; a longer page is jansson's. */
#define SESSION_FAST_PAIRS 64

/*
 * The common lines, checks, decoded without jansson (wire_fast.h) and
 * answered: 1 when the line was one, else 0 (the full decoder's).
 */
static int
session_fast(struct session *s, double t0, const char *line, size_t len)
{
	struct dispatch *d = s->d;
	struct wire_pair pairs[SESSION_FAST_PAIRS];
	struct wire_check wc;
	struct wire_page pg;

	buf_reset(&d->unescaped);
	if (buf_reserve(&d->unescaped, len) < len ||
	    !wire_fast_check_page(line, len, d->unescaped.p, d->urls,
	        PROTO_MAX_URLS, pairs, SESSION_FAST_PAIRS, &wc, &pg))
		return 0;
	check_op(&d->env, s, t0, &wc);
	return 1;
}

/* Decode a line read at t0 with jansson and answer it. */
static void
session_full(struct session *s, double t0, const char *line, size_t len)
{
	const struct reply_stamp refused = { t0, REPLY_OTHER };
	struct dispatch *d = s->d;
	struct request req;
	enum proto_err err;
	const char *msg;

	if (proto_decode(line, len, d->test_clock, &req, &err, &msg) == -1) {
		dispatch_error(s, &refused, req.id, err, msg);
		proto_request_clear(&req);
		return;
	}
	dispatch_request(d, s, t0, &req);
}

/* Decode and answer one request line, at one instant; see dispatch.h. */
void
session_line(struct session *s, const char *line, size_t len)
{
	struct dispatch *d = s->d;
	/* The server's stamp for the lines it hands over now (reply.h). */
	const struct reply_stamp refused = { s->out->t0, REPLY_OTHER };

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return; /* blank lines are ignored */
	d->requests++;
	if (s->watch != NULL) {
		dispatch_error(s, &refused, NULL, PE_BAD_REQUEST,
		    "this connection is watching: it takes no more requests");
		return;
	}
	clock_hold_at(d->clock, refused.t0);
	if (!session_fast(s, refused.t0, line, len))
		session_full(s, refused.t0, line, len);
	clock_release(d->clock);
}

/* An over-long line: answered once, its bytes were skipped. */
void
session_too_long(struct session *s, size_t limit)
{
	char msg[96];
	const struct reply_stamp refused = { s->out->t0, REPLY_OTHER };

	s->d->requests++;
	snprintf(msg, sizeof(msg), "request line longer than %zu bytes", limit);
	dispatch_error(s, &refused, NULL, PE_LINE_TOO_LONG, msg);
}

struct session *
session_new(struct dispatch *d, struct reply *out)
{
	struct session *s = xcalloc(1, sizeof(*s));

	s->d = d;
	s->out = out;
	TAILQ_INIT(&s->waiting);
	TAILQ_INIT(&s->histories);
	TAILQ_INSERT_TAIL(&d->sessions, s, link);
	return s;
}

void
session_set_admin(struct session *s, int admin)
{
	s->admin = admin;
}

void
session_close(struct session *s)
{
	check_cancel_all(s);
	dispatch_history_cancel_all(s);
	feed_unwatch(s->watch);
	s->watch = NULL;
}

void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	check_cancel_all(s);
	dispatch_history_cancel_all(s);
	feed_unwatch(s->watch);
	TAILQ_REMOVE(&s->d->sessions, s, link);
	free(s);
}

int
session_waiting(const struct session *s)
{
	return !TAILQ_EMPTY(&s->waiting) || !TAILQ_EMPTY(&s->histories);
}

/* session_ops.h's open: a session of the dispatcher arg. */
static void *
session_ops_open(void *arg, struct reply *out, int admin)
{
	struct session *s = session_new(arg, out);

	session_set_admin(s, admin);
	return s;
}

/* session_ops.h's line: session_line(). */
static void
session_ops_line(void *s, const char *line, size_t len)
{
	session_line(s, line, len);
}

/* session_ops.h's too_long: session_too_long(). */
static void
session_ops_too_long(void *s, size_t limit)
{
	session_too_long(s, limit);
}

/* session_ops.h's waiting: session_waiting(). */
static int
session_ops_waiting(const void *s)
{
	return session_waiting(s);
}

/* session_ops.h's close: session_close(). */
static void
session_ops_close(void *s)
{
	session_close(s);
}

/* session_ops.h's free: session_free(). */
static void
session_ops_free(void *s)
{
	session_free(s);
}

/* The one answer of a client refused past max-connections. */
static const char *
session_ops_refusal(void *arg, size_t *len)
{
	static const char busy[] =
	    "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"overloaded\","
	    "\"message\":\"too many connections\"}}\n";

	(void)arg;
	*len = sizeof(busy) - 1;
	return busy;
}

const struct session_ops dispatch_session_ops = { session_ops_open,
	session_ops_line, session_ops_too_long, session_ops_waiting,
	session_ops_close, session_ops_free, session_ops_refusal };
