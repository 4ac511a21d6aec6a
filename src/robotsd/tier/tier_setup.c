/*
 * tier_setup.c: the shared tier's making and unmaking (its settings, its
 * servers from the --redis URLs, its hash ring, its connections started)
 * and what it tells about itself: names, counters, a miss's budget.
 * The calls themselves, and the keys they name, are tier.c's; this file
 * reaches them only through the hooks it sets and tier_free (the one call
 * down, when tier_new fails), and tier.c calls nothing here.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/event.h>

#include "tier/tier_int.h"
#include "tier/tier_ring.h"
#include "tier/tier_tls.h"
#include "base/xmalloc.h"

const char *
tier_state_name(enum tier_state s)
{
	return s == TIER_SERVER_UP           ? "up"
	       : s == TIER_SERVER_CONNECTING ? "connecting"
	                                     : "down";
}

long
tier_budget_left(const struct tier *t, double started, double now)
{
	double left = t->cf.timeout_ms - (now - started) * 1000;

	if (left <= 0)
		return 0;
	return left < t->cf.timeout_ms ? (long)left + (left > (long)left)
	                               : t->cf.timeout_ms;
}

void
tier_set_feed(struct tier *t, tier_feed_cb cb, void *arg)
{
	t->feed_cb = cb;
	t->feed_arg = arg;
}

void
tier_set_hold(struct tier *t, long hold_ms)
{
	t->cf.hold_ms =
	    hold_ms > 0 && hold_ms <= t->cf.lock_ms ? hold_ms : t->cf.lock_ms;
}

static void
config_defaults(struct tier_config *cf)
{
	if (cf->timeout_ms <= 0)
		cf->timeout_ms = 250;
	if (cf->lock_ms <= 0)
		cf->lock_ms = 40000;
	if (cf->hold_ms <= 0 || cf->hold_ms > cf->lock_ms)
		cf->hold_ms = cf->lock_ms;
	if (cf->poll_ms <= 0)
		cf->poll_ms = 1000;
	if (cf->reconnect_min_ms <= 0)
		cf->reconnect_min_ms = 100;
	if (cf->max_inflight == 0)
		cf->max_inflight = TIER_MAX_INFLIGHT;
	if (cf->max_queued == 0)
		cf->max_queued = TIER_MAX_QUEUED;
	if (cf->reconnect_max_ms < cf->reconnect_min_ms)
		cf->reconnect_max_ms =
		    cf->reconnect_min_ms > 5000 ? cf->reconnect_min_ms : 5000;
}

/* Parse every URL into t->servers; -1 with *cause on the first bad one. */
static int
servers_parse(struct tier *t, char **cause)
{
	const char *err;
	size_t i, j;

	t->servers = xcalloc(t->cf.nurls, sizeof(*t->servers));
	for (i = 0; i < t->cf.nurls; i++, t->nservers++) {
		if (tier_url_parse(t->cf.urls[i], &t->servers[i].url, &err) ==
		    -1) {
			char *m = tier_url_masked(t->cf.urls[i]);

			xasprintf(cause, "--redis %s: %s",
			    m != NULL ? m : "(URL)", err);
			free(m);
			return -1;
		}
		if (t->servers[i].url.password == NULL &&
		    t->cf.password != NULL)
			t->servers[i].url.password = xstrdup(t->cf.password);
		for (j = 0; j < i; j++)
			if (strcmp(t->servers[j].url.name,
			        t->servers[i].url.name) == 0) {
				xasprintf(cause, "--redis %s: given twice",
				    t->servers[i].url.name);
				t->nservers++;
				return -1;
			}
	}
	return 0;
}

/* The TLS context, when a URL is rediss://: its files are read now. */
static int
tier_setup_tls(struct tier *t, const struct tier_config *cf, char **cause)
{
	struct tier_tls_config tc = {
		.ca_file = cf->tls_ca_file,
		.cert_file = cf->tls_cert_file,
		.key_file = cf->tls_key_file,
		.server_name = cf->tls_server_name,
	};
	size_t i;

	for (i = 0; i < t->nservers; i++)
		if (t->servers[i].url.tls)
			break;
	t->cf.tls_ca_file = t->cf.tls_cert_file = t->cf.tls_key_file = NULL;
	t->cf.tls_server_name = NULL; /* the caller's copies may go */
	if (i == t->nservers)
		return 0;
	return (t->tls = tier_tls_new(&tc, cause)) != NULL ? 0 : -1;
}

struct tier *
tier_new(struct event_base *base, const struct tier_config *cf, char **cause)
{
	struct tier *t = xcalloc(1, sizeof(*t));
	const char **names;
	size_t i;

	t->base = base;
	t->hooks = (struct tier_conn_hooks){ .written = tier_calls_written,
		.lost = tier_server_lost,
		.notified = tier_notified,
		.destroy = tier_destroy };
	t->cf = *cf;
	if (cf->key != NULL) {
		memcpy(t->key, cf->key, TIER_KEY_LEN);
		t->keyed = 1;
	}
	t->cf.key = NULL; /* the caller's copy may go */
	config_defaults(&t->cf);
	TAILQ_INIT(&t->calls);
	TAILQ_INIT(&t->holds);
	for (i = 0; i < TIER_WAIT_BUCKETS; i++)
		TAILQ_INIT(&t->waits[i]);
	if (cf->nurls == 0 || servers_parse(t, cause) == -1) {
		if (cf->nurls == 0)
			xasprintf(cause, "no Redis server given");
		t->freeing = 1;
		tier_free(t);
		return NULL;
	}
	t->cf.password = NULL; /* copied into each URL that needed it */
	if (tier_setup_tls(t, cf, cause) == -1) {
		t->freeing = 1;
		tier_free(t);
		return NULL;
	}
	/* Host names are resolved without blocking the loop. */
	t->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
	                                  EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	names = xcalloc(t->nservers, sizeof(*names));
	for (i = 0; i < t->nservers; i++)
		names[i] = t->servers[i].url.name;
	if ((t->ring = tier_ring_new(names, t->nservers)) == NULL)
		abort(); /* out of memory, as xmalloc would */
	free(names);
	for (i = 0; i < t->nservers; i++) {
		struct tier_server *srv = &t->servers[i];

		srv->t = t;
		srv->idx = i;
		srv->st.name = srv->url.name;
		TAILQ_INIT(&srv->queue);
		tier_conn_init(srv, &srv->cmd, 0);
		tier_conn_init(srv, &srv->sub, 1);
		tier_conn_start(&srv->cmd);
		tier_conn_start(&srv->sub);
	}
	return t;
}

void
tier_destroy(struct tier *t)
{
	size_t i;

	if (t->dns != NULL)
		evdns_base_free(t->dns, 0);
	for (i = 0; i < t->nservers; i++)
		tier_url_clear(&t->servers[i].url);
	free(t->servers);
	tier_ring_free(t->ring);
	tier_tls_free(t->tls);
	free(t);
}

size_t
tier_server_of(const struct tier *t, const char *origin)
{
	return tier_ring_lookup(t->ring, origin);
}

size_t
tier_nservers(const struct tier *t)
{
	return t->nservers;
}

void
tier_server_stats(const struct tier *t, size_t i, struct tier_server_stats *out)
{
	*out = t->servers[i].st;
}

const struct tier_stats *
tier_stats(const struct tier *t)
{
	return &t->stats;
}
