/*
 * stats.h: the counters table of this daemon (metric.h's shape), filled
 * from each module's own counters. Only main() wires it in.
 */
#ifndef ROBOTSD_STATS_H
#define ROBOTSD_STATS_H

#include "iface/metric.h"

struct archive;
struct cache;
struct clock;
struct dispatch;
struct feed;
struct fetcher;
struct looplag;
struct server;
struct shared;

/* The modules whose counters the table shows, all set before it is read. */
/* The configured limits, exported as gauges (updated at each reload). */
struct stats_limits {
	uint64_t cache_max_bytes, max_waiting, max_connections, max_fetches;
};

struct stats_sources {
	const struct cache *cache;
	const struct fetcher *fetcher;
	const struct dispatch *dispatch;
	const struct server *server;
	const struct clock *clock;
	double started;              /* clock seconds at start, for uptime */
	const struct shared *shared; /* the fleet loader, NULL: no --redis */
	const struct looplag *looplag;
	const struct archive *archive; /* NULL: no --archive-dir */
	const struct feed *feed;       /* the change feed */
	const struct stats_limits *limits;
	const struct cache *tdm; /* tdmrep.json's, NULL: --tdmrep off */
};

/* A stats_fn; arg is a struct stats_sources. */
size_t stats_collect(void *sources, struct metric *out);

#endif /* ROBOTSD_STATS_H */
