/*
 * ops.h: the protocol's operations. Turns a decoded request plus the cache
 * into an answer: check (in verdict.c), inspect, purge, stats, ping, and the
 * tests' clock.
 */
#ifndef ROBOTSD_OPS_H
#define ROBOTSD_OPS_H

struct robotsd;
struct conn;
struct request;
/* Answer req on c, now or when the fetches it waits on end; clears req. */
void ops_dispatch(struct robotsd *, struct conn *, struct request *req);

#endif /* ROBOTSD_OPS_H */
