/*
 * shared_value.h: the fleet loader's pure decisions (shared.c), apart so
 * that the unit tests hold them in tables: whether a value found in the
 * shared tier may be installed, the cache entry a fetch here leaves as a
 * tier_value, and the Redis expiry of what is published. No I/O, no loop.
 *
 * Time: a value's times are the cache clock's seconds (clock_now: the wall
 * clock plus the test clock's offset) in epoch milliseconds. So tests that
 * move the clock of every instance by the same amount move the shared
 * lifetimes the same way everywhere; in production the offset is 0 and the
 * values are plain Unix epoch milliseconds. A Redis expiry (PX) is real
 * time: computed from the same clock, it only differs under a test clock.
 */
#ifndef ROBOTSD_SHARED_VALUE_H
#define ROBOTSD_SHARED_VALUE_H

#include <stdint.h>

#include "cache/cache.h"
#include "cache/lifetime.h"
#include "iface/outcome.h"
#include "tier/tier_value.h"

/* Clock seconds to a value's epoch milliseconds and back. */
int64_t shared_ms(double seconds);
double shared_secs(int64_t ms);

/*
 * 1 when v may answer checks at now_ms: a settled policy and expires_at
 * still ahead (a fresh copy, or a failure state whose next retry is
 * ahead). Anything else is refetched (and v kept as the previous copy).
 * With ls (this instance's settings), v's times count as
 * lifetime_clamp_shared() bounds them, and a value fetched more than
 * LIFETIME_SKEW ahead of now_ms is never usable.
 */
int shared_usable(const struct tier_value *v, int64_t now_ms,
    const struct lifetime_settings *ls);

/*
 * 1 when v was fetched at or after since_ms (0: any v): recent enough to
 * stand for a change another instance told of at since_ms.
 */
int shared_recent(const struct tier_value *v, int64_t since_ms);

/*
 * 1 when v was fetched before the origin's purge at purged_ms (0: none),
 * or in its millisecond (a fetch and the purge after it may share one):
 * a value written again after the purge, refused (neither installed nor
 * kept as the previous copy). A purge record more than LIFETIME_SKEW
 * ahead of now_ms counts as none: it would refuse every value until then.
 */
int shared_purged(
    const struct tier_value *v, int64_t purged_ms, int64_t now_ms);

/*
 * How long (ms) a purge's record is kept: as long as a value fetched
 * before it may be taken or kept by an instance with settings ls (twice
 * max-ttl, or the longest retry), and LIFETIME_SKEW more.
 */
long long shared_purge_px(const struct lifetime_settings *ls);

/*
 * The cache's view of v (strings borrowed from v). Its versions (v's
 * history) go into hist (room for TIER_VALUE_MAX_HISTORY), as
 * shared_versions_of() makes them at now_ms.
 */
void shared_state_of(const struct tier_value *v, int64_t now_ms,
    struct shared_state *s, struct cache_version *hist);

/*
 * v's history as the cache's versions, into out (room for max), newest
 * first; how many. A version first seen more than LIFETIME_SKEW after
 * now_ms is dropped (a writer's clock ahead of ours: it would sort first
 * for ever), a last_seen past that is brought back to it.
 */
size_t shared_versions_of(const struct tier_value *v, int64_t now_ms,
    struct cache_version *out, size_t max);

/*
 * The versions v tells of, for an instance that does not hold the origin
 * (the history op), into out (room for TIER_VALUE_MAX_HISTORY): its
 * history as shared_versions_of() gives it, or, from a writer that kept
 * none, v's own version (none when it was first seen more than
 * LIFETIME_SKEW after now_ms); how many.
 */
size_t shared_known_versions(
    const struct tier_value *v, int64_t now_ms, struct cache_version *out);

/*
 * The versions entry e holds (cache_history()) as a value's history, into
 * out (room for TIER_VALUE_MAX_HISTORY), newest first; how many. One
 * the value format cannot hold (no policy, a time before 1970) is left out.
 */
size_t shared_hist_of(const struct cache_entry *e, struct tier_hist *out);

/*
 * The value that publishes entry e, settled here by fetch r (good: e holds
 * a good copy), into *v (strings borrowed from e, r and prev). prev is the
 * origin's previous value in the tier or NULL: a good copy that now fails
 * keeps serving prev's body, which only prev holds; so does a copy r
 * revalidated (a 304 has no body), when prev is that same version. -1 when
 * nothing truthful can be published (a failing rules copy whose body is
 * gone, a revalidated copy whose version the tier does not hold).
 */
int shared_value_of(const struct cache_entry *e, int good,
    const struct fetch_result *r, const struct tier_value *prev,
    double retry_after, struct tier_value *v);

/*
 * The Redis expiry (ms, >= 1) of v published at now_ms: a good copy until
 * stale_until (its expiry plus its lifetime once more, in which a failing
 * origin's copy is still served), a failure state until its next retry.
 */
long long shared_px(const struct tier_value *v, int64_t now_ms);

#endif /* ROBOTSD_SHARED_VALUE_H */
