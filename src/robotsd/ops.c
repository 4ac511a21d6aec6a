/*
 * ops.c: request -> answer for everything but check (verdict.c): inspect,
 * purge, stats, ping and the tests' clock. These are rare, so they build
 * their answers as jansson objects.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "cache.h"
#include "verdict.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "ops.h"
#include "proto.h"
#include "robotsd.h"
#include "server.h"

/* A number of seconds as an integer, or null when negative. */
static json_t *
ops_seconds(double s)
{
	return s < 0 ? json_null() : json_integer((json_int_t)llround(s));
}

/* The user-agent groups of a ruleset, for inspect. */
static json_t *
ops_groups(const struct robots *r)
{
	json_t *groups = json_array(), *g, *agents;
	size_t i, j, len;
	const char *a;
	double cd;

	for (i = 0; r != NULL && i < robots_group_count(r); i++) {
		agents = json_array();
		for (j = 0; j < robots_group_agent_count(r, i); j++) {
			a = robots_group_agent(r, i, j, &len);
			json_array_append_new(agents, proto_string(a, len));
		}
		cd = robots_group_crawl_delay(r, i);
		g = json_pack("{s:o, s:I, s:o}", "agents", agents, "rules",
		    (json_int_t)robots_group_rule_count(r, i), "crawl_delay",
		    cd >= 0 ? proto_real(cd) : json_null());
		json_array_append_new(groups, g);
	}
	return groups;
}

/* The sitemaps of a ruleset, for inspect. */
static json_t *
ops_sitemaps(const struct robots *r)
{
	json_t *a = json_array();
	const char *s;
	size_t i, len;

	for (i = 0; r != NULL && i < robots_sitemap_count(r); i++) {
		s = robots_sitemap(r, i, &len);
		json_array_append_new(a, proto_string(s, len));
	}
	return a;
}

/* A time in clock seconds, or null when unset (0). */
static json_t *
ops_time(double t)
{
	return t > 0 ? proto_real(floor(t * 1000) / 1000) : json_null();
}

/* The failure state of an entry, for inspect. */
static json_t *
ops_retry(const struct cache_entry *e)
{
	return json_pack("{s:I, s:o, s:o, s:o}", "fail_streak",
	    (json_int_t)e->fail_streak, "failing_since",
	    e->fail_streak > 0 ? ops_time(e->fail_since) : json_null(),
	    "next_retry",
	    e->fail_streak > 0 ? ops_time(e->next_retry) : json_null(),
	    "last_error",
	    e->last_error != NULL
	        ? proto_string(e->last_error, strlen(e->last_error))
	        : json_null());
}

/* Normalize the origin a request names; an error answer on failure. */
static char *
ops_origin(struct conn *c, struct request *req)
{
	enum url_err ue;
	char *origin;

	if ((origin = url_origin(req->origin, req->origin_len, &ue)) == NULL)
		conn_reply(c, proto_error(req->id, proto_url_err(ue),
		                  url_err_message(ue)));
	return origin;
}

/* inspect: everything the cache knows about one origin. */
static void
ops_inspect(struct robotsd *rd, struct conn *c, struct request *req)
{
	const struct cache_entry *e;
	json_t *o;
	char *origin;

	if ((origin = ops_origin(c, req)) == NULL)
		return;
	if ((e = cache_find(rd->cache, origin)) == NULL) {
		conn_reply(c, proto_error(req->id, PE_NOT_CACHED,
		                  "the origin is not in the cache"));
		free(origin);
		return;
	}
	o = proto_ok(req->id);
	json_object_set_new(o, "origin", json_string(origin));
	json_object_set_new(o, "state",
	    json_string(e->policy == CACHE_NONE
	                    ? "pending"
	                    : cache_policy_name(e->policy)));
	json_object_set_new(o, "http_status",
	    e->http_status > 0 ? json_integer(e->http_status) : json_null());
	json_object_set_new(o, "fetched_at", ops_time(e->fetched_at));
	json_object_set_new(o, "expires_at", ops_time(e->expires_at));
	json_object_set_new(o, "expires_in",
	    e->policy == CACHE_NONE
	        ? json_null()
	        : ops_seconds(cache_expires_in(rd->cache, e)));
	json_object_set_new(o, "body_bytes", json_integer(e->body_bytes));
	json_object_set_new(o, "truncated", json_boolean(e->truncated));
	json_object_set_new(o, "final_url",
	    e->final_url != NULL
	        ? proto_string(e->final_url, strlen(e->final_url))
	        : json_null());
	json_object_set_new(o, "groups", ops_groups(e->robots));
	json_object_set_new(o, "sitemaps", ops_sitemaps(e->robots));
	json_object_set_new(o, "retry", ops_retry(e));
	json_object_set_new(o, "fetching", json_boolean(e->fetching));
	/* Checks are answered from the old copy while a refresh runs too. */
	json_object_set_new(o, "stale",
	    json_boolean(e->stale || (e->fetching && e->policy != CACHE_NONE)));
	conn_reply(c, o);
	free(origin);
}

/* purge: one origin or all of them. */
static void
ops_purge(struct robotsd *rd, struct conn *c, struct request *req)
{
	size_t n;
	char *origin;
	json_t *o;

	if (req->all)
		n = cache_purge_all(rd->cache);
	else {
		if ((origin = ops_origin(c, req)) == NULL)
			return;
		n = cache_purge(rd->cache, origin);
		free(origin);
	}
	o = proto_ok(req->id);
	json_object_set_new(o, "purged", json_integer((json_int_t)n));
	conn_reply(c, o);
}

/* stats: the counters of metrics_collect(), by their stats names. */
static void
ops_stats(struct robotsd *rd, struct conn *c, struct request *req)
{
	struct metric v[METRICS_MAX];
	json_t *o = proto_ok(req->id), *st = json_object();
	size_t i, n = metrics_collect(rd, v);

	for (i = 0; i < n; i++)
		json_object_set_new(
		    st, v[i].name, json_integer((json_int_t)v[i].value));
	json_object_set_new(o, "stats", st);
	conn_reply(c, o);
}

/* Answer req on c; see ops.h. */
void
ops_dispatch(struct robotsd *rd, struct conn *c, struct request *req)
{
	json_t *o;

	switch (req->op) {
	case OP_CHECK:
		verdict_op(rd, c, req);
		break;
	case OP_INSPECT:
		ops_inspect(rd, c, req);
		break;
	case OP_PURGE:
		ops_purge(rd, c, req);
		break;
	case OP_STATS:
		ops_stats(rd, c, req);
		break;
	case OP_PING:
		o = proto_ok(req->id);
		json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
		conn_reply(c, o);
		break;
	case OP_CLOCK:
		clock_advance(&rd->clock, req->advance);
		o = proto_ok(req->id);
		json_object_set_new(
		    o, "now", proto_real(clock_now(&rd->clock)));
		conn_reply(c, o);
		break;
	}
	proto_request_clear(req);
}
