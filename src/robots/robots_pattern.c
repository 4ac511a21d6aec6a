/*
 * robots_pattern.c: the compiled form of a path pattern, an allow or
 * disallow rule's (robots_parse.c) or a preference statement's
 * (robots_parse_prefs.c): percent-normalized (robots_pct.c), its ending
 * '$' an anchor and any other a literal "%24", "**" as "*", a trailing
 * '*' dropped, and the literal prefix before the first '*'. The matcher
 * (robots_match.c) matches what it makes.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "robots_parse_int.h"

/* Rewrite a normalized pattern o[0..k) in place; returns the new length. */
size_t
robots_pattern_tail(char *o, size_t k, struct trule *r)
{
	size_t i, j, dollars = 0;
	const char *star;

	r->anchored = k > 0 && o[k - 1] == '$';
	k -= r->anchored;
	if (memchr(o, '$', k) != NULL)
		for (i = 0; i < k; i++)
			dollars += o[i] == '$';
	/* A '$' before the end is a literal: "%24", as in a match path. */
	for (i = k, j = k + 2 * dollars, k = j; dollars > 0 && i-- > 0;) {
		if (o[i] == '$') {
			o[--j] = '4';
			o[--j] = '2';
			o[--j] = '%';
		} else
			o[--j] = o[i];
	}
	if ((star = memchr(o, '*', k)) != NULL) { /* "**" is "*" */
		for (i = j = (size_t)(star - o); i < k; i++)
			if (o[i] != '*' || j == 0 || o[j - 1] != '*')
				o[j++] = o[i];
		k = j;
	}
	if (k > 0 && o[k - 1] == '*') { /* a trailing '*' adds nothing */
		k--;
		r->anchored = 0;
	}
	star = memchr(o, '*', k);
	r->lit_len = (uint32_t)(star != NULL ? (size_t)(star - o) : k);
	r->comp_len = (uint32_t)k;
	return k;
}

size_t
robots_pattern_compile(const char *v, size_t n, char *o, struct trule *r)
{
	size_t k = robots_pct_normalize(v, n, o, 1);

	robots_pattern_tail(o, k, r);
	return k;
}
