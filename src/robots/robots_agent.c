/*
 * robots_agent.c: product tokens. A User-agent value and the caller's agent
 * are both cut to their leading run of [A-Za-z_-] (Google's reference
 * parser: "Googlebot/2.1" names "googlebot", "MJ12bot" names "mj") and
 * compared case-insensitively. Owns the token hash used by the ruleset's
 * agent table and the lookup in that table, and, at parse time, finding
 * the distinct tokens and which groups are named by the same agents.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "fnv.h"
#include "robots_int.h"

/* Whether octet c may appear in a product token, as a table. */
#define TOK(c)                                                                 \
	(((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') ||           \
	    (c) == '-' || (c) == '_')
#define TOK4(c) TOK(c), TOK(c + 1), TOK(c + 2), TOK(c + 3)
#define TOK16(c) TOK4(c), TOK4(c + 4), TOK4(c + 8), TOK4(c + 12)
#define TOK64(c) TOK16(c), TOK16(c + 16), TOK16(c + 32), TOK16(c + 48)
static const unsigned char token_tab[256] = { TOK64(0), TOK64(64), TOK64(128),
	TOK64(192) };

/* Whether c is ASCII white space as C's isspace() sees it. */
static int
robots_agent_space_char(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

size_t
robots_agent_token(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && token_tab[(unsigned char)s[i]])
		i++;
	return i;
}

int
robots_agent_is_global(const char *s, size_t len)
{
	return len >= 1 && s[0] == '*' &&
	       (len == 1 || robots_agent_space_char((unsigned char)s[1]));
}

uint32_t
robots_agent_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= ascii_lower((unsigned char)s[i]);
		h *= 16777619u;
	}
	return h;
}

int
robots_agent_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return 0;
	for (i = 0; i < alen; i++)
		if (ascii_lower((unsigned char)a[i]) !=
		    ascii_lower((unsigned char)b[i]))
			return 0;
	return 1;
}

void
robots_agent_set_head(struct robots_agent_rules *a, const char *s)
{
	size_t i;

	for (i = 0; i < ROBOTS_AGENT_HEAD; i++)
		a->head[i] = i < a->name.len
		                 ? (char)ascii_lower((unsigned char)s[i])
		                 : '\0';
}

/* Whether entry a names token (len bytes, hash h). */
static int
robots_agent_is(const struct robots *r, const struct robots_agent_rules *a,
    uint32_t h, const char *token, size_t len)
{
	size_t i;

	if (a->hash != h || a->name.len != len)
		return 0;
	if (len > ROBOTS_AGENT_HEAD)
		return robots_agent_eq(
		    ROBOTS_TAB(r, char, text) + a->name.off, len, token, len);
	for (i = 0; i < len; i++)
		if (a->head[i] != (char)ascii_lower((unsigned char)token[i]))
			return 0;
	return 1;
}

const struct robots_merged *
robots_agent_find(const struct robots *r, const char *token, size_t len)
{
	const uint32_t *slots = ROBOTS_SLOTS(r);
	const struct robots_agent_rules *agents =
	    (const struct robots_agent_rules *)(const void *)((const char *)r +
	                                                      robots_agents_off(
	                                                          r));
	uint32_t h, i, slot, mask = r->slot_mask;

	if (len == 0 || r->nagents == 0)
		return NULL;
	h = robots_agent_hash(token, len);
	for (i = h & mask; (slot = slots[i]) != 0; i = (i + 1) & mask)
		if (robots_agent_is(r, &agents[slot - 1], h, token, len))
			return &agents[slot - 1].rules;
	return NULL;
}

/* Slot count for n entries: a power of two at least 2n. */
static uint32_t
robots_agent_slot_count(size_t n)
{
	uint32_t s = 4;

	while (s < 2 * n)
		s *= 2;
	return s;
}

/* The token index of agent line a, adding it if new. */
static uint32_t
robots_agent_token_id(
    struct robots_tokens *t, const struct robots_tagent *lines, uint32_t a)
{
	uint32_t h = robots_agent_hash(lines[a].src, lines[a].len), i, s;

	for (i = h & t->mask; (s = t->slots[i]) != 0; i = (i + 1) & t->mask) {
		const struct robots_tagent *o = &lines[t->first_line[s - 1]];

		if (robots_agent_eq(o->src, o->len, lines[a].src, lines[a].len))
			return s - 1;
	}
	t->first_line[t->n] = a;
	t->nlists[t->n] = 0;
	t->mark[t->n] = ROBOTS_NONE;
	t->slots[i] = ++t->n;
	return t->n - 1;
}

/* Order token ids. */
static int
robots_agent_id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Give every agent line its token id (ROBOTS_NONE for '*' and repeats). */
static void
robots_agent_find_tokens(struct robots_tgroup *groups, size_t ng,
    struct robots_tagent *lines, struct robots_tokens *t)
{
	size_t g, a, end;
	uint32_t id, nsig = 0;

	for (g = 0; g < ng; g++) {
		groups[g].sig_first = nsig;
		end = groups[g].agent_first + groups[g].agent_count;
		for (a = groups[g].agent_first; a < end; a++) {
			lines[a].id = ROBOTS_NONE;
			if (lines[a].global)
				continue;
			id = robots_agent_token_id(t, lines, (uint32_t)a);
			if (t->mark[id] == g)
				continue;
			t->mark[id] = (uint32_t)g;
			lines[a].id = id;
			t->sig[nsig++] = id;
		}
		groups[g].sig_len = nsig - groups[g].sig_first;
		qsort(t->sig + groups[g].sig_first, groups[g].sig_len,
		    sizeof(uint32_t), robots_agent_id_cmp);
	}
}

/* FNV-1a over a group's token ids and its '*'. */
static uint32_t
robots_agent_sig_hash(const uint32_t *ids, uint32_t n, int global)
{
	uint32_t h = FNV1A32_INIT ^ (uint32_t)(global != 0), i;

	for (i = 0; i < n; i++)
		h = fnv1a32_word(h, ids[i]);
	return h;
}

/* Whether groups a and b are named by the same agents. */
static int
robots_agent_same_agents(const struct robots_tokens *t,
    const struct robots_tgroup *a, const struct robots_tgroup *b)
{
	return a->global == b->global && a->sig_len == b->sig_len &&
	       memcmp(t->sig + a->sig_first, t->sig + b->sig_first,
	           a->sig_len * sizeof(uint32_t)) == 0;
}

/* Give every group its list, shared by groups with the same agents. */
static void
robots_agent_find_lists(
    struct robots_tgroup *groups, size_t ng, struct robots_tokens *t)
{
	struct robots_tgroup *g;
	uint32_t h, i, k, s;

	for (k = 0; k < ng; k++) {
		g = &groups[k];
		h = robots_agent_sig_hash(
		    t->sig + g->sig_first, g->sig_len, g->global);
		i = h & t->lmask;
		while ((s = t->lslots[i]) != 0 &&
		       !robots_agent_same_agents(
		           t, &groups[t->list_rep[s - 1]], g))
			i = (i + 1) & t->lmask;
		if (s == 0) { /* a new set of agents */
			t->list_rep[t->nl] = k;
			t->list_count[t->nl] = 0;
			t->lslots[i] = s = ++t->nl;
			for (i = 0; i < g->sig_len; i++)
				t->nlists[t->sig[g->sig_first + i]]++;
			t->nagent_lists += g->sig_len + (g->global != 0);
		}
		g->lid = s - 1;
		t->list_count[s - 1] += g->table_count;
		if (t->list_count[s - 1] > t->max_count)
			t->max_count = t->list_count[s - 1];
	}
}

int
robots_agent_index(struct robots_tgroup *groups, size_t ng,
    struct robots_tagent *lines, size_t na, struct robots_tokens *t)
{
	size_t slots = robots_agent_slot_count(na),
	       lslots = robots_agent_slot_count(ng);

	memset(t, 0, sizeof(*t));
	t->mask = (uint32_t)slots - 1;
	t->lmask = (uint32_t)lslots - 1;
	t->first_line = malloc((na + 1) * 4 * sizeof(uint32_t));
	t->list_rep = malloc((ng + 1) * 2 * sizeof(uint32_t));
	t->slots = calloc(slots + lslots, sizeof(uint32_t));
	if (t->first_line == NULL || t->list_rep == NULL || t->slots == NULL)
		return -1;
	t->nlists = t->first_line + na + 1;
	t->mark = t->nlists + na + 1;
	t->sig = t->mark + na + 1;
	t->list_count = t->list_rep + ng + 1;
	t->lslots = t->slots + slots;
	robots_agent_find_tokens(groups, ng, lines, t);
	robots_agent_find_lists(groups, ng, t);
	return 0;
}

void
robots_agent_index_clear(struct robots_tokens *t)
{
	free(t->first_line);
	free(t->list_rep);
	free(t->slots);
}
