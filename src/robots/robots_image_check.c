/*
 * robots_image_check.c: the deep check of a ruleset image read back from
 * a file (robots_image.c). robots_image_bounded() has placed the tables in
 * order inside the image; this reads every entry and refuses any offset,
 * length, count or index that would lead a check, an introspection call
 * or a preference answer outside its table, any loop that would not end
 * (a probe with no empty slot, a node whose parent is not before it),
 * any flag or enum out of its range and any crawl delay that is not a
 * number JSON can carry. A state file is a file on disk: whoever can write
 * it must not be able to make robotsd read outside its memory.
 */
#include <config.h>

#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "robots_int.h"

/* What the checks of one image need: its tables' sizes, in entries. */
struct image_view {
	const struct robots *r;
	size_t text_len;     /* of the main text */
	size_t nagent_lists; /* entries of agent_lists */
	size_t nlists;       /* entries of lists */
	size_t nwords;       /* 8-byte words of nodes */
	size_t nidx;         /* entries of idx */
	size_t ngagents;     /* entries of gagents */
};

/* Whether [off, off + len) lies inside n bytes (no overflow). */
static int
robots_image_span_in(size_t off, size_t len, size_t n)
{
	return off <= n && len <= n - off;
}

/* Whether a crawl delay is none (negative) or a finite number of seconds. */
static int
robots_image_delay_ok(double d)
{
	return d < 0 || isfinite(d);
}

/* Whether table entry c reads only text[0..text_len). */
static int
robots_image_crule_ok(const struct robots_crule *c, size_t text_len)
{
	return robots_image_span_in(c->pat, c->pat_len, text_len) &&
	       robots_image_span_in(c->src, c->src_len, text_len) &&
	       c->lit_len <= c->pat_len && c->allow <= 1 && c->anchored <= 1;
}

/* Whether the nnodes nodes of a list of count entries stay inside. */
static int
robots_image_nodes_ok(const struct image_view *v, const struct robots_list *l)
{
	const uint64_t *keys =
	    ROBOTS_TAB(v->r, uint64_t, nodes) + l->node_first;
	const struct robots_node *nodes =
	    (const struct robots_node *)(const void *)(keys + l->nnodes);
	uint32_t i;

	if (l->count == 0)
		return 0;
	for (i = 0; i < l->nnodes; i++)
		if (!robots_image_span_in(
		        nodes[i].lit, nodes[i].lit_len, v->text_len) ||
		    nodes[i].first >= l->count ||
		    (i > 0 && nodes[i].first < nodes[i - 1].first) ||
		    (nodes[i].parent != ROBOTS_NONE && nodes[i].parent >= i))
			return 0;
	return 1;
}

/* Whether list l indexes only rules of the table, through its own slices. */
static int
robots_image_list_ok(const struct image_view *v, const struct robots_list *l)
{
	const uint32_t *idx = ROBOTS_TAB(v->r, uint32_t, idx);
	uint32_t i;

	if (l->node_first == ROBOTS_WHOLE_TABLE)
		return l->nnodes == 0 &&
		       robots_image_span_in(l->first, l->count, v->r->nrules);
	if (!robots_image_span_in(l->first, l->count, v->nidx))
		return 0;
	for (i = 0; i < l->count; i++)
		if (idx[l->first + i] >= v->r->nrules)
			return 0;
	/* keys (one word each), then nodes (two words each) */
	if (l->nnodes == 0)
		return 1;
	return l->nnodes <= l->count &&
	       robots_image_span_in(
	           l->node_first, 3 * (size_t)l->nnodes, v->nwords) &&
	       robots_image_nodes_ok(v, l);
}

/* Whether the lists of merged rules m are inside their tables. */
static int
robots_image_merged_ok(
    const struct image_view *v, const struct robots_merged *m)
{
	const struct robots_list *lists =
	    ROBOTS_TAB(v->r, struct robots_list, lists);
	const uint32_t *al =
	    (const uint32_t *)(const void *)((const char *)v->r +
	                                     robots_agent_lists_off(v->r));
	uint32_t k;

	if (!robots_image_delay_ok(m->crawl_delay))
		return 0;
	if (m->nlists == 1)
		return robots_image_list_ok(v, &m->list);
	if (m->nlists == 0)
		return 1;
	if (!robots_image_span_in(m->list_first, m->nlists, v->nagent_lists))
		return 0;
	for (k = 0; k < m->nlists; k++)
		if (al[m->list_first + k] >= v->nlists ||
		    !robots_image_list_ok(v, &lists[al[m->list_first + k]]))
			return 0;
	return 1;
}

/*
 * Whether the agent index is a table a probe ends in: a power of two of
 * slots, each empty or naming an agent, at least one empty; and whether
 * every agent's name and rules are inside.
 */
static int
robots_image_agents_ok(const struct image_view *v)
{
	const struct robots *r = v->r;
	const uint32_t *slots = ROBOTS_SLOTS(r);
	const struct robots_agent_rules *agents =
	    (const struct robots_agent_rules *)(const void *)((const char *)r +
	                                                      robots_agents_off(
	                                                          r));
	size_t i, nslots = (size_t)r->slot_mask + 1, empty = 0;

	if (r->nagents == 0)
		return 1;
	if ((nslots & (nslots - 1)) != 0 || nslots < 4 ||
	    robots_agents_off(r) % alignof(struct robots_agent_rules) != 0)
		return 0;
	for (i = 0; i < nslots; i++) {
		if (slots[i] > r->nagents)
			return 0;
		empty += slots[i] == 0;
	}
	if (empty == 0)
		return 0;
	for (i = 0; i < r->nagents; i++)
		if (agents[i].name.len == 0 ||
		    !robots_image_span_in(
		        agents[i].name.off, agents[i].name.len, v->text_len) ||
		    !robots_image_merged_ok(v, &agents[i].rules))
			return 0;
	return 1;
}

/* Whether the groups, their agents and the sitemaps are inside. */
static int
robots_image_groups_ok(const struct image_view *v)
{
	const struct robots *r = v->r;
	const struct robots_group *g =
	    ROBOTS_TAB(r, struct robots_group, groups);
	const struct robots_span *ga =
	    ROBOTS_TAB(r, struct robots_span, gagents);
	const struct robots_span *sm =
	    ROBOTS_TAB(r, struct robots_span, sitemaps);
	size_t i;

	for (i = 0; i < r->ngroups; i++)
		if (!robots_image_span_in(
		        g[i].agent_first, g[i].agent_count, v->ngagents) ||
		    !robots_image_delay_ok(g[i].crawl_delay))
			return 0;
	for (i = 0; i < v->ngagents; i++)
		if (ga[i].off != ROBOTS_GLOBAL_OFF &&
		    !robots_image_span_in(ga[i].off, ga[i].len, v->text_len))
			return 0;
	for (i = 0; i < r->nsitemaps; i++)
		if (!robots_image_span_in(sm[i].off, sm[i].len, v->text_len))
			return 0;
	return 1;
}

/* Whether every table offset is aligned for the entries it holds. */
static int
robots_image_aligned(const struct robots *r)
{
	return r->lists % alignof(struct robots_list) == 0 &&
	       r->nodes % alignof(uint64_t) == 0 &&
	       r->idx % alignof(uint32_t) == 0 &&
	       r->rules % alignof(struct robots_crule) == 0 &&
	       r->groups % alignof(struct robots_group) == 0 &&
	       r->gagents % alignof(struct robots_span) == 0 &&
	       r->sitemaps % alignof(struct robots_span) == 0 &&
	       robots_agent_lists_off(r) % alignof(uint32_t) == 0;
}

/* Whether r (its tables in order inside len bytes) reads only inside. */
int
robots_image_deep_ok(const struct robots *r, size_t len)
{
	struct image_view v = { .r = r };
	const struct robots_crule *rules =
	    ROBOTS_TAB(r, struct robots_crule, rules);
	size_t i;

	if (!robots_image_aligned(r))
		return 0;
	v.text_len = (r->prefs > ROBOTS_PREFS_EMPTY ? r->prefs : len) - r->text;
	v.nagent_lists =
	    (r->lists - robots_agent_lists_off(r)) / sizeof(uint32_t);
	v.nlists = (r->nodes - r->lists) / sizeof(struct robots_list);
	v.nwords = (r->idx - r->nodes) / sizeof(uint64_t);
	v.nidx = (r->rules - r->idx) / sizeof(uint32_t);
	v.ngagents = (r->sitemaps - r->gagents) / sizeof(struct robots_span);
	for (i = 0; i < r->nrules; i++)
		if (!robots_image_crule_ok(&rules[i], v.text_len))
			return 0;
	return robots_image_merged_ok(&v, &r->global) &&
	       robots_image_agents_ok(&v) && robots_image_groups_ok(&v);
}

/* Whether statement s of a preference section reads only inside. */
static int
robots_image_pstmt_ok(const struct robots_pstmt *s, size_t text_len)
{
	size_t k;

	if (!robots_image_crule_ok(&s->m, text_len) ||
	    !robots_image_span_in(s->value, s->value_len, text_len) ||
	    s->kind > ROBOTS_CONTENT_SIGNAL || s->file_scope > 1)
		return 0;
	for (k = 0; k < ROBOTS_PURPOSES; k++)
		if (s->pref[k] > ROBOTS_PREF_DISALLOWED)
			return 0;
	return 1;
}

/* Whether n (first, count) pairs at pairs all lie in [0, limit). */
static int
robots_image_slices_ok(const uint32_t *pairs, size_t n, size_t limit)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!robots_image_span_in(
		        pairs[2 * i], pairs[2 * i + 1], limit))
			return 0;
	return 1;
}

/* Whether the extra lines and warnings of section h are inside. */
static int
robots_image_notes_ok(const struct robots *r, const struct robots_prefs *h)
{
	const char *base = (const char *)r;
	const struct robots_pextra *x =
	    (const struct robots_pextra *)(const void *)(base + h->extras);
	const struct robots_pwarn *w =
	    (const struct robots_pwarn *)(const void *)(base + h->warns);
	size_t i, text_len = h->end - h->text;

	for (i = 0; i < h->nextras; i++)
		if (!robots_image_span_in(
		        x[i].name.off, x[i].name.len, text_len) ||
		    !robots_image_span_in(
		        x[i].value.off, x[i].value.len, text_len) ||
		    x[i].group1 > r->ngroups)
			return 0;
	for (i = 0; i < h->nwarns; i++)
		if (w[i].code >= RW_CODES)
			return 0;
	return 1;
}

/*
 * Whether r's preference section (placed inside len bytes by
 * robots_prefs_bounded()) reads only inside: every statement's text, every
 * slice of statements and of selected groups, every group index.
 */
int
robots_prefs_deep_ok(const struct robots *r)
{
	const char *base = (const char *)r;
	const struct robots_prefs *h;
	const struct robots_pstmt *st;
	const uint32_t *sel;
	size_t i;

	if (r->prefs <= ROBOTS_PREFS_EMPTY)
		return 1;
	h = ROBOTS_TAB(r, struct robots_prefs, prefs);
	st = (const struct robots_pstmt *)(const void *)(base + h->stmts);
	sel = (const uint32_t *)(const void *)(base + h->sel);
	if (h->stmts % alignof(struct robots_pstmt) != 0 ||
	    h->gslices % alignof(uint32_t) != 0 ||
	    h->agent_sel % alignof(uint32_t) != 0 ||
	    h->sel % alignof(uint32_t) != 0 ||
	    h->extras % alignof(struct robots_pextra) != 0 ||
	    h->warns % alignof(struct robots_pwarn) != 0)
		return 0;
	for (i = 0; i < h->nstmts; i++)
		if (!robots_image_pstmt_ok(&st[i], h->end - h->text))
			return 0;
	for (i = 0; i < h->nsel; i++)
		if (sel[i] >= r->ngroups)
			return 0;
	return robots_image_slices_ok(
	           (const uint32_t *)(const void *)(base + h->gslices),
	           r->ngroups, h->nstmts) &&
	       robots_image_slices_ok(
	           (const uint32_t *)(const void *)(base + h->agent_sel),
	           (size_t)r->nagents + 1, h->nsel) &&
	       robots_image_notes_ok(r, h);
}
