/*
 * ctl_payload.h: the payload of an HTTP response as another crawler's WARC
 * record keeps it, decoded for recheck: its Transfer-Encoding (chunked,
 * RFC 9112 section 7.1) undone, then its Content-Encoding (gzip, x-gzip,
 * deflate; RFC 9110 section 8.4). Pure: no I/O; zlib only.
 */
#ifndef ROBOTSD_CTL_PAYLOAD_H
#define ROBOTSD_CTL_PAYLOAD_H

#include <stddef.h>

struct buf;

/* How a payload was sent, from its headers (ctl_payload_header). */
struct ctl_payload {
	int chunked; /* Transfer-Encoding ends with chunked */
	int coding;  /* CTL_CODING_* of Content-Encoding */
	int unknown; /* a coding neither decodes (br, zstd, compress...) */
};
#define CTL_CODING_IDENTITY 0
#define CTL_CODING_GZIP 1
#define CTL_CODING_DEFLATE 2

/*
 * Note the header line (len bytes, no line end) in pl when it is a
 * Transfer-Encoding or a Content-Encoding; other lines are ignored.
 */
void ctl_payload_header(const char *line, size_t len, struct ctl_payload *pl);

/*
 * Decode p[0..len) as pl says into out, at most max bytes of it (the
 * rest cut, as robotsd cuts a fetch's decoded body); 0, or -1 when the
 * payload is malformed (a chunk size that is not hex or passes the end,
 * no last chunk, a gzip or deflate stream that is not one, ends early or
 * is followed by more bytes, a second gzip member among them, which curl
 * and so robotsd refuse as well),
 * its coding unknown, or memory ran out. With neither coding nor chunks,
 * out gets p itself (cut at max).
 */
int ctl_payload_decode(const char *p, size_t len, const struct ctl_payload *pl,
    size_t max, struct buf *out);

#endif /* ROBOTSD_CTL_PAYLOAD_H */
