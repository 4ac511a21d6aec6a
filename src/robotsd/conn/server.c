/*
 * server.c: the listening Unix socket (and the admin socket, whose every
 * client may run admin ops) and the life of the client connections on it:
 * accepting them (refusing past max-connections), the budget of all their
 * output together, and freeing the closed ones. What one connection reads and
 * writes is server_conn.c's.
 *
 * One budget covers the output queued for all clients together
 * (max-output-total): past half of it, a client that queues an answer while
 * holding more than the average is paused (server_conn.c); past all of it,
 * the clients holding the most are closed, largest first, until the total
 * is back under three quarters. The totals are kept by callbacks on every
 * connection's buffers, so they are exact at every add and drain.
 *
 * A connection is never freed inside a callback that code up the stack
 * still uses: conn_close() unhooks it and the reaper event frees it.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "conn/accept.h"
#include "conn/budget.h"
#include "base/handover.h"
#include "base/log.h"
#include "conn/server.h"
#include "conn/server_int.h"
#include "base/sockfile.h"
#include "base/xmalloc.h"

/* Output dropped with closed clients before the heap is trimmed. */
#define SERVER_TRIM_BYTES (4 << 20)

/* Free the connections closed during the last events. */
static void
server_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct conn *c;

	(void)fd;
	(void)what;
	while ((c = TAILQ_FIRST(&srv->dead)) != NULL) {
		TAILQ_REMOVE(&srv->dead, c, link);
		conn_free(c);
	}
	/*
	 * Clients closed with megabytes unread leave the heap full of free
	 * chunks glibc keeps; hand them back to the system.
	 */
	if (srv->dropped > SERVER_TRIM_BYTES) {
		srv->dropped = 0;
		malloc_trim(0);
	}
}

/*
 * Past the total budget, close the connections holding the most output,
 * largest first, until the total is under three quarters of the budget.
 * Runs as its own event: closing a connection cancels its waiting checks,
 * which must not happen inside the cache's or another session's callback.
 */
static void
server_shed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	size_t max = srv->set.output_budget, most;
	struct conn *c, *big;

	(void)fd;
	(void)what;
	while (budget_shed_more(srv->mem.output_bytes, max)) {
		big = NULL;
		most = 0;
		TAILQ_FOREACH(c, &srv->conns, link)
			if (conn_queued(c) > most) {
				most = conn_queued(c);
				big = c;
			}
		if (big == NULL)
			return;
		log_event(LOG_WARNING, "client_shed",
		    "connection=%llu unread_bytes=%zu all_clients_bytes=%zu "
		    "max_output_total=%zu outcome=disconnected",
		    (unsigned long long)big->id, most, srv->mem.output_bytes,
		    max);
		srv->mem.shed++;
		conn_close(big, "total output limit");
	}
}

/*
 * Close a refused connection. Closing a socket whose input is unread
 * resets it, and the client may then lose the refusal line before
 * reading it: read (a bounded amount of) what it already sent first.
 */
static void
refuse_close(int fd)
{
	char sink[4096];
	int i;

	for (i = 0; i < 16; i++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

/*
 * A new client: past --max-connections, refuse it with the sessions'
 * refusal ("overloaded" for the dispatcher's).
 */
static void
server_accept(struct server *srv, int fd, int admin)
{
	const char *busy;
	size_t len;

	accept_pause_ok(&srv->ap);
	if (srv->nconns >= srv->set.max_connections) {
		log_event(LOG_WARNING, "connection_refused",
		    "why=max_connections open=%zu", srv->nconns);
		busy = srv->ops->refusal(srv->ops_arg, &len);
		(void)!send(fd, busy, len, MSG_NOSIGNAL);
		refuse_close(fd);
		return;
	}
	conn_new(srv, fd, admin);
}

/* A client on the socket. */
static void
server_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int socklen, void *arg)
{
	(void)lev;
	(void)sa;
	(void)socklen;
	server_accept(arg, fd, 0);
}

/* A client on the admin socket: it may run admin ops. */
static void
server_admin_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int socklen, void *arg)
{
	(void)lev;
	(void)sa;
	(void)socklen;
	server_accept(arg, fd, 1);
}

/* The pause for descriptors is over (accept.h). */
static void
server_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	(void)fd;
	(void)what;
	if (srv->lev != NULL)
		evconnlistener_enable(srv->lev);
	if (srv->alev != NULL)
		evconnlistener_enable(srv->alev);
}

/* accept() failed in a way libevent does not retry: pause (accept.h). */
static void
server_error_cb(struct evconnlistener *lev, void *arg)
{
	struct server *srv = arg;

	accept_pause_start(&srv->ap, lev,
	    lev == srv->lev ? srv->alev : srv->lev, srv->resume,
	    "accept_failed", EVUTIL_SOCKET_ERROR(), srv->nconns);
}

/* The server, not yet listening; see server.h. */
struct server *
server_new(struct event_base *base, const struct session_ops *ops, void *arg,
    const struct server_settings *set)
{
	struct server *srv = xcalloc(1, sizeof(*srv));

	srv->base = base;
	srv->ops = ops;
	srv->ops_arg = arg;
	srv->set = *set;
	srv->set.path = NULL; /* server_listen() is given the caller's */
	TAILQ_INIT(&srv->conns);
	TAILQ_INIT(&srv->dead);
	TAILQ_INIT(&srv->backlog);
	TAILQ_INIT(&srv->flushq);
	srv->resume = evtimer_new(base, server_resume_cb, srv);
	srv->reaper = event_new(base, -1, 0, server_reap_cb, srv);
	srv->shed = event_new(base, -1, 0, server_shed_cb, srv);
	srv->flush = event_new(base, -1, 0, server_flush_cb, srv);
	srv->next_turn = evtimer_new(base, server_backlog_cb, srv);
	srv->backlog_gen = 1; /* 0 in conn->deferred: not deferred */
	if (srv->resume == NULL || srv->reaper == NULL || srv->shed == NULL ||
	    srv->flush == NULL || srv->next_turn == NULL ||
	    event_priority_set(srv->flush, SERVER_PRIORITY) == -1 ||
	    event_priority_set(srv->reaper, SERVER_PRIORITY) == -1 ||
	    event_priority_set(srv->shed, SERVER_PRIORITY) == -1)
		fatalx("libevent could not set up the server");
	return srv;
}

/* Listen on the clients' socket; see server.h. */
int
server_listen(
    struct server *srv, const struct server_settings *set, int fd, char **cause)
{
	if (fd == -1) {
		if ((fd = sockfile_listen(set->path, set->mode, cause)) == -1)
			return -1;
		sockfile_note(&srv->sock, set->path);
	}
	srv->lev = evconnlistener_new(srv->base, server_accept_cb, srv,
	    (set->keep_fd ? 0 : LEV_OPT_CLOSE_ON_FREE) | LEV_OPT_CLOSE_ON_EXEC,
	    0, fd);
	if (srv->lev == NULL)
		fatalx("libevent could not set up the listener");
	evconnlistener_set_error_cb(srv->lev, server_error_cb);
	return 0;
}

/* Listen on the admin socket too; see server.h. */
int
server_listen_admin(
    struct server *srv, const char *path, long gid, int fd, char **cause)
{
	if (fd == -1) {
		if ((fd = sockfile_listen_group(path, gid, cause)) == -1)
			return -1;
		sockfile_note(&srv->asock, path);
	}
	srv->alev = evconnlistener_new(srv->base, server_admin_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (srv->alev == NULL)
		fatalx("libevent could not set up the admin listener");
	evconnlistener_set_error_cb(srv->alev, server_error_cb);
	return 0;
}

/* Adopt the connections handed over; see server.h. */
void
server_take_over(struct server *srv)
{
	(void)handover_take(conn_adopt, srv);
}

/*
 * Hand the connections over, then free; see server.h. Only once the
 * hand-over is named do the sockets stop being the connections' (left
 * open for the next image); if it cannot be, they are closed with them
 * rather than left open and owned by no one.
 */
void
server_hand_over(struct server *srv)
{
	struct conn *c, *next;
	struct handover ho;
	size_t n = 0;

	if (handover_open(&ho) == -1) {
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"no memfd: the connections are closed\"");
		server_free(srv);
		return;
	}
	server_stop_accepting(srv);
	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		if (conn_hand_over(c, &ho) == 0) {
			n++;
			continue;
		}
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"a connection could not be handed over: closed\"");
		conn_close(c, "hand-over failed");
	}
	if (handover_pass_on(&ho) == -1) {
		log_event(LOG_WARNING, "handover_failed",
		    "note=\"the hand-over cannot be named: the connections "
		    "are closed\"");
		close(ho.fd);
	} else {
		TAILQ_FOREACH(c, &srv->conns, link)
			c->fd = -1;
		log_event(LOG_INFO, "handover", "connections=%zu", n);
	}
	server_free(srv);
}

/* New limits after a reload; the socket's path and mode stay. */
void
server_configure(struct server *srv, const struct server_settings *set)
{
	srv->set = *set;
	srv->set.path = NULL;
}

/* Stop accepting and remove our socket file. */
void
server_stop_accepting(struct server *srv)
{
	if (srv->alev != NULL) {
		evconnlistener_free(srv->alev);
		srv->alev = NULL;
		sockfile_unlink(&srv->asock);
	}
	if (srv->lev == NULL)
		return;
	evconnlistener_free(srv->lev);
	srv->lev = NULL;
	sockfile_unlink(&srv->sock);
}

/* Close every connection and free the server. */
void
server_free(struct server *srv)
{
	if (srv == NULL)
		return;
	server_stop_accepting(srv);
	while (!TAILQ_EMPTY(&srv->conns))
		conn_close(TAILQ_FIRST(&srv->conns), "shutdown");
	server_reap_cb(-1, 0, srv);
	event_free(srv->reaper);
	event_free(srv->shed);
	event_free(srv->flush);
	event_free(srv->next_turn);
	event_free(srv->resume);
	free(srv->sock.path);
	free(srv->asock.path);
	free(srv);
}

/* Some connection still waits on a check or has answers queued. */
int
server_busy(const struct server *srv)
{
	const struct conn *c;

	TAILQ_FOREACH(c, &srv->conns, link)
		if (c->deferred || conn_waiting(c) ||
		    evbuffer_get_length(c->out) > 0)
			return 1;
	return 0;
}

/* Connections open now. */
size_t
server_connections(const struct server *srv)
{
	return srv->nconns;
}

/* Connections accepted since start. */
uint64_t
server_connections_total(const struct server *srv)
{
	return srv->total;
}

/* Request read to answer queued, every answer (histo.h). */
const struct histo *
server_latency(const struct server *srv)
{
	return &srv->latency;
}

const struct histo *
server_latency_op(const struct server *srv, int kind)
{
	return &srv->latency_op[kind];
}

/* Bytes in the connections' buffers, and what the budget did. */
const struct server_memory *
server_memory(const struct server *srv)
{
	return &srv->mem;
}
