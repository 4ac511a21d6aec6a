/*
 * server_int.h: what server.c (the listener, the connections' lifetime,
 * the budget of all connections) and server_conn.c (one connection's I/O)
 * share inside the server. Not for the rest of robotsd: use server.h.
 */
#ifndef ROBOTSD_SERVER_INT_H
#define ROBOTSD_SERVER_INT_H

#include <sys/queue.h>
#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "base/histo.h"
#include "conn/accept.h"
#include "iface/reply.h"
#include "conn/server.h"
#include "iface/session_ops.h"
#include "base/sockfile.h"

struct conn {
	TAILQ_ENTRY(conn) link;
	TAILQ_ENTRY(conn) backlog; /* while deferred */
	struct server *srv;
	int fd;
	struct event *rev;   /* readable; added while reading */
	struct event *wev;   /* writable, with the write timeout: added only
	                        while answers wait for room in the socket */
	struct evbuffer *in; /* requests read, not yet handled */
	struct evbuffer *out;
	TAILQ_ENTRY(conn) flushq; /* while flushing */
	int flushing;             /* on the server's flush queue */
	uint64_t id;
	int closing;    /* unhooked; the reaper frees it */
	int discarding; /* inside an over-long line */
	int paused;     /* reading stopped: too much output queued */
	int eof;        /* the client shut its side: close when done */
	int unread;     /* deferred before reading what its socket has */
	struct reply reply;
	/*
	 * While its lines are handled (conn_process()), the answers to them
	 * of each reply kind, timed together once they are all queued.
	 */
	int timing;
	uint32_t timed[REPLY_KINDS];
	void *session;     /* srv->ops's */
	uint64_t deferred; /* on the backlog since turn N; 0: not */
	/*
	 * Its output as a stream: bytes ever queued and ever written or
	 * dropped, and the shared lines in it (reply.h's share), oldest
	 * first, whose bytes the total counts once, not per connection.
	 */
	uint64_t out_in, out_out;
	TAILQ_HEAD(, conn_ref) refs;
	int sharing; /* a shared line is being queued */
};

TAILQ_HEAD(conn_list, conn);

/* A shared line held by one connection's output (server_conn.c). */
struct conn_ref {
	TAILQ_ENTRY(conn_ref) link;
	struct reply_line *line;
	struct server_memory *mem;
	uint64_t start, end; /* its bytes in the connection's stream */
	int listed;          /* on the connection's refs */
	int held;            /* in its output buffer */
};

struct server {
	struct event_base *base;
	const struct session_ops *ops; /* the clients' sessions */
	void *ops_arg;
	struct server_settings set;
	struct evconnlistener *lev;
	struct event *resume;   /* re-enables accept after EMFILE */
	struct accept_pause ap; /* accept's pauses for descriptors */
	struct event *reaper;   /* frees closed connections */
	struct event *shed;     /* closes the largest holders past the budget */
	struct sockfile sock;   /* our socket file, removed at stop */
	struct evconnlistener *alev; /* the admin socket's, or NULL */
	struct sockfile asock;       /* the admin socket's file */
	struct conn_list conns;
	struct conn_list dead;
	struct conn_list flushq; /* answers queued this turn, to write */
	struct event *flush;     /* writes them, after the turn's reads */
	size_t nconns;
	uint64_t total;
	struct histo latency; /* request read to answer queued */
	struct histo latency_op[REPLY_KINDS]; /* the same, by reply_kind */
	struct server_memory mem;
	size_t dropped; /* output bytes dropped since the last trim */

	/* Request lines left for the next turn (see server_conn.c). */
	struct conn_list backlog;
	struct event *next_turn; /* takes up the backlog */
	uint64_t backlog_gen;    /* which turn's backlog */
	struct timeval turn;     /* libevent's cached time: which turn */
	uint64_t turn_start_us;  /* when this turn first handled a line */
};

/*
 * server_conn.c: a connection accepted on fd, on srv->conns; admin: on the
 * admin socket (it may run admin ops whoever its peer is).
 */
struct conn *conn_new(struct server *, int fd, int admin);
/*
 * handover_take()'s adopt: a handed-over connection on srv (arg). Past
 * --max-connections it gets its unwritten answers and the sessions'
 * refusal, and is closed; its unhandled requests are not handled.
 */
struct handover_conn;
void conn_adopt(void *srv, const struct handover_conn *);
/* Unhook c (cancelling its waiting checks); the reaper frees it. */
void conn_close(struct conn *, const char *why);
/*
 * Record c in a hand-over (handover.h): 0; -1 when it cannot be (the
 * caller closes it).
 */
struct handover;
int conn_hand_over(struct conn *, struct handover *);
/* Free a closed connection (the reaper); its fd is closed unless -1. */
void conn_free(struct conn *);
/* 1 while c's session owes an answer later (session_ops.h's waiting). */
int conn_waiting(const struct conn *);
/* Bytes of answers c has queued and its client has not read. */
size_t conn_queued(const struct conn *);
/* srv->next_turn: take up the backlog (see server_conn.c). */
void server_backlog_cb(evutil_socket_t, short, void *);
/* srv->flush: write what the turn's callbacks queued. */
void server_flush_cb(evutil_socket_t, short, void *);

#endif /* ROBOTSD_SERVER_INT_H */
