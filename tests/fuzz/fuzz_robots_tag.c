/*
 * fuzz_robots_tag.c: libFuzzer target for the robots rule parsers
 * (src/robots/robots_tag*.c). The input is read as a Robots-Tag field, an
 * X-Robots-Tag line, a robots <meta> content and an unavailable_after
 * date; every set must hold values within their ranges and unknown names
 * that are lowercase, distinct and not empty, and the union of a set with
 * itself must change nothing.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_tag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_robots_tag_check(const struct robots_tag_set *set)
{
	struct robots_tag_set copy;
	size_t i, j, n;

	if (set->nunknown > ROBOTS_TAG_MAX_UNKNOWN ||
	    set->rules >= 1u << RT_NRULES || set->valued > 15 ||
	    set->max_image_preview > RT_PREVIEW_LARGE ||
	    ((set->valued & RT_HAS_MAX_SNIPPET) && set->max_snippet < -1))
		abort();
	for (i = 0; i < set->nunknown; i++) {
		n = strlen(set->unknown[i]);
		if (n == 0 || n > ROBOTS_TAG_UNKNOWN_LEN)
			abort();
		for (j = 0; j < n; j++)
			if (set->unknown[i][j] >= 'A' &&
			    set->unknown[i][j] <= 'Z')
				abort();
		for (j = 0; j < i; j++)
			if (strcmp(set->unknown[i], set->unknown[j]) == 0)
				abort();
	}
	memcpy(&copy, set, sizeof(copy));
	copy.unknown_dropped = 0;
	robots_tag_set_union(&copy, set);
	if (copy.rules != set->rules || copy.valued != set->valued ||
	    copy.max_snippet != set->max_snippet ||
	    copy.nunknown != set->nunknown ||
	    copy.unavailable_after != set->unavailable_after)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct robots_tag_set set;
	int64_t t;

	robots_tag_set_init(&set);
	if (robots_tag_parse_field(s, size, "examplebot", 10, &set) > RT_NOMEM)
		abort();
	fuzz_robots_tag_check(&set);
	robots_tag_set_init(&set);
	robots_tag_parse_xrt(s, size, "ExampleBot/1.0", 14, &set);
	fuzz_robots_tag_check(&set);
	robots_tag_parse_meta("robots", 6, s, size, "examplebot", 10, &set);
	fuzz_robots_tag_check(&set);
	if (robots_tag_parse_date(s, size, &t) == 0 &&
	    (t < -30610224000LL || t > 253402387200LL))
		abort();
	return 0;
}
