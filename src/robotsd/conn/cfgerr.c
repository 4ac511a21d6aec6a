/*
 * cfgerr.c: the config-error mode's server (cfgerr.h). It accepts on the
 * listening socket robotsd was handed, reads request lines and answers
 * each with the error "config", nothing else: no cache, no fetches, no
 * config. Request lines are bounded as in normal service (64 KiB, the
 * default max-line; an over-long one is answered once with id null and
 * skipped), the id of a JSON object is echoed, a connection lives until
 * its client closes it, and a client that does not read its answers is
 * paused, then closed after WRITE_TIMEOUT.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "wire/buf.h"
#include "base/handover.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "conn/accept.h"
#include "conn/cfgerr.h"
#include "wire/proto.h"

#define MAX_LINE 65536         /* max-line's default */
#define MAX_CONNECTIONS 4096   /* max-connections' default */
#define MAX_MESSAGE 1024       /* bytes of the message in an answer */
#define OUT_PAUSE (256 * 1024) /* unread answers that pause reading */
#define WRITE_TIMEOUT 60       /* seconds; write-timeout's default */

struct cfgconn {
	struct cfgerr *ce;
	struct bufferevent *bev;
	int skipping; /* in the rest of an over-long line */
	int closing;  /* the client shut down its side: flush, then close */
	TAILQ_ENTRY(cfgconn) link;
};

struct cfgerr {
	struct evconnlistener *lev;
	struct event *resume;   /* ends a pause for want of descriptors */
	struct accept_pause ap; /* accept's pauses for descriptors */
	char *message;          /* the answers' "message" */
	unsigned long nconns;
	TAILQ_HEAD(, cfgconn) conns;
};

/* The answer to one line: the error "config" with id (NULL: null). */
static void
cfgerr_answer(struct cfgconn *c, const json_t *id)
{
	struct buf b = BUF_INIT(0);

	proto_error(&b, id, PE_CONFIG, c->ce->message);
	if (b.state == BUF_OK)
		(void)evbuffer_add(bufferevent_get_output(c->bev), b.p, b.len);
	buf_clear(&b);
}

/* One request line (without its '\n'): blank ones are not answered. */
static void
cfgerr_line(struct cfgconn *c, const char *line, size_t len)
{
	struct request req;
	enum proto_err err;
	const char *msg;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	/* Decoded only for its id: whatever it asks, the answer is "config". */
	(void)proto_decode(line, len, 0, &req, &err, &msg);
	cfgerr_answer(c, req.id);
	proto_request_clear(&req);
}

static void
cfgerr_conn_free(struct cfgconn *c)
{
	TAILQ_REMOVE(&c->ce->conns, c, link);
	c->ce->nconns--;
	bufferevent_free(c->bev);
	free(c);
}

/* Answer the complete lines read, as long as the client reads answers. */
static void
cfgerr_read_cb(struct bufferevent *bev, void *arg)
{
	struct cfgconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr eol;
	size_t n;

	while (evbuffer_get_length(bufferevent_get_output(bev)) < OUT_PAUSE) {
		eol = evbuffer_search_eol(in, NULL, &n, EVBUFFER_EOL_LF);
		if (eol.pos == -1) {
			/* No '\n' yet: an over-long line is answered now. */
			if ((n = evbuffer_get_length(in)) <= MAX_LINE + 1)
				return;
			if (!c->skipping)
				cfgerr_answer(c, NULL);
			c->skipping = 1;
			(void)evbuffer_drain(in, n);
			return;
		}
		n = (size_t)eol.pos;
		if (c->skipping || n > MAX_LINE + 1) {
			if (!c->skipping)
				cfgerr_answer(c, NULL);
			c->skipping = 0;
		} else
			cfgerr_line(
			    c, (const char *)evbuffer_pullup(in, n + 1), n);
		(void)evbuffer_drain(in, n + 1);
	}
	/* Paused until the client has read most of its answers. */
	bufferevent_disable(bev, EV_READ);
	bufferevent_setwatermark(bev, EV_WRITE, OUT_PAUSE / 4, 0);
}

/* Answers written: resume a paused connection, or end a closing one. */
static void
cfgerr_write_cb(struct bufferevent *bev, void *arg)
{
	struct cfgconn *c = arg;

	if (c->closing) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			cfgerr_conn_free(c);
		else
			bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		return;
	}
	if (!(bufferevent_get_enabled(bev) & EV_READ)) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(bev, EV_READ);
		cfgerr_read_cb(bev, c);
	}
}

/*
 * The client shut down its side: answer a last line without '\n', then
 * close once everything is written. An error or a client that has not
 * read for WRITE_TIMEOUT: close now.
 */
static void
cfgerr_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct cfgconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);

	if (!(what & BEV_EVENT_EOF) || c->closing) {
		cfgerr_conn_free(c);
		return;
	}
	if (n > 0 && !c->skipping)
		cfgerr_line(c, (const char *)evbuffer_pullup(in, -1), n);
	c->closing = 1;
	bufferevent_disable(bev, EV_READ);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		cfgerr_conn_free(c);
}

/* A connection on fd, on ce's list; NULL (fd closed) if libevent fails. */
static struct cfgconn *
cfgerr_conn_new(struct cfgerr *ce, struct event_base *base, int fd)
{
	struct timeval wt = { WRITE_TIMEOUT, 0 };
	struct cfgconn *c = xcalloc(1, sizeof(*c));

	c->ce = ce;
	c->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&ce->conns, c, link);
	ce->nconns++;
	bufferevent_setcb(
	    c->bev, cfgerr_read_cb, cfgerr_write_cb, cfgerr_event_cb, c);
	bufferevent_set_timeouts(c->bev, NULL, &wt);
	return c;
}

/* A new client; past MAX_CONNECTIONS it gets one answer and is closed. */
static void
cfgerr_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int socklen, void *arg)
{
	struct cfgerr *ce = arg;
	struct cfgconn *c;

	(void)sa;
	(void)socklen;
	accept_pause_ok(&ce->ap);
	if ((c = cfgerr_conn_new(ce, evconnlistener_get_base(lev), fd)) == NULL)
		return;
	if (ce->nconns > MAX_CONNECTIONS) {
		cfgerr_answer(c, NULL);
		c->closing = 1;
		bufferevent_enable(c->bev, EV_WRITE);
		return;
	}
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/*
 * A connection the image before handed over (handover.h): its unwritten
 * answers first, then its unhandled requests, as if just read. It counts
 * against MAX_CONNECTIONS as an accepted one does: past the cap it gets
 * its unwritten answers and the one answer of a refused connection, and
 * is closed.
 */
static void
cfgerr_adopt(void *arg, const struct handover_conn *h)
{
	struct cfgerr *ce = arg;
	struct cfgconn *c;
	struct evbuffer *in;
	int ok;

	if ((c = cfgerr_conn_new(
	         ce, evconnlistener_get_base(ce->lev), h->fd)) == NULL)
		return;
	c->skipping = h->skipping;
	c->closing = h->closing;
	/* A bufferevent's input only takes what it reads: thawed for this. */
	in = bufferevent_get_input(c->bev);
	(void)evbuffer_unfreeze(in, 0);
	ok = evbuffer_add(in, h->in, h->inlen) == 0;
	(void)evbuffer_freeze(in, 0);
	if (!ok || evbuffer_add(
	               bufferevent_get_output(c->bev), h->out, h->outlen) == -1)
		fatalx("out of memory adopting a connection");
	if (ce->nconns > MAX_CONNECTIONS && !c->closing) {
		/* Past the cap: what it was owed, then refused as at accept. */
		cfgerr_answer(c, NULL);
		c->closing = 1;
	}
	bufferevent_enable(c->bev, c->closing ? EV_WRITE : EV_READ | EV_WRITE);
	if (c->closing &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		cfgerr_conn_free(c);
	else if (!c->closing)
		cfgerr_read_cb(c->bev, c);
}

/* The pause for descriptors is over (accept.h). */
static void
cfgerr_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cfgerr *ce = arg;

	(void)fd;
	(void)what;
	ce->ap.paused = 0;
	evconnlistener_enable(ce->lev);
}

/* accept() failed for a reason libevent does not retry (accept.h). */
static void
cfgerr_accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct cfgerr *ce = arg;

	accept_pause_start(&ce->ap, lev, NULL, ce->resume, "accept_failed",
	    EVUTIL_SOCKET_ERROR(), ce->nconns);
}

/* The message answered; see cfgerr.h. */
void
cfgerr_set_message(struct cfgerr *ce, const char *message)
{
	free(ce->message);
	xasprintf(&ce->message, "%.*s", MAX_MESSAGE, message);
}

/* Serve fd; see cfgerr.h. */
struct cfgerr *
cfgerr_new(struct event_base *base, int fd)
{
	struct cfgerr *ce = xcalloc(1, sizeof(*ce));

	TAILQ_INIT(&ce->conns);
	ce->message = xstrdup("robotsd's configuration is not in effect");
	ce->lev = evconnlistener_new(
	    base, cfgerr_accept_cb, ce, LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (ce->lev == NULL ||
	    (ce->resume = evtimer_new(base, cfgerr_resume_cb, ce)) == NULL) {
		if (ce->lev != NULL)
			evconnlistener_free(ce->lev);
		free(ce->message);
		free(ce);
		return NULL;
	}
	evconnlistener_set_error_cb(ce->lev, cfgerr_accept_error_cb);
	return ce;
}

/* Close the connections; the listening fd stays open (see cfgerr.h). */
void
cfgerr_free(struct cfgerr *ce)
{
	if (ce == NULL)
		return;
	while (!TAILQ_EMPTY(&ce->conns))
		cfgerr_conn_free(TAILQ_FIRST(&ce->conns));
	evconnlistener_free(ce->lev);
	event_free(ce->resume);
	free(ce->message);
	free(ce);
}

/* Adopt what the image before handed over; see cfgerr.h. */
void
cfgerr_take_over(struct cfgerr *ce)
{
	(void)handover_take(cfgerr_adopt, ce);
}

/*
 * Record c in ho: 1; a connection that cannot be recorded is closed: 0.
 * Its socket stays c's until the hand-over is named (cfgerr_hand_over()).
 */
static int
cfgerr_hand_conn(struct handover *ho, struct cfgconn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct evbuffer *out = bufferevent_get_output(c->bev);
	struct handover_conn h = { bufferevent_getfd(c->bev), c->skipping,
		c->closing, NULL, c->closing ? 0 : evbuffer_get_length(in),
		NULL, evbuffer_get_length(out) };

	h.in = (const char *)evbuffer_pullup(in, (ev_ssize_t)h.inlen);
	h.out = (const char *)evbuffer_pullup(out, (ev_ssize_t)h.outlen);
	if ((h.inlen > 0 && h.in == NULL) || (h.outlen > 0 && h.out == NULL) ||
	    handover_add(ho, &h) == -1) {
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"a connection could not be handed over: closed\"");
		cfgerr_conn_free(c);
		return 0;
	}
	return 1;
}

/*
 * Hand the connections over, then free; see cfgerr.h. Only once the
 * hand-over is named do the sockets stop being the connections' (left
 * open for the next image); if it cannot be, they are closed with them
 * rather than left open and owned by no one.
 */
void
cfgerr_hand_over(struct cfgerr *ce)
{
	struct cfgconn *c, *next;
	struct handover ho;
	size_t n = 0;

	if (handover_open(&ho) == -1) {
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"no memfd: the connections are closed\"");
		cfgerr_free(ce);
		return;
	}
	evconnlistener_disable(ce->lev);
	for (c = TAILQ_FIRST(&ce->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		n += (size_t)cfgerr_hand_conn(&ho, c);
	}
	if (handover_pass_on(&ho) == -1) {
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"the hand-over cannot be named: the connections "
		    "are closed\"");
		close(ho.fd);
	} else {
		TAILQ_FOREACH(c, &ce->conns, link)
			bufferevent_setfd(c->bev, -1);
		log_event(LOG_INFO, "handover", "connections=%zu", n);
	}
	cfgerr_free(ce);
}

/* robotsd_config_error; see cfgerr.h. */
struct metric
cfgerr_metric(int on)
{
	return (struct metric){ NULL, "robotsd_config_error",
		"1 while robotsd answers every request with error config "
		"(its config does not load or start), else 0.",
		METRIC_GAUGE, on != 0, NULL, NULL };
}
