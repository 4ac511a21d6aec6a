/*
 * session_ops.h: what the line server (conn/server.h) does with a client's
 * request lines, given to it at server_new(). The server owns the socket,
 * the framing, the line and output caps and the accept policy; a session
 * answers the lines, through the struct reply (reply.h) it was opened
 * with. The daemon's dispatcher is one implementation (ops/dispatch.h),
 * config-error mode, which answers every line with the error "config",
 * the other (conn/cfgerr.h).
 */
#ifndef ROBOTSD_SESSION_OPS_H
#define ROBOTSD_SESSION_OPS_H

#include <stddef.h>

struct reply;

struct session_ops {
	/*
	 * A session for a new client, answering through out (which lives
	 * until free()); admin: it may run admin ops. arg is server_new()'s.
	 */
	void *(*open)(void *arg, struct reply *out, int admin);
	/* One request line, without its '\n' (a '\r' may end it). */
	void (*line)(void *session, const char *line, size_t len);
	/* A line over limit bytes, skipped: answer it once. */
	void (*too_long)(void *session, size_t limit);
	/* Optional: 1 while an answer is owed later (a waiting check). */
	int (*waiting)(const void *session);
	/*
	 * Optional: the client is going; answers from now on are dropped.
	 * free() follows once no callback up the stack can use the session.
	 */
	void (*close)(void *session);
	void (*free)(void *session);
	/*
	 * The one answer of a client refused past max-connections, '\n'
	 * included, in *len bytes; valid until the next call.
	 */
	const char *(*refusal)(void *arg, size_t *len);
};

#endif /* ROBOTSD_SESSION_OPS_H */
