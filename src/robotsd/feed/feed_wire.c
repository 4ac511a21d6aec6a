/*
 * feed_wire.c: what connects the change feed to the cache and the tier
 * (see feed_wire.h).
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "cache/cache.h"
#include "feed/feed.h"
#include "feed/feed_wire.h"
#include "base/log.h"
#ifdef HAVE_REDIS
#include "tier/tier.h"
#endif

#ifdef HAVE_REDIS
/* The tier and the caches, for the fleet's side of the feed. */
static struct wire {
	struct tier *tier;
	struct cache *cache; /* robots.txt's */
	struct cache *tdm;   /* tdmrep.json's, or NULL */
} wire_fleet;                /* one feed per process */

/* feed.h's publisher: the tier's feed channel. */
static void
wire_publish(void *arg, const char *origin, const char *msg, size_t len)
{
	struct wire *w = arg;

	tier_feed_publish(w->tier, origin, msg, len);
}

/*
 * Another instance fetched a new version: load it here unless this
 * instance answers from it already; the tier's copy is taken when it is
 * that change's or later (a millisecond's slack for the times' rounding),
 * else the origin is fetched. A tdmrep.json is loaded only where it is
 * held: it is fetched only for the checks that ask for it.
 */
static int
wire_load(void *arg, const char *origin, unsigned resource, const char *version,
    double at)
{
	struct wire *w = arg;
	int tdm = resource == FEED_TDMREP;
	struct cache *c = tdm ? w->tdm : w->cache;
	const struct cache_entry *e;

	if (c == NULL)
		return -1; /* --tdmrep off */
	e = cache_find(c, origin);
	if (e != NULL && strcmp(e->version, version) == 0)
		return 0;
	return cache_refresh(c, origin, at - 0.001, !tdm);
}

/* A message from the tier's feed channel. */
static void
wire_message(void *arg, const char *msg, size_t len)
{
	feed_message(arg, msg, len);
}
#endif

/* A cache policy as a side of a rule difference. */
static enum ruldiff_state
wire_state(int policy)
{
	switch (policy) {
	case CACHE_RULES:
		return RULDIFF_RULES;
	case CACHE_ALLOW_ALL:
		return RULDIFF_ALLOW_ALL;
	case CACHE_DISALLOW_ALL:
		return RULDIFF_DISALLOW_ALL;
	}
	return RULDIFF_NONE;
}

/*
 * The seam of robots.txt's cache, or of tdmrep.json's (its states, no
 * rules' difference): an origin's version changed here.
 */
static void
wire_changed(const struct cache_change *cc, void *arg)
{
	const struct cache_entry *e = cc->entry;
	const struct cache_kind *k = cc->kind;
	int robots = k == &cache_kind_robots;
	struct feed_change ch = {
		.origin = cc->origin,
		.old_version = cc->old_version,
		.new_version = cc->new_version,
		.at = cc->at,
		.fetched = cc->fetched != NULL,
		.resource = robots ? FEED_ROBOTS : FEED_TDMREP,
	};

	if (robots) {
		ch.state = cache_policy_name(e->policy);
		ch.old.state = cc->old_version != NULL
		                   ? wire_state(cc->old_policy)
		                   : RULDIFF_NONE;
		ch.old.robots = cc->old_robots;
		ch.new.state = wire_state(e->policy);
		ch.new.robots = e->robots;
	} else {
		ch.state = k->version_state(e->policy, cc->new_flags);
		if (cc->old_version != NULL)
			ch.old_state =
			    k->version_state(cc->old_policy, cc->old_flags);
	}
	feed_changed(arg, &ch);
}

void
feed_wire(struct feed *f, struct cache *c, struct cache *tdm, struct tier *t,
    const unsigned char *key)
{
	if (cache_listen(c, wire_changed, f) == -1 ||
	    (tdm != NULL && cache_listen(tdm, wire_changed, f) == -1))
		fatalx("the cache has no room for the change feed");
#ifdef HAVE_REDIS
	if (t != NULL) {
		struct feed_fleet fl = { wire_publish, wire_load, &wire_fleet,
			key };

		wire_fleet.tier = t;
		wire_fleet.cache = c;
		wire_fleet.tdm = tdm;
		feed_set_fleet(f, &fl);
		tier_set_feed(t, wire_message, f);
	}
#else
	(void)t;
	(void)key;
#endif
}
