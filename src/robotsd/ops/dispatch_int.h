/*
 * dispatch_int.h: what the dispatcher's parts share: the dispatcher itself,
 * the op switch (dispatch.c), the small ops (dispatch_ops.c) and the
 * sessions that read request lines (dispatch_session.c). Nothing else
 * includes it.
 */
#ifndef ROBOTSD_DISPATCH_INT_H
#define ROBOTSD_DISPATCH_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

#include "wire/buf.h"
#include "ops/checkop.h"
#include "ops/dispatch.h"
#include "wire/proto.h"
#include "wire/wire_fast.h"

TAILQ_HEAD(session_list, session);

struct dispatch {
	struct cache *cache;
	struct clock *clock;
	stats_fn stats;
	void *stats_arg;
	struct check_env env;
	struct check_answers answers;
	int test_clock;
	struct session_list sessions;
	struct feed *feed; /* or NULL */
	uint64_t requests;
	/*
	 * Reused space, one for all clients: lines are answered one at a
	 * time, and send() copies an answer out (a large one is handed over
	 * by give() and the space made anew).
	 */
	struct buf answer;
	struct buf unescaped; /* a line's strings with escapes */
	struct wire_str urls[PROTO_MAX_URLS]; /* a batch's URLs */
};

struct reply_stamp;

/*
 * Answer one decoded request (the op switch), its line read at t0; clears
 * req.
 */
void dispatch_request(
    struct dispatch *, struct session *, double t0, struct request *);

/*
 * Send what b holds on s as the answer to the request st tells, or an
 * internal error when b failed; clears b.
 */
void dispatch_send(struct session *, const struct reply_stamp *st,
    const json_t *id, struct buf *);
/* Send an error answer to the request st tells. */
void dispatch_error(struct session *, const struct reply_stamp *st,
    const json_t *id, enum proto_err, const char *msg);

/* The small ops, each answering req on s (its answers stamped st). */
void dispatch_inspect(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);
void dispatch_history(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);
/* The session is closing: its history ops on the tier go unanswered. */
void dispatch_history_cancel_all(struct session *);
void dispatch_purge(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);
void dispatch_stats(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);
/* ping and the tests' clock. */
void dispatch_simple(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);
void dispatch_watch(struct dispatch *, struct session *,
    const struct reply_stamp *st, struct request *);

#endif /* ROBOTSD_DISPATCH_INT_H */
