/*
 * stats.h: the daemon's counters as one table, which both the stats op and
 * the Prometheus endpoint read, so the two can never disagree. The table is
 * filled at the top (stats.c reads each module's own counters) and handed
 * down as a function: the dispatcher and metrics.c never reach into the
 * modules that own the numbers.
 */
#ifndef ROBOTSD_STATS_H
#define ROBOTSD_STATS_H

#include <stddef.h>
#include <stdint.h>

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
};

struct metric {
	const char *name; /* the stats op's field name */
	const char *prom; /* the Prometheus name, "robotsd_" prefixed */
	const char *help;
	enum metric_type type;
	uint64_t value;
};

#define METRICS_MAX 32

/* Fill out (room for METRICS_MAX) with the current values; how many. */
typedef size_t (*stats_fn)(void *arg, struct metric *out);

struct robotsd;
/* The table for this daemon (stats.c); arg is the struct robotsd. */
size_t stats_collect(void *rd, struct metric *out);

#endif /* ROBOTSD_STATS_H */
