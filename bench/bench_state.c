/*
 * bench_state.c: builds a robotsd state file of N synthetic origins for the
 * scale benchmark, and times the state code itself.
 *
 * usage: bench_state N STATE_FILE REQUESTS_FILE
 *
 * Origin i is http://oI.bench.test with a two-rule robots.txt of its own
 * (User-agent: * / Disallow: /pI/ / Allow: /), fresh for a year. The
 * cache is saved to STATE_FILE, then loaded into a new cache; prints the
 * save and load times and the bytes of the file as key=value figures.
 * REQUESTS_FILE gets 100,000 check lines for loadgen over origins spread
 * across all N, alternating allowed and disallowed paths.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "robots.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "persist/state.h"

#define YEAR (365.0 * 86400)
#define REQUESTS 100000

/* Monotonic seconds. */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Exit with a message. */
static void
fail(const char *what, const char *cause)
{
	fprintf(stderr, "bench_state: %s%s%s\n", what, cause ? ": " : "",
	    cause ? cause : "");
	exit(1);
}

/* The daemon's default cache settings, with room for every origin. */
static const struct cache_settings bench_settings = {
	.life = { .default_ttl = 86400,
	    .min_ttl = 60,
	    .max_ttl = 2592000,
	    .retry_min = 60,
	    .retry_max = 21600,
	    .retry_503_min = 30,
	    .retry_503_max = 3600,
	    .unreachable_allow_after = 2592000 },
	.max_bytes = (size_t)1 << 40,
	.max_waiting = 100000,
};

/* Nothing is fetched here: restored entries need no fetcher. */
static void *
bench_no_start(void *impl, const char *url, fetch_done_cb cb, void *arg)
{
	(void)impl;
	(void)url;
	(void)cb;
	(void)arg;
	return NULL;
}

static void
bench_no_cancel(void *f)
{
	(void)f;
}

static size_t
bench_no_queued(const void *impl)
{
	(void)impl;
	return 0;
}

static const struct cache_fetch_ops bench_ops = {
	.start = bench_no_start,
	.cancel = bench_no_cancel,
	.queued = bench_no_queued,
};

/* Fill c with n synthetic origins. */
static void
fill(struct cache *c, long n, double t)
{
	char origin[64], body[128];
	struct cache_entry e;
	long i;
	int len;

	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		snprintf(origin, sizeof(origin), "http://o%ld.bench.test", i);
		len = snprintf(body, sizeof(body),
		    "User-agent: *\nDisallow: /p%ld/\nAllow: /\n", i);
		e.origin = origin;
		e.policy = CACHE_RULES;
		e.http_status = 200;
		e.fetched_at = t;
		e.expires_at = t + YEAR;
		e.body_bytes = (size_t)len;
		if ((e.robots = robots_parse(body, (size_t)len)) == NULL)
			fail("robots_parse", "out of memory");
		if (cache_restore(c, &e, 1) == -1)
			fail("cache_restore", origin);
	}
	cache_restore_end(c, (size_t)n, 1);
}

/* The loadgen request lines, over origins spread across all n. */
static void
write_requests(const char *path, long n)
{
	FILE *f = fopen(path, "w");
	long i, o;

	if (f == NULL)
		fail(path, "cannot create");
	for (i = 0; i < REQUESTS; i++) {
		o = (long)(((unsigned long long)i * 2654435761u) %
		           (unsigned long)n);
		fprintf(f,
		    "{\"op\":\"check\",\"url\":\"http://o%ld.bench.test/"
		    "%s%ld/z\",\"agent\":\"Googlebot\",\"id\":%ld}\n",
		    o, i % 2 ? "x" : "p", o, i);
	}
	if (fclose(f) != 0)
		fail(path, "write error");
}

int
main(int argc, char **argv)
{
	struct clock clk = { 0 };
	struct cache *c, *c2;
	struct state_caches cs = { NULL, NULL };
	struct stat st;
	double t0, t_save, t_load;
	char *cause = NULL;
	long n, saved, loaded;

	if (argc != 4 || (n = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(
		    stderr, "usage: bench_state N STATE_FILE REQUESTS_FILE\n");
		return 2;
	}
	if ((c = cache_new(&bench_settings, &bench_ops, NULL, &clk)) == NULL)
		fail("cache_new", NULL);
	fill(c, n, clock_now(&clk));
	t0 = now();
	cs.robots = c;
	if ((saved = state_save(&cs, argv[2], 600, NULL, &cause)) != n)
		fail("state_save", cause);
	t_save = now() - t0;
	cache_free(c);
	if ((c2 = cache_new(&bench_settings, &bench_ops, NULL, &clk)) == NULL)
		fail("cache_new", NULL);
	t0 = now();
	cs.robots = c2;
	if ((loaded = state_load(
	         &cs, argv[2], bench_settings.max_bytes, NULL, &cause)) != n)
		fail("state_load", cause);
	t_load = now() - t0;
	cache_free(c2);
	write_requests(argv[3], n);
	if (stat(argv[2], &st) == -1)
		fail(argv[2], "stat");
	printf("origins=%ld save_s=%.3f load_s=%.3f file_bytes=%lld\n", loaded,
	    t_save, t_load, (long long)st.st_size);
	return 0;
}
