/*
 * robots_tdmrep.c: the TDMRep rules of tdmrep.h, pure: the rules that
 * src/wire/tdmrep_json.c reads from tdmrep.json with jansson (librobots
 * reads no JSON), the scans it runs first (the depth: jansson's own limit
 * is a build constant of 2048; the defusing of what jansson refuses a
 * whole file for), the match and the header and meta values.
 * A location is compiled as a robots.txt pattern (robots_pattern.c) and
 * matched by the robots.txt matcher, so '*', '$' and percent-encoding
 * behave as for Allow/Disallow.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "robots_int.h"
#include "robots_parse_int.h"
#include "tdmrep.h"

struct tdmrep_ent {
	struct tdmrep_rule pub;
	struct robots_crule m;
	const char *pat; /* the compiled location (m.pat is 0) */
};

struct tdmrep {
	struct tdmrep_ent *ents;
	size_t n, cap;
	struct tdmrep_warning warns[TDMREP_MAX_WARNINGS];
	size_t nwarns, total;
};

static void
tdmrep_warn_by(
    struct tdmrep *t, uint32_t member, enum tdmrep_wcode code, uint32_t by)
{
	if (t->nwarns < TDMREP_MAX_WARNINGS) {
		t->warns[t->nwarns].member = member;
		t->warns[t->nwarns].code = code;
		t->warns[t->nwarns].by = by;
		t->nwarns++;
	}
	t->total++;
}

void
robots_tdmrep_warn(struct tdmrep *t, uint32_t member, enum tdmrep_wcode code)
{
	tdmrep_warn_by(t, member, code, 0);
}

/* Where a scan of JSON text is: nesting, and inside a string or not. */
struct tdmrep_scan {
	int depth, in_str, esc;
};

/*
 * Byte c of the text into sc: 1 when it opens an array or object, -1
 * when it closes one, 0 otherwise (brackets in strings are not counted).
 */
static int
tdmrep_scan(struct tdmrep_scan *sc, char c)
{
	if (sc->in_str) {
		if (sc->esc)
			sc->esc = 0;
		else if (c == '\\')
			sc->esc = 1;
		else if (c == '"')
			sc->in_str = 0;
		return 0;
	}
	if (c == '"')
		sc->in_str = 1;
	else if (c == '[' || c == '{')
		return sc->depth++, 1;
	else if (c == ']' || c == '}')
		return sc->depth--, -1;
	return 0;
}

int
robots_tdmrep_depth_ok(const char *s, size_t len)
{
	struct tdmrep_scan sc = { 0, 0, 0 };
	size_t i;

	for (i = 0; i < len; i++)
		if (tdmrep_scan(&sc, s[i]) == 1 && sc.depth > TDMREP_MAX_DEPTH)
			return 0;
	return 1;
}

/* Whether c is a decimal digit. */
static int
tdmrep_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether c may be part of a JSON number token. */
static int
tdmrep_numchar(char c)
{
	return tdmrep_digit(c) || (c != '\0' && strchr("+-.eE", c) != NULL);
}

/* Whether c is JSON whitespace. */
static int
tdmrep_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The exponent of a number from s[*i] on (after its 'e'), its magnitude
 * capped past cap (beyond which it cannot matter); *ok 0 without digits.
 */
static long long
tdmrep_exponent(const char *s, size_t n, size_t *i, long long cap, int *ok)
{
	long long e = 0;
	int neg = 0;
	size_t d0;

	if (*i < n && (s[*i] == '+' || s[*i] == '-'))
		neg = s[(*i)++] == '-';
	d0 = *i;
	while (*i < n && tdmrep_digit(s[*i])) {
		if (e <= cap)
			e = e * 10 + (s[*i] - '0');
		(*i)++;
	}
	*ok = *i > d0;
	return neg ? -e : e;
}

/*
 * Whether s[0..n) is a JSON number (RFC 8259 section 6) whose value is
 * not exactly 0 or 1: 1; 0 for 0 or 1 in any notation ("-0", "1.0",
 * "10e-1"); -1 for what is no JSON number (left for jansson to refuse).
 */
static int
tdmrep_number_other(const char *s, size_t n)
{
	size_t i = s[0] == '-', start = i, dot, k, first = n, last = n;
	long long e = 0;
	int ok = 1;

	while (i < n && tdmrep_digit(s[i]))
		i++;
	dot = i;
	if (dot == start || (dot - start > 1 && s[start] == '0'))
		return -1;
	if (i < n && s[i] == '.' && ++i < n && tdmrep_digit(s[i]))
		while (i < n && tdmrep_digit(s[i]))
			i++;
	else if (i > dot)
		return -1; /* a '.' without digits */
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		e = tdmrep_exponent(s, n, &i, (long long)n, &ok);
	}
	if (!ok || i != n)
		return -1;
	for (k = start; k < n && s[k] != 'e' && s[k] != 'E'; k++)
		if (tdmrep_digit(s[k]) && s[k] != '0')
			last = k, first = first == n ? k : first;
	if (first == n)
		return 0; /* zero, however written */
	if (first != last || s[first] != '1' || s[0] == '-')
		return 1;
	/* the decimal exponent of that one 1 */
	if (first < dot)
		e += (long long)(dot - 1 - first);
	else
		e -= (long long)(first - dot);
	return e != 0;
}

/*
 * String s[open..close] (its quotes) of text s (len bytes): when an
 * object key (a ':' follows), each \u0000 in it becomes \u0001. Returns
 * how many.
 */
static size_t
tdmrep_defuse_key(char *s, size_t len, size_t open, size_t close)
{
	size_t j = close + 1, n = 0;

	while (j < len && tdmrep_ws(s[j]))
		j++;
	if (j >= len || s[j] != ':')
		return 0;
	j = open + 1;
	while (j < close) {
		if (s[j] != '\\') {
			j++;
			continue;
		}
		if (j + 5 < close && s[j + 1] == 'u' &&
		    memcmp(s + j + 2, "0000", 4) == 0)
			s[j + 5] = '1', n++;
		j += 2;
	}
	return n;
}

size_t
robots_tdmrep_defuse(char *s, size_t len)
{
	struct tdmrep_scan sc = { 0, 0, 0 };
	size_t i = 0, j, open = 0, n = 0;
	int was;

	while (i < len) {
		was = sc.in_str;
		if (!was && (s[i] == '-' || tdmrep_digit(s[i]))) {
			j = i;
			while (j < len && tdmrep_numchar(s[j]))
				j++;
			if (tdmrep_number_other(s + i, j - i) == 1 &&
			    (j - i > 1 || s[i] != '2')) {
				s[i] = '2';
				memset(s + i + 1, ' ', j - i - 1);
				n++;
			}
			i = j;
			continue;
		}
		(void)tdmrep_scan(&sc, s[i]);
		if (!was && sc.in_str)
			open = i;
		else if (was && !sc.in_str)
			n += tdmrep_defuse_key(s, len, open, i);
		i++;
	}
	return n;
}

void
robots_tdmrep_member_lines(const char *s, size_t len, uint32_t *lines, size_t n)
{
	struct tdmrep_scan sc = { 0, 0, 0 };
	uint32_t line = 1;
	size_t i, m = 0;
	int next = 0; /* the next visible byte starts a member */
	char c;

	memset(lines, 0, n * sizeof(lines[0]));
	for (i = 0; i < len; i++) {
		c = s[i];
		if (next && !sc.in_str && c != ' ' && c != '\t' && c != '\n' &&
		    c != '\r') {
			if (m < n && c != ']')
				lines[m] = line;
			m++;
			next = 0;
		}
		if (!sc.in_str && sc.depth == 1 && c == ',')
			next = 1;
		if (tdmrep_scan(&sc, c) == 1 && sc.depth == 1 && c == '[')
			next = 1;
		if (c == '\n')
			line++;
	}
}

/* The first earlier rule whose location matches all that e's can. */
static long
tdmrep_shadowed_by(const struct tdmrep *t, const struct tdmrep_ent *e)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct tdmrep_ent *p = &t->ents[i];

		if (!p->m.anchored && p->m.pat_len <= e->m.pat_len &&
		    memcmp(p->pat, e->pat, p->m.pat_len) == 0)
			return (long)i;
	}
	return -1;
}

/* Compile e's location into o (room for 3 times its length). */
static void
tdmrep_compile(struct tdmrep_ent *e, char *o)
{
	struct trule tr;
	uint64_t need;

	memset(&tr, 0, sizeof(tr));
	robots_pattern_compile(e->pub.location, e->pub.location_len, o, &tr);
	e->pat = o;
	e->m.pat_len = (uint16_t)tr.comp_len;
	e->m.lit_len = (uint16_t)tr.lit_len;
	e->m.anchored = tr.anchored;
	need = robots_match_need(o, tr.comp_len, tr.lit_len);
	e->m.need_lo = (uint32_t)need;
	e->m.need_hi = (uint32_t)(need >> 32);
}

struct tdmrep *
robots_tdmrep_new(size_t cap)
{
	struct tdmrep *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	if (cap > TDMREP_MAX_RULES)
		cap = TDMREP_MAX_RULES;
	if (cap > 0 && (t->ents = calloc(cap, sizeof(*t->ents))) == NULL) {
		free(t);
		return NULL;
	}
	t->cap = cap;
	return t;
}

/* Why a location cannot be a rule's, or -1 when it can. */
static int
tdmrep_location_check(const char *loc, size_t ll)
{
	if (ll == 0 || (loc[0] != '/' && loc[0] != '*'))
		return TDMREP_W_LOCATION;
	if (ll > TDMREP_MAX_LOCATION)
		return TDMREP_W_LOCATION_LONG;
	if (memchr(loc, '\0', ll) != NULL)
		return TDMREP_W_LOCATION_NUL;
	return -1;
}

int
robots_tdmrep_add(struct tdmrep *t, uint32_t member, const char *loc, size_t ll,
    int reservation, const char *pol, size_t pl)
{
	struct tdmrep_ent *e;
	int why;
	char *b;
	long by;

	if ((why = tdmrep_location_check(loc, ll)) >= 0 || t->n == t->cap) {
		tdmrep_warn_by(t, member,
		    why >= 0 ? (enum tdmrep_wcode)why : TDMREP_W_TOO_MANY, 0);
		return 0;
	}
	if (pol != NULL && pl > TDMREP_MAX_POLICY) {
		tdmrep_warn_by(t, member, TDMREP_W_POLICY_LONG, 0);
		pol = NULL;
	} else if (pol != NULL && memchr(pol, '\0', pl) != NULL) {
		tdmrep_warn_by(t, member, TDMREP_W_POLICY_NUL, 0);
		pol = NULL;
	}
	pl = pol != NULL ? pl : 0;
	if ((b = malloc(ll + 1 + pl + 1 + 3 * ll)) == NULL)
		return -1;
	e = &t->ents[t->n];
	memset(e, 0, sizeof(*e));
	memcpy(b, loc, ll), b[ll] = '\0';
	e->pub.location = b;
	e->pub.location_len = ll;
	if (pol != NULL) {
		memcpy(b + ll + 1, pol, pl), b[ll + 1 + pl] = '\0';
		e->pub.policy = b + ll + 1;
		e->pub.policy_len = pl;
	}
	e->pub.member = member;
	e->pub.reservation = reservation != 0;
	tdmrep_compile(e, b + ll + 1 + pl + 1);
	if ((by = tdmrep_shadowed_by(t, e)) >= 0)
		tdmrep_warn_by(
		    t, member, TDMREP_W_SHADOWED, t->ents[by].pub.member);
	t->n++;
	return 0;
}

void
robots_tdmrep_free(struct tdmrep *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)t->ents[i].pub.location);
	free(t->ents);
	free(t);
}

/* The allocator's header of each block, as glibc's malloc keeps it. */
#define TDMREP_BLOCK_OVERHEAD 16

size_t
robots_tdmrep_bytes(const struct tdmrep *t)
{
	size_t i, n;

	if (t == NULL)
		return 0;
	n = sizeof(*t) + t->cap * sizeof(*t->ents) + 2 * TDMREP_BLOCK_OVERHEAD;
	for (i = 0; i < t->n; i++) /* robots_tdmrep_add()'s block */
		n += 4 * t->ents[i].pub.location_len +
		     t->ents[i].pub.policy_len + 2 + TDMREP_BLOCK_OVERHEAD;
	return n;
}

size_t
robots_tdmrep_count(const struct tdmrep *t)
{
	return t->n;
}

const struct tdmrep_rule *
robots_tdmrep_rule(const struct tdmrep *t, size_t i)
{
	return i < t->n ? &t->ents[i].pub : NULL;
}

const struct tdmrep_warning *
robots_tdmrep_warnings(const struct tdmrep *t, size_t *kept, size_t *total)
{
	*kept = t->nwarns;
	*total = t->total;
	return t->warns;
}

const struct tdmrep_rule *
robots_tdmrep_match(const struct tdmrep *t, const char *path, size_t len)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (robots_crule_match(
		        t->ents[i].pat, &t->ents[i].m, path, len))
			return &t->ents[i].pub;
	return NULL;
}

int
robots_tdm_reservation_value(const char *s, size_t len)
{
	s = robots_trim_ows(s, &len);
	if (len != 1 || (s[0] != '0' && s[0] != '1'))
		return -1;
	return s[0] - '0';
}

size_t
robots_tdm_policy_value(const char *s, size_t len, const char **out)
{
	size_t i;

	s = robots_trim_ows(s, &len);
	if (len == 0 || len > TDMREP_MAX_POLICY)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	*out = s;
	return len;
}

const char *
robots_tdmrep_error_name(enum tdmrep_error e)
{
	static const char *const names[] = { "ok", "too_big", "too_deep",
		"not_json", "not_array", "no_memory" };

	return (size_t)e < sizeof(names) / sizeof(names[0]) ? names[e]
	                                                    : "unknown";
}

const char *
robots_tdmrep_wcode_name(enum tdmrep_wcode c)
{
	static const char *const names[] = { "tdmrep_not_object",
		"tdmrep_location", "tdmrep_location_long", "tdmrep_reservation",
		"tdmrep_policy", "tdmrep_policy_long", "tdmrep_too_many",
		"tdmrep_shadowed", "tdmrep_location_nul", "tdmrep_policy_nul" };

	return (size_t)c < sizeof(names) / sizeof(names[0]) ? names[c]
	                                                    : "unknown";
}
