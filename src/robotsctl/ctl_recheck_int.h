/*
 * ctl_recheck_int.h: what recheck's two files share: ctl_recheck.c (the
 * command: URLs in, verdicts out) and ctl_sources.c (the versions and
 * timelines read from robotsd's archive or any WARC files).
 */
#ifndef ROBOTSD_CTL_RECHECK_INT_H
#define ROBOTSD_CTL_RECHECK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "robots.h"
#include "wire/version.h"
#include "robotsctl.h"
#include "ctl_when.h"

/* What a version says: its rules, or allow all, or disallow all. */
enum rc_state {
	RC_RULES,
	RC_ALLOW_ALL,    /* "unavailable": 3xx, 4xx but 429, > 5 redirects */
	RC_DISALLOW_ALL, /* "unreachable": 5xx, 429 */
};

/* One distinct version, compiled once. */
struct rc_version {
	char id[VERSION_HEX + 1];
	enum rc_state state;
	struct robots *r; /* RC_RULES only */
};

/* An origin's versions over time (ctl_when.h's timeline). */
struct rc_origin {
	char *name;
	struct ctl_capture *caps;
	size_t n, cap;
};

/* A string-keyed table of indexes (open addressing, FNV-1a). */
struct rc_slot {
	const char *key; /* owned by the table's entries */
	size_t len, val;
	uint64_t hash;
};
struct rc_map {
	struct rc_slot *slots;
	size_t n, size;
};

struct rc_url; /* the captures of one URL, before redirects (ctl_sources.c) */

struct rc_sources {
	struct rc_version *vers;
	size_t nvers, capvers;
	struct rc_map vmap;
	struct rc_origin *origins;
	size_t norigins, caporigins;
	struct rc_map omap;
	struct rc_url *urls;
	size_t nurls, capurls;
	struct rc_map umap;
	unsigned seq;
	unsigned long files, records, redirects, unresolved;
	unsigned long others; /* robotsd's records of another resource */
};

/*
 * Read the sources ctl names (its --warc files and the nfiles more, else
 * the archive directory) into s and build each origin's timeline: 0, or
 * -1 (reported).
 */
int rc_sources_load(
    struct rc_sources *, const struct ctl *, char *const *files, int nfiles);
/* An origin's timeline, or NULL when the sources hold none. */
const struct rc_origin *rc_sources_origin(
    const struct rc_sources *, const char *origin, size_t len);
void rc_sources_free(struct rc_sources *);

#endif /* ROBOTSD_CTL_RECHECK_INT_H */
