/*
 * cache_int.h: the cache's private types, shared by cache.c, its origin
 * index (cache_index.c), what an outcome makes of an entry
 * (cache_apply.c), its read-only queries (cache_read.c) and the version
 * history of its entries (cache_history.c). Nothing else includes it.
 */
#ifndef ROBOTSD_CACHE_INT_H
#define ROBOTSD_CACHE_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "cache/fetchlog.h"

#define CACHE_MIN_BUCKETS 64

TAILQ_HEAD(cache_waiters, cache_waiter);

/*
 * A fetch in flight for an entry and the checks waiting on it: only while
 * the fetch runs or its waiters are being answered, so an idle entry (the
 * great majority) carries none of it.
 */
struct flight {
	struct cache *cache;
	void *fetch; /* the fetch, or NULL once it ended */
	struct cache_waiters waiters;
	int waking;      /* waiters' callbacks are running */
	int dead;        /* the entry was unlinked; freed when waking ends */
	int conditional; /* the fetch sent the entry's validators */
};

/*
 * The private entry; pub comes first so a public pointer converts back.
 * One allocation with its origin string.
 */
struct entry {
	struct cache_entry pub;
	struct entry *hnext; /* hash chain */
	TAILQ_ENTRY(entry) lru;
	struct flight *flight; /* NULL when idle */
	struct history *hist;  /* older versions (cache_history.c), or NULL */
	uint64_t used;         /* the budget's tick of its last use (LRU) */
	uint32_t hash;         /* cache_hash() of the origin, low bits */
	uint32_t bytes;        /* accounted in cache->stats.bytes */
	uint8_t good;          /* holds a copy from a 2xx/4xx answer */
	uint8_t in_backoff;    /* counted in cache->stats.backoff */
	uint8_t vflags;        /* cache_entry_flags() of its version */
	char origin[];         /* pub.origin */
};

TAILQ_HEAD(entry_list, entry);

struct cache {
	struct entry **buckets;
	size_t nbuckets;       /* power of two */
	struct entry_list lru; /* head = least recently used */
	struct cache_fetch_ops fetch;
	void *fetch_impl;
	struct clock *clock;
	struct cache_stats stats;
	struct fetch_stats fstats;
	struct cache_settings set;
	/*
	 * The cache sharing its byte cap (cache_share_budget()), or NULL;
	 * tick counts the uses of entries of both, so that their used ticks
	 * order the two LRU lists as one.
	 */
	struct cache *peer;
	uint64_t tick;
	const struct cache_kind *kind;
	struct {
		cache_change_cb cb;
		void *arg;
	} listeners[CACHE_MAX_LISTENERS];
	size_t nlisteners;
};

/* The index (cache_index.c). */
uint64_t cache_hash(const char *);
/* Find an origin's entry, or NULL. */
struct entry *cache_lookup(const struct cache *, const char *origin);
/* Double the bucket array; on memory exhaustion keep the old one. */
void cache_grow(struct cache *);
/* Take an entry out of its hash chain. */
void cache_unhash(struct cache *, struct entry *);

/* What an entry's version was before a fetch was applied to it. */
struct cache_snap {
	char version[VERSION_HEX + 1];
	double since, validated_at;
	int http_status, policy;
	unsigned flags; /* CACHE_VERSION_* */
};
/* The history (cache_history.c): note e's version after a fetch. */
void cache_history_note(
    const struct cache *, struct entry *, const struct cache_snap *old);
void cache_history_free(struct entry *);
/*
 * Give e the versions v[0..n) (cache_history()'s order: newest first, e's
 * own version first), the newest --history-depth of them; -1 (e's history
 * as it was) when fewer than two are kept, v[0] is not e's version or
 * memory runs out.
 */
int cache_history_set(const struct cache *, struct entry *,
    const struct cache_version *v, size_t n);
/*
 * Add the versions another instance saw, v[0..n) (newest first), to e's:
 * one e holds already keeps e's record (an older one widened to the
 * earlier first_seen and the later last_seen), the others are taken; e's
 * own version stays first, the rest newest first_seen first, the newest
 * --history-depth of them kept. Nothing changes on no memory.
 */
void cache_history_merge(const struct cache *, struct entry *,
    const struct cache_version *v, size_t n);

/* What an outcome makes of an entry (cache_apply.c). */
void cache_apply_fetch(
    struct cache *, struct entry *, const struct fetch_result *);
void cache_apply_shared(
    struct cache *, struct entry *, const struct shared_state *);
int cache_apply_settle(const struct cache *, struct entry *,
    const struct cache_entry *src, int good);
void cache_apply_fallback(const struct cache *, struct entry *, double now);

#endif /* ROBOTSD_CACHE_INT_H */
