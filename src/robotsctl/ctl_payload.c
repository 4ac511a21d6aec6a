/*
 * ctl_payload.c: an HTTP payload from a WARC record, decoded
 * (ctl_payload.h): chunks joined first, then the content coding inflated,
 * with the output bounded whatever the input says (a gzip bomb stops at
 * max bytes).
 */
#include <config.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "wire/buf.h"
#include "ctl_payload.h"

/* 1 when tok (n bytes) is word, case aside. */
static int
token_is(const char *tok, size_t n, const char *word)
{
	return n == strlen(word) && strncasecmp(tok, word, n) == 0;
}

/*
 * Each token of the comma-separated list v (len bytes), blanks trimmed,
 * to fn; "identity" and empty ones skipped.
 */
static void
each_token(const char *v, size_t len, struct ctl_payload *pl,
    void (*fn)(const char *, size_t, struct ctl_payload *))
{
	const char *end = v + len, *comma;
	size_t n;

	for (; v < end; v = comma + 1) {
		if ((comma = memchr(v, ',', (size_t)(end - v))) == NULL)
			comma = end;
		while (v < comma && (*v == ' ' || *v == '\t'))
			v++;
		n = (size_t)(comma - v);
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n > 0 && !token_is(v, n, "identity"))
			fn(v, n, pl);
	}
}

/* A transfer coding: chunked, last; anything else is unknown here. */
static void
transfer_token(const char *t, size_t n, struct ctl_payload *pl)
{
	if (pl->chunked)
		pl->unknown = 1; /* chunked must be the last */
	if (token_is(t, n, "chunked"))
		pl->chunked = 1;
	else
		pl->unknown = 1;
}

/* A content coding: one of gzip, x-gzip, deflate, once. */
static void
content_token(const char *t, size_t n, struct ctl_payload *pl)
{
	if (pl->coding != CTL_CODING_IDENTITY)
		pl->unknown = 1; /* two codings: not decoded here */
	if (token_is(t, n, "gzip") || token_is(t, n, "x-gzip"))
		pl->coding = CTL_CODING_GZIP;
	else if (token_is(t, n, "deflate"))
		pl->coding = CTL_CODING_DEFLATE;
	else
		pl->unknown = 1;
}

void
ctl_payload_header(const char *line, size_t len, struct ctl_payload *pl)
{
	static const char te[] = "Transfer-Encoding:",
	                  ce[] = "Content-Encoding:";

	if (len >= sizeof(te) - 1 && strncasecmp(line, te, sizeof(te) - 1) == 0)
		each_token(line + sizeof(te) - 1, len - (sizeof(te) - 1), pl,
		    transfer_token);
	else if (len >= sizeof(ce) - 1 &&
	         strncasecmp(line, ce, sizeof(ce) - 1) == 0)
		each_token(line + sizeof(ce) - 1, len - (sizeof(ce) - 1), pl,
		    content_token);
}

/* The line at *p (before end): its length without CRLF; -1 no line end. */
static long
line_at(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n;

	if (nl == NULL)
		return -1;
	n = (size_t)(nl - p);
	if (n > 0 && p[n - 1] == '\r')
		n--;
	*next = nl + 1;
	return (long)n;
}

/* The size of the chunk whose size line is p (n bytes); -1 not hex. */
static long long
chunk_size(const char *p, size_t n)
{
	long long v = 0;
	size_t i;
	int d;

	for (i = 0; i < n && p[i] != ';' && p[i] != ' ' && p[i] != '\t'; i++) {
		if (i >= 15)
			return -1; /* no chunk is that big */
		d = p[i] >= '0' && p[i] <= '9'   ? p[i] - '0'
		    : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
		    : p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
		                                 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return i == 0 ? -1 : v;
}

/* Join the chunks of p[0..len) into out (no cap: len bounds it); 0 or -1. */
static int
unchunk(const char *p, size_t len, struct buf *out)
{
	const char *end = p + len, *next;
	long long size;
	long n;

	for (;;) {
		if ((n = line_at(p, end, &next)) < 0 ||
		    (size = chunk_size(p, (size_t)n)) < 0 || size > end - next)
			return -1;
		p = next;
		if (size == 0)
			return 0; /* the last chunk; trailers are not kept */
		if (buf_add(out, p, (size_t)size) == -1)
			return -1;
		p += size;
		if ((n = line_at(p, end, &next)) != 0)
			return -1; /* data longer than its size */
		p = next;
	}
}

/* Inflate p[0..len) (wbits as inflateInit2 takes) into out up to max. */
static int
inflate_into(const char *p, size_t len, int wbits, size_t max, struct buf *out)
{
	unsigned char chunk[16384];
	z_stream z;
	size_t got;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, wbits) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)(uintptr_t)p;
	do {
		/* avail_in is a uInt: a longer record goes in in pieces */
		if (z.avail_in == 0 && len > 0) {
			z.avail_in = len > UINT_MAX ? UINT_MAX : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = inflate(&z, Z_NO_FLUSH);
		got = sizeof(chunk) - z.avail_out;
		if (got > max - out->len)
			got = max - out->len; /* the cut */
		if (buf_add(out, chunk, got) == -1)
			rc = Z_MEM_ERROR;
	} while (rc == Z_OK && out->len < max);
	inflateEnd(&z);
	if (rc == Z_OK && out->len >= max)
		return 0; /* cut: the rest is never read, as robotsd reads it */
	/* Bytes after the stream (a second gzip member): curl refuses them. */
	return rc == Z_STREAM_END && z.avail_in == 0 && len == 0 ? 0 : -1;
}

int
ctl_payload_decode(const char *p, size_t len, const struct ctl_payload *pl,
    size_t max, struct buf *out)
{
	struct buf joined = BUF_INIT(0);
	int rc;

	if (pl->unknown)
		return -1;
	if (pl->chunked) {
		if (unchunk(p, len, &joined) == -1) {
			buf_clear(&joined);
			return -1;
		}
		p = joined.p != NULL ? joined.p : "";
		len = joined.len;
	}
	if (pl->coding == CTL_CODING_GZIP)
		rc = inflate_into(p, len, 15 + 16, max, out);
	else if (pl->coding == CTL_CODING_DEFLATE) {
		/* zlib's wrapper, or raw deflate (as curl takes either) */
		if ((rc = inflate_into(p, len, 15, max, out)) == -1) {
			buf_reset(out);
			rc = inflate_into(p, len, -15, max, out);
		}
	} else
		rc = buf_add(out, p, len > max ? max : len);
	buf_clear(&joined);
	return rc;
}
