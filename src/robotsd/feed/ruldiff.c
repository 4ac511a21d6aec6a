/*
 * ruldiff.c: the patterns newly disallowed and newly allowed for an agent
 * between two rulesets (see ruldiff.h). Each side's rules are gathered,
 * sorted and made distinct, then the two sorted lists are walked together.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "robots.h"
#include "ascii.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "feed/ruldiff.h"

/* One side's patterns of one directive. */
struct patv {
	struct ruldiff_pat *v;
	size_t n, cap;
	int nomem;
};

/* Both directives of one side. */
struct side_pats {
	struct patv dis, allow;
};

static const struct ruldiff_pat slash = { "/", 1 };

static int
patv_add(struct patv *pv, const char *p, size_t len)
{
	struct ruldiff_pat *nv;
	size_t cap;

	if (pv->n == pv->cap) {
		cap = pv->cap ? pv->cap * 2 : 16;
		if ((nv = realloc(pv->v, cap * sizeof(*nv))) == NULL) {
			pv->nomem = 1;
			return -1;
		}
		pv->v = nv;
		pv->cap = cap;
	}
	pv->v[pv->n].p = p;
	pv->v[pv->n++].len = len;
	return 0;
}

static int
pat_cmp(const struct ruldiff_pat *a, const struct ruldiff_pat *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n > 0 ? memcmp(a->p, b->p, n) : 0;

	if (c != 0)
		return c;
	return (a->len > b->len) - (a->len < b->len);
}

static int
pat_qcmp(const void *a, const void *b)
{
	return pat_cmp(a, b);
}

/* Sort, keeping repeats. */
static void
patv_sort(struct patv *pv)
{
	if (pv->n > 0)
		qsort(pv->v, pv->n, sizeof(*pv->v), pat_qcmp);
}

/* Sort and drop repeats. */
static void
patv_unique(struct patv *pv)
{
	size_t i, n = 0;

	if (pv->n == 0)
		return;
	qsort(pv->v, pv->n, sizeof(*pv->v), pat_qcmp);
	for (i = 1; i < pv->n; i++)
		if (pat_cmp(&pv->v[i], &pv->v[n]) != 0)
			pv->v[++n] = pv->v[i];
	pv->n = n + 1;
}

static void
side_rule(const struct robots_rule *rule, void *arg)
{
	struct side_pats *sp = arg;

	if (rule->directive == ROBOTS_ALLOW)
		patv_add(&sp->allow, rule->pattern, rule->pattern_len);
	else
		patv_add(&sp->dis, rule->pattern, rule->pattern_len);
}

/* The agent's patterns on one side; -1 when memory runs out. */
static int
side_gather(const struct ruldiff_side *s, const char *agent, size_t len,
    struct side_pats *sp)
{
	memset(sp, 0, sizeof(*sp));
	if (s->state == RULDIFF_RULES && s->robots != NULL)
		robots_agent_rules(s->robots, agent, len, side_rule, sp);
	if (sp->dis.nomem || sp->allow.nomem)
		return -1;
	patv_unique(&sp->dis);
	patv_unique(&sp->allow);
	return 0;
}

/* Append to out what a holds and b does not (both sorted, distinct). */
static void
patv_minus(struct patv *out, const struct patv *a, const struct patv *b)
{
	size_t i = 0, j = 0;
	int c;

	while (i < a->n) {
		c = j < b->n ? pat_cmp(&a->v[i], &b->v[j]) : -1;
		if (c < 0)
			patv_add(out, a->v[i].p, a->v[i].len), i++;
		else if (c == 0)
			i++, j++;
		else
			j++;
	}
}

static void
patv_take(struct patv *pv, struct ruldiff_pat **v, size_t *n)
{
	patv_unique(pv);
	*v = pv->v;
	*n = pv->n;
}

/* Whether octet c may be in a product token (robots.h: [A-Za-z_-]). */
static int
token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
	       c == '_';
}

/* The agent's product token's length at the start of agent. */
static size_t
agent_token_len(const char *agent, size_t len)
{
	size_t n = 0;

	while (n < len && token_char((unsigned char)agent[n]))
		n++;
	return n;
}

/* Does group g of r name the token (len 0: the '*' group)? */
static int
group_names(const struct robots *r, size_t g, const char *tok, size_t len)
{
	size_t j, n;
	const char *a;

	for (j = 0; j < robots_group_agent_count(r, g); j++) {
		a = robots_group_agent(r, g, j, &n);
		if (len == 0 ? n == 1 && a[0] == '*'
		             : n == len && strncasecmp(a, tok, len) == 0)
			return 1;
	}
	return 0;
}

/* The groups selection picks for the token: its own, else '*'. */
static unsigned char *
select_groups(const struct robots *r, const char *tok, size_t len)
{
	size_t g, ng = robots_group_count(r), own = 0;
	unsigned char *sel = calloc(ng + 1, 1);

	if (sel == NULL)
		return NULL;
	for (g = 0; len > 0 && g < ng; g++)
		own += sel[g] = (unsigned char)group_names(r, g, tok, len);
	for (g = 0; own == 0 && g < ng; g++)
		sel[g] = (unsigned char)group_names(r, g, "*", 0);
	return sel;
}

/* Is an extra line a preference statement; which kind (1, 2), else 0. */
static int
pref_kind(const struct robots_extra *x)
{
	if (x->name_len == 13 && strncasecmp(x->name, "content-usage", 13) == 0)
		return 1;
	if (x->name_len == 14 &&
	    strncasecmp(x->name, "content-signal", 14) == 0)
		return 2;
	return 0;
}

/*
 * The agent's preference statements on side s as "K:VALUE" patterns
 * (views into out's own buffer text); -1 when memory runs out.
 */
static int
usage_gather(const struct ruldiff_side *s, const char *agent, size_t len,
    struct patv *pv, struct buf *text)
{
	const struct robots *r = s->robots;
	struct robots_extra x;
	unsigned char *sel;
	size_t i, n, tl = agent_token_len(agent, len);
	size_t *offs;
	int k;

	if (s->state != RULDIFF_RULES || r == NULL)
		return 0;
	if ((sel = select_groups(r, agent, tl)) == NULL)
		return -1;
	n = robots_extra_count(r);
	if ((offs = calloc(2 * n + 1, sizeof(*offs))) == NULL) {
		free(sel);
		return -1;
	}
	for (i = 0; i < n; i++) {
		robots_extra(r, i, &x);
		offs[2 * i] = SIZE_MAX;
		if ((k = pref_kind(&x)) == 0 ||
		    (x.group < 0 ? k != 2 : !sel[x.group]))
			continue;
		offs[2 * i] = text->len;
		buf_add(text, k == 1 ? "u:" : "s:", 2);
		buf_add(text, x.value, x.value_len);
		offs[2 * i + 1] = text->len;
	}
	/* the text is complete: views into it now */
	for (i = 0; i < n && text->state == BUF_OK; i++)
		if (offs[2 * i] != SIZE_MAX)
			patv_add(pv, text->p + offs[2 * i],
			    offs[2 * i + 1] - offs[2 * i]);
	free(offs);
	free(sel);
	return text->state == BUF_OK && !pv->nomem ? 0 : -1;
}

/* usage_changed of ruldiff.h: 1, 0, -1 unknown. */
static int
usage_changed(const struct ruldiff_side *old, const struct ruldiff_side *new,
    const char *agent, size_t len)
{
	struct patv o = { 0 }, n = { 0 };
	struct buf to = BUF_INIT(0), tn = BUF_INIT(0);
	size_t i;
	int rc = 0;

	if ((old->state == RULDIFF_RULES && old->robots != NULL &&
	        !robots_has_prefs(old->robots)) ||
	    (new->state == RULDIFF_RULES &&new->robots != NULL &&
	        !robots_has_prefs(new->robots)))
		return -1;
	if (usage_gather(old, agent, len, &o, &to) == -1 ||
	    usage_gather(new, agent, len, &n, &tn) == -1)
		rc = -1;
	else {
		patv_sort(&o);
		patv_sort(&n);
		rc = o.n != n.n;
		for (i = 0; !rc && i < o.n; i++)
			rc = pat_cmp(&o.v[i], &n.v[i]) != 0;
	}
	free(o.v), free(n.v);
	buf_clear(&to), buf_clear(&tn);
	return rc;
}

/* See ruldiff.h. */
int
ruldiff_agent(const struct ruldiff_side *old, const struct ruldiff_side *new,
    const char *agent, size_t agent_len, struct ruldiff *d)
{
	struct side_pats o = { 0 }, n = { 0 };
	struct patv dis = { 0 }, allow = { 0 };
	int odis = old->state == RULDIFF_DISALLOW_ALL;
	int ndis = new->state == RULDIFF_DISALLOW_ALL;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (odis || ndis) {
		if (odis != ndis)
			rc = patv_add(ndis ? &dis : &allow, slash.p, slash.len);
	} else if (side_gather(old, agent, agent_len, &o) == -1 ||
	           side_gather(new, agent, agent_len, &n) == -1) {
		rc = -1;
	} else {
		patv_minus(&dis, &n.dis, &o.dis);
		patv_minus(&dis, &o.allow, &n.allow);
		patv_minus(&allow, &n.allow, &o.allow);
		patv_minus(&allow, &o.dis, &n.dis);
	}
	free(o.dis.v), free(o.allow.v), free(n.dis.v), free(n.allow.v);
	if (rc == -1 || dis.nomem || allow.nomem) {
		free(dis.v), free(allow.v);
		return -1;
	}
	patv_take(&dis, &d->dis, &d->ndis);
	patv_take(&allow, &d->allow, &d->nallow);
	d->usage_changed = usage_changed(old, new, agent, agent_len);
	return 0;
}

void
ruldiff_clear(struct ruldiff *d)
{
	free(d->dis);
	free(d->allow);
	memset(d, 0, sizeof(*d));
}

void
ruldiff_pats_json(struct jw *w, const struct ruldiff_pat *v, size_t n)
{
	size_t i;

	jw_arr(w);
	for (i = 0; i < n; i++)
		jw_vstr(w, v[i].p, v[i].len);
	jw_end(w);
}

void
ruldiff_json(struct jw *w, const struct ruldiff *d)
{
	jw_key(w, "newly_disallowed");
	ruldiff_pats_json(w, d->dis, d->ndis);
	jw_key(w, "newly_allowed");
	ruldiff_pats_json(w, d->allow, d->nallow);
	if (d->usage_changed == 1 || d->usage_changed == 0)
		jw_kbool(w, "usage_changed", d->usage_changed);
}

/* --- keys: agents with the same difference ------------------------------ */

/*
 * A token either side names (as the ruleset holds it: any case), and the
 * rules its groups hold on each side.
 */
struct named {
	const char *tok;
	size_t len;
	size_t rules[2];
	unsigned char on[2]; /* named on side 0 (old), 1 (new) */
};

struct ruldiff_names {
	struct named *v;
	size_t n;
	size_t star[2]; /* the rules of each side's '*' groups */
	size_t base;    /* agent and extra lines: every key walks them */
};

/* Tokens ordered without ASCII case, then by length. */
static int
named_cmp(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;
	size_t i, n = a->len < b->len ? a->len : b->len;
	int c;

	for (i = 0; i < n; i++)
		if ((c = ascii_lower((unsigned char)a->tok[i]) -
		         ascii_lower((unsigned char)b->tok[i])) != 0)
			return c;
	return (a->len > b->len) - (a->len < b->len);
}

/* Note side k's token a (n bytes); -1 when memory runs out. */
static int
names_add(struct ruldiff_names *x, size_t *cap, int k, const char *a, size_t n,
    size_t rules)
{
	struct named *nv, *e;

	if (x->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((nv = reallocarray(x->v, *cap, sizeof(*nv))) == NULL)
			return -1;
		x->v = nv;
	}
	e = &x->v[x->n++];
	memset(e, 0, sizeof(*e));
	e->tok = a;
	e->len = n;
	e->rules[k] = rules;
	e->on[k] = 1;
	return 0;
}

/* Index side k's group tokens into x; -1 when memory runs out. */
static int
names_side(
    struct ruldiff_names *x, size_t *cap, int k, const struct ruldiff_side *s)
{
	const struct robots *r = s->robots;
	size_t g, j, n, rules;
	const char *a;
	int star;

	if (s->state != RULDIFF_RULES || r == NULL)
		return 0;
	x->base += robots_extra_count(r);
	for (g = 0; g < robots_group_count(r); g++) {
		rules = robots_group_rule_count(r, g);
		star = 0;
		for (j = 0; j < robots_group_agent_count(r, g); j++) {
			x->base++;
			a = robots_group_agent(r, g, j, &n);
			if (n == 1 && a[0] == '*')
				star = 1;
			else if (n > 0 && n <= RULDIFF_TOKEN_MAX &&
			         names_add(x, cap, k, a, n, rules) == -1)
				return -1;
		}
		if (star)
			x->star[k] += rules;
	}
	return 0;
}

struct ruldiff_names *
ruldiff_names_new(
    const struct ruldiff_side *old, const struct ruldiff_side *new)
{
	struct ruldiff_names *x = calloc(1, sizeof(*x));
	size_t cap = 0, i, m = 0;
	struct named *p;

	if (x == NULL)
		return NULL;
	if (names_side(x, &cap, 0, old) == -1 ||
	    names_side(x, &cap, 1, new) == -1) {
		ruldiff_names_free(x);
		return NULL;
	}
	if (x->n > 0)
		qsort(x->v, x->n, sizeof(*x->v), named_cmp);
	/* one entry per token: the rules of all its groups, per side */
	for (i = 0; i < x->n; i++) {
		p = m > 0 ? &x->v[m - 1] : NULL;
		if (p != NULL && named_cmp(p, &x->v[i]) == 0) {
			p->rules[0] += x->v[i].rules[0];
			p->rules[1] += x->v[i].rules[1];
			p->on[0] |= x->v[i].on[0];
			p->on[1] |= x->v[i].on[1];
		} else
			x->v[m++] = x->v[i];
	}
	x->n = m;
	return x;
}

void
ruldiff_names_free(struct ruldiff_names *x)
{
	if (x == NULL)
		return;
	free(x->v);
	free(x);
}

size_t
ruldiff_key(const struct ruldiff_names *x, const char *agent, size_t len,
    char *key, size_t *rules)
{
	struct named want = { .tok = agent,
		.len = agent_token_len(agent, len) };
	const struct named *e = NULL;
	size_t i;

	if (want.len > 0 && want.len <= RULDIFF_TOKEN_MAX && x->n > 0)
		e = bsearch(&want, x->v, x->n, sizeof(*x->v), named_cmp);
	if (e == NULL) {
		key[0] = '\0';
		*rules = x->base + x->star[0] + x->star[1];
		return 0;
	}
	for (i = 0; i < want.len; i++)
		key[i] = (char)ascii_lower((unsigned char)agent[i]);
	key[want.len] = '\0';
	*rules = x->base + (e->on[0] ? e->rules[0] : x->star[0]) +
	         (e->on[1] ? e->rules[1] : x->star[1]);
	return want.len;
}
