/*
 * fuzz_sfv.c: libFuzzer target for the RFC 9651 Structured Fields parser
 * (src/robots/sfv.c) and the preference value readers beside it. The
 * input is parsed as a Dictionary, a List and an Item, each twice (into a
 * small and a large node array: the same verdict and count), every node
 * must point inside the input, and decoding must stay within a node's
 * length.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_prefs.h"
#include "sfv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODES 256

static struct sfv_node big[NODES], small[2];
static char out[1 << 17];

/* Whether [p, p + n) lies inside [s, s + len). */
static int
inside(const char *p, size_t n, const char *s, size_t len)
{
	return p == NULL ? n == 0
	                 : p >= s && n <= len && p - s <= (long)(len - n);
}

typedef int (*parse_fn)(
    const char *, size_t, struct sfv_node *, size_t, size_t *);

static void
one(parse_fn parse, const char *s, size_t len)
{
	size_t n1 = 0, n2 = 0, i, k;
	int rc1 = parse(s, len, big, NODES, &n1);
	int rc2 = parse(s, len, small, 2, &n2);

	if (rc1 != rc2 || (rc1 == 0 && n1 != n2))
		abort();
	if (rc1 != 0)
		return;
	for (i = 0; i < n1 && i < NODES; i++) {
		if (!inside(big[i].key, big[i].key_len, s, len) ||
		    !inside(big[i].s, big[i].len, s, len))
			abort();
		if (big[i].len < sizeof(out) &&
		    (k = robots_sfv_decode(&big[i], out)) > big[i].len)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct pref_read rd;
	size_t i;

	one(robots_sfv_parse_dict, s, size);
	one(robots_sfv_parse_list, s, size);
	one(robots_sfv_parse_item, s, size);
	robots_pref_read_usage(s, size, &rd);
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		if (rd.pref[i] > ROBOTS_PREF_DISALLOWED)
			abort();
	robots_pref_read_signal(s, size, &rd);
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		if (rd.pref[i] > ROBOTS_PREF_DISALLOWED)
			abort();
	return 0;
}
