/*
 * robots_build.c: the parser's tables (robots_parse_int.h) laid out into
 * one compiled ruleset allocation (robots_int.h): rules sorted into
 * matching order, the prefix index, agent tokens, sitemaps. Owns the
 * ruleset's life: robots_parse, robots_ref, robots_unref, robots_memsize.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"
#include "robots_parse_int.h"

/* Bytes of the agent tokens in the text. */
static size_t
token_bytes(const struct parser *p)
{
	const struct robots_tagent *lines = p->agents.v;
	size_t i, n = 0;

	for (i = 0; i < p->agents.n; i++)
		n += lines[i].global ? 0 : lines[i].len;
	return n;
}

/*
 * Table order: longest first, allow before disallow, then file order, as
 * one key per rule (seq stays below 2^31: a body is at most 500 KiB).
 * Returns -1 when memory runs out.
 */
static int
sort_rules(struct parser *p)
{
	struct trule *v = p->rules.v, *out;
	struct robots_sortent *e;
	size_t i, n = p->rules.n;

	e = malloc(n * sizeof(*e));
	out = malloc(n * sizeof(*out));
	if (e == NULL || out == NULL) {
		free(e);
		free(out);
		return -1;
	}
	for (i = 0; i < n; i++) {
		e[i].key = (uint64_t)(UINT32_MAX - v[i].prio) << 32 |
		           (uint64_t)!v[i].allow << 31 |
		           (v[i].seq & 0x7fffffffu);
		e[i].lit = NULL;
		e[i].len = 0;
		e[i].idx = (uint32_t)i;
	}
	robots_sortent_sort(e, (uint32_t)n, 64);
	for (i = 0; i < n; i++)
		out[i] = v[e[i].idx];
	memcpy(v, out, n * sizeof(*out));
	free(out);
	free(e);
	return 0;
}

/* Reserve n bytes aligned to 8 at the end of the layout. */
static size_t
place(size_t *total, size_t n)
{
	size_t off = (*total + 7) & ~(size_t)7;

	*total = off + n;
	return off;
}

/* Assign text offsets (creation order: twins follow their rule). */
static size_t
plan_text(struct parser *p, size_t *comp_base)
{
	struct trule *rules = p->rules.v;
	struct robots_tagent *lines = p->agents.v;
	size_t i, text = 0;

	for (i = 0; i < p->rules.n; i++) {
		rules[i].src_off =
		    rules[i].twin ? rules[i - 1].src_off : (uint32_t)text;
		text += rules[i].twin ? 0 : rules[i].src_len;
	}
	*comp_base = text;
	for (i = 0; i < p->rules.n; i++)
		rules[i].pat_off = rules[i].shared
		                       ? rules[i].src_off
		                       : (uint32_t)(text + rules[i].comp);
	text += p->comp.n;
	for (i = 0; i < p->agents.n; i++) {
		lines[i].off =
		    lines[i].global ? ROBOTS_GLOBAL_OFF : (uint32_t)text;
		text += lines[i].global ? 0 : lines[i].len;
	}
	for (i = 0; i < p->sitemaps.n; i++)
		text += ((struct tspan *)p->sitemaps.v)[i].len;
	return text;
}

/* Lay out the header, tables and text; room for the largest index. */
static void
plan(struct parser *p, const struct robots_tokens *t, struct robots *h,
    size_t *comp_base, size_t *total)
{
	size_t text = plan_text(p, comp_base), n = p->rules.n;

	/* What a check reads comes first, in the order it reads it. */
	*total = sizeof(struct robots);
	h->slots = place(total, (t->n ? t->mask + 1 : 0) * sizeof(uint32_t));
	h->agents = place(total, t->n * sizeof(struct robots_agent_rules));
	h->agent_lists = place(total, t->nagent_lists * sizeof(uint32_t));
	h->lists = place(total, t->nl * sizeof(struct robots_list));
	h->nodes = place(total, n * 3 * sizeof(uint64_t));
	h->idx = place(total, n * sizeof(uint32_t));
	h->rules = place(total, n * sizeof(struct robots_crule));
	h->text = place(total, text);
	h->groups = place(total, p->groups.n * sizeof(struct robots_group));
	h->gagents = place(total, p->agents.n * sizeof(struct robots_span));
	h->sitemaps = place(total, p->sitemaps.n * sizeof(struct robots_span));
}

/* Close the gap after the match index (sized for the worst); new size. */
static size_t
compact(struct robots *r, size_t total, size_t nwords)
{
	size_t gap = ((size_t)r->nrules * 3 - nwords) * sizeof(uint64_t);

	if (gap == 0)
		return total;
	memmove((char *)r + r->idx - gap, (char *)r + r->idx, total - r->idx);
	r->idx -= gap;
	r->rules -= gap;
	r->text -= gap;
	r->groups -= gap;
	r->gagents -= gap;
	r->sitemaps -= gap;
	return total - gap;
}

/* Copy the text: rule values, compiled patterns, tokens, sitemaps. */
static void
fill_text(struct parser *p, size_t comp_base, char *text)
{
	const struct trule *rules = p->rules.v;
	const struct robots_tagent *lines = p->agents.v;
	const struct tspan *maps = p->sitemaps.v;
	size_t i, off;

	for (i = 0; i < p->rules.n; i++)
		if (!rules[i].twin)
			memcpy(text + rules[i].src_off, rules[i].src,
			    rules[i].src_len);
	if (p->comp.n > 0)
		memcpy(text + comp_base, p->comp.v, p->comp.n);
	off = comp_base + p->comp.n;
	for (i = 0; i < p->agents.n; i++)
		if (!lines[i].global) {
			memcpy(text + lines[i].off, lines[i].src, lines[i].len);
			off += lines[i].len;
		}
	for (i = 0; i < p->sitemaps.n; i++) {
		memcpy(text + off, maps[i].s, maps[i].len);
		off += maps[i].len;
	}
}

/* The matching table (in table order), groups and sitemaps. */
static void
fill_tables(struct parser *p, struct robots *r, size_t sitemap_off)
{
	const struct trule *rules = p->rules.v;
	const struct robots_tagent *lines = p->agents.v;
	const struct robots_tgroup *groups = p->groups.v;
	char *base = (char *)r;
	struct robots_crule *c = (struct robots_crule *)(base + r->rules);
	struct robots_group *rg = (struct robots_group *)(base + r->groups);
	struct robots_span *ga = (struct robots_span *)(base + r->gagents);
	struct robots_span *sm = (struct robots_span *)(base + r->sitemaps);
	size_t i;

	for (i = 0; i < p->rules.n; i++) {
		c[i].pat = rules[i].pat_off;
		c[i].pat_len = (uint16_t)rules[i].comp_len;
		c[i].lit_len = (uint16_t)rules[i].lit_len;
		c[i].prio = rules[i].prio;
		c[i].src = rules[i].src_off;
		c[i].src_len = (uint16_t)rules[i].src_len;
		c[i].need = robots_match_need(
		    (char *)r + r->text + c[i].pat, c[i].pat_len, c[i].lit_len);
		c[i].line = rules[i].line;
		c[i].allow = rules[i].allow;
		c[i].anchored = rules[i].anchored;
	}
	for (i = 0; i < p->groups.n; i++) {
		rg[i].agent_first = groups[i].agent_first;
		rg[i].agent_count = groups[i].agent_count;
		rg[i].rule_count = groups[i].rule_count;
		rg[i].crawl_delay = groups[i].crawl_delay;
		r->nwritten += groups[i].rule_count;
	}
	for (i = 0; i < p->agents.n; i++) {
		ga[i].off = lines[i].off;
		ga[i].len = lines[i].len;
	}
	for (i = 0; i < p->sitemaps.n; i++) {
		sm[i].off = (uint32_t)sitemap_off;
		sm[i].len = ((struct tspan *)p->sitemaps.v)[i].len;
		sitemap_off += sm[i].len;
	}
}

/* Name, lists and crawl delay of every token and of '*'. */
static void
fill_agents(struct parser *p, const struct robots_tokens *t, struct robots *r)
{
	struct robots_agent_rules *ag =
	                              (struct robots_agent_rules *)((char *)r +
	                                                            r->agents),
	                          *a;
	uint32_t *al = (uint32_t *)((char *)r + r->agent_lists);
	const struct robots_list *lists =
	    (const struct robots_list *)((char *)r + r->lists);
	const struct robots_tagent *lines = p->agents.v;
	const struct robots_tgroup *g = p->groups.v, *rep;
	uint32_t i, k, first = 0;

	for (i = 0; i < t->n; i++) {
		k = t->first_line[i];
		ag[i].name.off = lines[k].off;
		ag[i].name.len = lines[k].len;
		ag[i].hash = robots_agent_hash(lines[k].src, lines[k].len);
		robots_agent_set_head(&ag[i], lines[k].src);
		ag[i].list_first = first;
		ag[i].crawl_delay = -1.0;
		first += t->nlists[i];
	}
	r->global.name.off = ROBOTS_GLOBAL_OFF;
	r->global.list_first = first;
	r->global.crawl_delay = -1.0;
	for (i = 0; i < t->nl; i++) { /* each list once per agent */
		rep = &g[t->list_rep[i]];
		for (k = 0; k <= rep->sig_len; k++) {
			if (k < rep->sig_len)
				a = &ag[t->sig[rep->sig_first + k]];
			else if (rep->global)
				a = &r->global;
			else
				break;
			al[a->list_first + a->nlists++] = i;
			a->list = lists[i]; /* used when it is the only one */
		}
	}
	for (i = 0; i < p->groups.n; i++) { /* the first delay in file order */
		for (k = g[i].agent_first;
		     k < g[i].agent_first + g[i].agent_count; k++)
			if (lines[k].id != ROBOTS_NONE &&
			    ag[lines[k].id].crawl_delay < 0)
				ag[lines[k].id].crawl_delay = g[i].crawl_delay;
		if (g[i].global && r->global.crawl_delay < 0)
			r->global.crawl_delay = g[i].crawl_delay;
	}
	r->has_global = r->global.nlists > 0;
	for (i = 0; t->n > 0 && i <= t->mask; i++)
		((uint32_t *)((char *)r + r->slots))[i] = t->slots[i];
	r->nagents = t->n;
	r->slot_mask = t->mask;
}

/* Every list in table order, indexed by literal prefix. */
static int
fill_lists(struct parser *p, const struct robots_tokens *t, struct robots *r,
    size_t *nwords)
{
	struct robots_list *lists =
	    (struct robots_list *)((char *)r + r->lists);
	const struct trule *rules = p->rules.v;
	const struct robots_tgroup *groups = p->groups.v;
	uint32_t *idx = (uint32_t *)((char *)r + r->idx), i, first = 0;
	uint64_t *words = (uint64_t *)(void *)((char *)r + r->nodes);
	struct robots_list *l;
	struct robots_sortent *tmp =
	    malloc((t->max_count + 1) * (sizeof(*tmp) + sizeof(uint32_t)));

	if (tmp == NULL)
		return -1;
	for (i = 0; i < t->nl; i++) {
		lists[i].first = first;
		first += t->list_count[i];
	}
	for (i = 0; i < p->rules.n; i++) {
		l = &lists[groups[rules[i].group].lid];
		idx[l->first + l->count++] = i;
	}
	for (*nwords = 0, i = 0; i < t->nl; i++) {
		l = &lists[i];
		l->node_first = (uint32_t)*nwords;
		l->nnodes = robots_match_index(r, idx + l->first, l->count,
		    words + *nwords, tmp, (uint32_t *)(tmp + t->max_count + 1));
		*nwords += (size_t)l->nnodes * 3;
	}
	free(tmp);
	return 0;
}

/* Lay the parsed file out in one allocation. */
static struct robots *
build(struct parser *p)
{
	struct robots h, *r = NULL, *shrunk;
	struct robots_tokens t;
	size_t comp_base, total, nwords;

	memset(&h, 0, sizeof(h));
	if (robots_agent_index(
	        p->groups.v, p->groups.n, p->agents.v, p->agents.n, &t) != 0)
		goto out;
	plan(p, &t, &h, &comp_base, &total);
	if ((r = calloc(1, total)) == NULL)
		goto out;
	*r = h;
	atomic_init(&r->refs, 1);
	r->nrules = (uint32_t)p->rules.n;
	r->ngroups = (uint32_t)p->groups.n;
	r->nsitemaps = (uint32_t)p->sitemaps.n;
	fill_text(p, comp_base, (char *)r + r->text);
	if (p->rules.n > 1 && sort_rules(p) != 0) {
		free(r);
		r = NULL;
		goto out;
	}
	fill_tables(p, r, comp_base + p->comp.n + token_bytes(p));
	if (fill_lists(p, &t, r, &nwords) != 0) {
		free(r);
		r = NULL;
		goto out;
	}
	fill_agents(p, &t, r);
	r->memsize = compact(r, total, nwords);
	if ((shrunk = realloc(r, r->memsize)) != NULL)
		r = shrunk;
out:
	robots_agent_index_clear(&t);
	return r;
}

struct robots *
robots_parse(const char *body, size_t len)
{
	struct parser p;
	struct robots *r = NULL;

	memset(&p, 0, sizeof(p));
	if (body == NULL)
		body = "", len = 0;
	parse_body(&p, body, len);
	if (!p.nomem)
		r = build(&p);
	free(p.rules.v);
	free(p.groups.v);
	free(p.agents.v);
	free(p.sitemaps.v);
	free(p.comp.v);
	return r;
}

struct robots *
robots_ref(struct robots *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	return r;
}

void
robots_unref(struct robots *r)
{
	if (r != NULL &&
	    atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
		free(r);
}

size_t
robots_memsize(const struct robots *r)
{
	return r->memsize;
}
