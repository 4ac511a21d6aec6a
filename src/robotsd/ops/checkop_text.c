/*
 * checkop_text.c: a verdict as the text of an answer: the members after
 * "ok" for a URL from its cache entry (written straight into a buffer, as
 * jansson would write them), the start of a batch's row, and the counting
 * of each verdict by source and reason.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "ops/checkop_int.h"
#include "jsonw.h"
#include "usagew.h"
#include "cache/lifetime.h"

/*
 * Count one verdict by its source and reason (names as in
 * check_source_names and check_reason_names, checkop.c). On the hot path:
 * told apart by a letter or two, not strcmp.
 */
static void
check_count(const struct check_env *env, const char *source, const char *reason)
{
	size_t i, j;

	if (env->answers == NULL)
		return;
	i = source[0] == 'c'   ? 0
	    : source[0] == 'f' ? 1
	    : source[1] == 't' ? 2
	                       : 3;
	if (reason[0] == 'n')
		j = 1;
	else if (reason[0] == 'r')
		j = reason[1] == 'u' ? 0 : 2;
	else
		j = reason[2] == 'a' ? 3 : 4;
	env->answers->n[i][j]++;
}

/* ,"source":"S","reason":"R" (names from check_source_names and
 * check_reason_names, checkop.c). */
static void
check_source_reason(struct buf *b, const char *source, const char *reason)
{
	buf_lit(b, ",\"source\":\"");
	buf_add(b, source, strlen(source));
	buf_lit(b, "\",\"reason\":\"");
	buf_add(b, reason, strlen(reason));
	buf_lit(b, "\"");
}

/* A URL split by url_fast(): scheme, host and port need no escaping. */
struct check_url
check_url_fast(const struct url_view *v)
{
	return (struct check_url){ v->origin, v->origin_len, 1, v->path,
		v->path_len };
}

/* A URL split by url_parse(). */
struct check_url
check_url_parsed(const struct url *u)
{
	return (struct check_url){ u->origin, strlen(u->origin), 0, u->path,
		u->path_len };
}

/* A JSON string of s, copied as it is when it is known to be plain. */
static void
check_str(struct buf *b, const char *s, size_t len, int plain)
{
	if (!plain) {
		jw_str(b, s, len);
		return;
	}
	buf_lit(b, "\"");
	buf_add(b, s, len);
	buf_lit(b, "\"");
}

/* ,"version":"HEX16" (copied as kept), or null when unknown. */
static void
check_version(struct buf *b, const char *version)
{
	if (version[0] == '\0') {
		buf_lit(b, ",\"version\":null");
		return;
	}
	buf_lit(b, ",\"version\":\"");
	buf_add(b, version, VERSION_HEX);
	buf_lit(b, "\"");
}

/* See checkop.h. */
void
check_cause(struct buf *b, const struct cache_entry *e)
{
	const char *code = lifetime_cause_name(e->cause);

	if (e->fail_streak == 0 || e->cause == CAUSE_NONE) {
		buf_lit(b, "null");
		return;
	}
	buf_lit(b, "{\"code\":\"");
	buf_add(b, code, strlen(code));
	buf_lit(b, "\",\"message\":");
	if (e->last_error != NULL)
		jw_str(b, e->last_error, strlen(e->last_error));
	else
		check_str(b, code, strlen(code), 1);
	buf_lit(b, "}");
}

/*
 * ,"usage":..,"usage_from":[..] for URL u of an allowed answer (allowed)
 * from entry e (NULL: the URL /robots.txt itself): the preferences of the
 * rules; all unknown for an unavailable robots.txt and /robots.txt; null
 * for a disallowed URL.
 */
static void
check_usage(struct buf *b, const struct check_url *u, const char *agent,
    size_t agent_len, const struct cache_entry *e, int allowed)
{
	struct robots_usage us;

	if (!allowed) {
		jw_usage(b, NULL);
		return;
	}
	if (e != NULL && e->policy == CACHE_RULES)
		robots_usage(
		    e->robots, agent, agent_len, u->path, u->path_len, &us);
	else
		memset(&us, 0, sizeof(us)); /* all ROBOTS_PREF_UNKNOWN */
	jw_usage(b, &us);
}

/*
 * ,"tokens":{..}: URL u checked for each control token alone, keyed by its
 * product token in lower case, from entry e (NULL: the URL /robots.txt).
 * An unavailable robots.txt allows every token, an unreachable one none.
 */
static void
check_tokens(struct buf *b, const struct check_url *u,
    const struct check_ask *a, const struct cache_entry *e)
{
	struct robots_verdict v;
	size_t i;

	buf_lit(b, ",\"tokens\":{");
	for (i = 0; i < a->ntokens; i++) {
		v.allowed = e == NULL || e->policy != CACHE_DISALLOW_ALL;
		v.reason = ROBOTS_REASON_NO_RULE; /* no rule to name */
		if (e != NULL && e->policy == CACHE_RULES)
			robots_check(e->robots, a->tokens[i].p,
			    a->tokens[i].len, u->path, u->path_len, &v);
		if (i > 0)
			buf_lit(b, ",");
		jw_token(b, a->tokens[i].p, a->tokens[i].len, &v);
	}
	buf_lit(b, "}");
}

/* The members a check asks for beyond the verdict (usage, tokens). */
static void
check_more(struct buf *b, const struct check_url *u, const struct check_ask *a,
    const struct cache_entry *e, int allowed)
{
	if (a->usage)
		check_usage(b, u, a->agent, a->agent_len, e, allowed);
	if (a->tokens != NULL)
		check_tokens(b, u, a, e);
}

/*
 * The verdict for URL u and the check's agent from entry e, as the
 * answer's members after "ok" (without a leading comma), into b.
 */
void
check_verdict(struct buf *b, const struct check_env *env,
    const struct check_url *u, const struct check_ask *a,
    const struct cache_entry *e, const char *source)
{
	struct robots_verdict v = { .allowed = 1, .crawl_delay = -1 };
	const char *reason = "unavailable";
	double expires = cache_expires_in(env->cache, e);

	if (e->policy == CACHE_RULES) {
		robots_check(e->robots, a->agent, a->agent_len, u->path,
		    u->path_len, &v);
		reason = robots_reason_name(v.reason);
	} else if (e->policy == CACHE_DISALLOW_ALL) {
		v.allowed = 0;
		reason = "unreachable";
	}
	if (v.allowed)
		buf_lit(b, "\"allowed\":true,\"origin\":");
	else
		buf_lit(b, "\"allowed\":false,\"origin\":");
	check_str(b, u->origin, u->origin_len, u->origin_plain);
	check_source_reason(b, source, reason);
	check_count(env, source, reason);
	if (env->answers != NULL)
		env->answers->verdicts[!v.allowed]++;
	buf_lit(b, ",\"http_status\":");
	if (e->http_status > 0)
		jw_int(b, e->http_status);
	else
		buf_lit(b, "null");
	buf_lit(b, ",\"rule\":");
	if (e->policy == CACHE_RULES && v.reason == ROBOTS_REASON_RULE) {
		buf_lit(b, "{\"directive\":\"");
		buf_add(b, robots_directive_name(v.rule.directive),
		    strlen(robots_directive_name(v.rule.directive)));
		buf_lit(b, "\",\"pattern\":");
		jw_str(b, v.rule.pattern, v.rule.pattern_len);
		buf_lit(b, ",\"line\":");
		jw_int(b, v.rule.line);
		buf_lit(b, "}");
	} else
		buf_lit(b, "null");
	buf_lit(b, ",\"crawl_delay\":");
	if (v.crawl_delay >= 0)
		jw_real(b, v.crawl_delay);
	else
		buf_lit(b, "null");
	buf_lit(b, ",\"expires_in\":");
	jw_int(b, llround(expires));
	check_version(b, e->version);
	if (e->policy == CACHE_DISALLOW_ALL) {
		buf_lit(b, ",\"cause\":");
		check_cause(b, e);
	}
	if (a->usage || a->tokens != NULL)
		check_more(b, u, a, e, v.allowed);
}

/* The fields for the URL /robots.txt itself: always allowed, no fetch. */
void
check_robots_txt_fields(struct buf *b, const struct check_env *env,
    const struct check_url *u, const struct check_ask *a)
{
	buf_lit(b, "\"allowed\":true,\"origin\":");
	check_str(b, u->origin, u->origin_len, u->origin_plain);
	buf_lit(b, ",\"source\":\"cache\",\"reason\":\"robots_txt\","
	           "\"http_status\":null,\"rule\":null,\"crawl_delay\":null,"
	           "\"expires_in\":null,\"version\":null");
	check_count(env, "cache", "robots_txt");
	if (env->answers != NULL)
		env->answers->verdicts[0]++;
	if (a->usage || a->tokens != NULL)
		check_more(b, u, a, NULL, 1);
}

/* ,"ok":true, or ,"ok":false, before an answer's fields. */
void
check_ok(struct buf *b, int ok)
{
	if (ok)
		buf_lit(b, ",\"ok\":true,");
	else
		buf_lit(b, ",\"ok\":false,");
}

/* {"url":URL,"ok":B, the start of a batch's row. */
void
check_row_begin(struct buf *b, const struct wire_str *url, int ok)
{
	buf_lit(b, "{\"url\":");
	check_str(b, url->p, url->len, url->plain);
	check_ok(b, ok);
}

/*
 * The verdict for u into b when its origin is settled in the cache (a hit
 * or a stale copy); 0 with nothing written or counted for /robots.txt or
 * when the check needs the full way (a miss). With a memo (the rows of a
 * batch), an origin like the last row's is not looked up again.
 */
int
check_cached_verdict(struct buf *b, const struct check_env *env,
    const struct check_url *u, const struct check_ask *a, struct check_memo *m)
{
	const struct cache_entry *e;
	enum cache_status st;

	if (strcmp(u->path, "/robots.txt") == 0)
		return 0;
	if (m != NULL && m->e != NULL && strcmp(m->e->origin, u->origin) == 0)
		st = cache_check_again(env->cache, m->e, &e);
	else
		st = cache_check_cached(env->cache, u->origin, &e);
	if (m != NULL)
		m->e = e; /* NULL on a miss */
	if (st == CACHE_MISS)
		return 0;
	check_verdict(b, env, u, a, e, st == CACHE_HIT ? "cache" : "stale");
	return 1;
}
