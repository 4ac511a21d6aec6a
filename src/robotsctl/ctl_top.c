/*
 * ctl_top.c: "robotsctl top", a live view of a running robotsd in the
 * manner of "redis-cli --stat": a header line, then every interval one
 * line computed from two successive stats answers (rates over the time
 * between them, gauges as last seen).
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "robotsctl.h"

/* The stats fields a line is made of. */
struct top_sample {
	double t; /* monotonic seconds when the answer came */
	uint64_t hits, misses, stale, fetches, fetch_errors;
	uint64_t waiting, entries, bytes;
};

/* One line's values. */
struct top_line {
	double checks_s, hit_pct, fetches_s; /* hit_pct < 0: no checks */
	uint64_t checks, fetches, errors, waiting, entries, bytes;
};

/* Seconds on the monotonic clock. */
static double
top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A counter of the stats object (0 when absent: an older daemon). */
static uint64_t
top_field(const json_t *stats, const char *name)
{
	json_int_t v = json_integer_value(json_object_get(stats, name));

	return v > 0 ? (uint64_t)v : 0;
}

/* Ask for stats; -1 when the daemon does not answer (message printed). */
static int
top_sample(struct ctl *ctl, struct top_sample *s)
{
	const json_t *st;
	json_t *ans;
	int json = ctl->json;

	ctl->json = 0; /* the raw answer is not printed */
	ans = ctl_call(ctl, json_pack("{s:s}", "op", "stats"));
	ctl->json = json;
	if (ans == NULL)
		return -1;
	st = json_object_get(ans, "stats");
	s->t = top_now();
	s->hits = top_field(st, "hits");
	s->misses = top_field(st, "misses");
	s->stale = top_field(st, "stale");
	s->fetches = top_field(st, "fetches");
	s->fetch_errors = top_field(st, "fetch_errors");
	s->waiting = top_field(st, "waiting");
	s->entries = top_field(st, "cache_entries");
	s->bytes = top_field(st, "cache_bytes");
	json_decref(ans);
	return 0;
}

/* The line between samples a and b. */
static struct top_line
top_diff(const struct top_sample *a, const struct top_sample *b)
{
	double dt = b->t - a->t > 1e-3 ? b->t - a->t : 1e-3;
	uint64_t checks =
	    (b->hits + b->misses + b->stale) - (a->hits + a->misses + a->stale);
	struct top_line l = {
		.checks_s = (double)checks / dt,
		.hit_pct = checks > 0 ? 100.0 * (double)(b->hits - a->hits) /
		                            (double)checks
		                      : -1,
		.fetches_s = (double)(b->fetches - a->fetches) / dt,
		.checks = checks,
		.fetches = b->fetches - a->fetches,
		.errors = b->fetch_errors - a->fetch_errors,
		.waiting = b->waiting,
		.entries = b->entries,
		.bytes = b->bytes,
	};

	return l;
}

/* Bytes as people read them: 512, 1.5K, 20.0M, 1.2G. */
static const char *
top_bytes(uint64_t n, char *buf, size_t bufsz)
{
	static const char units[] = "KMGT";
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, bufsz, "%llu", (unsigned long long)n);
		return buf;
	}
	while ((v /= 1024) >= 1024 && u < sizeof(units) - 2)
		u++;
	snprintf(buf, bufsz, "%.1f%c", v, units[u]);
	return buf;
}

/* A rate or a share with one decimal, as w's next value. */
static void
top_vtenths(struct jw *w, double v)
{
	char t[64];
	int n = snprintf(t, sizeof(t), "%.1f", v);

	if (n < 0 || (size_t)n >= sizeof(t))
		jw_vnull(w);
	else
		jw_vraw(w, t, (size_t)n);
}

/* A counter as w's next value (all 64 bits: a restarted daemon's wrap). */
static void
top_vcount(struct jw *w, uint64_t v)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

	jw_vraw(w, t, (size_t)n);
}
#define top_kcount(w, k, v) (jw_key(w, k), top_vcount((w), (v)))

/* One line as a JSON object on stdout. */
static void
top_print_json(const struct top_line *l)
{
	struct buf b = BUF_INIT(0);
	struct jw w;

	jw_init(&w, &b);
	jw_obj(&w);
	top_kcount(&w, "checks", l->checks);
	jw_key(&w, "checks_per_s");
	top_vtenths(&w, l->checks_s);
	jw_key(&w, "hit_pct");
	if (l->hit_pct < 0)
		jw_vnull(&w);
	else
		top_vtenths(&w, l->hit_pct);
	top_kcount(&w, "fetches", l->fetches);
	jw_key(&w, "fetches_per_s");
	top_vtenths(&w, l->fetches_s);
	top_kcount(&w, "fetch_errors", l->errors);
	top_kcount(&w, "waiting", l->waiting);
	top_kcount(&w, "cache_entries", l->entries);
	top_kcount(&w, "cache_bytes", l->bytes);
	jw_end(&w);
	buf_lit(&b, "\n");
	if (b.state == BUF_OK)
		fwrite(b.p, 1, b.len, stdout);
	buf_clear(&b);
}

/* Print one line, as text or as a JSON object. */
static void
top_print(const struct ctl *ctl, const struct top_line *l)
{
	char hit[16], bytes[32];

	if (ctl->json)
		top_print_json(l);
	else {
		if (l->hit_pct < 0)
			snprintf(hit, sizeof(hit), "-");
		else
			snprintf(hit, sizeof(hit), "%.1f%%", l->hit_pct);
		printf("%10.1f %6s %9.1f %7llu %8llu %9llu %9s\n", l->checks_s,
		    hit, l->fetches_s, (unsigned long long)l->errors,
		    (unsigned long long)l->waiting,
		    (unsigned long long)l->entries,
		    top_bytes(l->bytes, bytes, sizeof(bytes)));
	}
	fflush(stdout);
}

/* Sleep until monotonic time t. */
static void
top_sleep_until(double t)
{
	double d;
	struct timespec ts;

	while ((d = t - top_now()) > 0) {
		ts.tv_sec = (time_t)d;
		ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
		if (nanosleep(&ts, NULL) == -1 && errno != EINTR)
			return;
	}
}

/* top: a line every interval, count lines (0: until interrupted). */
int
ctl_cmd_top(const struct ctl *ctl0, int argc, char **argv)
{
	struct ctl ctl = *ctl0;
	struct top_sample prev, cur;
	struct top_line l;
	double next;
	long n;

	(void)argc;
	(void)argv;
	if (top_sample(&ctl, &prev) == -1)
		return CTL_EXIT_ERROR;
	if (!ctl.json)
		printf("%10s %6s %9s %7s %8s %9s %9s\n", "checks/s", "hit%",
		    "fetches/s", "errors", "waiting", "entries", "bytes");
	fflush(stdout);
	next = prev.t;
	for (n = 0; ctl.count == 0 || n < ctl.count; n++) {
		next += ctl.interval;
		top_sleep_until(next);
		if (top_sample(&ctl, &cur) == -1)
			return CTL_EXIT_ERROR;
		l = top_diff(&prev, &cur);
		top_print(&ctl, &l);
		prev = cur;
	}
	return CTL_EXIT_OK;
}
