/*
 * dispatch.h: request lines -> answers. A session (dispatch_session.c)
 * decodes each line (wire/wire_fast.h, wire/proto.h), the op switch
 * (dispatch.c) hands checks to checkop.c and the small ops to
 * dispatch_ops.c. One session per client; answers leave only through the
 * client's struct reply.
 */
#ifndef ROBOTSD_DISPATCH_H
#define ROBOTSD_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "iface/metric.h"

struct event_base;
struct cache;
struct clock;
struct reply;
struct session;
struct session_ops;
struct dispatch;

struct dispatch_settings {
	int test_clock;      /* accept the "clock" op (tests only) */
	double wait_timeout; /* seconds a check may wait on fetches */
};

struct dispatch *dispatch_new(struct event_base *, struct cache *,
    struct clock *, stats_fn, void *stats_arg);
void dispatch_free(struct dispatch *); /* sessions must be gone */
void dispatch_configure(struct dispatch *, const struct dispatch_settings *);
/* The change feed the watch op subscribes to (none: watch is refused). */
struct feed;
void dispatch_set_feed(struct dispatch *, struct feed *);
/* tdmrep.json's cache (NULL: --tdmrep off) and enum tdm_mode. */
void dispatch_set_tdm(struct dispatch *, struct cache *tdm, int mode);

/* A new client whose answers go to out; without the admin right. */
struct session *session_new(struct dispatch *, struct reply *out);
/* Give s the admin right (purge), or take it. */
void session_set_admin(struct session *, int admin);
/*
 * The client is going: drop its waiting checks unanswered. The session
 * stays valid (answers to it are dropped) until session_free(), which the
 * connection layer calls once no callback up the stack can still use it.
 */
void session_close(struct session *);
void session_free(struct session *); /* NULL is fine */
/* Answer one request line (without its '\n'; '\r' and blanks allowed). */
void session_line(struct session *, const char *line, size_t len);
/* Answer a line that was longer than limit bytes with line_too_long. */
void session_too_long(struct session *, size_t limit);
/* 1 while some check of the client waits on a fetch. */
int session_waiting(const struct session *);
/*
 * The sessions above as the line server takes them (iface/session_ops.h),
 * opened with the struct dispatch; a client refused past max-connections
 * is answered "overloaded".
 */
extern const struct session_ops dispatch_session_ops;

/* Answer every waiting check of every client now with "timeout". */
void dispatch_expire_waiting(struct dispatch *);
/* Request lines seen (blank lines excluded). */
uint64_t dispatch_requests(const struct dispatch *);
struct check_answers;
const struct check_answers *dispatch_answers(const struct dispatch *);

#endif /* ROBOTSD_DISPATCH_H */
