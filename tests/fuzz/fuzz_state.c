/*
 * fuzz_state.c: libFuzzer target for the state file loader (state.c) and
 * the deep check of the ruleset images in it (robots_image_check.c). The
 * input is a state file; its last 8 bytes are replaced by the checksum of
 * the bytes before them, so that mutations reach the records and the
 * images rather than stop at the checksum. The file is loaded into a
 * cache; every entry loaded must hold times JSON can carry, and its
 * ruleset is asked everything robotsd asks of one (verdicts, preferences,
 * groups, agents, sitemaps, extra lines, warnings), which must stay
 * inside the image. Saved again and reloaded, it must load alike.
 */
#include <config.h>

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "robots.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "persist/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[] = "/tmp/fuzz_state.XXXXXX";
static char again[sizeof(path) + 8];

/* No fetch ever starts: nothing is checked through the cache. */
static void *
no_start(void *impl, const char *url, fetch_done_cb cb, void *arg)
{
	(void)impl, (void)url, (void)cb, (void)arg;
	return NULL;
}

static void
no_cancel(void *fetch)
{
	(void)fetch;
}

static size_t
no_queued(const void *impl)
{
	(void)impl;
	return 0;
}

static const struct cache_fetch_ops ops = {
	.start = no_start, .cancel = no_cancel, .queued = no_queued
};

static void
remove_files(void)
{
	unlink(path);
	unlink(again);
}

/* The temporary file, made once; quiet logs. */
static void
init(void)
{
	static int done;
	int fd;

	if (done++)
		return;
	if ((fd = mkstemp(path)) == -1)
		abort();
	close(fd);
	snprintf(again, sizeof(again), "%s.again", path);
	atexit(remove_files);
	log_init(0, LOG_CRIT);
}

/* Write the input to path with its checksum made right. */
static void
write_input(const uint8_t *data, size_t size)
{
	uint64_t sum;
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		abort();
	if (size >= sizeof(sum)) {
		sum = state_checksum(data, size - sizeof(sum));
		fwrite(data, 1, size - sizeof(sum), f);
		fwrite(&sum, sizeof(sum), 1, f);
	} else
		fwrite(data, 1, size, f);
	if (fclose(f) != 0)
		abort();
}

/* A time as the state file keeps it: 0 (none) up to the year 9999. */
static int
time_ok(double t)
{
	return isfinite(t) && t >= 0 && t <= 253402300799.0;
}

/* Ask a ruleset everything robotsd asks. */
static void
ask(const struct robots *r)
{
	static const char *const paths[] = { "/", "/p", "/p/a/b", "/q1x",
		"/robots.txt", "/zz$", "/a*b" };
	static const char *const agents[] = { "a", "b", "FooBot/2.1", "*",
		"googlebot", "averyveryverylongproductname" };
	struct robots_verdict v;
	struct robots_usage u;
	struct robots_extra x;
	struct robots_warning w;
	size_t i, j, g, len;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (j = 0; j < sizeof(agents) / sizeof(agents[0]); j++) {
			robots_check(r, agents[j], strlen(agents[j]), paths[i],
			    strlen(paths[i]), &v);
			if (!isfinite(v.crawl_delay) && v.crawl_delay >= 0)
				abort();
			robots_usage(r, agents[j], strlen(agents[j]), paths[i],
			    strlen(paths[i]), &u);
		}
	(void)robots_rule_count(r);
	for (g = 0; g < robots_group_count(r); g++) {
		for (i = 0; i < robots_group_agent_count(r, g); i++)
			(void)robots_group_agent(r, g, i, &len);
		if (!(robots_group_crawl_delay(r, g) < 0) &&
		    !isfinite(robots_group_crawl_delay(r, g)))
			abort();
	}
	for (i = 0; i < robots_sitemap_count(r); i++)
		(void)robots_sitemap(r, i, &len);
	for (i = 0; i < robots_extra_count(r); i++)
		robots_extra(r, i, &x);
	for (i = 0; i < robots_warning_count(r); i++)
		robots_warning(r, i, &w);
}

/* Check one entry loaded (cache_foreach callback). */
static void
each(const struct cache_entry *e, int good, void *arg)
{
	(void)good;
	++*(long *)arg;
	if (!time_ok(e->fetched_at) || !time_ok(e->expires_at) ||
	    !time_ok(e->fail_since) || !time_ok(e->next_retry) ||
	    !time_ok(e->version_since) || !time_ok(e->validated_at))
		abort();
	if (e->robots != NULL)
		ask(e->robots);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cache_settings set = { .max_bytes = 64 << 20,
		.max_waiting = 10 };
	struct clock clk = { .frozen = 1.8e9 };
	struct cache *c, *c2;
	char *cause = NULL;
	long n, n2, seen = 0;

	init();
	write_input(data, size);
	if ((c = cache_new(&set, &ops, NULL, &clk)) == NULL)
		abort();
	n = state_load(c, path, set.max_bytes, &cause);
	free(cause);
	cause = NULL;
	cache_foreach(c, each, &seen);
	if (n > 0) {
		/* What loaded saves and loads again, alike. */
		if (state_save(c, again, 60, &cause) != seen ||
		    (c2 = cache_new(&set, &ops, NULL, &clk)) == NULL)
			abort();
		n2 = state_load(c2, again, set.max_bytes, &cause);
		if (n2 != seen || cache_stats(c2)->entries != (size_t)seen)
			abort();
		cache_free(c2);
	}
	free(cause);
	cache_free(c);
	return 0;
}
