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
robots_build_token_bytes(const struct parser *p)
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
robots_build_sort_rules(struct parser *p)
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

/* Reserve n bytes aligned to align (a power of two) at the end. */
static uint32_t
robots_build_place(size_t *total, size_t n, size_t align)
{
	size_t off = (*total + align - 1) & ~(align - 1);

	*total = off + n;
	return (uint32_t)off;
}

/* Whether some agent, or '*', has several lists (then they are a table). */
static int
robots_build_many_lists(const struct parser *p, const struct robots_tokens *t)
{
	const struct robots_tgroup *g = p->groups.v;
	size_t i, named = t->n;

	for (i = 0; i < p->groups.n; i++)
		if (g[i].global) {
			named++;
			break;
		}
	return t->nagent_lists > named;
}

/* Whether the only list is short: the whole table, in order, without idx. */
static int
robots_build_whole_table_list(const struct robots_tokens *t)
{
	return t->nl == 1 && t->list_count[0] <= ROBOTS_LINEAR_MAX;
}

/* 8-byte words of the largest index of every list long enough to have one. */
static size_t
robots_build_index_words(const struct robots_tokens *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nl; i++)
		if (t->list_count[i] > ROBOTS_LINEAR_MAX)
			n += 3 * (size_t)t->list_count[i];
	return n;
}

/* Assign text offsets (creation order: twins follow their rule). */
static size_t
robots_build_plan_text(struct parser *p, size_t *comp_base)
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
robots_build_plan(struct parser *p, const struct robots_tokens *t,
    struct robots *h, size_t *comp_base, size_t *total)
{
	size_t text = robots_build_plan_text(p, comp_base), n = p->rules.n;
	int many = robots_build_many_lists(p, t);

	/* What a check reads comes first, in the order it reads it. */
	h->nagents = t->n;
	h->slot_mask = t->mask;
	*total = robots_agent_lists_off(h) +
	         (many ? t->nagent_lists * sizeof(uint32_t) : 0);
	h->lists = robots_build_place(
	    total, many ? t->nl * sizeof(struct robots_list) : 0, 4);
	h->nodes = robots_build_place(
	    total, robots_build_index_words(t) * sizeof(uint64_t), 8);
	h->idx = robots_build_place(total,
	    robots_build_whole_table_list(t) ? 0 : n * sizeof(uint32_t), 4);
	h->rules =
	    robots_build_place(total, n * sizeof(struct robots_crule), 4);
	h->groups = robots_build_place(
	    total, p->groups.n * sizeof(struct robots_group), 8);
	h->gagents = robots_build_place(
	    total, p->agents.n * sizeof(struct robots_span), 4);
	h->sitemaps = robots_build_place(
	    total, p->sitemaps.n * sizeof(struct robots_span), 4);
	h->text = robots_build_place(total, text, 1);
}

/* Close the gap after the match index (sized for the worst); new size. */
static size_t
robots_build_compact(
    struct robots *r, size_t total, size_t planned, size_t nwords)
{
	size_t gap = (planned - nwords) * sizeof(uint64_t);

	if (gap == 0)
		return total;
	memmove((char *)r + r->idx - gap, (char *)r + r->idx, total - r->idx);
	r->idx -= (uint32_t)gap;
	r->rules -= (uint32_t)gap;
	r->groups -= (uint32_t)gap;
	r->gagents -= (uint32_t)gap;
	r->sitemaps -= (uint32_t)gap;
	r->text -= (uint32_t)gap;
	return total - gap;
}

/* Copy the text: rule values, compiled patterns, tokens, sitemaps. */
static void
robots_build_fill_text(struct parser *p, size_t comp_base, char *text)
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
robots_build_fill_tables(struct parser *p, struct robots *r, size_t sitemap_off)
{
	const struct trule *rules = p->rules.v;
	const struct robots_tagent *lines = p->agents.v;
	const struct robots_tgroup *groups = p->groups.v;
	char *base = (char *)r;
	struct robots_crule *c = (struct robots_crule *)(base + r->rules);
	struct robots_group *rg = (struct robots_group *)(base + r->groups);
	struct robots_span *ga = (struct robots_span *)(base + r->gagents);
	struct robots_span *sm = (struct robots_span *)(base + r->sitemaps);
	uint64_t need;
	size_t i;

	for (i = 0; i < p->rules.n; i++) {
		c[i].pat = rules[i].pat_off;
		c[i].pat_len = (uint16_t)rules[i].comp_len;
		c[i].lit_len = (uint16_t)rules[i].lit_len;
		c[i].src = rules[i].src_off;
		c[i].src_len = (uint16_t)rules[i].src_len;
		need = robots_match_need(
		    (char *)r + r->text + c[i].pat, c[i].pat_len, c[i].lit_len);
		c[i].need_lo = (uint32_t)need;
		c[i].need_hi = (uint32_t)(need >> 32);
		c[i].line = rules[i].line;
		c[i].allow = rules[i].allow;
		c[i].anchored = rules[i].anchored;
	}
	for (i = 0; i < p->groups.n; i++) {
		rg[i].agent_first = groups[i].agent_first;
		rg[i].agent_count = groups[i].agent_count;
		rg[i].rule_count = groups[i].rule_count;
		rg[i].crawl_delay = groups[i].crawl_delay;
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
robots_build_fill_agents(struct parser *p, const struct robots_tokens *t,
    struct robots *r, const struct robots_list *lists, int many)
{
	struct robots_agent_rules *ag =
	    (struct robots_agent_rules *)((char *)r + robots_agents_off(r));
	uint32_t *al = (uint32_t *)((char *)r + robots_agent_lists_off(r));
	const struct robots_tagent *lines = p->agents.v;
	const struct robots_tgroup *g = p->groups.v, *rep;
	struct robots_merged *m;
	uint32_t i, k, end, first = 0;

	for (i = 0; i < t->n; i++) {
		k = t->first_line[i];
		ag[i].name.off = lines[k].off;
		ag[i].name.len = lines[k].len;
		ag[i].hash = robots_agent_hash(lines[k].src, lines[k].len);
		robots_agent_set_head(&ag[i], lines[k].src);
		ag[i].rules.list_first = first;
		ag[i].rules.crawl_delay = -1.0;
		first += t->nlists[i];
	}
	r->global.list_first = first;
	r->global.crawl_delay = -1.0;
	for (i = 0; i < t->nl; i++) { /* each list once per agent */
		rep = &g[t->list_rep[i]];
		for (k = 0; k <= rep->sig_len; k++) {
			if (k < rep->sig_len)
				m = &ag[t->sig[rep->sig_first + k]].rules;
			else if (rep->global)
				m = &r->global;
			else
				break;
			if (many)
				al[m->list_first + m->nlists] = i;
			m->nlists++;
			m->list = lists[i]; /* used when it is the only one */
		}
	}
	for (i = 0; i < p->groups.n; i++) { /* the first delay in file order */
		end = g[i].agent_first + g[i].agent_count;
		for (k = g[i].agent_first; k < end; k++)
			if (lines[k].id != ROBOTS_NONE &&
			    ag[lines[k].id].rules.crawl_delay < 0)
				ag[lines[k].id].rules.crawl_delay =
				    g[i].crawl_delay;
		if (g[i].global && r->global.crawl_delay < 0)
			r->global.crawl_delay = g[i].crawl_delay;
	}
	if (t->n > 0)
		memcpy(r + 1, t->slots, (t->mask + 1) * sizeof(uint32_t));
}

/*
 * Every list in table order (lists[]), those longer than ROBOTS_LINEAR_MAX
 * indexed by literal prefix; *nwords: the index words used.
 */
static int
robots_build_fill_lists(struct parser *p, const struct robots_tokens *t,
    struct robots *r, struct robots_list *lists, size_t *nwords)
{
	const struct trule *rules = p->rules.v;
	const struct robots_tgroup *groups = p->groups.v;
	uint32_t *idx = (uint32_t *)((char *)r + r->idx), i, first = 0;
	uint64_t *words = (uint64_t *)(void *)((char *)r + r->nodes);
	struct robots_sortent *tmp = NULL;
	struct robots_list *l;

	*nwords = 0;
	if (robots_build_whole_table_list(t)) {
		lists[0] = (struct robots_list){ .count = (uint32_t)p->rules.n,
			.node_first = ROBOTS_WHOLE_TABLE };
		return 0;
	}
	if (t->max_count > ROBOTS_LINEAR_MAX &&
	    (tmp = malloc((t->max_count + 1) *
	                  (sizeof(*tmp) + sizeof(uint32_t)))) == NULL)
		return -1;
	for (i = 0; i < t->nl; i++) {
		lists[i] = (struct robots_list){ .first = first };
		first += t->list_count[i];
	}
	for (i = 0; i < p->rules.n; i++) {
		l = &lists[groups[rules[i].group].lid];
		idx[l->first + l->count++] = i;
	}
	for (i = 0; i < t->nl; i++) {
		l = &lists[i];
		if (l->count <= ROBOTS_LINEAR_MAX)
			continue;
		l->node_first = (uint32_t)*nwords;
		l->nnodes = robots_match_index(r, idx + l->first, l->count,
		    words + *nwords, tmp, (uint32_t *)(tmp + t->max_count + 1));
		*nwords += (size_t)l->nnodes * 3;
	}
	free(tmp);
	return 0;
}

/* The lists, and the agents and '*' that use them, into r. */
static int
robots_build_fill_match(struct parser *p, const struct robots_tokens *t,
    struct robots *r, size_t *nwords)
{
	struct robots_list *lists = malloc((t->nl + 1) * sizeof(*lists));
	int many = robots_build_many_lists(p, t);

	if (lists == NULL ||
	    robots_build_fill_lists(p, t, r, lists, nwords) != 0) {
		free(lists);
		return -1;
	}
	if (many)
		memcpy((char *)r + r->lists, lists, t->nl * sizeof(*lists));
	robots_build_fill_agents(p, t, r, lists, many);
	free(lists);
	return 0;
}

/* Lay the parsed file out in one allocation. */
static struct robots *
robots_build_layout(struct parser *p)
{
	struct robots h, *r = NULL, *shrunk;
	struct robots_tokens t;
	size_t comp_base, total, nwords;

	memset(&h, 0, sizeof(h));
	if (robots_agent_index(
	        p->groups.v, p->groups.n, p->agents.v, p->agents.n, &t) != 0)
		goto out;
	robots_build_plan(p, &t, &h, &comp_base, &total);
	if ((r = calloc(1, total)) == NULL)
		goto out;
	*r = h;
	atomic_init(&r->refs, 1);
	r->nrules = (uint32_t)p->rules.n;
	r->ngroups = (uint32_t)p->groups.n;
	r->nsitemaps = (uint32_t)p->sitemaps.n;
	robots_build_fill_text(p, comp_base, (char *)r + r->text);
	if (p->rules.n > 1 && robots_build_sort_rules(p) != 0)
		goto fail;
	robots_build_fill_tables(
	    p, r, comp_base + p->comp.n + robots_build_token_bytes(p));
	if (robots_build_fill_match(p, &t, r, &nwords) != 0)
		goto fail;
	r->memsize = (uint32_t)robots_build_compact(
	    r, total, robots_build_index_words(&t), nwords);
	if ((shrunk = realloc(r, r->memsize)) != NULL)
		r = shrunk;
	goto out;
fail:
	free(r);
	r = NULL;
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
	robots_parse_body(&p, body, len);
	if (!p.nomem)
		r = robots_build_layout(&p);
	if (r != NULL)
		r = robots_prefs_attach(&p, r);
	robots_prefs_clear(&p);
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
