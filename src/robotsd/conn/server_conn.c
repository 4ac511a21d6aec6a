/*
 * server_conn.c: one client connection's I/O. Each connection is a socket
 * with two evbuffers and a session (iface/session_ops.h): complete lines go to
 * the session, over-long lines are skipped and answered once by it, and
 * answers come back through the struct reply this file implements, queued
 * with a cap. Reading pauses while a client lets answers pile up, and a
 * client that keeps not reading is disconnected. The listener, the reaper
 * and the budget of all connections are server.c's.
 *
 * Answers are written the way redis writes them: the answers a turn of
 * the loop queues for a connection leave in one writev() straight from the
 * flush event, which runs after the turn's reads; the write event is armed
 * only when the socket is full, and carries the write timeout. A cached
 * check over a quiet connection so costs one read and one write; a
 * bufferevent armed and disarmed its write event around every flush and
 * asked FIONREAD before every read, three more system calls.
 *
 * Each answer queued is weighed against the budget of all connections
 * (see server.c): past half of it, a client that queues an answer while
 * holding more than the average is paused; past all of it, server.c's
 * shed event closes the largest holders. A line many clients are sent
 * alike (a change feed event, reply.h's share) is queued by reference:
 * each client's output counts it as a copy would, against its own cap,
 * but the total counts its bytes once, as memory holds them, from the
 * first client that queues it until the last lets go.
 *
 * One turn of the event loop reads and handles request lines for at most
 * BUDGET_SLICE_US; a connection with lines left, one that has a line
 * while the output is over the budget, or one readable once the slice is
 * used up, yields: it is put on the backlog, which a zero timer takes up
 * again on a later turn, in order, while that turn's slice lasts, and
 * connections that have lines meanwhile queue behind it. So no turn runs
 * long however many clients send at once, and no answer is queued past the
 * budget but the one a line in progress makes.
 *
 * The clients' sockets run at SERVER_PRIORITY, before fetches and timers
 * (robotsd.c sets the loop up), so a cached check is answered in the next
 * turn whatever the fetches are doing. The backlog's timer runs at the
 * lower priority with everything else: clients that keep sending cannot
 * starve the fetches, which take turns with them.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <stddef.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "policy/bounds.h"
#include "conn/budget.h"
#include "base/handover.h"
#include "base/histo.h"
#include "base/log.h"
#include "base/looplag.h"
#include "policy/netpolicy.h"
#include "iface/reply.h"
#include "conn/server_int.h"
#include "base/xmalloc.h"

/* Bytes read from a client at a time (a bufferevent's default). */
#define SERVER_READ 16384

static void conn_process(struct conn *);
static void conn_read_cb(evutil_socket_t, short, void *);

static void
conn_ref_free(struct conn_ref *ref)
{
	if (!ref->listed && !ref->held)
		free(ref);
}

/*
 * Bytes of shared lines among the n just written or dropped from c's
 * output, which the total never counted as c's; the lines all written
 * leave c's list.
 */
static size_t
conn_shared_out(struct conn *c, size_t n)
{
	uint64_t from = c->out_out, to = from + n, lo, hi;
	struct conn_ref *ref;
	size_t shared = 0;

	while ((ref = TAILQ_FIRST(&c->refs)) != NULL && ref->start < to) {
		lo = ref->start > from ? ref->start : from;
		hi = ref->end < to ? ref->end : to;
		if (hi > lo)
			shared += (size_t)(hi - lo);
		if (ref->end > to)
			break;
		TAILQ_REMOVE(&c->refs, ref, link);
		ref->listed = 0;
		conn_ref_free(ref);
	}
	c->out_out = to;
	return shared;
}

/*
 * A connection's output buffer grew or shrank: keep the running total,
 * in which a shared line counts once (conn_share), not per connection.
 */
static void
conn_out_cb(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;
	struct server_memory *m = &c->srv->mem;

	(void)b;
	c->out_in += info->n_added;
	if (!c->sharing)
		m->output_bytes += info->n_added;
	if (info->n_deleted > 0)
		m->output_bytes -=
		    info->n_deleted - conn_shared_out(c, info->n_deleted);
	if (m->output_bytes > m->output_peak)
		m->output_peak = m->output_bytes;
}

/* The same for input. */
static void
conn_in_cb(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct server_memory *m = arg;

	(void)b;
	m->input_bytes += info->n_added;
	m->input_bytes -= info->n_deleted;
}

/* Bytes of answers c has queued and its client has not read. */
size_t
conn_queued(const struct conn *c)
{
	return evbuffer_get_length(c->out);
}

/* Drop the answers queued for c, through the buffer's callback so the
 * total drops. */
static void
conn_drop_output(struct conn *c)
{
	c->srv->dropped += evbuffer_get_length(c->out);
	evbuffer_drain(c->out, evbuffer_get_length(c->out));
}

/* Empty c's buffers, so the totals drop before it is freed. */
static void
conn_drop_buffers(struct conn *c)
{
	evbuffer_drain(c->in, evbuffer_get_length(c->in));
	conn_drop_output(c);
}

/* Unhook c: cancel its waiting checks and free it at the end of the event. */
void
conn_close(struct conn *c, const char *why)
{
	struct server *srv = c->srv;

	if (c->closing)
		return;
	log_debug(
	    "connection %llu: closed: %s", (unsigned long long)c->id, why);
	c->closing = 1;
	if (srv->ops->close != NULL)
		srv->ops->close(c->session);
	event_del(c->rev);
	event_del(c->wev);
	if (c->flushing)
		TAILQ_REMOVE(&srv->flushq, c, flushq);
	c->flushing = 0;
	if (c->deferred)
		TAILQ_REMOVE(&srv->backlog, c, backlog);
	/* its answers will never be sent: out of the budget now */
	conn_drop_output(c);
	TAILQ_REMOVE(&srv->conns, c, link);
	srv->nconns--;
	TAILQ_INSERT_TAIL(&srv->dead, c, link);
	event_active(srv->reaper, EV_TIMEOUT, 0);
}

/* Does c's session owe an answer later (a waiting check)? */
int
conn_waiting(const struct conn *c)
{
	const struct session_ops *ops = c->srv->ops;

	return ops->waiting != NULL && ops->waiting(c->session);
}

/* Close c once a half-closed client has all its answers. */
static void
conn_maybe_finish(struct conn *c)
{
	if (c->eof && !c->closing && !c->deferred && !conn_waiting(c) &&
	    evbuffer_get_length(c->out) == 0)
		conn_close(c, "client done");
}

/* Stop reading c's requests until its client reads its answers. */
static void
conn_pause(struct conn *c)
{
	c->paused = 1;
	event_del(c->rev);
}

/*
 * Pause reading or disconnect when c's queued answers pile up; apply the
 * budget of all connections together (budget.h).
 */
static void
conn_check_output(struct conn *c)
{
	struct server *srv = c->srv;
	struct budget_view v = { conn_queued(c), c->paused,
		srv->mem.output_bytes, srv->nconns, srv->set.max_output,
		srv->set.output_budget };
	unsigned act = budget_answered(&v);

	if (act & BUDGET_CLOSE) {
		log_event(LOG_WARNING, "client_dropped",
		    "connection=%llu why=output_limit unread_bytes=%zu",
		    (unsigned long long)c->id, v.queued);
		conn_close(c, "output limit");
		return;
	}
	if (act & BUDGET_PAUSE_TOTAL)
		srv->mem.paused++;
	if (act & BUDGET_PAUSE)
		conn_pause(c);
	if (act & BUDGET_SHED)
		event_active(srv->shed, EV_TIMEOUT, 0);
}

/* The connection behind its struct reply. */
static struct conn *
conn_of(struct reply *r)
{
	return (
	    struct conn *)(void *)((char *)r - offsetof(struct conn, reply));
}

/*
 * Have c's answers written by the flush event, unless the write event
 * already waits for room in the socket.
 */
static void
conn_want_flush(struct conn *c)
{
	struct server *srv = c->srv;

	if (c->flushing || c->closing || event_pending(c->wev, EV_WRITE, NULL))
		return;
	if (TAILQ_EMPTY(&srv->flushq))
		event_active(srv->flush, EV_TIMEOUT, 0);
	TAILQ_INSERT_TAIL(&srv->flushq, c, flushq);
	c->flushing = 1;
}

/*
 * A line was queued on c: the answer to the request st tells (timed), or
 * with st NULL one that answers none.
 */
static void
conn_answered(struct conn *c, const struct reply_stamp *st)
{
	enum reply_kind k;
	double took;

	if (st != NULL) {
		k = st->kind < REPLY_KINDS ? st->kind : REPLY_OTHER;
		if (c->timing && st->t0 == c->reply.t0)
			c->timed[k]++; /* timed with its line's neighbours */
		else {
			took = histo_now() - st->t0;
			histo_observe(&c->srv->latency, took);
			histo_observe(&c->srv->latency_op[k], took);
		}
	}
	conn_check_output(c);
	conn_want_flush(c);
}

/*
 * The answers queued while c's lines were handled, timed from when they
 * were read to now, when the last of them is queued: one reading of the
 * clock for the lot (they leave together, at the next write).
 */
static void
conn_time_answers(struct conn *c)
{
	double took = -1;
	size_t k;

	c->timing = 0;
	for (k = 0; k < REPLY_KINDS; k++) {
		if (c->timed[k] == 0)
			continue;
		if (took < 0)
			took = histo_now() - c->reply.t0;
		histo_observe_n(&c->srv->latency, took, c->timed[k]);
		histo_observe_n(&c->srv->latency_op[k], took, c->timed[k]);
		c->timed[k] = 0;
	}
}

/* reply.h: queue an answer line. */
static void
conn_send(
    struct reply *r, const struct reply_stamp *st, const char *line, size_t len)
{
	struct conn *c = conn_of(r);

	if (c->closing)
		return;
	if (evbuffer_add(c->out, line, len) == -1)
		fatalx("out of memory queueing an answer");
	conn_answered(c, st);
}

/* Free a given line once the output buffer is done with it. */
static void
conn_free_line(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	free(arg);
}

/* reply.h: queue an answer line without copying it. */
static void
conn_give(struct reply *r, const struct reply_stamp *st, char *line, size_t len)
{
	struct conn *c = conn_of(r);

	if (c->closing) {
		free(line);
		return;
	}
	if (evbuffer_add_reference(c->out, line, len, conn_free_line, line) ==
	    -1)
		fatalx("out of memory queueing an answer");
	conn_answered(c, st);
}

/*
 * The output buffer is done with a shared line: let go of it, and of its
 * bytes in the total once no connection holds it.
 */
static void
conn_unshare(const void *data, size_t len, void *arg)
{
	struct conn_ref *ref = arg;
	struct reply_line *l = ref->line;

	(void)data;
	(void)len;
	if (--l->queued == 0)
		ref->mem->output_bytes -= l->len;
	if (--l->refs == 0)
		l->release(l);
	ref->held = 0;
	conn_ref_free(ref);
}

/* reply.h: queue a shared line by reference (see conn_out_cb). */
static void
conn_share(struct reply *r, struct reply_line *l)
{
	struct conn *c = conn_of(r);
	struct server_memory *m = &c->srv->mem;
	struct conn_ref *ref;

	if (c->closing)
		return;
	ref = xcalloc(1, sizeof(*ref));
	ref->line = l;
	ref->mem = m;
	ref->start = c->out_in;
	ref->end = c->out_in + l->len;
	ref->listed = ref->held = 1;
	l->refs++;
	c->sharing = 1;
	if (evbuffer_add_reference(c->out, l->p, l->len, conn_unshare, ref) ==
	    -1)
		fatalx("out of memory queueing an answer");
	c->sharing = 0;
	TAILQ_INSERT_TAIL(&c->refs, ref, link);
	if (l->queued++ == 0) {
		m->output_bytes += l->len;
		if (m->output_bytes > m->output_peak)
			m->output_peak = m->output_bytes;
	}
	conn_answered(c, NULL); /* an event, not an answer */
}

/* reply.h: a waiting check of c was answered. */
static void
conn_settled(struct reply *r)
{
	conn_maybe_finish(conn_of(r));
}

/* reply.h: what c may still queue before its output cap. */
static size_t
conn_room(struct reply *r)
{
	struct conn *c = conn_of(r);

	return budget_room(conn_queued(c), c->srv->set.max_output, c->closing);
}

/* reply.h: no more requests from c; close it once its output is written. */
static void
conn_finish(struct reply *r)
{
	struct conn *c = conn_of(r);

	if (c->closing)
		return;
	c->eof = 1;
	event_del(c->rev);
	conn_maybe_finish(c);
}

static const struct reply_ops conn_reply_ops = { conn_send, conn_give,
	conn_settled, conn_room, conn_finish, conn_share };

/* Whether output over the budget makes c yield now (shedding started). */
static int
conn_over_budget(struct conn *c)
{
	struct server *srv = c->srv;

	if (!budget_over(srv->mem.output_bytes, srv->set.output_budget))
		return 0;
	event_active(srv->shed, EV_TIMEOUT, 0);
	return 1;
}

/*
 * Must c leave its next line for the next turn: this turn has handled
 * lines for its slice, or the output is over the budget? libevent's cached
 * time changes at every turn, which is how a new one is recognised.
 */
static int
conn_must_yield(struct conn *c)
{
	struct server *srv = c->srv;
	struct timeval tv;
	uint64_t now = looplag_now_us();
	int over = conn_over_budget(c);
	int new_turn;

	event_base_gettimeofday_cached(srv->base, &tv);
	new_turn =
	    tv.tv_sec != srv->turn.tv_sec || tv.tv_usec != srv->turn.tv_usec;
	/*
	 * A new turn opens a new slice, unless connections wait on the
	 * backlog: c queues behind them, and the backlog's own turn opens
	 * the next slice (server_backlog_cb).
	 */
	if (new_turn && !over)
		srv->turn = tv;
	switch (budget_turn(over, new_turn, !TAILQ_EMPTY(&srv->backlog), now,
	    srv->turn_start_us)) {
	case BUDGET_GO:
		return 0;
	case BUDGET_NEW_SLICE:
		srv->turn_start_us = now;
		return 0;
	case BUDGET_YIELD:
		break;
	}
	return 1;
}

/* Put c on the backlog: no reading until the next turn takes it up. */
static void
conn_defer(struct conn *c)
{
	struct server *srv = c->srv;
	struct timeval zero = { 0, 0 };

	c->deferred = srv->backlog_gen;
	srv->mem.deferred++;
	event_del(c->rev);
	TAILQ_INSERT_TAIL(&srv->backlog, c, backlog);
	evtimer_add(srv->next_turn, &zero);
}

/*
 * A new turn: carry on with the connections deferred before it, in order,
 * while the turn's slice lasts; those deferred again meanwhile, and those
 * it did not reach, wait for the next one. The rest of the backlog is left
 * as it is: taking a connection up only to defer it again costs two epoll
 * calls, which for thousands of waiting clients made a turn long.
 */
void
server_backlog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	uint64_t gen = ++srv->backlog_gen;
	struct timeval zero = { 0, 0 };
	struct conn *c;

	(void)fd;
	(void)what;
	event_base_gettimeofday_cached(srv->base, &srv->turn);
	srv->turn_start_us = looplag_now_us();
	while ((c = TAILQ_FIRST(&srv->backlog)) != NULL && c->deferred != gen) {
		if (conn_must_yield(c)) {
			evtimer_add(srv->next_turn, &zero);
			return;
		}
		TAILQ_REMOVE(&srv->backlog, c, backlog);
		c->deferred = 0;
		if (!c->paused && !c->eof)
			event_add(c->rev, NULL);
		if (c->unread && !c->paused && !c->eof)
			conn_read_cb(c->fd, EV_READ, c);
		else
			conn_process(c);
		conn_maybe_finish(c);
	}
}

/*
 * Handle every complete line in c's input, unless paused or closing. A
 * line may hold max_line bytes, plus a '\r' before its '\n'.
 */
static void
conn_lines(struct conn *c)
{
	const struct session_ops *ops = c->srv->ops;
	struct evbuffer *in = c->in;
	size_t max = c->srv->set.max_line, n, len = 0, eol_len;
	struct evbuffer_ptr p;
	unsigned lines = 0;
	char *line;

	while (!c->closing && !c->paused && !c->deferred) {
		/*
		 * The slice's clock is read before every eighth line and
		 * after a long one; the output budget before each.
		 */
		if (evbuffer_get_length(in) > 0 &&
		    (lines++ % 8 == 0 || len > 1024 ? conn_must_yield(c)
		                                    : conn_over_budget(c))) {
			conn_defer(c);
			return;
		}
		p = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		n = evbuffer_get_length(in);
		switch (bounds_request_line(
		    n, (long)p.pos, c->eof, c->discarding, max, &len)) {
		case BOUNDS_WAIT:
			return;
		case BOUNDS_OVERFLOW:
			if (!c->discarding)
				ops->too_long(c->session, max);
			c->discarding = 1;
			evbuffer_drain(in, n);
			return;
		case BOUNDS_SKIP:
			c->discarding = 0;
			break;
		case BOUNDS_TOO_LONG:
			ops->too_long(c->session, max);
			break;
		case BOUNDS_LINE:
			line = (char *)evbuffer_pullup(
			    in, len < n ? len + 1 : len);
			if (line != NULL && bounds_line_fits(line, len, max))
				ops->line(c->session, line, len);
			else if (line != NULL)
				ops->too_long(c->session, max);
			break;
		}
		evbuffer_drain(in, len + 1);
	}
}

/* Handle c's complete lines (conn_lines()), timing their answers. */
static void
conn_process(struct conn *c)
{
	/* The lines read together are timed from now (request latency). */
	c->reply.t0 = histo_now();
	c->timing = 1;
	conn_lines(c);
	conn_time_answers(c);
}

/*
 * c's socket is readable: read once (the other connections get their turn
 * before c reads again) and handle the lines. Once the turn's slice is
 * used up, c waits on the backlog unread: reading hundreds of sockets in
 * one turn only to defer each made turns of 20 to 30 ms.
 */
static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct evbuffer_iovec v[2];
	size_t left;
	ssize_t n;
	int nv, used;

	(void)what;
	c->unread = conn_must_yield(c);
	if (c->unread) {
		conn_defer(c);
		return;
	}
	if ((nv = evbuffer_reserve_space(c->in, SERVER_READ, v, 2)) < 1)
		fatalx("out of memory reading a request");
	if ((n = readv(fd, (struct iovec *)v, nv)) > 0) {
		left = (size_t)n;
		for (used = 0; used < nv && left > 0; used++) {
			if (v[used].iov_len > left)
				v[used].iov_len = left;
			left -= v[used].iov_len;
		}
		evbuffer_commit_space(c->in, v, used);
		conn_process(c);
		return;
	}
	evbuffer_commit_space(c->in, v, 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		conn_close(c, strerror(errno));
		return;
	}
	/* The client shut its side: answer what it sent, then close. */
	c->eof = 1;
	event_del(c->rev);
	conn_process(c);
	conn_maybe_finish(c);
}

/*
 * Write c's queued answers; arm the write event (and its timeout) only if
 * the socket cannot take them all. Once the output has drained enough, a
 * paused client is read again.
 */
static void
conn_flush(struct conn *c)
{
	struct server *srv = c->srv;
	struct timeval timeout = { srv->set.write_timeout, 0 };

	if (c->closing)
		return;
	if (evbuffer_get_length(c->out) > 0 &&
	    evbuffer_write(c->out, c->fd) == -1 && errno != EAGAIN &&
	    errno != EINTR) {
		conn_close(c, strerror(errno));
		return;
	}
	if (evbuffer_get_length(c->out) > 0)
		event_add(c->wev, &timeout);
	else
		event_del(c->wev);
	if (c->paused && budget_resume(conn_queued(c), srv->set.max_output)) {
		c->paused = 0;
		if (!c->eof && !c->deferred)
			event_add(c->rev, NULL);
		conn_process(c);
	}
	conn_maybe_finish(c);
}

/* The end of a turn's callbacks: write what they queued. */
void
server_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct conn *c;

	(void)fd;
	(void)what;
	while ((c = TAILQ_FIRST(&srv->flushq)) != NULL) {
		TAILQ_REMOVE(&srv->flushq, c, flushq);
		c->flushing = 0;
		conn_flush(c);
	}
}

/* Room in c's socket again, or the write timeout. */
static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		log_event(LOG_WARNING, "client_dropped",
		    "connection=%llu why=write_timeout unread_s=%ld",
		    (unsigned long long)c->id, c->srv->set.write_timeout);
		conn_close(c, "write timeout");
		return;
	}
	conn_flush(c);
}

/*
 * May the peer of fd run admin ops? Its credentials as the kernel saw
 * them at connect (SO_PEERCRED; SO_PEERGROUPS: its first 64
 * supplementary groups, else its primary group alone).
 */
static int
conn_peer_admin(const struct server *srv, int fd)
{
	struct ucred cr;
	gid_t groups[64];
	unsigned g[64];
	socklen_t len = sizeof(cr), glen = sizeof(groups);
	size_t i, n = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1)
		return 0;
	if (srv->set.admin_gid >= 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
		n = glen / sizeof(gid_t);
	for (i = 0; i < n; i++)
		g[i] = groups[i];
	return netpolicy_peer_admin(
	    cr.uid, cr.gid, g, n, geteuid(), srv->set.admin_gid);
}

/* Set up a connection on an accepted socket; see server_int.h. */
struct conn *
conn_new(struct server *srv, int fd, int admin)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->srv = srv;
	c->id = ++srv->total;
	c->reply.ops = &conn_reply_ops;
	c->session = srv->ops->open(
	    srv->ops_arg, &c->reply, admin || conn_peer_admin(srv, fd));
	c->fd = fd;
	c->rev =
	    event_new(srv->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	c->wev = event_new(srv->base, fd, EV_WRITE, conn_write_cb, c);
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	TAILQ_INIT(&c->refs);
	if (c->rev == NULL || c->wev == NULL ||
	    event_priority_set(c->rev, SERVER_PRIORITY) == -1 ||
	    event_priority_set(c->wev, SERVER_PRIORITY) == -1 ||
	    c->in == NULL || c->out == NULL ||
	    evbuffer_add_cb(c->out, conn_out_cb, c) == NULL ||
	    evbuffer_add_cb(c->in, conn_in_cb, &srv->mem) == NULL ||
	    event_add(c->rev, NULL) == -1)
		fatalx("cannot set up a client connection");
	TAILQ_INSERT_TAIL(&srv->conns, c, link);
	srv->nconns++;
	log_debug("connection %llu: accepted", (unsigned long long)c->id);
	return c;
}

/*
 * A connection the image before handed over (handover.h): its unwritten
 * answers go out first, then its unhandled requests are handled as if
 * just read. It counts against --max-connections as an accepted one
 * does: past the cap, its unwritten answers and the refusal, then the
 * close.
 */
void
conn_adopt(void *arg, const struct handover_conn *h)
{
	struct server *srv = arg;
	int over = srv->nconns >= srv->set.max_connections;
	struct conn *c = conn_new(srv, h->fd, 0);
	const char *busy;
	size_t len = 0;

	busy = over ? srv->ops->refusal(srv->ops_arg, &len) : NULL;
	c->discarding = h->skipping;
	if (evbuffer_add(c->out, h->out, h->outlen) == -1 ||
	    (over ? evbuffer_add(c->out, busy, len)
	          : evbuffer_add(c->in, h->in, h->inlen)) == -1)
		fatalx("out of memory adopting a connection");
	if (over)
		log_event(LOG_WARNING, "connection_refused",
		    "why=max_connections open=%zu handed_over=1",
		    srv->nconns - 1);
	if (h->closing || over) {
		c->eof = 1;
		event_del(c->rev);
	}
	conn_want_flush(c);
	conn_process(c);
	conn_maybe_finish(c);
}

/* Free a closed connection: the reaper's, once no callback can use it. */
void
conn_free(struct conn *c)
{
	conn_drop_buffers(c);
	c->srv->ops->free(c->session);
	event_free(c->rev);
	event_free(c->wev);
	evbuffer_free(c->in);
	evbuffer_free(c->out);
	if (c->fd != -1)
		close(c->fd);
	free(c);
}

/*
 * Record c in ho; see server_int.h. Its requests not yet handled and its
 * answers not yet written go with it; its socket stays c's until the
 * hand-over is named (server_hand_over()).
 */
int
conn_hand_over(struct conn *c, struct handover *ho)
{
	struct handover_conn h = { c->fd, c->discarding, c->eof, NULL,
		evbuffer_get_length(c->in), NULL, evbuffer_get_length(c->out) };

	h.in = (const char *)evbuffer_pullup(c->in, (ev_ssize_t)h.inlen);
	h.out = (const char *)evbuffer_pullup(c->out, (ev_ssize_t)h.outlen);
	if ((h.inlen > 0 && h.in == NULL) || (h.outlen > 0 && h.out == NULL))
		return -1;
	return handover_add(ho, &h);
}
