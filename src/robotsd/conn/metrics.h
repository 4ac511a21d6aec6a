/*
 * metrics.h: the Prometheus endpoint (--metrics ADDR:PORT, GET /metrics
 * and GET /healthz over HTTP/1.x by libmicrohttpd, every resource
 * bounded). It formats the counters table handed to it (stats.h), the
 * same one the stats op answers with.
 */
#ifndef ROBOTSD_METRICS_H
#define ROBOTSD_METRICS_H

#include "iface/metric.h"

struct event_base;
struct metrics;

/*
 * Serve GET /metrics on addr ("HOST:PORT", "[V6]:PORT") to at most
 * max_conns connections at once, a quarter of them (at least one) from
 * one address; NULL + *cause.
 */
struct metrics *metrics_new(struct event_base *, const char *addr,
    size_t max_conns, stats_fn, void *stats_arg, char **cause);
void metrics_free(struct metrics *); /* NULL is fine */

/* The daemon's state, as GET /healthz answers it (200 only if serving). */
enum metrics_health {
	METRICS_STARTING,
	METRICS_SERVING,
	METRICS_STOPPING,
};
void metrics_set_health(struct metrics *, enum metrics_health); /* NULL ok */

/*
 * A pure rule, exposed for its test: whether a request's Host fields pass
 * RFC 9112 3.2 (else 400). An HTTP/1.1 request (http11) has one, no
 * request more than one (n: how many field lines came), and its value is
 * uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2), empty allowed,
 * whitespace around it aside. host: the first one's value, NULL if n is 0.
 */
int metrics_host_ok(int http11, size_t n, const char *host);

#endif /* ROBOTSD_METRICS_H */
