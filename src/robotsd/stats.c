/*
 * stats.c: the counters table (metric.h), filled from each module's own
 * counters. It sits at the top with main(): the only place besides it that
 * knows every module, so that no module has to know another's internals.
 * The numbers are read once into a struct stats_now; stats_rows, walked by
 * one loop, says in which order, under which names and with which help
 * each field is shown, and where the labelled families and histograms go.
 * A new counter is one row (and its field in struct stats_now if it has
 * none).
 */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "persist/archive.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "ops/dispatch.h"
#include "fetch/fetch.h"
#include "feed/feed.h"
#include "cache/fetchlog.h"
#include "base/looplag.h"
#include "iface/reply.h"
#include "conn/cfgerr.h"
#include "conn/server.h"
#include "stats.h"
#include "stats_int.h"
#ifdef HAVE_REDIS
#include "tier/shared.h"
#include "tier/tier.h"
#include "policy/tier_url.h"
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

/* Append one sample of a labelled family (not in the stats op). */
static void
metric_label(struct metric *out, size_t *n, const char *prom,
    const char *labels, uint64_t value, const char *help)
{
	metric_put(out, n,
	    (struct metric){
	        NULL, prom, help, METRIC_COUNTER, value, labels, NULL });
}

/* Append a histogram (not in the stats op); labels may be NULL. */
static void
metric_histo(struct metric *out, size_t *n, const char *prom,
    const char *labels, const struct histo *h, const char *help)
{
	metric_put(out, n,
	    (struct metric){
	        NULL, prom, help, METRIC_HISTOGRAM, 0, labels, h });
}

typedef void (*stats_family_fn)(
    const struct stats_now *, struct metric *, size_t *);

/*
 * One row of the table: a counter or gauge read from a field of struct
 * stats_now (name NULL: on /metrics only), or a family whose samples
 * (labelled, histograms) a function appends.
 */
struct stats_row {
	const char *name; /* the stats op's field, or NULL */
	const char *prom;
	enum metric_type type;
	size_t off, width; /* the field in struct stats_now */
	enum stats_part part;
	stats_family_fn family; /* instead of a field, or NULL */
	const char *help;
};

#define STATS_FIELD(f)                                                         \
	offsetof(struct stats_now, f), sizeof(((struct stats_now *)0)->f)
/* (clang-format 14 and 19 lay out a braced macro apart) */
/* clang-format off */
/* A counter or gauge in the stats op and on /metrics. */
#define STAT(name, prom, type, f, help) \
	{ name, prom, METRIC_##type, STATS_FIELD(f), STATS_ALWAYS, NULL, help }
/* The same, only when part is there. */
#define STAT_IN(part, name, prom, type, f, help) \
	{ name, prom, METRIC_##type, STATS_FIELD(f), STATS_##part, NULL, help }
/* A gauge on /metrics only. */
#define STAT_PROM(part, prom, f, help) \
	{ NULL, prom, METRIC_GAUGE, STATS_FIELD(f), STATS_##part, NULL, help }
/* A family of samples that fn appends. */
#define STAT_FAMILY(part, fn) \
	{ NULL, NULL, METRIC_COUNTER, 0, 0, STATS_##part, fn, NULL }
/* clang-format on */

/* The fetch outcome classes. */
static void
stats_outcomes(const struct stats_now *now, struct metric *out, size_t *n)
{
	static char labels[FC_COUNT][32];
	const struct fetch_stats *f = cache_fetch_stats(now->src->cache);
	size_t i;

	for (i = 0; i < FC_COUNT; i++) {
		if (labels[i][0] == '\0')
			snprintf(labels[i], sizeof(labels[i]), "class=\"%s\"",
			    fetch_class_name((enum fetch_class)i));
		metric_label(out, n, "robotsd_fetch_outcomes_total", labels[i],
		    f->by_class[i], "Fetches ended, by outcome class.");
	}
}

/* The durations of fetches and of answers, in all and by operation. */
static void
stats_durations(const struct stats_now *now, struct metric *out, size_t *n)
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
	const struct stats_sources *src = now->src;
	size_t i;

	metric_histo(out, n, "robotsd_fetch_duration_seconds", NULL,
	    &cache_fetch_stats(src->cache)->seconds,
	    "Duration of robots.txt transfers.");
	metric_histo(out, n, "robotsd_request_duration_seconds", NULL,
	    server_latency(src->server),
	    "From a request line read to its answer queued, every op.");
	for (i = 0; i < REPLY_KINDS; i++)
		metric_histo(out, n, "robotsd_op_duration_seconds", labels[i],
		    server_latency_op(src->server, (int)i),
		    "From a request line read to its answer queued, by op; "
		    "checks answered at once (waited=no) and checks that "
		    "waited on a fetch (waited=yes) apart.");
}

/* The verdicts by source and reason, and allowed or not. */
static void
stats_answers(const struct stats_now *now, struct metric *out, size_t *n)
{
	static char labels[CHECK_SOURCES][CHECK_REASONS][64];
	const struct check_answers *a = dispatch_answers(now->src->dispatch);
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

#ifdef HAVE_REDIS
/* Each Redis server's state: a field of its own in the stats op. */
static void
stats_redis_up(const struct stats_now *now, struct metric *out, size_t *n)
{
	const struct shared *sh = now->src->shared;
	const struct tier *t = shared_tier(sh);
	struct tier_server_stats ss;
	size_t i;

	/* Every server: conf.c refuses more than the table holds. */
	for (i = 0; i < tier_nservers(t) && i < TIER_MAX_SERVERS; i++) {
		tier_server_stats(t, i, &ss);
		metric_put(out, n,
		    (struct metric){ shared_server_name(sh, i),
		        "robotsd_redis_up",
		        "1 when robotsd is connected to the Redis server.",
		        METRIC_GAUGE, ss.state == TIER_SERVER_UP,
		        shared_server_label(sh, i), NULL });
	}
}
#endif

/* Serving: robotsd_config_error is 0. */
static void
stats_config_ok(const struct stats_now *now, struct metric *out, size_t *n)
{
	(void)now;
	metric_put(out, n, cfgerr_metric(0));
}

/* The event loop's lateness, every tick. */
static void
stats_loop_lag(const struct stats_now *now, struct metric *out, size_t *n)
{
	metric_histo(out, n, "robotsd_loop_lag_seconds", NULL,
	    looplag_histo(now->src->looplag),
	    "Lateness of a 10 ms timer, every tick: how long a turn of the "
	    "event loop kept it waiting.");
}

/* Every metric, in the order of the stats op and of /metrics. */
static const struct stats_row stats_rows[] = {
	STAT("cache_entries", "robotsd_cache_entries", GAUGE, cache.entries,
	    "Origins in the cache."),
	STAT("cache_bytes", "robotsd_cache_bytes", GAUGE, cache.bytes,
	    "Bytes the cache holds."),
	STAT("hits", "robotsd_hits_total", COUNTER, cache.hits,
	    "Checks answered from a fresh entry."),
	STAT("misses", "robotsd_misses_total", COUNTER, cache.misses,
	    "Checks that found no usable entry."),
	STAT("fetches", "robotsd_fetches_total", COUNTER, cache.fetches,
	    "robots.txt fetches started."),
	STAT("fetch_errors", "robotsd_fetch_errors_total", COUNTER,
	    cache.fetch_errors,
	    "Fetches that ended in 5xx, 429, a network error or a timeout."),
	STAT("coalesced", "robotsd_coalesced_total", COUNTER, cache.coalesced,
	    "Checks that joined a fetch already in flight."),
	STAT("connections", "robotsd_connections", GAUGE, connections,
	    "Client connections open."),
	STAT("requests", "robotsd_requests_total", COUNTER, requests,
	    "Request lines received."),
	STAT("uptime_s", "robotsd_uptime_seconds", GAUGE, uptime,
	    "Seconds since start."),
	STAT("stale", "robotsd_stale_total", COUNTER, cache.stale,
	    "Checks answered from an old copy."),
	STAT("evictions", "robotsd_evictions_total", COUNTER, cache.evictions,
	    "Entries evicted by the memory cap."),
	STAT("waiting", "robotsd_waiting", GAUGE, cache.waiting,
	    "Checks waiting on fetches."),
	STAT("overloaded", "robotsd_overloaded_total", COUNTER,
	    cache.overloaded, "Checks refused because too many were waiting."),
	STAT("fetches_in_flight", "robotsd_fetches_in_flight", GAUGE, in_flight,
	    "Fetches running now."),
	STAT("fetches_queued", "robotsd_fetches_queued", GAUGE, queued,
	    "Fetches waiting for a free slot."),
	STAT("connections_total", "robotsd_connections_total", COUNTER,
	    connections_total, "Client connections accepted."),
	STAT("revalidated", "robotsd_revalidated_total", COUNTER,
	    cache.revalidated,
	    "Refreshes answered 304: the entry kept, nothing parsed."),
	STAT("archive_records", "robotsd_archive_records_total", COUNTER,
	    archive.records,
	    "robots.txt versions written to the WARC archive."),
	STAT("archive_dropped", "robotsd_archive_dropped_total", COUNTER,
	    archive.dropped,
	    "Archive records dropped because the writer was behind."),
	STAT("archive_errors", "robotsd_archive_errors_total", COUNTER,
	    archive.errors,
	    "Archive failures: directory missing, open, write or removal."),
	STAT("backoff", "robotsd_origins_in_backoff", GAUGE, cache.backoff,
	    "Origins failing, waiting for their next retry."),
	STAT_FAMILY(ALWAYS, stats_outcomes),
	STAT_FAMILY(ALWAYS, stats_durations),
	STAT_FAMILY(ALWAYS, stats_answers),
	STAT_IN(FEED, "feed_watchers", "robotsd_feed_watchers", GAUGE,
	    feed.watchers, "Clients watching the change feed."),
	STAT_IN(FEED, "feed_events", "robotsd_feed_events_total", COUNTER,
	    feed.events, "Change events queued to watchers."),
	STAT_IN(FEED, "feed_dropped", "robotsd_feed_dropped_total", COUNTER,
	    feed.dropped, "Watchers dropped at their output cap."),
	STAT_IN(FEED, "feed_lines", "robotsd_feed_lines_total", COUNTER,
	    feed.lines, "Change event lines made, one per agent set."),
	STAT_IN(FEED, "feed_diffs", "robotsd_feed_diffs_total", COUNTER,
	    feed.diffs, "Agent differences computed for change events."),
	STAT_IN(FEED, "feed_published", "robotsd_feed_published_total", COUNTER,
	    feed.published, "Changes fetched here and published to the fleet."),
	STAT_IN(FEED, "feed_received", "robotsd_feed_received_total", COUNTER,
	    feed.received, "Changes received from other instances."),
	STAT_IN(FEED, "feed_refused", "robotsd_feed_refused_total", COUNTER,
	    feed.refused,
	    "Feed channel messages refused: untagged, forged, malformed."),
	STAT_IN(FEED, "feed_loads", "robotsd_feed_loads_total", COUNTER,
	    feed.loads, "Loads of a change another instance told of."),
	STAT_PROM(LIMITS, "robotsd_limit_cache_max_bytes", lim.cache_max_bytes,
	    "The cache-max-bytes setting."),
	STAT_PROM(LIMITS, "robotsd_limit_max_waiting", lim.max_waiting,
	    "The max-waiting setting."),
	STAT_PROM(LIMITS, "robotsd_limit_max_connections", lim.max_connections,
	    "The max-connections setting."),
	STAT_PROM(LIMITS, "robotsd_limit_max_fetches", lim.max_fetches,
	    "The max-fetches setting."),
#ifdef HAVE_REDIS
	STAT_IN(SHARED, "shared_hits", "robotsd_shared_hits_total", COUNTER,
	    shared.hits, "Misses answered from the shared tier."),
	STAT_IN(SHARED, "shared_misses", "robotsd_shared_misses_total", COUNTER,
	    shared.misses,
	    "Misses fetched here for the fleet, under its lock."),
	STAT_IN(SHARED, "shared_local", "robotsd_shared_local_total", COUNTER,
	    shared.local,
	    "Misses fetched here alone because the shared tier failed."),
	STAT_IN(SHARED, "shared_publishes", "robotsd_shared_publishes_total",
	    COUNTER, tier.publishes, "Entries published to Redis."),
	STAT_IN(SHARED, "shared_lock_waits", "robotsd_shared_lock_waits_total",
	    COUNTER, tier.lock_waits, "Waits for another instance's fetch."),
	STAT_IN(SHARED, "shared_lock_takeovers",
	    "robotsd_shared_lock_takeovers_total", COUNTER, tier.lock_takeovers,
	    "Locks taken after a holder never published."),
	STAT_IN(SHARED, "shared_corrupt", "robotsd_shared_corrupt_total",
	    COUNTER, tier.corrupt,
	    "Shared values refused: corrupt, truncated or another version."),
	STAT_IN(SHARED, "shared_untagged", "robotsd_shared_untagged_total",
	    COUNTER, tier.untagged,
	    "Shared values refused for want of a valid tag (--redis-key-file); "
	    "also in shared_corrupt."),
	STAT_IN(SHARED, "redis_errors", "robotsd_redis_errors_total", COUNTER,
	    tier.errors,
	    "Redis calls failed: error reply, lost or no connection."),
	STAT_IN(SHARED, "redis_timeouts", "robotsd_redis_timeouts_total",
	    COUNTER, tier.timeouts,
	    "Redis calls unanswered in time (--redis-timeout, or what was left "
	    "of a miss's)."),
	STAT_IN(SHARED, "redis_protocol_errors",
	    "robotsd_redis_protocol_errors_total", COUNTER,
	    tier.protocol_errors,
	    "Redis connections closed for a reply robotsd did not ask for, of "
	    "the wrong shape or too large."),
	STAT_IN(SHARED, "redis_shed", "robotsd_redis_shed_total", COUNTER,
	    tier.shed,
	    "Redis calls not made: the server's queue in robotsd was full "
	    "(the miss fetched locally)."),
	STAT_FAMILY(SHARED, stats_redis_up),
#endif
	STAT("fetch_bytes", "robotsd_fetch_bytes", GAUGE, fetch_bytes,
	    "Bytes the fetches running and queued hold, curl's aside."),
	STAT("client_input_bytes", "robotsd_client_input_bytes", GAUGE,
	    mem.input_bytes,
	    "Bytes of requests read from clients, not yet handled."),
	STAT("client_output_bytes", "robotsd_client_output_bytes", GAUGE,
	    mem.output_bytes,
	    "Bytes of answers queued for clients, not yet read."),
	STAT("client_output_peak_bytes", "robotsd_client_output_peak_bytes",
	    GAUGE, mem.output_peak,
	    "The most client_output_bytes has been since start."),
	STAT("clients_paused", "robotsd_clients_paused_total", COUNTER,
	    mem.paused,
	    "Connections no longer read past half of max-output-total."),
	STAT("clients_shed", "robotsd_clients_shed_total", COUNTER, mem.shed,
	    "Connections closed past max-output-total."),
	STAT("clients_deferred", "robotsd_clients_deferred_total", COUNTER,
	    mem.deferred,
	    "Times a connection with request lines waiting was left for a "
	    "later turn of the loop."),
	STAT("loop_lag_p99_us", "robotsd_loop_lag_p99_micros", GAUGE,
	    lag.p99_us,
	    "99th percentile lateness of a 10 ms timer, last 1000 ticks."),
	STAT("loop_lag_max_us", "robotsd_loop_lag_max_micros", GAUGE,
	    lag.max_us, "Largest lateness of a 10 ms timer, last 1000 ticks."),
	STAT("loop_work_p99_us", "robotsd_loop_work_p99_micros", GAUGE,
	    lag.work_p99_us,
	    "99th percentile of the part of a 10 ms timer's lateness that "
	    "the loop spent working, last 1000 ticks."),
	STAT("loop_work_max_us", "robotsd_loop_work_max_micros", GAUGE,
	    lag.work_max_us,
	    "Largest part of a 10 ms timer's lateness that the loop spent "
	    "working, last 1000 ticks."),
	STAT("loop_late", "robotsd_loop_late_total", COUNTER, lag.late,
	    "Ticks of the 10 ms timer over 10 ms late."),
	STAT_IN(TDM, "tdmrep_entries", "robotsd_tdmrep_entries", GAUGE,
	    tdm.entries, "Origins whose tdmrep.json the cache holds."),
	STAT_IN(TDM, "tdmrep_bytes", "robotsd_tdmrep_bytes", GAUGE, tdm.bytes,
	    "Bytes the tdmrep.json cache holds."),
	STAT_IN(TDM, "tdmrep_hits", "robotsd_tdmrep_hits_total", COUNTER,
	    tdm.hits, "Checks with tdm answered from a fresh tdmrep.json."),
	STAT_IN(TDM, "tdmrep_misses", "robotsd_tdmrep_misses_total", COUNTER,
	    tdm.misses, "Checks with tdm that found no usable tdmrep.json."),
	STAT_IN(TDM, "tdmrep_fetches", "robotsd_tdmrep_fetches_total", COUNTER,
	    tdm.fetches, "tdmrep.json fetches started."),
	STAT_IN(TDM, "tdmrep_fetch_errors", "robotsd_tdmrep_fetch_errors_total",
	    COUNTER, tdm.fetch_errors,
	    "tdmrep.json fetches that ended unreachable."),
	STAT_IN(TDM, "tdmrep_coalesced", "robotsd_tdmrep_coalesced_total",
	    COUNTER, tdm.coalesced,
	    "Checks that joined a tdmrep.json fetch already in flight."),
	STAT_IN(TDM, "tdmrep_revalidated", "robotsd_tdmrep_revalidated_total",
	    COUNTER, tdm.revalidated,
	    "tdmrep.json refreshes answered 304: kept, not parsed."),
	STAT_FAMILY(ALWAYS, stats_loop_lag),
	STAT_FAMILY(ALWAYS, stats_config_ok),
};

/* Read every module's numbers into *now. */
static void
stats_read(const struct stats_sources *src, struct stats_now *now)
{
	double up = clock_now(src->clock) - src->started;

	*now = (struct stats_now){ .src = src,
		.parts = (src->feed != NULL ? STATS_PART(STATS_FEED) : 0) |
		         (src->limits != NULL ? STATS_PART(STATS_LIMITS) : 0) |
		         (src->shared != NULL ? STATS_PART(STATS_SHARED) : 0) };
	now->cache = *cache_stats(src->cache);
	if (src->tdm != NULL && cache_stats(src->tdm)->fetches > 0) {
		now->tdm = *cache_stats(src->tdm);
		now->parts |= STATS_PART(STATS_TDM);
		now->cache.waiting += now->tdm.waiting;
	}
	now->mem = *server_memory(src->server);
	now->lag = looplag_stats(src->looplag);
	if (src->archive != NULL)
		archive_stats(src->archive, &now->archive);
	if (src->feed != NULL)
		now->feed = *feed_stats(src->feed);
	if (src->limits != NULL)
		now->lim = *src->limits;
#ifdef HAVE_REDIS
	if (src->shared != NULL) {
		now->shared = *shared_stats(src->shared);
		now->tier = *tier_stats(shared_tier(src->shared));
	}
#endif
	now->uptime = up > 0 ? (uint64_t)up : 0;
	now->requests = dispatch_requests(src->dispatch);
	now->connections_total = server_connections_total(src->server);
	now->connections = server_connections(src->server);
	now->in_flight = fetcher_in_flight(src->fetcher);
	now->queued = fetcher_queued(src->fetcher);
	now->fetch_bytes = fetcher_bytes(src->fetcher);
}

/* Whether the part a row needs is there. */
static int
stats_has(const struct stats_now *now, enum stats_part part)
{
	return part == STATS_ALWAYS || (now->parts & STATS_PART(part)) != 0;
}

/* The field a row names: a uint64_t or a size_t. */
static uint64_t
stats_field(const struct stats_now *now, const struct stats_row *r)
{
	const unsigned char *p = (const unsigned char *)now + r->off;
	uint64_t u;
	size_t z;

	if (r->width == sizeof(u)) {
		memcpy(&u, p, sizeof(u));
		return u;
	}
	memcpy(&z, p, sizeof(z));
	return z;
}

/* Show now as the counters table, row by row. */
size_t
stats_show(const struct stats_now *now, struct metric *out)
{
	const struct stats_row *r;
	size_t i, n = 0;

	for (i = 0; i < sizeof(stats_rows) / sizeof(stats_rows[0]); i++) {
		r = &stats_rows[i];
		if (!stats_has(now, r->part))
			continue;
		if (r->family != NULL)
			r->family(now, out, &n);
		else
			metric_put(out, &n,
			    (struct metric){ r->name, r->prom, r->help, r->type,
			        stats_field(now, r), NULL, NULL });
	}
	return n;
}

/* The current values of every counter and gauge. */
size_t
stats_collect(void *arg, struct metric *out)
{
	struct stats_now now;

	stats_read(arg, &now);
	return stats_show(&now, out);
}
