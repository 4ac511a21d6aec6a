/*
 * robots_parse.c: robots.txt body -> compiled ruleset (RFC 9309, with the
 * line, key and group handling of Google's reference parser where the RFC
 * is silent). Owns the ruleset's life: robots_parse, robots_ref,
 * robots_unref, robots_memsize.
 *
 * Parsing collects lines into temporary vectors (rules, groups, agent
 * lines, sitemaps, compiled patterns); build() then lays the result out in
 * one allocation (see robots_int.h).
 *
 * As google/robotstxt does: a partial leading BOM is skipped too; a NUL
 * ends its line; a line keeps its first 16,663 bytes (kMaxLineLen - 1);
 * keys match by case-insensitive prefix ("Disallowed:" is a disallow);
 * allow/disallow lines, even empty ones, end a run of User-agent lines,
 * other lines do not; a value that starts with neither '/' nor '*' is kept
 * but can never match a path. Where it has nothing to say, we chose:
 * Crawl-delay (a decimal number; not a group separator) takes the group's
 * first valid value, and a token in several groups takes the first group's
 * in file order; a User-agent value with no product token ("123") names
 * nobody; the index.html twin reports the Allow line it came from.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"

/* Google keeps kMaxLineLen - 1 = 16,663 bytes of a line. */
#define LINE_KEEP (ROBOTS_MAX_LINE - 1)
#define ROBOTS_NONE UINT32_MAX

enum key {
	KEY_NONE,
	KEY_USER_AGENT,
	KEY_ALLOW,
	KEY_DISALLOW,
	KEY_SITEMAP,
	KEY_CRAWL_DELAY,
};

/* A rule table entry before layout; src points into the body. */
struct trule {
	const char *src;
	uint32_t src_len;
	uint32_t line;
	uint32_t group;
	uint32_t seq;      /* creation order: a stable tie-break */
	uint32_t comp;     /* offset in the compiled-pattern buffer */
	uint32_t comp_len; /* without the anchoring '$' */
	uint32_t lit_len;
	uint32_t prio;
	uint32_t src_off; /* offsets in the ruleset's text, set at layout */
	uint32_t pat_off;
	uint8_t allow;
	uint8_t anchored;
	uint8_t shared; /* the compiled pattern is a prefix of src */
	uint8_t twin;   /* index.html twin of the rule created before it */
};

/* A sitemap before layout. */
struct tspan {
	const char *s;
	uint32_t len;
};

/* Growable vector of fixed-size elements. */
struct vec {
	void *v;
	size_t n;
	size_t cap;
};

struct parser {
	struct vec rules;    /* struct trule */
	struct vec groups;   /* struct robots_tgroup */
	struct vec agents;   /* struct robots_tagent */
	struct vec sitemaps; /* struct tspan */
	struct vec comp;     /* char */
	uint32_t seq;
	int nomem;
};

/* Make room for k more elements of size sz; 0 on success. */
static int
vec_reserve(struct vec *v, size_t sz, size_t k, int *nomem)
{
	size_t cap;
	void *p;

	if (v->n + k <= v->cap)
		return 0;
	cap = v->cap ? v->cap : 16;
	while (cap < v->n + k)
		cap *= 2;
	if ((p = realloc(v->v, cap * sz)) == NULL) {
		*nomem = 1;
		return -1;
	}
	v->v = p;
	v->cap = cap;
	return 0;
}

/* Append one zeroed element; NULL when memory runs out. */
static void *
vec_push(struct vec *v, size_t sz, int *nomem)
{
	char *e;

	if (vec_reserve(v, sz, 1, nomem) != 0)
		return NULL;
	e = (char *)v->v + v->n++ * sz;
	memset(e, 0, sz);
	return e;
}

/* C isspace() in the C locale. */
static int
is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Whether key starts with lit (lower case), ignoring ASCII case. */
static int
prefix_ci(const char *key, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; lit[i] != '\0'; i++) {
		unsigned char c = (unsigned char)key[i];

		if (i >= n || (c | 0x20) != (unsigned char)lit[i])
			return 0;
	}
	return 1;
}

/* The directive a key names; keys match by prefix as in Google's parser. */
static enum key
classify(const char *k, size_t n)
{
	/* The names' first letters differ: one switch picks the candidates. */
	switch (n > 0 ? (unsigned char)k[0] | 0x20 : 0) {
	case 'u':
		if (prefix_ci(k, n, "user-agent") ||
		    prefix_ci(k, n, "useragent") ||
		    prefix_ci(k, n, "user agent"))
			return KEY_USER_AGENT;
		break;
	case 'a':
		if (prefix_ci(k, n, "allow"))
			return KEY_ALLOW;
		break;
	case 'd':
		if (prefix_ci(k, n, "disallow") ||
		    prefix_ci(k, n, "dissallow") ||
		    prefix_ci(k, n, "dissalow") || prefix_ci(k, n, "disalow") ||
		    prefix_ci(k, n, "diasllow") || prefix_ci(k, n, "disallaw"))
			return KEY_DISALLOW;
		break;
	case 's':
		if (prefix_ci(k, n, "sitemap") || prefix_ci(k, n, "site-map"))
			return KEY_SITEMAP;
		break;
	case 'c':
		if (prefix_ci(k, n, "crawl-delay"))
			return KEY_CRAWL_DELAY;
		break;
	}
	return KEY_NONE;
}

/* Parse a Crawl-delay value: digits with an optional fraction; -1 if bad. */
static double
parse_delay(const char *s, size_t n)
{
	double v = 0, scale = 1;
	size_t i = 0, digits = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
			v += (s[i] - '0') * (scale /= 10);
	return digits > 0 && i == n ? v : -1.0;
}

/* The current group, or NULL before the first User-agent line. */
static struct robots_tgroup *
cur_group(struct parser *p)
{
	return p->groups.n
	           ? (struct robots_tgroup *)p->groups.v + p->groups.n - 1
	           : NULL;
}

/* A User-agent line: extend the current group or start the next one. */
static void
on_user_agent(struct parser *p, const char *v, size_t n)
{
	struct robots_tgroup *g = cur_group(p);
	struct robots_tagent *a;
	size_t tok;

	if (g == NULL || g->separated) {
		if ((g = vec_push(&p->groups, sizeof(*g), &p->nomem)) == NULL)
			return;
		g->agent_first = (uint32_t)p->agents.n;
		g->crawl_delay = -1.0;
	}
	if (robots_agent_is_global(v, n)) {
		tok = 1;
	} else if ((tok = robots_agent_token(v, n)) == 0) {
		return; /* names nobody */
	}
	if ((a = vec_push(&p->agents, sizeof(*a), &p->nomem)) == NULL)
		return;
	a->src = v;
	a->len = (uint32_t)tok;
	a->global = robots_agent_is_global(v, n);
	g->global |= a->global;
	g->agent_count++;
}

/* Rewrite a normalized pattern o[0..k) in place; returns the new length. */
static size_t
compile_tail(char *o, size_t k, struct trule *r)
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

/* Position after the last '/' of o if "index.htm" follows it, else 0. */
static size_t
index_html_dir(const char *o, size_t k)
{
	size_t i = k;

	while (i > 0 && o[i - 1] != '/')
		i--;
	if (i == 0 || k - i < 9 || memcmp(o + i, "index.htm", 9) != 0)
		return 0;
	return i;
}

/*
 * Google: an Allow pattern ending in /index.htm(l) also allows its directory,
 * as "Allow: /dir/$" would (specificity: the length of "/dir/$").
 */
static void
add_twin(struct parser *p, const struct trule *r, size_t norm_dir)
{
	const char *o = (const char *)p->comp.v + r->comp;
	size_t dir = index_html_dir(o, r->comp_len);
	struct trule *t;

	if (dir == 0 ||
	    (t = vec_push(&p->rules, sizeof(*t), &p->nomem)) == NULL)
		return;
	*t = *r;
	t->seq = p->seq++;
	t->twin = 1;
	t->comp_len = (uint32_t)dir;
	t->anchored = 1;
	t->lit_len = r->lit_len < dir ? r->lit_len : (uint32_t)dir;
	t->prio = (uint32_t)norm_dir + 1;
	((struct robots_tgroup *)p->groups.v)[r->group].table_count++;
}

/* An allow or disallow line with a non-empty value in the current group. */
static void
add_rule(struct parser *p, const char *v, size_t n, int allow, uint32_t line)
{
	struct trule *r, copy;
	size_t k, norm_dir = 0;
	char *o;

	if (vec_reserve(&p->comp, 1, 3 * n, &p->nomem) != 0 ||
	    (r = vec_push(&p->rules, sizeof(*r), &p->nomem)) == NULL)
		return;
	r->src = v;
	r->src_len = (uint32_t)n;
	r->line = line;
	r->group = (uint32_t)p->groups.n - 1;
	r->seq = p->seq++;
	r->allow = (uint8_t)allow;
	r->comp = (uint32_t)p->comp.n;
	o = (char *)p->comp.v + p->comp.n;
	k = robots_pct_normalize(v, n, o, 1);
	r->prio = (uint32_t)k;
	if (allow)
		norm_dir = index_html_dir(o, k);
	k = compile_tail(o, k, r);
	r->shared = k <= n && memcmp(o, v, k) == 0;
	if (!r->shared)
		p->comp.n += k;
	cur_group(p)->rule_count++;
	cur_group(p)->table_count++;
	copy = *r;
	if (norm_dir > 0)
		add_twin(p, &copy, norm_dir);
}

/* Act on one key: value line. */
static void
dispatch(struct parser *p, enum key key, const char *v, size_t n, uint32_t line)
{
	struct robots_tgroup *g = cur_group(p);
	struct tspan *s;
	double d;

	switch (key) {
	case KEY_USER_AGENT:
		on_user_agent(p, v, n);
		break;
	case KEY_ALLOW:
	case KEY_DISALLOW:
		if (g == NULL) /* before any User-agent: nobody's rule */
			break;
		g->separated = 1;
		if (n > 0)
			add_rule(p, v, n, key == KEY_ALLOW, line);
		break;
	case KEY_SITEMAP:
		if (n > 0 &&
		    (s = vec_push(&p->sitemaps, sizeof(*s), &p->nomem))) {
			s->s = v;
			s->len = (uint32_t)n;
		}
		break;
	case KEY_CRAWL_DELAY:
		if (g != NULL && g->crawl_delay < 0 &&
		    (d = parse_delay(v, n)) >= 0)
			g->crawl_delay = d;
		break;
	case KEY_NONE:
		break;
	}
}

/* Split one line into key and value the way Google's parser does. */
static void
parse_line(struct parser *p, const char *l, size_t n, uint32_t line)
{
	const char *cut, *sep, *v, *end;
	size_t kn;

	if ((cut = memchr(l, '\0', n)) != NULL) /* it reads C strings */
		n = (size_t)(cut - l);
	if ((cut = memchr(l, '#', n)) != NULL)
		n = (size_t)(cut - l);
	while (n > 0 && is_space((unsigned char)l[n - 1]))
		n--;
	while (n > 0 && is_space((unsigned char)*l))
		l++, n--;
	end = l + n;
	if (n == 0)
		return;
	if ((sep = memchr(l, ':', n)) == NULL) {
		/* No colon: "key value", exactly two tokens. */
		for (sep = l; sep < end && *sep != ' ' && *sep != '\t'; sep++)
			;
		if (sep == end)
			return;
		for (v = sep; *v == ' ' || *v == '\t'; v++)
			;
		for (; v < end; v++)
			if (*v == ' ' || *v == '\t')
				return;
	}
	for (kn = (size_t)(sep - l);
	     kn > 0 && is_space((unsigned char)l[kn - 1]); kn--)
		;
	if (kn == 0)
		return;
	for (v = sep + 1; v < end && is_space((unsigned char)*v); v++)
		;
	dispatch(p, classify(l, kn), v, (size_t)(end - v), line);
}

/* At least one byte of v is zero (the classic SWAR test). */
#define HAS_ZERO(v) (((v)-0x0101010101010101ULL) & ~(v)&0x8080808080808080ULL)

/* The first CR or LF at or after s, or end; eight bytes at a time. */
static const char *
line_end(const char *s, const char *end)
{
	uint64_t v;

	while (end - s >= 8) {
		memcpy(&v, s, 8);
		if (HAS_ZERO(v ^ 0x0a0a0a0a0a0a0a0aULL) |
		    HAS_ZERO(v ^ 0x0d0d0d0d0d0d0d0dULL))
			break;
		s += 8;
	}
	while (s < end && *s != '\n' && *s != '\r')
		s++;
	return s;
}

/* Cut the body into lines: CR, LF or CRLF; a leading (partial) BOM skipped. */
static void
parse_body(struct parser *p, const char *body, size_t len)
{
	static const char bom[] = "\xEF\xBB\xBF";
	const char *s = body, *end, *e;
	uint32_t line = 0;
	size_t n;

	if (len > ROBOTS_MAX_BODY)
		len = ROBOTS_MAX_BODY;
	end = body + len;
	while (s < end && s - body < 3 && *s == bom[s - body])
		s++;
	for (;;) {
		e = line_end(s, end);
		n = (size_t)(e - s);
		parse_line(p, s, n < LINE_KEEP ? n : LINE_KEEP, ++line);
		if (e == end || p->nomem)
			break;
		if (*e == '\r' && e + 1 < end && e[1] == '\n')
			e++;
		s = e + 1;
	}
}

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
