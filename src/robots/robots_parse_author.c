/*
 * robots_parse_author.c: warnings for the file's author that look at the
 * whole file once it is parsed (contract, "Every signal, not only
 * robots.txt"), run by robots_prefs_attach() before the warnings are
 * laid out:
 *
 * pref_not_in_star_group: a Content-Usage or Content-Signal line in a
 * group that does not name '*' while some group does: only the group's
 * agents get it (a line pasted at the end of a file lands in its last
 * group).
 *
 * allow_disallow_tie: an Allow and a Disallow that apply to one agent
 * (the same group, or two groups naming the same token, or both '*') with
 * the same pattern after normalization, so with the same specificity: the
 * Allow wins (RFC 9309 section 2.2.2), the Disallow does nothing. Warned at
 * the Disallow's line, once. The index.html twins Google adds are not
 * lines of the file and take no part.
 *
 * pref_conflict: a Content-Usage and a Content-Signal statement of the
 * same group (a file-scope Content-Signal counting as part of every group)
 * with the same pattern after normalization (an absent PATH is '/') where
 * one allows and the other disallows train-ai or search, the purposes both
 * directives name: the most restrictive wins. Warned at the later line of
 * the two; at most CONFLICT_CHECKS pairs a file are compared.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "robots_int.h"
#include "robots_parse_int.h"

#define CONFLICT_CHECKS 4096

static void
robots_parse_author_not_in_star(struct parser *p)
{
	const struct robots_tgroup *g = p->groups.v;
	const struct tpref *s = p->prefs.v;
	size_t i;
	int star = 0;

	for (i = 0; i < p->groups.n && !star; i++)
		star = g[i].global;
	for (i = 0; star && i < p->prefs.n; i++)
		if (s[i].group != ROBOTS_NONE && !g[s[i].group].global)
			robots_parse_warn(p, s[i].line, RW_PREF_NOT_IN_STAR);
}

/* Whether groups x and y apply to one agent: the same, '*', a token. */
static int
robots_parse_author_share(const struct parser *p, uint32_t x, uint32_t y)
{
	const struct robots_tgroup *g = p->groups.v;
	const struct robots_tagent *a = p->agents.v;
	uint32_t i, k, xend, yend;

	if (x == y || (g[x].global && g[y].global))
		return 1;
	xend = g[x].agent_first + g[x].agent_count;
	yend = g[y].agent_first + g[y].agent_count;
	for (i = g[x].agent_first; i < xend; i++) {
		if (a[i].id == ROBOTS_NONE)
			continue;
		for (k = g[y].agent_first; k < yend; k++)
			if (a[k].id == a[i].id)
				return 1;
	}
	return 0;
}

/* The compiled pattern of rule r (see struct trule's shared). */
static const char *
robots_parse_author_pattern(const struct parser *p, const struct trule *r)
{
	return r->shared ? r->src : (const char *)p->comp.v + r->comp;
}

/* Per run of rules e[0..n) with one pattern: each Disallow an Allow ties. */
static void
robots_parse_author_run(
    struct parser *p, const struct robots_sortent *e, uint32_t n)
{
	const struct trule *r = p->rules.v, *d, *a;
	uint32_t i, k;

	for (i = 0; i < n; i++) {
		d = &r[e[i].idx];
		for (k = 0; !d->allow && k < n; k++) {
			a = &r[e[k].idx];
			if (a->allow && a->anchored == d->anchored &&
			    a->prio == d->prio &&
			    robots_parse_author_share(p, a->group, d->group)) {
				robots_parse_warn(p, d->line, RW_ALLOW_TIE);
				break;
			}
		}
	}
}

static void
robots_parse_author_ties(struct parser *p)
{
	const struct trule *r = p->rules.v;
	struct robots_sortent *e;
	uint32_t i, n = 0, run;
	int allows = 0, disallows = 0;

	for (i = 0; i < p->rules.n; i++) {
		allows |= r[i].allow && !r[i].twin;
		disallows |= !r[i].allow;
	}
	if (!allows || !disallows)
		return;
	if ((e = malloc(p->rules.n * sizeof(*e))) == NULL) {
		p->nomem = 1;
		return;
	}
	for (i = 0; i < p->rules.n; i++) {
		if (r[i].twin)
			continue;
		e[n].lit = robots_parse_author_pattern(p, &r[i]);
		e[n].key = robots_sortent_key(e[n].lit, r[i].comp_len);
		e[n].len = r[i].comp_len;
		e[n].idx = i;
		n++;
	}
	robots_sortent_sort(e, n, 64);
	for (i = 0; i < n; i += run) {
		run = 1;
		while (i + run < n && e[i + run].len == e[i].len &&
		       memcmp(e[i + run].lit, e[i].lit, e[i].len) == 0)
			run++;
		if (run > 1)
			robots_parse_author_run(p, e + i, run);
	}
	free(e);
}

/* Whether statements x and y name the same pattern. */
static int
robots_parse_author_same_path(
    const struct parser *p, const struct tpref *x, const struct tpref *y)
{
	const char *c = p->pcomp.v;

	return x->prio == y->prio && x->comp_len == y->comp_len &&
	       x->anchored == y->anchored &&
	       memcmp(c + x->comp, c + y->comp, x->comp_len) == 0;
}

/* Whether u and s disagree on a purpose both name. */
static int
robots_parse_author_disagree(const struct tpref *u, const struct tpref *s)
{
	static const int shared[] = { ROBOTS_PURPOSE_TRAIN_AI,
		ROBOTS_PURPOSE_SEARCH };
	size_t i;
	int a, b;

	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		a = u->pref[shared[i]];
		b = s->pref[shared[i]];
		if (a != ROBOTS_PREF_UNKNOWN && b != ROBOTS_PREF_UNKNOWN &&
		    a != b)
			return 1;
	}
	return 0;
}

static void
robots_parse_author_conflicts(struct parser *p)
{
	const struct tpref *s = p->prefs.v, *u, *c;
	size_t i, k, checks = 0;

	for (i = 0; i < p->prefs.n; i++) {
		u = &s[i];
		if (u->kind != ROBOTS_CONTENT_USAGE)
			continue;
		for (k = 0; k < p->prefs.n && checks < CONFLICT_CHECKS; k++) {
			c = &s[k];
			if (c->kind != ROBOTS_CONTENT_SIGNAL ||
			    (c->group != u->group && c->group != ROBOTS_NONE))
				continue;
			checks++;
			if (robots_parse_author_same_path(p, u, c) &&
			    robots_parse_author_disagree(u, c))
				robots_parse_warn(p,
				    u->line > c->line ? u->line : c->line,
				    RW_PREF_CONFLICT);
		}
	}
}

void
robots_author_warnings(struct parser *p)
{
	robots_parse_author_not_in_star(p);
	robots_parse_author_ties(p);
	robots_parse_author_conflicts(p);
}
