/*
 * ops.c: request -> answer. A check parses each URL, asks the cache, and
 * either answers at once (hit, stale, error) or parks an ops_pending on the
 * connection until every fetch it waits on has ended or its deadline
 * passes. Owns the pendings; the connection only lists them.
 */
#include <config.h>

#include <sys/queue.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "robots.h"
#include "cache.h"
#include "config.h"
#include "fetch.h"
#include "log.h"
#include "metrics.h"
#include "ops.h"
#include "proto.h"
#include "robotsd.h"
#include "server.h"
#include "xmalloc.h"

/* A waiting check gives up after this many fetch timeouts (plus slack). */
#define OPS_WAIT_TIMEOUTS 2
#define OPS_WAIT_SLACK 5

struct ops_item {
	struct ops_pending *p;
	struct url u;
	int parsed;            /* u holds a URL */
	json_t *answer;        /* the item's answer once known */
	struct cache_waiter w; /* while waiting on a fetch */
};

struct ops_pending {
	TAILQ_ENTRY(ops_pending) link;
	struct robotsd *rd;
	struct conn *conn;
	json_t *id;
	json_t *urls; /* a batch's URLs, for echoing; NULL for one URL */
	char *agent;
	size_t agent_len;
	size_t n, left;
	struct event *timer;
	struct ops_item items[];
};

static void ops_pending_free(struct ops_pending *);

/* A number of seconds as an integer, or null when negative. */
static json_t *
ops_seconds(double s)
{
	return s < 0 ? json_null() : json_integer((json_int_t)llround(s));
}

/* The deciding rule as {"directive":..,"pattern":..,"line":..}. */
static json_t *
ops_rule(const struct robots_rule *r)
{
	return json_pack("{s:s, s:o, s:I}", "directive",
	    robots_directive_name(r->directive), "pattern",
	    proto_string(r->pattern, r->pattern_len), "line",
	    (json_int_t)r->line);
}

/* Fill o with the verdict for u from entry e; source says where from. */
static void
ops_verdict(struct robotsd *rd, json_t *o, const struct url *u,
    const char *agent, size_t agent_len, const struct cache_entry *e,
    const char *source)
{
	struct robots_verdict v = { .allowed = 1, .crawl_delay = -1 };
	const char *reason;

	if (e->policy == CACHE_RULES) {
		robots_check(
		    e->robots, agent, agent_len, u->path, u->path_len, &v);
		reason = robots_reason_name(v.reason);
	} else if (e->policy == CACHE_DISALLOW_ALL) {
		v.allowed = 0;
		reason = "unreachable";
	} else
		reason = "unavailable";
	json_object_set_new(o, "allowed", json_boolean(v.allowed));
	json_object_set_new(o, "origin", json_string(u->origin));
	json_object_set_new(o, "source", json_string(source));
	json_object_set_new(o, "reason", json_string(reason));
	json_object_set_new(o, "http_status",
	    e->http_status > 0 ? json_integer(e->http_status) : json_null());
	json_object_set_new(o, "rule",
	    e->policy == CACHE_RULES && v.reason == ROBOTS_REASON_RULE
	        ? ops_rule(&v.rule)
	        : json_null());
	json_object_set_new(o, "crawl_delay",
	    v.crawl_delay >= 0 ? json_real(v.crawl_delay) : json_null());
	json_object_set_new(
	    o, "expires_in", ops_seconds(cache_expires_in(rd->cache, e)));
}

/* The answer for the URL /robots.txt itself: always allowed, no fetch. */
static void
ops_robots_txt(json_t *o, const struct url *u)
{
	json_object_set_new(o, "allowed", json_true());
	json_object_set_new(o, "origin", json_string(u->origin));
	json_object_set_new(o, "source", json_string("cache"));
	json_object_set_new(o, "reason", json_string("robots_txt"));
	json_object_set_new(o, "http_status", json_null());
	json_object_set_new(o, "rule", json_null());
	json_object_set_new(o, "crawl_delay", json_null());
	json_object_set_new(o, "expires_in", json_null());
}

/* The error of a URL that url_parse() refused. */
static enum proto_err
ops_url_err(enum url_err e)
{
	switch (e) {
	case URL_OK:
		return PE_NONE;
	case URL_BAD:
		return PE_BAD_URL;
	case URL_UNSUPPORTED_SCHEME:
		return PE_UNSUPPORTED_SCHEME;
	case URL_NOMEM:
		break;
	}
	return PE_INTERNAL;
}

/* The object an item's answer goes in: the reply itself, or a batch row. */
static json_t *
ops_item_object(struct ops_pending *p, size_t i, int ok)
{
	json_t *o;

	if (p->urls == NULL)
		return ok ? proto_ok(p->id) : NULL;
	o = json_object();
	json_object_set(o, "url", json_array_get(p->urls, i));
	json_object_set_new(o, "ok", json_boolean(ok));
	return o;
}

/* Set an item's answer to an error. */
static void
ops_item_error(
    struct ops_pending *p, size_t i, enum proto_err e, const char *msg)
{
	json_t *o = ops_item_object(p, i, 0);

	if (o == NULL) {
		p->items[i].answer = proto_error(p->id, e, msg);
		return;
	}
	json_object_set_new(o, "error",
	    json_pack("{s:s, s:s}", "code", proto_err_code(e), "message", msg));
	p->items[i].answer = o;
}

/* Set an item's answer from a cache entry. */
static void
ops_item_entry(struct ops_pending *p, size_t i, const struct cache_entry *e,
    const char *source)
{
	json_t *o = ops_item_object(p, i, 1);

	ops_verdict(
	    p->rd, o, &p->items[i].u, p->agent, p->agent_len, e, source);
	p->items[i].answer = o;
}

/* Build and send the whole answer; frees the pending. */
static void
ops_finish(struct ops_pending *p)
{
	struct conn *c = p->conn;
	json_t *o, *results;
	size_t i;

	if (p->urls == NULL) {
		o = p->items[0].answer;
		p->items[0].answer = NULL;
	} else {
		o = proto_ok(p->id);
		results = json_array();
		for (i = 0; i < p->n; i++) {
			json_array_append_new(results, p->items[i].answer);
			p->items[i].answer = NULL;
		}
		json_object_set_new(o, "results", results);
	}
	if (p->timer != NULL) {
		TAILQ_REMOVE(conn_pending(c), p, link);
		conn_reply(c, o);
		conn_pending_done(c);
	} else
		conn_reply(c, o);
	ops_pending_free(p);
}

/* Release a pending check and everything its items hold. */
static void
ops_pending_free(struct ops_pending *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		cache_waiter_cancel(&p->items[i].w);
		if (p->items[i].parsed)
			url_clear(&p->items[i].u);
		json_decref(p->items[i].answer);
	}
	if (p->timer != NULL)
		event_free(p->timer);
	json_decref(p->id);
	json_decref(p->urls);
	free(p->agent);
	free(p);
}

/* A fetch an item waited on ended: answer it from the fresh entry. */
static void
ops_wait_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct ops_item *it = w->arg;
	struct ops_pending *p = it->p;

	ops_item_entry(p, (size_t)(it - p->items), e, "fetched");
	if (--p->left == 0)
		ops_finish(p);
}

/* A waiting check ran out of time: the items still waiting time out. */
static void
ops_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ops_pending *p = arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < p->n; i++) {
		if (p->items[i].answer != NULL)
			continue;
		cache_waiter_cancel(&p->items[i].w);
		ops_item_error(p, i, PE_TIMEOUT,
		    "the robots.txt fetch did not end in time");
	}
	p->left = 0;
	ops_finish(p);
}

/* Ask the cache about one item; sets its answer unless it must wait. */
static void
ops_check_item(
    struct ops_pending *p, size_t i, const char *url, size_t len, int wait)
{
	struct ops_item *it = &p->items[i];
	const struct cache_entry *e;
	enum url_err ue;
	char buf[512], *robots_url = buf;

	it->p = p;
	if ((ue = url_parse(url, len, &it->u)) != URL_OK) {
		ops_item_error(p, i, ops_url_err(ue), url_err_message(ue));
		return;
	}
	it->parsed = 1;
	if (strcmp(it->u.path, "/robots.txt") == 0) {
		it->answer = ops_item_object(p, i, 1);
		ops_robots_txt(it->answer, &it->u);
		return;
	}
	if ((size_t)snprintf(buf, sizeof(buf), "%s/robots.txt", it->u.origin) >=
	    sizeof(buf))
		xasprintf(&robots_url, "%s/robots.txt", it->u.origin);
	it->w.cb = ops_wait_cb;
	it->w.arg = it;
	switch (cache_check(
	    p->rd->cache, it->u.origin, robots_url, wait, &it->w, &e)) {
	case CACHE_HIT:
		ops_item_entry(p, i, e, "cache");
		break;
	case CACHE_STALE:
		ops_item_entry(p, i, e, "stale");
		break;
	case CACHE_WAIT:
		p->left++;
		break;
	case CACHE_PENDING:
		it->answer = ops_item_object(p, i, 1);
		json_object_set_new(it->answer, "pending", json_true());
		json_object_set_new(
		    it->answer, "origin", json_string(it->u.origin));
		break;
	case CACHE_OVERLOADED:
		ops_item_error(p, i, PE_OVERLOADED,
		    "too many checks are waiting on fetches");
		break;
	case CACHE_NOMEM:
		ops_item_error(p, i, PE_INTERNAL, "out of memory");
		break;
	}
	if (robots_url != buf)
		free(robots_url);
}

/* Park p on its connection until its fetches end or its deadline. */
static void
ops_park(struct ops_pending *p)
{
	struct timeval tv = { .tv_sec = OPS_WAIT_TIMEOUTS *
		                            p->rd->conf->fetch_timeout +
		                        OPS_WAIT_SLACK };

	p->timer = evtimer_new(p->rd->base, ops_timeout_cb, p);
	if (p->timer == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	evtimer_add(p->timer, &tv);
	TAILQ_INSERT_TAIL(conn_pending(p->conn), p, link);
}

/* check: one URL or a batch for one agent. */
static void
ops_check(struct robotsd *rd, struct conn *c, struct request *req)
{
	size_t n = req->urls != NULL ? json_array_size(req->urls) : 1, i;
	struct ops_pending *p;
	json_t *u;

	p = xcalloc(1, sizeof(*p) + n * sizeof(p->items[0]));
	p->rd = rd;
	p->conn = c;
	p->id = req->id != NULL ? json_incref(req->id) : NULL;
	p->urls = req->urls != NULL ? json_incref(req->urls) : NULL;
	p->agent = xstrndup(req->agent, req->agent_len);
	p->agent_len = strlen(p->agent);
	p->n = n;
	for (i = 0; i < n; i++) {
		if (req->urls == NULL) {
			ops_check_item(p, i, req->url, req->url_len, req->wait);
			continue;
		}
		u = json_array_get(req->urls, i);
		ops_check_item(p, i, json_string_value(u),
		    json_string_length(u), req->wait);
	}
	if (p->left == 0)
		ops_finish(p);
	else
		ops_park(p);
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
		    cd >= 0 ? json_real(cd) : json_null());
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
	return t > 0 ? json_real(floor(t * 1000) / 1000) : json_null();
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
	    e->last_error != NULL ? json_string(e->last_error) : json_null());
}

/* Normalize the origin a request names; an error answer on failure. */
static char *
ops_origin(struct conn *c, struct request *req)
{
	enum url_err ue;
	char *origin;

	if ((origin = url_origin(req->origin, req->origin_len, &ue)) == NULL)
		conn_reply(c,
		    proto_error(req->id, ops_url_err(ue), url_err_message(ue)));
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
	json_object_set_new(o, "stale", json_boolean(e->stale));
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
		ops_check(rd, c, req);
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
		json_object_set_new(o, "now", json_real(clock_now(&rd->clock)));
		conn_reply(c, o);
		break;
	}
	proto_request_clear(req);
}

/* Drop a closing connection's waiting checks; none is answered. */
void
ops_cancel_all(struct ops_pending_list *list)
{
	struct ops_pending *p;

	while ((p = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, p, link);
		ops_pending_free(p);
	}
}
