/*
 * metrics_text.h: the /metrics body (metrics_text.c), apart from the HTTP
 * server that answers with it (metrics.c, which alone includes this).
 */
#ifndef ROBOTSD_METRICS_TEXT_H
#define ROBOTSD_METRICS_TEXT_H

#include "iface/metric.h"

struct evbuffer;

/*
 * Append the /metrics body to out: the counters table stats(stats_arg)
 * fills, robotsd_build_info and the process metrics.
 */
void metrics_body(stats_fn stats, void *stats_arg, struct evbuffer *out);

#endif /* ROBOTSD_METRICS_TEXT_H */
