/*
 * ruldiff.h: what changed for one agent between two versions of an
 * origin's robots.txt, for the change feed (docs/protocol.md, "watch").
 * Pure: rulesets in, pattern lists out; no I/O.
 *
 * Each side is a state and, for rules, its ruleset. For the agent, D and A
 * are the Disallow and Allow patterns (as written, byte for byte) of the
 * rules RFC 9309 selection applies to it (robots_agent_rules()); an
 * allow-all state, and a side with no version (old unknown), has none.
 *   newly_disallowed = (D_new - D_old) + (A_old - A_new)
 *   newly_allowed    = (A_new - A_old) + (D_old - D_new)
 * so every path whose verdict went from allowed to disallowed matches a
 * newly disallowed pattern, and the other way round. A disallow-all state
 * stands for "/": to disallow-all from anything else, newly_disallowed is
 * ["/"] and newly_allowed empty; from disallow-all to anything else,
 * newly_allowed is ["/"] and newly_disallowed empty. Lists are sorted by
 * bytes, without repeats.
 *
 * usage_changed: whether the usage preference statements that apply to
 * the agent differ: the Content-Usage and Content-Signal lines of the
 * groups the same selection picks, and the file-scope Content-Signal
 * lines, compared as written (directive name without case, value byte for
 * byte) as a multiset. A state without rules has none. Unknown (-1) when a
 * ruleset was compiled without preference data (an older state file).
 */
#ifndef ROBOTSD_RULDIFF_H
#define ROBOTSD_RULDIFF_H

#include <stddef.h>

struct jw;
struct robots;

enum ruldiff_state {
	RULDIFF_NONE,         /* no version (the old side of a first one) */
	RULDIFF_RULES,        /* robots is the ruleset */
	RULDIFF_ALLOW_ALL,    /* "unavailable" */
	RULDIFF_DISALLOW_ALL, /* "unreachable" */
};

struct ruldiff_side {
	enum ruldiff_state state;
	const struct robots *robots; /* RULDIFF_RULES; borrowed */
};

/* A pattern; points into a ruleset, or to a static "/". */
struct ruldiff_pat {
	const char *p;
	size_t len;
};

struct ruldiff {
	struct ruldiff_pat *dis, *allow;
	size_t ndis, nallow;
	int usage_changed; /* 1, 0, or -1: unknown */
};

/* Fill d (which ruldiff_clear() empties); -1 when memory runs out. */
int ruldiff_agent(const struct ruldiff_side *old,
    const struct ruldiff_side *new, const char *agent, size_t agent_len,
    struct ruldiff *d);
void ruldiff_clear(struct ruldiff *);

/*
 * Which agents have the same difference. An agent's key is its product
 * token in lower case when a group of either side names that token, else
 * "" (both sides give it their '*' groups, or nothing): agents of one key
 * get the same ruldiff_agent() answer, so a change's differences are
 * computed once per key however many agents ask, and there are at most as
 * many keys as the two files name tokens, plus one. The names of both
 * sides are indexed once per change (NULL when memory runs out).
 */
#define RULDIFF_TOKEN_MAX 128 /* a longer token is never an agent's */
struct ruldiff_names;
struct ruldiff_names *ruldiff_names_new(
    const struct ruldiff_side *old, const struct ruldiff_side *new);
void ruldiff_names_free(struct ruldiff_names *); /* NULL is fine */
/*
 * agent's key into key (room for RULDIFF_TOKEN_MAX + 1 bytes, NUL
 * terminated) and the lines ruldiff_agent() walks for it on both sides
 * (the rules of the groups it selects, and every agent and extra line),
 * the work its difference costs, into *rules; the key's length.
 */
size_t ruldiff_key(const struct ruldiff_names *, const char *agent, size_t len,
    char *key, size_t *rules);
/*
 * The members "newly_disallowed":[...],"newly_allowed":[...] and
 * "usage_changed":B when known, into the object open in w.
 */
void ruldiff_json(struct jw *, const struct ruldiff *);
/* A JSON array of n patterns, as w's next value. */
void ruldiff_pats_json(struct jw *, const struct ruldiff_pat *, size_t n);

#endif /* ROBOTSD_RULDIFF_H */
