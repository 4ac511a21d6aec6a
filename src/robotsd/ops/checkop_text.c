/*
 * checkop_text.c: a check's answer as text: the members after "ok" for a
 * URL from its cache entry (written straight into a buffer, as jansson
 * would write them), the start of an answer and of a batch's row, error
 * objects, and the counting of each verdict by source and reason, whose
 * names are looked up only here, as they are written.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "ops/checkop_int.h"
#include "wire/jsonw.h"
#include "wire/page.h"
#include "wire/usagew.h"
#include "cache/lifetime.h"

const char *const check_source_names[CHECK_SOURCES] = { "cache", "fetched",
	"stale", "shared" };
const char *const check_reason_names[CHECK_REASONS] = { "rule", "no_rule",
	"robots_txt", "unavailable", "unreachable" };

/* Count one verdict by its source and reason. */
static void
check_count(const struct check_env *env, enum check_source source,
    enum check_reason reason, int allowed)
{
	if (env->answers == NULL)
		return;
	env->answers->n[source][reason]++;
	env->answers->verdicts[!allowed]++;
}

/* ,"source":"S","reason":"R" */
static void
check_source_reason(
    struct buf *b, enum check_source source, enum check_reason reason)
{
	const char *s = check_source_names[source];
	const char *r = check_reason_names[reason];

	buf_lit(b, ",\"source\":\"");
	buf_add(b, s, strlen(s));
	buf_lit(b, "\",\"reason\":\"");
	buf_add(b, r, strlen(r));
	buf_lit(b, "\"");
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
check_usage(struct buf *b, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e, int allowed)
{
	struct robots_usage us;
	struct page_prefs pp;
	struct jw w;

	jw_init_in_obj(&w, b, 1);
	if (!allowed) {
		jw_usage(&w, NULL);
		return;
	}
	if (e != NULL && e->policy == CACHE_RULES)
		robots_usage(e->robots, a->agent, a->agent_len, u->path,
		    u->path_len, &us);
	else
		memset(&us, 0, sizeof(us)); /* all ROBOTS_PREF_UNKNOWN */
	if (a->page == NULL) {
		jw_usage(&w, &us);
		return;
	}
	if (page_prefs(a->page, &pp) == -1) {
		b->state = BUF_NOMEM;
		return;
	}
	page_prefs_combine(&pp, &us);
	jw_usage_page(&w, &us, &pp);
	page_prefs_clear(&pp);
}

/*
 * ,"tokens":{..}: URL u checked for each control token alone, keyed by its
 * product token in lower case, from entry e (NULL: the URL /robots.txt).
 * An unavailable robots.txt allows every token, an unreachable one none.
 */
static void
check_tokens(struct buf *b, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e)
{
	struct robots_verdict v;
	struct jw w;
	size_t i;

	buf_lit(b, ",\"tokens\":{");
	for (i = 0; i < a->ntokens; i++) {
		v.allowed = e == NULL || e->policy != CACHE_DISALLOW_ALL;
		v.reason = ROBOTS_REASON_NO_RULE; /* no rule to name */
		if (e != NULL && e->policy == CACHE_RULES)
			robots_check(e->robots, a->tokens[i].p,
			    a->tokens[i].len, u->path, u->path_len, &v);
		jw_init_in_obj(&w, b, i > 0);
		jw_token(&w, a->tokens[i].p, a->tokens[i].len, &v);
	}
	buf_lit(b, "}");
}

/*
 * ,"robots_tag":..,"evidence":.. of a check with "page", from entry e
 * (NULL: the URL /robots.txt itself, no version).
 */
static void
check_page(struct buf *b, const struct check_ask *a,
    const struct cache_entry *e, int allowed)
{
	struct page_tags t;
	char hex[VERSION_HEX + 1];
	struct jw w;

	jw_init_in_obj(&w, b, 1);
	if (!allowed)
		jw_robots_tag(&w, NULL);
	else if (page_tags(a->page, a->agent, a->agent_len, &t) == -1)
		b->state = BUF_NOMEM;
	else
		jw_robots_tag(&w, &t);
	if (allowed)
		page_tags_clear(&t);
	if (page_evidence(a->page, hex) == -1)
		b->state = BUF_NOMEM;
	else
		jw_evidence(&w, e != NULL ? e->version : NULL, hex);
}

/* The members a check asks for beyond the verdict (usage, tokens, page). */
static void
check_more(struct buf *b, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e, int allowed)
{
	if (a->usage)
		check_usage(b, u, a, e, allowed);
	if (a->tokens != NULL)
		check_tokens(b, u, a, e);
	if (a->page != NULL)
		check_page(b, a, e, allowed);
}

/* The reason librobots gave for a verdict of rules. */
static enum check_reason
check_rules_reason(enum robots_reason r)
{
	switch (r) {
	case ROBOTS_REASON_RULE:
		return CHECK_RULE;
	case ROBOTS_REASON_NO_RULE:
		return CHECK_NO_RULE;
	case ROBOTS_REASON_ROBOTS_TXT:
		break;
	}
	return CHECK_ROBOTS_TXT;
}

/*
 * The verdict for URL u and the check's agent from entry e, as the
 * answer's members after "ok" (without a leading comma), into b.
 */
void
check_verdict(struct buf *b, const struct check_run *r,
    const struct robots_url *url, const struct cache_entry *e,
    enum check_source source)
{
	struct robots_verdict v = { .allowed = 1, .crawl_delay = -1 };
	const struct url_view *u = &url->v;
	const struct check_ask *a = &r->ask;
	enum check_reason reason = CHECK_UNAVAILABLE;
	double expires = cache_expires_in(r->env->cache, e);

	if (e->policy == CACHE_RULES) {
		robots_check(e->robots, a->agent, a->agent_len, u->path,
		    u->path_len, &v);
		reason = check_rules_reason(v.reason);
	} else if (e->policy == CACHE_DISALLOW_ALL) {
		v.allowed = 0;
		reason = CHECK_UNREACHABLE;
	}
	if (v.allowed)
		buf_lit(b, "\"allowed\":true,\"origin\":");
	else
		buf_lit(b, "\"allowed\":false,\"origin\":");
	check_str(b, u->origin, u->origin_len, url->plain);
	check_source_reason(b, source, reason);
	check_count(r->env, source, reason, v.allowed);
	buf_lit(b, ",\"http_status\":");
	jw_int_or_null(b, e->http_status);
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
	if (a->usage || a->tokens != NULL || a->page != NULL)
		check_more(b, u, a, e, v.allowed);
}

/* The fields for the URL /robots.txt itself: always allowed, no fetch. */
void
check_robots_txt_fields(
    struct buf *b, const struct check_run *r, const struct robots_url *url)
{
	buf_lit(b, "\"allowed\":true,\"origin\":");
	check_str(b, url->v.origin, url->v.origin_len, url->plain);
	check_source_reason(b, CHECK_CACHE, CHECK_ROBOTS_TXT);
	buf_lit(b, ",\"http_status\":null,\"rule\":null,\"crawl_delay\":null,"
	           "\"expires_in\":null,\"version\":null");
	check_count(r->env, CHECK_CACHE, CHECK_ROBOTS_TXT, 1);
	if (r->ask.usage || r->ask.tokens != NULL || r->ask.page != NULL)
		check_more(b, &url->v, &r->ask, NULL, 1);
}

/* A miss with "wait":false: the fetch runs in the background. */
void
check_pending_fields(struct buf *b, const struct robots_url *url)
{
	buf_lit(b, "\"pending\":true,\"origin\":");
	check_str(b, url->v.origin, url->v.origin_len, url->plain);
}

/* The check's id: any JSON from the full decoder, an integer, or null. */
static void
check_id(struct buf *b, const struct wire_check *c)
{
	if (c->json_id != NULL)
		jw_json(b, c->json_id);
	else if (c->has_id)
		jw_int(b, c->id);
	else
		buf_lit(b, "null");
}

/* See checkop_int.h. */
void
check_begin(struct buf *b, const struct check_run *r,
    const struct wire_str *url, int ok)
{
	if (r->batch) {
		buf_lit(b, "{\"url\":");
		check_str(b, url->p, url->len, url->plain);
	} else {
		buf_lit(b, "{\"id\":");
		check_id(b, r->req);
	}
	if (ok)
		buf_lit(b, ",\"ok\":true,");
	else
		buf_lit(b, ",\"ok\":false,");
}

void
check_results_begin(struct buf *b, const struct wire_check *c)
{
	buf_lit(b, "{\"id\":");
	check_id(b, c);
	buf_lit(b, ",\"ok\":true,\"results\":[");
}

void
check_error_object(struct buf *b, const struct check_run *r,
    const struct wire_str *url, enum proto_err err, const char *msg)
{
	struct jw w;

	check_begin(b, r, url, 0);
	jw_init_in_obj(&w, b, 0);
	proto_error_member(&w, err, msg);
	buf_lit(b, "}");
}

void
check_error_line(struct buf *b, const struct wire_check *c, enum proto_err err,
    const char *msg)
{
	struct jw w;

	buf_lit(b, "{\"id\":");
	check_id(b, c);
	buf_lit(b, ",\"ok\":false,");
	jw_init_in_obj(&w, b, 0);
	proto_error_member(&w, err, msg);
	buf_lit(b, "}\n");
}
