/*
 * robots_prefs.c: the Content-Usage and Content-Signal value readers
 * (robots_prefs.h), run once per line when a ruleset is compiled.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "robots_prefs.h"
#include "sfv.h"

/* Whether s (n bytes) is the literal lit, case-sensitively. */
static int
robots_prefs_is(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* Nodes kept on the stack; a longer Dictionary is parsed into the heap. */
#define USAGE_NODES 32

void
robots_pref_read_usage(const char *v, size_t n, struct pref_read *out)
{
	struct sfv_node stack[USAGE_NODES], *nodes = stack;
	size_t count, i;
	int purpose;

	memset(out, 0, sizeof(*out));
	if (n == 0 ||
	    robots_sfv_parse_dict(v, n, nodes, USAGE_NODES, &count) != 0 ||
	    count == 0) {
		out->warn |= PREF_W_PARSE;
		return;
	}
	if (count > USAGE_NODES &&
	    ((nodes = malloc(count * sizeof(*nodes))) == NULL ||
	        robots_sfv_parse_dict(v, n, nodes, count, &count) != 0)) {
		free(nodes); /* out of memory: nothing is known */
		out->warn |= PREF_W_PARSE;
		return;
	}
	for (i = 0; i < count; i++) {
		if (nodes[i].role != SFV_MEMBER)
			continue;
		if (robots_prefs_is(nodes[i].key, nodes[i].key_len, "train-ai"))
			purpose = ROBOTS_PURPOSE_TRAIN_AI;
		else if (robots_prefs_is(
		             nodes[i].key, nodes[i].key_len, "search"))
			purpose = ROBOTS_PURPOSE_SEARCH;
		else if (robots_prefs_is(
		             nodes[i].key, nodes[i].key_len, "ai-use"))
			purpose = ROBOTS_PURPOSE_AI_USE;
		else {
			out->warn |= PREF_W_LABEL;
			continue;
		}
		if (nodes[i].type == SFV_TOKEN &&
		    robots_prefs_is(nodes[i].s, nodes[i].len, "y"))
			out->pref[purpose] = ROBOTS_PREF_ALLOWED;
		else if (nodes[i].type == SFV_TOKEN &&
		         robots_prefs_is(nodes[i].s, nodes[i].len, "n"))
			out->pref[purpose] = ROBOTS_PREF_DISALLOWED;
		else {
			out->pref[purpose] = ROBOTS_PREF_UNKNOWN;
			out->warn |= PREF_W_NONSTANDARD;
		}
	}
	if (nodes != stack)
		free(nodes);
}

static int
robots_prefs_is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static int
robots_prefs_is_keych(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* One member s[0..n), trimmed: KEY *WS "=" *WS VALUE into out. */
static void
robots_prefs_signal_member(const char *s, size_t n, struct pref_read *out)
{
	size_t k = 0, i, vs;
	int purpose;

	while (k < n && robots_prefs_is_keych(s[k]))
		k++;
	for (i = k; i < n && robots_prefs_is_ws(s[i]); i++)
		;
	if (k == 0 || i == n || s[i] != '=') {
		out->warn |= PREF_W_PARSE;
		return;
	}
	for (i++; i < n && robots_prefs_is_ws(s[i]); i++)
		;
	for (vs = i; i < n && s[i] > 0x20 && s[i] < 0x7f; i++)
		;
	if (vs == n || i != n) {
		out->warn |= PREF_W_PARSE;
		return;
	}
	if (ascii_is_lit(s, k, "search"))
		purpose = ROBOTS_PURPOSE_SEARCH;
	else if (ascii_is_lit(s, k, "ai-input"))
		purpose = ROBOTS_PURPOSE_AI_INPUT;
	else if (ascii_is_lit(s, k, "ai-train"))
		purpose = ROBOTS_PURPOSE_TRAIN_AI;
	else if (ascii_is_lit(s, k, "use"))
		return; /* known (use=reference), no purpose: no warning */
	else {
		out->warn |= PREF_W_LABEL;
		return;
	}
	if (ascii_is_lit(s + vs, n - vs, "yes"))
		out->pref[purpose] = ROBOTS_PREF_ALLOWED;
	else if (ascii_is_lit(s + vs, n - vs, "no"))
		out->pref[purpose] = ROBOTS_PREF_DISALLOWED;
	else {
		out->pref[purpose] = ROBOTS_PREF_UNKNOWN;
		out->warn |= PREF_W_NONSTANDARD;
	}
}

void
robots_pref_read_signal(const char *v, size_t n, struct pref_read *out)
{
	const char *s = v, *end = v + n, *e;
	size_t m;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		out->warn |= PREF_W_PARSE; /* says nothing */
	while (s < end) {
		if ((e = memchr(s, ',', (size_t)(end - s))) == NULL)
			e = end;
		while (s < e && robots_prefs_is_ws(*s))
			s++;
		m = (size_t)(e - s);
		while (m > 0 && robots_prefs_is_ws(s[m - 1]))
			m--;
		if (m > 0)
			robots_prefs_signal_member(s, m, out);
		s = e + 1;
	}
}
