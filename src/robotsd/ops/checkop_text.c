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
#include "ops/tdmres.h"

/* Each name once: the tables of names and of their lengths. */
#define CHECK_SOURCE_NAMES(X) X("cache") X("fetched") X("stale") X("shared")
#define CHECK_REASON_NAMES(X)                                                  \
	X("rule")                                                              \
	X("no_rule")                                                           \
	X("robots_txt")                                                        \
	X("unavailable")                                                       \
	X("unreachable")
#define CHECK_NAME(s) s,
#define CHECK_NAME_LEN(s) sizeof(s) - 1,

const char *const check_source_names[CHECK_SOURCES] = { CHECK_SOURCE_NAMES(
    CHECK_NAME) };
const char *const check_reason_names[CHECK_REASONS] = { CHECK_REASON_NAMES(
    CHECK_NAME) };
static const size_t check_source_lens[CHECK_SOURCES] = { CHECK_SOURCE_NAMES(
    CHECK_NAME_LEN) };
static const size_t check_reason_lens[CHECK_REASONS] = { CHECK_REASON_NAMES(
    CHECK_NAME_LEN) };

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

/* "source":"S","reason":"R" */
static void
check_source_reason(
    struct jw *w, enum check_source source, enum check_reason reason)
{
	jw_kplain(
	    w, "source", check_source_names[source], check_source_lens[source]);
	jw_kplain(
	    w, "reason", check_reason_names[reason], check_reason_lens[reason]);
}

/* A JSON string of s, copied as it is when it is known to be plain. */
static void
check_str(struct jw *w, const char *s, size_t len, int plain)
{
	if (plain)
		jw_vplain(w, s, len);
	else
		jw_vstr(w, s, len);
}

/* "version":"HEX16" (copied as kept), or null when unknown. */
static void
check_version(struct jw *w, const char *version)
{
	if (version[0] == '\0')
		jw_knull(w, "version");
	else
		jw_kplain(w, "version", version, VERSION_HEX);
}

/* See checkop.h. */
void
check_cause(struct jw *w, const struct cache_entry *e)
{
	const char *code = lifetime_cause_name(e->cause);

	if (e->fail_streak == 0 || e->cause == CAUSE_NONE) {
		jw_vnull(w);
		return;
	}
	jw_obj(w);
	jw_kplain(w, "code", code, strlen(code));
	if (e->last_error != NULL)
		jw_kstr(w, "message", e->last_error, strlen(e->last_error));
	else
		jw_kplain(w, "message", code, strlen(code));
	jw_end(w);
}

/*
 * ,"usage":..,"usage_from":[..] for URL u of an allowed answer (allowed)
 * from entry e (NULL: the URL /robots.txt itself): the preferences of the
 * rules; all unknown for an unavailable robots.txt and /robots.txt; null
 * for a disallowed URL.
 */
static void
check_usage(struct jw *w, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e, const struct tdm_answer *tdm, int allowed)
{
	struct robots_usage us;
	struct page_prefs pp;

	if (!allowed) {
		jw_usage(w, NULL);
		return;
	}
	if (e != NULL && e->policy == CACHE_RULES)
		robots_usage(e->robots, a->agent, a->agent_len, u->path,
		    u->path_len, &us);
	else
		memset(&us, 0, sizeof(us)); /* all ROBOTS_PREF_UNKNOWN */
	if (a->page == NULL) {
		jw_usage_tdm(w, &us, NULL, tdm);
		return;
	}
	if (page_prefs(a->page, &pp) == -1) {
		w->b->state = BUF_NOMEM;
		return;
	}
	page_prefs_combine(&pp, &us);
	jw_usage_tdm(w, &us, &pp, tdm);
	page_prefs_clear(&pp);
}

/*
 * ,"tokens":{..}: URL u checked for each control token alone, keyed by its
 * product token in lower case, from entry e (NULL: the URL /robots.txt).
 * An unavailable robots.txt allows every token, an unreachable one none.
 */
static void
check_tokens(struct jw *w, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e)
{
	struct robots_verdict v;
	size_t i;

	jw_kobj(w, "tokens");
	for (i = 0; i < a->ntokens; i++) {
		v.allowed = e == NULL || e->policy != CACHE_DISALLOW_ALL;
		v.reason = ROBOTS_REASON_NO_RULE; /* no rule to name */
		if (e != NULL && e->policy == CACHE_RULES)
			robots_check(e->robots, a->tokens[i].p,
			    a->tokens[i].len, u->path, u->path_len, &v);
		jw_token(w, a->tokens[i].p, a->tokens[i].len, &v);
	}
	jw_end(w);
}

/*
 * ,"robots_tag":..,"evidence":.. of a check with "page", from entry e
 * (NULL: the URL /robots.txt itself, no version).
 */
static void
check_page(struct jw *w, const struct check_ask *a, const struct cache_entry *e,
    const char *tdm_version, int allowed)
{
	struct page_tags t;
	char hex[VERSION_HEX + 1];

	if (!allowed)
		jw_robots_tag(w, NULL);
	else if (page_tags(a->page, a->agent, a->agent_len, &t) == -1)
		w->b->state = BUF_NOMEM;
	else
		jw_robots_tag(w, &t);
	if (allowed)
		page_tags_clear(&t);
	if (page_evidence(a->page, hex) == -1)
		w->b->state = BUF_NOMEM;
	else
		jw_evidence_tdm(
		    w, e != NULL ? e->version : NULL, tdm_version, hex);
}

/*
 * The members a check asks for beyond the verdict (usage, tokens, page),
 * after the verdict's, into the open object of w.
 */
static void
check_more(struct jw *w, const struct url_view *u, const struct check_ask *a,
    const struct cache_entry *e, int allowed)
{
	struct tdm_answer ta;
	const struct tdm_answer *tdm = NULL;
	const char *tdm_version = NULL;

	if (a->tdm && allowed)
		tdm =
		    tdm_answer_of(a->tdm_cache, u, a->page, &ta, &tdm_version);
	if (a->usage)
		check_usage(w, u, a, e, tdm, allowed);
	if (a->tokens != NULL)
		check_tokens(w, u, a, e);
	if (a->tdm)
		jw_tdm(w, tdm, tdm_version);
	if (a->page != NULL)
		check_page(w, a, e, tdm_version, allowed);
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
 * "rule": the rule that decided v, or null (none without rules), and
 * "crawl_delay": v's, or null; the two nulls in one copy.
 */
static void
check_rule_delay(
    struct jw *w, const struct cache_entry *e, const struct robots_verdict *v)
{
	int rule = e->policy == CACHE_RULES && v->reason == ROBOTS_REASON_RULE;

	if (!rule && v->crawl_delay < 0) {
		jw_kvlit2(w, "rule", "null", "crawl_delay", "null");
		return;
	}
	if (rule)
		jw_krule(w, v);
	else
		jw_knull(w, "rule");
	if (v->crawl_delay >= 0)
		jw_kreal(w, "crawl_delay", v->crawl_delay);
	else
		jw_knull(w, "crawl_delay");
}

/*
 * The verdict for URL u (split; plain as robots_url's) and the check's
 * agent from entry e, as the answer's members after "ok", into the open
 * object of w.
 */
void
check_verdict(struct jw *w, const struct check_run *r, const struct url_view *u,
    int plain, const struct cache_entry *e, enum check_source source)
{
	struct robots_verdict v = { .allowed = 1, .crawl_delay = -1 };
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
	/* "ok" and "allowed" in one copy: the hot path of every answer */
	if (v.allowed)
		jw_kvlit2(w, "ok", "true", "allowed", "true");
	else
		jw_kvlit2(w, "ok", "true", "allowed", "false");
	if (plain) /* one room check for key and value */
		jw_kplain(w, "origin", u->origin, u->origin_len);
	else {
		jw_key(w, "origin");
		jw_vstr(w, u->origin, u->origin_len);
	}
	check_source_reason(w, source, reason);
	check_count(r->env, source, reason, v.allowed);
	jw_kint_or_null(w, "http_status", e->http_status);
	check_rule_delay(w, e, &v);
	jw_kint(w, "expires_in", llround(expires));
	check_version(w, e->version);
	if (e->policy == CACHE_DISALLOW_ALL) {
		jw_key(w, "cause");
		check_cause(w, e);
	}
	if (a->usage || a->tokens != NULL || a->page != NULL || a->tdm)
		check_more(w, u, a, e, v.allowed);
}

/* The fields for the URL /robots.txt itself: always allowed, no fetch. */
void
check_robots_txt_fields(
    struct jw *w, const struct check_run *r, const struct robots_url *url)
{
	jw_kbool(w, "allowed", 1);
	jw_key(w, "origin");
	check_str(w, url->v.origin, url->v.origin_len, url->plain);
	check_source_reason(w, CHECK_CACHE, CHECK_ROBOTS_TXT);
	jw_knull(w, "http_status");
	jw_knull(w, "rule");
	jw_knull(w, "crawl_delay");
	jw_knull(w, "expires_in");
	jw_knull(w, "version");
	check_count(r->env, CHECK_CACHE, CHECK_ROBOTS_TXT, 1);
	if (r->ask.usage || r->ask.tokens != NULL || r->ask.page != NULL ||
	    r->ask.tdm)
		check_more(w, &url->v, &r->ask, NULL, 1);
}

/* A miss with "wait":false: the fetch runs in the background. */
void
check_pending_fields(struct jw *w, const struct robots_url *url)
{
	jw_kbool(w, "pending", 1);
	jw_key(w, "origin");
	check_str(w, url->v.origin, url->v.origin_len, url->plain);
}

/* "id": any JSON from the full decoder, an integer, or null. */
static void
check_id(struct jw *w, const struct wire_check *c)
{
	jw_key(w, "id");
	if (c->json_id != NULL)
		jw_vjson(w, c->json_id);
	else if (c->has_id)
		jw_vint(w, c->id);
	else
		jw_vnull(w);
}

/* See checkop_int.h. */
void
check_open(struct jw *w, const struct check_run *r, const struct wire_str *url)
{
	if (r->batch) {
		jw_obj_key(w, "url");
		check_str(w, url->p, url->len, url->plain);
	} else {
		jw_obj(w);
		check_id(w, r->req);
	}
}

/* See checkop_int.h. */
void
check_begin(
    struct jw *w, const struct check_run *r, const struct wire_str *url, int ok)
{
	check_open(w, r, url);
	jw_kbool(w, "ok", ok);
}

void
check_results_begin(struct jw *w, const struct wire_check *c)
{
	jw_obj(w);
	check_id(w, c);
	jw_kvlit(w, "ok", "true");
	jw_karr(w, "results");
}

void
check_error_object(struct jw *w, const struct check_run *r,
    const struct wire_str *url, enum proto_err err, const char *msg)
{
	check_begin(w, r, url, 0);
	proto_error_member(w, err, msg);
	jw_end(w);
}

void
check_error_line(struct buf *b, const struct wire_check *c, enum proto_err err,
    const char *msg)
{
	struct jw w;

	jw_init(&w, b);
	jw_obj(&w);
	check_id(&w, c);
	jw_kbool(&w, "ok", 0);
	proto_error_member(&w, err, msg);
	jw_end(&w);
	buf_lit(b, "\n");
}
