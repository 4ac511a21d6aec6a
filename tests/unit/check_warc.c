/*
 * check_warc.c: the WARC 1.1 records of warc.c, byte for byte against
 * records written out by hand from ISO 28500 (WARC 1.1), with digests
 * computed independently (Python hashlib and base64.b32encode): a plain
 * 200, received encodings renamed, a body cut at the cap, an empty 404, a
 * tdmrep.json naming its resource, the warcinfo record; ids, dates, and
 * one gzip member per record.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <zlib.h>

#include "persist/warc.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define ID1 "<urn:uuid:00010203-0405-4607-8809-0a0b0c0d0e0f>"
#define ID2 "<urn:uuid:11111111-2222-4333-8444-555555555555>"
#define T0 1795000000.0 /* 2026-11-18T11:06:40Z */

struct row {
	const char *name;
	struct warc_response r;
	const char *want; /* the record, uncompressed */
};

static const struct row rows[] = {
	{ "plain 200, every optional field",
	    { ID1, ID2, T0, "https://example.com/robots.txt",
	        "https://example.com", "192.0.2.7", "0123456789abcdef",
	        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	        "Content-Length: 26\r\n\r\n",
	        65, "User-agent: *\nDisallow: /\n", 26, 0, NULL },
	    "WARC/1.1\r\n"
	    "WARC-Type: response\r\n"
	    "WARC-Record-ID: " ID1 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Target-URI: https://example.com/robots.txt\r\n"
	    "WARC-Warcinfo-ID: " ID2 "\r\n"
	    "WARC-IP-Address: 192.0.2.7\r\n"
	    "WARC-Robotsd-Origin: https://example.com\r\n"
	    "WARC-Robotsd-Version: 0123456789abcdef\r\n"
	    "WARC-Payload-Digest: "
	    "sha256:GMPKSCINWDE7N5MXXWMEB7K3C4MDB5XAWO5BZMSN7KI7BSK25XAQ===="
	    "\r\n"
	    "WARC-Block-Digest: "
	    "sha256:GITHWUIYRGHFIYW6MU4S5S4I423QU6HG6WXYL5WU75SCNU7LSFQQ===="
	    "\r\n"
	    "Content-Type: application/http;msgtype=response\r\n"
	    "Content-Length: 91\r\n"
	    "\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 26\r\n\r\n"
	    "User-agent: *\nDisallow: /\n"
	    "\r\n\r\n" },
	{ "decoded body: encodings and a wrong length renamed, LF ends",
	    { ID1, NULL, T0, "https://example.org/robots.txt", NULL, NULL, NULL,
	        "HTTP/1.1 200 OK\nContent-Encoding: gzip\n"
	        "Content-Length: 40\ntransfer-encoding: chunked\n\n",
	        86, "User-agent: *\nAllow: /\n", 23, 0, NULL },
	    "WARC/1.1\r\n"
	    "WARC-Type: response\r\n"
	    "WARC-Record-ID: " ID1 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Target-URI: https://example.org/robots.txt\r\n"
	    "WARC-Payload-Digest: "
	    "sha256:C3HLL3R6BXATVKNN6MND5O7ELIOZMW4MFOPXF2XYJZMRDYKA5WKQ===="
	    "\r\n"
	    "WARC-Block-Digest: "
	    "sha256:ENURYPVTAHZCPS6SNFI2BGUBGR3GQ6HJHW6AZVBWOK6RRPZYDZ4Q===="
	    "\r\n"
	    "Content-Type: application/http;msgtype=response\r\n"
	    "Content-Length: 164\r\n"
	    "\r\n"
	    "HTTP/1.1 200 OK\r\n"
	    "X-Crawler-Content-Encoding: gzip\r\n"
	    "X-Crawler-Content-Length: 40\r\n"
	    "X-Crawler-transfer-encoding: chunked\r\n"
	    "Content-Length: 23\r\n"
	    "\r\n"
	    "User-agent: *\nAllow: /\n"
	    "\r\n\r\n" },
	{ "body cut at the cap",
	    { ID1, NULL, T0, "http://example.net/robots.txt", NULL, NULL, NULL,
	        "HTTP/1.0 200 OK\r\nContent-Length: 600000\r\n", 41, "abc", 3,
	        1, NULL },
	    "WARC/1.1\r\n"
	    "WARC-Type: response\r\n"
	    "WARC-Record-ID: " ID1 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Target-URI: http://example.net/robots.txt\r\n"
	    "WARC-Truncated: length\r\n"
	    "WARC-Payload-Digest: "
	    "sha256:XJ4BNP4PAHH6UQKBIDPF3LRCEOYAGYNDSYLXVHFUCD7WD4QACWWQ===="
	    "\r\n"
	    "WARC-Block-Digest: "
	    "sha256:WAMDOUUAT3OGRV64QOU7SUTE3MQ42FV4NU7QJHLKIS5OV6A7DJFQ===="
	    "\r\n"
	    "Content-Type: application/http;msgtype=response\r\n"
	    "Content-Length: 75\r\n"
	    "\r\n"
	    "HTTP/1.0 200 OK\r\n"
	    "X-Crawler-Content-Length: 600000\r\n"
	    "Content-Length: 3\r\n"
	    "\r\n"
	    "abc"
	    "\r\n\r\n" },
	{ "empty 404",
	    { ID1, NULL, T0, "https://example.com/robots.txt", NULL, NULL, NULL,
	        "HTTP/1.1 404 Not Found\r\n\r\n", 26, NULL, 0, 0, NULL },
	    "WARC/1.1\r\n"
	    "WARC-Type: response\r\n"
	    "WARC-Record-ID: " ID1 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Target-URI: https://example.com/robots.txt\r\n"
	    "WARC-Payload-Digest: "
	    "sha256:4OYMIQUY7QOBJGX36TEJS35ZEQT24QPEMSNZGTFESWMRW6CSXBKQ===="
	    "\r\n"
	    "WARC-Block-Digest: "
	    "sha256:OFXCND35QP5WD7QWZZY7U5IPOOE5QD7YQ6EDQFYVQ2URZ5CBFEVA===="
	    "\r\n"
	    "Content-Type: application/http;msgtype=response\r\n"
	    "Content-Length: 26\r\n"
	    "\r\n"
	    "HTTP/1.1 404 Not Found\r\n\r\n"
	    "\r\n\r\n" },
	{ "a tdmrep.json: its resource named after the version",
	    { ID1, ID2, T0, "https://example.com/.well-known/tdmrep.json",
	        "https://example.com", "192.0.2.7", "0123456789abcdef",
	        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	        "Content-Length: 38\r\n\r\n",
	        71, "[{\"location\":\"/\",\"tdm-reservation\":1}]", 38, 0,
	        "tdmrep" },
	    "WARC/1.1\r\n"
	    "WARC-Type: response\r\n"
	    "WARC-Record-ID: " ID1 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Target-URI: https://example.com/.well-known/tdmrep.json\r\n"
	    "WARC-Warcinfo-ID: " ID2 "\r\n"
	    "WARC-IP-Address: 192.0.2.7\r\n"
	    "WARC-Robotsd-Origin: https://example.com\r\n"
	    "WARC-Robotsd-Version: 0123456789abcdef\r\n"
	    "WARC-Robotsd-Resource: tdmrep\r\n"
	    "WARC-Payload-Digest: "
	    "sha256:5ZP3YMEC74AINUSATFJQTU7GFQBKOY5SDWXM4X3KAWUEP6LGQQTA===="
	    "\r\n"
	    "WARC-Block-Digest: "
	    "sha256:KRDU4NRZFVPEQMSTMLFAIKI57LSIPTP26AQFXCSR6FYVDLH453VQ===="
	    "\r\n"
	    "Content-Type: application/http;msgtype=response\r\n"
	    "Content-Length: 109\r\n"
	    "\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 38\r\n\r\n"
	    "[{\"location\":\"/\",\"tdm-reservation\":1}]"
	    "\r\n\r\n" },
};

START_TEST(test_response_record)
{
	const struct row *row = &rows[_i];
	struct buf b = BUF_INIT(0);

	ck_assert_msg(warc_response(&b, &row->r) == 0, "%s", row->name);
	ck_assert_uint_eq(b.len, strlen(row->want));
	ck_assert_msg(memcmp(b.p, row->want, b.len) == 0, "%s:\n%.*s",
	    row->name, (int)b.len, b.p);
	buf_clear(&b);
}
END_TEST

START_TEST(test_warcinfo_record)
{
	static const char want[] =
	    "WARC/1.1\r\n"
	    "WARC-Type: warcinfo\r\n"
	    "WARC-Record-ID: " ID2 "\r\n"
	    "WARC-Date: 2026-11-18T11:06:40Z\r\n"
	    "WARC-Filename: robotsd-20261118110640-00001.warc.gz\r\n"
	    "WARC-Block-Digest: "
	    "sha256:GHGTD6CQFCDEMGBTRDWHRL3YFS66HWKBYEVCQAYPKFZVRDTXIX5A===="
	    "\r\n"
	    "Content-Type: application/warc-fields\r\n"
	    "Content-Length: 281\r\n"
	    "\r\n"
	    "software: robotsd/0.1.0\r\n"
	    "format: WARC File Format 1.1\r\n"
	    "conformsTo: https://iipc.github.io/warc-specifications/"
	    "specifications/warc-format/warc-1.1/\r\n"
	    "description: robots.txt and tdmrep.json responses, one record "
	    "per new version of an origin's robots.txt or "
	    "/.well-known/tdmrep.json\r\n"
	    "\r\n\r\n";
	struct buf b = BUF_INIT(0);

	ck_assert_int_eq(
	    warc_warcinfo(&b, ID2, T0, "robotsd-20261118110640-00001.warc.gz",
	        "robotsd/0.1.0"),
	    0);
	ck_assert_uint_eq(b.len, sizeof(want) - 1);
	ck_assert_msg(memcmp(b.p, want, b.len) == 0, "%.*s", (int)b.len, b.p);
	buf_clear(&b);
}
END_TEST

/* What no record may be written from: nothing is appended. */
START_TEST(test_refused_inputs)
{
	struct warc_response r = rows[0].r;
	struct buf b = BUF_INIT(0);

	r.target_uri = "https://example.com/robots.txt\r\nWARC-Type: x";
	ck_assert_int_eq(warc_response(&b, &r), -1);
	r = rows[0].r;
	r.version = "01234567\n";
	ck_assert_int_eq(warc_response(&b, &r), -1);
	r = rows[0].r;
	r.resource = "tdmrep\r\nWARC-Type: x";
	ck_assert_int_eq(warc_response(&b, &r), -1);
	r = rows[0].r;
	r.http_head = "Content-Type: text/plain\r\n";
	r.http_head_len = strlen(r.http_head);
	ck_assert_int_eq(warc_response(&b, &r), -1);
	r = rows[0].r;
	r.http_head = NULL;
	r.http_head_len = 0;
	ck_assert_int_eq(warc_response(&b, &r), -1);
	ck_assert_int_eq(warc_warcinfo(&b, ID1, T0, "a\tb", "robotsd/1"), -1);
	ck_assert_uint_eq(b.len, 0);
	buf_clear(&b);
}
END_TEST

START_TEST(test_ids_dates_digests)
{
	unsigned char rnd[16], ff[16];
	char id[WARC_ID_SIZE], id2[WARC_ID_SIZE], d[WARC_DATE_SIZE];
	char dg[WARC_DIGEST_SIZE];
	int i;

	for (i = 0; i < 16; i++)
		rnd[i] = (unsigned char)i;
	memset(ff, 0xff, sizeof(ff));
	warc_uuid(id, rnd);
	ck_assert_str_eq(id, ID1);
	warc_uuid(id, ff);
	ck_assert_str_eq(id, "<urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff>");
	ck_assert_int_eq(warc_random_id(id), 0);
	ck_assert_int_eq(warc_random_id(id2), 0);
	ck_assert_uint_eq(strlen(id), 47);
	ck_assert_int_eq(id[24], '4'); /* version 4 */
	ck_assert_str_ne(id, id2);
	warc_date(d, 0);
	ck_assert_str_eq(d, "1970-01-01T00:00:00Z");
	warc_date(d, T0 + 0.9);
	ck_assert_str_eq(d, "2026-11-18T11:06:40Z");
	warc_digest(dg, "", 0);
	ck_assert_str_eq(dg,
	    "sha256:4OYMIQUY7QOBJGX36TEJS35ZEQT24QPEMSNZGTFESWMRW6CSXBKQ====");
}
END_TEST

/* Two records gzipped one by one read back as two whole gzip members. */
START_TEST(test_gzip_one_member_per_record)
{
	struct buf gz = BUF_INIT(0);
	const char *a = rows[0].want, *c = rows[1].want;
	size_t alen = strlen(a), clen = strlen(c), first;
	char out[1024];
	z_stream z;

	ck_assert_int_eq(warc_gzip(&gz, a, alen), 0);
	first = gz.len;
	ck_assert_int_eq(warc_gzip(&gz, c, clen), 0);
	ck_assert_int_eq((unsigned char)gz.p[0], 0x1f);
	ck_assert_int_eq((unsigned char)gz.p[1], 0x8b);
	ck_assert_int_eq((unsigned char)gz.p[first], 0x1f);
	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)gz.p;
	z.avail_in = (uInt)gz.len;
	z.next_out = (unsigned char *)out;
	z.avail_out = sizeof(out);
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(z.total_in, first); /* the first member ends here */
	ck_assert_uint_eq(z.total_out, alen);
	ck_assert(memcmp(out, a, alen) == 0);
	ck_assert_int_eq(inflateReset(&z), Z_OK);
	z.next_out = (unsigned char *)out;
	z.avail_out = sizeof(out);
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(z.avail_in, 0);
	ck_assert_uint_eq(z.total_out, clen);
	ck_assert(memcmp(out, c, clen) == 0);
	inflateEnd(&z);
	buf_clear(&gz);
}
END_TEST

/* The warc suite. */
static Suite *
warc_suite(void)
{
	Suite *s = suite_create("warc");
	TCase *tc = tcase_create("records");

	tcase_add_loop_test(tc, test_response_record, 0, NROWS(rows));
	tcase_add_test(tc, test_warcinfo_record);
	tcase_add_test(tc, test_refused_inputs);
	tcase_add_test(tc, test_ids_dates_digests);
	tcase_add_test(tc, test_gzip_one_member_per_record);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(warc_suite, NULL, NULL);
