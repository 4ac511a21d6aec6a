/*
 * check_ctl_payload.c: payloads as other crawlers' WARC records keep them
 * (ctl_payload.c): Transfer-Encoding and Content-Encoding headers read as
 * RFC 9112 section 6.1 and RFC 9110 section 8.4 list them, chunks joined
 * (inputs written by hand from RFC 9112 section 7.1), gzip and deflate
 * inflated (streams made here by zlib's own encoder), the output cut at
 * its cap, and every malformed payload refused.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <zlib.h>

#include "wire/buf.h"
#include "ctl_payload.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define BODY "User-agent: *\nDisallow: /private\n"

static const struct {
	const char *line;
	int chunked, coding, unknown;
} headers[] = {
	{ "Transfer-Encoding: chunked", 1, 0, 0 },
	{ "transfer-encoding:CHUNKED ", 1, 0, 0 },
	{ "Transfer-Encoding: identity, chunked", 1, 0, 0 },
	{ "Transfer-Encoding: gzip, chunked", 1, 0, 1 },
	{ "Transfer-Encoding: chunked, gzip", 1, 0, 1 }, /* not last */
	{ "Content-Encoding: gzip", 0, CTL_CODING_GZIP, 0 },
	{ "Content-Encoding: x-gzip", 0, CTL_CODING_GZIP, 0 },
	{ "content-encoding: Deflate", 0, CTL_CODING_DEFLATE, 0 },
	{ "Content-Encoding: identity", 0, 0, 0 },
	{ "Content-Encoding: br", 0, 0, 1 },
	{ "Content-Encoding: gzip, deflate", 0, CTL_CODING_DEFLATE, 1 },
	{ "Content-Type: text/plain", 0, 0, 0 },
	{ "X-Crawler-Content-Encoding: gzip", 0, 0, 0 }, /* robotsd's rename */
};

START_TEST(header_lines)
{
	struct ctl_payload pl = { 0 };

	ctl_payload_header(headers[_i].line, strlen(headers[_i].line), &pl);
	ck_assert_msg(pl.chunked == headers[_i].chunked &&
	                  pl.coding == headers[_i].coding &&
	                  pl.unknown == headers[_i].unknown,
	    "%s: %d %d %d", headers[_i].line, pl.chunked, pl.coding,
	    pl.unknown);
}
END_TEST

static const struct {
	const char *what, *in;
	const char *want; /* NULL: refused */
} chunks[] = {
	{ "two chunks",
	    "7\r\nUser-ag\r\n1a\r\nent: *\nDisallow: /private\n\r\n"
	    "0\r\n\r\n",
	    BODY },
	{ "extensions and trailers",
	    "21;name=v\r\n" BODY "\r\n0\r\n"
	    "Expires: never\r\n\r\n",
	    BODY },
	{ "bare LF", "21\n" BODY "\n0\n\n", BODY },
	{ "upper-case hex", "A\r\n0123456789\r\n0\r\n\r\n", "0123456789" },
	{ "empty", "0\r\n\r\n", "" },
	{ "no last chunk", "21\r\n" BODY "\r\n", NULL },
	{ "a size past the end", "40\r\n" BODY "\r\n0\r\n\r\n", NULL },
	{ "a size not hex", "2g\r\n" BODY "\r\n0\r\n\r\n", NULL },
	{ "no size", "\r\n" BODY "\r\n0\r\n\r\n", NULL },
	{ "data longer than its size", "20\r\n" BODY "\r\n0\r\n\r\n", NULL },
	{ "a huge size", "ffffffffffffffff\r\nx\r\n0\r\n\r\n", NULL },
};

START_TEST(chunked)
{
	struct ctl_payload pl = { .chunked = 1 };
	struct buf out = BUF_INIT(0);
	int rc = ctl_payload_decode(
	    chunks[_i].in, strlen(chunks[_i].in), &pl, 1 << 20, &out);

	if (chunks[_i].want == NULL)
		ck_assert_msg(rc == -1, "%s", chunks[_i].what);
	else {
		ck_assert_msg(rc == 0, "%s", chunks[_i].what);
		ck_assert_uint_eq(out.len, strlen(chunks[_i].want));
		ck_assert(memcmp(out.p != NULL ? out.p : "", chunks[_i].want,
		              out.len) == 0);
	}
	buf_clear(&out);
}
END_TEST

/* in[0..len) compressed by zlib (wbits as deflateInit2 takes) into out. */
static size_t
zip(const void *in, size_t len, int wbits, unsigned char *out, size_t max)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(
	    deflateInit2(&z, 9, Z_DEFLATED, wbits, 9, Z_DEFAULT_STRATEGY),
	    Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)max;
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return max - z.avail_out;
}

/* gzip, zlib-wrapped and raw deflate; each cut short is refused. */
START_TEST(codings)
{
	static const struct {
		int coding, wbits;
	} rows[] = { { CTL_CODING_GZIP, 15 + 16 }, { CTL_CODING_DEFLATE, 15 },
		{ CTL_CODING_DEFLATE, -15 } };
	unsigned char z[256];
	struct ctl_payload pl = { .coding = rows[_i].coding };
	struct buf out = BUF_INIT(0);
	size_t n = zip(BODY, sizeof(BODY) - 1, rows[_i].wbits, z, sizeof(z));

	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n, &pl, 1 << 20, &out), 0);
	ck_assert_uint_eq(out.len, sizeof(BODY) - 1);
	ck_assert(memcmp(out.p, BODY, out.len) == 0);
	buf_reset(&out);
	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n - 5, &pl, 1 << 20, &out), -1);
	buf_reset(&out);
	ck_assert_int_eq(
	    ctl_payload_decode(BODY, sizeof(BODY) - 1, &pl, 1 << 20, &out),
	    -1); /* not compressed at all */
	buf_clear(&out);
}
END_TEST

/*
 * Bytes after the end of the stream: a second gzip member (RFC 1952
 * section 2.2 allows it; curl, and so robotsd's fetch, refuses it) or
 * anything else is malformed, not a body of the first member alone.
 */
START_TEST(bytes_after_the_stream)
{
	struct ctl_payload pl = { .coding = CTL_CODING_GZIP };
	struct buf out = BUF_INIT(0);
	unsigned char z[512];
	size_t n = zip(BODY, sizeof(BODY) - 1, 15 + 16, z, sizeof(z) / 2);

	n += zip(BODY, sizeof(BODY) - 1, 15 + 16, z + n, sizeof(z) - n);
	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n, &pl, 1 << 20, &out), -1);
	buf_reset(&out);
	n = zip(BODY, sizeof(BODY) - 1, 15, z, sizeof(z) - 1);
	z[n] = '\n';
	pl.coding = CTL_CODING_DEFLATE;
	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n + 1, &pl, 1 << 20, &out), -1);
	buf_reset(&out);
	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n, &pl, 1 << 20, &out), 0);
	buf_clear(&out);
}
END_TEST

/*
 * A gzip body sent in chunks (as crawlers keep it when they store the
 * bytes on the wire), and a bomb: 8 MiB of zeros inflate to max only.
 */
START_TEST(gzip_in_chunks_and_a_bomb)
{
	static unsigned char zeros[8 << 20], z[65536];
	char wire[300];
	struct ctl_payload pl = { .chunked = 1, .coding = CTL_CODING_GZIP };
	struct buf out = BUF_INIT(0);
	size_t n = zip(BODY, sizeof(BODY) - 1, 15 + 16, z, sizeof(z)), w;

	w = (size_t)snprintf(wire, sizeof(wire), "%zx\r\n", n - 10);
	memcpy(wire + w, z, n - 10);
	w += n - 10;
	w += (size_t)snprintf(wire + w, sizeof(wire) - w, "\r\na\r\n");
	memcpy(wire + w, z + n - 10, 10);
	w += 10;
	memcpy(wire + w, "\r\n0\r\n\r\n", 7);
	ck_assert_int_eq(
	    ctl_payload_decode(wire, w + 7, &pl, 1 << 20, &out), 0);
	ck_assert_uint_eq(out.len, sizeof(BODY) - 1);
	ck_assert(memcmp(out.p, BODY, out.len) == 0);
	buf_reset(&out);
	pl.chunked = 0;
	n = zip(zeros, sizeof(zeros), 15 + 16, z, sizeof(z));
	ck_assert_int_eq(
	    ctl_payload_decode((char *)z, n, &pl, 512000, &out), 0);
	ck_assert_uint_eq(out.len, 512000);
	buf_clear(&out);
}
END_TEST

/* Plain bytes are cut at max; an unknown coding is refused. */
START_TEST(plain_and_unknown)
{
	struct ctl_payload pl = { 0 };
	struct buf out = BUF_INIT(0);

	ck_assert_int_eq(
	    ctl_payload_decode(BODY, sizeof(BODY) - 1, &pl, 4, &out), 0);
	ck_assert_uint_eq(out.len, 4);
	buf_reset(&out);
	pl.unknown = 1;
	ck_assert_int_eq(
	    ctl_payload_decode(BODY, sizeof(BODY) - 1, &pl, 1 << 20, &out), -1);
	buf_clear(&out);
}
END_TEST

static Suite *
ctl_payload_suite(void)
{
	Suite *s = suite_create("ctl_payload");
	TCase *tc = tcase_create("payload");

	tcase_add_loop_test(tc, header_lines, 0, NROWS(headers));
	tcase_add_loop_test(tc, chunked, 0, NROWS(chunks));
	tcase_add_loop_test(tc, codings, 0, 3);
	tcase_add_test(tc, gzip_in_chunks_and_a_bomb);
	tcase_add_test(tc, bytes_after_the_stream);
	tcase_add_test(tc, plain_and_unknown);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(ctl_payload_suite, NULL, NULL);
