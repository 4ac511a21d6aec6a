/*
 * robots_usage.c: answers on the usage-preference section of a compiled
 * ruleset (robots_int.h): the preferences of an agent for a path, the
 * extra lines and the warnings for reports. Never allocates.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "robots_int.h"

const char *
robots_purpose_name(enum robots_purpose p)
{
	switch (p) {
	case ROBOTS_PURPOSE_TRAIN_AI:
		return "train-ai";
	case ROBOTS_PURPOSE_SEARCH:
		return "search";
	case ROBOTS_PURPOSE_AI_INPUT:
		return "ai-input";
	case ROBOTS_PURPOSE_AI_USE:
		return "ai-use";
	case ROBOTS_PURPOSES:
		break;
	}
	return "unknown";
}

const char *
robots_pref_name(enum robots_pref p)
{
	switch (p) {
	case ROBOTS_PREF_ALLOWED:
		return "allowed";
	case ROBOTS_PREF_DISALLOWED:
		return "disallowed";
	case ROBOTS_PREF_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *
robots_pref_kind_name(enum robots_pref_kind k)
{
	return k == ROBOTS_CONTENT_SIGNAL ? "content-signal" : "content-usage";
}

int
robots_has_prefs(const struct robots *r)
{
	return r->prefs != 0;
}

/* The preference section, or NULL. */
static const struct robots_prefs *
robots_usage_section(const struct robots *r)
{
	return r->prefs > ROBOTS_PREFS_EMPTY
	           ? ROBOTS_TAB(r, struct robots_prefs, prefs)
	           : NULL;
}

/* Whether a table of n entries of size sz at off lies in [lo, hi). */
static int
robots_usage_table_in(uint32_t off, size_t n, size_t sz, size_t lo, size_t hi)
{
	return off >= lo && off <= hi && n <= (hi - off) / (sz ? sz : 1);
}

int
robots_prefs_bounded(const struct robots *r, size_t len)
{
	const struct robots_prefs *h;
	size_t lo;

	/*
	 * 0: compiled without preference data (from a version-3 image),
	 * then saved again as an image of this version before its refresh.
	 */
	if (r->prefs <= ROBOTS_PREFS_EMPTY)
		return 1;
	if (r->prefs < r->text || r->prefs % 4 != 0 ||
	    len - r->prefs < sizeof(*h) || r->prefs > len)
		return 0;
	h = robots_usage_section(r);
	lo = r->prefs + sizeof(*h);
	return h->end == len && h->text >= lo && h->text <= len &&
	       h->nfile <= h->nstmts &&
	       robots_usage_table_in(h->stmts, h->nstmts,
	           sizeof(struct robots_pstmt), lo, h->text) &&
	       robots_usage_table_in(
	           h->gslices, r->ngroups, 2 * sizeof(uint32_t), lo, h->text) &&
	       robots_usage_table_in(h->agent_sel, (size_t)r->nagents + 1,
	           2 * sizeof(uint32_t), lo, h->text) &&
	       robots_usage_table_in(
	           h->sel, h->nsel, sizeof(uint32_t), lo, h->text) &&
	       robots_usage_table_in(h->extras, h->nextras,
	           sizeof(struct robots_pextra), lo, h->text) &&
	       robots_usage_table_in(h->warns, h->nwarns,
	           sizeof(struct robots_pwarn), lo, h->text);
}

/* The best statements so far of one directive. */
struct best {
	uint32_t prio;
	int any;
	uint8_t pref[ROBOTS_PURPOSES];
	size_t n;                            /* all of them */
	uint32_t idx[ROBOTS_USAGE_FROM_MAX]; /* the first ones, file order */
};

/* Statement i of the section, if it matches, into its directive's best. */
static void
robots_usage_consider(const struct robots_pstmt *st, const char *text,
    uint32_t i, const char *path, size_t path_len, struct best *b)
{
	const struct robots_pstmt *s = &st[i];
	struct best *d = &b[s->kind == ROBOTS_CONTENT_SIGNAL];
	size_t k;

	if ((d->any && s->prio < d->prio) ||
	    !robots_crule_match(text, &s->m, path, path_len))
		return;
	if (!d->any || s->prio > d->prio) {
		memset(d, 0, sizeof(*d));
		d->any = 1;
		d->prio = s->prio;
	}
	for (k = 0; k < ROBOTS_PURPOSES; k++)
		if (s->pref[k] >
		    d->pref[k]) /* disallowed > allowed > unknown */
			d->pref[k] = s->pref[k];
	if (d->n < ROBOTS_USAGE_FROM_MAX)
		d->idx[d->n] = i;
	d->n++;
}

/* The index in the agents table of the caller's agent, nagents for '*'. */
static int
robots_usage_selected(
    const struct robots *r, const char *agent, size_t agent_len, uint32_t *who)
{
	const char *agents = (const char *)r + robots_agents_off(r);
	const char *m = NULL;

	if (r->nagents > 0)
		m = (const char *)robots_agent_find(
		    r, agent, robots_agent_token(agent, agent_len));
	if (m != NULL) {
		m -= offsetof(struct robots_agent_rules, rules);
		*who = (uint32_t)((size_t)(m - agents) /
		                  sizeof(struct robots_agent_rules));
		return 1;
	}
	*who = r->nagents;
	return r->global.nlists > 0;
}

/* A statement as the API gives it. */
static void
robots_usage_stmt_out(
    const struct robots_pstmt *s, const char *text, struct robots_pref_stmt *o)
{
	o->kind = (enum robots_pref_kind)s->kind;
	o->pattern = text + s->m.src;
	o->pattern_len = s->m.src_len;
	o->value = text + s->value;
	o->value_len = s->value_len;
	o->line = s->m.line;
	o->file_scope = s->file_scope;
}

void
robots_usage(const struct robots *r, const char *agent, size_t agent_len,
    const char *path, size_t path_len, struct robots_usage *u)
{
	const struct robots_prefs *h = robots_usage_section(r);
	const struct robots_pstmt *st;
	const uint32_t *gs, *as, *sel;
	const char *text;
	struct best b[2];
	uint32_t who, i, k, g;
	size_t x, y;

	memset(u->pref, 0, sizeof(u->pref));
	u->nfrom = 0;
	if (h == NULL || h->nstmts == 0)
		return;
	if (path == NULL)
		path = "", path_len = 0;
	st = (const struct robots_pstmt *)(const void *)((const char *)r +
	                                                 h->stmts);
	text = (const char *)r + h->text;
	memset(b, 0, sizeof(b));
	for (i = 0; i < h->nfile; i++)
		robots_usage_consider(st, text, i, path, path_len, b);
	if (robots_usage_selected(r, agent, agent_len, &who)) {
		gs = (const uint32_t *)(const void *)((const char *)r +
		                                      h->gslices);
		as = (const uint32_t *)(const void *)((const char *)r +
		                                      h->agent_sel);
		sel =
		    (const uint32_t *)(const void *)((const char *)r + h->sel);
		for (k = 0; k < as[2 * who + 1]; k++) {
			g = sel[as[2 * who] + k];
			for (i = gs[2 * g]; i < gs[2 * g] + gs[2 * g + 1]; i++)
				robots_usage_consider(
				    st, text, i, path, path_len, b);
		}
	}
	for (k = 0; k < ROBOTS_PURPOSES; k++)
		u->pref[k] = (enum robots_pref)(
		    b[0].pref[k] > b[1].pref[k] ? b[0].pref[k] : b[1].pref[k]);
	/* Both directives' deciding statements, merged in file order. */
	b[0].n =
	    b[0].n < ROBOTS_USAGE_FROM_MAX ? b[0].n : ROBOTS_USAGE_FROM_MAX;
	b[1].n =
	    b[1].n < ROBOTS_USAGE_FROM_MAX ? b[1].n : ROBOTS_USAGE_FROM_MAX;
	x = y = 0;
	while (u->nfrom < ROBOTS_USAGE_FROM_MAX && (x < b[0].n || y < b[1].n)) {
		if (y >= b[1].n || (x < b[0].n && b[0].idx[x] < b[1].idx[y]))
			i = b[0].idx[x++];
		else
			i = b[1].idx[y++];
		robots_usage_stmt_out(&st[i], text, &u->from[u->nfrom++]);
	}
}

/* Messages of the warning codes (enum robots_wcode). */
static const struct {
	const char *code, *message;
} wcodes[RW_CODES] = {
	[RW_PARSE_USAGE] = { "pref_parse_failed",
	    "Content-Usage value is empty or not a Structured Fields "
	    "Dictionary: every purpose of the line is unknown" },
	[RW_PARSE_SIGNAL] = { "pref_parse_failed",
	    "Content-Signal value is empty or has a member that is not "
	    "KEY=VALUE (a comma missing?): that member is skipped" },
	[RW_PARSE_NO_COLON] = { "pref_parse_failed",
	    "preference line without a colon: ignored" },
	[RW_USAGE_OUTSIDE] = { "usage_outside_group",
	    "Content-Usage before the first User-agent line: ignored" },
	[RW_NONSTANDARD_USAGE] = { "pref_value_nonstandard",
	    "Content-Usage value of train-ai, search or ai-use is not the "
	    "token y or n: that purpose is unknown" },
	[RW_NONSTANDARD_SIGNAL] = { "pref_value_nonstandard",
	    "Content-Signal value is not yes or no: that purpose is "
	    "unknown" },
	[RW_LABEL_USAGE] = { "pref_label_unknown",
	    "Content-Usage label other than train-ai, search and ai-use: "
	    "ignored" },
	[RW_LABEL_SIGNAL] = { "pref_label_unknown",
	    "Content-Signal key other than search, ai-input, ai-train and "
	    "use: ignored" },
	[RW_SIGNAL_OUTSIDE] = { "signal_outside_group",
	    "Content-Signal before the first User-agent line: it applies "
	    "to every agent" },
	[RW_GROUP_SPLIT] = { "group_split_ambiguous",
	    "preference line between User-agent lines: the group is not "
	    "split, every agent of the group gets the line" },
	[RW_DISALLOWED_PATH] = { "pref_on_disallowed_path",
	    "preferences for a path the group may not fetch: a disallowed "
	    "URL has no preferences" },
	[RW_PREF_NOT_IN_STAR] = { "pref_not_in_star_group",
	    "preference line in a group without User-agent: *: only that "
	    "group's agents get it, not those of the * group" },
	[RW_ALLOW_TIE] = { "allow_disallow_tie",
	    "Disallow with the same pattern as an Allow for the same agent: "
	    "the Allow wins (RFC 9309), this Disallow has no effect" },
	[RW_PREF_CONFLICT] = { "pref_conflict",
	    "Content-Usage and Content-Signal disagree on train-ai or search "
	    "for the same pattern: the most restrictive (disallowed) wins" },
};

size_t
robots_extra_count(const struct robots *r)
{
	const struct robots_prefs *h = robots_usage_section(r);

	return h != NULL ? h->nextras : 0;
}

void
robots_extra(const struct robots *r, size_t i, struct robots_extra *e)
{
	const struct robots_prefs *h = robots_usage_section(r);
	const struct robots_pextra *x;
	const char *text;

	memset(e, 0, sizeof(*e));
	e->group = -1;
	if (h == NULL || i >= h->nextras)
		return;
	x = (const struct robots_pextra *)(const void *)((const char *)r +
	                                                 h->extras) +
	    i;
	text = (const char *)r + h->text;
	e->name = text + x->name.off;
	e->name_len = x->name.len;
	e->value = text + x->value.off;
	e->value_len = x->value.len;
	e->line = x->line;
	e->group = (long)x->group1 - 1;
}

size_t
robots_warning_count(const struct robots *r)
{
	const struct robots_prefs *h = robots_usage_section(r);

	return h != NULL ? h->nwarns : 0;
}

void
robots_warning(const struct robots *r, size_t i, struct robots_warning *w)
{
	const struct robots_prefs *h = robots_usage_section(r);
	const struct robots_pwarn *x;

	w->line = 0;
	w->code = "";
	w->message = "";
	if (h == NULL || i >= h->nwarns)
		return;
	x = (const struct robots_pwarn *)(const void *)((const char *)r +
	                                                h->warns) +
	    i;
	w->line = x->line;
	if (x->code < RW_CODES) {
		w->code = wcodes[x->code].code;
		w->message = wcodes[x->code].message;
	}
}
