/*
 * robots_parse_prefs.c: the preference lines of a body (Content-Usage,
 * Content-Signal and its alias Content-Signals; names case-insensitive,
 * exact, colon required), License and other unknown directive lines,
 * and the warnings about them; then the preference section laid out
 * after the compiled ruleset (robots_int.h).
 *
 * Access grouping is Google's and is not touched: a preference line, like
 * any line other than Allow and Disallow, does not end a run of
 * User-agent lines, so a line between two User-agent lines belongs to the
 * group of both (and is warned about: group_split_ambiguous).
 *
 * pref_on_disallowed_path: a statement in a group whose PATH, up to its
 * first '*', is itself disallowed for one of the group's agents (the first
 * four, at most 4096 checks a file) by the compiled rules. Such a path
 * never has preferences: a disallowed URL gets none.
 *
 * Bounds: of the lines that are not preference lines (License, unknown
 * directives: an HTML page served as robots.txt has thousands) the first
 * OTHER_MAX, within OTHER_TEXT bytes of name and value, are kept, and at
 * most PARSE_WARN_MAX warnings; preference lines are all kept, as they decide
 * answers. A compiled ruleset of a file without such lines is unchanged.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "robots_int.h"
#include "robots_parse_int.h"
#include "robots_prefs.h"

#define OTHER_MAX 64
#define OTHER_TEXT 4096
#define DISALLOWED_AGENTS 4
#define DISALLOWED_CHECKS 4096

static uint32_t
robots_parse_prefs_cur_group_index(const struct parser *p)
{
	return p->groups.n ? (uint32_t)p->groups.n - 1 : ROBOTS_NONE;
}

/* Record the line for inspect; pref: a preference line (always kept). */
static void
robots_parse_prefs_extra(struct parser *p, const char *key, size_t kn,
    const char *v, size_t n, uint32_t line, int pref)
{
	struct textra *e;

	if (!pref &&
	    (p->nother >= OTHER_MAX || p->extra_bytes + kn + n > OTHER_TEXT))
		return;
	if ((e = robots_parse_vec_push(&p->extras, sizeof(*e), &p->nomem)) ==
	    NULL)
		return;
	if (!pref) {
		p->nother++;
		p->extra_bytes += kn + n;
	}
	e->name = key;
	e->name_len = (uint32_t)kn;
	e->val = v;
	e->val_len = (uint32_t)n;
	e->line = line;
	e->group = robots_parse_prefs_cur_group_index(p);
}

static int
robots_parse_prefs_is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* A Content-Usage or Content-Signal statement: PATH and PREFS of v. */
static void
robots_parse_prefs_statement(struct parser *p, enum robots_pref_kind kind,
    const char *v, size_t n, uint32_t line, uint32_t group)
{
	const char *path = NULL, *prefs = v;
	size_t plen = 1, rest = n;
	struct pref_read rd;
	struct tpref *s;
	struct trule tr;
	char *o;

	if (n > 0 && v[0] == '/') {
		plen = 0;
		while (plen < n && !robots_parse_prefs_is_ws(v[plen]))
			plen++;
		path = v;
		prefs = v + plen;
		rest = n - plen;
	}
	while (rest > 0 && robots_parse_prefs_is_ws(*prefs))
		prefs++, rest--;
	while (rest > 0 && robots_parse_prefs_is_ws(prefs[rest - 1]))
		rest--;
	if (robots_parse_vec_reserve(&p->pcomp, 1, 3 * plen, &p->nomem) != 0 ||
	    (s = robots_parse_vec_push(&p->prefs, sizeof(*s), &p->nomem)) ==
	        NULL)
		return;
	s->path = path;
	s->path_len = (uint32_t)plen;
	s->val = prefs;
	s->val_len = (uint32_t)rest;
	s->line = line;
	s->group = group;
	s->kind = (uint8_t)kind;
	s->comp = (uint32_t)p->pcomp.n;
	o = (char *)p->pcomp.v + p->pcomp.n;
	memset(&tr, 0, sizeof(tr));
	s->prio =
	    (uint32_t)robots_pattern_compile(path ? path : "/", plen, o, &tr);
	s->comp_len = tr.comp_len;
	s->lit_len = tr.lit_len;
	s->anchored = tr.anchored;
	p->pcomp.n += tr.comp_len;
	if (kind == ROBOTS_CONTENT_USAGE)
		robots_pref_read_usage(prefs, rest, &rd);
	else
		robots_pref_read_signal(prefs, rest, &rd);
	memcpy(s->pref, rd.pref, sizeof(s->pref));
	if (rd.warn & PREF_W_PARSE)
		robots_parse_warn(p, line,
		    kind == ROBOTS_CONTENT_USAGE ? RW_PARSE_USAGE
		                                 : RW_PARSE_SIGNAL);
	if (rd.warn & PREF_W_NONSTANDARD)
		robots_parse_warn(p, line,
		    kind == ROBOTS_CONTENT_USAGE ? RW_NONSTANDARD_USAGE
		                                 : RW_NONSTANDARD_SIGNAL);
	if (rd.warn & PREF_W_LABEL)
		robots_parse_warn(p, line,
		    kind == ROBOTS_CONTENT_USAGE ? RW_LABEL_USAGE
		                                 : RW_LABEL_SIGNAL);
	if (group != ROBOTS_NONE &&
	    !((struct robots_tgroup *)p->groups.v)[group].separated)
		p->pend++; /* in a run of User-agent lines */
}

void
robots_prefs_line(struct parser *p, const char *key, size_t kn, const char *v,
    size_t n, uint32_t line, int colon)
{
	uint32_t group = robots_parse_prefs_cur_group_index(p);
	int usage = ascii_is_lit(key, kn, "content-usage");
	int signal = ascii_is_lit(key, kn, "content-signal") ||
	             ascii_is_lit(key, kn, "content-signals");

	robots_parse_prefs_extra(
	    p, key, kn, v, n, line, (usage || signal) && colon);
	if ((usage || signal) && !colon)
		robots_parse_warn(p, line, RW_PARSE_NO_COLON);
	else if (usage && group == ROBOTS_NONE)
		robots_parse_warn(p, line, RW_USAGE_OUTSIDE);
	else if (usage)
		robots_parse_prefs_statement(
		    p, ROBOTS_CONTENT_USAGE, v, n, line, group);
	else if (signal) {
		if (group == ROBOTS_NONE)
			robots_parse_warn(p, line, RW_SIGNAL_OUTSIDE);
		robots_parse_prefs_statement(
		    p, ROBOTS_CONTENT_SIGNAL, v, n, line, group);
	}
}

void
robots_prefs_user_agent(struct parser *p, int joins)
{
	const struct tpref *s = p->prefs.v;
	size_t i;

	if (joins)
		for (i = p->prefs.n - p->pend; i < p->prefs.n; i++)
			robots_parse_warn(p, s[i].line, RW_GROUP_SPLIT);
	p->pend = 0;
}

void
robots_prefs_clear(struct parser *p)
{
	free(p->prefs.v);
	free(p->extras.v);
	free(p->warns.v);
	free(p->pcomp.v);
}

/* Warnings in line order, then by code. */
static int
robots_parse_prefs_warn_cmp(const void *a, const void *b)
{
	const struct twarn *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

/* Sort the warnings; one of a code for a line (a pair warns each side). */
static void
robots_parse_prefs_warn_sort(struct parser *p)
{
	struct twarn *w = p->warns.v;
	size_t i, n = 1;

	qsort(w, p->warns.n, sizeof(*w), robots_parse_prefs_warn_cmp);
	for (i = 1; i < p->warns.n; i++)
		if (robots_parse_prefs_warn_cmp(&w[i], &w[n - 1]) != 0)
			w[n++] = w[i];
	p->warns.n = n;
}

/* pref_on_disallowed_path for the group statements of p (see above). */
static void
robots_parse_prefs_warn_disallowed(struct parser *p, const struct robots *r)
{
	const struct tpref *s = p->prefs.v;
	const struct robots_tgroup *g = p->groups.v;
	const struct robots_tagent *a = p->agents.v;
	struct robots_verdict v;
	size_t i, k, end, checks = 0;

	for (i = 0; i < p->prefs.n && checks < DISALLOWED_CHECKS; i++) {
		if (s[i].group == ROBOTS_NONE)
			continue;
		k = g[s[i].group].agent_first;
		end = k + g[s[i].group].agent_count;
		if (end > k + DISALLOWED_AGENTS)
			end = k + DISALLOWED_AGENTS;
		for (; k < end; k++, checks++) {
			robots_check(r, a[k].global ? "*" : a[k].src,
			    a[k].global ? 1 : a[k].len,
			    (const char *)p->pcomp.v + s[i].comp, s[i].lit_len,
			    &v);
			if (!v.allowed) {
				robots_parse_warn(
				    p, s[i].line, RW_DISALLOWED_PATH);
				break;
			}
		}
	}
}

/* Reserve n bytes aligned to 4 at *total; the offset. */
static uint32_t
robots_parse_prefs_take(size_t *total, size_t n)
{
	size_t off = (*total + 3) & ~(size_t)3;

	*total = off + n;
	return (uint32_t)off;
}

/* Bytes of text the section needs. */
static size_t
robots_parse_prefs_text_bytes(const struct parser *p)
{
	const struct tpref *s = p->prefs.v;
	const struct textra *e = p->extras.v;
	size_t i, n = 0;

	for (i = 0; i < p->prefs.n; i++)
		n += s[i].path_len + s[i].comp_len + s[i].val_len;
	for (i = 0; i < p->extras.n; i++)
		n += e[i].name_len + e[i].val_len;
	return n;
}

/* Copy n bytes to the text at *off; their span. */
static struct robots_span
robots_parse_prefs_put(char *base, const struct robots_prefs *h, size_t *off,
    const char *s, size_t n)
{
	struct robots_span sp = { (uint32_t)*off, (uint32_t)n };

	if (n > 0)
		memcpy(base + h->text + *off, s, n);
	*off += n;
	return sp;
}

static void
robots_parse_prefs_fill_stmts(
    const struct parser *p, char *base, struct robots_prefs *h, size_t *off)
{
	const struct tpref *s = p->prefs.v;
	struct robots_pstmt *d = (struct robots_pstmt *)(base + h->stmts);
	const char *text = base + h->text;
	struct robots_span sp;
	uint64_t need;
	size_t i;

	for (i = 0; i < p->prefs.n; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		sp = robots_parse_prefs_put(
		    base, h, off, s[i].path ? s[i].path : "/", s[i].path_len);
		d[i].m.src = sp.off;
		d[i].m.src_len = (uint16_t)sp.len;
		sp = robots_parse_prefs_put(base, h, off,
		    (const char *)p->pcomp.v + s[i].comp, s[i].comp_len);
		d[i].m.pat = sp.off;
		d[i].m.pat_len = (uint16_t)s[i].comp_len;
		d[i].m.lit_len = (uint16_t)s[i].lit_len;
		d[i].m.line = s[i].line;
		d[i].m.anchored = s[i].anchored;
		need = robots_match_need(
		    text + d[i].m.pat, d[i].m.pat_len, d[i].m.lit_len);
		d[i].m.need_lo = (uint32_t)need;
		d[i].m.need_hi = (uint32_t)(need >> 32);
		sp = robots_parse_prefs_put(
		    base, h, off, s[i].val, s[i].val_len);
		d[i].value = sp.off;
		d[i].value_len = sp.len;
		d[i].prio = s[i].prio;
		d[i].kind = s[i].kind;
		d[i].file_scope = s[i].group == ROBOTS_NONE;
		memcpy(d[i].pref, s[i].pref, sizeof(d[i].pref));
	}
}

/* Per group its statements; per agent (and '*') its groups with some. */
static int
robots_parse_prefs_fill_selection(const struct parser *p,
    const struct robots *r, char *base, struct robots_prefs *h)
{
	const struct tpref *s = p->prefs.v;
	const struct robots_tgroup *g = p->groups.v;
	const struct robots_tagent *a = p->agents.v;
	uint32_t *gs = (uint32_t *)(void *)(base + h->gslices);
	uint32_t *as = (uint32_t *)(void *)(base + h->agent_sel);
	uint32_t *sel = (uint32_t *)(void *)(base + h->sel);
	size_t i, k, end, first;
	uint32_t id;
	int pass, global;

	memset(gs, 0, p->groups.n * 2 * sizeof(uint32_t));
	memset(as, 0, ((size_t)r->nagents + 1) * 2 * sizeof(uint32_t));
	for (i = h->nfile; i < p->prefs.n; i++) {
		if (gs[2 * s[i].group + 1]++ == 0)
			gs[2 * s[i].group] = (uint32_t)i;
	}
	/* Count, then place: each agent's groups in file order. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->groups.n; i++) {
			if (gs[2 * i + 1] == 0)
				continue;
			global = 0;
			end = g[i].agent_first + g[i].agent_count;
			for (k = g[i].agent_first; k < end; k++) {
				if (a[k].global && global++)
					continue;
				id = a[k].global ? r->nagents : a[k].id;
				if (id == ROBOTS_NONE)
					continue;
				if (pass == 0)
					as[2 * id + 1]++;
				else
					sel[as[2 * id] + as[2 * id + 1]++] =
					    (uint32_t)i;
			}
		}
		if (pass == 1)
			break;
		for (i = 0, first = 0; i <= r->nagents; i++) {
			as[2 * i] = (uint32_t)first;
			first += as[2 * i + 1];
			as[2 * i + 1] = 0;
		}
		if (first != h->nsel)
			return -1;
	}
	return 0;
}

static void
robots_parse_prefs_fill_extras(
    const struct parser *p, char *base, struct robots_prefs *h, size_t *off)
{
	const struct textra *e = p->extras.v;
	const struct twarn *w = p->warns.v;
	struct robots_pextra *d = (struct robots_pextra *)(base + h->extras);
	struct robots_pwarn *dw = (struct robots_pwarn *)(base + h->warns);
	size_t i;

	for (i = 0; i < p->extras.n; i++) {
		d[i].name = robots_parse_prefs_put(
		    base, h, off, e[i].name, e[i].name_len);
		d[i].value = robots_parse_prefs_put(
		    base, h, off, e[i].val, e[i].val_len);
		d[i].line = e[i].line;
		d[i].group1 = e[i].group == ROBOTS_NONE ? 0 : e[i].group + 1;
	}
	for (i = 0; i < p->warns.n; i++) {
		dw[i].line = w[i].line;
		dw[i].code = w[i].code;
	}
}

/* The number of (agent, group) selections: sel's length. */
static size_t
robots_parse_prefs_count_sel(const struct parser *p)
{
	const struct tpref *s = p->prefs.v;
	const struct robots_tgroup *g = p->groups.v;
	const struct robots_tagent *a = p->agents.v;
	size_t i, k, end, n = 0, last = SIZE_MAX;
	int global;

	for (i = 0; i < p->prefs.n; i++) {
		if (s[i].group == ROBOTS_NONE || s[i].group == last)
			continue;
		last = s[i].group;
		global = 0;
		end = g[last].agent_first + g[last].agent_count;
		for (k = g[last].agent_first; k < end; k++) {
			if (a[k].global && global++)
				continue;
			n += a[k].global || a[k].id != ROBOTS_NONE;
		}
	}
	return n;
}

struct robots *
robots_prefs_attach(struct parser *p, struct robots *r)
{
	struct robots_prefs h;
	struct robots *grown;
	size_t total, off = 0;
	char *base;

	robots_parse_prefs_warn_disallowed(p, r);
	robots_author_warnings(p);
	if (p->nomem)
		goto fail;
	if (p->warns.n > 1)
		robots_parse_prefs_warn_sort(p);
	if (p->prefs.n == 0 && p->extras.n == 0 && p->warns.n == 0) {
		r->prefs = ROBOTS_PREFS_EMPTY;
		return r;
	}
	memset(&h, 0, sizeof(h));
	total = (r->memsize + 7) & ~(size_t)7;
	r->prefs = robots_parse_prefs_take(&total, sizeof(h));
	h.nstmts = (uint32_t)p->prefs.n;
	while (h.nfile < p->prefs.n &&
	       ((struct tpref *)p->prefs.v)[h.nfile].group == ROBOTS_NONE)
		h.nfile++;
	h.stmts = robots_parse_prefs_take(
	    &total, p->prefs.n * sizeof(struct robots_pstmt));
	h.gslices =
	    robots_parse_prefs_take(&total, p->groups.n * 2 * sizeof(uint32_t));
	h.agent_sel = robots_parse_prefs_take(
	    &total, ((size_t)r->nagents + 1) * 2 * sizeof(uint32_t));
	h.nsel = (uint32_t)robots_parse_prefs_count_sel(p);
	h.sel = robots_parse_prefs_take(&total, h.nsel * sizeof(uint32_t));
	h.nextras = (uint32_t)p->extras.n;
	h.extras = robots_parse_prefs_take(
	    &total, p->extras.n * sizeof(struct robots_pextra));
	h.nwarns = (uint32_t)p->warns.n;
	h.warns = robots_parse_prefs_take(
	    &total, p->warns.n * sizeof(struct robots_pwarn));
	h.text =
	    robots_parse_prefs_take(&total, robots_parse_prefs_text_bytes(p));
	h.end = (uint32_t)total;
	if ((grown = realloc(r, total)) == NULL)
		goto fail;
	r = grown;
	base = (char *)r;
	memset(base + r->memsize, 0, total - r->memsize);
	r->memsize = (uint32_t)total;
	robots_parse_prefs_fill_stmts(p, base, &h, &off);
	if (robots_parse_prefs_fill_selection(p, r, base, &h) != 0)
		goto fail;
	robots_parse_prefs_fill_extras(p, base, &h, &off);
	memcpy(base + r->prefs, &h, sizeof(h));
	return r;
fail:
	free(r);
	return NULL;
}
