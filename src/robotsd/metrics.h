/*
 * metrics.h: the daemon's counters, in one table that both the stats op
 * and the Prometheus endpoint (--metrics ADDR:PORT, GET /metrics over
 * evhttp) read, so the two can never disagree.
 */
#ifndef ROBOTSD_METRICS_H
#define ROBOTSD_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct robotsd;
struct metrics;

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

#define METRICS_MAX 24

/* Fill out (room for METRICS_MAX) with the current values; returns how many. */
size_t metrics_collect(const struct robotsd *, struct metric *out);

/* Serve GET /metrics on addr ("HOST:PORT", "[V6]:PORT"); NULL + *cause. */
struct metrics *metrics_new(struct robotsd *, const char *addr, char **cause);
void metrics_free(struct metrics *); /* NULL is fine */

#endif /* ROBOTSD_METRICS_H */
