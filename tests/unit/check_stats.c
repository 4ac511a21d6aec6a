/*
 * check_stats.c: the counters table (stats.c) against docs/protocol.md's
 * stats lists and robotsd(8)'s METRICS: one row per documented counter or
 * gauge, its stats name, its /metrics name (robotsd_ + the name, counters
 * with _total, and the exceptions the docs name), its type and help. Each
 * row's field is set to a value of its own; the stats op must answer it
 * as "name":value and /metrics must show it as its HELP, TYPE and sample
 * lines. Over real modules: the scripted cache, a dispatcher, a server
 * and the loop lag timer, whose families (histograms, labels) are shown.
 */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <check.h>
#include <event2/buffer.h>

#include "conn/metrics_text.h"
#include "conn/server.h"
#include "stats_int.h"
#include "dispatch_fixture.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define VALUE(i) (1000u + (unsigned)(i)) /* row i's own value */
/* The tier's one server, never connected: the loop is never run. */
#define REDIS_URL "unix:///nonexistent/redis.sock"

struct doc_row {
	const char *name; /* in the stats op; NULL: on /metrics only */
	const char *prom;
	const char *type;  /* as in # TYPE */
	size_t off, width; /* its field in struct stats_now */
	const char *help;
};

#define F(f) offsetof(struct stats_now, f), sizeof(((struct stats_now *)0)->f)

/*
 * protocol.md's "### stats" tables (redis_up_N apart, a family), then
 * robotsd(8)'s limit gauges.
 */
static const struct doc_row doc_rows[] = {
	{ "cache_entries", "robotsd_cache_entries", "gauge", F(cache.entries),
	    "Origins in the cache." },
	{ "cache_bytes", "robotsd_cache_bytes", "gauge", F(cache.bytes),
	    "Bytes the cache holds." },
	{ "hits", "robotsd_hits_total", "counter", F(cache.hits),
	    "Checks answered from a fresh entry." },
	{ "misses", "robotsd_misses_total", "counter", F(cache.misses),
	    "Checks that found no usable entry." },
	{ "fetches", "robotsd_fetches_total", "counter", F(cache.fetches),
	    "robots.txt fetches started." },
	{ "fetch_errors", "robotsd_fetch_errors_total", "counter",
	    F(cache.fetch_errors),
	    "Fetches that ended in 5xx, 429, a network error or a timeout." },
	{ "coalesced", "robotsd_coalesced_total", "counter", F(cache.coalesced),
	    "Checks that joined a fetch already in flight." },
	{ "stale", "robotsd_stale_total", "counter", F(cache.stale),
	    "Checks answered from an old copy." },
	{ "evictions", "robotsd_evictions_total", "counter", F(cache.evictions),
	    "Entries evicted by the memory cap." },
	{ "revalidated", "robotsd_revalidated_total", "counter",
	    F(cache.revalidated),
	    "Refreshes answered 304: the entry kept, nothing parsed." },
	{ "waiting", "robotsd_waiting", "gauge", F(cache.waiting),
	    "Checks waiting on fetches." },
	{ "overloaded", "robotsd_overloaded_total", "counter",
	    F(cache.overloaded),
	    "Checks refused because too many were waiting." },
	{ "fetches_in_flight", "robotsd_fetches_in_flight", "gauge",
	    F(in_flight), "Fetches running now." },
	{ "fetches_queued", "robotsd_fetches_queued", "gauge", F(queued),
	    "Fetches waiting for a free slot." },
	{ "connections", "robotsd_connections", "gauge", F(connections),
	    "Client connections open." },
	{ "connections_total", "robotsd_connections_total", "counter",
	    F(connections_total), "Client connections accepted." },
	{ "requests", "robotsd_requests_total", "counter", F(requests),
	    "Request lines received." },
	/* the docs' exceptions: seconds, and the backoff gauge's name */
	{ "uptime_s", "robotsd_uptime_seconds", "gauge", F(uptime),
	    "Seconds since start." },
	{ "backoff", "robotsd_origins_in_backoff", "gauge", F(cache.backoff),
	    "Origins failing, waiting for their next retry." },
	{ "fetch_bytes", "robotsd_fetch_bytes", "gauge", F(fetch_bytes),
	    "Bytes the fetches running and queued hold, curl's aside." },
	{ "client_input_bytes", "robotsd_client_input_bytes", "gauge",
	    F(mem.input_bytes),
	    "Bytes of requests read from clients, not yet handled." },
	{ "client_output_bytes", "robotsd_client_output_bytes", "gauge",
	    F(mem.output_bytes),
	    "Bytes of answers queued for clients, not yet read." },
	{ "client_output_peak_bytes", "robotsd_client_output_peak_bytes",
	    "gauge", F(mem.output_peak),
	    "The most client_output_bytes has been since start." },
	{ "clients_paused", "robotsd_clients_paused_total", "counter",
	    F(mem.paused),
	    "Connections no longer read past half of max-output-total." },
	{ "clients_shed", "robotsd_clients_shed_total", "counter", F(mem.shed),
	    "Connections closed past max-output-total." },
	{ "clients_deferred", "robotsd_clients_deferred_total", "counter",
	    F(mem.deferred),
	    "Times a connection with request lines waiting was left for a "
	    "later turn of the loop." },
	{ "loop_lag_p99_us", "robotsd_loop_lag_p99_micros", "gauge",
	    F(lag.p99_us),
	    "99th percentile lateness of a 10 ms timer, last 1000 ticks." },
	{ "loop_lag_max_us", "robotsd_loop_lag_max_micros", "gauge",
	    F(lag.max_us),
	    "Largest lateness of a 10 ms timer, last 1000 ticks." },
	{ "loop_work_p99_us", "robotsd_loop_work_p99_micros", "gauge",
	    F(lag.work_p99_us),
	    "99th percentile of the part of a 10 ms timer's lateness that the "
	    "loop spent working, last 1000 ticks." },
	{ "loop_work_max_us", "robotsd_loop_work_max_micros", "gauge",
	    F(lag.work_max_us),
	    "Largest part of a 10 ms timer's lateness that the loop spent "
	    "working, last 1000 ticks." },
	{ "loop_late", "robotsd_loop_late_total", "counter", F(lag.late),
	    "Ticks of the 10 ms timer over 10 ms late." },
	{ "archive_records", "robotsd_archive_records_total", "counter",
	    F(archive.records),
	    "robots.txt versions written to the WARC archive." },
	{ "archive_dropped", "robotsd_archive_dropped_total", "counter",
	    F(archive.dropped),
	    "Archive records dropped because the writer was behind." },
	{ "archive_errors", "robotsd_archive_errors_total", "counter",
	    F(archive.errors),
	    "Archive failures: directory missing, open, write or removal." },
	{ "feed_watchers", "robotsd_feed_watchers", "gauge", F(feed.watchers),
	    "Clients watching the change feed." },
	{ "feed_events", "robotsd_feed_events_total", "counter", F(feed.events),
	    "Change events queued to watchers." },
	{ "feed_dropped", "robotsd_feed_dropped_total", "counter",
	    F(feed.dropped), "Watchers dropped at their output cap." },
	{ "feed_lines", "robotsd_feed_lines_total", "counter", F(feed.lines),
	    "Change event lines made, one per agent set." },
	{ "feed_diffs", "robotsd_feed_diffs_total", "counter", F(feed.diffs),
	    "Agent differences computed for change events." },
	{ "feed_published", "robotsd_feed_published_total", "counter",
	    F(feed.published),
	    "Changes fetched here and published to the fleet." },
	{ "feed_received", "robotsd_feed_received_total", "counter",
	    F(feed.received), "Changes received from other instances." },
	{ "feed_refused", "robotsd_feed_refused_total", "counter",
	    F(feed.refused),
	    "Feed channel messages refused: untagged, forged, malformed." },
	{ "feed_loads", "robotsd_feed_loads_total", "counter", F(feed.loads),
	    "Loads of a change another instance told of." },
#ifdef HAVE_REDIS
	/* "With --redis" */
	{ "shared_hits", "robotsd_shared_hits_total", "counter", F(shared.hits),
	    "Misses answered from the shared tier." },
	{ "shared_misses", "robotsd_shared_misses_total", "counter",
	    F(shared.misses),
	    "Misses fetched here for the fleet, under its lock." },
	{ "shared_local", "robotsd_shared_local_total", "counter",
	    F(shared.local),
	    "Misses fetched here alone because the shared tier failed." },
	{ "shared_publishes", "robotsd_shared_publishes_total", "counter",
	    F(tier.publishes), "Entries published to Redis." },
	{ "shared_lock_waits", "robotsd_shared_lock_waits_total", "counter",
	    F(tier.lock_waits), "Waits for another instance's fetch." },
	{ "shared_lock_takeovers", "robotsd_shared_lock_takeovers_total",
	    "counter", F(tier.lock_takeovers),
	    "Locks taken after a holder never published." },
	{ "shared_corrupt", "robotsd_shared_corrupt_total", "counter",
	    F(tier.corrupt),
	    "Shared values refused: corrupt, truncated or another version." },
	{ "shared_untagged", "robotsd_shared_untagged_total", "counter",
	    F(tier.untagged),
	    "Shared values refused for want of a valid tag (--redis-key-file); "
	    "also in shared_corrupt." },
	{ "redis_errors", "robotsd_redis_errors_total", "counter",
	    F(tier.errors),
	    "Redis calls failed: error reply, lost or no connection." },
	{ "redis_timeouts", "robotsd_redis_timeouts_total", "counter",
	    F(tier.timeouts),
	    "Redis calls unanswered in time (--redis-timeout, or what was left "
	    "of a miss's)." },
	{ "redis_protocol_errors", "robotsd_redis_protocol_errors_total",
	    "counter", F(tier.protocol_errors),
	    "Redis connections closed for a reply robotsd did not ask for, of "
	    "the wrong shape or too large." },
	{ "redis_shed", "robotsd_redis_shed_total", "counter", F(tier.shed),
	    "Redis calls not made: the server's queue in robotsd was full (the "
	    "miss fetched locally)." },
#endif
	{ NULL, "robotsd_limit_cache_max_bytes", "gauge",
	    F(lim.cache_max_bytes), "The cache-max-bytes setting." },
	{ NULL, "robotsd_limit_max_waiting", "gauge", F(lim.max_waiting),
	    "The max-waiting setting." },
	{ NULL, "robotsd_limit_max_connections", "gauge",
	    F(lim.max_connections), "The max-connections setting." },
	{ NULL, "robotsd_limit_max_fetches", "gauge", F(lim.max_fetches),
	    "The max-fetches setting." },
};

/* robotsd(8)'s families: no stats name, every sample on /metrics. */
static const char *const family_types[] = {
	"# TYPE robotsd_fetch_outcomes_total counter\n",
	"# TYPE robotsd_fetch_duration_seconds histogram\n",
	"# TYPE robotsd_request_duration_seconds histogram\n",
	"# TYPE robotsd_op_duration_seconds histogram\n",
	"# TYPE robotsd_answers_total counter\n",
	"# TYPE robotsd_verdicts_total counter\n",
	"# TYPE robotsd_loop_lag_seconds histogram\n",
	"# TYPE robotsd_config_error gauge\n",
	"robotsd_config_error 0\n",
	"robotsd_op_duration_seconds_count{op=\"check\",waited=\"no\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"check\",waited=\"yes\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"inspect\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"purge\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"stats\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"ping\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"history\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"watch\"} 0\n",
	"robotsd_op_duration_seconds_count{op=\"other\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"2xx\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"3xx\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"4xx\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"429\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"5xx\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"redirects\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"network\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"timeout\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"refused\"} 0\n",
	"robotsd_fetch_outcomes_total{class=\"local\"} 0\n",
#ifdef HAVE_REDIS
	"# TYPE robotsd_redis_up gauge\n",
	"robotsd_redis_up{server=\"" REDIS_URL "?db=0\"} 0\n",
#endif
	"robotsd_verdicts_total{verdict=\"allowed\"} 0\n",
	"robotsd_verdicts_total{verdict=\"disallowed\"} 0\n",
};

#ifdef HAVE_REDIS
static struct tier *tier;
static struct shared *shared;
#endif
static struct server *srv;
static struct looplag *lag;
static struct stats_limits limits;
static struct stats_sources src;
static struct stats_now now;

/* A stats_fn: the table of now, every row's field at its own value. */
static size_t
shown_stats(void *arg, struct metric *out)
{
	(void)arg;
	return stats_show(&now, out);
}

/* A server on a listener of an abstract name the kernel picks. */
static struct server *
server_setup(void)
{
	struct server_settings ss = { .max_line = 1024,
		.max_output = 1 << 16,
		.output_budget = 1 << 20,
		.write_timeout = 60,
		.max_connections = 8,
		.admin_gid = -1 };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char *cause = NULL;
	int lfd;

	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(
	    bind(lfd, (struct sockaddr *)&un, sizeof(sa_family_t)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(event_base_priority_init(base, SERVER_PRIORITIES), 0);
	srv = server_new(base, &dispatch_session_ops, NULL, &ss);
	ck_assert_int_eq(server_listen(srv, &ss, lfd, &cause), 0);
	return srv;
}

/* With hiredis, a tier of one server, not connected, and its loader. */
static void
shared_setup(void)
{
#ifdef HAVE_REDIS
	static const char *const urls[] = { REDIS_URL };
	struct tier_config cf = { .urls = urls, .nurls = 1, .timeout_ms = 100 };
	char *cause = NULL;

	tier = tier_new(base, &cf, &cause);
	ck_assert_msg(tier != NULL, "tier_new: %s", cause);
	ck_assert_ptr_nonnull(shared = shared_new(tier, NULL, &clk, 100));
	src.shared = shared;
	now.parts |= STATS_PART(STATS_SHARED);
#endif
}

/* Real modules; now with a feed and limits, every field its row's value. */
static void
setup(void)
{
	struct dispatch_settings ds = { .wait_timeout = 65 };
	unsigned char *p = (unsigned char *)&now;
	uint64_t u;
	size_t z;
	int i;

	memset(&client, 0, sizeof(client));
	client.reply.ops = &client_ops;
	cache_setup();
	base = event_base_new();
	ck_assert_ptr_nonnull(srv = server_setup());
	ck_assert_ptr_nonnull(lag = looplag_new(base));
	d = dispatch_new(base, cache, &clk, shown_stats, NULL);
	dispatch_configure(d, &ds);
	s = session_new(d, &client.reply);
	src = (struct stats_sources){ .cache = cache,
		.dispatch = d,
		.server = srv,
		.clock = &clk,
		.looplag = lag,
		.limits = &limits };
	now = (struct stats_now){ .src = &src,
		.parts = STATS_PART(STATS_FEED) | STATS_PART(STATS_LIMITS) };
	shared_setup();
	for (i = 0; i < NROWS(doc_rows); i++) {
		u = z = VALUE(i);
		ck_assert(doc_rows[i].width == sizeof(u) ||
		          doc_rows[i].width == sizeof(z));
		memcpy(p + doc_rows[i].off,
		    doc_rows[i].width == sizeof(u) ? (void *)&u : (void *)&z,
		    doc_rows[i].width);
	}
}

static void
teardown(void)
{
	session_free(s);
	dispatch_free(d);
#ifdef HAVE_REDIS
	tier_free(tier);
	shared_free(shared);
#endif
	looplag_free(lag);
	server_free(srv);
	cache_teardown();
	event_base_free(base);
	free(client.lines[0]);
	client.nlines = 0;
}

/* The stats op's answer, its one line. */
static const char *
stats_line(void)
{
	session_line(s, "{\"op\":\"stats\",\"id\":1}", 21);
	ck_assert_uint_eq(client.nlines, 1);
	return client.lines[0];
}

/* line has member ("name":value) once, as a member of the stats. */
static void
assert_member(const char *line, const char *member)
{
	const char *at = strstr(line, member);

	ck_assert_msg(at != NULL, "no %s in %s", member, line);
	ck_assert(at[-1] == '{' || at[-1] == ',');
	at += strlen(member);
	ck_assert_msg(*at == ',' || *at == '}', "%s: %s", member, at);
	ck_assert_ptr_null(strstr(at, member));
}

START_TEST(test_stats_member)
{
	const struct doc_row *r = &doc_rows[_i];
	const char *line = stats_line();
	char member[128];

	if (r->name == NULL) {
		snprintf(member, sizeof(member), "\"%s\"", r->prom);
		ck_assert_ptr_null(strstr(line, member));
		return;
	}
	snprintf(member, sizeof(member), "\"%s\":%u", r->name, VALUE(_i));
	assert_member(line, member);
}
END_TEST

#ifdef HAVE_REDIS
/* The one server's state, not connected, in the stats op. */
START_TEST(test_redis_up)
{
	assert_member(stats_line(), "\"redis_up_0\":0");
}
END_TEST
#endif

START_TEST(test_metrics_lines)
{
	const struct doc_row *r = &doc_rows[_i];
	struct evbuffer *out = evbuffer_new();
	char want[512], *body;

	metrics_body(shown_stats, NULL, out);
	evbuffer_add(out, "", 1);
	body = (char *)evbuffer_pullup(out, -1);
	snprintf(want, sizeof(want), "# HELP %s %s\n# TYPE %s %s\n%s %u\n",
	    r->prom, r->help, r->prom, r->type, r->prom, VALUE(_i));
	ck_assert_msg(strstr(body, want) != NULL, "want\n%s", want);
	evbuffer_free(out);
}
END_TEST

/* Every named sample is a documented row: the table has no other. */
START_TEST(test_no_other)
{
	struct metric v[METRICS_MAX];
	size_t i, n = stats_show(&now, v);
	int j, named = 0, rows = 0;

	for (j = 0; j < NROWS(doc_rows); j++)
		rows += doc_rows[j].name != NULL;
	for (i = 0; i < n; i++) {
		if (v[i].name == NULL ||
		    strncmp(v[i].name, "redis_up_", 9) == 0)
			continue; /* redis_up_N: test_redis_up */
		named++;
		for (j = 0; j < NROWS(doc_rows); j++)
			if (doc_rows[j].name != NULL &&
			    strcmp(doc_rows[j].name, v[i].name) == 0)
				break;
		ck_assert_msg(
		    j < NROWS(doc_rows), "%s undocumented", v[i].name);
	}
	ck_assert_int_eq(named, rows);
}
END_TEST

START_TEST(test_families)
{
	struct evbuffer *out = evbuffer_new();
	char *body;

	metrics_body(shown_stats, NULL, out);
	evbuffer_add(out, "", 1);
	body = (char *)evbuffer_pullup(out, -1);
	ck_assert_msg(
	    strstr(body, family_types[_i]) != NULL, "no %s", family_types[_i]);
	evbuffer_free(out);
}
END_TEST

/* The stats suite. */
static Suite *
stats_suite(void)
{
	Suite *su = suite_create("stats");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_stats_member, 0, NROWS(doc_rows));
	tcase_add_loop_test(tc, test_metrics_lines, 0, NROWS(doc_rows));
	tcase_add_test(tc, test_no_other);
#ifdef HAVE_REDIS
	tcase_add_test(tc, test_redis_up);
#endif
	tcase_add_loop_test(tc, test_families, 0, NROWS(family_types));
	suite_add_tcase(su, tc);
	return su;
}

TEST_PROGRAM(stats_suite, NULL, NULL);
