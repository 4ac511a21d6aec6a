/*
 * check_cache.c: the cache's policy (docs/internals/cache.md, the contract's
 * "Policy" section) driven through cache_check(), cache_fetch_inject() and
 * clock_advance() with a real event base and fetcher. The loop never runs:
 * every fetch that cache_check() starts is ended by an injected result.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>

#include <check.h>
#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "robots.h"
#include "cache.h"
#include "clock.h"
/* Spelled with its path: a bare "config.h" finds autoconf's first. */
#include "../../src/robotsd/config.h"
#include "fetch.h"
#include "log.h"
#include "state.h"

#define DAY 86400.0
#define TOL 0.5    /* real seconds that may pass inside one test */
#define EXACT 1e-3 /* float rounding of clock seconds */

static char test_ua[] = "robotsd-test/1";
static struct config cf;
static struct event_base *evbase;
static struct fetcher *fetcher;
static struct cache *cache;
static struct clock clk;
static struct evhttp *httpd; /* the fetch tests' origin server */

/* A waiter that records how it was called back. */
struct probe {
	struct cache_waiter w;
	int calls;
	enum cache_policy policy;
	int purge_in_cb; /* purge the origin from inside the callback */
	const char *origin;
};

/* Contract defaults, so expected values come from the contract's table. */
static void
setup(void)
{
	memset(&cf, 0, sizeof(cf));
	cf.user_agent = test_ua;
	cf.default_ttl = 86400;
	cf.min_ttl = 60;
	cf.max_ttl = 2592000;
	cf.fetch_timeout = 30;
	cf.max_fetches = 256;
	cf.cache_max_bytes = 1ULL << 30;
	cf.retry_min = 60;
	cf.retry_max = 21600;
	cf.retry_503_min = 30;
	cf.retry_503_max = 3600;
	cf.unreachable_allow_after = 2592000;
	cf.max_waiting = 100000;
	cf.deny_private_addresses = 1;
	clk.offset = 0;
	ck_assert_ptr_nonnull(evbase = event_base_new());
	ck_assert_ptr_nonnull(fetcher = fetcher_new(evbase, &cf));
	ck_assert_ptr_nonnull(cache = cache_new(&cf, fetcher, &clk));
}

/* Free everything; valgrind and ASan see leaks here. */
static void
teardown(void)
{
	cache_free(cache);
	fetcher_free(fetcher);
	if (httpd != NULL)
		evhttp_free(httpd);
	httpd = NULL;
	event_base_free(evbase);
}

/* A result with no headers. */
static struct fetch_result
result(enum fetch_error err, int status)
{
	struct fetch_result r;

	memset(&r, 0, sizeof(r));
	r.error = err;
	r.http_status = status;
	r.body = "";
	if (err != FETCH_OK)
		r.error_message = "injected failure";
	return r;
}

/* Check origin without waiting; it must start (or find) a fetch to end. */
static void
fill(const char *origin, const struct fetch_result *r)
{
	const struct cache_entry *e;

	(void)cache_check(cache, origin, 0, NULL, &e);
	ck_assert_int_eq(cache_fetch_inject(cache, origin, r), 0);
}

/* Fill origin with one answer of this status and no headers. */
static void
fill_status(const char *origin, enum fetch_error err, int status)
{
	struct fetch_result r = result(err, status);

	fill(origin, &r);
}

/* A check that must not wait (the origin is cached). */
static enum cache_status
check_now(const char *origin, const struct cache_entry **e)
{
	return cache_check(cache, origin, 0, NULL, e);
}

static void probe_cb(struct cache_waiter *, const struct cache_entry *);

/* A check that may wait, with p as the waiter. */
static enum cache_status
check_wait(const char *origin, struct probe *p)
{
	const struct cache_entry *e;

	p->w.cb = probe_cb;
	p->w.arg = p;
	return cache_check(cache, origin, 1, &p->w, &e);
}

/* The waiter callback: count, remember, and maybe purge. */
static void
probe_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct probe *p = w->arg;

	p->calls++;
	p->policy = e->policy;
	if (p->purge_in_cb)
		ck_assert_uint_eq(cache_purge(cache, p->origin), 1);
}

/* Queue p on origin and expect it to wait. */
static void
wait_on(const char *origin, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	ck_assert_int_eq(check_wait(origin, p), CACHE_WAIT);
}

/* Seconds until origin's entry is refreshed or retried. */
static double
expires_in(const char *origin)
{
	const struct cache_entry *e = cache_find(cache, origin);

	ck_assert_ptr_nonnull(e);
	return cache_expires_in(cache, e);
}

/* Fill origin with a 404 carrying these caching headers. */
static void
fill_404_headers(const char *origin, const char *cc, const char *expires,
    const char *date, const char *age)
{
	struct fetch_result r = result(FETCH_OK, 404);

	r.cache_control = cc;
	r.expires = expires;
	r.date = date;
	r.age = age;
	fill(origin, &r);
}

START_TEST(test_4xx_allows_all_and_lives_default_ttl)
{
	const struct cache_entry *e;

	fill_status("https://a.test", FETCH_OK, 404);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(e->http_status, 404);
	ck_assert_ptr_null(e->robots);
	ck_assert_double_eq_tol(expires_in("https://a.test"), DAY, TOL);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
}
END_TEST

START_TEST(test_2xx_compiles_rules_and_truncated_body_is_success)
{
	static const char body[] = "User-agent: *\nDisallow: /private\n";
	struct fetch_result r = result(FETCH_OK, 200);
	const struct cache_entry *e;

	r.body = body;
	r.body_len = sizeof(body) - 1;
	r.truncated = 1;
	r.final_url = "https://b.test/robots.txt";
	fill("https://a.test", &r);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_nonnull(e->robots);
	ck_assert_int_eq(e->http_status, 200);
	ck_assert_uint_eq(e->body_bytes, sizeof(body) - 1);
	ck_assert_int_eq(e->truncated, 1);
	ck_assert_str_eq(e->final_url, "https://b.test/robots.txt");
	ck_assert_uint_eq(e->fail_streak, 0);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 0);
	ck_assert_double_eq_tol(expires_in("https://a.test"), DAY, TOL);
}
END_TEST

START_TEST(test_2xx_rules_decide_paths)
{
	static const char body[] = "User-agent: *\nDisallow: /private\n";
	struct fetch_result r = result(FETCH_OK, 200);
	struct robots_verdict v;
	const struct cache_entry *e;

	r.body = body;
	r.body_len = sizeof(body) - 1;
	fill("https://a.test", &r);
	e = cache_find(cache, "https://a.test");
	robots_check(e->robots, "FooBot", 6, "/private/x", 10, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.line, 2);
	robots_check(e->robots, "FooBot", 6, "/public", 7, &v);
	ck_assert_int_eq(v.allowed, 1);
}
END_TEST

START_TEST(test_too_many_redirects_allow_all_with_final_ttl)
{
	struct fetch_result r = result(FETCH_REDIRECTS, 301);
	const struct cache_entry *e;

	r.cache_control = "max-age=600";
	fill("https://a.test", &r);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(e->http_status, 301);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 600, TOL);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 0);
}
END_TEST

START_TEST(test_5xx_429_network_timeout_private_are_unreachable)
{
	static const struct {
		const char *origin;
		enum fetch_error err;
		int status, want_status;
	} t[] = {
		{ "https://a.test", FETCH_OK, 500, 500 },
		{ "https://b.test", FETCH_OK, 429, 429 },
		{ "https://c.test", FETCH_NETWORK, 0, 0 },
		{ "https://d.test", FETCH_TIMEOUT, 0, 0 },
		{ "https://e.test", FETCH_PRIVATE_ADDR, 0, 0 },
	};
	const struct cache_entry *e;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fill_status(t[i].origin, t[i].err, t[i].status);
		e = cache_find(cache, t[i].origin);
		ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
		ck_assert_int_eq(e->http_status, t[i].want_status);
		ck_assert_uint_eq(e->fail_streak, 1);
		ck_assert_ptr_nonnull(e->last_error);
	}
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 5);
}
END_TEST

START_TEST(test_max_age_sets_lifetime)
{
	fill_404_headers(
	    "https://a.test", "public, max-age=3600", NULL, NULL, NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 3600, TOL);
}
END_TEST

START_TEST(test_s_maxage_wins_over_max_age)
{
	fill_404_headers(
	    "https://a.test", "max-age=3600, s-maxage=7200", NULL, NULL, NULL);
	fill_404_headers(
	    "https://b.test", "s-maxage=120, max-age=7200", NULL, NULL, NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 7200, TOL);
	ck_assert_double_eq_tol(expires_in("https://b.test"), 120, TOL);
}
END_TEST

START_TEST(test_max_age_clamped_to_min_and_max_ttl)
{
	fill_404_headers("https://a.test", "max-age=5", NULL, NULL, NULL);
	fill_404_headers(
	    "https://b.test", "max-age=99999999", NULL, NULL, NULL);
	fill_404_headers("https://c.test", "max-age=0", NULL, NULL, NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 60, TOL);
	ck_assert_double_eq_tol(expires_in("https://b.test"), 2592000, TOL);
	ck_assert_double_eq_tol(expires_in("https://c.test"), 60, TOL);
}
END_TEST

START_TEST(test_no_store_and_no_cache_mean_min_ttl)
{
	fill_404_headers(
	    "https://a.test", "no-store, max-age=3600", NULL, NULL, NULL);
	fill_404_headers(
	    "https://b.test", "max-age=3600, no-cache", NULL, NULL, NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 60, TOL);
	ck_assert_double_eq_tol(expires_in("https://b.test"), 60, TOL);
}
END_TEST

START_TEST(test_expires_minus_date_without_max_age)
{
	static const char date[] = "Mon, 23 Nov 2026 08:00:00 GMT";

	fill_404_headers("https://a.test", NULL,
	    "Mon, 23 Nov 2026 10:00:00 GMT", date, NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 7200, TOL);
	/* max-age wins over Expires. */
	fill_404_headers("https://b.test", "max-age=600",
	    "Mon, 23 Nov 2026 10:00:00 GMT", date, NULL);
	ck_assert_double_eq_tol(expires_in("https://b.test"), 600, TOL);
	/* An invalid Expires means already expired: the minimum. */
	fill_404_headers("https://c.test", NULL, "0", date, NULL);
	ck_assert_double_eq_tol(expires_in("https://c.test"), 60, TOL);
}
END_TEST

START_TEST(test_expires_unchanged_by_shifted_test_clock)
{
	clock_advance(&clk, 10 * DAY);
	fill_404_headers("https://a.test", NULL,
	    "Mon, 23 Nov 2026 10:00:00 GMT", "Mon, 23 Nov 2026 08:00:00 GMT",
	    NULL);
	ck_assert_double_eq_tol(expires_in("https://a.test"), 7200, TOL);
}
END_TEST

START_TEST(test_age_is_subtracted)
{
	fill_404_headers("https://a.test", "max-age=3600", NULL, NULL, "600");
	fill_404_headers("https://b.test", NULL,
	    "Mon, 23 Nov 2026 10:00:00 GMT", "Mon, 23 Nov 2026 08:00:00 GMT",
	    "600");
	fill_404_headers("https://c.test", "max-age=3600", NULL, NULL, "3590");
	ck_assert_double_eq_tol(expires_in("https://a.test"), 3000, TOL);
	ck_assert_double_eq_tol(expires_in("https://b.test"), 6600, TOL);
	ck_assert_double_eq_tol(expires_in("https://c.test"), 60, TOL);
}
END_TEST

START_TEST(test_expired_entry_served_stale_while_one_refresh_runs)
{
	const struct cache_entry *e;

	fill_404_headers("https://a.test", "max-age=3600", NULL, NULL, NULL);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	clock_advance(&clk, 3601);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(e->fetching, 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 2);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){
	            .error = FETCH_OK, .http_status = 404, .body = "" }),
	    0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_uint_eq(cache_stats(cache)->stale, 2);
	ck_assert_uint_eq(cache_stats(cache)->hits, 2);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 0);
}
END_TEST

/* Expected window of failure k's delay: [base, min(1.1 base, hi)]. */
static void
assert_backoff(const struct cache_entry *e, double lo, double hi)
{
	double base = fmin(lo * pow(2, e->fail_streak - 1), hi);
	double d = e->next_retry - e->fetched_at;

	ck_assert_double_ge(d, base - EXACT);
	ck_assert_double_le(d, fmin(base * 1.1, hi) + EXACT);
	ck_assert_double_eq(e->expires_at, e->next_retry);
}

START_TEST(test_backoff_doubles_within_jitter_window_up_to_cap)
{
	const struct cache_entry *e;
	unsigned k;

	fill_status("https://a.test", FETCH_OK, 500);
	for (k = 1; k <= 12; k++) {
		e = cache_find(cache, "https://a.test");
		ck_assert_uint_eq(e->fail_streak, k);
		assert_backoff(e, 60, 21600);
		clock_advance(&clk, e->next_retry - clock_now(&clk));
		fill_status("https://a.test", FETCH_NETWORK, 0);
	}
	e = cache_find(cache, "https://a.test");
	ck_assert_double_eq_tol(e->next_retry - e->fetched_at, 21600, EXACT);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 13);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 13);
}
END_TEST

START_TEST(test_backoff_jitter_spreads_origins_failing_together)
{
	const struct cache_entry *e;
	double first = -1;
	char origin[64];
	int i, differ = 0;

	for (i = 0; i < 50; i++) {
		snprintf(origin, sizeof(origin), "https://o%d.test", i);
		fill_status(origin, FETCH_TIMEOUT, 0);
		e = cache_find(cache, origin);
		assert_backoff(e, 60, 21600);
		if (first < 0)
			first = e->next_retry - e->fetched_at;
		else if (e->next_retry - e->fetched_at != first)
			differ++;
	}
	ck_assert_int_gt(differ, 25);
}
END_TEST

START_TEST(test_503_and_429_use_the_short_schedule)
{
	const struct cache_entry *e;
	unsigned k;

	fill_status("https://a.test", FETCH_OK, 503);
	fill_status("https://b.test", FETCH_OK, 429);
	for (k = 1; k <= 9; k++) {
		assert_backoff(cache_find(cache, "https://a.test"), 30, 3600);
		assert_backoff(cache_find(cache, "https://b.test"), 30, 3600);
		clock_advance(&clk, 3600 * 1.1);
		fill_status("https://a.test", FETCH_OK, 503);
		fill_status("https://b.test", FETCH_OK, 429);
	}
	e = cache_find(cache, "https://a.test");
	ck_assert_uint_eq(e->fail_streak, 10);
	ck_assert_double_eq_tol(e->next_retry - e->fetched_at, 3600, EXACT);
}
END_TEST

/* Fill origin with status and a Retry-After (and Date) header. */
static double
retry_delay(const char *origin, int status, const char *ra, const char *date)
{
	struct fetch_result r = result(FETCH_OK, status);
	const struct cache_entry *e;

	r.retry_after = ra;
	r.date = date;
	fill(origin, &r);
	e = cache_find(cache, origin);
	return e->next_retry - e->fetched_at;
}

START_TEST(test_retry_after_seconds_clamped_to_503_bounds)
{
	ck_assert_double_eq_tol(
	    retry_delay("https://a.test", 503, "120", NULL), 120, EXACT);
	ck_assert_double_eq_tol(
	    retry_delay("https://b.test", 429, "5", NULL), 30, EXACT);
	ck_assert_double_eq_tol(
	    retry_delay("https://c.test", 503, "99999", NULL), 3600, EXACT);
	/* Only 503 and 429 honor it: a 500 backs off from retry-min. */
	ck_assert_double_ge(retry_delay("https://d.test", 500, "5", NULL), 60);
	ck_assert_double_lt(retry_delay("https://e.test", 500, "5", NULL), 66);
}
END_TEST

START_TEST(test_retry_after_http_date_clamped)
{
	static const char date[] = "Mon, 23 Nov 2026 08:00:00 GMT";

	ck_assert_double_eq_tol(retry_delay("https://a.test", 503,
	                            "Mon, 23 Nov 2026 08:10:00 GMT", date),
	    600, EXACT);
	ck_assert_double_eq_tol(retry_delay("https://b.test", 429,
	                            "Tue, 24 Nov 2026 08:00:00 GMT", date),
	    3600, EXACT);
	ck_assert_double_eq_tol(retry_delay("https://c.test", 503,
	                            "Mon, 23 Nov 2026 07:00:00 GMT", date),
	    30, EXACT);
	/* The test clock does not move an origin's dates. */
	clock_advance(&clk, 5 * DAY);
	ck_assert_double_eq_tol(retry_delay("https://d.test", 503,
	                            "Mon, 23 Nov 2026 08:10:00 GMT", date),
	    600, EXACT);
}
END_TEST

START_TEST(test_no_fetch_during_backoff_then_exactly_one_retry)
{
	const struct cache_entry *e;
	double wait;

	fill_status("https://a.test", FETCH_OK, 500);
	wait = expires_in("https://a.test");
	clock_advance(&clk, wait - 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(e->fetching, 0);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 1);
	clock_advance(&clk, 1.5);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 2);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
}
END_TEST

START_TEST(test_unreachable_30_days_without_good_copy_allows_all)
{
	const struct cache_entry *e;

	fill_status("https://a.test", FETCH_OK, 500);
	clock_advance(&clk, 30 * DAY - 10);
	fill_status("https://a.test", FETCH_OK, 502);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_uint_eq(e->fail_streak, 2);
	/* Lazy: the check at 30 days flips it before any new fetch ends. */
	clock_advance(&clk, 200);
	(void)check_now("https://a.test", &e);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){ .error = FETCH_TIMEOUT, .body = "" }),
	    0);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	ck_assert_uint_eq(e->fail_streak, 3);
	ck_assert_double_gt(e->next_retry, clock_now(&clk));
	/* A success ends the streak. */
	clock_advance(&clk, 21600 * 1.1);
	fill_status("https://a.test", FETCH_OK, 404);
	e = cache_find(cache, "https://a.test");
	ck_assert_uint_eq(e->fail_streak, 0);
	ck_assert_double_eq(e->next_retry, 0);
}
END_TEST

/* Fill origin with a 200 whose body disallows everything. */
static void
fill_rules(const char *origin)
{
	static const char body[] = "User-agent: *\nDisallow: /\n";
	struct fetch_result r = result(FETCH_OK, 200);

	r.body = body;
	r.body_len = sizeof(body) - 1;
	fill(origin, &r);
}

START_TEST(test_good_copy_kept_through_5xx)
{
	const struct cache_entry *e;
	const struct robots *rb;

	fill_rules("https://a.test");
	rb = cache_find(cache, "https://a.test")->robots;
	clock_advance(&clk, DAY + 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){
	            .error = FETCH_OK, .http_status = 503, .body = "" }),
	    0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_int_eq(e->http_status, 503);
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 1);
	/* A later success replaces the copy and ends staleness. */
	clock_advance(&clk, 3600 * 1.1);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(e->stale, 0);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
}
END_TEST

START_TEST(test_unreachable_30_days_keeps_good_copy)
{
	const struct cache_entry *e;
	const struct robots *rb;

	fill_rules("https://a.test");
	rb = cache_find(cache, "https://a.test")->robots;
	clock_advance(&clk, DAY + 1);
	fill_status("https://a.test", FETCH_NETWORK, 0);
	clock_advance(&clk, 31 * DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){ .error = FETCH_NETWORK, .body = "" }),
	    0);
	e = cache_find(cache, "https://a.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	ck_assert_uint_eq(e->fail_streak, 2);
}
END_TEST

START_TEST(test_max_waiting_overloads_new_waiters_only)
{
	struct probe p[3];
	const struct cache_entry *e;

	cf.max_waiting = 2;
	cache_configure(cache, &cf);
	fill_status("https://cached.test", FETCH_OK, 404);
	wait_on("https://a.test", &p[0]);
	wait_on("https://b.test", &p[1]);
	memset(&p[2], 0, sizeof(p[2]));
	ck_assert_int_eq(check_wait("https://a.test", &p[2]), CACHE_OVERLOADED);
	ck_assert_int_eq(check_wait("https://c.test", &p[2]), CACHE_OVERLOADED);
	ck_assert_ptr_null(cache_find(cache, "https://c.test"));
	ck_assert_int_eq(check_now("https://cached.test", &e), CACHE_HIT);
	ck_assert_int_eq(check_now("https://d.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(cache_stats(cache)->overloaded, 2);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	/* Once a fetch ends, waiting drops and new waiters are let in. */
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p[0].calls, 1);
	ck_assert_int_eq(check_wait("https://c.test", &p[2]), CACHE_WAIT);
	cache_waiter_cancel(&p[1].w);
	cache_waiter_cancel(&p[2].w);
}
END_TEST

START_TEST(test_queued_fetches_capped_by_max_waiting_even_without_wait)
{
	const struct cache_entry *e;

	cf.max_waiting = 2;
	cf.max_fetches = 1;
	cache_configure(cache, &cf);
	fetcher_configure(fetcher, &cf);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_PENDING);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
	ck_assert_uint_eq(fetcher_queued(fetcher), 2);
	/* A fourth origin would queue a third fetch: refused, no entry. */
	ck_assert_int_eq(check_now("https://d.test", &e), CACHE_OVERLOADED);
	ck_assert_ptr_null(cache_find(cache, "https://d.test"));
	/* An origin already being fetched is still joined. */
	ck_assert_int_eq(check_now("https://c.test", &e), CACHE_PENDING);
	ck_assert_uint_eq(cache_stats(cache)->overloaded, 1);
}
END_TEST

START_TEST(test_coalescing_many_waiters_one_fetch)
{
	struct probe p[5];
	const struct cache_stats *st = cache_stats(cache);
	int i;

	for (i = 0; i < 5; i++)
		wait_on("https://a.test", &p[i]);
	ck_assert_uint_eq(st->fetches, 1);
	ck_assert_uint_eq(st->misses, 5);
	ck_assert_uint_eq(st->coalesced, 4);
	ck_assert_uint_eq(st->waiting, 5);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
	fill_status("https://a.test", FETCH_OK, 410);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(p[i].calls, 1);
		ck_assert_int_eq(p[i].policy, CACHE_ALLOW_ALL);
	}
	ck_assert_uint_eq(st->waiting, 0);
	ck_assert_uint_eq(st->fetches, 1);
}
END_TEST

START_TEST(test_cancelled_waiter_is_not_called_and_fetch_fills_cache)
{
	struct probe p[3];
	int i;

	for (i = 0; i < 3; i++)
		wait_on("https://a.test", &p[i]);
	cache_waiter_cancel(&p[1].w);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	cache_waiter_cancel(&p[0].w);
	cache_waiter_cancel(&p[2].w);
	cache_waiter_cancel(&p[2].w); /* twice is harmless */
	ck_assert_uint_eq(cache_stats(cache)->waiting, 0);
	fill_status("https://a.test", FETCH_OK, 404);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(p[i].calls, 0);
	ck_assert_int_eq(
	    cache_find(cache, "https://a.test")->policy, CACHE_ALLOW_ALL);
	cache_waiter_cancel(&p[0].w); /* after the end too */
}
END_TEST

START_TEST(test_purge_while_waiting_answers_waiters_from_the_fetch)
{
	struct probe p[2];
	const struct cache_entry *e;

	fill_rules("https://a.test");
	clock_advance(&clk, DAY + 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	/* Purge forgets the old copy: new checks wait for the refresh. */
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test")->robots);
	wait_on("https://a.test", &p[0]);
	wait_on("https://a.test", &p[1]);
	ck_assert_uint_eq(cache_purge_all(cache), 1);
	ck_assert_uint_eq(cache_stats(cache)->waiting, 2);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p[0].calls, 1);
	ck_assert_int_eq(p[1].calls, 1);
	ck_assert_int_eq(p[1].policy, CACHE_ALLOW_ALL);
	ck_assert_uint_eq(cache_stats(cache)->fetches, 2);
	/* An idle entry simply goes. */
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(cache_purge(cache, "https://a.test"), 0);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(cache)->bytes, 0);
}
END_TEST

START_TEST(test_purge_from_waiter_callback_still_answers_the_rest)
{
	struct probe p[3];
	int i;

	for (i = 0; i < 3; i++)
		wait_on("https://a.test", &p[i]);
	p[0].purge_in_cb = 1;
	p[0].origin = "https://a.test";
	fill_status("https://a.test", FETCH_OK, 404);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(p[i].calls, 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(cache)->bytes, 0);
}
END_TEST

START_TEST(test_entry_bytes_count_ruleset_and_strings)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	size_t empty, with_rules;

	fill_status("https://a.test", FETCH_OK, 404);
	empty = st->bytes;
	ck_assert_uint_gt(empty, strlen("https://a.test"));
	fill_rules("https://b.test");
	with_rules = st->bytes - empty;
	e = cache_find(cache, "https://b.test");
	ck_assert_uint_eq(with_rules, empty + robots_memsize(e->robots));
	ck_assert_uint_eq(st->entries, 2);
}
END_TEST

START_TEST(test_lru_evicts_least_recently_used_by_bytes)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	size_t one;

	fill_status("https://a.test", FETCH_OK, 404);
	one = st->bytes;
	fill_status("https://b.test", FETCH_OK, 404);
	fill_status("https://c.test", FETCH_OK, 404);
	cf.cache_max_bytes = 3 * one;
	cache_configure(cache, &cf);
	ck_assert_uint_eq(st->evictions, 0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	fill_status("https://d.test", FETCH_OK, 404);
	ck_assert_ptr_null(cache_find(cache, "https://b.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://c.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://d.test"));
	ck_assert_uint_eq(st->evictions, 1);
	ck_assert_uint_eq(st->entries, 3);
	ck_assert_uint_eq(st->bytes, 3 * one);
}
END_TEST

START_TEST(test_lru_never_evicts_entries_in_flight)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	struct probe p;

	wait_on("https://a.test", &p);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	fill_status("https://c.test", FETCH_OK, 404);
	cf.cache_max_bytes = 1;
	cache_configure(cache, &cf);
	ck_assert_ptr_nonnull(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_ptr_null(cache_find(cache, "https://c.test"));
	ck_assert_uint_eq(st->evictions, 1);
	/* Once its fetch ends and its waiter is answered, it may go. */
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p.calls, 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_uint_eq(st->evictions, 2);
}
END_TEST

START_TEST(test_stats_count_every_check_exactly_once)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	struct probe p[2];

	wait_on("https://a.test", &p[0]); /* miss, fetch 1 */
	wait_on("https://a.test", &p[1]); /* miss, coalesced */
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_PENDING);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){
	            .error = FETCH_OK, .http_status = 404, .body = "" }),
	    0);
	ck_assert_int_eq(p[0].calls + p[1].calls, 2);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_int_eq(
	    cache_fetch_inject(cache, "https://a.test",
	        &(struct fetch_result){
	            .error = FETCH_OK, .http_status = 500, .body = "" }),
	    0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_ptr_null(cache_find(cache, "https://zzz.test"));
	ck_assert_uint_eq(st->misses, 3);
	ck_assert_uint_eq(st->coalesced, 2);
	ck_assert_uint_eq(st->hits, 2);
	ck_assert_uint_eq(st->stale, 2);
	ck_assert_uint_eq(st->fetches, 2);
	ck_assert_uint_eq(st->fetch_errors, 1);
	ck_assert_uint_eq(st->evictions, 0);
	ck_assert_uint_eq(st->entries, 1);
	ck_assert_uint_eq(st->waiting, 0);
	ck_assert_uint_eq(st->overloaded, 0);
	ck_assert_uint_eq(cache_purge_all(cache), 1);
	ck_assert_uint_eq(st->entries, 0);
	ck_assert_uint_eq(st->bytes, 0);
}
END_TEST

START_TEST(test_free_with_waiters_and_fetches_in_flight)
{
	static struct probe p; /* cache_free() unhooks it after the test */
	const struct cache_entry *e;

	wait_on("https://a.test", &p);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	ck_assert_int_eq(cache_fetch_inject(cache, "https://zzz.test",
	                     &(struct fetch_result){ .body = "" }),
	    -1);
	/* teardown frees the cache with both in flight: no callback, no leak */
}
END_TEST

/*
 * The fetcher against an in-process HTTP server on 127.0.0.1 (libevent's
 * evhttp on the same loop). Origins are named "origin.test" and reach the
 * server through --connect-to, as the integration tests do.
 */
struct outcome {
	int done;
	enum fetch_error error;
	int status;
	size_t body_len;
	int truncated;
	unsigned redirects;
	char body[128];
	char retry_after[32];
};

static int httpd_port;
static char connect_spec[64];
static char *connect_list[2] = { connect_spec, NULL };
static int outcomes;

/* A bit writer for the deflate stream below (RFC 1951: LSB first). */
struct bitw {
	unsigned char *out;
	size_t len;
	unsigned acc, n;
};

/* Append the low nbits of code, most significant first (Huffman codes). */
static void
bitw_code(struct bitw *w, unsigned code, int nbits)
{
	while (nbits-- > 0) {
		w->acc |= ((code >> nbits) & 1) << w->n;
		if (++w->n == 8) {
			w->out[w->len++] = (unsigned char)w->acc;
			w->acc = w->n = 0;
		}
	}
}

/*
 * A gzip stream of one literal 'a' then n copies of (length 258, distance
 * 1) in one fixed-Huffman block: 1 + 258 n bytes decoded from about 13 n / 8.
 * The CRC and size trailer are zeros: the reader stops long before them.
 */
static size_t
gzip_bomb(unsigned char *out, size_t n)
{
	static const unsigned char hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0,
		3 };
	struct bitw w = { out, sizeof(hdr), 0, 0 };
	size_t i;

	memcpy(out, hdr, sizeof(hdr));
	bitw_code(&w, 1, 1);          /* BFINAL */
	bitw_code(&w, 2, 2);          /* BTYPE 01 (bits LSB first) */
	bitw_code(&w, 0x30 + 'a', 8); /* literal 'a' */
	for (i = 0; i < n; i++) {
		bitw_code(&w, 0xc5, 8); /* length code 285: 258 */
		bitw_code(&w, 0, 5);    /* distance code 0: 1 */
	}
	bitw_code(&w, 0, 7);             /* end of block */
	bitw_code(&w, 0, (8 - w.n) % 8); /* pad to a byte */
	memset(out + w.len, 0, 8);
	return w.len + 8;
}

/* Reply with status, an optional header and body. */
static void
reply(struct evhttp_request *req, int code, const char *hname, const char *hval,
    const void *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();

	if (hname != NULL)
		evhttp_add_header(
		    evhttp_request_get_output_headers(req), hname, hval);
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, "X", b);
	evbuffer_free(b);
}

/* Redirect to path on the server, named by host. */
static void
redirect(struct evhttp_request *req, const char *host, const char *path)
{
	char loc[256];

	snprintf(loc, sizeof(loc), "http://%s/%s", host, path);
	reply(req, 302, "Location", loc, "", 0);
}

/* The test server: the path names the answer. */
static void
httpd_cb(struct evhttp_request *req, void *arg)
{
	const char *uri = evhttp_request_get_uri(req), *ua;
	static unsigned char big[600000];
	static unsigned char bomb[20000];
	char next[64], host[64];
	int n;

	(void)arg;
	if (strcmp(uri, "/ok") == 0)
		reply(req, 200, "Cache-Control", "max-age=600",
		    "User-agent: *\nDisallow: /x\n", 27);
	else if (strcmp(uri, "/ua") == 0) {
		ua = evhttp_find_header(
		    evhttp_request_get_input_headers(req), "User-Agent");
		reply(req, 200, NULL, NULL, ua, ua != NULL ? strlen(ua) : 0);
	} else if (strcmp(uri, "/big") == 0) {
		memset(big, '#', sizeof(big));
		reply(req, 200, NULL, NULL, big, sizeof(big));
	} else if (strcmp(uri, "/bomb") == 0)
		reply(req, 200, "Content-Encoding", "gzip", bomb,
		    gzip_bomb(bomb, 8000));
	else if (strcmp(uri, "/503") == 0 || strcmp(uri, "/robots.txt") == 0)
		reply(req, 503, "Retry-After", "120", "", 0);
	else if (sscanf(uri, "/redir/%d", &n) == 1 && n > 0) {
		snprintf(next, sizeof(next), "redir/%d", n - 1);
		redirect(req, "origin.test", next);
	} else if (strcmp(uri, "/redir/0") == 0)
		reply(req, 200, NULL, NULL, "final", 5);
	else if (strcmp(uri, "/to-private") == 0) {
		snprintf(host, sizeof(host), "127.0.0.1:%d", httpd_port);
		redirect(req, host, "ok");
	} else if (strcmp(uri, "/to-file") == 0)
		reply(req, 302, "Location", "file:///etc/passwd", "", 0);
	else if (strcmp(uri, "/to-bad") == 0)
		reply(req, 302, "Location", "http://bad host/", "", 0);
	else if (strcmp(uri, "/slow") != 0) /* /slow: never answered */
		reply(req, 404, NULL, NULL, "", 0);
}

/* Start the server and point origin.test:80 at it. */
static void
fetch_setup(void)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	setup();
	ck_assert_ptr_nonnull(httpd = evhttp_new(evbase));
	evhttp_set_gencb(httpd, httpd_cb, NULL);
	ck_assert_ptr_nonnull(
	    bs = evhttp_bind_socket_with_handle(httpd, "127.0.0.1", 0));
	ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs),
	                     (struct sockaddr *)&sin, &sl),
	    0);
	httpd_port = ntohs(sin.sin_port);
	snprintf(connect_spec, sizeof(connect_spec),
	    "origin.test:80:127.0.0.1:%d", httpd_port);
	cf.connect_to = connect_list;
	cf.nconnect_to = 1;
	fetcher_configure(fetcher, &cf);
}

/* Record a fetch's result. */
static void
outcome_cb(const struct fetch_result *r, void *arg)
{
	struct outcome *o = arg;

	o->done = 1;
	o->error = r->error;
	o->status = r->http_status;
	o->body_len = r->body_len;
	o->truncated = r->truncated;
	o->redirects = r->redirects;
	snprintf(o->body, sizeof(o->body), "%.*s",
	    (int)(r->body_len < 100 ? r->body_len : 100), r->body);
	snprintf(o->retry_after, sizeof(o->retry_after), "%s",
	    r->retry_after != NULL ? r->retry_after : "");
	outcomes++;
}

/* Guard: a test that runs too long fails instead of hanging. */
static void
guard_cb(evutil_socket_t fd, short kind, void *arg)
{
	(void)fd;
	(void)kind;
	*(int *)arg = 1;
}

/* Run the loop until *count reaches want (at most 10 s). */
static void
run_until(const int *count, int want)
{
	struct timeval tv = { 10, 0 };
	struct event *guard;
	int expired = 0;

	guard = evtimer_new(evbase, guard_cb, &expired);
	evtimer_add(guard, &tv);
	while (*count < want && !expired)
		event_base_loop(evbase, EVLOOP_ONCE);
	event_free(guard);
	ck_assert_msg(!expired, "the loop did not get there in 10 s");
}

/* Fetch url and run the loop until it ends. */
static void
fetch_one(const char *url, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	outcomes = 0;
	ck_assert_ptr_nonnull(fetch_start(fetcher, url, outcome_cb, o));
	run_until(&outcomes, 1);
}

START_TEST(test_fetch_200_through_connect_to_sends_user_agent)
{
	struct outcome o;

	fetch_one("http://origin.test/ok", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_str_eq(o.body, "User-agent: *\nDisallow: /x\n");
	fetch_one("http://origin.test/ua", &o);
	ck_assert_str_eq(o.body, "robotsd-test/1");
}
END_TEST

START_TEST(test_fetch_body_cut_at_cap_counts_as_success)
{
	struct outcome o;

	fetch_one("http://origin.test/big", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(o.body_len, ROBOTS_MAX_BODY);
	ck_assert_int_eq(o.truncated, 1);
}
END_TEST

START_TEST(test_fetch_gzip_bomb_cut_at_cap_of_decoded_bytes)
{
	struct outcome o;
	char want[101];

	fetch_one("http://origin.test/bomb", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(o.body_len, ROBOTS_MAX_BODY);
	ck_assert_int_eq(o.truncated, 1);
	memset(want, 'a', 100);
	want[100] = '\0';
	ck_assert_str_eq(o.body, want);
}
END_TEST

START_TEST(test_fetch_follows_5_redirects_and_fails_on_6)
{
	struct outcome o;

	fetch_one("http://origin.test/redir/5", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(o.redirects, 5);
	ck_assert_str_eq(o.body, "final");
	fetch_one("http://origin.test/redir/6", &o);
	ck_assert_int_eq(o.error, FETCH_REDIRECTS);
	ck_assert_int_eq(o.status, 302);
}
END_TEST

START_TEST(test_fetch_keeps_status_and_retry_after)
{
	struct outcome o;

	fetch_one("http://origin.test/503", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 503);
	ck_assert_str_eq(o.retry_after, "120");
	fetch_one("http://origin.test/missing", &o);
	ck_assert_int_eq(o.status, 404);
}
END_TEST

START_TEST(test_fetch_refuses_private_address_also_after_redirect)
{
	struct outcome o;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", httpd_port);
	fetch_one(url, &o);
	ck_assert_int_eq(o.error, FETCH_PRIVATE_ADDR);
	ck_assert_int_eq(o.status, 0);
	fetch_one("http://origin.test/to-private", &o);
	ck_assert_int_eq(o.error, FETCH_PRIVATE_ADDR);
	cf.deny_private_addresses = 0;
	fetcher_configure(fetcher, &cf);
	fetch_one(url, &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
}
END_TEST

START_TEST(test_fetch_refuses_redirect_to_other_protocols)
{
	struct outcome o;

	fetch_one("http://origin.test/to-file", &o);
	ck_assert_int_ne(o.error, FETCH_OK);
	ck_assert_uint_eq(o.body_len, 0);
}
END_TEST

START_TEST(test_fetch_timeout_enforced)
{
	struct outcome o;

	cf.fetch_timeout = 1;
	fetcher_configure(fetcher, &cf);
	fetch_one("http://origin.test/slow", &o);
	ck_assert_int_eq(o.error, FETCH_TIMEOUT);
	ck_assert_int_eq(o.status, 0);
}
END_TEST

START_TEST(test_fetch_unfollowable_redirect_ends_like_too_many)
{
	struct outcome o;

	fetch_one("http://origin.test/to-bad", &o);
	ck_assert_int_eq(o.error, FETCH_REDIRECTS);
	ck_assert_int_eq(o.status, 302);
	fetch_one("http://origin.test/to-file", &o);
	ck_assert_int_eq(o.error, FETCH_REDIRECTS);
}
END_TEST

START_TEST(test_fetch_beyond_max_fetches_queued_not_dropped)
{
	struct outcome o[4];
	int i;

	cf.max_fetches = 1;
	fetcher_configure(fetcher, &cf);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(fetch_start(
		    fetcher, "http://origin.test/ok", outcome_cb, &o[i]));
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
	ck_assert_uint_eq(fetcher_queued(fetcher), 3);
	run_until(&outcomes, 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(o[i].status, 200);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 0);
	ck_assert_uint_eq(fetcher_queued(fetcher), 0);
}
END_TEST

START_TEST(test_cache_fetch_through_the_loop_wakes_waiter)
{
	static struct probe p;

	memset(&p, 0, sizeof(p));
	p.w.cb = probe_cb;
	p.w.arg = &p;
	ck_assert_int_eq(cache_check(cache, "http://origin.test", 1, &p.w,
	                     &(const struct cache_entry *){ NULL }),
	    CACHE_WAIT);
	run_until(&p.calls, 1);
	ck_assert_int_eq(p.policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(
	    cache_find(cache, "http://origin.test")->http_status, 503);
}
END_TEST

/* A state file path in a new private directory; *dir to remove after. */
static char *
state_path(char *dir)
{
	char *path;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_ne(asprintf(&path, "%s/state", dir), -1);
	return path;
}

/* Remove the state file and its directory. */
static void
state_cleanup(char *dir, char *path)
{
	unlink(path);
	rmdir(dir);
	free(path);
}

START_TEST(test_state_round_trip_keeps_rules_lifetime_and_retry_state)
{
	char dir[] = "/tmp/check_state.XXXXXX", *path = state_path(dir);
	struct fetch_result r = result(FETCH_OK, 200);
	const struct cache_entry *e;
	struct robots_verdict v;
	double retry_at;
	char *cause = NULL;

	r.body = "User-agent: *\nDisallow: /p\n";
	r.body_len = strlen(r.body);
	r.cache_control = "max-age=5000";
	fill("https://a.test", &r);
	fill_status("https://down.test", FETCH_OK, 500);
	retry_at = cache_find(cache, "https://down.test")->next_retry;
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 2);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&cf, fetcher, &clk));
	ck_assert_int_eq(
	    state_load(cache, path, cf.cache_max_bytes, &cause), 2);
	ck_assert_ptr_nonnull(e = cache_find(cache, "https://a.test"));
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->http_status, 200);
	ck_assert_double_eq_tol(cache_expires_in(cache, e), 5000, TOL);
	robots_check(e->robots, "bot", 3, "/p", 2, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.line, 2);
	ck_assert_ptr_nonnull(e = cache_find(cache, "https://down.test"));
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_double_eq_tol(e->next_retry, retry_at, EXACT);
	ck_assert_uint_eq(cache_stats(cache)->entries, 2);
	state_cleanup(dir, path);
}
END_TEST

START_TEST(test_state_damaged_file_loads_nothing)
{
	char dir[] = "/tmp/check_state.XXXXXX", *path = state_path(dir);
	char *cause = NULL;
	FILE *f;

	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 1);
	ck_assert_ptr_nonnull(f = fopen(path, "r+b"));
	ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
	ck_assert_int_ne(fputc('X', f), EOF);
	fclose(f);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&cf, fetcher, &clk));
	ck_assert_int_eq(
	    state_load(cache, path, cf.cache_max_bytes, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, path));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	free(cause);
	state_cleanup(dir, path);
}
END_TEST

/* FNV-1a 64, as the state file's checksum. */
static uint64_t
fnv64(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* Read a whole small file; *len its size. */
static unsigned char *
slurp_file(const char *path, size_t *len)
{
	unsigned char *buf = malloc(1 << 20);
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

START_TEST(test_state_bad_second_record_loads_nothing)
{
	char dir[] = "/tmp/check_state.XXXXXX", *path = state_path(dir);
	size_t len, pos = 14 + 16, rec;
	uint32_t lens[3];
	uint64_t ilen, sum;
	int32_t bad = 99;
	unsigned char *buf;
	char *cause = NULL;
	FILE *f;

	fill_status("https://a.test", FETCH_OK, 404);
	fill_status("https://b.test", FETCH_OK, 404);
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 2);
	buf = slurp_file(path, &len);
	/* Skip record 1: tag, fixed part (80 bytes), strings, image. */
	memcpy(&ilen, buf + pos + 1 + 40, 8);
	memcpy(lens, buf + pos + 1 + 60, sizeof(lens));
	for (rec = pos + 1 + 80, pos = 0; pos < 3; pos++)
		rec += lens[pos] != UINT32_MAX ? lens[pos] : 0;
	pos = rec + ilen;
	ck_assert_int_eq(buf[pos], 1);
	memcpy(buf + pos + 1 + 48, &bad, 4); /* record 2's policy */
	sum = fnv64(buf, len - 8);
	memcpy(buf + len - 8, &sum, 8);
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&cf, fetcher, &clk));
	ck_assert_int_eq(
	    state_load(cache, path, cf.cache_max_bytes, &cause), -1);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_ptr_nonnull(strstr(cause, ": record 2 (at byte "));
	ck_assert_ptr_nonnull(strstr(cause, "): a policy out of range"));
	free(cause);
	free(buf);
	state_cleanup(dir, path);
}
END_TEST

START_TEST(test_state_fifo_and_oversize_are_refused)
{
	char dir[] = "/tmp/check_state.XXXXXX", *path = state_path(dir);
	char *cause = NULL;

	ck_assert_uint_eq(state_max_size(1000), 2000 + (1 << 20));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(state_load(cache, path, 1 << 20, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, ": not a regular file"));
	free(cause);
	/* The save replaces the FIFO without opening it. */
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 0);
	/* A regular file now; make it one byte too long (sparse). */
	ck_assert_int_eq(truncate(path, (off_t)state_max_size(1000) + 1), 0);
	ck_assert_int_eq(state_load(cache, path, 1000, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "bytes, more than the"));
	free(cause);
	state_cleanup(dir, path);
}
END_TEST

START_TEST(test_state_missing_file_is_an_empty_start)
{
	char *cause = NULL;

	ck_assert_int_eq(
	    state_load(cache, "/nonexistent/robotsd/state", 1 << 20, &cause),
	    0);
	ck_assert_ptr_null(cause);
}
END_TEST

/* The suite, one test per policy line. */
static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_4xx_allows_all_and_lives_default_ttl);
	tcase_add_test(
	    tc, test_2xx_compiles_rules_and_truncated_body_is_success);
	tcase_add_test(tc, test_2xx_rules_decide_paths);
	tcase_add_test(tc, test_too_many_redirects_allow_all_with_final_ttl);
	tcase_add_test(
	    tc, test_5xx_429_network_timeout_private_are_unreachable);
	tcase_add_test(tc, test_max_age_sets_lifetime);
	tcase_add_test(tc, test_s_maxage_wins_over_max_age);
	tcase_add_test(tc, test_max_age_clamped_to_min_and_max_ttl);
	tcase_add_test(tc, test_no_store_and_no_cache_mean_min_ttl);
	tcase_add_test(tc, test_expires_minus_date_without_max_age);
	tcase_add_test(tc, test_expires_unchanged_by_shifted_test_clock);
	tcase_add_test(tc, test_age_is_subtracted);
	tcase_add_test(
	    tc, test_expired_entry_served_stale_while_one_refresh_runs);
	tcase_add_test(tc, test_backoff_doubles_within_jitter_window_up_to_cap);
	tcase_add_test(
	    tc, test_backoff_jitter_spreads_origins_failing_together);
	tcase_add_test(tc, test_503_and_429_use_the_short_schedule);
	tcase_add_test(tc, test_retry_after_seconds_clamped_to_503_bounds);
	tcase_add_test(tc, test_retry_after_http_date_clamped);
	tcase_add_test(tc, test_no_fetch_during_backoff_then_exactly_one_retry);
	tcase_add_test(
	    tc, test_unreachable_30_days_without_good_copy_allows_all);
	tcase_add_test(tc, test_good_copy_kept_through_5xx);
	tcase_add_test(tc, test_unreachable_30_days_keeps_good_copy);
	tcase_add_test(tc, test_max_waiting_overloads_new_waiters_only);
	tcase_add_test(
	    tc, test_queued_fetches_capped_by_max_waiting_even_without_wait);
	tcase_add_test(tc, test_coalescing_many_waiters_one_fetch);
	tcase_add_test(
	    tc, test_cancelled_waiter_is_not_called_and_fetch_fills_cache);
	tcase_add_test(
	    tc, test_purge_while_waiting_answers_waiters_from_the_fetch);
	tcase_add_test(
	    tc, test_purge_from_waiter_callback_still_answers_the_rest);
	tcase_add_test(tc, test_entry_bytes_count_ruleset_and_strings);
	tcase_add_test(tc, test_lru_evicts_least_recently_used_by_bytes);
	tcase_add_test(tc, test_lru_never_evicts_entries_in_flight);
	tcase_add_test(tc, test_stats_count_every_check_exactly_once);
	tcase_add_test(tc, test_free_with_waiters_and_fetches_in_flight);
	suite_add_tcase(s, tc);
	tc = tcase_create("state");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(
	    tc, test_state_round_trip_keeps_rules_lifetime_and_retry_state);
	tcase_add_test(tc, test_state_damaged_file_loads_nothing);
	tcase_add_test(tc, test_state_missing_file_is_an_empty_start);
	tcase_add_test(tc, test_state_bad_second_record_loads_nothing);
	tcase_add_test(tc, test_state_fifo_and_oversize_are_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("fetch");
	tcase_add_checked_fixture(tc, fetch_setup, teardown);
	tcase_add_test(tc, test_fetch_200_through_connect_to_sends_user_agent);
	tcase_add_test(tc, test_fetch_body_cut_at_cap_counts_as_success);
	tcase_add_test(tc, test_fetch_gzip_bomb_cut_at_cap_of_decoded_bytes);
	tcase_add_test(tc, test_fetch_follows_5_redirects_and_fails_on_6);
	tcase_add_test(tc, test_fetch_keeps_status_and_retry_after);
	tcase_add_test(
	    tc, test_fetch_refuses_private_address_also_after_redirect);
	tcase_add_test(tc, test_fetch_refuses_redirect_to_other_protocols);
	tcase_add_test(tc, test_fetch_timeout_enforced);
	tcase_add_test(tc, test_fetch_unfollowable_redirect_ends_like_too_many);
	tcase_add_test(tc, test_fetch_beyond_max_fetches_queued_not_dropped);
	tcase_add_test(tc, test_cache_fetch_through_the_loop_wakes_waiter);
	suite_add_tcase(s, tc);
	return s;
}

/* Run the suite; the exit status is the failure count as a verdict. */
int
main(void)
{
	SRunner *sr;
	int failed;

	/* The fetch tests talk to 127.0.0.1 only, never through a proxy. */
	unsetenv("http_proxy");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	log_init(1, LOG_WARNING);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sr = srunner_create(cache_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	curl_global_cleanup();
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
