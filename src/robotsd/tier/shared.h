/*
 * shared.h: the fleet loader (built with hiredis only). It implements the
 * cache's struct cache_fetch_ops on top of the shared Redis tier (tier.h)
 * and the real fetcher: a local miss reads the origin's shared value and
 * installs it when usable; else the instance that takes the origin's lock
 * fetches and publishes, and the others wait for its value. Any failure of
 * the tier falls back to a plain fetch here at once (local-only), with a
 * rate-limited log line and a counter. Owns its loads; borrows the tier,
 * the fetcher and the clock. See docs/scaling.md.
 */
#ifndef ROBOTSD_SHARED_H
#define ROBOTSD_SHARED_H

#include <stdint.h>

#include "cache/cache.h"

struct clock;
struct fetcher;
struct tier;
struct shared;

/* Counters since shared_new; the tier keeps its own (tier_stats). */
struct shared_stats {
	uint64_t hits;   /* loads answered from the tier's value */
	uint64_t misses; /* loads fetched here under the fleet's lock */
	uint64_t local;  /* loads fetched here because the tier failed */
};

/* The cache's fetch operations; the impl is a struct shared. */
extern const struct cache_fetch_ops shared_fetch_ops;

/*
 * answer_ms: when a check waiting on a fetch is answered (twice
 * --fetch-timeout plus 5 s): a wait for another instance's fetch lasts
 * while its holder renews the lock, and looks again each time this long.
 */
struct shared *shared_new(
    struct tier *, struct fetcher *, struct clock *, long answer_ms);
/*
 * Free the loads still there (cancelled ones whose tier calls tier_free
 * dropped): call after cache_free and tier_free. NULL is fine.
 */
void shared_free(struct shared *);
/* This instance's lifetime bounds and answer_ms (start, each reload). */
struct lifetime_settings;
void shared_configure(
    struct shared *, const struct lifetime_settings *, long answer_ms);
const struct shared_stats *shared_stats(const struct shared *);
struct tier *shared_tier(const struct shared *);
/*
 * Server i of the tier (the order of the --redis options): its stats name
 * "redis_up_I" and its Prometheus label server="NAME".
 */
const char *shared_server_name(const struct shared *, size_t i);
const char *shared_server_label(const struct shared *, size_t i);

#endif /* ROBOTSD_SHARED_H */
