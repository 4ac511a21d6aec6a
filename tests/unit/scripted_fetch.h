/*
 * scripted_fetch.h: a fetcher for struct cache_fetch_ops that fetches
 * nothing, and the fixture of the unit tests that drive a real cache with
 * it (check_cache, check_state). Each fetch the cache starts is recorded;
 * script_fill() ends one by calling its callback, as the real fetcher does
 * from the loop, and script_assert_settled() checks that every fetch either
 * ended or was cancelled exactly once. With the clock frozen at SCRIPT_T0,
 * every lifetime the cache computes is exact.
 */
#ifndef TESTS_SCRIPTED_FETCH_H
#define TESTS_SCRIPTED_FETCH_H

#include <stdio.h>
#include <string.h>

#include <check.h>

#include "cache/cache.h"
#include "base/clock.h"
#include "iface/outcome.h"

/* Exact clock seconds print in full when an assertion fails. */
#undef CK_FLOATING_DIG
#define CK_FLOATING_DIG 17

#define SCRIPT_MAX 2048
#define SCRIPT_T0 1795420800.0 /* Mon, 23 Nov 2026 08:00:00 GMT */
#define SCRIPT_DATE "Mon, 23 Nov 2026 08:00:00 GMT"

/* One fetch the cache started. */
struct script_fetch {
	char url[128];
	fetch_done_cb cb;
	void *arg;
	int cancelled; /* times cancel() was called */
	int done;      /* the callback ran */
	/* The validators a conditional start sent ("" when none). */
	char etag[300], last_modified[300];
	double since; /* its fetched_since (struct fetch_cond) */
};

struct script {
	struct script_fetch f[SCRIPT_MAX];
	size_t n;     /* fetches started */
	size_t slots; /* fetches running at once; the rest count as queued */
	int nomem;    /* start() fails as when memory runs out */
};

/* cache_fetch_ops.start: record the fetch. */
static inline void *
script_start(void *impl, const char *url, fetch_done_cb cb, void *arg)
{
	struct script *s = impl;
	struct script_fetch *f;

	if (s->nomem)
		return NULL;
	ck_assert_uint_lt(s->n, SCRIPT_MAX);
	f = &s->f[s->n++];
	ck_assert_uint_lt(strlen(url), sizeof(f->url));
	memset(f, 0, sizeof(*f));
	snprintf(f->url, sizeof(f->url), "%s", url);
	f->cb = cb;
	f->arg = arg;
	return f;
}

/* cache_fetch_ops.start_cond: record the fetch and its validators. */
static inline void *
script_start_cond(void *impl, const char *url, const struct fetch_cond *c,
    fetch_done_cb cb, void *arg)
{
	struct script_fetch *f = script_start(impl, url, cb, arg);

	if (f != NULL) {
		snprintf(f->etag, sizeof(f->etag), "%s",
		    c->etag != NULL ? c->etag : "");
		snprintf(f->last_modified, sizeof(f->last_modified), "%s",
		    c->last_modified != NULL ? c->last_modified : "");
		f->since = c->fetched_since;
	}
	return f;
}

/* cache_fetch_ops.cancel: only a fetch still running may be cancelled. */
static inline void
script_cancel(void *fetch)
{
	struct script_fetch *f = fetch;

	ck_assert_msg(!f->done && !f->cancelled, "%s: cancelled %d, done %d",
	    f->url, f->cancelled, f->done);
	f->cancelled++;
}

/* Is this fetch still running? */
static inline int
script_running(const struct script_fetch *f)
{
	return !f->done && !f->cancelled;
}

/* cache_fetch_ops.queued: running fetches beyond the slots. */
static inline size_t
script_queued(const void *impl)
{
	const struct script *s = impl;
	size_t i, running = 0;

	for (i = 0; i < s->n; i++)
		running += script_running(&s->f[i]);
	return running > s->slots ? running - s->slots : 0;
}

/* The optional hooks (a shared tier) stay NULL. */
static const struct cache_fetch_ops script_ops = {
	.start = script_start,
	.start_cond = script_start_cond,
	.cancel = script_cancel,
	.queued = script_queued,
};

/* An empty script: every fetch gets a slot. */
static inline void
script_init(struct script *s)
{
	memset(s, 0, sizeof(*s));
	s->slots = SCRIPT_MAX;
}

/* The running fetches of origin's /robots.txt (the cache allows one). */
static inline size_t
script_count(const struct script *s, const char *origin)
{
	char url[160];
	size_t i, n = 0;

	snprintf(url, sizeof(url), "%s/robots.txt", origin);
	for (i = 0; i < s->n; i++)
		n += script_running(&s->f[i]) && strcmp(s->f[i].url, url) == 0;
	return n;
}

/* End origin's running fetch with r: its callback runs now. */
static inline void
script_fill(struct script *s, const char *origin, const struct fetch_result *r)
{
	char url[160];
	size_t i;

	ck_assert_uint_eq(script_count(s, origin), 1);
	snprintf(url, sizeof(url), "%s/robots.txt", origin);
	for (i = 0; !script_running(&s->f[i]) || strcmp(s->f[i].url, url); i++)
		;
	s->f[i].done = 1;
	s->f[i].cb(r, s->f[i].arg);
}

/* Every fetch started ended or was cancelled, exactly once. */
static inline void
script_assert_settled(const struct script *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		ck_assert_msg(s->f[i].done + s->f[i].cancelled == 1,
		    "%s: cancelled %d, done %d", s->f[i].url, s->f[i].cancelled,
		    s->f[i].done);
}

/* An outcome with this error and status, an empty body, no headers. */
static inline struct fetch_result
script_result(enum fetch_error err, int status)
{
	struct fetch_result r;

	memset(&r, 0, sizeof(r));
	r.error = err;
	r.http_status = status;
	r.body = "";
	if (err != FETCH_OK)
		r.error_message = "scripted failure";
	return r;
}

/* The contract's defaults, so expected values come from its table. */
static inline struct cache_settings
script_settings(void)
{
	struct cache_settings set = {
		.life = { .default_ttl = 86400,
		    .min_ttl = 60,
		    .max_ttl = 2592000,
		    .retry_min = 60,
		    .retry_max = 21600,
		    .retry_503_min = 30,
		    .retry_503_max = 3600,
		    .unreachable_allow_after = 2592000 },
		.max_bytes = (size_t)1 << 30,
		.max_waiting = 100000,
	};

	return set;
}

/* The fixture: a cache on the defaults, the script and a frozen clock. */
static struct script sc;
static struct cache_settings set;
static struct clock clk;
static struct cache *cache;

static inline void
cache_setup(void)
{
	script_init(&sc);
	set = script_settings();
	clk = (struct clock){ .offset = 0, .frozen = SCRIPT_T0 };
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
}

/* Free the cache: every fetch it started has ended or is cancelled. */
static inline void
cache_teardown(void)
{
	cache_free(cache);
	cache = NULL;
	script_assert_settled(&sc);
}

/* A check that must not wait. */
static inline enum cache_status
check_now(const char *origin, const struct cache_entry **e)
{
	return cache_check(cache, origin, 0, NULL, e);
}

/* Check origin; the check must start its fetch, which r then ends. */
static inline void
fetch_now(const char *origin, const struct fetch_result *r)
{
	const struct cache_entry *e;
	size_t started = sc.n;

	(void)check_now(origin, &e);
	ck_assert_uint_eq(sc.n, started + 1);
	script_fill(&sc, origin, r);
}

/* fetch_now() with an outcome of this error and status. */
static inline void
fetch_status(const char *origin, enum fetch_error err, int status)
{
	struct fetch_result r = script_result(err, status);

	fetch_now(origin, &r);
}

/* End origin's running fetch with this error and status. */
static inline void
fill_status(const char *origin, enum fetch_error err, int status)
{
	struct fetch_result r = script_result(err, status);

	script_fill(&sc, origin, &r);
}

/* origin's entry, which must exist. */
static inline const struct cache_entry *
entry(const char *origin)
{
	const struct cache_entry *e = cache_find(cache, origin);

	ck_assert_msg(e != NULL, "%s is not cached", origin);
	return e;
}

/* Seconds until origin's entry is refreshed or retried. */
static inline double
expires_in(const char *origin)
{
	return cache_expires_in(cache, entry(origin));
}

/* A waiter that records how it was called back. */
struct probe {
	struct cache_waiter w;
	int calls;
	enum cache_policy policy;
	const char *error; /* w.error seen by the callback */
	int purge_in_cb;   /* purge the origin from inside the callback */
	const char *origin;
};

static inline void probe_cb(struct cache_waiter *, const struct cache_entry *);

/* A check that may wait, with p as the waiter. */
static inline enum cache_status
check_wait(const char *origin, struct probe *p)
{
	const struct cache_entry *e;

	p->w.cb = probe_cb;
	p->w.arg = p;
	return cache_check(cache, origin, 1, &p->w, &e);
}

/* The waiter callback: count, remember, and maybe purge. */
static inline void
probe_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct probe *p = w->arg;

	p->calls++;
	p->policy = e->policy;
	p->error = w->error;
	if (p->purge_in_cb)
		ck_assert_uint_eq(cache_purge(cache, p->origin), 1);
}

/* Queue p on origin and expect it to wait. */
static inline void
wait_on(const char *origin, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	ck_assert_int_eq(check_wait(origin, p), CACHE_WAIT);
}

#endif /* TESTS_SCRIPTED_FETCH_H */
