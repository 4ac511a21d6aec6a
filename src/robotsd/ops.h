/*
 * ops.h: the protocol's operations. Turns a decoded request plus the cache
 * into an answer: check (one URL or a batch, waiting on fetches when it
 * must), inspect, purge, stats, ping, and the tests' clock. Owns the
 * waiting checks; a closing connection cancels its own.
 */
#ifndef ROBOTSD_OPS_H
#define ROBOTSD_OPS_H

#include <sys/queue.h>

struct robotsd;
struct conn;
struct request;
struct ops_pending;

TAILQ_HEAD(ops_pending_list, ops_pending);

/* Answer req on c, now or when the fetches it waits on end; clears req. */
void ops_dispatch(struct robotsd *, struct conn *, struct request *req);
/* c is closing: drop its waiting checks without answering them. */
void ops_cancel_all(struct ops_pending_list *);

#endif /* ROBOTSD_OPS_H */
