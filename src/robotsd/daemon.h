/*
 * daemon.h: the daemon's one context object, passed down from main() so
 * that no module keeps hidden globals: the event base, the live config and
 * the modules it wires together.
 */
#ifndef ROBOTSD_DAEMON_H
#define ROBOTSD_DAEMON_H

#include <stdint.h>

#include "base/clock.h"
#include "stats.h"

struct event_base;
struct event;
struct config;
struct server;
struct cache;
struct fetcher;
struct signals;
struct metrics;
struct dispatch;
struct saver;
struct tier;
struct shared;
struct looplag;
struct lifecycle;

struct robotsd {
	struct event_base *base;
	struct config *conf;
	struct server *server;
	struct dispatch *dispatch;
	struct fetcher *fetcher;
	struct cache *cache;
	struct cache *tdm;       /* tdmrep.json's; NULL with --tdmrep off */
	struct metrics *metrics; /* NULL without --metrics */
	struct saver *saver;     /* state file saves */
	struct tier *tier;       /* NULL without --redis */
	struct shared *shared;   /* the fleet loader, NULL without --redis */
	struct looplag *looplag; /* the event loop's lateness */
	struct archive *archive; /* NULL without --archive-dir */
	struct feed *feed;       /* the change feed (watch) */
	struct clock clock;
	double started;             /* clock seconds at start, for uptime */
	struct stats_sources stats; /* what the counters table reads */
	struct stats_limits limits; /* the configured limits, as gauges */
	struct signals *signals;
	struct lifecycle *lc; /* stop, drain, reload and saves */
	char where[256]; /* the socket served, as systemctl status shows it */
};

#endif /* ROBOTSD_DAEMON_H */
