/*
 * fuzz_payload.c: libFuzzer target for the WARC payload decoder of
 * robotsctl recheck (src/robotsctl/ctl_payload.c): chunks joined, gzip and
 * deflate inflated, the output capped. The first input byte chooses how
 * the rest was sent: with its high bit set, the rest begins with header
 * lines up to an empty line, read by ctl_payload_header as a record's are;
 * else bit 0 is chunked and bits 1-2 the coding (3: an unknown one). The
 * second byte chooses the cap. Whatever the input, a decoding that
 * succeeds stays within its cap, an unknown coding is refused, a plain
 * payload comes back as it was (cut), one not cut is all there is, and
 * (but for deflate, read raw should zlib's wrapper fail further on) a
 * smaller cap gives a prefix of what a larger one gives.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/buf.h"
#include "ctl_payload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIG_CAP (1u << 20)

/* Read header lines from *p up to an empty line into pl; skip them. */
static void
headers(const char **p, size_t *len, struct ctl_payload *pl)
{
	const char *end = *p + *len, *nl;
	size_t n;

	while (
	    *p < end && (nl = memchr(*p, '\n', (size_t)(end - *p))) != NULL) {
		n = (size_t)(nl - *p);
		if (n > 0 && (*p)[n - 1] == '\r')
			n--;
		ctl_payload_header(*p, n, pl);
		*p = nl + 1;
		if (n == 0)
			break;
	}
	*len = (size_t)(end - *p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_payload pl = { 0, 0, 0 };
	struct buf small = BUF_INIT(0), big = BUF_INIT(0);
	const char *p = (const char *)data + 2;
	size_t len, cap;
	int rs, rb;

	if (size < 2)
		return 0;
	len = size - 2;
	cap = (size_t)data[1] * 16;
	if (data[0] & 0x80)
		headers(&p, &len, &pl);
	else {
		pl.chunked = data[0] & 1;
		pl.coding = (data[0] >> 1) & 3;
		if (pl.coding == 3) {
			pl.coding = CTL_CODING_IDENTITY;
			pl.unknown = 1;
		}
	}
	rs = ctl_payload_decode(p, len, &pl, cap, &small);
	rb = ctl_payload_decode(p, len, &pl, BIG_CAP, &big);
	if ((rs == 0 && small.len > cap) || (rb == 0 && big.len > BIG_CAP))
		abort();
	if (pl.unknown && (rs != -1 || rb != -1))
		abort();
	if (!pl.unknown && !pl.chunked && pl.coding == CTL_CODING_IDENTITY &&
	    (rs != 0 || small.len != (len < cap ? len : cap) ||
	        (len > 0 && memcmp(small.p, p, small.len) != 0)))
		abort();
	if (rs == 0 && rb == 0 && small.len < cap && small.len != big.len &&
	    len < BIG_CAP)
		abort(); /* not cut, yet not all of it */
	/* deflate may be read raw once zlib's wrapper fails further on */
	if (rs == 0 && rb == 0 && pl.coding != CTL_CODING_DEFLATE &&
	    (small.len > big.len ||
	        (small.len > 0 && memcmp(small.p, big.p, small.len) != 0)))
		abort();
	buf_clear(&small);
	buf_clear(&big);
	return 0;
}
