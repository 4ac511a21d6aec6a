/*
 * fuzz_tier.c: libFuzzer target for the shared tier's value decoder. Any
 * bytes may sit in Redis: decoding must never crash, leak or read outside
 * the input, and a value it accepts must encode back to the same bytes.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tier/tier_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Random bytes almost never carry a right length and checksum: fix both so
 * that the fields behind them are reached too.
 */
static void
reframe(unsigned char *b, size_t size)
{
	uint32_t crc;

	if (size < 16)
		return;
	b[8] = (unsigned char)(size >> 24);
	b[9] = (unsigned char)(size >> 16);
	b[10] = (unsigned char)(size >> 8);
	b[11] = (unsigned char)size;
	crc = tier_crc32(b, size - 4);
	b[size - 4] = (unsigned char)(crc >> 24);
	b[size - 3] = (unsigned char)(crc >> 16);
	b[size - 2] = (unsigned char)(crc >> 8);
	b[size - 1] = (unsigned char)crc;
}

static void
one(unsigned char *copy, size_t size)
{
	struct tier_value v;
	struct tier_value v2;
	enum tier_value_err e;
	size_t len, len2, hdr;
	char *again, *again2;

	e = tier_value_decode(copy, size, NULL, &v);
	if (e == TV_OK) {
		if (v.origin == NULL)
			abort();
		again = tier_value_encode(&v, &len);
		/*
		 * The header this build writes: 56 bytes, the provenance
		 * fields (36 and the validators), the cause (1) and the
		 * history (1 and 35 per version). Only
		 * another header length (an older writer's, or a newer minor
		 * revision's) may differ, and what this build writes reads
		 * back to the same bytes.
		 */
		hdr = 56 + 36 + 1 + 1 + 35 * v.nhist +
		      (v.etag != NULL ? strlen(v.etag) : 0) +
		      (v.last_modified != NULL ? strlen(v.last_modified) : 0);
		if (again == NULL ||
		    ((size_t)(copy[6] << 8 | copy[7]) == hdr &&
		        (len != size || memcmp(again, copy, size) != 0)))
			abort();
		if (tier_value_decode(again, len, NULL, &v2) != TV_OK)
			abort();
		again2 = tier_value_encode(&v2, &len2);
		if (again2 == NULL || len2 != len ||
		    memcmp(again, again2, len) != 0)
			abort();
		tier_value_clear(&v2);
		free(again2);
		free(again);
	} else if (v.origin != NULL || tier_value_strerror(e) == NULL)
		abort();
	tier_value_clear(&v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that a read past the end is caught. */
	unsigned char *copy = malloc(size > 0 ? size : 1);

	if (copy == NULL)
		return 0;
	if (size > 0)
		memcpy(copy, data, size);
	one(copy, size);
	reframe(copy, size);
	one(copy, size);
	free(copy);
	return 0;
}
