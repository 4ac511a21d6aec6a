/*
 * usagew.c: the usage and tokens answer members and the warnings of a
 * ruleset (usagew.h).
 */
#include <config.h>

#include <string.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/usagew.h"

/* A static name as a JSON string (names need no escaping). */
static void
name(struct buf *b, const char *s)
{
	buf_lit(b, "\"");
	buf_add(b, s, strlen(s));
	buf_lit(b, "\"");
}

void
jw_usage(struct buf *b, const struct robots_usage *u)
{
	const struct robots_pref_stmt *s;
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
		s = &u->from[i];
		if (i > 0)
			buf_lit(b, ",");
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
		buf_lit(b, "}");
	}
	buf_lit(b, "]");
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
