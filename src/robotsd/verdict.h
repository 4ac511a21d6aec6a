/*
 * verdict.h: the check op, the daemon's hot path. Parses each URL, asks the
 * cache, and answers at once (hit, stale, error) or parks a verdict_pending
 * on the connection until every fetch it waits on has ended or its
 * deadline passes. Answers are written as JSON text directly (proto.h's
 * pbuf), not built as jansson objects. Owns the pendings; a connection
 * only lists them.
 */
#ifndef ROBOTSD_VERDICT_H
#define ROBOTSD_VERDICT_H

#include <sys/queue.h>

struct robotsd;
struct conn;
struct request;
struct verdict_pending;

TAILQ_HEAD(verdict_list, verdict_pending);

/* Answer a check request on c, now or when its fetches end. */
void verdict_op(struct robotsd *, struct conn *, struct request *);
/* Answer the waiting checks of a list now with "timeout" (shutdown). */
void verdict_expire_all(struct verdict_list *);
/* c is closing: drop its waiting checks without answering them. */
void verdict_cancel_all(struct verdict_list *);

#endif /* ROBOTSD_VERDICT_H */
