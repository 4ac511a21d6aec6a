/*
 * usagew.c: the usage and tokens answer members and the warnings of a
 * ruleset (usagew.h).
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ascii.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/page.h"
#include "wire/usagew.h"
#include "robots/tdmrep.h"
#include "wire/tdmrep_json.h"

/* "N": an integer as a JSON string, the next value of w. */
static void
jw_int_str(struct jw *w, int64_t v)
{
	char s[24];
	int n;

	n = snprintf(s, sizeof(s), "\"%lld\"", (long long)v);
	jw_vraw(w, s, (size_t)n);
}

/* A static name as a JSON string, the next value (names need no escaping). */
static void
name(struct jw *w, const char *s)
{
	jw_vplain(w, s, strlen(s));
}

/* One statement of usage_from, an element of the open array. */
static void
jw_stmt(struct jw *w, const struct robots_pref_stmt *s, int with_source)
{
	jw_obj_key(w, "directive");
	name(w, robots_pref_kind_name(s->kind));
	jw_kstr(w, "pattern", s->pattern, s->pattern_len);
	jw_kint(w, "line", s->line);
	jw_kstr(w, "value", s->value, s->value_len);
	if (s->kind == ROBOTS_CONTENT_SIGNAL && s->file_scope)
		jw_klit(w, "scope", "\"file\"");
	else if (s->kind == ROBOTS_CONTENT_SIGNAL)
		jw_klit(w, "scope", "\"group\"");
	if (with_source)
		jw_klit(w, "source", "\"robots.txt\"");
	jw_end(w);
}

/* A header statement of usage_from (no pattern, no line): an element. */
static void
jw_header_stmt(struct jw *w, const char *directive, const struct page_pref *p)
{
	if (!p->present)
		return;
	jw_obj_key(w, "directive");
	name(w, directive);
	jw_kvlit2(w, "pattern", "null", "line", "null");
	jw_kstr(w, "value", p->value, p->len);
	jw_klit(w, "source", "\"header\"");
	jw_end(w);
}

void
jw_usage_tdm(struct jw *w, const struct robots_usage *u,
    const struct page_prefs *page, const struct tdm_answer *tdm)
{
	size_t i;

	if (u == NULL) {
		jw_kvlit2(w, "usage", "null", "usage_from", "[]");
		return;
	}
	jw_kobj(w, "usage");
	for (i = 0; i < ROBOTS_PURPOSES; i++) {
		const char *k = robots_purpose_name((enum robots_purpose)i);

		jw_key_name(w, k, strlen(k));
		name(w, robots_pref_name(u->pref[i]));
	}
	if (tdm != NULL) {
		jw_key(w, "tdm");
		name(w, robots_pref_name(robots_tdm_pref(tdm->reservation)));
	}
	jw_end(w);
	if (u->nfrom == 0 &&
	    (page == NULL || (!page->usage.present && !page->signal.present))) {
		jw_kvlit(w, "usage_from", "[]");
		return;
	}
	jw_karr(w, "usage_from");
	for (i = 0; i < u->nfrom && i < ROBOTS_USAGE_FROM_MAX; i++)
		jw_stmt(w, &u->from[i], page != NULL);
	if (page != NULL) {
		jw_header_stmt(w, "content-usage", &page->usage);
		jw_header_stmt(w, "content-signal", &page->signal);
	}
	jw_end(w);
}

void
jw_usage_page(
    struct jw *w, const struct robots_usage *u, const struct page_prefs *page)
{
	jw_usage_tdm(w, u, page, NULL);
}

void
jw_usage(struct jw *w, const struct robots_usage *u)
{
	jw_usage_page(w, u, NULL);
}

/* The valued rules of set: the "values" member of the open object. */
static void
jw_tag_values(struct jw *w, const struct robots_tag_set *s)
{
	char date[32];
	struct tm tm;
	time_t t;

	jw_key(w, "values");
	jw_obj(w);
	if (s->valued & RT_HAS_MAX_SNIPPET) {
		jw_key(w, "max-snippet");
		jw_int_str(w, s->max_snippet);
	}
	if (s->valued & RT_HAS_MAX_IMAGE_PREVIEW) {
		jw_key(w, "max-image-preview");
		name(w, robots_tag_preview_name(s->max_image_preview));
	}
	if (s->valued & RT_HAS_MAX_VIDEO_PREVIEW) {
		jw_key(w, "max-video-preview");
		jw_int_str(w, s->max_video_preview);
	}
	t = (time_t)s->unavailable_after;
	if ((s->valued & RT_HAS_UNAVAILABLE_AFTER) && gmtime_r(&t, &tm) &&
	    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0) {
		jw_key(w, "unavailable_after");
		name(w, date);
	}
	jw_end(w);
}

/*
 * A field name lowercased (header names and meta names are
 * case-insensitive): in low when it fits, else on the heap (the caller
 * frees it when it is not low); NULL when memory runs out.
 */
static char *
jw_tag_lower(const char *f, size_t n, char *low, size_t lowsz)
{
	char *p = n <= lowsz ? low : malloc(n);
	size_t j;

	if (p == NULL)
		return NULL;
	for (j = 0; j < n; j++)
		p[j] = (char)ascii_lower((unsigned char)f[j]);
	return p;
}

/* The "from" member of robots_tag, in the open object. */
static void
jw_tag_from(struct jw *w, const struct page_tags *t)
{
	char low[64], *f;
	size_t i, n;

	jw_key(w, "from");
	jw_arr(w);
	for (i = 0; i < t->nfrom; i++) {
		n = t->from[i].field_len;
		f = jw_tag_lower(t->from[i].field, n, low, sizeof(low));
		jw_obj(w);
		if (t->from[i].meta)
			jw_klit(w, "source", "\"meta\"");
		else
			jw_klit(w, "source", "\"header\"");
		jw_kstr(w, "field", f != NULL ? f : t->from[i].field, n);
		if (f != low)
			free(f);
		jw_kstr(w, "value", t->from[i].value, t->from[i].value_len);
		jw_end(w);
	}
	jw_end(w);
}

void
jw_robots_tag(struct jw *w, const struct page_tags *t)
{
	const struct robots_tag_set *s;
	size_t i;

	if (t == NULL) {
		jw_knull(w, "robots_tag");
		return;
	}
	s = &t->set;
	jw_key(w, "robots_tag");
	jw_obj(w);
	jw_key(w, "rules");
	jw_arr(w);
	for (i = 0; i < RT_NRULES; i++)
		if (s->rules & (1u << i))
			name(w, robots_tag_rule_name((enum robots_tag_rule)i));
	for (i = 0; i < s->nunknown; i++)
		jw_vstr(w, s->unknown[i], strlen(s->unknown[i]));
	jw_end(w);
	jw_tag_values(w, s);
	jw_tag_from(w, t);
	jw_end(w);
}

/* A version as the next value: a string, or null when "" or NULL. */
static void
jw_version_or_null(struct jw *w, const char *v)
{
	if (v != NULL && v[0] != '\0')
		name(w, v);
	else
		jw_vnull(w);
}

void
jw_evidence_tdm(
    struct jw *w, const char *robots, const char *tdmrep, const char *page)
{
	jw_key(w, "evidence");
	jw_obj(w);
	jw_key(w, "robots");
	jw_version_or_null(w, robots);
	jw_key(w, "tdmrep");
	jw_version_or_null(w, tdmrep);
	jw_key(w, "page");
	name(w, page);
	jw_end(w);
}

/* The rest of a rule's object after its "directive": key, and its close. */
static void
jw_rule_rest(struct jw *w, const struct robots_verdict *v)
{
	/* robots_directive_name()'s two names, as literals (no strlen) */
	if (v->rule.directive == ROBOTS_ALLOW)
		jw_vlit(w, "\"allow\"");
	else
		jw_vlit(w, "\"disallow\"");
	jw_kstr(w, "pattern", v->rule.pattern, v->rule.pattern_len);
	jw_kint(w, "line", v->rule.line);
	jw_end(w);
}

void
jw_evidence(struct jw *w, const char *robots, const char *page)
{
	jw_evidence_tdm(w, robots, NULL, page);
}

void
jw_tdm(struct jw *w, const struct tdm_answer *a, const char *version)
{
	const char *from;

	if (a == NULL) {
		jw_knull(w, "tdm");
		return;
	}
	jw_key(w, "tdm");
	jw_obj(w);
	jw_key(w, "state");
	name(w, robots_tdm_state_name(a->state));
	if (a->reservation == 0 || a->reservation == 1)
		jw_kint(w, "reservation", a->reservation);
	else
		jw_knull(w, "reservation");
	if (a->policy != NULL)
		jw_kstr(w, "policy", a->policy, a->policy_len);
	else
		jw_knull(w, "policy");
	if (a->location != NULL)
		jw_kstr(w, "location", a->location, a->location_len);
	else
		jw_knull(w, "location");
	jw_key(w, "version");
	jw_version_or_null(w, version);
	if ((from = robots_tdm_from_name(a->from)) != NULL) {
		jw_key(w, "from");
		name(w, from);
	}
	jw_end(w);
}

void
jw_rule(struct jw *w, const struct robots_verdict *v)
{
	if (v->reason != ROBOTS_REASON_RULE) {
		jw_vnull(w);
		return;
	}
	jw_obj_key(w, "directive");
	jw_rule_rest(w, v);
}

void
jw_krule(struct jw *w, const struct robots_verdict *v)
{
	if (v->reason != ROBOTS_REASON_RULE) {
		jw_knull(w, "rule");
		return;
	}
	jw_kobj_key(w, "rule", "directive");
	jw_rule_rest(w, v);
}

void
jw_token(
    struct jw *w, const char *token, size_t len, const struct robots_verdict *v)
{
	char low[256];
	size_t i, n = 0;

	/* The product token: the [A-Za-z_-] run at its start, lower case. */
	while (n < len && n < sizeof(low) &&
	       (((token[n] | 0x20) >= 'a' && (token[n] | 0x20) <= 'z') ||
	           token[n] == '_' || token[n] == '-'))
		n++;
	for (i = 0; i < n; i++)
		low[i] = (char)ascii_lower((unsigned char)token[i]);
	jw_key_name(w, low, n); /* [a-z_-]: nothing to escape */
	if (v->allowed)
		jw_obj_kvlit(w, "allowed", "true");
	else
		jw_obj_kvlit(w, "allowed", "false");
	jw_krule(w, v);
	jw_end(w);
}

/* The warnings of tdmrep.json t: elements of the open array. */
static void
jw_tdmrep_warnings(struct jw *w, const struct tdmrep_file *t)
{
	const char *code;
	char text[256];
	uint32_t line;
	size_t i;

	i = 0;
	while (tdmrep_file_warning(t, i++, &code, &line, text, sizeof(text)) ==
	       0) {
		jw_obj(w);
		if (line > 0)
			jw_kint(w, "line", line);
		else
			jw_knull(w, "line");
		jw_kstr(w, "code", code, strlen(code));
		jw_kstr(w, "message", text, strlen(text));
		jw_klit(w, "resource", "\"tdmrep\"");
		jw_end(w);
	}
}

void
jw_warnings_tdm(
    struct jw *w, const struct robots *r, const struct tdmrep_file *t)
{
	struct robots_warning rw;
	size_t i;

	jw_arr(w);
	for (i = 0; r != NULL && i < robots_warning_count(r); i++) {
		robots_warning(r, i, &rw);
		jw_obj(w);
		jw_kint(w, "line", rw.line);
		jw_kstr(w, "code", rw.code, strlen(rw.code));
		jw_kstr(w, "message", rw.message, strlen(rw.message));
		jw_end(w);
	}
	if (t != NULL)
		jw_tdmrep_warnings(w, t);
	jw_end(w);
}

void
jw_warnings(struct jw *w, const struct robots *r)
{
	jw_warnings_tdm(w, r, NULL);
}

void
jw_kwarnings(struct jw *w, const struct robots *r)
{
	if (r == NULL || robots_warning_count(r) == 0) {
		jw_kvlit(w, "warnings", "[]");
		return;
	}
	jw_key(w, "warnings");
	jw_warnings(w, r);
}
