/*
 * server.h: the Unix-socket listener and the client connections. Owns every
 * struct conn: reads request lines (with the line limit), hands each to
 * ops.c, queues answers (with the output cap) and frees a connection only
 * at the end of the event that closed it.
 */
#ifndef ROBOTSD_SERVER_H
#define ROBOTSD_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct robotsd;
struct server;
struct conn;

/*
 * Listen on rd->conf->socket_path, or on fd when it is not -1 (socket
 * activation). A stale socket file is replaced; one that a live daemon
 * serves is not. NULL with *cause (allocated) on error.
 */
struct server *server_new(struct robotsd *, int fd, char **cause);
void server_free(struct server *); /* closes every connection; NULL ok */
/* Stop accepting and remove the socket file (SIGTERM). */
void server_stop_accepting(struct server *);
/* Answer every check still waiting with "timeout" (the drain's deadline). */
void server_expire_waiting(struct server *);
/* 1 while some connection waits on a check or has output queued. */
int server_busy(const struct server *);
size_t server_connections(const struct server *);
uint64_t server_connections_total(const struct server *);

/* Queue answer o (reference stolen) on c; may close c (output cap). */
void conn_reply(struct conn *, json_t *o);
/* Queue an answer line (len bytes, '\n' included; copied); may close c. */
void conn_send(struct conn *, const char *line, size_t len);
/* The list verdict.c keeps a connection's waiting checks on. */
struct verdict_list *conn_pending(struct conn *);
/* A waiting check of c ended; c may now finish a half-close. */
void conn_pending_done(struct conn *);

#endif /* ROBOTSD_SERVER_H */
