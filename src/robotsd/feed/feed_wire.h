/*
 * feed_wire.h: the change feed (feed.h) connected to its sources: the
 * cache's version changes (cache_listen) and, with --redis, the tier's
 * feed channel, both ways, and the loads of the changes another instance
 * told of (cache_refresh). Kept apart so that feed.c needs neither.
 */
#ifndef ROBOTSD_FEED_WIRE_H
#define ROBOTSD_FEED_WIRE_H

struct cache;
struct feed;
struct tier;

/*
 * Listen to robots.txt's cache and to tdmrep.json's (tdm, NULL with
 * --tdmrep off), and publish on / hear from tier (NULL: no fleet), the
 * messages tagged under the fleet's key (TIER_KEY_LEN bytes, or NULL).
 */
void feed_wire(struct feed *, struct cache *, struct cache *tdm, struct tier *,
    const unsigned char *key);

#endif /* ROBOTSD_FEED_WIRE_H */
