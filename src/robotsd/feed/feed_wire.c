/*
 * feed_wire.c: what connects the change feed to the cache and the tier
 * (see feed_wire.h).
 */
#include <config.h>

#include <stddef.h>

#include "cache/cache.h"
#include "feed/feed.h"
#include "feed/feed_wire.h"
#include "base/log.h"
#ifdef HAVE_REDIS
#include "tier/tier.h"
#endif

#ifdef HAVE_REDIS
/* feed.h's publisher: the tier's feed channel. */
static void
wire_publish(void *arg, const char *origin, const char *msg, size_t len)
{
	tier_feed_publish(arg, origin, msg, len);
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

/* The cache's seam: an origin's version changed here. */
static void
wire_changed(const struct cache_change *cc, void *arg)
{
	const struct cache_entry *e = cc->entry;
	struct feed_change ch = {
		.origin = cc->origin,
		.old_version = cc->old_version,
		.new_version = cc->new_version,
		.at = cc->at,
		.state = cache_policy_name(e->policy),
		.fetched = cc->fetched != NULL,
		.old = { cc->old_version != NULL ? wire_state(cc->old_policy)
		                                 : RULDIFF_NONE,
		    cc->old_robots },
		.new = { wire_state(e->policy), e->robots },
	};

	feed_changed(arg, &ch);
}

void
feed_wire(struct feed *f, struct cache *c, struct tier *t)
{
	if (cache_listen(c, wire_changed, f) == -1)
		fatalx("the cache has no room for the change feed");
#ifdef HAVE_REDIS
	if (t != NULL) {
		feed_set_fleet(f, wire_publish, t);
		tier_set_feed(t, wire_message, f);
	}
#else
	(void)t;
#endif
}
