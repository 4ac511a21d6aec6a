/*
 * cache.h: origin -> cache entry (compiled ruleset and fetch outcome), O(1)
 * lookup, LRU eviction under a byte cap, and the fetch policy: one fetch per
 * origin at a time, waiters on in-flight fetches, stale serving, retries.
 * Owns its entries; entries being fetched or waited on are never evicted.
 */
#ifndef ROBOTSD_CACHE_H
#define ROBOTSD_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include "cache/lifetime.h"
#include "iface/outcome.h"
#include "cache/version.h"

struct clock;
struct robots;
struct cache;
struct cache_entry;

enum cache_policy {
	CACHE_NONE,         /* never fetched yet (first fetch in flight) */
	CACHE_RULES,        /* 2xx: the rules of the body */
	CACHE_ALLOW_ALL,    /* 4xx, too many redirects: "unavailable" */
	CACHE_DISALLOW_ALL, /* 5xx, 429, network error: "unreachable" */
};

/*
 * What a check is answered from; fields are read-only for callers. A cache
 * keeps one per origin, so the fields are as narrow as their values allow.
 */
struct cache_entry {
	char *origin;
	/*
	 * CACHE_RULES: robots.txt's ruleset, or another kind's doc (its
	 * compile()); shared, refcounted.
	 */
	union {
		struct robots *robots;
		void *doc;
	};
	char *final_url;  /* after redirects, or NULL */
	char *last_error; /* text of the last failure, or NULL */
	/*
	 * A 2xx copy's ETag and Last-Modified, each NUL-terminated, one after
	 * the other ("" when absent); NULL when it has neither. Read them
	 * with cache_entry_etag() and cache_entry_last_modified().
	 */
	char *validators;
	double fetched_at;    /* clock seconds of the last fetch's end */
	double version_since; /* clock seconds: this version first fetched */
	double validated_at;  /* last fetch or 304 that confirmed it */
	double expires_at;    /* refresh after this */
	/* Failure state (5xx, 429, network error, timeout). */
	double fail_since;    /* clock seconds of the first failure */
	double next_retry;    /* clock seconds of the next retry */
	unsigned fail_streak; /* consecutive failed fetches */
	uint32_t body_bytes;  /* bytes of the body kept (<= 500 KiB) */
	int16_t http_status;  /* of the last fetch (3 digits); 0 = no answer */
	uint8_t policy;       /* enum cache_policy */
	uint8_t truncated;    /* the body was cut at 500 KiB */
	uint8_t fetching;     /* a fetch of this origin is under way */
	uint8_t stale;        /* answers come from an older good copy */
	uint8_t shared;       /* taken from the shared tier, not fetched here */
	uint8_t cause;        /* enum fetch_cause while failing, else NONE */
	/*
	 * version.h's id of the state answered from: the good copy's while
	 * one is served stale; "" when unknown (restored from an old state
	 * file, whose records keep no body).
	 */
	char version[VERSION_HEX + 1];
};

enum cache_status {
	CACHE_HIT,        /* *entry is fresh: answer now */
	CACHE_STALE,      /* *entry is old but usable; a refresh may run */
	CACHE_WAIT,       /* the waiter is queued; its callback will run */
	CACHE_PENDING,    /* wait == 0 and nothing cached: fetch started */
	CACHE_OVERLOADED, /* too many waiters (--max-waiting) */
	CACHE_NOMEM,
	CACHE_MISS, /* cache_check_cached(): nothing settled; nothing done */
};

struct cache_waiter;
/* Runs once when the fetch the waiter waits on ends; entry is borrowed. */
typedef void (*cache_wait_cb)(
    struct cache_waiter *, const struct cache_entry *);

/* Embedded in the caller's request; must stay valid until cb or cancel. */
struct cache_waiter {
	TAILQ_ENTRY(cache_waiter) link;
	cache_wait_cb cb;
	void *arg;
	struct cache_entry *entry; /* private */
	/*
	 * Set for the callback when the fetch failed for robotsd's own
	 * reasons (FETCH_LOCAL): the entry is as it was; answer this error.
	 */
	const char *error;
};

/*
 * Counters. Every cache_check() answering HIT, STALE, WAIT or PENDING counts
 * once in hits, stale or misses; a miss that joined a fetch already in flight
 * also counts in coalesced. fetches: fetches started; fetch_errors: those
 * that ended "unreachable" (5xx, 429, network error, timeout, refused
 * address). overloaded: checks answered CACHE_OVERLOADED.
 */
struct cache_stats {
	uint64_t hits, misses, fetches, fetch_errors, coalesced, stale;
	uint64_t evictions;
	size_t entries, bytes, waiting;
	size_t backoff; /* settled entries failing, waiting for a retry */
	uint64_t overloaded;
	uint64_t revalidated; /* refreshes answered 304: kept, not parsed */
};

struct cache_settings {
	struct lifetime_settings life;
	size_t max_bytes;     /* evict idle entries past this */
	size_t max_waiting;   /* waiting checks, and fetches queued */
	size_t history_depth; /* distinct versions kept per origin (< 2: one) */
};

/*
 * How the cache gets an origin's robots.txt: the fetcher in the daemon, a
 * scripted one in the tests. start() begins a GET of url and returns a
 * handle, or NULL when memory runs out; done runs exactly once unless the
 * handle is cancelled first. queued() counts fetches waiting for a slot.
 */
struct cache_version;
struct cache_fetch_ops {
	void *(*start)(void *impl, const char *url, fetch_done_cb, void *arg);
	void (*cancel)(void *fetch);
	/*
	 * Optional: start() sending the validators of cond (a refresh of a
	 * ruleset that has some). Without it refreshes are unconditional.
	 * A 304 to it has no body: a fetcher that publishes what it fetched
	 * (the shared tier) must take a revalidated entry's body from
	 * elsewhere (shared.c: the tier's value of the same version).
	 */
	void *(*start_cond)(void *impl, const char *url,
	    const struct fetch_cond *cond, fetch_done_cb, void *arg);
	size_t (*queued)(const void *impl);
	/*
	 * Optional (a shared tier in front of the fetcher): called from
	 * inside a fetch's done callback, after the cache applied a result
	 * fetched here (r->shared NULL), with the entry it made and whether
	 * that entry holds a good copy; r's body is still valid.
	 */
	void (*settled)(void *fetch, const struct cache_entry *, int good,
	    const struct fetch_result *r);
	/* Optional: an origin was purged here; forget it there too. */
	void (*purge)(void *impl, const char *origin);
	/*
	 * Optional (the shared tier): read origin's versions there without
	 * fetching it; see cache_peek_history(). 0: cb runs once (maybe at
	 * once), -1: it never runs.
	 */
	int (*peek)(void *impl, const char *origin,
	    void (*cb)(const struct cache_version *, size_t n, void *arg),
	    void *arg);
};

/*
 * The seam for whatever follows an origin's versions (archive, change
 * feed): a cache calls its listeners when a fetch here or a shared-tier
 * read gives an origin a version it did not have (a new entry, or a
 * different version); never on a 304 revalidation, on the same bytes again,
 * on a failure while a good copy is served, or on a state file restore.
 * Everything is borrowed for the call only.
 */
struct cache_change {
	const char *origin;
	const char *old_version; /* NULL: the origin had none */
	const char *new_version;
	double at; /* clock seconds (Unix time, test offset included) */
	const struct cache_entry *entry; /* the new state, ruleset included */
	/* The ruleset before (a reference is held during the call), or NULL. */
	const struct robots *old_robots;
	int old_policy; /* enum cache_policy before (CACHE_NONE: none) */
	/*
	 * The fetch outcome (raw_headers, body as received up to the cap);
	 * NULL when the version came from the shared tier.
	 */
	const struct fetch_result *fetched;
	const struct cache_kind *kind; /* the cache's resource */
	unsigned old_flags, new_flags; /* CACHE_VERSION_* of each side */
};
typedef void (*cache_change_cb)(const struct cache_change *, void *arg);
#define CACHE_MAX_LISTENERS 4
/* Add a listener (up to CACHE_MAX_LISTENERS); -1 when full. */
int cache_listen(struct cache *, cache_change_cb, void *arg);

/*
 * The resource a cache holds for each origin: robots.txt unless set. A
 * 2xx body becomes CACHE_RULES with what compile() makes of it (NULL only
 * when memory runs out; a body the kind finds invalid is still compiled,
 * its doc saying why); ref() and unref() (NULL allowed) share it.
 */
struct cache_kind {
	const char *name; /* "robots.txt", "tdmrep": the resource's name */
	const char *path; /* fetched at ORIGIN + path */
	void *(*compile)(const char *body, size_t len);
	void *(*ref)(void *doc);
	void (*unref)(void *doc);
	/* The name of a settled entry's state (NULL: cache_policy_name()). */
	const char *(*state_name)(const struct cache_entry *);
	/* The heap bytes doc holds (NULL: one block, xheld()). */
	size_t (*bytes)(const void *doc);
	/*
	 * An origin failing past --unreachable-allow-after with no good copy
	 * stays failing: robots.txt's allow-all (RFC 9309 section 2.3.1.4)
	 * is robots.txt's only.
	 */
	int keep_unreachable;
	/*
	 * Optional (the state file): the bytes doc was compiled from, kept
	 * with it (counted in bytes()), which compile() makes the same doc
	 * of again; *len their length. NULL: the entries are saved as
	 * robots.txt's, by their ruleset image.
	 */
	const void *(*source)(const void *doc, size_t *len);
	/*
	 * Optional: what a version of a 2xx body (doc, compiled) is beyond
	 * CACHE_RULES, as CACHE_VERSION_* flags kept in its history record
	 * (a tdmrep.json that is not a JSON array: CACHE_VERSION_INVALID).
	 */
	unsigned (*flags)(const void *doc);
	/*
	 * Optional: the name of a version's state from its policy and flags
	 * (the history op, the change feed); NULL: cache_policy_name().
	 */
	const char *(*version_state)(int policy, unsigned flags);
};
extern const struct cache_kind cache_kind_robots;

struct cache *cache_new(const struct cache_settings *,
    const struct cache_fetch_ops *, void *fetch_impl, struct clock *);
void cache_free(struct cache *); /* NULL is fine; cancels waiters silently */
void cache_configure(struct cache *, const struct cache_settings *);
/* Hold kind (static) instead of robots.txt; before the first check only. */
void cache_set_kind(struct cache *, const struct cache_kind *);
/*
 * One byte cap for a and b (robots.txt's cache and tdmrep.json's): from
 * now on each keeps the bytes of both within its max_bytes (the two are
 * configured alike), evicting while over the idle entry of either that
 * was used least recently (one LRU order across both, O(1) a step); a
 * peer that holds nothing leaves the whole cap to the other. Freeing one
 * gives the other its cap back.
 */
void cache_share_budget(struct cache *a, struct cache *b);
const struct cache_kind *cache_kind(const struct cache *);

/*
 * Look origin up for a check; a fetch, when one is needed, gets the
 * origin's /robots.txt (robots_url_robots_txt()).
 * HIT/STALE: *entry is set (borrowed until control returns to the loop); an
 * expired entry starts one refresh (or retry) and answers STALE at once.
 * WAIT: w (required when wait != 0, cb and arg set) is queued; w->cb runs
 * once when the fetch ends. With wait == 0 a miss answers PENDING and the
 * fetch runs in the background. OVERLOADED: --max-waiting checks already
 * wait; nothing was queued or started. See docs/internals/cache.md.
 */
enum cache_status cache_check(struct cache *, const char *origin, int wait,
    struct cache_waiter *w, const struct cache_entry **entry);
void cache_waiter_cancel(struct cache_waiter *); /* no callback after this */
/*
 * cache_check() for a check that may not wait: HIT or STALE exactly as
 * cache_check() answers them (counted, a refresh started when due), or
 * CACHE_MISS with nothing done or counted when cache_check() would have to
 * start a first fetch or queue a waiter: the caller then calls it.
 */
enum cache_status cache_check_cached(
    struct cache *, const char *origin, const struct cache_entry **entry);
/*
 * cache_check_cached() once more for the origin of an entry it has just
 * answered within the same request line (same clock, no fetch callback
 * between): done and counted the same, without looking the origin up.
 */
enum cache_status cache_check_again(struct cache *, const struct cache_entry *,
    const struct cache_entry **entry);

/*
 * The fleet told of a change of origin (the change feed): load it anew
 * now, in the background, the entry answering as it did meanwhile; the
 * loader's own copy (the shared tier's) is taken only when fetched at or
 * after since (clock seconds), else the origin is fetched (struct
 * fetch_cond). An origin not cached is loaded only with create. 1: a load
 * started; 0: one is under way already; -1: none (not cached, memory,
 * or as many fetches queued as --max-waiting).
 */
int cache_refresh(struct cache *, const char *origin, double since, int create);

/* An entry's validators (see struct cache_entry), or NULL. */
const char *cache_entry_etag(const struct cache_entry *);
const char *cache_entry_last_modified(const struct cache_entry *);

/*
 * One version of an origin (the history op): times are Unix seconds
 * (clock seconds, whole), policy the state it gave.
 */
struct cache_version {
	char version[VERSION_HEX + 1];
	double first_seen, last_seen;
	int http_status; /* 0: no HTTP answer */
	enum cache_policy policy;
	unsigned flags; /* CACHE_VERSION_*: what the kind saw in it */
};
/* A 2xx body the kind's compile() found invalid (cache_kind.flags). */
#define CACHE_VERSION_INVALID 1u
/* The name of v's state as c's kind names it. */
const char *cache_version_state(
    const struct cache *, enum cache_policy, unsigned flags);
/* The flags of the version entry e of c holds (cache_kind.flags). */
unsigned cache_entry_flags(const struct cache *, const struct cache_entry *);
#define CACHE_MAX_HISTORY 255
/*
 * An entry's last --history-depth distinct versions into out (room for
 * max), newest first, the current one first; how many. An entry with no
 * known version (restored from an old state file) has none.
 */
size_t cache_history(
    const struct cache_entry *, struct cache_version *out, size_t max);

/*
 * The versions another instance saw, for the history op of an origin not
 * cached here: 0 when the fetcher reads the shared tier (cb then runs once,
 * maybe before this returns, with the versions of the origin's shared
 * value, verified as a check's read verifies it, newest first; n 0 when
 * there is none or the tier failed), -1 (cb never runs) without a tier or
 * memory. Nothing is fetched and no entry made. Once cb has run, the
 * caller may give them to cache_history_learn().
 */
typedef void (*cache_peek_cb)(const struct cache_version *, size_t n, void *);
int cache_peek_history(
    struct cache *, const char *origin, cache_peek_cb, void *arg);
/*
 * v[0..n) (newest first), another instance's versions of origin, merged
 * into those of origin's entry when it has a version now (as a read of
 * the shared value merges them); into out (room for CACHE_MAX_HISTORY) the
 * versions to answer: the entry's then, else v's; how many.
 */
size_t cache_history_learn(struct cache *, const char *origin,
    const struct cache_version *v, size_t n, struct cache_version *out);

/* Borrowed, or NULL when the origin is not cached. Counts no hit. */
const struct cache_entry *cache_find(struct cache *, const char *origin);
/*
 * Remove one origin (1 if it was there) or all. An entry with a fetch in
 * flight is emptied instead (policy CACHE_NONE): its waiters, and checks
 * from now on, are answered by that fetch, which refills it.
 */
size_t cache_purge(struct cache *, const char *origin);
size_t cache_purge_all(struct cache *);
/* Seconds until the entry is refreshed or retried, never negative. */
double cache_expires_in(const struct cache *, const struct cache_entry *);
const struct cache_stats *cache_stats(const struct cache *);
struct fetch_stats;
const struct fetch_stats *cache_fetch_stats(const struct cache *);
const char *cache_policy_name(enum cache_policy);

/*
 * For the state file. cache_foreach calls cb for every settled entry (one
 * that is not CACHE_NONE), least recently used first; good says whether it
 * holds a copy from a 2xx/4xx answer. cache_restore adds a saved entry as
 * the most recently used, taking its robots reference; -1 (nothing taken)
 * when the origin is cached already or memory runs out. It evicts nothing:
 * after the last one, cache_restore_end either keeps them (evicting down to
 * the cap) or removes the n entries restored (n most recently used), when
 * nothing else used the cache in between.
 */
typedef void (*cache_each_cb)(const struct cache_entry *, int good, void *);
void cache_foreach(const struct cache *, cache_each_cb, void *);
/* cb for every entry whose fetch is under way (good as above). */
void cache_foreach_fetching(const struct cache *, cache_each_cb, void *);
int cache_restore(struct cache *, const struct cache_entry *saved, int good);
/*
 * Give the entry of origin just restored the versions saved with it
 * (cache_history()'s output: newest first, its own version first), the
 * newest --history-depth of them. -1 (nothing kept) when origin is not
 * cached, fewer than two versions are kept, v[0] is not the entry's
 * version or memory runs out: the entry is then its only version.
 */
int cache_restore_history(struct cache *, const char *origin,
    const struct cache_version *v, size_t n);
void cache_restore_end(struct cache *, size_t n, int keep);
/* A hint: origin is looked up soon (a state file record being read). */
void cache_prefetch(const struct cache *, const char *origin);

#endif /* ROBOTSD_CACHE_H */
