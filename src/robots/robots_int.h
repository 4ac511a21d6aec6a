/*
 * robots_int.h: the layout of a compiled ruleset, shared by the parser and
 * the layout that build it (robots_parse.c, robots_parse_prefs.c,
 * robots_parse_author.c, robots_build.c), the matcher and the preference
 * answers that read it (robots_match.c, robots_usage.c), the product-token
 * helpers (robots_agent.c) and the image and its deep check (robots_image.c,
 * robots_image_check.c); tdmrep.json's matcher (robots_tdmrep.c) and the
 * page's robots rules (robots_tag.c, robots_tag_xrt.c, robots_tag_date.c)
 * use its matcher, product tokens and trimming. Not part of the API.
 *
 * A ruleset is one allocation: this header, then its tables (hot ones
 * first) and its text. Tables are found by 32-bit offsets from the header;
 * a table that would be empty or unread takes no bytes, so a two-rule file
 * compiles to about 200 bytes. The match index is sized for the worst
 * case, then the block is compacted to fit.
 *
 * Rules are sorted by specificity (longest normalized pattern first, allow
 * before disallow on a tie, then file order). Groups named by the same set
 * of agents share a list of the indexes of their rules; a product token (or
 * '*') has the lists of the groups naming it, and the smallest index that
 * matches in any of them decides (so groups are merged without copying
 * their rules, and memory stays linear in the file).
 * A list of at most ROBOTS_LINEAR_MAX rules has no index: it is read in
 * table order and its first match decides (when it is the only list, it
 * is the table itself and has no idx slice). A longer list is ordered by
 * literal prefix (the pattern up to its first '*'), one index node per
 * distinct prefix, each node pointing to its parent: the
 * longest other prefix in the list that is a prefix of it. The prefixes of
 * a path in the list are then the parent chain of the greatest prefix not
 * above the path, found by binary search.
 */
#ifndef ROBOTS_INT_H
#define ROBOTS_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "robots.h"

#define ROBOTS_NONE UINT32_MAX

/* A span of text: offset and length. */
struct robots_span {
	uint32_t off;
	uint32_t len;
};

/*
 * One entry of the matching table. need is split in two words so that an
 * entry takes 28 bytes, not 32: robots_crule_need() joins them.
 */
struct robots_crule {
	uint32_t pat;  /* compiled pattern: normalized, '$' and '**' done */
	uint32_t src;  /* the pattern as written */
	uint32_t line; /* <= ROBOTS_MAX_BODY + 1 */
	/* Bit c % 64 for every byte c the glob's segments need. */
	uint32_t need_lo, need_hi;
	uint16_t pat_len; /* without the anchoring '$' (<= 3 * line) */
	uint16_t lit_len; /* literal prefix: bytes before the first '*' */
	uint16_t src_len; /* <= ROBOTS_MAX_LINE */
	uint8_t allow;
	uint8_t anchored; /* the pattern ended in '$' */
};

/*
 * A distinct literal prefix in a list. A list's index is its nnodes keys
 * (the prefixes' first 8 bytes, big-endian, zero-padded, in memcmp order)
 * followed by its nnodes nodes, so the binary search reads only keys.
 */
struct robots_node {
	uint32_t lit;     /* text offset of the prefix */
	uint16_t lit_len; /* <= 3 * ROBOTS_MAX_LINE */
	uint16_t plain;   /* its first entry is the literal alone: it matches */
	uint32_t parent;  /* node index in the list, or ROBOTS_NONE */
	uint32_t first;   /* its entries run to the next node's first */
};

/* Lists of at most this many entries are read in order, without an index. */
#define ROBOTS_LINEAR_MAX 8

/* The rules of the groups named by one set of agents. */
struct robots_list {
	uint32_t first; /* slice of idx */
	uint32_t count;
	uint32_t node_first; /* its index: 8-byte words into the nodes table */
	uint32_t nnodes;     /* 0: no index (count <= ROBOTS_LINEAR_MAX) */
};
/*
 * node_first of a list without an index that is the whole matching table
 * (the only list, short): it has no idx slice either, its entries are the
 * table indexes first to first + count - 1.
 */
#define ROBOTS_WHOLE_TABLE ROBOTS_NONE

/* The lists a check consults for one agent (or for '*'), and its delay. */
struct robots_merged {
	uint32_t list_first; /* slice of agent_lists, when nlists > 1 */
	uint32_t nlists;
	struct robots_list list; /* the only one, when nlists == 1 */
	double crawl_delay;      /* < 0: none */
};

/* Bytes of a token kept in its table entry, to compare without the text. */
#define ROBOTS_AGENT_HEAD 16

/* The merged rules of one product token, or of '*'. */
struct robots_agent_rules {
	struct robots_span name;      /* as first written */
	uint32_t hash;                /* robots_agent_hash() of the name */
	char head[ROBOTS_AGENT_HEAD]; /* the name's start, lower case */
	struct robots_merged rules;
};

/* A group as written, for introspection. */
struct robots_group {
	uint32_t agent_first; /* slice of gagents */
	uint32_t agent_count;
	uint32_t rule_count; /* rules as written */
	double crawl_delay;
};

/* gagents entry naming the '*' group. */
#define ROBOTS_GLOBAL_OFF UINT32_MAX

/*
 * The header. Tables follow in this order: slots (agent index + 1, 0
 * empty; none when nagents is 0), agents and agent_lists, all three found
 * from nagents and slot_mask; lists and agent_lists (none unless some agent
 * has several lists), nodes, idx, rules, groups, gagents, sitemaps, text.
 */
struct robots {
	/* Read by every check: the first cache lines. */
	struct robots_merged global; /* nlists 0: no '*' group */
	uint32_t nagents;
	uint32_t slot_mask;
	uint32_t lists, nodes, idx, rules, text; /* table offsets */
	/* Reports and lifetime. */
	uint32_t nrules; /* table entries, index.html twins included */
	uint32_t ngroups;
	uint32_t nsitemaps;
	uint32_t groups, gagents, sitemaps;
	uint32_t memsize;
	atomic_uint refs;
	/*
	 * The usage-preference section (struct robots_prefs), after the
	 * text; ROBOTS_PREFS_EMPTY when the file has no preference, extra
	 * or warning line (no bytes spent); 0 in a ruleset from a version-3
	 * image, which was compiled without (and in its image of this
	 * version, when it is saved again). Last, in what was the header's
	 * padding: the header keeps its size.
	 */
	uint32_t prefs;
};
#define ROBOTS_PREFS_EMPTY 1u

/*
 * The usage-preference section: this header, then its tables, each found
 * by a 32-bit offset from the ruleset's start, and its own text. A
 * statement is matched as a rule is (robots_crule, offsets into the
 * section's text).
 */
struct robots_pstmt {
	struct robots_crule m; /* m.src: PATH as written, "/" if absent */
	uint32_t value;        /* PREFS as written, trimmed */
	uint32_t value_len;
	uint32_t prio;      /* normalized pattern length: longest wins */
	uint8_t kind;       /* enum robots_pref_kind */
	uint8_t file_scope; /* Content-Signal before the first group */
	uint8_t pref[ROBOTS_PURPOSES]; /* enum robots_pref, per purpose */
};

/* Warning codes, with their messages in robots_usage.c. */
enum robots_wcode {
	RW_PARSE_USAGE,
	RW_PARSE_SIGNAL,
	RW_PARSE_NO_COLON,
	RW_USAGE_OUTSIDE,
	RW_NONSTANDARD_USAGE,
	RW_NONSTANDARD_SIGNAL,
	RW_LABEL_USAGE,
	RW_LABEL_SIGNAL,
	RW_SIGNAL_OUTSIDE,
	RW_GROUP_SPLIT,
	RW_DISALLOWED_PATH,
	RW_PREF_NOT_IN_STAR, /* robots_parse_author.c */
	RW_ALLOW_TIE,
	RW_PREF_CONFLICT,
	RW_CODES,
};

/* An extra line: name and value spans, line, group + 1 (0: none). */
struct robots_pextra {
	struct robots_span name;
	struct robots_span value;
	uint32_t line;
	uint32_t group1;
};

/* A warning: line and enum robots_wcode. */
struct robots_pwarn {
	uint32_t line;
	uint32_t code;
};

struct robots_prefs {
	uint32_t nstmts, stmts; /* all statements, file order */
	uint32_t nfile;         /* file-scope ones: the first nfile */
	uint32_t gslices;       /* per group: first, count of its statements */
	/*
	 * Per agent (robots_agent_rules order), then '*': first, count of a
	 * slice of sel, the groups naming it that have statements, in order.
	 */
	uint32_t agent_sel;
	uint32_t nsel, sel;
	uint32_t nextras, extras;
	uint32_t nwarns, warns;
	uint32_t text;
	uint32_t end;
};

/* Whether r's preference section lies inside its len bytes. */
int robots_prefs_bounded(const struct robots *r, size_t len);
/*
 * Whether an image whose tables lie in order inside its len bytes (and,
 * for the second, whose preference section does) reads only inside them:
 * every entry checked (robots_image_check.c).
 */
int robots_image_deep_ok(const struct robots *r, size_t len);
int robots_prefs_deep_ok(const struct robots *r);
/* Whether compiled rule c matches path (the matcher of robots_check()). */
int robots_crule_match(const char *text, const struct robots_crule *c,
    const char *path, size_t path_len);

/* A table of a ruleset. */
#define ROBOTS_TAB(r, type, field)                                             \
	((const type *)(const void *)((const char *)(r) + (r)->field))

/* The slots table: right after the header. */
#define ROBOTS_SLOTS(r) ((const uint32_t *)(const void *)((r) + 1))

/* Offset of the agents table, after the slots (a multiple of 16 bytes). */
static inline size_t
robots_agents_off(const struct robots *r)
{
	return sizeof(*r) +
	       (r->nagents ? ((size_t)r->slot_mask + 1) * sizeof(uint32_t) : 0);
}

/* Offset of the agent_lists table, after the agents. */
static inline size_t
robots_agent_lists_off(const struct robots *r)
{
	return robots_agents_off(r) +
	       r->nagents * sizeof(struct robots_agent_rules);
}

/* The need mask of a table entry. */
static inline uint64_t
robots_crule_need(const struct robots_crule *c)
{
	return (uint64_t)c->need_hi << 32 | c->need_lo;
}

/* s[0..*len) trimmed of SP and HTAB at both ends (header values). */
static inline const char *
robots_trim_ows(const char *s, size_t *len)
{
	size_t n = *len;

	while (n > 0 && (s[0] == ' ' || s[0] == '\t'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	*len = n;
	return s;
}

/* Length of the product token at the start of s: its [A-Za-z_-] run. */
size_t robots_agent_token(const char *s, size_t len);
/* Whether a User-agent value names the '*' group ("*" or "* ..."). */
int robots_agent_is_global(const char *s, size_t len);
/* Case-insensitive hash and comparison of tokens. */
uint32_t robots_agent_hash(const char *s, size_t len);
int robots_agent_eq(const char *a, size_t alen, const char *b, size_t blen);
/* Fill a->head from the name s. */
void robots_agent_set_head(struct robots_agent_rules *a, const char *s);
/* The merged rules for the caller's token, or NULL. */
const struct robots_merged *robots_agent_find(
    const struct robots *, const char *token, size_t len);

/*
 * Parse-time scratch, shared by robots_parse.c (which fills groups and
 * agent lines) and robots_agent.c (which finds distinct tokens and the
 * lists of groups named by the same agents). A group before layout:
 */
struct robots_tgroup {
	uint32_t agent_first;
	uint32_t agent_count;
	uint32_t rule_count;  /* as written */
	uint32_t table_count; /* table entries, twins included */
	double crawl_delay;
	int separated; /* had a rule line: the next User-agent starts anew */
	int global;
	uint32_t sig_first; /* its distinct token ids, sorted, in scratch */
	uint32_t sig_len;
	uint32_t lid; /* its list: groups with the same agents share one */
};

/* A User-agent line naming a token or '*'. */
struct robots_tagent {
	const char *src;
	uint32_t len;
	uint32_t id; /* distinct-token index; ROBOTS_NONE for '*' or a repeat */
	uint32_t off; /* of the token in the ruleset's text */
	int global;
};

/* Scratch for the layout: distinct tokens, and lists of groups. */
struct robots_tokens {
	uint32_t n;
	uint32_t *first_line; /* per token: its first agent line */
	uint32_t *nlists;     /* per token: lists naming it */
	uint32_t *mark;       /* per token: last group that named it */
	uint32_t *slots;      /* hash table over tokens, index + 1 */
	uint32_t mask;
	uint32_t *sig;        /* groups' distinct token ids, sorted */
	uint32_t nl;          /* lists */
	uint32_t *list_rep;   /* per list: its first group */
	uint32_t *list_count; /* per list: table entries */
	uint32_t *lslots;     /* hash table over lists by agents, index + 1 */
	uint32_t lmask;
	size_t nagent_lists; /* all tokens' lists, and the '*' lists */
	size_t max_count;    /* of any list's table entries */
};

/*
 * Give every agent line its token id (ROBOTS_NONE for '*' and repeats in a
 * group) and every group its list; 0, or -1 when memory runs out. Free t
 * with robots_agent_index_clear() either way.
 */
int robots_agent_index(struct robots_tgroup *groups, size_t ng,
    struct robots_tagent *lines, size_t na, struct robots_tokens *t);
void robots_agent_index_clear(struct robots_tokens *t);

/* Scratch for robots_match_index(), one per list entry. */
struct robots_sortent {
	uint64_t key; /* the literal's first 8 bytes, big-endian, 0-padded */
	const char *lit;
	uint32_t len;
	uint32_t idx;
};
/*
 * Sort v[0..n) by key, then literal bytes, length and idx (a total order
 * when the idx are distinct); budget bounds the quicksort depth before it
 * turns to heap sort (64 is plenty).
 */
void robots_sortent_sort(struct robots_sortent *v, uint32_t n, int budget);
/* The key of a literal s (len bytes) for robots_sortent_sort(). */
uint64_t robots_sortent_key(const char *s, size_t len);
/* The need mask of a compiled glob p (n bytes, literal prefix lit). */
uint64_t robots_match_need(const char *p, size_t n, size_t lit);
/*
 * Order list (n table indexes, ascending) by literal prefix and write its
 * index (keys, then nodes) to words, which holds 3 * n; returns the number
 * of nodes. r's rules and text must be in place.
 */
uint32_t robots_match_index(const struct robots *r, uint32_t *list, uint32_t n,
    uint64_t *words, struct robots_sortent *tmp, uint32_t *stack);

#endif /* ROBOTS_INT_H */
