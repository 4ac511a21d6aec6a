/*
 * tdmrep.h: the W3C TDM Reservation Protocol (TDMRep, CG final report
 * 2024): the rules of the well-known file /.well-known/tdmrep.json
 * (section 3.1, "TDM File on the Origin Server"), which
 * src/wire/tdmrep_json.h reads with jansson under the limits below, their
 * match against a URL's match path, and the values of the tdm-reservation
 * / tdm-policy header fields and <meta> elements (sections 3.2 and 3.3).
 * Pure: no I/O, no globals; building the rules allocates, the match never
 * does.
 */
#ifndef ROBOTS_TDMREP_H
#define ROBOTS_TDMREP_H

#include <stddef.h>
#include <stdint.h>

#include "robots.h"

/* Limits of tdmrep.json (tdmrep_json_parse()). */
#define TDMREP_MAX_BODY ROBOTS_MAX_BODY /* the robots.txt body cap */
#define TDMREP_MAX_DEPTH 16             /* nesting of arrays and objects */
#define TDMREP_MAX_RULES 1024    /* array members read; the rest ignored */
#define TDMREP_MAX_LOCATION 2048 /* bytes of a location */
#define TDMREP_MAX_POLICY 2048   /* bytes of a tdm-policy */
#define TDMREP_MAX_WARNINGS 64   /* warnings kept (all are counted) */

/* Why a whole file is invalid (the state "invalid"). */
enum tdmrep_error {
	TDMREP_OK,
	TDMREP_E_TOO_BIG, /* over TDMREP_MAX_BODY */
	TDMREP_E_DEPTH,   /* nested deeper than TDMREP_MAX_DEPTH */
	TDMREP_E_JSON,    /* not JSON (jansson's error) */
	TDMREP_E_NOT_ARRAY,
	TDMREP_E_NOMEM,
};

/* Why one array member was skipped, or a note about a kept one. */
enum tdmrep_wcode {
	TDMREP_W_NOT_OBJECT,    /* the member is not an object */
	TDMREP_W_LOCATION,      /* no string location, or not "/..." / "*..." */
	TDMREP_W_LOCATION_LONG, /* over TDMREP_MAX_LOCATION */
	TDMREP_W_RESERVATION, /* tdm-reservation absent or not the number 0/1 */
	TDMREP_W_POLICY,      /* tdm-policy present and not a string */
	TDMREP_W_POLICY_LONG, /* kept without its policy: over the limit */
	TDMREP_W_TOO_MANY,    /* members after TDMREP_MAX_RULES, ignored */
	TDMREP_W_SHADOWED,    /* kept, but an earlier location prefixes it */
	TDMREP_W_LOCATION_NUL, /* the location has a NUL (\u0000) */
	TDMREP_W_POLICY_NUL,   /* kept without its policy, which has a NUL */
};

struct tdmrep_warning {
	uint32_t member; /* 0-based index in the array */
	enum tdmrep_wcode code;
	uint32_t by; /* TDMREP_W_SHADOWED: the member that shadows it */
};

struct tdmrep_rule {
	const char *location; /* as written, NUL-terminated */
	size_t location_len;
	const char *policy; /* NULL when absent */
	size_t policy_len;
	uint32_t member;     /* index in the array */
	uint8_t reservation; /* 0 or 1 */
};

struct tdmrep; /* a parsed file */

/* Rules for at most cap members (at most TDMREP_MAX_RULES); NULL. */
struct tdmrep *robots_tdmrep_new(size_t cap);
void robots_tdmrep_free(struct tdmrep *);
/*
 * Array member number `member` as the next rule: location (ll bytes; it
 * must start with '/' or '*', be at most TDMREP_MAX_LOCATION bytes and
 * hold no NUL, else the member is skipped with a warning), reservation 0
 * or 1, policy (pl bytes) or NULL (over TDMREP_MAX_POLICY or with a NUL:
 * kept without it, with a warning). Warns tdmrep_shadowed when an
 * earlier location matches all this one can. Returns 0, or -1 when out of
 * memory.
 */
int robots_tdmrep_add(struct tdmrep *, uint32_t member, const char *loc,
    size_t ll, int reservation, const char *pol, size_t pl);
/* A warning about member (one the reader skipped). */
void robots_tdmrep_warn(struct tdmrep *, uint32_t member, enum tdmrep_wcode);
/*
 * Whether s nests arrays and objects at most TDMREP_MAX_DEPTH deep,
 * brackets in JSON strings aside (a scan before the JSON parse).
 */
int robots_tdmrep_depth_ok(const char *s, size_t len);
/*
 * Rewrite in s (len bytes of a tdmrep.json), in place, what would make
 * jansson refuse the whole file for one member (a scan before the JSON
 * parse, strings aside): a number whose value is not exactly 0 or 1
 * becomes 2 padded with spaces (still neither: "1e400", which no double
 * holds, an integer past int64, "1e-400", which a double rounds to 0,
 * "1.0000000000000000001", which it rounds to 1), and a \u0000 in an
 * object key becomes \u0001 (a key naming no member field either way;
 * jansson takes \u0000 only in values, with JSON_ALLOW_NUL). 0 or 1 in
 * any notation and what is no JSON number stay as written. Every byte
 * keeps its offset, so lines and jansson's positions do not move.
 * Returns the rewrites made.
 */
size_t robots_tdmrep_defuse(char *s, size_t len);
/*
 * The 1-based line of s (the text of a tdmrep.json) where each of the
 * first n members of its top-level array starts, into lines[0..n-1]; 0
 * for a member not found (a scan, brackets in strings aside: for
 * warnings, not a parse).
 */
void robots_tdmrep_member_lines(
    const char *s, size_t len, uint32_t *lines, size_t n);

size_t robots_tdmrep_count(const struct tdmrep *);
/*
 * The bytes the rules hold on the heap (their blocks and an allocator's
 * header each), for a cache's byte cap.
 */
size_t robots_tdmrep_bytes(const struct tdmrep *);
const struct tdmrep_rule *robots_tdmrep_rule(const struct tdmrep *, size_t i);
/* The warnings kept, in member order, and how many there were in all. */
const struct tdmrep_warning *robots_tdmrep_warnings(
    const struct tdmrep *, size_t *kept, size_t *total);

/*
 * The rule deciding path, a match path as for robots_check() (percent-
 * encoding normalized, path plus query): the first in file order whose
 * location matches (section 3.1: "The most specific match is the first
 * in sequence"), case-sensitive, '*' any run and a final '$' the end, as
 * robots.txt patterns; NULL when none matches (reservation unset).
 */
const struct tdmrep_rule *robots_tdmrep_match(
    const struct tdmrep *, const char *path, size_t len);

/*
 * A tdm-reservation header or meta value: 0 or 1 once SP and HTAB are
 * trimmed; -1 for anything else (a protocol error: unset, section 2.1).
 */
int robots_tdm_reservation_value(const char *s, size_t len);
/*
 * A tdm-policy header or meta value: trimmed of SP and HTAB, it must be
 * 1 to TDMREP_MAX_POLICY bytes of visible ASCII (no controls, no space,
 * nothing above 0x7e). Returns the trimmed length with *out its start,
 * or 0 when the value is invalid (ignored, as if absent).
 */
size_t robots_tdm_policy_value(const char *s, size_t len, const char **out);

const char *robots_tdmrep_error_name(enum tdmrep_error);
const char *robots_tdmrep_wcode_name(enum tdmrep_wcode);

/*
 * The answer "tdm" of a check (the contract, TDMRep): what tdmrep.json
 * says for a URL, overridden by the page's TDM-Reservation / TDM-Policy
 * header lines and then by its tdm-reservation / tdm-policy <meta>
 * elements (TDMRep: the latest, most specific statement wins; a field
 * that is absent resets nothing).
 */

/* The state of tdmrep.json for an origin. */
enum tdm_state {
	TDM_STATE_RULES,       /* a 2xx with a JSON array */
	TDM_STATE_NONE,        /* 404, 410, other 4xx: no TDMRep */
	TDM_STATE_INVALID,     /* a 2xx with anything else */
	TDM_STATE_UNREACHABLE, /* 5xx, 429, network errors */
	TDM_STATE_PENDING,     /* not fetched yet: only the page's say */
};

/* Where a reservation or a policy came from. */
enum tdm_from {
	TDM_FROM_ABSENT, /* no source gave one */
	TDM_FROM_FILE,   /* "tdmrep.json" */
	TDM_FROM_HEADER, /* "header" */
	TDM_FROM_META    /* "meta" */
};

/* The last valid value of each TDM field of one source of a page. */
struct tdm_values {
	int reservation;    /* 0 or 1; -1 none */
	const char *policy; /* borrowed, trimmed; NULL none */
	size_t policy_len;
};

/* What a page said: its header lines, then its <meta> elements. */
struct tdm_page {
	struct tdm_values header, meta;
};

struct tdm_answer {
	enum tdm_state state;
	int reservation;    /* 0 or 1; -1 none (null) */
	const char *policy; /* borrowed; NULL: null */
	size_t policy_len;
	const char *location; /* the matching member's; NULL: null */
	size_t location_len;
	enum tdm_from from; /* of reservation, else of policy */
};

/* A page that said nothing (before robots_tdm_page_add()). */
void robots_tdm_page_init(struct tdm_page *);
/*
 * One header line (meta 0) or <meta> element (meta 1) of a page: a
 * TDM-Reservation / TDM-Policy (names case-insensitive) whose value is
 * valid replaces the earlier one of its source; an invalid value, or
 * another name, changes nothing. value is borrowed.
 */
void robots_tdm_page_add(struct tdm_page *, int meta, const char *name,
    size_t name_len, const char *value, size_t value_len);
/*
 * The answer for a match path (as for robots_tdmrep_match()): rules
 * (NULL unless state is TDM_STATE_RULES) decide reservation, policy and
 * location; then page (NULL: a check without a page) overrides. from is
 * the source of the reservation, else of the policy; without a page it
 * is TDM_FROM_ABSENT. Pure; the strings are borrowed from rules and page.
 */
void robots_tdm_decide(const struct tdmrep *rules, enum tdm_state state,
    const char *path, size_t len, const struct tdm_page *page,
    struct tdm_answer *out);
/*
 * The usage purpose "tdm" of a reservation: 1 disallowed, 0 allowed,
 * none (-1) unknown.
 */
enum robots_pref robots_tdm_pref(int reservation);

/* "rules", "none", "invalid", "unreachable", "pending". */
const char *robots_tdm_state_name(enum tdm_state);
/* "tdmrep.json", "header", "meta"; NULL for TDM_FROM_ABSENT. */
const char *robots_tdm_from_name(enum tdm_from);

#endif /* ROBOTS_TDMREP_H */
