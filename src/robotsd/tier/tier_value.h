/*
 * tier_value.h: the value robotsd keeps for one origin in the shared Redis
 * tier, and its binary encoding. Pure: no I/O, no event loop.
 *
 * The value holds what is needed to rebuild a cache entry anywhere in the
 * fleet: the capped robots.txt body as fetched (compiled again on read, so
 * a value survives parser upgrades) with its fetch metadata, and the
 * origin's failure state (5xx/429 streak, next retry, Retry-After), so the
 * fleet retries a failing site once per schedule. Times are Unix epoch
 * milliseconds, shared by every host.
 *
 * Encoding (all integers big-endian; see docs/scaling.md):
 *   "RBTV" magic, u16 version (TIER_VALUE_VERSION), u16 header length,
 *   u32 total length, then the header fields, then four strings each as
 *   u32 length + bytes (origin, final_url, last_error, body), then a CRC-32
 *   (IEEE) of everything before it. A later minor revision may append
 *   header fields (readers skip what they do not know); anything else bumps
 *   the version, and a value of another version is refused, never guessed.
 *
 *   Appended after the first 56 header bytes (provenance; a value without
 *   them is read as having none): the version id as 16 ASCII hex digits
 *   (16 zero bytes: none), i64 version_since and i64 validated_at (ms),
 *   then u16 length + bytes of the ETag and of the Last-Modified.
 *
 *   Appended after the provenance (a value without it is read as keeping
 *   no cause, 0): u8 the cause of a failing origin, the values of enum
 *   fetch_cause (outcome.h), which are only ever appended to.
 *
 *   Appended after the cause (a value without it is read as keeping no
 *   history): u8 n (at most TIER_VALUE_MAX_HISTORY), then n versions the
 *   writer kept for the origin, newest first, each 16 ASCII hex digits of
 *   its id, i64 first_seen and i64 last_seen (ms), u16 its HTTP status
 *   and u8 its policy (enum tier_policy, never NONE). Refused (TV_FIELD)
 *   when a digit is not lower-case hex, an id comes twice, a time is not
 *   after 1970, last_seen is before first_seen, a status is over 999 or a
 *   policy unknown.
 *
 *   Appended after the history, only when a version has flags (robots.txt's
 *   never have): u8 n (the history's n; 0: none, for a later revision
 *   that appends more), then each version's flags, u8 (TIER_HIST_INVALID:
 *   a 2xx body its resource's reader found invalid, a tdmrep.json that is
 *   not a JSON array). Refused (TV_FIELD) when n is neither 0 nor the
 *   history's or a flag is unknown. Bytes after them are skipped (a later
 *   revision's).
 */
#ifndef ROBOTSD_TIER_VALUE_H
#define ROBOTSD_TIER_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "robots.h"

#define TIER_VALUE_VERSION 1
#define TIER_VALUE_MAX_BODY ROBOTS_MAX_BODY /* the fetch cap */
#define TIER_VALUE_MAX_ORIGIN 2048
#define TIER_VALUE_MAX_URL 16384
#define TIER_VALUE_MAX_ERROR 1024
#define TIER_VALUE_MAX_VALIDATOR 256 /* FETCH_MAX_VALIDATOR */
#define TIER_VALUE_VERSION_HEX 16
#define TIER_VALUE_MAX_HISTORY 255 /* --history-depth's bound */

/* The fetch outcome; wire values, never renumber. */
enum tier_policy {
	TIER_POLICY_NONE = 0,     /* never fetched: only failure state */
	TIER_POLICY_RULES = 1,    /* 2xx: the rules of the body */
	TIER_POLICY_ALLOW = 2,    /* 4xx, too many redirects: allow all */
	TIER_POLICY_DISALLOW = 3, /* 5xx, 429, network error: disallow all */
};

/* One version of an origin the writer kept (its history). */
struct tier_hist {
	char version[TIER_VALUE_VERSION_HEX + 1]; /* 16 hex digits */
	int64_t first_seen, last_seen;            /* ms */
	int http_status;                          /* 0: no HTTP answer */
	enum tier_policy policy;                  /* never NONE */
	unsigned flags;                           /* TIER_HIST_* */
};
#define TIER_HIST_INVALID 1u              /* = CACHE_VERSION_INVALID */
#define TIER_HIST_FLAGS TIER_HIST_INVALID /* every flag known */

/* One origin's shared entry. Strings are NUL-terminated; body may hold NULs. */
struct tier_value {
	char *origin; /* the origin key, e.g. "https://example.com" */
	enum tier_policy policy;
	int http_status;      /* 0: no HTTP answer */
	int truncated;        /* the body was cut at TIER_VALUE_MAX_BODY */
	int64_t fetched_at;   /* ms; end of the last fetch */
	int64_t expires_at;   /* ms; refresh after this */
	int64_t stale_until;  /* ms; may still be served stale until this */
	uint32_t fail_streak; /* consecutive failed fetches, 0: none */
	int64_t fail_since;   /* ms; first failure of the streak, 0: none */
	int64_t next_retry;   /* ms; no fetch before this, 0: any time */
	int64_t retry_after;  /* ms; the last Retry-After, 0: none */
	char *final_url;      /* after redirects, or NULL */
	char *last_error;     /* text of the last failure, or NULL */
	char *body;           /* TIER_POLICY_RULES: the body, else NULL */
	size_t body_len;
	/* Provenance: "" / 0 / NULL when the writer kept none. */
	char version[TIER_VALUE_VERSION_HEX + 1]; /* 16 hex digits */
	int64_t version_since; /* ms; this version first fetched */
	int64_t validated_at;  /* ms; last fetch or 304 confirming it */
	char *etag, *last_modified;
	/* enum fetch_cause of a failing origin; 0: none kept (older writer) */
	uint8_t cause;
	/* The writer's versions, newest first (decode: malloc'd), or NULL. */
	struct tier_hist *hist;
	size_t nhist;
};

/* Why a value was refused; TV_OK is 0. */
enum tier_value_err {
	TV_OK = 0,
	TV_TRUNCATED, /* shorter than its header or its declared length */
	TV_MAGIC,     /* not a robotsd value */
	TV_VERSION,   /* another format version */
	TV_LENGTH,    /* declared length differs from the value's */
	TV_CHECKSUM,  /* CRC-32 mismatch */
	TV_FIELD,     /* a field out of range */
	TV_ORIGIN,    /* the value names another origin */
	TV_NOMEM,
};

/*
 * Encode v into a malloc'd buffer of *len bytes; NULL when a field is out of
 * range (a string over its limit, an unknown policy) or memory runs out.
 */
char *tier_value_encode(const struct tier_value *v, size_t *len);
/*
 * Decode buf[0..len) into *v (fields malloc'd, free with tier_value_clear).
 * origin, when not NULL, must be the value's origin. Never reads outside
 * buf. Returns TV_OK, or the reason the value was refused (*v is then
 * empty).
 */
enum tier_value_err tier_value_decode(
    const void *buf, size_t len, const char *origin, struct tier_value *v);
const char *tier_value_strerror(enum tier_value_err);
/*
 * 1 when version i of hs (those before it being right) is one a value may
 * hold (the rules above: its id not given before i).
 */
int tier_hist_ok(const struct tier_hist *hs, size_t i);
void tier_value_clear(struct tier_value *); /* frees the strings; NULL ok */
/*
 * An origin's purge record, kept beside its entry after a purge: "RBTP",
 * u16 version 1, u16 0, u32 its total length (framed as a value is, so a
 * tag trailer goes after it the same way), i64 the purge's time (ms), then
 * the origin's bytes (the whole rest).
 * A value fetched before that time is refused by readers (shared.c), so
 * an old value written again after the purge is not taken. Encode: NULL
 * on no memory or an origin out of range. Decode: 0 with *purged_at set,
 * or -1 (another origin's, not a record, a time not after 1970).
 */
#define TIER_PURGE_HDR 20
char *tier_purge_encode(const char *origin, int64_t purged_at, size_t *len);
int tier_purge_decode(
    const void *buf, size_t len, const char *origin, int64_t *purged_at);
/* CRC-32 (IEEE 802.3, as zlib's crc32) of buf. */
uint32_t tier_crc32(const void *buf, size_t len);

#endif /* ROBOTSD_TIER_VALUE_H */
