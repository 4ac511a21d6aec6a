/*
 * dispatch.c: request line -> answer. Every line is decoded here; checks go
 * to checkop.c, and the rare ops (inspect, purge, stats, ping, the tests'
 * clock) are answered here. Every answer is JSON text written with
 * wire/jsonw.h and leaves through the session's struct reply.
 */
#include <config.h>

#include <sys/queue.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "ops/dispatch.h"
#include "feed/feed.h"
#include "jsonw.h"
#include "base/log.h"
#include "proto.h"
#include "base/reply.h"
#include "base/session.h"
#include "wire_fast.h"
#include "base/xmalloc.h"

TAILQ_HEAD(session_list, session);

struct dispatch {
	struct cache *cache;
	struct clock *clock;
	stats_fn stats;
	void *stats_arg;
	struct check_env env;
	struct check_answers answers;
	int test_clock;
	struct session_list sessions;
	struct feed *feed; /* or NULL */
	uint64_t requests;
	/*
	 * The fast path's reused space, one for all clients: lines are
	 * answered one at a time, and send() copies an answer out (a large
	 * one is handed over by give() and the space made anew).
	 */
	struct buf answer;
	struct buf unescaped; /* a line's strings with escapes */
	struct wire_str urls[PROTO_MAX_URLS]; /* a batch's URLs */
};

/* Send what b holds on s, or an internal error when b failed. */
static void
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
static void
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

/* The remarks librobots made about a ruleset, for inspect. */
static void
dispatch_warnings(struct buf *b, const struct robots *r)
{
	struct robots_warning w;
	size_t i;

	buf_lit(b, "[");
	for (i = 0; r != NULL && i < robots_warning_count(r); i++) {
		robots_warning(r, i, &w);
		if (i > 0)
			buf_lit(b, ",");
		buf_lit(b, "{\"line\":");
		jw_int(b, w.line);
		buf_lit(b, ",\"code\":");
		jw_str(b, w.code, strlen(w.code));
		buf_lit(b, ",\"message\":");
		jw_str(b, w.message, strlen(w.message));
		buf_lit(b, "}");
	}
	buf_lit(b, "]");
}

/* The failure state of an entry, for inspect. */
static void
dispatch_retry(struct buf *b, const struct cache_entry *e)
{
	buf_lit(b, "{\"fail_streak\":");
	jw_int(b, e->fail_streak);
	buf_lit(b, ",\"failing_since\":");
	dispatch_time(b, e->fail_streak > 0 ? e->fail_since : 0);
	buf_lit(b, ",\"next_retry\":");
	dispatch_time(b, e->fail_streak > 0 ? e->next_retry : 0);
	buf_lit(b, ",\"last_error\":");
	dispatch_cstr(b, e->last_error);
	buf_lit(b, ",\"cause\":");
	check_cause(b, e);
	buf_lit(b, "}");
}

/* Normalize the origin a request names; an error answer on failure. */
static char *
dispatch_origin(struct session *s, struct request *req)
{
	enum url_err ue;
	char *origin;

	if ((origin = url_origin(req->origin, req->origin_len, &ue)) == NULL)
		dispatch_error(
		    s, req->id, proto_url_err(ue), url_err_message(ue));
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
	if (e->http_status > 0)
		jw_int(b, e->http_status);
	else
		buf_lit(b, "null");
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
	dispatch_warnings(b, e->robots);
}

/* inspect: everything the cache knows about one origin. */
static void
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

/* history: an origin's last distinct versions, newest first. */
static void
dispatch_history(struct dispatch *d, struct session *s, struct request *req)
{
	struct cache_version v[CACHE_MAX_HISTORY];
	const struct cache_entry *e;
	struct buf b = BUF_INIT(0);
	char *origin;
	size_t i, n;

	if ((origin = dispatch_origin(s, req)) == NULL)
		return;
	if ((e = cache_find(d->cache, origin)) == NULL ||
	    e->policy == CACHE_NONE) {
		dispatch_error(s, req->id, PE_NOT_CACHED,
		    "the origin is not in the cache");
		free(origin);
		return;
	}
	n = cache_history(e, v, CACHE_MAX_HISTORY);
	proto_begin(&b, req->id, 1);
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
		if (v[i].http_status > 0)
			jw_int(&b, v[i].http_status);
		else
			buf_lit(&b, "null");
		buf_lit(&b, ",\"state\":");
		dispatch_cstr(&b, cache_policy_name(v[i].policy));
		buf_lit(&b, "}");
	}
	buf_lit(&b, "]");
	proto_end(&b);
	dispatch_send(s, req->id, &b);
	free(origin);
}

/* purge: one origin or all of them. */
static void
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
static void
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
static void
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
		if ((v[i] = url_origin(json_string_value(o),
		         json_string_length(o), &ue)) == NULL) {
			dispatch_error(
			    s, req->id, proto_url_err(ue), url_err_message(ue));
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
static void
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

/* Answer one decoded request; clears req. */
static void
dispatch_request(struct dispatch *d, struct session *s, struct request *req)
{
	static const unsigned char kinds[] = { [OP_CHECK] = REPLY_CHECK_CACHED,
		[OP_INSPECT] = REPLY_INSPECT,
		[OP_PURGE] = REPLY_PURGE,
		[OP_STATS] = REPLY_STATS,
		[OP_PING] = REPLY_PING,
		[OP_CLOCK] = REPLY_PING,
		[OP_HISTORY] = REPLY_HISTORY,
		[OP_WATCH] = REPLY_WATCH };

	s->out->kind = kinds[req->op];
	switch (req->op) {
	case OP_CHECK:
		check_op(&d->env, s, req);
		break;
	case OP_INSPECT:
		dispatch_inspect(d, s, req);
		break;
	case OP_PURGE:
		if (s->admin)
			dispatch_purge(d, s, req);
		else
			dispatch_error(s, req->id, PE_FORBIDDEN,
			    "purge needs the admin right: run it as root, as "
			    "robotsd's user or as a member of its admin-group");
		break;
	case OP_HISTORY:
		dispatch_history(d, s, req);
		break;
	case OP_STATS:
		dispatch_stats(d, s, req);
		break;
	case OP_PING:
	case OP_CLOCK:
		dispatch_simple(d, s, req);
		break;
	case OP_WATCH:
		dispatch_watch(d, s, req);
		break;
	}
	proto_request_clear(req);
}

/*
 * The common lines, checks of cached origins, decoded without jansson and
 * answered at once: 1 when done (see check_fast()).
 */
static int
session_fast(struct session *s, const char *line, size_t len)
{
	struct dispatch *d = s->d;
	struct wire_check wc;

	buf_reset(&d->unescaped);
	if (buf_reserve(&d->unescaped, len) < len ||
	    !wire_fast_check(
	        line, len, d->unescaped.p, d->urls, PROTO_MAX_URLS, &wc))
		return 0;
	return check_fast(&d->env, s, &wc);
}

/* Decode a line with jansson and answer it. */
static void
session_full(struct session *s, const char *line, size_t len)
{
	struct dispatch *d = s->d;
	struct request req;
	enum proto_err err;
	const char *msg;

	if (proto_decode(line, len, d->test_clock, &req, &err, &msg) == -1) {
		s->out->kind = REPLY_OTHER;
		dispatch_error(s, req.id, err, msg);
		proto_request_clear(&req);
		return;
	}
	dispatch_request(d, s, &req);
}

/* Decode and answer one request line, at one instant; see dispatch.h. */
void
session_line(struct session *s, const char *line, size_t len)
{
	struct dispatch *d = s->d;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return; /* blank lines are ignored */
	d->requests++;
	if (s->watch != NULL) {
		dispatch_error(s, NULL, PE_BAD_REQUEST,
		    "this connection is watching: it takes no more requests");
		return;
	}
	clock_hold(d->clock);
	s->out->kind = REPLY_CHECK_CACHED; /* the fast path's, else as below */
	if (!session_fast(s, line, len))
		session_full(s, line, len);
	clock_release(d->clock);
}

/* An over-long line: answered once, its bytes were skipped. */
void
session_too_long(struct session *s, size_t limit)
{
	char msg[96];

	s->d->requests++;
	snprintf(msg, sizeof(msg), "request line longer than %zu bytes", limit);
	s->out->kind = REPLY_OTHER;
	dispatch_error(s, NULL, PE_LINE_TOO_LONG, msg);
}

struct session *
session_new(struct dispatch *d, struct reply *out)
{
	struct session *s = xcalloc(1, sizeof(*s));

	s->d = d;
	s->out = out;
	TAILQ_INIT(&s->waiting);
	TAILQ_INSERT_TAIL(&d->sessions, s, link);
	return s;
}

void
session_set_admin(struct session *s, int admin)
{
	s->admin = admin;
}

void
session_close(struct session *s)
{
	check_cancel_all(s);
	feed_unwatch(s->watch);
	s->watch = NULL;
}

void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	check_cancel_all(s);
	feed_unwatch(s->watch);
	TAILQ_REMOVE(&s->d->sessions, s, link);
	free(s);
}

int
session_waiting(const struct session *s)
{
	return !TAILQ_EMPTY(&s->waiting);
}

struct dispatch *
dispatch_new(struct event_base *base, struct cache *cache, struct clock *clk,
    stats_fn stats, void *stats_arg)
{
	struct dispatch *d = xcalloc(1, sizeof(*d));

	d->cache = cache;
	d->clock = clk;
	d->stats = stats;
	d->stats_arg = stats_arg;
	d->env.base = base;
	d->env.cache = cache;
	d->env.answers = &d->answers;
	d->env.answer = &d->answer;
	TAILQ_INIT(&d->sessions);
	return d;
}

void
dispatch_configure(struct dispatch *d, const struct dispatch_settings *set)
{
	d->test_clock = set->test_clock;
	d->env.wait_timeout = set->wait_timeout;
}

void
dispatch_set_feed(struct dispatch *d, struct feed *f)
{
	d->feed = f;
}

void
dispatch_free(struct dispatch *d)
{
	if (d == NULL)
		return;
	buf_clear(&d->answer);
	buf_clear(&d->unescaped);
	free(d);
}

/* Answer every waiting check with "timeout" (the drain's deadline). */
void
dispatch_expire_waiting(struct dispatch *d)
{
	struct session *s, *next;

	for (s = TAILQ_FIRST(&d->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, link); /* an answer may close its client */
		check_expire_all(s);
	}
}

uint64_t
dispatch_requests(const struct dispatch *d)
{
	return d->requests;
}

/* Verdicts given, by source and reason. */
const struct check_answers *
dispatch_answers(const struct dispatch *d)
{
	return &d->answers;
}
