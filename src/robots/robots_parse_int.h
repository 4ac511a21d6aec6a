/*
 * robots_parse_int.h: the parser's private types, shared by the line
 * parser (robots_parse.c) and the layout that compiles its tables into a
 * ruleset (robots_build.c). Nothing else includes it.
 */
#ifndef ROBOTS_PARSE_INT_H
#define ROBOTS_PARSE_INT_H

#include <stddef.h>
#include <stdint.h>

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

struct parser {
	struct vec rules;    /* struct trule */
	struct vec groups;   /* struct robots_tgroup */
	struct vec agents;   /* struct robots_tagent */
	struct vec sitemaps; /* struct tspan */
	struct vec comp;     /* char */
	uint32_t seq;
	int nomem;
};

/* Cut the body into lines and parse each into p (robots_parse.c). */
void parse_body(struct parser *p, const char *body, size_t len);

#endif /* ROBOTS_PARSE_INT_H */
