/*
 * cache.c: origin -> entry. A chained hash table (FNV-1a, doubling) gives
 * O(1) lookup; a tail queue keeps entries in least-recently-used order; each
 * entry's bytes are accounted and idle entries are evicted from the LRU end
 * while the total is over the cap (with a peer sharing the cap, the total
 * of both, from the end of whichever was used less recently). Here too is
 * the fetch policy: one fetch per origin, waiters on it, stale answers while
 * a refresh runs or after it failed. What an outcome makes of an entry is
 * cache_apply.c's; the rules (the status table, lifetimes, the retry
 * schedule) are lifetime.c's pure functions; fetches go through struct
 * cache_fetch_ops and time through the clock, so tests drive both exactly.
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
#include "base/xmalloc.h"
#include "cache/fetchlog.h"
#include "cache/version.h"

static void cache_fetch_done_cb(const struct fetch_result *, void *);

/* The URL of the resource of origin (malloc'd), or NULL. */
static char *
resource_url(const struct cache *c, const char *origin)
{
	size_t n = strlen(origin), p = strlen(c->kind->path);
	char *url;

	if ((url = malloc(n + p + 1)) == NULL)
		return NULL;
	memcpy(url, origin, n);
	memcpy(url + n, c->kind->path, p + 1);
	return url;
}

/* Drop a reference to doc (NULL allowed) of c's kind. */
static void
cache_doc_unref(const struct cache *c, void *doc)
{
	if (c->kind->unref != NULL && doc != NULL)
		c->kind->unref(doc);
}

/* The allocation of an entry with an origin of len bytes. */
static size_t
entry_alloc_size(size_t len)
{
	size_t n = offsetof(struct entry, origin) + len + 1;

	return n > sizeof(struct entry) ? n : sizeof(struct entry);
}

/*
 * The bytes an entry holds: what the allocator holds for its block,
 * strings, compiled ruleset and history (xheld()), so that
 * --cache-max-bytes caps the heap the cache really takes.
 */
static size_t
entry_size(const struct cache *c, const struct entry *e)
{
	size_t doc = c->kind->bytes != NULL && e->pub.doc != NULL
	                 ? c->kind->bytes(e->pub.doc)
	                 : xheld(e->pub.robots);

	return xheld(e) + xheld(e->pub.final_url) + xheld(e->pub.last_error) +
	       xheld(e->pub.validators) + doc + xheld(e->hist);
}

/*
 * Recount an entry's bytes, and whether it is in backoff (settled and
 * failing), after it changed: stats read the totals without walking the
 * cache, which at a million origins would hold the loop for milliseconds.
 */
static void
cache_account(struct cache *c, struct entry *e)
{
	c->stats.bytes -= e->bytes;
	e->bytes = (uint32_t)entry_size(c, e);
	c->stats.bytes += e->bytes;
	c->stats.backoff -= e->in_backoff;
	e->in_backoff = e->pub.policy != CACHE_NONE && e->pub.fail_streak > 0;
	c->stats.backoff += e->in_backoff;
}

/* Release an entry's memory (it is in no structure any more). */
static void
entry_free(const struct cache *c, struct entry *e)
{
	cache_doc_unref(c, e->pub.doc);
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
	entry_free(c, e);
}

/*
 * Mark an entry as used now in the order of c and its peer: the next
 * tick of the two.
 */
static void
entry_stamp(struct cache *c, struct entry *e)
{
	uint64_t t = c->tick;

	if (c->peer != NULL && c->peer->tick > t)
		t = c->peer->tick;
	c->tick = t + 1;
	e->used = c->tick;
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
	entry_stamp(c, e);
	c->stats.entries++;
	cache_account(c, e);
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

/* The first idle entry from e on in its LRU order, or NULL. */
static struct entry *
entry_next_idle(struct entry *e)
{
	while (e != NULL && !entry_idle(e))
		e = TAILQ_NEXT(e, lru);
	return e;
}

/* The bytes c's cap counts: its own and its peer's (one budget). */
static size_t
cache_budget_bytes(const struct cache *c)
{
	return c->stats.bytes + (c->peer != NULL ? c->peer->stats.bytes : 0);
}

/*
 * Evict idle entries while the budget is over the cap, least recently
 * used first: of c's and its peer's, the one whose last use is older
 * (the two LRU lists merged by their ticks), so each eviction is O(1).
 */
static void
cache_enforce_cap(struct cache *c)
{
	struct entry *a = entry_next_idle(TAILQ_FIRST(&c->lru)), *b = NULL, *e;
	struct cache *p = c->peer, *from;

	if (p != NULL)
		b = entry_next_idle(TAILQ_FIRST(&p->lru));
	while ((a != NULL || b != NULL) &&
	       cache_budget_bytes(c) > c->set.max_bytes) {
		if (b == NULL || (a != NULL && a->used <= b->used)) {
			e = a, from = c;
			a = entry_next_idle(TAILQ_NEXT(a, lru));
		} else {
			e = b, from = p;
			b = entry_next_idle(TAILQ_NEXT(b, lru));
		}
		from->stats.evictions++;
		entry_remove(from, e);
	}
}

/* Mark an entry as just used. */
static void
entry_touch(struct cache *c, struct entry *e)
{
	TAILQ_REMOVE(&c->lru, e, lru);
	TAILQ_INSERT_TAIL(&c->lru, e, lru);
	entry_stamp(c, e);
}

/*
 * Start a fetch of an entry's resource (its /robots.txt), its loader's copy
 * taken only when fetched at or after since (0: any; see struct fetch_cond); -1
 * when memory runs out.
 */
static int
entry_fetch(struct cache *c, struct entry *e, double since)
{
	struct flight *fl;
	char *url;

	if (entry_in_flight(e))
		return 0;
	if ((url = resource_url(c, e->origin)) == NULL)
		return -1;
	if ((fl = entry_flight(c, e)) != NULL) {
		struct fetch_cond cond = { cache_entry_etag(&e->pub),
			cache_entry_last_modified(&e->pub), since };

		fl->conditional =
		    c->fetch.start_cond != NULL && e->good &&
		    e->pub.robots != NULL &&
		    (cond.etag != NULL || cond.last_modified != NULL);
		if (!fl->conditional)
			cond.etag = cond.last_modified = NULL;
		fl->fetch = c->fetch.start_cond != NULL &&
		                    (fl->conditional || since > 0)
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
		entry_free(c, e);
	else
		entry_land(e);
}

/*
 * Tell the listeners that e went from the version snap tells (or none: "")
 * to the one it holds now, if that differs; old_rb is the doc before.
 */
static void
cache_tell_change(struct cache *c, const struct entry *e,
    const struct cache_snap *snap, const void *old_rb,
    const struct fetch_result *r)
{
	const char *old = snap->version;
	struct cache_change ch = {
		.origin = e->pub.origin,
		.old_version = old[0] != '\0' ? old : NULL,
		.new_version = e->pub.version,
		.at = e->pub.version_since,
		.entry = &e->pub,
		.old_robots = old_rb,
		.old_policy = snap->policy,
		.fetched = r->shared == NULL ? r : NULL,
		.kind = c->kind,
		.old_flags = snap->flags,
		.new_flags = e->vflags,
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
		.policy = e->pub.policy,
		.flags = e->vflags };
	void *old_rb = NULL;

	memcpy(old.version, e->pub.version, sizeof(old.version));
	if (c->nlisteners > 0 && e->pub.doc != NULL)
		old_rb = c->kind->ref(e->pub.doc);
	e->pub.fetching = 0;
	if (r->shared == NULL && r->error == FETCH_LOCAL) {
		/* Ours, not the origin's: nothing cached, nothing shared. */
		fetchlog_local(&c->fstats, e->pub.origin, r->error_message);
		if (c->fetch.settled != NULL)
			c->fetch.settled(fl->fetch, &e->pub, e->good, r);
		fl->fetch = NULL;
		entry_wake(c, e, r->error_message);
		cache_doc_unref(c, old_rb);
		return;
	}
	e->pub.shared = r->shared != NULL;
	if (r->shared != NULL) {
		cache_apply_shared(c, e, r->shared);
		/* failing for --unreachable-allow-after: allowed from now on */
		cache_apply_fallback(c, e, clock_now(c->clock));
	} else
		cache_apply_fetch(c, e, r);
	cache_history_note(c, e, &old);
	if (r->shared != NULL)
		cache_history_merge(
		    c, e, r->shared->versions, r->shared->nversions);
	else if (c->fetch.settled != NULL) /* published with its history */
		c->fetch.settled(fl->fetch, &e->pub, e->good, r);
	cache_account(c, e);
	cache_tell_change(c, e, &old, old_rb, r);
	cache_doc_unref(c, old_rb);
	fl->fetch = NULL;
	entry_wake(c, e, NULL);
	cache_enforce_cap(c);
}

/* The kind of c is kind from now on; see cache.h. */
void
cache_set_kind(struct cache *c, const struct cache_kind *kind)
{
	c->kind = kind;
}

/* What c holds. */
const struct cache_kind *
cache_kind(const struct cache *c)
{
	return c->kind;
}

/* One byte cap for a and b; see cache.h. */
void
cache_share_budget(struct cache *a, struct cache *b)
{
	a->peer = b;
	b->peer = a;
	cache_enforce_cap(a);
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
	c->kind = &cache_kind_robots;
	return c;
}

/* Free every entry, cancelling fetches and unhooking waiters silently. */
void
cache_free(struct cache *c)
{
	struct entry *e, *next;

	if (c == NULL)
		return;
	if (c->peer != NULL)
		c->peer->peer = NULL; /* the other keeps the cap for itself */
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
		entry_free(c, e);
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
	if (entry_fetch(c, e, 0) == -1) {
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
	cache_apply_fallback(c, e, now);
	*entry = &e->pub;
	if (now >= e->pub.expires_at)
		(void)entry_fetch(c, e, 0); /* else retry next check */
	/* a refresh of a copy still fresh (cache_refresh) is no staleness */
	if (e->pub.stale || (e->pub.fetching && now >= e->pub.expires_at)) {
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

/* Load an origin anew, for a change told by the fleet; see cache.h. */
int
cache_refresh(struct cache *c, const char *origin, double since, int create)
{
	struct entry *e = cache_lookup(c, origin);

	if (e != NULL && entry_in_flight(e))
		return 0;
	if ((e == NULL && !create) ||
	    c->fetch.queued(c->fetch_impl) >= c->set.max_waiting)
		return -1;
	if (e == NULL) {
		if ((e = entry_new(c, origin)) == NULL)
			return -1;
		entry_touch(c, e);
	}
	if (entry_fetch(c, e, since) == -1) {
		if (entry_idle(e) && e->pub.policy == CACHE_NONE)
			entry_remove(c, e);
		return -1;
	}
	cache_enforce_cap(c);
	return 1;
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
	(void)cache_apply_settle(
	    c, e, &(struct cache_entry){ .policy = CACHE_NONE }, 0);
	cache_history_free(e);
	cache_account(c, e);
}

/*
 * Forget origin's resource in the fetcher too (the shared tier): by its
 * origin for robots.txt, by its URL for another kind (the key the tier
 * keeps it under, see shared_start()).
 */
static void
cache_purge_shared(struct cache *c, const char *origin)
{
	char *url;

	if (c->kind == &cache_kind_robots)
		c->fetch.purge(c->fetch_impl, origin);
	else if ((url = resource_url(c, origin)) != NULL) {
		c->fetch.purge(c->fetch_impl, url);
		free(url);
	}
}

/* See cache.h. */
int
cache_peek_history(
    struct cache *c, const char *origin, cache_peek_cb cb, void *arg)
{
	char *url;
	int r;

	if (c->fetch.peek == NULL)
		return -1;
	if (c->kind == &cache_kind_robots)
		return c->fetch.peek(c->fetch_impl, origin, cb, arg);
	/* another kind's key is its URL, as for a purge */
	if ((url = resource_url(c, origin)) == NULL)
		return -1;
	r = c->fetch.peek(c->fetch_impl, url, cb, arg);
	free(url);
	return r;
}

/* Remove one origin; 1 if it was cached. */
size_t
cache_purge(struct cache *c, const char *origin)
{
	struct entry *e = cache_lookup(c, origin);

	if (c->fetch.purge != NULL)
		cache_purge_shared(c, origin);
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
	if (cache_apply_settle(c, e, saved, good) == -1) {
		e->pub.robots = NULL; /* the caller keeps its reference */
		entry_remove(c, e);
		return -1;
	}
	e->vflags = (uint8_t)cache_entry_flags(c, &e->pub); /* as fetched */
	/*
	 * Rules compiled by an older build have no usage preferences (they
	 * answer all unknown): due now, so the first check refreshes them
	 * while the saved copy keeps answering.
	 */
	if (c->kind == &cache_kind_robots && e->pub.robots != NULL &&
	    !robots_has_prefs(e->pub.robots) &&
	    e->pub.expires_at > clock_now(c->clock))
		e->pub.expires_at = clock_now(c->clock);
	cache_account(c, e);
	return 0;
}

/* The versions saved with an entry just restored; see cache.h. */
int
cache_restore_history(struct cache *c, const char *origin,
    const struct cache_version *v, size_t n)
{
	struct entry *e = cache_lookup(c, origin);

	if (e == NULL || cache_history_set(c, e, v, n) == -1)
		return -1;
	cache_account(c, e);
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
