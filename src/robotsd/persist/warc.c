/*
 * warc.c: WARC 1.1 warcinfo and response records (warc.h). Digests are
 * SHA-256 (OpenSSL libcrypto) in base32, the form warcio and Common Crawl
 * write; record ids are random version 4 UUIDs (getrandom()). robotsd's
 * fetcher asks for gzip and deflate and keeps the decoded body, so a
 * response record never claims an encoding its block does not have: the
 * received Content-Encoding and Transfer-Encoding are renamed
 * X-Crawler-Content-Encoding and X-Crawler-Transfer-Encoding, and a
 * Content-Length that is not the kept body's length is renamed
 * X-Crawler-Content-Length and followed by the true one (the practice of
 * Common Crawl and StormCrawler). A body cut at the cap is marked
 * "WARC-Truncated: length".
 */
#include <config.h>

#include <sys/random.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "persist/warc.h"

#define CRLF "\r\n"

/* RFC 4648 base32 of n bytes, padded to a multiple of 8 characters. */
static void
warc_base32(char *out, const unsigned char *in, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	unsigned long acc = 0;
	size_t i, o = 0;
	int bits = 0;

	for (i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = abc[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[o++] = abc[(acc << (5 - bits)) & 31];
	while (o % 8 != 0)
		out[o++] = '=';
	out[o] = '\0';
}

void
warc_digest(char out[WARC_DIGEST_SIZE], const void *p, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	memcpy(out, "sha256:", 7);
	if (EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		out[7] = '\0'; /* only when libcrypto is broken */
		return;
	}
	warc_base32(out + 7, md, mdlen);
}

void
warc_date(char out[WARC_DATE_SIZE], double t)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL ||
	    strftime(out, WARC_DATE_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, WARC_DATE_SIZE, "1970-01-01T00:00:00Z");
}

void
warc_uuid(char out[WARC_ID_SIZE], const unsigned char rnd[16])
{
	unsigned char u[16];

	memcpy(u, rnd, sizeof(u));
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, WARC_ID_SIZE,
	    "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x>",
	    u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
	    u[11], u[12], u[13], u[14], u[15]);
}

int
warc_random_id(char out[WARC_ID_SIZE])
{
	unsigned char rnd[16];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	warc_uuid(out, rnd);
	return 0;
}

/* 1 when s (NULL: fine) has a control byte, which a header cannot hold. */
static int
warc_bad_value(const char *s)
{
	if (s == NULL)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* Append "Name: value\r\n" (value NULL: nothing). */
static void
warc_field(struct buf *b, const char *name, const char *value)
{
	if (value == NULL)
		return;
	buf_add(b, name, strlen(name));
	buf_lit(b, ": ");
	buf_add(b, value, strlen(value));
	buf_lit(b, CRLF);
}

/* Append the record: version line, fields, Content-Length, block, end. */
static int
warc_finish(struct buf *b, const struct buf *fields, const char *type,
    const struct buf *block)
{
	char n[32];

	buf_lit(b, "WARC/1.1" CRLF);
	warc_field(b, "WARC-Type", type);
	buf_add(b, fields->p, fields->len);
	warc_field(b, "Content-Type",
	    strcmp(type, "warcinfo") == 0
	        ? "application/warc-fields"
	        : "application/http;msgtype=response");
	snprintf(n, sizeof(n), "%zu", block->len);
	warc_field(b, "Content-Length", n);
	buf_lit(b, CRLF);
	buf_add(b, block->p, block->len);
	buf_lit(b, CRLF CRLF);
	return b->state == BUF_OK ? 0 : -1;
}

/* 1 when line (len bytes) is header name: any value. */
static int
warc_is_header(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/* The value of a header line, blanks trimmed, into v (size vsz). */
static void
warc_header_value(const char *line, size_t len, char *v, size_t vsz)
{
	const char *p = memchr(line, ':', len), *end = line + len;
	size_t n;

	p = p == NULL ? end : p + 1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - p) < vsz - 1 ? (size_t)(end - p) : vsz - 1;
	memcpy(v, p, n);
	v[n] = '\0';
}

/*
 * Append one received header line (without its line end) to the block,
 * renamed when the kept body no longer has what it says (see the top).
 * Sets *length_renamed when a Content-Length was renamed.
 */
static void
warc_head_line(struct buf *b, const char *line, size_t len, size_t body_len,
    int *length_renamed)
{
	char v[64], n[32];

	if (warc_is_header(line, len, "Content-Encoding")) {
		warc_header_value(line, len, v, sizeof(v));
		if (strcasecmp(v, "identity") != 0)
			buf_lit(b, "X-Crawler-");
	} else if (warc_is_header(line, len, "Transfer-Encoding")) {
		buf_lit(b, "X-Crawler-");
	} else if (warc_is_header(line, len, "Content-Length")) {
		warc_header_value(line, len, v, sizeof(v));
		snprintf(n, sizeof(n), "%zu", body_len);
		if (strcmp(v, n) != 0) {
			buf_lit(b, "X-Crawler-");
			*length_renamed = 1;
		}
	}
	buf_add(b, line, len);
	buf_lit(b, CRLF);
}

/*
 * The HTTP part of the block: the head's lines with CRLF ends (empty lines
 * skipped), the true Content-Length if the received one was renamed, CRLF.
 * -1 when the head does not start with an HTTP status line.
 */
static int
warc_http_head(struct buf *b, const struct warc_response *r)
{
	const char *p = r->http_head, *end, *nl;
	size_t len;
	int first = 1, renamed = 0;
	char n[32];

	if (p == NULL || r->http_head_len < 5 || strncmp(p, "HTTP/", 5) != 0)
		return -1;
	end = p + r->http_head_len;
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		len = (size_t)(nl - p);
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (first) {
			buf_add(b, p, len);
			buf_lit(b, CRLF);
			first = 0;
		} else
			warc_head_line(b, p, len, r->body_len, &renamed);
	}
	if (renamed) {
		snprintf(n, sizeof(n), "%zu", r->body_len);
		warc_field(b, "Content-Length", n);
	}
	buf_lit(b, CRLF);
	return 0;
}

int
warc_response(struct buf *out, const struct warc_response *r)
{
	struct buf block = BUF_INIT(0), f = BUF_INIT(0);
	char date[WARC_DATE_SIZE], pd[WARC_DIGEST_SIZE], bd[WARC_DIGEST_SIZE];
	int rc = -1;

	if (warc_bad_value(r->record_id) || warc_bad_value(r->warcinfo_id) ||
	    warc_bad_value(r->target_uri) || warc_bad_value(r->origin) ||
	    warc_bad_value(r->ip) || warc_bad_value(r->version) ||
	    warc_bad_value(r->resource) || r->record_id == NULL ||
	    r->target_uri == NULL)
		return -1;
	if (warc_http_head(&block, r) == -1)
		goto out;
	if (r->body_len > 0)
		buf_add(&block, r->body, r->body_len);
	if (block.state != BUF_OK)
		goto out;
	warc_date(date, r->date);
	warc_digest(pd, r->body, r->body_len);
	warc_digest(bd, block.p, block.len);
	warc_field(&f, "WARC-Record-ID", r->record_id);
	warc_field(&f, "WARC-Date", date);
	warc_field(&f, "WARC-Target-URI", r->target_uri);
	warc_field(&f, "WARC-Warcinfo-ID", r->warcinfo_id);
	warc_field(&f, "WARC-IP-Address", r->ip);
	warc_field(&f, "WARC-Robotsd-Origin", r->origin);
	warc_field(&f, "WARC-Robotsd-Version", r->version);
	warc_field(&f, "WARC-Robotsd-Resource", r->resource);
	if (r->truncated)
		warc_field(&f, "WARC-Truncated", "length");
	warc_field(&f, "WARC-Payload-Digest", pd);
	warc_field(&f, "WARC-Block-Digest", bd);
	if (f.state == BUF_OK)
		rc = warc_finish(out, &f, "response", &block);
out:
	buf_clear(&block);
	buf_clear(&f);
	return rc;
}

int
warc_warcinfo(struct buf *out, const char *record_id, double date,
    const char *filename, const char *software)
{
	struct buf block = BUF_INIT(0), f = BUF_INIT(0);
	char d[WARC_DATE_SIZE], bd[WARC_DIGEST_SIZE];
	int rc = -1;

	if (record_id == NULL || warc_bad_value(record_id) ||
	    warc_bad_value(filename) || warc_bad_value(software))
		return -1;
	warc_field(&block, "software", software);
	warc_field(&block, "format", "WARC File Format 1.1");
	warc_field(&block, "conformsTo",
	    "https://iipc.github.io/warc-specifications/specifications/"
	    "warc-format/warc-1.1/");
	warc_field(&block, "description",
	    "robots.txt and tdmrep.json responses, one record per new version "
	    "of an origin's robots.txt or /.well-known/tdmrep.json");
	warc_date(d, date);
	warc_digest(bd, block.p, block.len);
	warc_field(&f, "WARC-Record-ID", record_id);
	warc_field(&f, "WARC-Date", d);
	warc_field(&f, "WARC-Filename", filename);
	warc_field(&f, "WARC-Block-Digest", bd);
	if (block.state == BUF_OK && f.state == BUF_OK)
		rc = warc_finish(out, &f, "warcinfo", &block);
	buf_clear(&block);
	buf_clear(&f);
	return rc;
}

int
warc_gzip(struct buf *out, const void *p, size_t len)
{
	z_stream z;
	size_t room;
	int rc;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper (no file name, mtime 0) */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	z.next_in = (unsigned char *)(uintptr_t)p;
	z.avail_in = (uInt)len;
	do {
		room = buf_reserve(out, deflateBound(&z, (uLong)len) + 64);
		if (room == 0) {
			deflateEnd(&z);
			return -1;
		}
		z.next_out = (unsigned char *)out->p + out->len;
		z.avail_out = (uInt)(room > 1u << 30 ? 1u << 30 : room);
		rc = deflate(&z, Z_FINISH);
		out->len = (size_t)((char *)z.next_out - out->p);
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}
