/*
 * cache.c: origin -> entry. A chained hash table (FNV-1a, doubling) gives
 * O(1) lookup; a tail queue keeps entries in least-recently-used order; each
 * entry's bytes are accounted and idle entries are evicted from the LRU end
 * while the total is over the cap. Here too is the fetch policy: one fetch
 * per origin, waiters on it, stale answers while a refresh runs or after it
 * failed. The rules (the status table, lifetimes, the retry schedule) are
 * lifetime.c's pure functions; fetches go through struct cache_fetch_ops
 * and time through the clock, so tests drive both exactly.
 *
 * An entry that is being fetched, has waiters or is waking them is never
 * freed: purge and eviction skip it or defer the free (see
 * docs/internals/cache.md).
 */
#include <config.h>

#include <sys/queue.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "robots.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "base/clock.h"
#include "cache/fetchlog.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "cache/version.h"

static void cache_fetch_done_cb(const struct fetch_result *, void *);

/* The allocation of an entry with an origin of len bytes. */
static size_t
entry_alloc_size(size_t len)
{
	size_t n = offsetof(struct entry, origin) + len + 1;

	return n > sizeof(struct entry) ? n : sizeof(struct entry);
}

/* The bytes of a validators block: two NUL-terminated strings. */
static size_t
validators_size(const char *v)
{
	size_t a = strlen(v) + 1;

	return a + strlen(v + a) + 1;
}

/* The bytes an entry holds: its block, strings and compiled ruleset. */
static size_t
entry_size(const struct entry *e)
{
	size_t n = entry_alloc_size(strlen(e->origin));

	if (e->pub.final_url != NULL)
		n += strlen(e->pub.final_url) + 1;
	if (e->pub.last_error != NULL)
		n += strlen(e->pub.last_error) + 1;
	if (e->pub.validators != NULL)
		n += validators_size(e->pub.validators);
	if (e->pub.robots != NULL)
		n += robots_memsize(e->pub.robots);
	return n + cache_history_size(e);
}

/*
 * Recount an entry's bytes, and whether it is in backoff (settled and
 * failing), after it changed: stats read the totals without walking the
 * cache, which at a million origins would hold the loop for milliseconds.
 */
static void
entry_account(struct cache *c, struct entry *e)
{
	c->stats.bytes -= e->bytes;
	e->bytes = (uint32_t)entry_size(e);
	c->stats.bytes += e->bytes;
	c->stats.backoff -= e->in_backoff;
	e->in_backoff = e->pub.policy != CACHE_NONE && e->pub.fail_streak > 0;
	c->stats.backoff += e->in_backoff;
}

/* Release an entry's memory (it is in no structure any more). */
static void
entry_free(struct entry *e)
{
	robots_unref(e->pub.robots);
	free(e->pub.final_url);
	free(e->pub.last_error);
	free(e->pub.validators);
	cache_history_free(e);
	free(e->flight);
	free(e);
}

/* The entry's flight, made if it has none; NULL when memory runs out. */
static struct flight *
entry_flight(struct cache *c, struct entry *e)
{
	if (e->flight == NULL &&
	    (e->flight = calloc(1, sizeof(*e->flight))) != NULL) {
		e->flight->cache = c;
		TAILQ_INIT(&e->flight->waiters);
	}
	return e->flight;
}

/* Free the entry's flight once no fetch, waiter or wake-up needs it. */
static void
entry_land(struct entry *e)
{
	struct flight *fl = e->flight;

	if (fl != NULL && fl->fetch == NULL && TAILQ_EMPTY(&fl->waiters) &&
	    !fl->waking) {
		free(fl);
		e->flight = NULL;
	}
}

/* Unhook every waiter of an entry without calling back. */
static void
entry_drop_waiters(struct cache *c, struct entry *e)
{
	struct cache_waiter *w;

	while (e->flight != NULL &&
	       (w = TAILQ_FIRST(&e->flight->waiters)) != NULL) {
		TAILQ_REMOVE(&e->flight->waiters, w, link);
		w->entry = NULL;
		c->stats.waiting--;
	}
}

/* Take an entry out of the cache and free it, or defer while it wakes. */
static void
entry_remove(struct cache *c, struct entry *e)
{
	cache_unhash(c, e);
	TAILQ_REMOVE(&c->lru, e, lru);
	c->stats.entries--;
	c->stats.bytes -= e->bytes;
	e->bytes = 0;
	c->stats.backoff -= e->in_backoff;
	e->in_backoff = 0;
	if (e->flight != NULL && e->flight->fetch != NULL) {
		c->fetch.cancel(e->flight->fetch);
		e->flight->fetch = NULL;
		e->pub.fetching = 0;
	}
	if (e->flight != NULL && e->flight->waking) {
		e->flight->dead = 1; /* the waking loop frees it */
		return;
	}
	entry_drop_waiters(c, e);
	entry_free(e);
}

/* Create and link an entry for origin; NULL when memory runs out. */
static struct entry *
entry_new(struct cache *c, const char *origin)
{
	size_t len = strlen(origin), b;
	struct entry *e;

	if ((e = calloc(1, entry_alloc_size(len))) == NULL)
		return NULL;
	memcpy(e->origin, origin, len + 1);
	e->pub.origin = e->origin;
	e->hash = (uint32_t)cache_hash(origin);
	e->pub.policy = CACHE_NONE;
	if (c->stats.entries >= c->nbuckets)
		cache_grow(c);
	b = e->hash & (c->nbuckets - 1);
	e->hnext = c->buckets[b];
	c->buckets[b] = e;
	TAILQ_INSERT_TAIL(&c->lru, e, lru);
	c->stats.entries++;
	entry_account(c, e);
	return e;
}

/* May this entry be evicted now? */
static int
entry_idle(const struct entry *e)
{
	return e->flight == NULL;
}

/* Whether a fetch of the entry's origin runs. */
static int
entry_in_flight(const struct entry *e)
{
	return e->flight != NULL && e->flight->fetch != NULL;
}

/* Evict idle entries, least recently used first, while over the cap. */
static void
cache_enforce_cap(struct cache *c)
{
	struct entry *e, *next;

	for (e = TAILQ_FIRST(&c->lru);
	     e != NULL && c->stats.bytes > c->set.max_bytes; e = next) {
		next = TAILQ_NEXT(e, lru);
		if (!entry_idle(e))
			continue;
		c->stats.evictions++;
		entry_remove(c, e);
	}
}

/* Mark an entry as just used. */
static void
entry_touch(struct cache *c, struct entry *e)
{
	TAILQ_REMOVE(&c->lru, e, lru);
	TAILQ_INSERT_TAIL(&c->lru, e, lru);
}

/* Start a fetch of an entry's /robots.txt; -1 when memory runs out. */
static int
entry_fetch(struct cache *c, struct entry *e)
{
	struct flight *fl;
	char *url;

	if (entry_in_flight(e))
		return 0;
	if ((url = url_robots_txt(e->origin)) == NULL)
		return -1;
	if ((fl = entry_flight(c, e)) != NULL) {
		struct fetch_cond cond = { cache_entry_etag(&e->pub),
			cache_entry_last_modified(&e->pub) };

		fl->conditional =
		    c->fetch.start_cond != NULL && e->good &&
		    e->pub.robots != NULL &&
		    (cond.etag != NULL || cond.last_modified != NULL);
		fl->fetch = fl->conditional
		                ? c->fetch.start_cond(c->fetch_impl, url, &cond,
		                      cache_fetch_done_cb, e)
		                : c->fetch.start(c->fetch_impl, url,
		                      cache_fetch_done_cb, e);
	}
	free(url);
	if (fl == NULL || fl->fetch == NULL) {
		entry_land(e);
		return -1;
	}
	e->pub.fetching = 1;
	c->stats.fetches++;
	return 0;
}

/* Queue a waiter on an entry's fetch. */
static void
entry_wait(struct cache *c, struct entry *e, struct cache_waiter *w)
{
	w->entry = &e->pub;
	TAILQ_INSERT_TAIL(&e->flight->waiters, w, link);
	c->stats.waiting++;
}

/* The headers of a fetch result, for lifetime.c. */
static struct http_meta
result_meta(const struct fetch_result *r)
{
	return (struct http_meta){ r->cache_control, r->expires, r->age,
		r->retry_after, r->date };
}

/* Replace an entry's string field with a copy of s (NULL allowed). */
static void
entry_set_str(char **field, const char *s)
{
	free(*field);
	*field = s != NULL ? strdup(s) : NULL;
}

/*
 * The entry holds version ver from now on: a different one starts its
 * time; any confirms it (validated_at).
 */
static void
entry_set_version(struct entry *e, const char *ver, double now)
{
	if (strcmp(e->pub.version, ver) != 0) {
		memcpy(e->pub.version, ver, sizeof(e->pub.version));
		e->pub.version_since = now;
	}
	e->pub.validated_at = now;
}

/* The version of a state without rules that fetch result r led to. */
static void
result_state_version(const struct fetch_result *r, char *out)
{
	if (r->error == FETCH_OK)
		version_of_status(r->http_status, out);
	else
		version_of_error(r->error, out);
}

/*
 * Keep validators etag and last_modified (either NULL): only values that
 * lifetime_validator_ok() takes; none when memory runs out.
 */
static void
entry_set_validators(struct entry *e, const char *etag, const char *lm)
{
	size_t a, b;

	free(e->pub.validators);
	e->pub.validators = NULL;
	if (!lifetime_validator_ok(etag))
		etag = NULL;
	if (!lifetime_validator_ok(lm))
		lm = NULL;
	if (etag == NULL && lm == NULL)
		return;
	a = etag != NULL ? strlen(etag) : 0;
	b = lm != NULL ? strlen(lm) : 0;
	if ((e->pub.validators = malloc(a + b + 2)) == NULL)
		return;
	memcpy(e->pub.validators, etag != NULL ? etag : "", a + 1);
	memcpy(e->pub.validators + a + 1, lm != NULL ? lm : "", b + 1);
}

/*
 * A 304 to a conditional refresh: the ruleset held is confirmed and kept as
 * it is (no parse), with a lifetime from the 304's own headers, validators
 * it sends replacing the old ones (RFC 9111 section 4.3.4), and any
 * failure state ended.
 */
static void
entry_revalidated(
    struct cache *c, struct entry *e, const struct fetch_result *r, double now)
{
	struct http_meta m = result_meta(r);

	if (r->etag != NULL || r->last_modified != NULL) {
		char *old = e->pub.validators;
		const char *etag =
		    r->etag != NULL ? r->etag : cache_entry_etag(&e->pub);
		const char *lm = r->last_modified != NULL
		                     ? r->last_modified
		                     : cache_entry_last_modified(&e->pub);

		e->pub.validators = NULL; /* old stays valid until set */
		entry_set_validators(e, etag, lm);
		free(old);
	}
	if (e->pub.http_status < 200 || e->pub.http_status > 299)
		e->pub.http_status = 200; /* failing since: the copy's 2xx */
	e->pub.expires_at =
	    now + lifetime_ttl(&c->set.life, &m, clock_wall(c->clock));
	e->pub.validated_at = now;
	e->pub.fail_streak = 0;
	e->pub.fail_since = e->pub.next_retry = 0;
	e->pub.stale = 0;
	entry_set_str(&e->pub.last_error, NULL);
	c->stats.revalidated++;
}

/* Record a 2xx (rules) or 4xx/too-many-redirects (allow all) answer. */
static void
entry_good(struct cache *c, struct entry *e, const struct fetch_result *r,
    struct robots *rb, double now)
{
	struct http_meta m = result_meta(r);
	char ver[VERSION_HEX + 1];

	if (rb != NULL)
		version_of_body(r->body, r->body_len, ver);
	else
		result_state_version(r, ver);
	entry_set_version(e, ver, now);
	if (rb != NULL)
		entry_set_validators(e, r->etag, r->last_modified);
	else
		entry_set_validators(e, NULL, NULL);
	robots_unref(e->pub.robots);
	e->pub.robots = rb;
	e->pub.policy = rb != NULL ? CACHE_RULES : CACHE_ALLOW_ALL;
	e->pub.expires_at =
	    now + lifetime_ttl(&c->set.life, &m, clock_wall(c->clock));
	e->pub.body_bytes = rb != NULL ? (uint32_t)r->body_len : 0;
	e->pub.truncated = rb != NULL ? r->truncated : 0;
	entry_set_str(&e->pub.final_url, r->final_url);
	entry_set_str(&e->pub.last_error, NULL);
	e->pub.fail_streak = 0;
	e->pub.fail_since = e->pub.next_retry = 0;
	e->pub.cause = CAUSE_NONE;
	e->pub.stale = 0;
	e->good = 1;
}

/*
 * An origin failing for unreachable_allow_after seconds without a good copy
 * to fall back on is allowed (RFC 9309 section 2.3.1.4).
 */
static void
entry_fallback(const struct cache *c, struct entry *e, double now)
{
	if (!e->good && e->pub.fail_streak > 0 &&
	    lifetime_give_up(&c->set.life, e->pub.fail_since, now))
		e->pub.policy = CACHE_ALLOW_ALL;
}

/* Record a failed fetch (5xx, 429, network, timeout, refused address). */
static void
entry_failed(struct cache *c, struct entry *e, const struct fetch_result *r,
    const char *why, double now)
{
	int soon =
	    lifetime_classify(r->error == FETCH_OK, r->error == FETCH_REDIRECTS,
	        r->http_status) == LT_FAILED_SOON;
	struct http_meta m = result_meta(r);
	double ra = soon ? lifetime_retry_after(&m, clock_wall(c->clock)) : -1;
	char ver[VERSION_HEX + 1];

	enum fetch_cause cause = lifetime_cause(
	    r->error, (enum fetch_cause)r->cause, r->http_status);

	if (e->pub.fail_streak++ == 0)
		e->pub.fail_since = now;
	entry_set_str(&e->pub.last_error, why);
	/* a 2xx whose rules could not be kept: a local failure */
	e->pub.cause = cause != CAUSE_NONE ? cause : CAUSE_OTHER;
	e->pub.next_retry =
	    now + lifetime_backoff(&c->set.life, e->pub.fail_streak, soon, ra,
	              cache_hash(e->origin));
	e->pub.expires_at = e->pub.next_retry;
	if (e->good) {
		e->pub.stale = 1; /* keep serving the last good copy */
		return;
	}
	e->pub.policy = CACHE_DISALLOW_ALL;
	result_state_version(r, ver);
	entry_set_version(e, ver, now);
	entry_fallback(c, e, now);
	e->pub.body_bytes = 0;
	e->pub.truncated = 0;
	entry_set_str(&e->pub.final_url, r->final_url);
}

/* Count and log a fetch applied to e (fetchlog.h). */
static void
entry_note(struct cache *c, const struct entry *e, const struct fetch_result *r,
    unsigned prev_streak, double prev_since)
{
	double now = clock_now(c->clock);
	struct fetch_note n = { .origin = e->pub.origin,
		.r = r,
		.prev_streak = prev_streak,
		.streak = e->pub.fail_streak,
		.retry_in = e->pub.next_retry - now,
		.failed_for = prev_streak > 0 ? now - prev_since : 0,
		.stale = e->pub.stale,
		.error = e->pub.last_error };

	n.outcome =
	    n.streak > 0 ? "unreachable" : cache_policy_name(e->pub.policy);
	fetchlog_note(&c->fstats, &n);
}

/* Apply a fetch outcome to an entry: the contract's policy table. */
static void
entry_apply(struct cache *c, struct entry *e, const struct fetch_result *r)
{
	double now = clock_now(c->clock), since = e->pub.fail_since;
	unsigned streak = e->pub.fail_streak;
	int st = r->http_status;
	struct robots *rb;
	char why[256];
	enum lifetime_class lc = lifetime_classify_refresh(r->error == FETCH_OK,
	    r->error == FETCH_REDIRECTS, st,
	    e->flight->conditional && e->good && e->pub.robots != NULL);

	e->pub.fetched_at = now;
	if (lc != LT_REVALIDATED) /* else the status the rules came with */
		e->pub.http_status =
		    r->error == FETCH_OK || r->error == FETCH_REDIRECTS ? st
		                                                        : 0;
	switch (lc) {
	case LT_REVALIDATED:
		entry_revalidated(c, e, r, now);
		break;
	case LT_RULES:
		if ((rb = robots_parse(r->body, r->body_len)) != NULL)
			entry_good(c, e, r, rb, now);
		else
			entry_failed(c, e, r, "out of memory", now);
		break;
	case LT_ALLOW_ALL:
		entry_good(c, e, r, NULL, now);
		break;
	case LT_FAILED:
	case LT_FAILED_SOON:
		c->stats.fetch_errors++;
		if (r->error == FETCH_OK)
			snprintf(why, sizeof(why), "HTTP status %d", st);
		else
			snprintf(why, sizeof(why), "%s",
			    r->error_message != NULL ? r->error_message
			                             : "fetch failed");
		entry_failed(c, e, r, why, now);
	}
	entry_account(c, e);
	entry_note(c, e, r, streak, since);
}

/*
 * The cause of a settled state: its own, or for a failure kept without
 * one (the state file, the shared tier) what its HTTP status says, else
 * CAUSE_OTHER.
 */
static uint8_t
entry_cause_kept(const struct cache_entry *src)
{
	enum fetch_cause c;

	if (src->fail_streak == 0 || src->cause != CAUSE_NONE)
		return src->cause;
	c = lifetime_cause(FETCH_OK, CAUSE_NONE, src->http_status);
	return c != CAUSE_NONE && src->http_status > 0 ? c : CAUSE_OTHER;
}

/*
 * Give an entry the settled state of src: its policy, ruleset (the
 * reference is taken), status, times, body size, strings and failure
 * state. The one place that copies an entry's fields; -1 when a string
 * could not be copied (it is then NULL).
 */
static int
entry_settle(struct entry *e, const struct cache_entry *src, int good)
{
	robots_unref(e->pub.robots);
	e->pub.robots = src->robots;
	e->pub.policy = src->policy;
	e->pub.http_status = src->http_status;
	e->pub.fetched_at = src->fetched_at;
	e->pub.expires_at = src->expires_at;
	e->pub.body_bytes = src->body_bytes;
	e->pub.truncated = src->truncated;
	e->pub.fail_streak = src->fail_streak;
	e->pub.fail_since = src->fail_since;
	e->pub.next_retry = src->next_retry;
	e->pub.stale = src->stale;
	e->pub.version_since = src->version_since;
	e->pub.validated_at = src->validated_at;
	memcpy(e->pub.version, src->version, sizeof(e->pub.version));
	if (src != &e->pub)
		entry_set_validators(
		    e, cache_entry_etag(src), cache_entry_last_modified(src));
	e->pub.cause = entry_cause_kept(src);
	e->good = good;
	entry_set_str(&e->pub.final_url, src->final_url);
	entry_set_str(&e->pub.last_error, src->last_error);
	return (src->final_url != NULL && e->pub.final_url == NULL) ||
	               (src->last_error != NULL && e->pub.last_error == NULL)
	           ? -1
	           : 0;
}

/*
 * The fleet's failure state for an origin of which this entry keeps a good
 * copy the fleet lost: keep serving it (stale) with that state.
 */
static void
entry_install_failure(struct entry *e, const struct shared_state *s)
{
	e->pub.http_status = s->http_status;
	e->pub.fetched_at = s->fetched_at;
	e->pub.expires_at = s->expires_at;
	entry_set_str(&e->pub.last_error, s->last_error);
	e->pub.fail_streak = s->fail_streak;
	e->pub.fail_since = s->fail_since;
	e->pub.next_retry = s->next_retry;
	e->pub.cause = entry_cause_kept(&(struct cache_entry){
	    .fail_streak = s->fail_streak, .http_status = s->http_status });
	e->pub.stale = 1;
}

/*
 * The version of the fleet's state s into st: a ruleset's from its body,
 * so every instance agrees whatever wrote it; else the writer's, or for a
 * value that has none (an older writer) its status, or "error:network".
 */
static void
shared_version(
    const struct entry *e, const struct shared_state *s, struct cache_entry *st)
{
	if (s->policy == CACHE_RULES)
		version_of_body(s->body, s->body_len, st->version);
	else if (s->version != NULL && strlen(s->version) == VERSION_HEX)
		memcpy(st->version, s->version, VERSION_HEX + 1);
	else if (s->http_status > 0)
		version_of_status(s->http_status, st->version);
	else
		version_of_error(FETCH_NETWORK, st->version);
	st->validated_at =
	    s->validated_at > 0 ? s->validated_at : s->fetched_at;
	if (strcmp(st->version, e->pub.version) == 0)
		st->version_since = e->pub.version_since;
	else
		st->version_since =
		    s->version_since > 0 ? s->version_since : s->fetched_at;
}

/* Install the fleet's state for an entry (from the shared tier). */
static void
entry_install(struct cache *c, struct entry *e, const struct shared_state *s)
{
	struct cache_entry st = {
		.policy = (enum cache_policy)s->policy,
		.http_status = s->http_status,
		.fetched_at = s->fetched_at,
		.expires_at = s->expires_at,
		.final_url = (char *)s->final_url,
		.last_error = (char *)s->last_error,
		.fail_streak = s->fail_streak,
		.fail_since = s->fail_since,
		.next_retry = s->next_retry,
		.stale = s->stale,
	};
	struct shared_state bounded = *s;

	/* Another instance's times never outlast what ours allow. */
	lifetime_clamp_shared(&c->set.life, clock_now(c->clock), st.fail_streak,
	    &st.fetched_at, &st.expires_at, &st.fail_since, &st.next_retry);
	bounded.fetched_at = st.fetched_at;
	bounded.expires_at = st.expires_at;
	bounded.fail_since = st.fail_since;
	bounded.next_retry = st.next_retry;
	s = &bounded;
	if (!s->good && e->good) {
		entry_install_failure(e, s);
		return;
	}
	shared_version(e, s, &st);
	if (st.policy == CACHE_RULES &&
	    (st.robots = robots_parse(s->body, s->body_len)) == NULL) {
		struct fetch_result r = { .error = FETCH_NETWORK };

		entry_failed(c, e, &r, "out of memory", clock_now(c->clock));
		return;
	}
	st.body_bytes = st.robots != NULL ? (uint32_t)s->body_len : 0;
	st.truncated = st.robots != NULL ? s->truncated : 0;
	(void)entry_settle(e, &st, s->good);
	if (st.robots != NULL)
		entry_set_validators(e, s->etag, s->last_modified);
}

/*
 * Answer every waiter of an entry (its fetch ended); callbacks may cancel
 * others or purge. The entry is freed here if a callback removed it.
 */
static void
entry_wake(struct cache *c, struct entry *e, const char *error)
{
	struct flight *fl = e->flight;
	struct cache_waiter *w;

	fl->waking = 1;
	while ((w = TAILQ_FIRST(&fl->waiters)) != NULL) {
		TAILQ_REMOVE(&fl->waiters, w, link);
		w->entry = NULL;
		w->error = error;
		c->stats.waiting--;
		w->cb(w, &e->pub);
	}
	fl->waking = 0;
	if (fl->dead)
		entry_free(e);
	else
		entry_land(e);
}

/*
 * Tell the listeners that e went from version old (or none: "") to the one
 * it holds now, if that differs; old_rb is the ruleset before.
 */
static void
cache_tell_change(struct cache *c, const struct entry *e, const char *old,
    const struct robots *old_rb, int old_policy, const struct fetch_result *r)
{
	struct cache_change ch = {
		.origin = e->pub.origin,
		.old_version = old[0] != '\0' ? old : NULL,
		.new_version = e->pub.version,
		.at = e->pub.version_since,
		.entry = &e->pub,
		.old_robots = old_rb,
		.old_policy = old_policy,
		.fetched = r->shared == NULL ? r : NULL,
	};
	size_t i;

	if (e->pub.version[0] == '\0' || strcmp(old, e->pub.version) == 0)
		return;
	for (i = 0; i < c->nlisteners; i++)
		c->listeners[i].cb(&ch, c->listeners[i].arg);
}

/* Add a listener of version changes; see cache.h. */
int
cache_listen(struct cache *c, cache_change_cb cb, void *arg)
{
	if (c->nlisteners == CACHE_MAX_LISTENERS)
		return -1;
	c->listeners[c->nlisteners].cb = cb;
	c->listeners[c->nlisteners++].arg = arg;
	return 0;
}

/* The fetcher's callback: update the entry, wake its waiters, trim. */
static void
cache_fetch_done_cb(const struct fetch_result *r, void *arg)
{
	struct entry *e = arg;
	struct flight *fl = e->flight;
	struct cache *c = fl->cache;
	struct cache_snap old = { .since = e->pub.version_since,
		.validated_at = e->pub.validated_at,
		.http_status = e->pub.http_status,
		.policy = e->pub.policy };
	struct robots *old_rb = NULL;

	memcpy(old.version, e->pub.version, sizeof(old.version));
	if (c->nlisteners > 0)
		old_rb =
		    e->pub.robots != NULL ? robots_ref(e->pub.robots) : NULL;
	e->pub.fetching = 0;
	if (r->shared == NULL && r->error == FETCH_LOCAL) {
		/* Ours, not the origin's: nothing cached, nothing shared. */
		fetchlog_local(&c->fstats, e->pub.origin, r->error_message);
		if (c->fetch.settled != NULL)
			c->fetch.settled(fl->fetch, &e->pub, e->good, r);
		fl->fetch = NULL;
		entry_wake(c, e, r->error_message);
		robots_unref(old_rb);
		return;
	}
	e->pub.shared = r->shared != NULL;
	if (r->shared != NULL) {
		entry_install(c, e, r->shared);
		/* failing for --unreachable-allow-after: allowed from now on */
		entry_fallback(c, e, clock_now(c->clock));
	} else {
		entry_apply(c, e, r);
		if (c->fetch.settled != NULL)
			c->fetch.settled(fl->fetch, &e->pub, e->good, r);
	}
	cache_history_note(c, e, &old);
	entry_account(c, e);
	cache_tell_change(c, e, old.version, old_rb, old.policy, r);
	robots_unref(old_rb);
	fl->fetch = NULL;
	entry_wake(c, e, NULL);
	cache_enforce_cap(c);
}

/* New settings (a reload); entries over the new cap are evicted. */
void
cache_configure(struct cache *c, const struct cache_settings *set)
{
	c->set = *set;
	cache_enforce_cap(c);
}

/* Create an empty cache; NULL when memory runs out. */
struct cache *
cache_new(const struct cache_settings *set, const struct cache_fetch_ops *ops,
    void *fetch_impl, struct clock *clk)
{
	struct cache *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->nbuckets = CACHE_MIN_BUCKETS;
	if ((c->buckets = calloc(c->nbuckets, sizeof(*c->buckets))) == NULL) {
		free(c);
		return NULL;
	}
	TAILQ_INIT(&c->lru);
	c->fetch = *ops;
	c->fetch_impl = fetch_impl;
	c->clock = clk;
	c->set = *set;
	return c;
}

/* Free every entry, cancelling fetches and unhooking waiters silently. */
void
cache_free(struct cache *c)
{
	struct entry *e, *next;

	if (c == NULL)
		return;
	/*
	 * Nothing looks entries up any more: free them without taking each
	 * out of its hash chain and the LRU list (at a million entries that
	 * unlinking, a cache miss or two each, was most of the work).
	 */
	for (e = TAILQ_FIRST(&c->lru); e != NULL; e = next) {
		next = TAILQ_NEXT(e, lru);
		if (entry_in_flight(e))
			c->fetch.cancel(e->flight->fetch);
		entry_drop_waiters(c, e);
		entry_free(e);
	}
	free(c->buckets);
	free(c);
}

/*
 * A check that finds nothing to answer from: no entry, or only the
 * placeholder of a first fetch (e). Start or join the fetch, then wait on it
 * or answer PENDING.
 */
static enum cache_status
cache_check_miss(struct cache *c, struct entry *e, const char *origin, int wait,
    struct cache_waiter *w)
{
	int joined = e != NULL && entry_in_flight(e);

	/*
	 * Past --max-waiting waiting checks, or as many fetches queued for a
	 * free slot (wait:false warming included), a miss is refused: neither
	 * can grow without bound.
	 */
	if ((wait && c->stats.waiting >= c->set.max_waiting) ||
	    (!joined && c->fetch.queued(c->fetch_impl) >= c->set.max_waiting)) {
		c->stats.overloaded++;
		return CACHE_OVERLOADED;
	}
	if (e == NULL && (e = entry_new(c, origin)) == NULL)
		return CACHE_NOMEM;
	entry_touch(c, e);
	if (entry_fetch(c, e) == -1) {
		if (entry_idle(e))
			entry_remove(c, e);
		return CACHE_NOMEM;
	}
	c->stats.misses++;
	if (joined)
		c->stats.coalesced++;
	if (wait)
		entry_wait(c, e, w);
	cache_enforce_cap(c);
	return wait ? CACHE_WAIT : CACHE_PENDING;
}

/* A check of a settled entry: HIT or STALE, a refresh started if due. */
static enum cache_status
cache_check_settled(
    struct cache *c, struct entry *e, const struct cache_entry **entry)
{
	double now = clock_now(c->clock);

	entry_touch(c, e);
	entry_fallback(c, e, now);
	*entry = &e->pub;
	if (now >= e->pub.expires_at)
		(void)entry_fetch(c, e); /* else retry next check */
	if (e->pub.fetching || e->pub.stale) {
		c->stats.stale++;
		return CACHE_STALE;
	}
	c->stats.hits++;
	return CACHE_HIT;
}

/* Check an origin; see cache.h and docs/internals/cache.md. */
enum cache_status
cache_check(struct cache *c, const char *origin, int wait,
    struct cache_waiter *w, const struct cache_entry **entry)
{
	struct entry *e = cache_lookup(c, origin);

	*entry = NULL;
	if (e == NULL || e->pub.policy == CACHE_NONE)
		return cache_check_miss(c, e, origin, wait, w);
	return cache_check_settled(c, e, entry);
}

/* The fast path's check: only what is answered at once; see cache.h. */
enum cache_status
cache_check_cached(
    struct cache *c, const char *origin, const struct cache_entry **entry)
{
	struct entry *e = cache_lookup(c, origin);

	*entry = NULL;
	if (e == NULL || e->pub.policy == CACHE_NONE)
		return CACHE_MISS;
	return cache_check_settled(c, e, entry);
}

/* The same for an entry just answered; see cache.h. */
enum cache_status
cache_check_again(struct cache *c, const struct cache_entry *pub,
    const struct cache_entry **entry)
{
	struct entry *e = (struct entry *)(void *)pub;

	*entry = NULL;
	if (e->pub.policy == CACHE_NONE)
		return CACHE_MISS;
	return cache_check_settled(c, e, entry);
}

/* Unhook a waiter; its callback will not run. */
void
cache_waiter_cancel(struct cache_waiter *w)
{
	struct entry *e;

	if (w == NULL || w->entry == NULL)
		return;
	e = (struct entry *)(void *)w->entry;
	TAILQ_REMOVE(&e->flight->waiters, w, link);
	w->entry = NULL;
	e->flight->cache->stats.waiting--;
	entry_land(e);
}

/*
 * Forget an entry's data. An entry being fetched stays as the placeholder
 * of that fetch (policy CACHE_NONE: checks wait for it) and the fetch
 * refills it; any other entry goes.
 */
static void
entry_purge(struct cache *c, struct entry *e)
{
	if (!entry_in_flight(e) || e->flight->waking) {
		entry_remove(c, e);
		return;
	}
	(void)entry_settle(e, &(struct cache_entry){ .policy = CACHE_NONE }, 0);
	cache_history_free(e);
	entry_account(c, e);
}

/* Remove one origin; 1 if it was cached. */
size_t
cache_purge(struct cache *c, const char *origin)
{
	struct entry *e = cache_lookup(c, origin);

	if (c->fetch.purge != NULL)
		c->fetch.purge(c->fetch_impl, origin);
	if (e == NULL)
		return 0;
	entry_purge(c, e);
	return 1;
}

/* Remove every origin; returns how many there were. */
size_t
cache_purge_all(struct cache *c)
{
	struct entry *e, *next;
	size_t n = 0;

	for (e = TAILQ_FIRST(&c->lru); e != NULL; e = next) {
		next = TAILQ_NEXT(e, lru);
		entry_purge(c, e);
		n++;
	}
	return n;
}

/* Add an entry saved by a previous run (state file). */
int
cache_restore(struct cache *c, const struct cache_entry *saved, int good)
{
	struct entry *e;

	if (saved->policy == CACHE_NONE ||
	    cache_lookup(c, saved->origin) != NULL ||
	    (e = entry_new(c, saved->origin)) == NULL)
		return -1;
	if (entry_settle(e, saved, good) == -1) {
		e->pub.robots = NULL; /* the caller keeps its reference */
		entry_remove(c, e);
		return -1;
	}
	/*
	 * Rules compiled by an older build have no usage preferences (they
	 * answer all unknown): due now, so the first check refreshes them
	 * while the saved copy keeps answering.
	 */
	if (e->pub.robots != NULL && !robots_has_prefs(e->pub.robots) &&
	    e->pub.expires_at > clock_now(c->clock))
		e->pub.expires_at = clock_now(c->clock);
	entry_account(c, e);
	return 0;
}

/* Keep the entries restored (down to the cap), or remove the last n. */
void
cache_restore_end(struct cache *c, size_t n, int keep)
{
	if (keep)
		cache_enforce_cap(c);
	else
		while (n-- > 0 && !TAILQ_EMPTY(&c->lru))
			entry_remove(c, TAILQ_LAST(&c->lru, entry_list));
}
