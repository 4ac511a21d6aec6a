/*
 * fuzz_state.c: libFuzzer target for the state file loader (state.c) and
 * the deep check of the ruleset images in it (robots_image_check.c). The
 * input is a state file; its last 8 bytes are replaced by the checksum of
 * the bytes before them, so that mutations reach the records and the
 * images rather than stop at the checksum. The file is loaded into a
 * robots.txt cache and a tdmrep.json cache (ops/tdmres.h); every entry
 * loaded must hold times JSON can carry, each ruleset is asked everything
 * robotsd asks of one (verdicts, preferences, groups, agents, sitemaps,
 * extra lines, warnings), which must stay inside the image, and each
 * tdmrep.json its state, answers and warnings. Saved again and reloaded,
 * it must load alike; loaded without the tdmrep.json cache (--tdmrep
 * off), its robots.txt entries must load alike.
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
#include "ops/tdmres.h"
#include "persist/state.h"
#include "wire/tdmrep_json.h"

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

/* Ask a tdmrep.json entry everything robotsd asks of one. */
static void
ask_tdm(const struct cache_entry *e)
{
	static const char *const paths[] = { "/", "/a/x", "/a/b?q=1", "/zz$",
		"/%7Ea" };
	const struct tdm_doc *d = e->doc;
	struct tdm_answer a;
	const char *code;
	uint32_t line;
	char why[256];
	size_t i, n;

	if (strcmp(tdm_state_name(e), "pending") == 0)
		abort(); /* settled entries only */
	if (d == NULL)
		return;
	if (d->body_len > ROBOTS_MAX_BODY || d->body[d->body_len] != '\0')
		abort();
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		robots_tdm_decide(d->f.rules,
		    d->f.rules != NULL ? TDM_STATE_RULES : TDM_STATE_INVALID,
		    paths[i], strlen(paths[i]), NULL, &a);
	n = d->f.rules != NULL ? robots_tdmrep_count(d->f.rules) : 0;
	for (i = 0; i < n; i++)
		(void)robots_tdmrep_rule(d->f.rules, i);
	i = 0;
	while (
	    tdmrep_file_warning(&d->f, i, &code, &line, why, sizeof(why)) == 0)
		i++;
}

/* Check one entry loaded of either cache (cache_foreach callback). */
static void
each_entry(const struct cache_entry *e, long *seen, int tdm)
{
	++*seen;
	if (!time_ok(e->fetched_at) || !time_ok(e->expires_at) ||
	    !time_ok(e->fail_since) || !time_ok(e->next_retry) ||
	    !time_ok(e->version_since) || !time_ok(e->validated_at))
		abort();
	if (tdm)
		ask_tdm(e);
	else if (e->robots != NULL)
		ask(e->robots);
}

static void
each(const struct cache_entry *e, int good, void *arg)
{
	(void)good;
	each_entry(e, arg, 0);
}

static void
each_tdm(const struct cache_entry *e, int good, void *arg)
{
	(void)good;
	each_entry(e, arg, 1);
}

/* A robots.txt cache, and a tdmrep.json one when tdm. */
static struct state_caches
caches(const struct cache_settings *set, struct clock *clk, int tdm)
{
	struct state_caches cs = { cache_new(set, &ops, NULL, clk), NULL };

	if (cs.robots == NULL)
		abort();
	if (tdm) {
		if ((cs.tdm = cache_new(set, &ops, NULL, clk)) == NULL)
			abort();
		cache_set_kind(cs.tdm, &tdm_kind);
	}
	return cs;
}

static void
caches_free(struct state_caches *cs)
{
	cache_free(cs->robots);
	cache_free(cs->tdm);
}

/*
 * What loaded (n entries, of which robots.txt's nr) saves and loads again
 * alike, and loads without the tdmrep.json cache with its robots.txt
 * entries alike.
 */
static void
again_alike(const struct state_caches *cs, const struct cache_settings *set,
    struct clock *clk, long n, long nr)
{
	struct state_caches c2, c3;
	struct state_counts k;
	char *cause = NULL;

	if (state_save(cs, again, 60, NULL, &cause) != n)
		abort();
	c2 = caches(set, clk, 1);
	if (state_load(&c2, again, set->max_bytes, &k, &cause) != n ||
	    cache_stats(c2.robots)->entries + cache_stats(c2.tdm)->entries !=
	        (size_t)n)
		abort();
	caches_free(&c2);
	c3 = caches(set, clk, 0);
	if (state_load(&c3, again, set->max_bytes, &k, &cause) != nr ||
	    k.skipped != n - nr ||
	    cache_stats(c3.robots)->entries != (size_t)nr)
		abort();
	caches_free(&c3);
	free(cause);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cache_settings set = { .max_bytes = 64 << 20,
		.max_waiting = 10 };
	struct clock clk = { .frozen = 1.8e9 };
	struct state_caches cs;
	char *cause = NULL;
	long n, seen = 0, seen_robots;

	init();
	write_input(data, size);
	cs = caches(&set, &clk, 1);
	n = state_load(&cs, path, set.max_bytes, NULL, &cause);
	free(cause);
	cache_foreach(cs.robots, each, &seen);
	seen_robots = seen;
	cache_foreach(cs.tdm, each_tdm, &seen);
	if (n > 0)
		again_alike(&cs, &set, &clk, seen, seen_robots);
	caches_free(&cs);
	return 0;
}
