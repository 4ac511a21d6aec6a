/*
 * warc.h: WARC 1.1 records (ISO 28500) for the robots.txt archive, pure:
 * no I/O but getrandom() for record ids. A `warcinfo` record opens each
 * file; a `response` record holds one fetched robots.txt (or tdmrep.json,
 * which its WARC-Robotsd-Resource field says): the HTTP status line and
 * headers as received, then the body as robotsd kept it (at most 500
 * KiB). Each record is gzipped as its own member, so a file of them is
 * a standard .warc.gz. docs/provenance.md ("Archive") says how the fields
 * are chosen.
 */
#ifndef ROBOTSD_WARC_H
#define ROBOTSD_WARC_H

#include <stddef.h>

#include "wire/buf.h"

/* "<urn:uuid:" 36 ">" and a NUL. */
#define WARC_ID_SIZE 48
/* "sha256:" and 56 base32 characters (RFC 4648, padded) and a NUL. */
#define WARC_DIGEST_SIZE 64
/* "2026-11-26T05:30:00Z" and a NUL. */
#define WARC_DATE_SIZE 24

/* One response record. Strings are NUL-terminated; optional ones NULL. */
struct warc_response {
	const char *record_id;   /* WARC_ID_SIZE form */
	const char *warcinfo_id; /* the file's warcinfo record, or NULL */
	double date;             /* the fetch time, Unix seconds */
	const char *target_uri;  /* the URL that gave the response */
	const char *origin;      /* the origin the rules are for, or NULL */
	const char *ip;          /* the peer's address, or NULL */
	const char *version;     /* robotsd's version id, or NULL */
	/*
	 * The status line and header lines as received (each ended by LF or
	 * CRLF; a last empty line is allowed). Written with CRLF line ends.
	 */
	const char *http_head;
	size_t http_head_len;
	const char *body; /* as kept: decoded, at most the cap */
	size_t body_len;
	int truncated; /* the body was cut at the cap */
	/*
	 * The resource, "tdmrep" (WARC-Robotsd-Resource), or NULL for
	 * robots.txt, whose records have no such field.
	 */
	const char *resource;
};

/*
 * Append the uncompressed response record to out: 0, or -1 when a field
 * holds a control character (header injection), the head has no status
 * line, or out is full.
 */
int warc_response(struct buf *out, const struct warc_response *);
/*
 * Append the uncompressed warcinfo record opening a file named filename,
 * written by software ("robotsd/VERSION"): 0, or -1 as above.
 */
int warc_warcinfo(struct buf *out, const char *record_id, double date,
    const char *filename, const char *software);
/* Format 16 random bytes as a version 4 "<urn:uuid:...>" record id. */
void warc_uuid(char out[WARC_ID_SIZE], const unsigned char rnd[16]);
/* A random record id from getrandom(); 0, or -1 (errno). */
int warc_random_id(char out[WARC_ID_SIZE]);
/* "sha256:" and the base32 (RFC 4648) of the SHA-256 of the bytes. */
void warc_digest(char out[WARC_DIGEST_SIZE], const void *, size_t);
/* t as "YYYY-MM-DDThh:mm:ssZ" (UTC, whole seconds). */
void warc_date(char out[WARC_DATE_SIZE], double t);
/* Append the bytes as one gzip member to out: 0, or -1. */
int warc_gzip(struct buf *out, const void *, size_t);

#endif /* ROBOTSD_WARC_H */
