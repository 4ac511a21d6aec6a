/*
 * metric.h: the shape of the daemon's counters table, which both the stats
 * op and the Prometheus endpoint read, so the two can never disagree. The
 * table is filled at the top (stats.c reads each module's own counters)
 * and handed down as a stats_fn: the dispatcher and metrics.c never reach
 * into the modules that own the numbers. Types only.
 */
#ifndef ROBOTSD_METRIC_H
#define ROBOTSD_METRIC_H

#include <stddef.h>
#include <stdint.h>

struct histo;

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM, /* histo is set; value unused */
};

/*
 * One sample. Samples of one labelled family (or of a histogram) follow
 * each other with the same prom name; only those with a name are in the
 * stats op (plain numbers: no labels, no histogram).
 */
struct metric {
	const char *name; /* the stats op's field name, or NULL */
	const char *prom; /* the Prometheus name, "robotsd_" prefixed */
	const char *help;
	enum metric_type type;
	uint64_t value;
	const char *label; /* Prometheus labels ('key="value",...'), or NULL */
	const struct histo *histo; /* METRIC_HISTOGRAM */
};

#define METRICS_MAX 512

/* Fill out (room for METRICS_MAX) with the current values; how many. */
typedef size_t (*stats_fn)(void *arg, struct metric *out);

#endif /* ROBOTSD_METRIC_H */
