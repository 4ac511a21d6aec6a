/*
 * tier.h: the shared Redis tier's client (built with hiredis only). One
 * command connection and one subscriber connection per Redis server, on
 * robotsd's libevent loop through hiredis's async API; nothing blocks.
 * Owns its connections, its calls and their timers.
 *
 * Each origin lives on exactly one server (tier_ring.h). Keys (docs/
 * scaling.md): entry "robotsd:v1:e:{ORIGIN}" holds the origin's
 * tier_value, lock "robotsd:v1:l:{ORIGIN}" a random token, purge record
 * "robotsd:v1:p:{ORIGIN}" when it was last purged, and every
 * publish announces ORIGIN on channel "robotsd:v1:n" of its server.
 *
 * Every call takes a callback (NULL: none wanted) that runs exactly once,
 * always from the event loop (never before the call returns), unless
 * tier_free comes first:
 *   - a server that is down fails its calls at once (TIER_DOWN), and a
 *     lost command connection ends the waits on its server (TIER_DOWN);
 *   - a server's calls are pipelined on its connection, at most
 *     max_inflight at a time; the others queue in robotsd (oldest first)
 *     and a call's deadline counts from when its commands are written to
 *     the socket, never while they wait in robotsd: robotsd's own backlog
 *     is not Redis being slow (and answers already received are read
 *     before a call is called late). Past max_queued queued calls a new
 *     call ends TIER_SHED at once;
 *   - a call unanswered after timeout_ms (--redis-timeout) ends TIER_TIMEOUT
 *     and its late reply is ignored; the connection is then dropped (its
 *     other calls end TIER_TIMEOUT too) and reconnected with backoff, as
 *     after any lost connection, by the tier itself;
 *   - tier_get and tier_lock may be given less time (what is left of a
 *     miss's budget): unanswered by then, the call ends TIER_TIMEOUT but
 *     the connection stays (its answer may still come, and is ignored; a
 *     lock it grants then is released at once), as only a reply later
 *     than timeout_ms says Redis is stuck.
 *
 * How the cache uses it (each step falls back to local-only operation on
 * any result it does not expect):
 *   - local miss: tier_get; TIER_OK installs the value (recompile the body)
 *     if it is still usable, TIER_MISS/TIER_CORRUPT go on to fetch;
 *   - before a fetch: tier_lock; TIER_OK fetches (keep the token),
 *     TIER_BUSY calls tier_wait, then tier_get again (and tier_lock with
 *     TIER_LOCK_TAKEOVER if still missing: the holder died or gave up;
 *     busy again, it waits again);
 *   - the get, the lock and the get under the lock of one miss share one
 *     budget of timeout_ms (shared.c);
 *   - after every fetch, failures included: tier_publish with the token,
 *     px_ms = remaining lifetime + stale window (or until next_retry for a
 *     failure state); it stores, releases the lock and notifies waiters;
 *   - purge: tier_purge removes the shared copy, and leaves a record of
 *     when, so that a value fetched before it and written back is not
 *     taken (reported to tier_get's caller, who decides).
 */
#ifndef ROBOTSD_TIER_H
#define ROBOTSD_TIER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct tier_value;
struct tier;

#define TIER_TOKEN_LEN 32 /* hex digits of a lock token */

enum tier_result {
	TIER_OK,   /* get: value; lock: taken; unlock: released; others: done */
	TIER_MISS, /* get: no value; unlock: not held with that token;
	              purge: nothing was there */
	TIER_BUSY, /* lock: another instance holds it */
	TIER_NOTIFIED, /* wait: a notice came, and the lock is gone */
	TIER_UNLOCKED, /* wait: the lock is gone, no notice heard by this wait
	                */
	TIER_CORRUPT,  /* get: a value is there but refused (error says why) */
	TIER_TIMEOUT,  /* no answer in time (a wait: its own timeout_ms) */
	TIER_DOWN,  /* the origin's server is not connected: failed at once */
	TIER_ERROR, /* an error reply, a lost connection, an odd reply */
	TIER_SHED,  /* robotsd's queue of calls to the server is full */
};

struct tier_reply {
	enum tier_result result;
	const char *error;        /* why, for CORRUPT..ERROR; else NULL */
	struct tier_value *value; /* get TIER_OK: freed after the callback
	                             unless the callback takes it (sets NULL) */
	const char *token;        /* lock TIER_OK: the holder's token */
	/* get TIER_OK: the time (ms) of the origin's purge record, 0: none */
	int64_t purged_at;
	size_t server; /* index of the origin's server */
	/* How long the call waited in robotsd before it was written. */
	long queued_ms;
};
typedef void (*tier_cb)(struct tier_reply *, void *arg);

/*
 * A field left 0 takes its default: 250, 40000, 1000, 100, 5000 ms;
 * TIER_MAX_INFLIGHT, TIER_MAX_QUEUED calls.
 */
#define TIER_MAX_INFLIGHT 256
#define TIER_MAX_QUEUED 100000
struct tier_config {
	const char *const *urls; /* --redis URLs (tier_url.h), nurls >= 1 */
	size_t nurls;
	long timeout_ms; /* deadline of every Redis call, a miss's budget */
	long lock_ms;    /* the longest lock a robotsd sets: longer, foreign */
	long hold_ms; /* a lock's lifetime (PX), renewed; 0 or more: lock_ms */
	long poll_ms; /* a wait's fallback poll period */
	long reconnect_min_ms; /* backoff after a failure, doubling ... */
	long reconnect_max_ms; /* ... up to this */
	size_t max_inflight;   /* commands sent, unanswered, per server */
	size_t max_queued;     /* calls waiting to be sent, per server */
	/* The fleet's key (TIER_KEY_LEN bytes, copied), or NULL: no tags. */
	const unsigned char *key;
	/* AUTH for URLs without one, or NULL; read by tier_new() only */
	const char *password;
	/* rediss:// URLs: CA, client certificate, name (tier_tls.h); read
	 * by tier_new() only */
	const char *tls_ca_file, *tls_cert_file, *tls_key_file;
	const char *tls_server_name;
};

/* Counters since tier_new. */
struct tier_stats {
	uint64_t hits;       /* get: a usable value */
	uint64_t misses;     /* get: no value */
	uint64_t corrupt;    /* get: a value refused (also counts in misses) */
	uint64_t publishes;  /* publish: stored */
	uint64_t locks;      /* lock: taken */
	uint64_t lock_waits; /* waits begun */
	uint64_t lock_takeovers; /* lock taken with TIER_LOCK_TAKEOVER */
	uint64_t notifications;  /* waits ended by a notice, the lock gone */
	uint64_t errors;         /* calls ended TIER_ERROR or TIER_DOWN */
	uint64_t timeouts;       /* Redis calls ended TIER_TIMEOUT */
	/* Connections closed because a reply broke the protocol. */
	uint64_t protocol_errors;
	/* get: a value without a valid tag (also counts in corrupt). */
	uint64_t untagged;
	/* Calls ended TIER_SHED: the server's queue was full. */
	uint64_t shed;
};

enum tier_state { TIER_SERVER_DOWN, TIER_SERVER_CONNECTING, TIER_SERVER_UP };

struct tier_server_stats {
	const char *name;          /* canonical URL without password */
	enum tier_state state;     /* of the command connection */
	int subscribed;            /* the subscriber connection is up */
	uint64_t connects;         /* handshakes completed, both connections */
	uint64_t errors, timeouts; /* as in tier_stats, this server's share */
};

/*
 * Parse the URLs and start connecting. NULL with *cause (allocated) set
 * when a URL is wrong or two name the same server.
 */
struct tier *tier_new(
    struct event_base *, const struct tier_config *, char **cause);
/*
 * Close everything; pending callbacks never run. NULL is fine. A host name
 * lookup under way is cancelled and its end, from the loop, frees the last
 * of the tier: run the loop once (EVLOOP_NONBLOCK) before event_base_free.
 */
void tier_free(struct tier *);

/*
 * The time a caller gives a get or a lock: what is left, in milliseconds,
 * of a budget of --redis-timeout that began at started (clock_monotonic()
 * seconds); 0 once it is spent: start no call then.
 */
long tier_budget_left(const struct tier *, double started, double now);

/* Both give up after timeout_ms, at most (and when 0) --redis-timeout. */
void tier_get(
    struct tier *, const char *origin, long timeout_ms, tier_cb, void *arg);
/*
 * Store v under its origin for px_ms (>= 1) and notify waiters; token, when
 * not NULL, is a lock to release in the same pipeline (before the notice).
 */
void tier_publish(struct tier *, const struct tier_value *v, long long px_ms,
    const char *token, tier_cb, void *arg);
/*
 * The previous holder never published: also take a lock that would never
 * expire on its own (no expiry, or longer than lock_ms).
 */
#define TIER_LOCK_TAKEOVER 0x1
void tier_lock(struct tier *, const char *origin, int flags, long timeout_ms,
    tier_cb, void *arg);
/* Release only when token still holds the lock (compare-and-delete). */
void tier_unlock(
    struct tier *, const char *origin, const char *token, tier_cb, void *arg);
/*
 * Until origin's lock is gone (released, expired, or one no robotsd set:
 * no expiry or longer than lock_ms), read with PTTL at once and every
 * poll_ms, or timeout_ms. A notice of origin on the channel only makes
 * the wait read the lock at once (anyone may publish one): TIER_NOTIFIED
 * when a notice came and the lock is gone, TIER_UNLOCKED when it is gone
 * without one.
 */
void tier_wait(
    struct tier *, const char *origin, long timeout_ms, tier_cb, void *arg);
/*
 * Remove origin's value and leave its purge record (tier_value.h) for
 * px_ms: purged_at (ms), which a get reports in purged_at.
 */
void tier_purge(struct tier *, const char *origin, int64_t purged_at,
    long long px_ms, tier_cb, void *arg);

size_t tier_server_of(const struct tier *, const char *origin);
size_t tier_nservers(const struct tier *);
void tier_server_stats(const struct tier *, size_t, struct tier_server_stats *);
const struct tier_stats *tier_stats(const struct tier *);
const char *tier_result_name(enum tier_result);
const char *tier_state_name(enum tier_state);
/* The Redis keys of origin (allocated). */
char *tier_entry_key(const char *origin);
char *tier_lock_key(const char *origin);
char *tier_purge_key(const char *origin);
#define TIER_CHANNEL "robotsd:v1:n"

/*
 * The change feed (feed.h) rides on the same connections: every subscriber
 * connection also listens on TIER_FEED_CHANNEL, whose messages go to cb
 * as they come (untrusted bytes: the feed checks them); tier_feed_publish
 * sends one on origin's server, best effort.
 */
#define TIER_FEED_CHANNEL "robotsd:v1:f"
typedef void (*tier_feed_cb)(void *arg, const char *msg, size_t len);
void tier_set_feed(struct tier *, tier_feed_cb, void *arg);
/* A reload: the lifetime of the locks taken from now (hold_ms, above). */
void tier_set_hold(struct tier *, long hold_ms);
void tier_feed_publish(
    struct tier *, const char *origin, const char *msg, size_t len);

#endif /* ROBOTSD_TIER_H */
