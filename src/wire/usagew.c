/*
 * usagew.c: the usage and tokens answer members and the warnings of a
 * ruleset (usagew.h).
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/page.h"
#include "wire/usagew.h"

/* "N": an integer as a JSON string. */
static void
jw_int_str(struct buf *b, int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "\"%lld\"", (long long)v);
	buf_add(b, s, strlen(s));
}

/* A static name as a JSON string (names need no escaping). */
static void
name(struct buf *b, const char *s)
{
	buf_lit(b, "\"");
	buf_add(b, s, strlen(s));
	buf_lit(b, "\"");
}

/* One statement of usage_from, with its source when a page was given. */
static void
jw_stmt(struct buf *b, const struct robots_pref_stmt *s, int with_source)
{
	buf_lit(b, "{\"directive\":");
	name(b, robots_pref_kind_name(s->kind));
	buf_lit(b, ",\"pattern\":");
	jw_str(b, s->pattern, s->pattern_len);
	buf_lit(b, ",\"line\":");
	jw_int(b, s->line);
	buf_lit(b, ",\"value\":");
	jw_str(b, s->value, s->value_len);
	if (s->kind == ROBOTS_CONTENT_SIGNAL && s->file_scope)
		buf_lit(b, ",\"scope\":\"file\"");
	else if (s->kind == ROBOTS_CONTENT_SIGNAL)
		buf_lit(b, ",\"scope\":\"group\"");
	if (with_source)
		buf_lit(b, ",\"source\":\"robots.txt\"");
	buf_lit(b, "}");
}

/* A header statement of usage_from: no pattern, no line. */
static void
jw_header_stmt(
    struct buf *b, const char *directive, const struct page_pref *p, int comma)
{
	if (!p->present)
		return;
	if (comma)
		buf_lit(b, ",");
	buf_lit(b, "{\"directive\":");
	name(b, directive);
	buf_lit(b, ",\"pattern\":null,\"line\":null,\"value\":");
	jw_str(b, p->value, p->len);
	buf_lit(b, ",\"source\":\"header\"}");
}

void
jw_usage_page(
    struct buf *b, const struct robots_usage *u, const struct page_prefs *page)
{
	size_t i;

	if (u == NULL) {
		buf_lit(b, ",\"usage\":null,\"usage_from\":[]");
		return;
	}
	buf_lit(b, ",\"usage\":{");
	for (i = 0; i < ROBOTS_PURPOSES; i++) {
		if (i > 0)
			buf_lit(b, ",");
		name(b, robots_purpose_name((enum robots_purpose)i));
		buf_lit(b, ":");
		name(b, robots_pref_name(u->pref[i]));
	}
	buf_lit(b, "},\"usage_from\":[");
	for (i = 0; i < u->nfrom && i < ROBOTS_USAGE_FROM_MAX; i++) {
		if (i > 0)
			buf_lit(b, ",");
		jw_stmt(b, &u->from[i], page != NULL);
	}
	if (page != NULL) {
		jw_header_stmt(b, "content-usage", &page->usage, i > 0);
		jw_header_stmt(b, "content-signal", &page->signal,
		    i > 0 || page->usage.present);
	}
	buf_lit(b, "]");
}

void
jw_usage(struct buf *b, const struct robots_usage *u)
{
	jw_usage_page(b, u, NULL);
}

/* The valued rules of set as the members of "values". */
static void
jw_tag_values(struct buf *b, const struct robots_tag_set *s)
{
	static const char *const previews[] = { "none", "standard", "large" };
	char date[32];
	struct tm tm;
	time_t t;
	int n = 0;

	buf_lit(b, ",\"values\":{");
	if (s->valued & RT_HAS_MAX_SNIPPET) {
		buf_lit(b, "\"max-snippet\":");
		jw_int_str(b, s->max_snippet);
		n++;
	}
	if (s->valued & RT_HAS_MAX_IMAGE_PREVIEW) {
		buf_add(b, ",", n++ > 0);
		buf_lit(b, "\"max-image-preview\":");
		name(b, previews[s->max_image_preview]);
	}
	if (s->valued & RT_HAS_MAX_VIDEO_PREVIEW) {
		buf_add(b, ",", n++ > 0);
		buf_lit(b, "\"max-video-preview\":");
		jw_int_str(b, s->max_video_preview);
	}
	t = (time_t)s->unavailable_after;
	if ((s->valued & RT_HAS_UNAVAILABLE_AFTER) && gmtime_r(&t, &tm) &&
	    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0) {
		buf_add(b, ",", n > 0);
		buf_lit(b, "\"unavailable_after\":");
		name(b, date);
	}
	buf_lit(b, "}");
}

/* The "from" list of robots_tag. */
static void
jw_tag_from(struct buf *b, const struct page_tags *t)
{
	char low[64];
	size_t i, j, n;

	buf_lit(b, ",\"from\":[");
	for (i = 0; i < t->nfrom; i++) {
		n = t->from[i].field_len;
		for (j = 0; j < n && j < sizeof(low); j++)
			low[j] = (char)(t->from[i].field[j] >= 'A' &&
			                        t->from[i].field[j] <= 'Z'
			                    ? t->from[i].field[j] | 0x20
			                    : t->from[i].field[j]);
		buf_add(b, ",", i > 0);
		if (t->from[i].meta)
			buf_lit(b, "{\"source\":\"meta\",\"field\":");
		else
			buf_lit(b, "{\"source\":\"header\",\"field\":");
		if (n <= sizeof(low))
			jw_str(b, low, n);
		else
			jw_str(b, t->from[i].field, n);
		buf_lit(b, ",\"value\":");
		jw_str(b, t->from[i].value, t->from[i].value_len);
		buf_lit(b, "}");
	}
	buf_lit(b, "]");
}

void
jw_robots_tag(struct buf *b, const struct page_tags *t)
{
	const struct robots_tag_set *s;
	size_t i;
	int n = 0;

	if (t == NULL) {
		buf_lit(b, ",\"robots_tag\":null");
		return;
	}
	s = &t->set;
	buf_lit(b, ",\"robots_tag\":{\"rules\":[");
	for (i = 0; i < RT_NRULES; i++)
		if (s->rules & (1u << i)) {
			buf_add(b, ",", n++ > 0);
			name(b, robots_tag_rule_name((enum robots_tag_rule)i));
		}
	for (i = 0; i < s->nunknown; i++) {
		buf_add(b, ",", n++ > 0);
		jw_str(b, s->unknown[i], strlen(s->unknown[i]));
	}
	buf_lit(b, "]");
	jw_tag_values(b, s);
	jw_tag_from(b, t);
	buf_lit(b, "}");
}

void
jw_evidence(struct buf *b, const char *robots, const char *page)
{
	buf_lit(b, ",\"evidence\":{\"robots\":");
	if (robots != NULL && robots[0] != '\0')
		name(b, robots);
	else
		buf_lit(b, "null");
	buf_lit(b, ",\"tdmrep\":null,\"page\":");
	name(b, page);
	buf_lit(b, "}");
}

void
jw_rule(struct buf *b, const struct robots_verdict *v)
{
	if (v->reason != ROBOTS_REASON_RULE) {
		buf_lit(b, "null");
		return;
	}
	buf_lit(b, "{\"directive\":");
	name(b, robots_directive_name(v->rule.directive));
	buf_lit(b, ",\"pattern\":");
	jw_str(b, v->rule.pattern, v->rule.pattern_len);
	buf_lit(b, ",\"line\":");
	jw_int(b, v->rule.line);
	buf_lit(b, "}");
}

void
jw_token(struct buf *b, const char *token, size_t len,
    const struct robots_verdict *v)
{
	char low[256];
	size_t i, n = 0;

	/* The product token: the [A-Za-z_-] run at its start, lower case. */
	while (n < len && n < sizeof(low) &&
	       (((token[n] | 0x20) >= 'a' && (token[n] | 0x20) <= 'z') ||
	           token[n] == '_' || token[n] == '-'))
		n++;
	for (i = 0; i < n; i++)
		low[i] =
		    (char)(token[i] >= 'A' && token[i] <= 'Z' ? token[i] | 0x20
		                                              : token[i]);
	jw_str(b, low, n);
	if (v->allowed)
		buf_lit(b, ":{\"allowed\":true,\"rule\":");
	else
		buf_lit(b, ":{\"allowed\":false,\"rule\":");
	jw_rule(b, v);
	buf_lit(b, "}");
}

void
jw_warnings(struct buf *b, const struct robots *r)
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
