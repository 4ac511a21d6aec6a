/*
 * shared_value.c: the fleet loader's pure decisions; see shared_value.h
 * and docs/scaling.md. No I/O, no loop, no clock of its own.
 */
#include <config.h>

#include <string.h>

#include "tier/shared_value.h"

_Static_assert(TIER_VALUE_VERSION_HEX == VERSION_HEX, "one version id size");
_Static_assert(TIER_HIST_INVALID == CACHE_VERSION_INVALID, "one flag value");

/* Clock seconds (after 1970) as epoch milliseconds, rounded down. */
int64_t
shared_ms(double seconds)
{
	return (int64_t)(seconds * 1000.0);
}

/* Epoch milliseconds as clock seconds. */
double
shared_secs(int64_t ms)
{
	return (double)ms / 1000.0;
}

/* Whether a value found in the tier may answer checks now. */
int
shared_usable(const struct tier_value *v, int64_t now_ms,
    const struct lifetime_settings *ls)
{
	double fetched = shared_secs(v->fetched_at),
	       expires = shared_secs(v->expires_at),
	       since = shared_secs(v->fail_since),
	       retry = shared_secs(v->next_retry);

	if (v->policy != TIER_POLICY_RULES && v->policy != TIER_POLICY_ALLOW &&
	    v->policy != TIER_POLICY_DISALLOW)
		return 0;
	if (ls == NULL)
		return v->expires_at > now_ms;
	/* From a clock ahead of ours: refetched, so overwritten. */
	if (fetched > shared_secs(now_ms) + LIFETIME_SKEW)
		return 0;
	lifetime_clamp_shared(ls, shared_secs(now_ms), v->fail_streak, &fetched,
	    &expires, &since, &retry);
	return shared_ms(expires) > now_ms;
}

/* A tier policy as the cache's. */
static int
shared_policy(enum tier_policy p)
{
	switch (p) {
	case TIER_POLICY_RULES:
		return CACHE_RULES;
	case TIER_POLICY_ALLOW:
		return CACHE_ALLOW_ALL;
	case TIER_POLICY_DISALLOW:
		return CACHE_DISALLOW_ALL;
	case TIER_POLICY_NONE:
		break;
	}
	return CACHE_NONE;
}

/* Fetched no earlier than since_ms (see shared_value.h). */
int
shared_recent(const struct tier_value *v, int64_t since_ms)
{
	return since_ms <= 0 || v->fetched_at >= since_ms;
}

/* Fetched before the origin's purge (see shared_value.h). */
int
shared_purged(const struct tier_value *v, int64_t purged_ms, int64_t now_ms)
{
	return purged_ms > 0 &&
	       purged_ms <= now_ms + shared_ms(LIFETIME_SKEW) &&
	       v->fetched_at <= purged_ms;
}

/* The lifetime of a purge record. */
long long
shared_purge_px(const struct lifetime_settings *ls)
{
	double hi = ls->retry_max > ls->retry_503_max ? ls->retry_max
	                                              : ls->retry_503_max;
	double keep = 2 * ls->max_ttl > hi ? 2 * ls->max_ttl : hi;

	return (long long)shared_ms(keep + LIFETIME_SKEW);
}

/* A value's history as the cache's versions. */
size_t
shared_versions_of(const struct tier_value *v, int64_t now_ms,
    struct cache_version *out, size_t max)
{
	int64_t ahead = now_ms + shared_ms(LIFETIME_SKEW);
	size_t i, n = 0;

	for (i = 0; i < v->nhist && n < max; i++) {
		const struct tier_hist *h = &v->hist[i];

		if (h->first_seen > ahead)
			continue;
		memcpy(out[n].version, h->version, sizeof(out[n].version));
		out[n].first_seen = shared_secs(h->first_seen);
		out[n].last_seen =
		    shared_secs(h->last_seen > ahead ? ahead : h->last_seen);
		out[n].http_status = h->http_status;
		out[n].flags = h->flags;
		out[n++].policy = shared_policy(h->policy);
	}
	return n;
}

/* See shared_value.h. */
size_t
shared_known_versions(
    const struct tier_value *v, int64_t now_ms, struct cache_version *out)
{
	size_t n = shared_versions_of(v, now_ms, out, TIER_VALUE_MAX_HISTORY);

	if (n > 0 || v->version[0] == '\0' ||
	    v->version_since > now_ms + shared_ms(LIFETIME_SKEW))
		return n;
	memcpy(out[0].version, v->version, sizeof(out[0].version));
	out[0].first_seen = shared_secs(v->version_since);
	out[0].last_seen =
	    shared_secs(v->validated_at > v->version_since ? v->validated_at
	                                                   : v->version_since);
	out[0].http_status = v->http_status;
	out[0].policy = shared_policy(v->policy);
	out[0].flags = 0; /* an older writer's: none known */
	return 1;
}

/* An entry's versions as a value's history. */
size_t
shared_hist_of(const struct cache_entry *e, struct tier_hist *out)
{
	struct cache_version cv[TIER_VALUE_MAX_HISTORY];
	size_t i, n = 0, m = cache_history(e, cv, TIER_VALUE_MAX_HISTORY);

	for (i = 0; i < m; i++) {
		out[n] = (struct tier_hist){
			.first_seen = shared_ms(cv[i].first_seen),
			.last_seen = shared_ms(cv[i].last_seen),
			.http_status = cv[i].http_status,
			.policy = (enum tier_policy)cv[i].policy,
			.flags = cv[i].flags & TIER_HIST_FLAGS,
		};
		memcpy(out[n].version, cv[i].version, sizeof(out[n].version));
		n += tier_hist_ok(out, n);
	}
	return n;
}

/* The cache's view of a value: what it installs. */
void
shared_state_of(const struct tier_value *v, int64_t now_ms,
    struct shared_state *s, struct cache_version *hist)
{
	int good =
	    v->policy == TIER_POLICY_RULES || v->policy == TIER_POLICY_ALLOW;

	*s = (struct shared_state){
		.policy = shared_policy(v->policy),
		.http_status = v->http_status,
		.fetched_at = shared_secs(v->fetched_at),
		.expires_at = shared_secs(v->expires_at),
		.good = good,
		.stale = good && v->fail_streak > 0,
		.truncated = v->truncated,
		.fail_streak = v->fail_streak,
		.fail_since = shared_secs(v->fail_since),
		.next_retry = shared_secs(v->next_retry),
		.final_url = v->final_url,
		.last_error = v->last_error,
		.body = v->body != NULL ? v->body : "",
		.body_len = v->body != NULL ? v->body_len : 0,
		.version = v->version[0] != '\0' ? v->version : NULL,
		.version_since = shared_secs(v->version_since),
		.validated_at = shared_secs(v->validated_at),
		.etag = v->etag,
		.last_modified = v->last_modified,
		/* one a later writer added: as none kept */
		.cause = v->fail_streak > 0 && v->cause < CAUSE_COUNT
		             ? v->cause
		             : CAUSE_NONE,
		.versions = hist,
		.nversions =
		    shared_versions_of(v, now_ms, hist, TIER_VALUE_MAX_HISTORY),
	};
}

/* The good copy of a value for a failing origin, from prev; -1: none. */
static int
shared_stale_copy(const struct tier_value *prev, struct tier_value *v)
{
	if (v->policy == TIER_POLICY_RULES) {
		if (prev == NULL || prev->policy != TIER_POLICY_RULES)
			return -1;
		v->body = prev->body;
		v->body_len = prev->body_len;
		v->truncated = prev->truncated;
		v->final_url = prev->final_url;
	}
	v->stale_until = v->next_retry;
	if (prev != NULL && prev->policy == v->policy &&
	    prev->stale_until > v->stale_until)
		v->stale_until = prev->stale_until;
	return 0;
}

/* The value that publishes an entry settled by a fetch here. */
int
shared_value_of(const struct cache_entry *e, int good,
    const struct fetch_result *r, const struct tier_value *prev,
    double retry_after, struct tier_value *v)
{
	int failing = e->fail_streak > 0;

	*v = (struct tier_value){
		.origin = e->origin,
		.policy = TIER_POLICY_DISALLOW,
		.http_status = e->http_status,
		.fetched_at = shared_ms(e->fetched_at),
		.expires_at = shared_ms(e->expires_at),
		.fail_streak = e->fail_streak,
		.fail_since = failing ? shared_ms(e->fail_since) : 0,
		.next_retry = failing ? shared_ms(e->next_retry) : 0,
		.retry_after =
		    retry_after >= 0 ? (int64_t)(retry_after * 1000.0) : 0,
		.final_url = e->final_url,
		.last_error = e->last_error,
		.version_since = shared_ms(e->version_since),
		.validated_at = shared_ms(e->validated_at),
		.etag = (char *)(uintptr_t)cache_entry_etag(e),
		.last_modified =
		    (char *)(uintptr_t)cache_entry_last_modified(e),
	};
	memcpy(v->version, e->version, sizeof(v->version));
	v->cause = failing ? e->cause : CAUSE_NONE;
	if (!good) /* the reader decides on the 30-day allowance itself */
		return 0;
	v->policy =
	    e->policy == CACHE_RULES ? TIER_POLICY_RULES : TIER_POLICY_ALLOW;
	if (failing)
		return shared_stale_copy(prev, v);
	v->stale_until = v->expires_at + (v->expires_at - v->fetched_at);
	if (v->policy == TIER_POLICY_RULES && r->http_status == 304) {
		/* revalidated: the body is the tier's copy of that version */
		if (prev == NULL || prev->policy != TIER_POLICY_RULES ||
		    e->version[0] == '\0' ||
		    strcmp(prev->version, e->version) != 0)
			return -1;
		v->body = prev->body;
		v->body_len = prev->body_len;
		v->truncated = prev->truncated;
		if (v->final_url == NULL)
			v->final_url = prev->final_url;
	} else if (v->policy == TIER_POLICY_RULES) {
		v->body = (char *)(uintptr_t)r->body;
		v->body_len = r->body_len;
		v->truncated = e->truncated;
	}
	return 0;
}

/* The Redis expiry of a value published at now_ms. */
long long
shared_px(const struct tier_value *v, int64_t now_ms)
{
	int64_t until =
	    v->policy == TIER_POLICY_DISALLOW ? v->next_retry : v->stale_until;

	return until - now_ms >= 1 ? (long long)(until - now_ms) : 1;
}
