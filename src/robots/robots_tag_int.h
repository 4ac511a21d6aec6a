/*
 * robots_tag_int.h: what the robots rule readers share (robots_tag.c,
 * robots_tag_xrt.c, robots_tag_date.c): reading one rule into a set,
 * and matching a product token.
 */
#ifndef ROBOTS_TAG_INT_H
#define ROBOTS_TAG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ascii.h"
#include "robots_tag.h"

/*
 * Rule name (nlen bytes, any case) into set, with its value v (vlen
 * bytes, trimmed) when has_value: a flag rule is set whatever its value;
 * a valued rule with no value or one it cannot read is ignored; any
 * other name is kept as unknown.
 */
void robots_tag_add_rule(struct robots_tag_set *set, const char *name,
    size_t nlen, const char *v, size_t vlen, int has_value);
/* An unavailable_after given as a time (an RFC 9651 Date). */
void robots_tag_set_date(struct robots_tag_set *set, int64_t t);
/* The index of a valued rule's name (RT_HAS_* bit), or -1. */
int robots_tag_valued_index(const char *s, size_t len);
/* Whether s names a known rule, flag or valued. */
int robots_tag_known(const char *s, size_t len);
/*
 * Whether s names agent: their product tokens (the [A-Za-z_-] run at the
 * start) are equal, ignoring case, and not empty.
 */
int robots_tag_names_agent(
    const char *s, size_t len, const char *agent, size_t agent_len);

/* Whether s is a weekday's name, short or long, in any case. */
int robots_tag_weekday(const char *s, size_t n);

#endif /* ROBOTS_TAG_INT_H */
