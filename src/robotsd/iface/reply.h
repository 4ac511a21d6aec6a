/*
 * reply.h: how the layers below the connection answer a client. The
 * connection layer (server_conn.c) implements it; the dispatcher and the
 * check path call only through it, so nothing below the server calls back
 * up into it.
 */
#ifndef ROBOTSD_REPLY_H
#define ROBOTSD_REPLY_H

#include <stddef.h>

struct reply;
struct reply_stamp;

/*
 * A line many clients are sent alike (a change feed event), queued by
 * reference rather than copied: refs counts its holders, its maker
 * included; the one that lets go last calls release(). Only the loop's
 * thread touches it.
 */
struct reply_line {
	const char *p;
	size_t len;
	unsigned long refs;
	void (*release)(struct reply_line *);
	/* The connection layer's: connections holding it (counted once). */
	unsigned long queued;
};

struct reply_ops {
	/*
	 * Queue one answer line (len bytes, '\n' included; copied), the
	 * answer to the request stamp tells (for the latency metric), or
	 * with stamp NULL a line that answers no request (the change
	 * feed's), not timed. May decide to close the client (output cap):
	 * later lines are dropped.
	 */
	void (*send)(struct reply *, const struct reply_stamp *stamp,
	    const char *line, size_t len);
	/*
	 * Optional: the same for a line in memory from malloc(), which the
	 * connection takes over and frees once written, instead of a copy.
	 */
	void (*give)(struct reply *, const struct reply_stamp *stamp,
	    char *line, size_t len);
	/* A check that waited was answered: a half-closed client may end. */
	void (*settled)(struct reply *);
	/*
	 * For the change feed: bytes that may still be queued before the
	 * output cap; and finish(): read no more, close once all is written.
	 */
	size_t (*room)(struct reply *);
	void (*finish)(struct reply *);
	/*
	 * Optional: send() for a shared line, without a copy: a reference is
	 * taken (refs) and dropped once it is written or the client goes.
	 * Its bytes count against this client's output cap as a copy would,
	 * and once in the output of all clients together however many hold
	 * them. A shared line answers no request: it is not timed.
	 */
	void (*share)(struct reply *, struct reply_line *);
};

/* What an answer answers, for the latency metric by operation. */
enum reply_kind {
	REPLY_OTHER,        /* a line refused before its op (bad_json...) */
	REPLY_CHECK_CACHED, /* a check answered at once */
	REPLY_CHECK_WAITED, /* a check that waited on a fetch */
	REPLY_INSPECT,
	REPLY_PURGE,
	REPLY_STATS,
	REPLY_PING, /* and the hidden clock */
	REPLY_HISTORY,
	REPLY_WATCH, /* the subscription's answer, not its events */
	REPLY_KINDS
};

/*
 * Which request an answer answers, handed with the answer (send(),
 * give()): the latency metric counts from t0 into the histogram of kind.
 */
struct reply_stamp {
	double t0;          /* when its request line was read (monotonic s) */
	unsigned char kind; /* enum reply_kind */
};

struct reply {
	const struct reply_ops *ops;
	/*
	 * When the lines the server hands the session now were read
	 * (monotonic seconds): set by the server only, before it hands
	 * them over; the session stamps each request's answers with it.
	 */
	double t0;
};

#endif /* ROBOTSD_REPLY_H */
