/*
 * cache_apply.c: what an outcome makes of a cache entry: a fetch applied
 * by the contract's policy table (rules, allow all, revalidated, failed,
 * the retry schedule and the stale copy), a state installed from the
 * fleet's shared tier or the state file, and a failing entry falling back
 * to allow all once its copy is too old. The rules themselves are
 * lifetime.c's pure functions; cache.c owns the entries, their index, LRU
 * and fetches, and calls in here when an outcome arrives.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "base/clock.h"
#include "cache/fetchlog.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "cache/version.h"

/* robots.txt's compile(): its ruleset. */
static void *
kind_robots_compile(const char *body, size_t len)
{
	return robots_parse(body, len);
}

/* robots.txt's ref(). */
static void *
kind_robots_ref(void *doc)
{
	return robots_ref(doc);
}

/* robots.txt's unref(). */
static void
kind_robots_unref(void *doc)
{
	robots_unref(doc);
}

const struct cache_kind cache_kind_robots = { "robots.txt", "/robots.txt",
	kind_robots_compile, kind_robots_ref, kind_robots_unref, NULL, NULL, 0,
	NULL, NULL, NULL };

/* Drop the doc e holds, of c's kind. */
static void
entry_drop_doc(const struct cache *c, struct entry *e)
{
	if (e->pub.doc != NULL && c->kind->unref != NULL)
		c->kind->unref(e->pub.doc);
	e->pub.doc = NULL;
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
    void *rb, double now)
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
	entry_drop_doc(c, e);
	e->pub.doc = rb;
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
 * to fall back on is allowed (RFC 9309 section 2.3.1.4); robots.txt's rule
 * only (cache_kind.keep_unreachable).
 */
void
cache_apply_fallback(const struct cache *c, struct entry *e, double now)
{
	if (!e->good && e->pub.fail_streak > 0 && !c->kind->keep_unreachable &&
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
	cache_apply_fallback(c, e, now);
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
		.error = e->pub.last_error,
		.resource =
		    c->kind != &cache_kind_robots ? c->kind->name : NULL };

	n.outcome = n.streak > 0 ? "unreachable"
	            : c->kind->state_name != NULL
	                ? c->kind->state_name(&e->pub)
	                : cache_policy_name(e->pub.policy);
	fetchlog_note(&c->fstats, &n);
}

/* Apply a fetch outcome to an entry: the contract's policy table. */
void
cache_apply_fetch(
    struct cache *c, struct entry *e, const struct fetch_result *r)
{
	double now = clock_now(c->clock), since = e->pub.fail_since;
	unsigned streak = e->pub.fail_streak;
	int st = r->http_status;
	void *rb;
	char why[256];
	enum lifetime_class lc = lifetime_classify_refresh(r->error == FETCH_OK,
	    r->error == FETCH_REDIRECTS, st,
	    e->flight->conditional && e->good && e->pub.doc != NULL);

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
		if ((rb = c->kind->compile(r->body, r->body_len)) != NULL)
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
	entry_note(c, e, r, streak, since);
}

/*
 * The cause of a settled state: its own, or for a failure kept without
 * one (a state file or a shared value written before causes were kept)
 * what its HTTP status says, else
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
int
cache_apply_settle(const struct cache *c, struct entry *e,
    const struct cache_entry *src, int good)
{
	void *doc = src->doc; /* src may be e's own */

	entry_drop_doc(c, e);
	e->pub.doc = doc;
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
	e->pub.cause = entry_cause_kept(
	    &(struct cache_entry){ .fail_streak = s->fail_streak,
	        .http_status = s->http_status,
	        .cause = s->cause });
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
void
cache_apply_shared(
    struct cache *c, struct entry *e, const struct shared_state *s)
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
		.cause = s->cause,
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
	    (st.doc = c->kind->compile(s->body, s->body_len)) == NULL) {
		struct fetch_result r = { .error = FETCH_NETWORK };

		entry_failed(c, e, &r, "out of memory", clock_now(c->clock));
		return;
	}
	st.body_bytes = st.doc != NULL ? (uint32_t)s->body_len : 0;
	st.truncated = st.doc != NULL ? s->truncated : 0;
	(void)cache_apply_settle(c, e, &st, s->good);
	if (st.doc != NULL)
		entry_set_validators(e, s->etag, s->last_modified);
}
