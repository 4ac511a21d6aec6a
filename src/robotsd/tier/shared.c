/*
 * shared.c: the fleet loader; see shared.h and docs/scaling.md.
 *
 * One load per fetch the cache starts, through these stages, each ending
 * in a tier callback (from the loop) or the fetcher's:
 *   GET   tier_get: a usable value is installed (source "shared"), else
 *         LOCK (the unusable value is kept: its body may still be served
 *         stale should the fetch fail);
 *   LOCK  tier_lock: taken: RECHECK; busy: WAIT;
 *   RECHECK tier_get under the lock (a holder may have published between
 *         our get and our lock): install that value, else FETCH;
 *   WAIT  tier_wait: published, unlocked (the holder died or stopped:
 *         its lock expired) or the answer due: GET again, then LOCK with
 *         TIER_LOCK_TAKEOVER if still missing, and BUSY waits again: a
 *         holder that lives (renews its lock) is waited on to its end,
 *         never fetched beside (no round counts);
 *   FETCH the real fetch (a refresh sends the validators of the copy held
 *         here: a 304 keeps it, and publishes it with the tier's body
 *         of the same version); the cache's settled hook publishes the
 *         entry it made and releases the lock in the same pipeline.
 * Any other tier answer (down, timeout, error) fetches here at once. GET,
 * LOCK and RECHECK share one budget of --redis-timeout, begun at the first
 * GET (again after a WAIT), of which the time a call waited in robotsd
 * before it was written to Redis is given back (robotsd's own backlog is
 * not Redis's delay): each call gets what is left of it, and once it
 * is spent no call starts: the load fetches at once (still under the lock,
 * when it holds it). A cancelled load is freed when its pending tier call
 * ends (or by shared_free, when tier_free dropped that call).
 */
#include <config.h>

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "fetch/fetch.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "tier/shared.h"
#include "tier/shared_value.h"
#include "tier/tier.h"
#include "base/xmalloc.h"

#define SHARED_LOG_EVERY 10.0 /* seconds between two tier failure lines */

enum stage { ST_GET, ST_LOCK, ST_RECHECK, ST_WAIT, ST_FETCH };

struct load {
	LIST_ENTRY(load) link;
	struct shared *sh;
	char *origin, *url;
	fetch_done_cb cb;
	void *arg;
	enum stage stage;
	int waited;              /* it waited on another holder */
	double began;            /* clock_monotonic() when the budget began */
	double due;              /* clock_monotonic() when its answer is due */
	int cancelled;           /* free when the pending tier call ends */
	struct fetch *fetch;     /* ST_FETCH */
	struct tier_value *prev; /* the tier's unusable value, or NULL */
	char *etag, *last_modified; /* a refresh's validators, or NULL */
	double since; /* struct fetch_cond's fetched_since; 0: any copy */
	char token[TIER_TOKEN_LEN + 1]; /* the lock held, or "" */
};

/* A history op's read of the shared value (shared_peek). */
struct peek {
	LIST_ENTRY(peek) link;
	struct shared *sh;
	void (*cb)(const struct cache_version *, size_t, void *);
	void *arg;
};

struct shared {
	struct tier *tier;
	struct fetcher *fetcher;
	struct clock *clock;
	long answer_ms; /* a wait's bound: when a waiting check is answered */
	struct shared_stats stats;
	struct lifetime_settings life; /* bounds what the tier's values say */
	LIST_HEAD(, load) loads;
	LIST_HEAD(, peek) peeks;
	char **names, **labels; /* per server, for the counters table */
	size_t nservers;
	double log_next;        /* monotonic time of the next failure line */
	unsigned long log_skip; /* failure lines skipped since the last */
};

static void load_got_cb(struct tier_reply *, void *);

/* Forget a load. */
static void
load_free(struct load *l)
{
	LIST_REMOVE(l, link);
	if (l->prev != NULL) {
		tier_value_clear(l->prev);
		free(l->prev);
	}
	free(l->etag);
	free(l->last_modified);
	free(l->origin);
	free(l->url);
	free(l);
}

/* A rate-limited line about a tier call that did not go as expected. */
static void
shared_complain(struct shared *sh, const char *origin, const char *step,
    const struct tier_reply *rep, const char *then)
{
	char o[LOG_KV_BUF], e[LOG_KV_BUF], t[LOG_KV_BUF];
	double now = clock_monotonic();

	if (now < sh->log_next) {
		sh->log_skip++;
		return;
	}
	log_event(LOG_WARNING, "shared_fallback",
	    "step=%s origin=%s result=%s error=%s then=%s skipped=%lu", step,
	    log_kvs(origin, o, sizeof(o)), tier_result_name(rep->result),
	    log_kvs(rep->error, e, sizeof(e)), log_kvs(then, t, sizeof(t)),
	    sh->log_skip);
	sh->log_next = now + SHARED_LOG_EVERY;
	sh->log_skip = 0;
}

/* The real fetch has ended: answer the cache, release what is held. */
static void
load_fetched_cb(const struct fetch_result *r, void *arg)
{
	struct load *l = arg;

	l->fetch = NULL;
	l->cb(r, l->arg); /* the settled hook publishes and clears token */
	if (l->token[0] != '\0')
		tier_unlock(l->sh->tier, l->origin, l->token, NULL, NULL);
	load_free(l);
}

/* Fetch here (under the lock when token is set). */
static void
load_fetch(struct load *l)
{
	struct fetch_cond cond = { l->etag, l->last_modified, 0 };

	l->stage = ST_FETCH;
	l->fetch =
	    cond.etag != NULL || cond.last_modified != NULL
	        ? fetch_start_cond(
	              l->sh->fetcher, l->url, &cond, load_fetched_cb, l)
	        : fetch_start(l->sh->fetcher, l->url, load_fetched_cb, l);
	if (l->fetch == NULL) {
		struct fetch_result r = { .error = FETCH_LOCAL,
			.error_message = "robotsd ran out of memory" };

		load_fetched_cb(&r, l);
	}
}

/* The tier failed at some step: fetch here, local-only. */
static void
load_local(struct load *l, const char *step, const struct tier_reply *rep)
{
	l->sh->stats.local++;
	shared_complain(l->sh, l->origin, step, rep, "fetching locally");
	load_fetch(l);
}

/*
 * What is left of the load's budget for its next call (ms), rep being the
 * last call's answer; 0: spent.
 */
static long
load_left(struct load *l, const struct tier_reply *rep)
{
	l->began += (double)rep->queued_ms / 1000.0;
	return tier_budget_left(l->sh->tier, l->began, clock_monotonic());
}

/* The budget is spent before step: fetch here without another call. */
static void
load_spent(struct load *l, const char *step)
{
	struct tier_reply rep = { .result = TIER_TIMEOUT,
		.error = "the miss's Redis budget is spent" };

	load_local(l, step, &rep);
}

/*
 * Keep the latest unusable value the tier had: should the fetch fail, its
 * good copy is still served (stale) and published with the failure.
 */
static void
load_keep_prev(struct load *l, struct tier_reply *rep)
{
	if (l->prev != NULL) {
		tier_value_clear(l->prev);
		free(l->prev);
	}
	l->prev = rep->value;
	rep->value = NULL;
}

/*
 * May the tier's value v answer the load: usable here, and, for a load
 * after a change the fleet told of, fetched no earlier than that change;
 * once the load waited on a holder, what it published is the answer.
 */
static int
load_takes(const struct load *l, const struct tier_value *v)
{
	return shared_usable(
	           v, shared_ms(clock_now(l->sh->clock)), &l->sh->life) &&
	       (l->waited || shared_recent(v, shared_ms(l->since)));
}

/*
 * A value got: 1 when it is one fetched before the origin's last purge
 * (written again since): dropped, as if there were none.
 */
static int
load_drop_purged(const struct load *l, struct tier_reply *rep)
{
	if (rep->result != TIER_OK || !shared_purged(rep->value, rep->purged_at,
	                                  shared_ms(clock_now(l->sh->clock))))
		return 0;
	tier_value_clear(rep->value);
	free(rep->value);
	rep->value = NULL;
	rep->result = TIER_MISS;
	return 1;
}

/* Install a usable value: answer the cache as if fetched. */
static void
load_install(struct load *l, const struct tier_value *v)
{
	struct cache_version hist[TIER_VALUE_MAX_HISTORY];
	struct shared_state s;
	struct fetch_result r = { .shared = &s };

	shared_state_of(v, shared_ms(clock_now(l->sh->clock)), &s, hist);
	l->sh->stats.hits++;
	l->cb(&r, l->arg);
	load_free(l);
}

/* Wait for another instance's fetch of the origin. */
static void
load_waited_cb(struct tier_reply *rep, void *arg)
{
	struct load *l = arg;

	if (l->cancelled) {
		load_free(l);
		return;
	}
	switch (rep->result) {
	case TIER_NOTIFIED:
	case TIER_UNLOCKED:
	case TIER_TIMEOUT: /* the answer is due: look again */
		l->stage = ST_GET;
		l->began = clock_monotonic(); /* a new budget */
		tier_get(l->sh->tier, l->origin, 0, load_got_cb, l);
		break;
	default:
		load_local(l, "wait", rep);
	}
}

/*
 * Under the lock, look once more: a holder may have published between our
 * get and our lock. Fetch unless that value is there now.
 */
static void
load_rechecked_cb(struct tier_reply *rep, void *arg)
{
	struct load *l = arg;

	(void)load_drop_purged(l, rep);
	if (!l->cancelled && rep->result == TIER_OK &&
	    load_takes(l, rep->value)) {
		tier_unlock(l->sh->tier, l->origin, l->token, NULL, NULL);
		load_install(l, rep->value);
		return;
	}
	if (l->cancelled) {
		tier_unlock(l->sh->tier, l->origin, l->token, NULL, NULL);
		load_free(l);
		return;
	}
	if (rep->result == TIER_OK)
		load_keep_prev(l, rep);
	l->sh->stats.misses++;
	load_fetch(l);
}

/*
 * How long a wait may last: until the load's answer is due; once it is
 * (checks that waited that long were answered "timeout"), as long again
 * for the checks that came since.
 */
static long
load_due_ms(struct load *l)
{
	double now = clock_monotonic();

	if (l->due - now < 0.001)
		l->due = now + (double)l->sh->answer_ms / 1000.0;
	return (long)((l->due - now) * 1000.0) + 1;
}

/* The lock's answer: fetch, wait for its holder, or go local-only. */
static void
load_locked_cb(struct tier_reply *rep, void *arg)
{
	struct load *l = arg;
	long left;

	if (l->cancelled) {
		if (rep->result == TIER_OK)
			tier_unlock(
			    l->sh->tier, l->origin, rep->token, NULL, NULL);
		load_free(l);
		return;
	}
	switch (rep->result) {
	case TIER_OK:
		snprintf(l->token, sizeof(l->token), "%s", rep->token);
		if ((left = load_left(l, rep)) ==
		    0) { /* no time to look again */
			l->sh->stats.misses++;
			load_fetch(l);
			break;
		}
		l->stage = ST_RECHECK;
		tier_get(l->sh->tier, l->origin, left, load_rechecked_cb, l);
		break;
	case TIER_BUSY: /* its holder lives: wait for it, however long */
		l->stage = ST_WAIT;
		l->waited = 1;
		tier_wait(
		    l->sh->tier, l->origin, load_due_ms(l), load_waited_cb, l);
		break;
	default:
		load_local(l, "lock", rep);
	}
}

/* The origin's value: install it, or take the lock to fetch. */
static void
load_got_cb(struct tier_reply *rep, void *arg)
{
	struct load *l = arg;
	struct shared *sh = l->sh;
	long left;

	if (l->cancelled) {
		load_free(l);
		return;
	}
	(void)load_drop_purged(l, rep);
	if (rep->result == TIER_OK && load_takes(l, rep->value)) {
		load_install(l, rep->value);
		return;
	}
	if (rep->result == TIER_OK)
		load_keep_prev(l, rep);
	else if (rep->result == TIER_CORRUPT)
		shared_complain(sh, l->origin, "get", rep, "refetching");
	else if (rep->result != TIER_OK && rep->result != TIER_MISS) {
		load_local(l, "get", rep);
		return;
	}
	if ((left = load_left(l, rep)) == 0) {
		load_spent(l, "lock");
		return;
	}
	l->stage = ST_LOCK;
	tier_lock(sh->tier, l->origin, l->waited ? TIER_LOCK_TAKEOVER : 0, left,
	    load_locked_cb, l);
}

/*
 * cache_fetch_ops.start: begin with the tier's value of the origin. The
 * origin is url without /robots.txt; another resource's URL (tdmrep.json)
 * is its own key, whole, so the fleet shares it beside robots.txt.
 */
static void *
shared_start(void *impl, const char *url, fetch_done_cb cb, void *arg)
{
	static const char suffix[] = "/robots.txt";
	struct shared *sh = impl;
	size_t n = strlen(url), k = sizeof(suffix) - 1;
	struct load *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	if (n > k && strcmp(url + n - k, suffix) == 0)
		n -= k;
	l->origin = strndup(url, n);
	l->url = strdup(url);
	if (l->origin == NULL || l->url == NULL) {
		free(l->origin);
		free(l->url);
		free(l);
		return NULL;
	}
	l->sh = sh;
	l->cb = cb;
	l->arg = arg;
	LIST_INSERT_HEAD(&sh->loads, l, link);
	l->stage = ST_GET;
	l->began = clock_monotonic();
	l->due = l->began + (double)sh->answer_ms / 1000.0;
	tier_get(sh->tier, l->origin, 0, load_got_cb, l);
	return l;
}

/*
 * cache_fetch_ops.start_cond: a refresh of a copy with validators, or one
 * that takes the tier's copy only when recent enough (a fleet's change).
 */
static void *
shared_start_cond(void *impl, const char *url, const struct fetch_cond *cond,
    fetch_done_cb cb, void *arg)
{
	struct load *l = shared_start(impl, url, cb, arg);

	if (l == NULL)
		return NULL;
	if (cond->etag != NULL)
		l->etag = xstrdup(cond->etag);
	if (cond->last_modified != NULL)
		l->last_modified = xstrdup(cond->last_modified);
	l->since = cond->fetched_since;
	return l;
}

/* cache_fetch_ops.cancel: no callback after this. */
static void
shared_cancel(void *fetch)
{
	struct load *l = fetch;

	if (l->stage != ST_FETCH) {
		l->cancelled = 1; /* its tier call's end frees it */
		return;
	}
	fetch_cancel(l->fetch);
	if (l->token[0] != '\0')
		tier_unlock(l->sh->tier, l->origin, l->token, NULL, NULL);
	load_free(l);
}

static size_t
shared_queued(const void *impl)
{
	const struct shared *sh = impl;

	return fetcher_backlog(sh->fetcher);
}

/* A publish ended; a failure only costs the fleet extra fetches. */
static void
shared_published_cb(struct tier_reply *rep, void *arg)
{
	if (rep->result != TIER_OK)
		shared_complain(arg, "", "publish", rep, "not shared");
}

/* cache_fetch_ops.settled: publish what this fetch made of the entry. */
static void
shared_settled(void *fetch, const struct cache_entry *e, int good,
    const struct fetch_result *r)
{
	struct load *l = fetch;
	struct shared *sh = l->sh;
	struct http_meta m = { r->cache_control, r->expires, r->age,
		r->retry_after, r->date };
	double ra = lifetime_retry_after(&m, clock_wall(sh->clock));
	struct tier_hist hist[TIER_VALUE_MAX_HISTORY];
	struct tier_value v;

	if (l->token[0] == '\0' || r->error == FETCH_LOCAL ||
	    shared_value_of(e, good, r, l->prev, ra, &v) == -1)
		return;       /* local-only, or nothing true to say: unlock */
	v.origin = l->origin; /* the key locked: a resource's own */
	v.hist = hist;        /* what this instance saw, the fleet's included */
	v.nhist = shared_hist_of(e, hist);
	tier_publish(sh->tier, &v,
	    shared_px(&v, shared_ms(clock_now(sh->clock))), l->token,
	    shared_published_cb, sh);
	l->token[0] = '\0';
}

/* A purge here removes the shared copy too. */
static void
shared_purge(void *impl, const char *origin)
{
	struct shared *sh = impl;

	tier_purge(sh->tier, origin, shared_ms(clock_now(sh->clock)),
	    shared_purge_px(&sh->life), NULL, NULL);
}

/*
 * The versions of the value a get gave: none when it failed, or for a
 * value written before the origin's last purge (a check drops it too).
 */
static size_t
peek_versions(const struct shared *sh, const struct tier_reply *rep,
    struct cache_version *out)
{
	int64_t now = shared_ms(clock_now(sh->clock));

	if (rep->result != TIER_OK ||
	    shared_purged(rep->value, rep->purged_at, now))
		return 0;
	return shared_known_versions(rep->value, now, out);
}

/* The get of a peek answered. */
static void
peek_got_cb(struct tier_reply *rep, void *arg)
{
	struct cache_version out[TIER_VALUE_MAX_HISTORY];
	struct peek *p = arg;

	LIST_REMOVE(p, link);
	p->cb(out, peek_versions(p->sh, rep, out), p->arg);
	free(p);
}

/* The history op's read of origin's value: see cache_peek_history(). */
static int
shared_peek(void *impl, const char *origin,
    void (*cb)(const struct cache_version *, size_t, void *), void *arg)
{
	struct shared *sh = impl;
	struct peek *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	p->sh = sh;
	p->cb = cb;
	p->arg = arg;
	LIST_INSERT_HEAD(&sh->peeks, p, link);
	tier_get(sh->tier, origin, 0, peek_got_cb, p);
	return 0;
}

const struct cache_fetch_ops shared_fetch_ops = {
	.start = shared_start,
	.start_cond = shared_start_cond,
	.cancel = shared_cancel,
	.queued = shared_queued,
	.settled = shared_settled,
	.purge = shared_purge,
	.peek = shared_peek,
};

/* Each server's name in the counters table. */
static void
shared_names(struct shared *sh)
{
	size_t i, n = sh->nservers = tier_nservers(sh->tier);
	struct tier_server_stats ss;

	sh->names = xcalloc(n, sizeof(*sh->names));
	sh->labels = xcalloc(n, sizeof(*sh->labels));
	for (i = 0; i < n; i++) {
		tier_server_stats(sh->tier, i, &ss);
		xasprintf(&sh->names[i], "redis_up_%zu", i);
		xasprintf(&sh->labels[i], "server=\"%s\"", ss.name);
	}
}

/* A loader on the tier and the fetcher. */
struct shared *
shared_new(struct tier *t, struct fetcher *f, struct clock *clk, long answer_ms)
{
	struct shared *sh = xcalloc(1, sizeof(*sh));

	sh->tier = t;
	sh->fetcher = f;
	sh->clock = clk;
	sh->answer_ms = answer_ms;
	LIST_INIT(&sh->loads);
	LIST_INIT(&sh->peeks);
	shared_names(sh);
	return sh;
}

/*
 * This instance's lifetime bounds, which every value read must keep, and
 * when a waiting check is answered (both change on a reload).
 */
void
shared_configure(
    struct shared *sh, const struct lifetime_settings *ls, long answer_ms)
{
	sh->life = *ls;
	sh->answer_ms = answer_ms;
}

/* Free what is left: loads whose tier calls tier_free dropped. */
void
shared_free(struct shared *sh)
{
	struct load *l;
	struct peek *p;
	size_t i;

	if (sh == NULL)
		return;
	while ((l = LIST_FIRST(&sh->loads)) != NULL) {
		if (l->fetch != NULL)
			fetch_cancel(l->fetch);
		load_free(l);
	}
	while ((p = LIST_FIRST(&sh->peeks)) != NULL) {
		LIST_REMOVE(p, link); /* its get dropped: no versions */
		p->cb(NULL, 0, p->arg);
		free(p);
	}
	for (i = 0; i < sh->nservers; i++) {
		free(sh->names[i]);
		free(sh->labels[i]);
	}
	free(sh->names);
	free(sh->labels);
	free(sh);
}

const struct shared_stats *
shared_stats(const struct shared *sh)
{
	return &sh->stats;
}

struct tier *
shared_tier(const struct shared *sh)
{
	return sh->tier;
}

const char *
shared_server_name(const struct shared *sh, size_t i)
{
	return sh->names[i];
}

const char *
shared_server_label(const struct shared *sh, size_t i)
{
	return sh->labels[i];
}
