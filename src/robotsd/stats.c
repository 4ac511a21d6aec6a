/*
 * stats.c: the counters table (metric.h), filled from each module's own
 * counters. It sits at the top with main(): the only place besides it that
 * knows every module, so that no module has to know another's internals.
 */
#include <config.h>

#include "cache.h"
#include "clock.h"
#include "dispatch.h"
#include "fetch.h"
#include "looplag.h"
#include "server.h"
#include "stats.h"

/* Append one metric to out. */
static void
metric_add(struct metric *out, size_t *n, const char *name, const char *prom,
    enum metric_type type, uint64_t value, const char *help)
{
	out[*n] = (struct metric){ name, prom, help, type, value };
	(*n)++;
}

/* Memory by use (what the budgets bound) and the loop's lateness. */
static size_t
stats_memory(const struct stats_sources *src, struct metric *out, size_t n)
{
	const struct server_memory *m = server_memory(src->server);
	struct looplag_stats l = looplag_stats(src->looplag);

	metric_add(out, &n, "fetch_bytes", "robotsd_fetch_bytes", METRIC_GAUGE,
	    fetcher_bytes(src->fetcher),
	    "Bytes the fetches running and queued hold, curl's aside.");
	metric_add(out, &n, "client_input_bytes", "robotsd_client_input_bytes",
	    METRIC_GAUGE, m->input_bytes,
	    "Bytes of requests read from clients, not yet handled.");
	metric_add(out, &n, "client_output_bytes",
	    "robotsd_client_output_bytes", METRIC_GAUGE, m->output_bytes,
	    "Bytes of answers queued for clients, not yet read.");
	metric_add(out, &n, "client_output_peak_bytes",
	    "robotsd_client_output_peak_bytes", METRIC_GAUGE, m->output_peak,
	    "The most client_output_bytes has been since start.");
	metric_add(out, &n, "clients_paused", "robotsd_clients_paused_total",
	    METRIC_COUNTER, m->paused,
	    "Connections no longer read past half of max-output-total.");
	metric_add(out, &n, "clients_shed", "robotsd_clients_shed_total",
	    METRIC_COUNTER, m->shed,
	    "Connections closed past max-output-total.");
	metric_add(out, &n, "loop_lag_p99_us", "robotsd_loop_lag_p99_micros",
	    METRIC_GAUGE, l.p99_us,
	    "99th percentile lateness of a 10 ms timer, last 1000 ticks.");
	metric_add(out, &n, "loop_lag_max_us", "robotsd_loop_lag_max_micros",
	    METRIC_GAUGE, l.max_us,
	    "Largest lateness of a 10 ms timer, last 1000 ticks.");
	metric_add(out, &n, "loop_late", "robotsd_loop_late_total",
	    METRIC_COUNTER, l.late,
	    "Ticks of the 10 ms timer over 10 ms late.");
	return n;
}

/* The current values of every counter and gauge. */
size_t
stats_collect(void *arg, struct metric *out)
{
	const struct stats_sources *src = arg;
	const struct cache_stats *s = cache_stats(src->cache);
	double up = clock_now(src->clock) - src->started;
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
	    server_connections(src->server), "Client connections open.");
	metric_add(out, &n, "requests", "robotsd_requests_total",
	    METRIC_COUNTER, dispatch_requests(src->dispatch),
	    "Request lines received.");
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
	    METRIC_GAUGE, fetcher_in_flight(src->fetcher),
	    "Fetches running now.");
	metric_add(out, &n, "fetches_queued", "robotsd_fetches_queued",
	    METRIC_GAUGE, fetcher_queued(src->fetcher),
	    "Fetches waiting for a free slot.");
	metric_add(out, &n, "connections_total", "robotsd_connections_total",
	    METRIC_COUNTER, server_connections_total(src->server),
	    "Client connections accepted.");
	return stats_memory(src, out, n);
}
