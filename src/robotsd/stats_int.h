/*
 * stats_int.h: the seam between reading every module's numbers and
 * showing them as the counters table, so that a test can show numbers it
 * chose. Only stats.c and its unit test include it.
 */
#ifndef ROBOTSD_STATS_INT_H
#define ROBOTSD_STATS_INT_H

#include "persist/archive.h"
#include "base/looplag.h"
#include "cache/cache.h"
#include "conn/server.h"
#include "feed/feed.h"
#include "stats.h"
#ifdef HAVE_REDIS
#include "tier/shared.h"
#include "tier/tier.h"
#endif

/* Which part of the daemon a row needs; without it the row is left out. */
enum stats_part {
	STATS_ALWAYS,
	STATS_FEED,   /* src->feed */
	STATS_LIMITS, /* src->limits */
	STATS_SHARED, /* src->shared */
	STATS_TDM,    /* src->tdm, once a check asked for tdmrep.json */
};
#define STATS_PART(p) (1u << (p))

/*
 * Every module's numbers, read once per collection: the plain counters and
 * gauges of the table (stats.c) are fields of it. The families (labelled
 * samples, histograms) are read from src's modules as they are shown.
 */
struct stats_now {
	const struct stats_sources *src;
	unsigned parts; /* STATS_PART() of the parts there */
	struct cache_stats cache;
	struct cache_stats tdm; /* zero until a tdmrep.json fetch */
	struct server_memory mem;
	struct looplag_stats lag;
	struct archive_stats archive;
	struct feed_stats feed;  /* zero without a feed */
	struct stats_limits lim; /* zero without limits */
#ifdef HAVE_REDIS
	struct shared_stats shared; /* zero without --redis */
	struct tier_stats tier;
#endif
	uint64_t uptime, requests, connections_total;
	size_t connections, in_flight, queued, fetch_bytes;
};

/* Show now as the counters table (out has room for METRICS_MAX). */
size_t stats_show(const struct stats_now *now, struct metric *out);

#endif /* ROBOTSD_STATS_INT_H */
