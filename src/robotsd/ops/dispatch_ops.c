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
#include "base/xmalloc.h"

/* Send what b holds on s, or an internal error when b failed. */
void
dispatch_send(struct session *s, const json_t *id, struct buf *b)
{
	if (b->state != BUF_OK) {
		buf_reset(b);
		proto_error(b, id, PE_INTERNAL, "out of memory");
	}
	if (b->state == BUF_OK)
		s->out->ops->send(s->out, b->p, b->len);
	buf_clear(b);
}

/* Send an error answer. */
void
dispatch_error(
    struct session *s, const json_t *id, enum proto_err e, const char *msg)
{
	struct buf b = BUF_INIT(0);

	proto_error(&b, id, e, msg);
	dispatch_send(s, id, &b);
}

/* ,"key": */
static void
dispatch_key(struct buf *b, const char *key)
{
	buf_lit(b, ",\"");
	buf_add(b, key, strlen(key));
	buf_lit(b, "\":");
}

/* true or false. */
static void
dispatch_bool(struct buf *b, int v)
{
	if (v)
		buf_lit(b, "true");
	else
		buf_lit(b, "false");
}

/* A number of seconds as an integer, or null when negative. */
static void
dispatch_seconds(struct buf *b, double s)
{
	if (s < 0)
		buf_lit(b, "null");
	else
		jw_int(b, llround(s));
}

/* A time in clock seconds to the millisecond, or null when unset (0). */
static void
dispatch_time(struct buf *b, double t)
{
	if (t > 0)
		jw_real(b, floor(t * 1000) / 1000);
	else
		buf_lit(b, "null");
}

/* A C string, or null. */
static void
dispatch_cstr(struct buf *b, const char *s)
{
	if (s != NULL)
		jw_str(b, s, strlen(s));
	else
		buf_lit(b, "null");
}

/* The user-agent groups of a ruleset, for inspect. */
static void
dispatch_groups(struct buf *b, const struct robots *r)
{
	size_t i, j, len;
	const char *a;
	double cd;

	buf_lit(b, "[");
	for (i = 0; r != NULL && i < robots_group_count(r); i++) {
		if (i > 0)
			buf_lit(b, ",");
		buf_lit(b, "{\"agents\":[");
		for (j = 0; j < robots_group_agent_count(r, i); j++) {
			if (j > 0)
				buf_lit(b, ",");
			a = robots_group_agent(r, i, j, &len);
			jw_str(b, a, len);
		}
		buf_lit(b, "],\"rules\":");
		jw_int(b, (long long)robots_group_rule_count(r, i));
		buf_lit(b, ",\"crawl_delay\":");
		if ((cd = robots_group_crawl_delay(r, i)) >= 0)
			jw_real(b, cd);
		else
			buf_lit(b, "null");
		buf_lit(b, "}");
	}
	buf_lit(b, "]");
}

/* The sitemaps of a ruleset, for inspect. */
static void
dispatch_sitemaps(struct buf *b, const struct robots *r)
{
	const char *s;
	size_t i, len;

	buf_lit(b, "[");
	for (i = 0; r != NULL && i < robots_sitemap_count(r); i++) {
		if (i > 0)
			buf_lit(b, ",");
		s = robots_sitemap(r, i, &len);
		jw_str(b, s, len);
	}
	buf_lit(b, "]");
}

/*
 * The Content-Usage, Content-Signal, License and other unknown directive
 * lines of a ruleset, for inspect: "group" is the index into "groups", or
 * null for a line before the first group.
 */
static void
dispatch_extra_lines(struct buf *b, const struct robots *r)
{
	struct robots_extra x;
	size_t i;

	buf_lit(b, "[");
	for (i = 0; r != NULL && i < robots_extra_count(r); i++) {
		robots_extra(r, i, &x);
		if (i > 0)
			buf_lit(b, ",");
		buf_lit(b, "{\"directive\":");
		jw_str(b, x.name, x.name_len);
		buf_lit(b, ",\"value\":");
		jw_str(b, x.value, x.value_len);
		buf_lit(b, ",\"line\":");
		jw_int(b, x.line);
		buf_lit(b, ",\"group\":");
		if (x.group >= 0)
			jw_int(b, x.group);
		else
			buf_lit(b, "null");
		buf_lit(b, "}");
	}
	buf_lit(b, "]");
}

/* The failure state of an entry, for inspect. */
static void
dispatch_retry(struct buf *b, const struct cache_entry *e)
{
	struct jw w;

	buf_lit(b, "{\"fail_streak\":");
	jw_int(b, e->fail_streak);
	buf_lit(b, ",\"failing_since\":");
	dispatch_time(b, e->fail_streak > 0 ? e->fail_since : 0);
	buf_lit(b, ",\"next_retry\":");
	dispatch_time(b, e->fail_streak > 0 ? e->next_retry : 0);
	buf_lit(b, ",\"last_error\":");
	dispatch_cstr(b, e->last_error);
	buf_lit(b, ",\"cause\":");
	jw_init(&w, b);
	check_cause(&w, e);
	buf_lit(b, "}");
}

/* Normalize the origin a request names; an error answer on failure. */
static char *
dispatch_origin(struct session *s, struct request *req)
{
	enum url_err ue;
	char *origin;

	if ((origin = robots_url_origin(req->origin, req->origin_len, &ue)) ==
	    NULL)
		dispatch_error(
		    s, req->id, proto_url_err(ue), robots_url_err_message(ue));
	return origin;
}

/* The members of an inspect answer for entry e. */
static void
dispatch_entry(struct buf *b, const struct dispatch *d,
    const struct cache_entry *e, const char *origin)
{
	dispatch_key(b, "origin");
	jw_str(b, origin, strlen(origin));
	dispatch_key(b, "state");
	dispatch_cstr(b,
	    e->policy == CACHE_NONE ? "pending" : cache_policy_name(e->policy));
	dispatch_key(b, "source"); /* fetched here, or from the shared tier */
	dispatch_cstr(b, e->policy == CACHE_NONE ? NULL
	                 : e->shared             ? "shared"
	                                         : "fetched");
	dispatch_key(b, "http_status");
	jw_int_or_null(b, e->http_status);
	/* When this version was first fetched (the last fetch if unknown). */
	dispatch_key(b, "fetched_at");
	dispatch_time(
	    b, e->version_since > 0 ? e->version_since : e->fetched_at);
	dispatch_key(b, "validated_at");
	dispatch_time(b, e->validated_at);
	dispatch_key(b, "last_fetch_at"); /* whatever it came back with */
	dispatch_time(b, e->fetched_at);
	dispatch_key(b, "version");
	dispatch_cstr(b, e->version[0] != '\0' ? e->version : NULL);
	dispatch_key(b, "expires_at");
	dispatch_time(b, e->expires_at);
	dispatch_key(b, "expires_in");
	dispatch_seconds(
	    b, e->policy == CACHE_NONE ? -1 : cache_expires_in(d->cache, e));
	dispatch_key(b, "body_bytes");
	jw_int(b, (long long)e->body_bytes);
	dispatch_key(b, "truncated");
	dispatch_bool(b, e->truncated);
	dispatch_key(b, "final_url");
	dispatch_cstr(b, e->final_url);
	dispatch_key(b, "groups");
	dispatch_groups(b, e->robots);
	dispatch_key(b, "sitemaps");
	dispatch_sitemaps(b, e->robots);
	dispatch_key(b, "retry");
	dispatch_retry(b, e);
	dispatch_key(b, "extra_lines");
	dispatch_extra_lines(b, e->robots);
	dispatch_key(b, "warnings");
	jw_warnings(b, e->robots);
}

/* inspect: everything the cache knows about one origin. */
void
dispatch_inspect(struct dispatch *d, struct session *s, struct request *req)
{
	const struct cache_entry *e;
	struct buf b = BUF_INIT(0);
	char *origin;
	int stale;

	if ((origin = dispatch_origin(s, req)) == NULL)
		return;
	if ((e = cache_find(d->cache, origin)) == NULL) {
		char *msg; /* names the origin as normalized and looked up */

		xasprintf(&msg, "the origin %s is not in the cache", origin);
		dispatch_error(s, req->id, PE_NOT_CACHED, msg);
		free(msg);
		free(origin);
		return;
	}
	proto_begin(&b, req->id, 1);
	dispatch_entry(&b, d, e, origin);
	/* Checks are answered from the old copy while a refresh runs too. */
	stale = e->stale || (e->fetching && e->policy != CACHE_NONE);
	dispatch_key(&b, "fetching");
	dispatch_bool(&b, e->fetching);
	dispatch_key(&b, "stale");
	dispatch_bool(&b, stale);
	proto_end(&b);
	dispatch_send(s, req->id, &b);
	free(origin);
}

/* The history answer of origin: its versions v[0..n). */
static void
history_answer(struct session *s, const json_t *id, const char *origin,
    const struct cache_version *v, size_t n)
{
	struct buf b = BUF_INIT(0);
	size_t i;

	proto_begin(&b, id, 1);
	dispatch_key(&b, "origin");
	jw_str(&b, origin, strlen(origin));
	dispatch_key(&b, "versions");
	buf_lit(&b, "[");
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_lit(&b, ",");
		buf_lit(&b, "{\"version\":");
		dispatch_cstr(&b, v[i].version);
		buf_lit(&b, ",\"first_seen\":");
		jw_int(&b, (long long)v[i].first_seen);
		buf_lit(&b, ",\"last_seen\":");
		jw_int(&b, (long long)v[i].last_seen);
		buf_lit(&b, ",\"http_status\":");
		jw_int_or_null(&b, v[i].http_status);
		buf_lit(&b, ",\"state\":");
		dispatch_cstr(&b, cache_policy_name(v[i].policy));
		buf_lit(&b, "}");
	}
	buf_lit(&b, "]");
	proto_end(&b);
	dispatch_send(s, id, &b);
}

/*
 * A history op of an origin not cached here, reading its shared value;
 * s NULL once its session closed (freed when the read ends).
 */
struct history_wait {
	TAILQ_ENTRY(history_wait) link;
	struct session *s;
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
	unsigned char kind;
	double t0;

	if (s != NULL) {
		TAILQ_REMOVE(&s->histories, w, link);
		t0 = s->out->t0;
		kind = s->out->kind;
		s->out->t0 = w->t0; /* the latency is this op's */
		s->out->kind = REPLY_HISTORY;
		if ((n = cache_history_learn(
		         s->d->cache, w->origin, v, n, out)) > 0)
			history_answer(s, w->id, w->origin, out, n);
		else
			dispatch_error(s, w->id, PE_NOT_CACHED,
			    "the origin is not in the cache");
		s->out->t0 = t0;
		s->out->kind = kind;
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
 * Read origin (taken) from the shared tier for req; 0, or -1 (origin
 * still the caller's) without a tier.
 */
static int
history_peek(
    struct dispatch *d, struct session *s, struct request *req, char *origin)
{
	struct history_wait *w = xcalloc(1, sizeof(*w));

	w->s = s;
	w->id = json_incref(req->id);
	w->origin = origin;
	w->t0 = s->out->t0;
	TAILQ_INSERT_TAIL(&s->histories, w, link);
	if (cache_peek_history(d->cache, origin, history_peeked_cb, w) == 0)
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
dispatch_history(struct dispatch *d, struct session *s, struct request *req)
{
	struct cache_version v[CACHE_MAX_HISTORY];
	const struct cache_entry *e;
	char *origin;

	if ((origin = dispatch_origin(s, req)) == NULL)
		return;
	if ((e = cache_find(d->cache, origin)) == NULL ||
	    e->policy == CACHE_NONE) {
		if (history_peek(d, s, req, origin) == 0)
			return;
		dispatch_error(s, req->id, PE_NOT_CACHED,
		    "the origin is not in the cache");
		free(origin);
		return;
	}
	history_answer(
	    s, req->id, origin, v, cache_history(e, v, CACHE_MAX_HISTORY));
	free(origin);
}

/* purge: one origin or all of them. */
void
dispatch_purge(struct dispatch *d, struct session *s, struct request *req)
{
	struct buf b = BUF_INIT(0);
	size_t n;
	char *origin;

	if (req->all)
		n = cache_purge_all(d->cache);
	else {
		if ((origin = dispatch_origin(s, req)) == NULL)
			return;
		n = cache_purge(d->cache, origin);
		free(origin);
	}
	proto_begin(&b, req->id, 1);
	buf_lit(&b, ",\"purged\":");
	jw_int(&b, (long long)n);
	proto_end(&b);
	dispatch_send(s, req->id, &b);
}

/* stats: the counters table, by the stats names. */
void
dispatch_stats(struct dispatch *d, struct session *s, struct request *req)
{
	struct metric v[METRICS_MAX];
	struct buf b = BUF_INIT(0);
	size_t i, shown = 0, n = d->stats(d->stats_arg, v);

	proto_begin(&b, req->id, 1);
	buf_lit(&b, ",\"stats\":{");
	for (i = 0; i < n; i++) {
		if (v[i].name == NULL) /* only in /metrics */
			continue;
		if (shown++ > 0)
			buf_lit(&b, ",");
		jw_str(&b, v[i].name, strlen(v[i].name));
		buf_lit(&b, ":");
		jw_int(&b, (long long)v[i].value);
	}
	buf_lit(&b, "}");
	proto_end(&b);
	dispatch_send(s, req->id, &b);
}

/* ping and the tests' clock. */
void
dispatch_simple(struct dispatch *d, struct session *s, struct request *req)
{
	struct buf b = BUF_INIT(0);

	proto_begin(&b, req->id, 1);
	if (req->op == OP_PING)
		buf_lit(&b, ",\"version\":\"" PACKAGE_VERSION "\"");
	else {
		clock_advance(d->clock, req->advance);
		buf_lit(&b, ",\"now\":");
		jw_real(&b, clock_now(d->clock));
	}
	proto_end(&b);
	dispatch_send(s, req->id, &b);
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
dispatch_watch_origins(
    struct session *s, struct request *req, char ***out, size_t *n)
{
	size_t i, k = 0, len = json_array_size(req->origins);
	char **v = xcalloc(len + 1, sizeof(*v));
	json_t *o;
	enum url_err ue;

	for (i = 0; i < len; i++) {
		o = json_array_get(req->origins, i);
		if ((v[i] = robots_url_origin(json_string_value(o),
		         json_string_length(o), &ue)) == NULL) {
			dispatch_error(s, req->id, proto_url_err(ue),
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
dispatch_watch(struct dispatch *d, struct session *s, struct request *req)
{
	struct buf b = BUF_INIT(0);
	const char *agents[PROTO_MAX_WATCH_AGENTS];
	char **origins = NULL;
	size_t n = 0, nagents = json_array_size(req->agents), i;

	if (d->feed == NULL) {
		dispatch_error(s, req->id, PE_BAD_REQUEST,
		    "this robotsd has no change feed");
		return;
	}
	if (!req->all && dispatch_watch_origins(s, req, &origins, &n) == -1)
		return;
	for (i = 0; i < nagents; i++)
		agents[i] = json_string_value(json_array_get(req->agents, i));
	s->watch = feed_watch(d->feed, s->out, (const char *const *)origins, n,
	    req->all, agents, nagents);
	for (i = 0; i < n; i++)
		free(origins[i]);
	free(origins);
	proto_begin(&b, req->id, 1);
	buf_lit(&b, ",\"watching\":");
	jw_int(&b, (long long)(req->all ? cache_stats(d->cache)->entries : n));
	proto_end(&b);
	dispatch_send(s, req->id, &b);
}
