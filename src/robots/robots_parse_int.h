/*
 * robots_parse_int.h: the parser's private types and its growable
 * vectors, shared by the line parser (robots_parse.c), its preference
 * lines (robots_parse_prefs.c), the warnings for the file's author
 * (robots_parse_author.c), the compiled form of their patterns
 * (robots_pattern.c) and the layout that compiles its tables into a
 * ruleset (robots_build.c), and tdmrep.json's locations, compiled as
 * patterns (robots_tdmrep.c). Nothing else includes it.
 */
#ifndef ROBOTS_PARSE_INT_H
#define ROBOTS_PARSE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

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

/* A Content-Usage or Content-Signal statement before layout. */
struct tpref {
	const char *path; /* NULL: absent, "/" */
	uint32_t path_len;
	const char *val;
	uint32_t val_len;
	uint32_t line;
	uint32_t group; /* ROBOTS_NONE: file scope */
	uint32_t comp;  /* compiled pattern in pcomp */
	uint32_t comp_len, lit_len, prio;
	uint8_t anchored;
	uint8_t kind;
	uint8_t pref[ROBOTS_PURPOSES];
};

/* An extra line (preference, License, unknown directive) before layout. */
struct textra {
	const char *name;
	uint32_t name_len;
	const char *val;
	uint32_t val_len;
	uint32_t line;
	uint32_t group; /* ROBOTS_NONE: before the first group */
};

/* A warning before layout: line and code (robots_parse_prefs.c's table). */
struct twarn {
	uint32_t line;
	uint32_t code;
};

struct parser {
	struct vec rules;    /* struct trule */
	struct vec groups;   /* struct robots_tgroup */
	struct vec agents;   /* struct robots_tagent */
	struct vec sitemaps; /* struct tspan */
	struct vec comp;     /* char */
	uint32_t seq;
	int nomem;
	/* Usage preferences (robots_parse_prefs.c). */
	struct vec prefs;           /* struct tpref */
	struct vec extras;          /* struct textra */
	struct vec warns;           /* struct twarn */
	struct vec pcomp;           /* char: compiled preference patterns */
	size_t nother, extra_bytes; /* extra lines not preference lines */
	size_t pend; /* statements of the agent run not yet followed by one */
};

/* Cut the body into lines and parse each into p (robots_parse.c). */
void robots_parse_body(struct parser *p, const char *body, size_t len);

/* Make room for k more elements of size sz; 0 on success. */
static inline int
robots_parse_vec_reserve(struct vec *v, size_t sz, size_t k, int *nomem)
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
static inline void *
robots_parse_vec_push(struct vec *v, size_t sz, int *nomem)
{
	char *e;

	if (robots_parse_vec_reserve(v, sz, 1, nomem) != 0)
		return NULL;
	e = (char *)v->v + v->n++ * sz;
	memset(e, 0, sz);
	return e;
}

/* A warning about line (enum robots_wcode), at most PARSE_WARN_MAX. */
#define PARSE_WARN_MAX 1024
static inline void
robots_parse_warn(struct parser *p, uint32_t line, unsigned code)
{
	struct twarn *w;

	if (p->warns.n < PARSE_WARN_MAX &&
	    (w = robots_parse_vec_push(&p->warns, sizeof(*w), &p->nomem)) !=
	        NULL) {
		w->line = line;
		w->code = code;
	}
}

/*
 * Normalize pattern v (n bytes) into o (room for 3 * n) and compile it
 * as a rule's: r's comp_len, lit_len, anchored; returns the normalized
 * length (the specificity) (robots_pattern.c).
 */
size_t robots_pattern_compile(
    const char *v, size_t n, char *o, struct trule *r);
/*
 * The compiling after the normalization: rewrite a normalized pattern
 * o[0..k) in place and set r's comp_len, lit_len, anchored; returns the
 * new length.
 */
size_t robots_pattern_tail(char *o, size_t k, struct trule *r);

/*
 * A line whose key is none of the RFC 9309 ones: key (kn bytes, as
 * written) and value; colon 0 when it had none.
 */
void robots_prefs_line(struct parser *p, const char *key, size_t kn,
    const char *v, size_t n, uint32_t line, int colon);
/* A User-agent line; joins: it extends a group that has no rule yet. */
void robots_prefs_user_agent(struct parser *p, int joins);
/* The preference section laid out after r (robots_build.c's result). */
struct robots *robots_prefs_attach(struct parser *p, struct robots *r);
void robots_prefs_clear(struct parser *p);
/*
 * pref_not_in_star_group, allow_disallow_tie and pref_conflict, once the
 * whole body is parsed and its agents have their token ids
 * (robots_parse_author.c).
 */
void robots_author_warnings(struct parser *p);

#endif /* ROBOTS_PARSE_INT_H */
