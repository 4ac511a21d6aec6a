/*
 * robots_image.c: a compiled ruleset as bytes and back. A ruleset is one
 * allocation whose tables are found by offsets, so its bytes are its
 * serialized form; the daemon's state file stores them. An image is only
 * meaningful to the same build (ROBOTS_IMAGE_VERSION and the machine's
 * layout), and is checked for size and table bounds here, then entry by
 * entry (robots_image_check.c): a state file is a file anyone who can
 * write it may have crafted, and a bad image is refused, never read.
 */
#include <config.h>

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"

/* The bytes of r (borrowed, valid while r is). */
const void *
robots_image(const struct robots *r, size_t *len)
{
	*len = r->memsize;
	return r;
}

/*
 * Whether r's tables lie in order inside its len bytes, each large enough
 * for its count (slots, agents and agent_lists are placed by their counts).
 */
static int
robots_image_bounded(const struct robots *r, size_t len)
{
	const size_t offs[] = { robots_agent_lists_off(r), r->lists, r->nodes,
		r->idx, r->rules, r->groups, r->gagents, r->sitemaps, r->text,
		r->memsize };
	size_t i;

	if (r->memsize != len)
		return 0;
	for (i = 1; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] < offs[i - 1])
			return 0;
	return r->groups - r->rules >=
	           (size_t)r->nrules * sizeof(struct robots_crule) &&
	       r->gagents - r->groups >=
	           (size_t)r->ngroups * sizeof(struct robots_group) &&
	       r->text - r->sitemaps >=
	           (size_t)r->nsitemaps * sizeof(struct robots_span);
}

/* A ruleset from an image of robots_image(); NULL if it is not one. */
struct robots *
robots_from_image(const void *buf, size_t len)
{
	void *copy;

	if (len < sizeof(struct robots) || (copy = malloc(len)) == NULL)
		return NULL;
	memcpy(copy, buf, len);
	return robots_adopt_image(copy, len);
}

struct robots *
robots_adopt_image(void *buf, size_t len)
{
	return robots_adopt_image_version(buf, len, ROBOTS_IMAGE_VERSION);
}

struct robots *
robots_from_image_version(const void *buf, size_t len, unsigned version)
{
	void *copy;

	if (len < sizeof(struct robots) || (copy = malloc(len)) == NULL)
		return NULL;
	memcpy(copy, buf, len);
	return robots_adopt_image_version(copy, len, version);
}

/*
 * Version 3 is version 5 without the preference section: the same header
 * (prefs sat in its padding) and tables, so it is read in place with
 * prefs 0. Version 4 has the section, but compiled without the purpose
 * ai-use and the author warnings: checked for bounds, then read as
 * version 3 (its preferences are answered from the body again).
 */
struct robots *
robots_adopt_image_version(void *buf, size_t len, unsigned version)
{
	struct robots *r = buf;

	/* A version-3 header ended before prefs (then padding to align). */
	const size_t v3_head =
	    (offsetof(struct robots, prefs) + alignof(struct robots) - 1) &
	    ~(alignof(struct robots) - 1);

	if (len < sizeof(*r) || version < 3 || version > ROBOTS_IMAGE_VERSION ||
	    (version == 3 && v3_head != sizeof(*r))) {
		free(buf);
		return NULL;
	}
	if (version == 3)
		r->prefs = 0;
	if (!robots_image_bounded(r, len) ||
	    (version > 3 && !robots_prefs_bounded(r, len))) {
		free(buf);
		return NULL;
	}
	if (version == 4)
		r->prefs = 0;
	if (!robots_image_deep_ok(r, len) || !robots_prefs_deep_ok(r)) {
		free(buf);
		return NULL;
	}
	atomic_init(&r->refs, 1);
	return r;
}
