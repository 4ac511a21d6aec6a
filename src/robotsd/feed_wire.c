/*
 * feed_wire.c: what connects the change feed to the cache and the tier
 * (see feed_wire.h).
 */
#include <config.h>

#include <stddef.h>

#include "cache.h"
#include "feed.h"
#include "feed_wire.h"
#include "log.h"
#ifdef HAVE_REDIS
#include "tier.h"
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

void
feed_wire(struct feed *f, struct cache *c, struct tier *t)
{
	(void)c;
#ifdef HAVE_REDIS
	if (t != NULL) {
		feed_set_fleet(f, wire_publish, t);
		tier_set_feed(t, wire_message, f);
	}
#else
	(void)t;
#endif
}
