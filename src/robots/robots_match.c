/*
 * robots_match.c: answers on a compiled ruleset: the verdict for an agent
 * and a match path (RFC 9309 2.2.2: the longest matching pattern wins,
 * allow wins a tie, no match allows, /robots.txt is always allowed), the
 * '*' / '$' glob, and the introspection used by reports. Never allocates.
 * "/robots.txt" is always allowed as that exact match path only (RFC 9309
 * 2.2.2 names the /robots.txt URI): "/robots.txt?x" is an ordinary URL.
 *
 * The glob is greedy and leftmost: a pattern is literal segments separated
 * by '*'; each segment is placed at its first occurrence after the previous
 * one (memmem), and an anchored last segment must end the path. That is
 * exact for '*' (any sequence) and linear in pattern plus path.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"

static const char robots_txt_path[] = "/robots.txt";

/*
 * The first occurrence of needle in hay. glibc's memmem() is linear but
 * costly to set up; a short search is cheaper done by hand, and its worst
 * case (hay times needle) stays small.
 */
static const char *
robots_match_find(const char *hay, size_t n, const char *needle, size_t m)
{
	const char *p = hay, *end = hay + n;

	if (m > n)
		return NULL;
	if (n * m > 4096)
		return memmem(hay, n, needle, m);
	end -= m - 1;
	while (p < end && (p = memchr(p, needle[0], (size_t)(end - p)))) {
		if (memcmp(p + 1, needle + 1, m - 1) == 0)
			return p;
		p++;
	}
	return NULL;
}

/* Match the rest of glob p (n bytes), its literal prefix p[0..pos) done. */
static int
robots_match_glob_rest(
    const char *p, size_t n, int anchored, const char *s, size_t m, size_t pos)
{
	size_t i = pos, j, seg;
	const char *hit, *star;

	while (i < n) {
		i++; /* the '*' */
		star = memchr(p + i, '*', n - i);
		j = star != NULL ? (size_t)(star - p) : n;
		seg = j - i;
		if (j == n && anchored)
			return m - pos >= seg &&
			       memcmp(s + m - seg, p + i, seg) == 0;
		if (seg > 0) {
			hit = robots_match_find(s + pos, m - pos, p + i, seg);
			if (hit == NULL)
				return 0;
			pos = (size_t)(hit - s) + seg;
		}
		i = j;
	}
	return !anchored || pos == m;
}

/* A bit for every byte of s, modulo 64. */
static uint64_t
robots_match_byte_mask(const char *s, size_t n)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m |= (uint64_t)1 << ((unsigned char)s[i] & 63);
	return m;
}

uint64_t
robots_match_need(const char *p, size_t n, size_t lit)
{
	return robots_match_byte_mask(p + lit, n - lit) &
	       ~((uint64_t)1 << ('*' & 63));
}

/*
 * Whether rule c, whose literal prefix is known to match, matches path.
 * *have is the path's robots_match_byte_mask(), computed on first need: a glob
 * needing a byte the path lacks is rejected without reading its pattern.
 */
static inline int
robots_match_rest(const char *text, const struct robots_crule *c,
    const char *path, size_t path_len, uint64_t *have)
{
	if (c->lit_len == c->pat_len)
		return !c->anchored || path_len == c->pat_len;
	if (*have == 0)
		*have = robots_match_byte_mask(path, path_len) | 1;
	if ((robots_crule_need(c) & ~*have) != 0)
		return 0;
	return robots_match_glob_rest(
	    text + c->pat, c->pat_len, c->anchored, path, path_len, c->lit_len);
}

/* Compare a literal with a path: < 0, 0 (a prefix of it) or > 0. */
static int
robots_match_lit_cmp(const char *lit, size_t n, const char *path, size_t m)
{
	int d = memcmp(lit, path, n < m ? n : m);

	if (d != 0)
		return d;
	return n <= m ? 0 : 1;
}

/* The first 8 bytes of s, big-endian, zero-padded: memcmp order. */
static uint64_t
robots_match_key(const char *s, size_t len)
{
	uint64_t k = 0;
	size_t i;

	if (len >= 8) {
		memcpy(&k, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		k = __builtin_bswap64(k);
#endif
		return k;
	}
	for (i = 0; i < 8; i++)
		k = k << 8 | (i < len ? (unsigned char)s[i] : 0);
	return k;
}

/* The greatest node whose literal is not above path, or ROBOTS_NONE. */
static uint32_t
robots_match_floor_node(const char *text, const uint64_t *keys,
    const struct robots_node *nodes, uint32_t n, uint64_t key, const char *path,
    size_t len)
{
	uint32_t lo = 0, hi = n, mid;
	int le;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		/* Both next probes: their cache misses overlap with this one.
		 */
		__builtin_prefetch(&keys[lo + (mid - lo) / 2]);
		__builtin_prefetch(&keys[mid + 1 + (hi - mid - 1) / 2]);
		/* Keys that differ order the literals as memcmp does. */
		if (keys[mid] != key)
			le = keys[mid] < key;
		else
			le = robots_match_lit_cmp(text + nodes[mid].lit,
			         nodes[mid].lit_len, path, len) <= 0;
		if (le)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? ROBOTS_NONE : lo - 1;
}

/* Length of the common prefix of node n's literal (key nkey) and path. */
static size_t
robots_match_common_prefix(const char *text, const struct robots_node *n,
    uint64_t nkey, uint64_t key, const char *path, size_t len)
{
	size_t max = n->lit_len < len ? n->lit_len : len, i;
	uint64_t x = nkey ^ key;

	if (x != 0) { /* the keys tell: the first differing byte */
		i = (size_t)__builtin_clzll(x) / 8;
		return i < max ? i : max;
	}
	for (i = max < 8 ? max : 8; i < max && text[n->lit + i] == path[i]; i++)
		;
	return i;
}

/* A path being checked, with what is worked out about it once. */
struct query {
	const char *path;
	size_t len;
	uint64_t key;  /* robots_match_key() of the path */
	uint64_t have; /* its robots_match_byte_mask(), 0 until needed */
};

/* Whether rule c matches q: its literal prefix, then the rest. */
static inline int
robots_match_rule_matches(
    const char *text, const struct robots_crule *c, struct query *q)
{
	return c->lit_len <= q->len &&
	       memcmp(text + c->pat, q->path, c->lit_len) == 0 &&
	       robots_match_rest(text, c, q->path, q->len, &q->have);
}

int
robots_crule_match(const char *text, const struct robots_crule *c,
    const char *path, size_t path_len)
{
	struct query q = { path, path_len, 0, 0 };

	return robots_match_rule_matches(text, c, &q);
}

/*
 * The smallest index below best of list l that matches, else best: a list
 * without an index is read in table order, the first match decides.
 */
static uint32_t
robots_match_decide_linear(const struct robots *r, const struct robots_list *l,
    uint32_t best, struct query *q)
{
	const char *text = ROBOTS_TAB(r, char, text);
	const struct robots_crule *rules =
	    ROBOTS_TAB(r, struct robots_crule, rules);
	const uint32_t *list = ROBOTS_TAB(r, uint32_t, idx) + l->first;
	uint32_t i, end = l->first + l->count;

	if (l->node_first == ROBOTS_WHOLE_TABLE) {
		for (i = l->first; i < end && i < best; i++)
			if (robots_match_rule_matches(text, &rules[i], q))
				return i;
		return best;
	}
	for (i = 0; i < l->count && list[i] < best; i++)
		if (robots_match_rule_matches(text, &rules[list[i]], q))
			return list[i];
	return best;
}

/* The smallest index below best of list l that matches, else best. */
static uint32_t
robots_match_decide_list(const struct robots *r, const struct robots_list *l,
    uint32_t best, struct query *q)
{
	const char *text = ROBOTS_TAB(r, char, text);
	const struct robots_crule *rules =
	    ROBOTS_TAB(r, struct robots_crule, rules);
	const uint64_t *keys = ROBOTS_TAB(r, uint64_t, nodes) + l->node_first;
	const struct robots_node *nodes =
	    (const struct robots_node *)(const void *)(keys + l->nnodes);
	const uint32_t *list = ROBOTS_TAB(r, uint32_t, idx) + l->first;
	uint32_t n, i, end;
	size_t lcp;

	if (l->nnodes == 0)
		return robots_match_decide_linear(r, l, best, q);
	n = robots_match_floor_node(
	    text, keys, nodes, l->nnodes, q->key, q->path, q->len);
	if (n == ROBOTS_NONE)
		return best;
	lcp = robots_match_common_prefix(
	    text, &nodes[n], keys[n], q->key, q->path, q->len);
	while (n != ROBOTS_NONE && nodes[n].lit_len > lcp)
		n = nodes[n].parent;
	for (; n != ROBOTS_NONE; n = nodes[n].parent) {
		i = nodes[n].first;
		if (list[i] >= best)
			continue;
		if (nodes[n].plain) {
			best = list[i];
			continue;
		}
		end = n + 1 < l->nnodes ? nodes[n + 1].first : l->count;
		for (; i < end && list[i] < best; i++)
			if (robots_match_rest(text, &rules[list[i]], q->path,
			        q->len, &q->have)) {
				best = list[i];
				break;
			}
	}
	return best;
}

/* The deciding rule of m's lists for path: the smallest matching index. */
static uint32_t
robots_match_decide(const struct robots *r, const struct robots_merged *m,
    const char *path, size_t path_len)
{
	struct query q = { path, path_len, robots_match_key(path, path_len),
		0 };
	const struct robots_list *lists;
	const uint32_t *al;
	uint32_t best = ROBOTS_NONE, k;

	if (m->nlists == 1)
		return robots_match_decide_list(r, &m->list, best, &q);
	lists = ROBOTS_TAB(r, struct robots_list, lists);
	al = (const uint32_t *)(const void *)((const char *)r +
	                                      robots_agent_lists_off(r));
	for (k = 0; k < m->nlists; k++)
		best = robots_match_decide_list(
		    r, &lists[al[m->list_first + k]], best, &q);
	return best;
}

/*
 * Entries by literal, then by table index. The keys are a prefix of the
 * literal in the same byte order, so they decide whenever they differ.
 */
static int
robots_match_sortent_less(
    const struct robots_sortent *x, const struct robots_sortent *y)
{
	int d;

	if (x->key != y->key)
		return x->key < y->key;
	if (x->len >= 8 && y->len >= 8) /* equal keys: equal first 8 bytes */
		d = memcmp(x->lit + 8, y->lit + 8,
		    (x->len < y->len ? x->len : y->len) - 8);
	else if (x->len > 0 && y->len > 0) /* lit may be NULL when len is 0 */
		d = memcmp(x->lit, y->lit, x->len < y->len ? x->len : y->len);
	else
		d = 0;
	if (d != 0)
		return d < 0;
	if (x->len != y->len)
		return x->len < y->len;
	return x->idx < y->idx;
}

/* Insertion sort of v[0..n). */
static void
robots_match_sortent_insertion(struct robots_sortent *v, uint32_t n)
{
	struct robots_sortent t;
	uint32_t i, j;

	for (i = 1; i < n; i++) {
		t = v[i];
		j = i;
		while (j > 0 && robots_match_sortent_less(&t, &v[j - 1])) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

/* Restore the max-heap below root i of v[0..n). */
static void
robots_match_sortent_sift(struct robots_sortent *v, uint32_t i, uint32_t n)
{
	struct robots_sortent t = v[i];
	uint32_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && robots_match_sortent_less(&v[c], &v[c + 1]))
			c++;
		if (!robots_match_sortent_less(&t, &v[c]))
			break;
		v[i] = v[c];
		i = c;
	}
	v[i] = t;
}

uint64_t
robots_sortent_key(const char *s, size_t len)
{
	return robots_match_key(s, len);
}

/* Heap sort: the bounded fallback when quicksort pivots go badly. */
static void
robots_match_sortent_heap(struct robots_sortent *v, uint32_t n)
{
	struct robots_sortent t;
	uint32_t i;

	for (i = n / 2; i-- > 0;)
		robots_match_sortent_sift(v, i, n);
	for (i = n; i-- > 1;) {
		t = v[0];
		v[0] = v[i];
		v[i] = t;
		robots_match_sortent_sift(v, 0, i);
	}
}

/* Introsort: quicksort, median of three, heap sort past depth budget. */
void
robots_sortent_sort(struct robots_sortent *v, uint32_t n, int budget)
{
	struct robots_sortent t, pivot;
	uint32_t i, j, m;

	while (n > 16) {
		if (budget-- == 0) {
			robots_match_sortent_heap(v, n);
			return;
		}
		m = n / 2;
		if (robots_match_sortent_less(&v[m], &v[0]))
			t = v[m], v[m] = v[0], v[0] = t;
		if (robots_match_sortent_less(&v[n - 1], &v[m])) {
			t = v[m], v[m] = v[n - 1], v[n - 1] = t;
			if (robots_match_sortent_less(&v[m], &v[0]))
				t = v[m], v[m] = v[0], v[0] = t;
		}
		pivot = v[m];
		for (i = 0, j = n - 1;;) {
			while (robots_match_sortent_less(&v[i], &pivot))
				i++;
			while (robots_match_sortent_less(&pivot, &v[j]))
				j--;
			if (i >= j)
				break;
			t = v[i], v[i] = v[j], v[j] = t;
			i++, j--;
		}
		/* v[0..j] <= pivot <= v[j+1..n): recurse on the smaller. */
		if (j + 1 < n - j - 1) {
			robots_sortent_sort(v, j + 1, budget);
			v += j + 1, n -= j + 1;
		} else {
			robots_sortent_sort(v + j + 1, n - j - 1, budget);
			n = j + 1;
		}
	}
	robots_match_sortent_insertion(v, n);
}

uint32_t
robots_match_index(const struct robots *r, uint32_t *list, uint32_t n,
    uint64_t *words, struct robots_sortent *tmp, uint32_t *stack)
{
	const char *text = ROBOTS_TAB(r, char, text);
	const struct robots_crule *rules =
	                              ROBOTS_TAB(r, struct robots_crule, rules),
	                          *c;
	struct robots_node *nodes = (struct robots_node *)(void *)(words + n);
	uint32_t i, nn = 0, depth = 0;

	for (i = 0; i < n; i++) {
		tmp[i].lit = text + rules[list[i]].pat;
		tmp[i].len = rules[list[i]].lit_len;
		tmp[i].idx = list[i];
		tmp[i].key = robots_match_key(tmp[i].lit, tmp[i].len);
	}
	robots_sortent_sort(tmp, n, 64);
	for (i = 0; i < n; i++) {
		list[i] = tmp[i].idx;
		if (nn > 0 && tmp[i].len == nodes[nn - 1].lit_len &&
		    memcmp(tmp[i].lit, text + nodes[nn - 1].lit, tmp[i].len) ==
		        0)
			continue; /* same literal: same node */
		/* The parent is the nearest node on the stack that prefixes it.
		 */
		while (depth > 0 &&
		       robots_match_lit_cmp(text + nodes[stack[depth - 1]].lit,
		           nodes[stack[depth - 1]].lit_len, tmp[i].lit,
		           tmp[i].len) != 0)
			depth--;
		words[nn] = robots_match_key(tmp[i].lit, tmp[i].len);
		nodes[nn].lit = (uint32_t)(tmp[i].lit - text);
		nodes[nn].lit_len = (uint16_t)tmp[i].len;
		c = &rules[tmp[i].idx];
		nodes[nn].plain = c->lit_len == c->pat_len && !c->anchored;
		nodes[nn].parent = depth > 0 ? stack[depth - 1] : ROBOTS_NONE;
		nodes[nn].first = i;
		stack[depth++] = nn++;
	}
	/* The nodes follow the keys. */
	memmove(words + nn, nodes, nn * sizeof(*nodes));
	return nn;
}

/* The merged rules that apply to agent: its own, else '*', else NULL. */
static const struct robots_merged *
robots_match_choose(const struct robots *r, const char *agent, size_t agent_len)
{
	const struct robots_merged *a;

	/* Start the '*' index on its way while the token is looked up. */
	if (r->global.nlists > 0 && r->global.list.nnodes > 0)
		__builtin_prefetch(ROBOTS_TAB(r, uint64_t, nodes) +
		                   r->global.list.node_first +
		                   r->global.list.nnodes / 2);
	a = r->nagents == 0 ? NULL /* only '*' groups: no token to look up */
	                    : robots_agent_find(r, agent,
	                          robots_agent_token(agent, agent_len));
	if (a == NULL && r->global.nlists > 0)
		a = &r->global;
	return a;
}

void
robots_check(const struct robots *r, const char *agent, size_t agent_len,
    const char *path, size_t path_len, struct robots_verdict *v)
{
	const struct robots_merged *a =
	    robots_match_choose(r, agent, agent_len);
	const struct robots_crule *c;
	uint32_t i;

	memset(v, 0, sizeof(*v));
	v->allowed = 1;
	v->reason = ROBOTS_REASON_NO_RULE;
	v->crawl_delay = a != NULL ? a->crawl_delay : -1.0;
	if (path == NULL)
		path = "", path_len = 0;
	if (path_len == sizeof(robots_txt_path) - 1 &&
	    memcmp(path, robots_txt_path, path_len) == 0) {
		v->reason = ROBOTS_REASON_ROBOTS_TXT;
		return;
	}
	if (a == NULL ||
	    (i = robots_match_decide(r, a, path, path_len)) == ROBOTS_NONE)
		return;
	c = ROBOTS_TAB(r, struct robots_crule, rules) + i;
	v->allowed = c->allow;
	v->reason = ROBOTS_REASON_RULE;
	v->rule.directive = c->allow ? ROBOTS_ALLOW : ROBOTS_DISALLOW;
	v->rule.pattern = ROBOTS_TAB(r, char, text) + c->src;
	v->rule.pattern_len = c->src_len;
	v->rule.line = c->line;
}

const char *
robots_directive_name(enum robots_directive d)
{
	return d == ROBOTS_ALLOW ? "allow" : "disallow";
}

const char *
robots_reason_name(enum robots_reason reason)
{
	switch (reason) {
	case ROBOTS_REASON_RULE:
		return "rule";
	case ROBOTS_REASON_NO_RULE:
		return "no_rule";
	case ROBOTS_REASON_ROBOTS_TXT:
		return "robots_txt";
	}
	return "unknown";
}

/* The groups of r as written. */
static const struct robots_group *
robots_match_groups(const struct robots *r)
{
	return ROBOTS_TAB(r, struct robots_group, groups);
}

size_t
robots_rule_count(const struct robots *r)
{
	size_t g, n = 0;

	for (g = 0; g < r->ngroups; g++)
		n += robots_match_groups(r)[g].rule_count;
	return n;
}

size_t
robots_group_count(const struct robots *r)
{
	return r->ngroups;
}

size_t
robots_group_agent_count(const struct robots *r, size_t group)
{
	return group < r->ngroups ? robots_match_groups(r)[group].agent_count
	                          : 0;
}

const char *
robots_group_agent(
    const struct robots *r, size_t group, size_t agent, size_t *len)
{
	const struct robots_span *s;

	if (group >= r->ngroups ||
	    agent >= robots_match_groups(r)[group].agent_count) {
		*len = 0;
		return NULL;
	}
	s = ROBOTS_TAB(r, struct robots_span, gagents) +
	    robots_match_groups(r)[group].agent_first + agent;
	if (s->off == ROBOTS_GLOBAL_OFF) {
		*len = 1;
		return "*";
	}
	*len = s->len;
	return ROBOTS_TAB(r, char, text) + s->off;
}

size_t
robots_group_rule_count(const struct robots *r, size_t group)
{
	return group < r->ngroups ? robots_match_groups(r)[group].rule_count
	                          : 0;
}

double
robots_group_crawl_delay(const struct robots *r, size_t group)
{
	return group < r->ngroups ? robots_match_groups(r)[group].crawl_delay
	                          : -1.0;
}

size_t
robots_sitemap_count(const struct robots *r)
{
	return r->nsitemaps;
}

const char *
robots_sitemap(const struct robots *r, size_t i, size_t *len)
{
	const struct robots_span *s;

	if (i >= r->nsitemaps) {
		*len = 0;
		return NULL;
	}
	s = ROBOTS_TAB(r, struct robots_span, sitemaps) + i;
	*len = s->len;
	return ROBOTS_TAB(r, char, text) + s->off;
}

/*
 * Every table entry of list l, in table order, to cb as the rule written:
 * an index.html twin comes out as the Allow line it was made from.
 */
static void
robots_match_list_rules(const struct robots *r, const struct robots_list *l,
    robots_rule_cb cb, void *arg)
{
	const struct robots_crule *rules =
	    ROBOTS_TAB(r, struct robots_crule, rules);
	const uint32_t *idx = ROBOTS_TAB(r, uint32_t, idx);
	const char *text = ROBOTS_TAB(r, char, text);
	struct robots_rule w;
	const struct robots_crule *c;
	uint32_t i;

	for (i = 0; i < l->count; i++) {
		c = &rules[l->node_first == ROBOTS_WHOLE_TABLE
		               ? l->first + i
		               : idx[l->first + i]];
		w.directive = c->allow ? ROBOTS_ALLOW : ROBOTS_DISALLOW;
		w.pattern = text + c->src;
		w.pattern_len = c->src_len;
		w.line = c->line;
		cb(&w, arg);
	}
}

/* The rules that apply to agent; see robots.h. */
void
robots_agent_rules(const struct robots *r, const char *agent, size_t agent_len,
    robots_rule_cb cb, void *arg)
{
	const struct robots_merged *a =
	    robots_match_choose(r, agent, agent_len);
	const struct robots_list *lists;
	const uint32_t *al;
	uint32_t k;

	if (a == NULL)
		return;
	if (a->nlists == 1) {
		robots_match_list_rules(r, &a->list, cb, arg);
		return;
	}
	lists = ROBOTS_TAB(r, struct robots_list, lists);
	al = (const uint32_t *)(const void *)((const char *)r +
	                                      robots_agent_lists_off(r));
	for (k = 0; k < a->nlists; k++)
		robots_match_list_rules(
		    r, &lists[al[a->list_first + k]], cb, arg);
}
