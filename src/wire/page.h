/*
 * page.h: the page's own signals of a check, the request member
 * "page":{"headers":[[NAME,VALUE],...],"meta":[[NAME,CONTENT],...]} as
 * its pairs (struct wire_page: either decoder gives them): the robots
 * rules it gives an agent (Robots-Tag, X-Robots-Tag, robots <meta>), its
 * Content-Usage / Content-Signal header statements and the evidence id of
 * what robotsd read of it (docs/protocol.md).
 */
#ifndef ROBOTS_WIRE_PAGE_H
#define ROBOTS_WIRE_PAGE_H

#include <stddef.h>

#include <jansson.h>

#include "robots/robots_prefs.h"
#include "robots/robots_tag.h"
#include "robots/tdmrep.h"
#include "wire/version.h"
#include "wire/wire_fast.h"

/*
 * The pairs of a valid JSON page (proto.c validated it) into *pg, its
 * strings borrowed from page (page_from_json_clear() after). Returns 0, or
 * -1 when out of memory.
 */
int page_from_json(const json_t *page, struct wire_page *pg);
void page_from_json_clear(struct wire_page *pg);

/* Sources listed in robots_tag's "from", at most. */
#define PAGE_FROM_MAX 16

/* A field, line or meta element that gave the agent rules. */
struct page_tag_from {
	int meta;          /* 0: a header */
	const char *field; /* the header's or meta's name, any case */
	size_t field_len;
	const char *value; /* as received (Robots-Tag: its lines joined) */
	size_t value_len;
};

struct page_tags {
	struct robots_tag_set set; /* the union */
	size_t nfrom;
	struct page_tag_from from[PAGE_FROM_MAX];
	char *joined; /* the Robots-Tag lines joined with ", ", or NULL */
};

/*
 * The robots rules of a valid page for agent into *t (page_tags_clear()
 * after): Robots-Tag's lines as one field, each X-Robots-Tag line on its
 * own, then each <meta>. Returns 0, or -1 when out of memory.
 */
int page_tags(const struct wire_page *page, const char *agent, size_t agent_len,
    struct page_tags *t);
void page_tags_clear(struct page_tags *);

/* One preference header: its lines joined with ", ", and what it says. */
struct page_pref {
	int present;
	const char *value; /* the one line's value (borrowed), or own; len */
	size_t len;
	char *own; /* the lines joined (NUL-terminated), or NULL */
	struct pref_read read;
};

struct page_prefs {
	struct page_pref usage;  /* Content-Usage */
	struct page_pref signal; /* Content-Signal */
};

/* The preference headers of a valid page; 0, or -1 out of memory. */
int page_prefs(const struct wire_page *page, struct page_prefs *p);
void page_prefs_clear(struct page_prefs *);
/*
 * us combined with the header statements most restrictively per purpose
 * (disallowed, else allowed, else unknown).
 */
void page_prefs_combine(const struct page_prefs *p, struct robots_usage *us);

/*
 * The TDMRep statements of a valid page into *t, for robots_tdm_decide():
 * its TDM-Reservation / TDM-Policy header lines and tdm-reservation /
 * tdm-policy meta elements in order received, the last valid one of each
 * name counting; the strings borrowed from page.
 */
void page_tdm(const struct wire_page *page, struct tdm_page *t);

/*
 * The page's evidence id into out (VERSION_HEX + 1 bytes): the first 16
 * hex digits of the SHA-256 of "name: value\n" for each header line robotsd
 * reads, in order received, then "meta name: content\n" for every meta
 * pair, names lowercased. Returns 0, or -1 when out of memory.
 */
int page_evidence(const struct wire_page *page, char *out);

#endif /* ROBOTS_WIRE_PAGE_H */
