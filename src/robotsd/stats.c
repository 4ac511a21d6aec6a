/*
 * stats.c: the counters table (metric.h), filled from each module's own
 * counters. It sits at the top with main(): the only place besides it that
 * knows every module, so that no module has to know another's internals.
 */
#include <config.h>

#include <stdio.h>

#include "fetch/archive.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "ops/dispatch.h"
#include "fetch/fetch.h"
#include "feed/feed.h"
#include "cache/fetchlog.h"
#include "base/looplag.h"
#include "base/reply.h"
#include "conn/server.h"
#include "stats.h"
#ifdef HAVE_REDIS
#include "tier/shared.h"
#include "tier/tier.h"
#include "tier/tier_url.h"
#endif

/*
 * Append m to out, which has room for METRICS_MAX: past that the rest is
 * left out (every family robotsd has fits, with 32 Redis servers).
 */
static void
metric_put(struct metric *out, size_t *n, struct metric m)
{
	if (*n < METRICS_MAX)
		out[(*n)++] = m;
}

/* Append one metric to out. */
static void
metric_add(struct metric *out, size_t *n, const char *name, const char *prom,
    enum metric_type type, uint64_t value, const char *help)
{
	metric_put(out, n,
	    (struct metric){ name, prom, help, type, value, NULL, NULL });
}

/* Append one sample of a labelled family (not in the stats op). */
static void
metric_label(struct metric *out, size_t *n, const char *prom,
    const char *labels, uint64_t value, const char *help)
{
	metric_put(out, n,
	    (struct metric){
	        NULL, prom, help, METRIC_COUNTER, value, labels, NULL });
}

/* Append a Prometheus-only sample without labels (not in the stats op). */
static void
metric_prom(struct metric *out, size_t *n, const char *prom,
    enum metric_type type, uint64_t value, const char *help)
{
	metric_put(out, n,
	    (struct metric){ NULL, prom, help, type, value, NULL, NULL });
}

/* Append a histogram (not in the stats op); labels may be NULL. */
static void
metric_histo_label(struct metric *out, size_t *n, const char *prom,
    const char *labels, const struct histo *h, const char *help)
{
	metric_put(out, n,
	    (struct metric){
	        NULL, prom, help, METRIC_HISTOGRAM, 0, labels, h });
}

static void
metric_histo(struct metric *out, size_t *n, const char *prom,
    const struct histo *h, const char *help)
{
	metric_histo_label(out, n, prom, NULL, h, help);
}

/* The verdicts by source and reason. */
static void
stats_answers(const struct stats_sources *src, struct metric *out, size_t *n)
{
	static char labels[CHECK_SOURCES][CHECK_REASONS][64];
	const struct check_answers *a = dispatch_answers(src->dispatch);
	size_t i, j;

	for (i = 0; i < CHECK_SOURCES; i++)
		for (j = 0; j < CHECK_REASONS; j++) {
			if (labels[i][j][0] == '\0')
				snprintf(labels[i][j], sizeof(labels[i][j]),
				    "source=\"%s\",reason=\"%s\"",
				    check_source_names[i],
				    check_reason_names[j]);
			metric_label(out, n, "robotsd_answers_total",
			    labels[i][j], a->n[i][j],
			    "Verdicts given, by source and reason.");
		}
	metric_label(out, n, "robotsd_verdicts_total", "verdict=\"allowed\"",
	    a->verdicts[0], "Verdicts given, allowed or disallowed.");
	metric_label(out, n, "robotsd_verdicts_total", "verdict=\"disallowed\"",
	    a->verdicts[1], "Verdicts given, allowed or disallowed.");
}

/* The configured limits, for dashboards and alerts to compare with. */
static void
stats_limits(const struct stats_limits *l, struct metric *out, size_t *n)
{
	if (l == NULL)
		return;
	metric_prom(out, n, "robotsd_limit_cache_max_bytes", METRIC_GAUGE,
	    l->cache_max_bytes, "The cache-max-bytes setting.");
	metric_prom(out, n, "robotsd_limit_max_waiting", METRIC_GAUGE,
	    l->max_waiting, "The max-waiting setting.");
	metric_prom(out, n, "robotsd_limit_max_connections", METRIC_GAUGE,
	    l->max_connections, "The max-connections setting.");
	metric_prom(out, n, "robotsd_limit_max_fetches", METRIC_GAUGE,
	    l->max_fetches, "The max-fetches setting.");
}

/* The answer times by operation, checks answered at once and waited apart. */
static void
stats_latency_ops(
    const struct stats_sources *src, struct metric *out, size_t *n)
{
	static const char *const labels[REPLY_KINDS] = {
		[REPLY_OTHER] = "op=\"other\"",
		[REPLY_CHECK_CACHED] = "op=\"check\",waited=\"no\"",
		[REPLY_CHECK_WAITED] = "op=\"check\",waited=\"yes\"",
		[REPLY_INSPECT] = "op=\"inspect\"",
		[REPLY_PURGE] = "op=\"purge\"",
		[REPLY_STATS] = "op=\"stats\"",
		[REPLY_PING] = "op=\"ping\"",
		[REPLY_HISTORY] = "op=\"history\"",
		[REPLY_WATCH] = "op=\"watch\"",
	};
	size_t i;

	for (i = 0; i < REPLY_KINDS; i++)
		metric_histo_label(out, n, "robotsd_op_duration_seconds",
		    labels[i], server_latency_op(src->server, (int)i),
		    "From a request line read to its answer queued, by op; "
		    "checks answered at once (waited=no) and checks that "
		    "waited on a fetch (waited=yes) apart.");
}

/* The fetch metrics: backoff, outcome classes, durations. */
static void
stats_fetches(const struct stats_sources *src, struct metric *out, size_t *n)
{
	static char labels[FC_COUNT][32];
	const struct fetch_stats *f = cache_fetch_stats(src->cache);
	size_t i;

	metric_add(out, n, "backoff", "robotsd_origins_in_backoff",
	    METRIC_GAUGE, cache_stats(src->cache)->backoff,
	    "Origins failing, waiting for their next retry.");
	for (i = 0; i < FC_COUNT; i++) {
		if (labels[i][0] == '\0')
			snprintf(labels[i], sizeof(labels[i]), "class=\"%s\"",
			    fetch_class_name((enum fetch_class)i));
		metric_label(out, n, "robotsd_fetch_outcomes_total", labels[i],
		    f->by_class[i], "Fetches ended, by outcome class.");
	}
	metric_histo(out, n, "robotsd_fetch_duration_seconds", &f->seconds,
	    "Duration of robots.txt transfers.");
	metric_histo(out, n, "robotsd_request_duration_seconds",
	    server_latency(src->server),
	    "From a request line read to its answer queued, every op.");
	stats_latency_ops(src, out, n);
}

#ifdef HAVE_REDIS
/* The shared tier's counters, and each Redis server's state. */
static void
stats_shared(const struct shared *sh, struct metric *out, size_t *n)
{
	const struct shared_stats *s = shared_stats(sh);
	const struct tier *t = shared_tier(sh);
	const struct tier_stats *ts = tier_stats(t);
	struct tier_server_stats ss;
	size_t i;

	metric_add(out, n, "shared_hits", "robotsd_shared_hits_total",
	    METRIC_COUNTER, s->hits, "Misses answered from the shared tier.");
	metric_add(out, n, "shared_misses", "robotsd_shared_misses_total",
	    METRIC_COUNTER, s->misses,
	    "Misses fetched here for the fleet, under its lock.");
	metric_add(out, n, "shared_local", "robotsd_shared_local_total",
	    METRIC_COUNTER, s->local,
	    "Misses fetched here alone because the shared tier failed.");
	metric_add(out, n, "shared_publishes", "robotsd_shared_publishes_total",
	    METRIC_COUNTER, ts->publishes, "Entries published to Redis.");
	metric_add(out, n, "shared_lock_waits",
	    "robotsd_shared_lock_waits_total", METRIC_COUNTER, ts->lock_waits,
	    "Waits for another instance's fetch.");
	metric_add(out, n, "shared_lock_takeovers",
	    "robotsd_shared_lock_takeovers_total", METRIC_COUNTER,
	    ts->lock_takeovers, "Locks taken after a holder never published.");
	metric_add(out, n, "shared_corrupt", "robotsd_shared_corrupt_total",
	    METRIC_COUNTER, ts->corrupt,
	    "Shared values refused: corrupt, truncated or another version.");
	metric_add(out, n, "shared_untagged", "robotsd_shared_untagged_total",
	    METRIC_COUNTER, ts->untagged,
	    "Shared values refused for want of a valid tag (--redis-key-file); "
	    "also in shared_corrupt.");
	metric_add(out, n, "redis_errors", "robotsd_redis_errors_total",
	    METRIC_COUNTER, ts->errors,
	    "Redis calls failed: error reply, lost or no connection.");
	metric_add(out, n, "redis_timeouts", "robotsd_redis_timeouts_total",
	    METRIC_COUNTER, ts->timeouts,
	    "Redis calls unanswered in time (--redis-timeout, or what was left "
	    "of a miss's).");
	metric_add(out, n, "redis_protocol_errors",
	    "robotsd_redis_protocol_errors_total", METRIC_COUNTER,
	    ts->protocol_errors,
	    "Redis connections closed for a reply robotsd did not ask for, of "
	    "the wrong shape or too large.");
	/* Every server: conf.c refuses more than the table holds. */
	for (i = 0; i < tier_nservers(t) && i < TIER_MAX_SERVERS; i++) {
		tier_server_stats(t, i, &ss);
		metric_add(out, n, shared_server_name(sh, i),
		    "robotsd_redis_up", METRIC_GAUGE,
		    ss.state == TIER_SERVER_UP,
		    "1 when robotsd is connected to the Redis server.");
		out[*n - 1].label = shared_server_label(sh, i);
	}
}
#endif

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
	metric_add(out, &n, "clients_deferred",
	    "robotsd_clients_deferred_total", METRIC_COUNTER, m->deferred,
	    "Connections with request lines left for a later turn of the "
	    "loop.");
	metric_add(out, &n, "loop_lag_p99_us", "robotsd_loop_lag_p99_micros",
	    METRIC_GAUGE, l.p99_us,
	    "99th percentile lateness of a 10 ms timer, last 1000 ticks.");
	metric_add(out, &n, "loop_lag_max_us", "robotsd_loop_lag_max_micros",
	    METRIC_GAUGE, l.max_us,
	    "Largest lateness of a 10 ms timer, last 1000 ticks.");
	metric_add(out, &n, "loop_late", "robotsd_loop_late_total",
	    METRIC_COUNTER, l.late,
	    "Ticks of the 10 ms timer over 10 ms late.");
	metric_histo(out, &n, "robotsd_loop_lag_seconds",
	    looplag_histo(src->looplag),
	    "Lateness of a 10 ms timer, every tick: how long a turn of the "
	    "event loop kept it waiting.");
	return n;
}

/* The WARC archive's counters (zero without --archive-dir). */
static void
stats_archive(const struct archive *a, struct metric *out, size_t *n)
{
	struct archive_stats s = { 0, 0, 0 };

	if (a != NULL)
		archive_stats(a, &s);
	metric_add(out, n, "archive_records", "robotsd_archive_records_total",
	    METRIC_COUNTER, s.records,
	    "robots.txt versions written to the WARC archive.");
	metric_add(out, n, "archive_dropped", "robotsd_archive_dropped_total",
	    METRIC_COUNTER, s.dropped,
	    "Archive records dropped because the writer was behind.");
	metric_add(out, n, "archive_errors", "robotsd_archive_errors_total",
	    METRIC_COUNTER, s.errors,
	    "Archive failures: directory missing, open, write or removal.");
}

/* The change feed's watchers, events and fleet messages. */
static void
stats_feed(const struct feed *f, struct metric *out, size_t *n)
{
	const struct feed_stats *s = feed_stats(f);

	metric_add(out, n, "feed_watchers", "robotsd_feed_watchers",
	    METRIC_GAUGE, s->watchers, "Clients watching the change feed.");
	metric_add(out, n, "feed_events", "robotsd_feed_events_total",
	    METRIC_COUNTER, s->events, "Change events queued to watchers.");
	metric_add(out, n, "feed_dropped", "robotsd_feed_dropped_total",
	    METRIC_COUNTER, s->dropped,
	    "Watchers dropped at their output cap.");
	metric_add(out, n, "feed_published", "robotsd_feed_published_total",
	    METRIC_COUNTER, s->published,
	    "Changes fetched here and published to the fleet.");
	metric_add(out, n, "feed_received", "robotsd_feed_received_total",
	    METRIC_COUNTER, s->received,
	    "Changes received from other instances.");
	metric_add(out, n, "feed_refused", "robotsd_feed_refused_total",
	    METRIC_COUNTER, s->refused,
	    "Feed channel messages refused as malformed or too long.");
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
	metric_add(out, &n, "revalidated", "robotsd_revalidated_total",
	    METRIC_COUNTER, s->revalidated,
	    "Refreshes answered 304: the entry kept, nothing parsed.");
	stats_archive(src->archive, out, &n);
	stats_fetches(src, out, &n);
	stats_answers(src, out, &n);
	if (src->feed != NULL)
		stats_feed(src->feed, out, &n);
	stats_limits(src->limits, out, &n);
#ifdef HAVE_REDIS
	if (src->shared != NULL)
		stats_shared(src->shared, out, &n);
#endif
	return stats_memory(src, out, n);
}
