/*
 * server.h: the Unix-socket listener and the client connections. Owns every
 * connection: reads request lines (with the line limit) into the client's
 * session (iface/session_ops.h: the dispatcher's, or config-error mode's),
 * implements the struct reply its answers come back through (with the
 * output cap), and frees a connection only at the end of the event that
 * closed it.
 */
#ifndef ROBOTSD_SERVER_H
#define ROBOTSD_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct server;
struct session_ops;

/*
 * The event loop has SERVER_PRIORITIES priorities: the clients' sockets run
 * at SERVER_PRIORITY, before every other event (libevent gives new events
 * the one after it).
 */
#define SERVER_PRIORITIES 2
#define SERVER_PRIORITY 0

struct server_settings {
	const char *path;       /* socket to create (server_listen only) */
	unsigned mode;          /* its mode (server_listen only) */
	size_t max_line;        /* request line limit, bytes */
	size_t max_output;      /* queued answers per client, bytes */
	size_t output_budget;   /* ... for all clients together */
	long write_timeout;     /* seconds answers may stay unread */
	size_t max_connections; /* clients at once */
	long admin_gid;         /* --admin-group's gid, or -1 */
	int keep_fd; /* a socket given to server_listen() stays open */
};

/*
 * The server, not yet listening: server_listen(), server_listen_admin().
 * Every client gets a session of ops (borrowed), opened with arg.
 */
struct server *server_new(struct event_base *, const struct session_ops *,
    void *arg, const struct server_settings *);
/*
 * Listen on set->path, or on fd when it is not -1 (socket activation). A
 * stale socket file is replaced; one that a live daemon serves is not.
 * robotsd calls it last: a client that can connect finds every socket
 * robotsd has (the admin one too). -1 with *cause (allocated) on error.
 */
int server_listen(
    struct server *, const struct server_settings *, int fd, char **cause);
/*
 * Listen on the admin socket too, whose every client may run admin ops: on
 * fd when it is not -1 (passed by socket activation), else on a socket
 * file created at path with mode 0660 and group gid (0600 when gid is -1).
 * -1 with *cause (allocated) on error.
 */
int server_listen_admin(
    struct server *, const char *path, long gid, int fd, char **cause);
/*
 * Adopt the client connections the image before handed over across the
 * re-exec out of config-error mode (handover.h), if any.
 */
void server_take_over(struct server *);
/*
 * The re-exec: stop accepting and hand every connection, with the
 * requests read but not answered and the answers not yet written, to the
 * image executed next (handover.h); then server_free(). Answers a session
 * owes later (its waiting()) are not carried. Without a memfd, or when
 * the hand-over cannot be named, the connections are closed.
 */
void server_hand_over(struct server *);
/* New limits (a reload); path and mode are ignored. */
void server_configure(struct server *, const struct server_settings *);
void server_free(struct server *); /* closes every connection; NULL ok */
/* Stop accepting and remove the socket file (SIGTERM). */
void server_stop_accepting(struct server *);
/*
 * 1 while some connection waits on a check, has output queued or has lines
 * left for the next turn.
 */
int server_busy(const struct server *);
size_t server_connections(const struct server *);

/*
 * What the connections' buffers hold now, what the budget did, and how
 * often a turn's slice ran out.
 */
struct server_memory {
	size_t input_bytes;  /* requests read, not yet handled */
	size_t output_bytes; /* answers queued, not yet read by clients */
	size_t output_peak;  /* the most output_bytes has been */
	uint64_t paused;     /* connections paused by the total budget */
	uint64_t shed;       /* ... closed by it */
	uint64_t deferred;   /* connections with lines put on the backlog */
};
const struct server_memory *server_memory(const struct server *);

uint64_t server_connections_total(const struct server *);

struct histo;
const struct histo *server_latency(const struct server *);
/* The same, for the answers of one enum reply_kind (reply.h). */
const struct histo *server_latency_op(const struct server *, int kind);

#endif /* ROBOTSD_SERVER_H */
