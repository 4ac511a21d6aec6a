/*
 * metrics.c: the counters table (metrics_collect) and the optional
 * Prometheus text endpoint on evhttp. Owns the evhttp server; reads the
 * cache, fetcher and server counters at request time.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "cache.h"
#include "config.h"
#include "fetch.h"
#include "metrics.h"
#include "parse.h"
#include "robotsd.h"
#include "server.h"
#include "xmalloc.h"

struct metrics {
	struct robotsd *rd;
	struct evhttp *http;
};

/* Append one metric to out. */
static void
metric_add(struct metric *out, size_t *n, const char *name, const char *prom,
    enum metric_type type, uint64_t value, const char *help)
{
	out[*n] = (struct metric){ name, prom, help, type, value };
	(*n)++;
}

/* The current values of every counter and gauge. */
size_t
metrics_collect(const struct robotsd *rd, struct metric *out)
{
	const struct cache_stats *s = cache_stats(rd->cache);
	double up = clock_now(&rd->clock) - rd->started;
	size_t n = 0;

	metric_add(out, &n, "cache_entries", "robotsd_cache_entries",
	    METRIC_GAUGE, s->entries, "Origins in the cache.");
	metric_add(out, &n, "cache_bytes", "robotsd_cache_bytes", METRIC_GAUGE,
	    s->bytes, "Bytes the cache holds.");
	metric_add(out, &n, "hits", "robotsd_hits_total", METRIC_COUNTER,
	    s->hits, "Checks answered from a fresh entry.");
	metric_add(out, &n, "misses", "robotsd_misses_total", METRIC_COUNTER,
	    s->misses, "Checks that found no usable entry.");
	metric_add(out, &n, "fetches", "robotsd_fetches_total", METRIC_COUNTER,
	    s->fetches, "robots.txt fetches started.");
	metric_add(out, &n, "fetch_errors", "robotsd_fetch_errors_total",
	    METRIC_COUNTER, s->fetch_errors,
	    "Fetches that ended in 5xx, 429, a network error or a timeout.");
	metric_add(out, &n, "coalesced", "robotsd_coalesced_total",
	    METRIC_COUNTER, s->coalesced,
	    "Checks that joined a fetch already in flight.");
	metric_add(out, &n, "connections", "robotsd_connections", METRIC_GAUGE,
	    server_connections(rd->server), "Client connections open.");
	metric_add(out, &n, "requests", "robotsd_requests_total",
	    METRIC_COUNTER, rd->requests, "Request lines received.");
	metric_add(out, &n, "uptime_s", "robotsd_uptime_seconds", METRIC_GAUGE,
	    up > 0 ? (uint64_t)up : 0, "Seconds since start.");
	metric_add(out, &n, "stale", "robotsd_stale_total", METRIC_COUNTER,
	    s->stale, "Checks answered from an old copy.");
	metric_add(out, &n, "evictions", "robotsd_evictions_total",
	    METRIC_COUNTER, s->evictions, "Entries evicted by the memory cap.");
	metric_add(out, &n, "waiting", "robotsd_waiting", METRIC_GAUGE,
	    s->waiting, "Checks waiting on fetches.");
	metric_add(out, &n, "overloaded", "robotsd_overloaded_total",
	    METRIC_COUNTER, s->overloaded,
	    "Checks refused because too many were waiting.");
	metric_add(out, &n, "fetches_in_flight", "robotsd_fetches_in_flight",
	    METRIC_GAUGE, fetcher_in_flight(rd->fetcher),
	    "Fetches running now.");
	metric_add(out, &n, "fetches_queued", "robotsd_fetches_queued",
	    METRIC_GAUGE, fetcher_queued(rd->fetcher),
	    "Fetches waiting for a free slot.");
	metric_add(out, &n, "connections_total", "robotsd_connections_total",
	    METRIC_COUNTER, server_connections_total(rd->server),
	    "Client connections accepted.");
	return n;
}

/* GET /metrics: the Prometheus text exposition format. */
static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	struct metric v[METRICS_MAX];
	struct evbuffer *out;
	size_t i, n;

	if ((out = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	n = metrics_collect(m->rd, v);
	for (i = 0; i < n; i++)
		evbuffer_add_printf(out,
		    "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", v[i].prom,
		    v[i].help, v[i].prom,
		    v[i].type == METRIC_COUNTER ? "counter" : "gauge",
		    v[i].prom, (unsigned long long)v[i].value);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* Anything but /metrics. */
static void
metrics_404_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, 404, NULL);
}

/* Listen for GET /metrics; see metrics.h. */
struct metrics *
metrics_new(struct robotsd *rd, const char *addr, char **cause)
{
	struct metrics *m;
	unsigned short port;
	char *host;

	if (parse_hostport(addr, &host, &port) == -1) {
		xasprintf(cause, "metrics: '%s' is not ADDR:PORT", addr);
		return NULL;
	}
	m = xcalloc(1, sizeof(*m));
	m->rd = rd;
	if ((m->http = evhttp_new(rd->base)) == NULL ||
	    evhttp_bind_socket(m->http, host, port) == -1) {
		xasprintf(cause, "metrics: cannot listen on %s", addr);
		metrics_free(m);
		free(host);
		return NULL;
	}
	free(host);
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	/* A scraper sends a short GET; anything else is cut off early. */
	evhttp_set_max_headers_size(m->http, 8192);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_timeout(m->http, 10);
	evhttp_set_cb(m->http, "/metrics", metrics_cb, m);
	evhttp_set_gencb(m->http, metrics_404_cb, m);
	return m;
}

/* Stop serving and free. */
void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	if (m->http != NULL)
		evhttp_free(m->http);
	free(m);
}
