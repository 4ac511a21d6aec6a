/*
 * metrics.h: the Prometheus endpoint (--metrics ADDR:PORT, GET /metrics
 * and GET /healthz over evhttp). It formats the counters table handed to it
 * (stats.h), the same one the stats op answers with.
 */
#ifndef ROBOTSD_METRICS_H
#define ROBOTSD_METRICS_H

#include "base/metric.h"

struct event_base;
struct metrics;

/* Serve GET /metrics on addr ("HOST:PORT", "[V6]:PORT"); NULL + *cause. */
struct metrics *metrics_new(struct event_base *, const char *addr, stats_fn,
    void *stats_arg, char **cause);
void metrics_free(struct metrics *); /* NULL is fine */

/* The daemon's state, as GET /healthz answers it (200 only if serving). */
enum metrics_health {
	METRICS_STARTING,
	METRICS_SERVING,
	METRICS_STOPPING,
};
void metrics_set_health(struct metrics *, enum metrics_health); /* NULL ok */

#endif /* ROBOTSD_METRICS_H */
