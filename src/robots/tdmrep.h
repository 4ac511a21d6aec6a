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
 * must start with '/' or '*' and be at most TDMREP_MAX_LOCATION bytes,
 * else the member is skipped with a warning), reservation 0 or 1, policy
 * (pl bytes) or NULL (over TDMREP_MAX_POLICY: kept without it, with a
 * warning). Warns tdmrep_shadowed when an earlier location matches all
 * this one can. Returns 0, or -1 when out of memory.
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

size_t robots_tdmrep_count(const struct tdmrep *);
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

#endif /* ROBOTS_TDMREP_H */
