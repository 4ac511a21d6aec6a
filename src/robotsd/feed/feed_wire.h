/*
 * feed_wire.h: the change feed (feed.h) connected to its sources: the
 * cache's version changes (cache_listen) and, with --redis, the tier's
 * feed channel, both ways. Kept apart so that feed.c needs neither.
 */
#ifndef ROBOTSD_FEED_WIRE_H
#define ROBOTSD_FEED_WIRE_H

struct cache;
struct feed;
struct tier;

/* Listen to cache, and publish on / hear from tier (NULL: no fleet). */
void feed_wire(struct feed *, struct cache *, struct tier *);

#endif /* ROBOTSD_FEED_WIRE_H */
