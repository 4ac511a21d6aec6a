/*
 * dispatch_ops.c: the small ops: inspect, history, purge, stats, ping, the
 * tests' clock and watch, each answered at once as JSON text
 * (wire/jsonw.h) through the session's struct reply.
 */
#include <config.h>

#include <sys/queue.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "ops/dispatch_int.h"
#include "feed/feed.h"
#include "wire/jsonw.h"
#include "wire/proto.h"
#include "iface/reply.h"
#include "wire/usagew.h"
#include "ops/session.h"
#include "ops/tdmres.h"
#include "base/xmalloc.h"

/* The answer to an op on tdmrep.json with --tdmrep off. */
#define TDM_OFF_MSG "tdmrep.json is never fetched (--tdmrep off)"

/*
 * Send what b holds on s as the answer to the request st tells, or an
 * internal error when b failed.
 */
void
dispatch_send(struct session *s, const struct reply_stamp *st, const json_t *id,
    struct buf *b)
{
	if (b->state != BUF_OK) {
		buf_reset(b);
		proto_error(b, id, PE_INTERNAL, "out of memory");
	}
	if (b->state == BUF_OK)
		s->out->ops->send(s->out, st, b->p, b->len);
	buf_clear(b);
}

/* Send an error answer to the request st tells. */
void
dispatch_error(struct session *s, const struct reply_stamp *st,
    const json_t *id, enum proto_err e, const char *msg)
{
	struct buf b = BUF_INIT(0);

	proto_error(&b, id, e, msg);
	dispatch_send(s, st, id, &b);
}

/* A number of seconds as an integer, or null when negative. */
static void
dispatch_seconds(struct jw *w, double s)
{
	if (s < 0)
		jw_vnull(w);
	else
		jw_vint(w, llround(s));
}

/* A time in clock seconds to the millisecond, or null when unset (0). */
static void
dispatch_time(struct jw *w, double t)
{
	if (t > 0)
		jw_vreal(w, floor(t * 1000) / 1000);
	else
		jw_vnull(w);
}

/* The user-agent groups of a ruleset, for inspect. */
static void
dispatch_groups(struct jw *w, const struct robots *r)
{
	size_t i, j, len;
	const char *a;
	double cd;

	jw_arr(w);
	for (i = 0; r != NULL && i < robots_group_count(r); i++) {
		jw_obj(w);
		jw_key(w, "agents");
		jw_arr(w);
		for (j = 0; j < robots_group_agent_count(r, i); j++) {
			a = robots_group_agent(r, i, j, &len);
			jw_vstr(w, a, len);
		}
		jw_end(w);
		jw_kint(w, "rules", (long long)robots_group_rule_count(r, i));
		if ((cd = robots_group_crawl_delay(r, i)) >= 0)
			jw_kreal(w, "crawl_delay", cd);
		else
			jw_knull(w, "crawl_delay");
		jw_end(w);
	}
	jw_end(w);
}

/* The sitemaps of a ruleset, for inspect. */
static void
dispatch_sitemaps(struct jw *w, const struct robots *r)
{
	const char *s;
	size_t i, len;

	jw_arr(w);
	for (i = 0; r != NULL && i < robots_sitemap_count(r); i++) {
		s = robots_sitemap(r, i, &len);
		jw_vstr(w, s, len);
	}
	jw_end(w);
}

/*
 * The Content-Usage, Content-Signal, License and other unknown directive
 * lines of a ruleset, for inspect: "group" is the index into "groups", or
 * null for a line before the first group.
 */
static void
dispatch_extra_lines(struct jw *w, const struct robots *r)
{
	struct robots_extra x;
	size_t i;

	jw_arr(w);
	for (i = 0; r != NULL && i < robots_extra_count(r); i++) {
		robots_extra(r, i, &x);
		jw_obj(w);
		jw_kstr(w, "directive", x.name, x.name_len);
		jw_kstr(w, "value", x.value, x.value_len);
		jw_kint(w, "line", x.line);
		if (x.group >= 0)
			jw_kint(w, "group", x.group);
		else
			jw_knull(w, "group");
		jw_end(w);
	}
	jw_end(w);
}

/* The failure state of an entry, for inspect. */
static void
dispatch_retry(struct jw *w, const struct cache_entry *e)
{
	jw_obj(w);
	jw_kint(w, "fail_streak", e->fail_streak);
	jw_key(w, "failing_since");
	dispatch_time(w, e->fail_streak > 0 ? e->fail_since : 0);
	jw_key(w, "next_retry");
	dispatch_time(w, e->fail_streak > 0 ? e->next_retry : 0);
	jw_key(w, "last_error");
	jw_vcstr_or_null(w, e->last_error);
	jw_key(w, "cause");
	check_cause(w, e);
	jw_end(w);
}

/* Normalize the origin a request names; an error answer on failure. */
static char *
dispatch_origin(
    struct session *s, const struct reply_stamp *st, struct request *req)
{
	enum url_err ue;
	char *origin;

	if ((origin = robots_url_origin(req->origin, req->origin_len, &ue)) ==
	    NULL)
		dispatch_error(s, st, req->id, proto_url_err(ue),
		    robots_url_err_message(ue));
	return origin;
}

/* The members of robots.txt's entry e after its final URL, for inspect. */
static void
dispatch_robots_members(struct jw *w, const struct cache_entry *e)
{
	jw_key(w, "groups");
	dispatch_groups(w, e->robots);
	jw_key(w, "sitemaps");
	dispatch_sitemaps(w, e->robots);
	jw_key(w, "retry");
	dispatch_retry(w, e);
	jw_key(w, "extra_lines");
	dispatch_extra_lines(w, e->robots);
	jw_key(w, "warnings");
	jw_warnings(w, e->robots);
}

/* The same for tdmrep.json's entry e (tdmres.h). */
static void
dispatch_tdm_members(struct jw *w, const struct cache_entry *e)
{
	jw_key(w, "retry");
	dispatch_retry(w, e);
	tdm_inspect_members(w, e);
}

/* The members of an inspect answer for entry e of cache c. */
static void
dispatch_entry(struct jw *w, const struct cache *c, const struct cache_entry *e,
    const char *origin)
{
	int tdm = cache_kind(c) == &tdm_kind;

	jw_kstr(w, "origin", origin, strlen(origin));
	if (tdm)
		jw_kstr(w, "resource", "tdmrep", 6);
	jw_key(w, "state");
	jw_vcstr_or_null(w, tdm ? tdm_state_name(e)
	                    : e->policy == CACHE_NONE
	                        ? "pending"
	                        : cache_policy_name(e->policy));
	jw_key(w, "source"); /* fetched here, or from the shared tier */
	jw_vcstr_or_null(w, e->policy == CACHE_NONE ? NULL
	                    : e->shared             ? "shared"
	                                            : "fetched");
	jw_kint_or_null(w, "http_status", e->http_status);
	/* When this version was first fetched (the last fetch if unknown). */
	jw_key(w, "fetched_at");
	dispatch_time(
	    w, e->version_since > 0 ? e->version_since : e->fetched_at);
	jw_key(w, "validated_at");
	dispatch_time(w, e->validated_at);
	jw_key(w, "last_fetch_at"); /* whatever it came back with */
	dispatch_time(w, e->fetched_at);
	jw_key(w, "version");
	jw_vcstr_or_null(w, e->version[0] != '\0' ? e->version : NULL);
	jw_key(w, "expires_at");
	dispatch_time(w, e->expires_at);
	jw_key(w, "expires_in");
	dispatch_seconds(
	    w, e->policy == CACHE_NONE ? -1 : cache_expires_in(c, e));
	jw_kint(w, "body_bytes", (long long)e->body_bytes);
	jw_kbool(w, "truncated", e->truncated);
	jw_key(w, "final_url");
	jw_vcstr_or_null(w, e->final_url);
	if (tdm)
		dispatch_tdm_members(w, e);
	else
		dispatch_robots_members(w, e);
}

/* inspect: everything the cache knows about one origin. */
void
dispatch_inspect(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct cache *c = req->tdmrep ? d->env.tdm : d->cache;
	const struct cache_entry *e;
	struct buf b = BUF_INIT(0);
	struct jw w;
	char *origin;
	int stale;

	if (c == NULL) {
		dispatch_error(s, st, req->id, PE_NOT_CACHED, TDM_OFF_MSG);
		return;
	}
	if ((origin = dispatch_origin(s, st, req)) == NULL)
		return;
	if ((e = cache_find(c, origin)) == NULL) {
		char *msg; /* names the origin as normalized and looked up */

		xasprintf(&msg, "the origin %s%s is not in the cache", origin,
		    c != d->cache ? "'s tdmrep.json" : "");
		dispatch_error(s, st, req->id, PE_NOT_CACHED, msg);
		free(msg);
		free(origin);
		return;
	}
	proto_begin(&w, &b, req->id, 1);
	dispatch_entry(&w, c, e, origin);
	/* Checks are answered from the old copy while a refresh runs too. */
	stale = e->stale || (e->fetching && e->policy != CACHE_NONE);
	jw_kbool(&w, "fetching", e->fetching);
	jw_kbool(&w, "stale", stale);
	proto_end(&w);
	dispatch_send(s, st, req->id, &b);
	free(origin);
}

/*
 * The history answer of origin's resource in c: its versions v[0..n),
 * each state named as c's kind names it.
 */
static void
history_answer(struct session *s, const struct reply_stamp *st,
    const json_t *id, const struct cache *c, const char *origin,
    const struct cache_version *v, size_t n)
{
	struct buf b = BUF_INIT(0);
	struct jw w;
	size_t i;

	proto_begin(&w, &b, id, 1);
	jw_kstr(&w, "origin", origin, strlen(origin));
	if (cache_kind(c) == &tdm_kind)
		jw_kstr(&w, "resource", "tdmrep", 6);
	jw_key(&w, "versions");
	jw_arr(&w);
	for (i = 0; i < n; i++) {
		jw_obj(&w);
		jw_key(&w, "version");
		jw_vcstr_or_null(&w, v[i].version);
		jw_kint(&w, "first_seen", (long long)v[i].first_seen);
		jw_kint(&w, "last_seen", (long long)v[i].last_seen);
		jw_kint_or_null(&w, "http_status", v[i].http_status);
		jw_key(&w, "state");
		jw_vcstr_or_null(
		    &w, cache_version_state(c, v[i].policy, v[i].flags));
		jw_end(&w);
	}
	jw_end(&w);
	proto_end(&w);
	dispatch_send(s, st, id, &b);
}

/* The error of a history op of an origin c holds no version of. */
static const char *
history_unknown(const struct cache *c)
{
	return cache_kind(c) == &tdm_kind
	           ? "the origin's tdmrep.json is not in the cache"
	           : "the origin is not in the cache";
}

/*
 * A history op of an origin not cached here, reading its shared value;
 * s NULL once its session closed (freed when the read ends).
 */
struct history_wait {
	TAILQ_ENTRY(history_wait) link;
	struct session *s;
	struct cache *c; /* robots.txt's or tdmrep.json's */
	json_t *id;
	char *origin;
	double t0; /* when its line was read */
};

/* The shared value's versions v[0..n) came: answer, or not_cached. */
static void
history_peeked_cb(const struct cache_version *v, size_t n, void *arg)
{
	struct cache_version out[CACHE_MAX_HISTORY];
	struct history_wait *w = arg;
	struct session *s = w->s;
	/* the latency is this op's, from its own line */
	const struct reply_stamp hst = { w->t0, REPLY_HISTORY }, *st = &hst;

	if (s != NULL) {
		TAILQ_REMOVE(&s->histories, w, link);
		if ((n = cache_history_learn(w->c, w->origin, v, n, out)) > 0)
			history_answer(s, st, w->id, w->c, w->origin, out, n);
		else
			dispatch_error(
			    s, st, w->id, PE_NOT_CACHED, history_unknown(w->c));
		if (s->out->ops->settled != NULL)
			s->out->ops->settled(s->out);
	}
	json_decref(w->id);
	free(w->origin);
	free(w);
}

/* See dispatch_int.h. */
void
dispatch_history_cancel_all(struct session *s)
{
	struct history_wait *w;

	while ((w = TAILQ_FIRST(&s->histories)) != NULL) {
		TAILQ_REMOVE(&s->histories, w, link);
		w->s = NULL;
	}
}

/*
 * Read origin's resource in c (origin taken) from the shared tier for
 * req; 0, or -1 (origin still the caller's) without a tier.
 */
static int
history_peek(struct cache *c, struct session *s, const struct reply_stamp *st,
    struct request *req, char *origin)
{
	struct history_wait *w = xcalloc(1, sizeof(*w));

	w->s = s;
	w->c = c;
	w->id = json_incref(req->id);
	w->origin = origin;
	w->t0 = st->t0;
	TAILQ_INSERT_TAIL(&s->histories, w, link);
	if (cache_peek_history(c, origin, history_peeked_cb, w) == 0)
		return 0;
	TAILQ_REMOVE(&s->histories, w, link);
	json_decref(w->id);
	free(w);
	return -1;
}

/*
 * history: an origin's last distinct versions, newest first; for one not
 * cached here, those of its shared value.
 */
void
dispatch_history(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct cache_version v[CACHE_MAX_HISTORY];
	struct cache *c = req->tdmrep ? d->env.tdm : d->cache;
	const struct cache_entry *e;
	char *origin;

	if (c == NULL) {
		dispatch_error(s, st, req->id, PE_NOT_CACHED, TDM_OFF_MSG);
		return;
	}
	if ((origin = dispatch_origin(s, st, req)) == NULL)
		return;
	if ((e = cache_find(c, origin)) == NULL || e->policy == CACHE_NONE) {
		if (history_peek(c, s, st, req, origin) == 0)
			return;
		dispatch_error(
		    s, st, req->id, PE_NOT_CACHED, history_unknown(c));
		free(origin);
		return;
	}
	history_answer(s, st, req->id, c, origin, v,
	    cache_history(e, v, CACHE_MAX_HISTORY));
	free(origin);
}

/* purge: one origin or all of them. */
void
dispatch_purge(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct buf b = BUF_INIT(0);
	struct jw w;
	size_t n;
	char *origin;

	if (req->all) {
		n = cache_purge_all(d->cache);
		if (d->env.tdm != NULL) /* its tdmrep.json with it */
			(void)cache_purge_all(d->env.tdm);
	} else {
		if ((origin = dispatch_origin(s, st, req)) == NULL)
			return;
		n = cache_purge(d->cache, origin);
		if (d->env.tdm != NULL)
			(void)cache_purge(d->env.tdm, origin);
		free(origin);
	}
	proto_begin(&w, &b, req->id, 1);
	jw_kint(&w, "purged", (long long)n);
	proto_end(&w);
	dispatch_send(s, st, req->id, &b);
}

/* stats: the counters table, by the stats names. */
void
dispatch_stats(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct metric v[METRICS_MAX];
	struct buf b = BUF_INIT(0);
	struct jw w;
	size_t i, n = d->stats(d->stats_arg, v);

	proto_begin(&w, &b, req->id, 1);
	jw_key(&w, "stats");
	jw_obj(&w);
	for (i = 0; i < n; i++) {
		if (v[i].name == NULL) /* only in /metrics */
			continue;
		jw_key_str(&w, v[i].name, strlen(v[i].name));
		jw_vint(&w, (long long)v[i].value);
	}
	jw_end(&w);
	proto_end(&w);
	dispatch_send(s, st, req->id, &b);
}

/* ping and the tests' clock. */
void
dispatch_simple(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct buf b = BUF_INIT(0);
	struct jw w;

	proto_begin(&w, &b, req->id, 1);
	if (req->op == OP_PING)
		jw_klit(&w, "version", "\"" PACKAGE_VERSION "\"");
	else {
		clock_advance(d->clock, req->advance);
		jw_kreal(&w, "now", clock_now(d->clock));
	}
	proto_end(&w);
	dispatch_send(s, st, req->id, &b);
}

static int
dispatch_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The normalized, distinct origins of a watch into *out (n set); -1 with
 * the error answered.
 */
static int
dispatch_watch_origins(struct session *s, const struct reply_stamp *st,
    struct request *req, char ***out, size_t *n)
{
	size_t i, k = 0, len = json_array_size(req->origins);
	char **v = xcalloc(len + 1, sizeof(*v));
	json_t *o;
	enum url_err ue;

	for (i = 0; i < len; i++) {
		o = json_array_get(req->origins, i);
		if ((v[i] = robots_url_origin(json_string_value(o),
		         json_string_length(o), &ue)) == NULL) {
			dispatch_error(s, st, req->id, proto_url_err(ue),
			    robots_url_err_message(ue));
			while (i > 0)
				free(v[--i]);
			free(v);
			return -1;
		}
	}
	qsort(v, len, sizeof(*v), dispatch_strcmp);
	for (i = 0; i < len; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
		else
			free(v[i]);
	*out = v;
	*n = k;
	return 0;
}

/* watch: the connection becomes a subscription to the change feed. */
void
dispatch_watch(struct dispatch *d, struct session *s,
    const struct reply_stamp *st, struct request *req)
{
	struct buf b = BUF_INIT(0);
	struct jw w;
	const char *agents[PROTO_MAX_WATCH_AGENTS];
	char **origins = NULL;
	size_t n = 0, nagents = json_array_size(req->agents), i;

	if (d->feed == NULL) {
		dispatch_error(s, st, req->id, PE_BAD_REQUEST,
		    "this robotsd has no change feed");
		return;
	}
	if ((req->resources & PROTO_RES_TDMREP) && d->env.tdm == NULL) {
		dispatch_error(s, st, req->id, PE_NOT_CACHED, TDM_OFF_MSG);
		return;
	}
	if (!req->all && dispatch_watch_origins(s, st, req, &origins, &n) == -1)
		return;
	for (i = 0; i < nagents; i++)
		agents[i] = json_string_value(json_array_get(req->agents, i));
	s->watch = feed_watch(d->feed, s->out, (const char *const *)origins, n,
	    req->all, agents, nagents,
	    (req->resources & PROTO_RES_ROBOTS ? FEED_ROBOTS : 0) |
	        (req->resources & PROTO_RES_TDMREP ? FEED_TDMREP : 0));
	for (i = 0; i < n; i++)
		free(origins[i]);
	free(origins);
	proto_begin(&w, &b, req->id, 1);
	jw_kint(&w, "watching",
	    (long long)(req->all ? cache_stats(d->cache)->entries : n));
	proto_end(&w);
	dispatch_send(s, st, req->id, &b);
}
