/*
 * cache_read.c: what the cache tells without changing anything: an entry
 * found without counting, its time left, its validators, the counters,
 * policy names, and every settled entry in LRU order (for the state file).
 */
#include <config.h>

#include <sys/queue.h>

#include <string.h>

#include "cache/cache.h"
#include "cache/cache_int.h"
#include "base/clock.h"

/* Borrowed entry, or NULL; counts nothing and keeps the LRU order. */
const struct cache_entry *
cache_find(struct cache *c, const char *origin)
{
	struct entry *e = cache_lookup(c, origin);

	return e != NULL ? &e->pub : NULL;
}

/* Seconds until the entry is refreshed or retried, never negative. */
double
cache_expires_in(const struct cache *c, const struct cache_entry *pe)
{
	double d = pe->expires_at - clock_now(c->clock);

	return d > 0 ? d : 0;
}

/* An entry's validators (see struct cache_entry), or NULL. */
const char *
cache_entry_etag(const struct cache_entry *e)
{
	return e->validators != NULL && e->validators[0] != '\0' ? e->validators
	                                                         : NULL;
}

const char *
cache_entry_last_modified(const struct cache_entry *e)
{
	const char *lm;

	if (e->validators == NULL)
		return NULL;
	lm = e->validators + strlen(e->validators) + 1;
	return lm[0] != '\0' ? lm : NULL;
}

/* The counters. */
const struct cache_stats *
cache_stats(const struct cache *c)
{
	return &c->stats;
}

/* The fetch metrics (fetchlog.h). */
const struct fetch_stats *
cache_fetch_stats(const struct cache *c)
{
	return &c->fstats;
}

/* A name for a policy, for inspect and logs. */
const char *
cache_policy_name(enum cache_policy p)
{
	switch (p) {
	case CACHE_NONE:
		return "none";
	case CACHE_RULES:
		return "rules";
	case CACHE_ALLOW_ALL:
		return "allow_all";
	case CACHE_DISALLOW_ALL:
		return "disallow_all";
	}
	return "?";
}

/* Every settled entry, least recently used first (state file). */
void
cache_foreach(const struct cache *c, cache_each_cb cb, void *arg)
{
	const struct entry *e;

	TAILQ_FOREACH(e, &c->lru, lru) {
		if (e->pub.policy != CACHE_NONE)
			cb(&e->pub, e->good, arg);
	}
}

void
cache_foreach_fetching(const struct cache *c, cache_each_cb cb, void *arg)
{
	const struct entry *e;

	TAILQ_FOREACH(e, &c->lru, lru) {
		if (e->pub.fetching)
			cb(&e->pub, e->good, arg);
	}
}
