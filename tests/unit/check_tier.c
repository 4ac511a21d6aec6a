/*
 * check_tier.c: the pure parts of the shared Redis tier: the value format
 * (tier_value.c), consistent hashing (tier_ring.c) and the --redis URL
 * parser (tier_url.c).
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "tier/tier_ring.h"
#include "policy/tier_tag.h"
#include "policy/tier_url.h"
#include "tier/tier_value.h"
#include "test_main.h"

/* --- value format ------------------------------------------------------- */

static void
sample(struct tier_value *v)
{
	static char body[] = "User-agent: *\nDisallow: /private\n\0tail";

	memset(v, 0, sizeof(*v));
	v->origin = (char *)"https://example.com";
	v->policy = TIER_POLICY_RULES;
	v->http_status = 200;
	v->truncated = 1;
	v->fetched_at = 1700000000123LL;
	v->expires_at = 1700086400123LL;
	v->stale_until = 1700172800123LL;
	v->fail_streak = 3;
	v->fail_since = -5; /* negative times survive too */
	v->next_retry = INT64_MAX;
	v->retry_after = 120000;
	v->final_url = (char *)"https://www.example.com/robots.txt";
	v->last_error = (char *)"HTTP 503";
	v->cause = 8; /* CAUSE_HTTP_503 */
	v->body = body;
	v->body_len = sizeof(body) - 1; /* an embedded NUL is kept */
}

/* Every field of an encoded value comes back as it was. */
START_TEST(value_roundtrip)
{
	struct tier_value v, d;
	size_t len;
	char *buf;

	sample(&v);
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, &len));
	ck_assert_int_eq(tier_value_decode(buf, len, v.origin, &d), TV_OK);
	ck_assert_str_eq(d.origin, v.origin);
	ck_assert_int_eq(d.policy, TIER_POLICY_RULES);
	ck_assert_int_eq(d.http_status, 200);
	ck_assert_int_eq(d.truncated, 1);
	ck_assert(d.fetched_at == v.fetched_at && d.expires_at == v.expires_at);
	ck_assert(d.stale_until == v.stale_until && d.fail_since == -5);
	ck_assert(d.next_retry == INT64_MAX && d.retry_after == 120000);
	ck_assert_uint_eq(d.fail_streak, 3);
	ck_assert_uint_eq(d.cause, 8);
	ck_assert_str_eq(d.final_url, v.final_url);
	ck_assert_str_eq(d.last_error, v.last_error);
	ck_assert_uint_eq(d.body_len, v.body_len);
	ck_assert_mem_eq(d.body, v.body, v.body_len);
	tier_value_clear(&d);
	free(buf);
}
END_TEST

/* Append n big-endian bytes of x. */
static unsigned char *
be(unsigned char *p, uint64_t x, int n)
{
	while (n-- > 0)
		*p++ = (unsigned char)(x >> (8 * n));
	return p;
}

/* Append a u32 length and the bytes of s. */
static unsigned char *
be_str(unsigned char *p, const char *s)
{
	p = be(p, strlen(s), 4);
	memcpy(p, s, strlen(s));
	return p + strlen(s);
}

/*
 * A value as the robotsd before provenance wrote it, built byte by byte
 * from the documented layout (56 header bytes, nothing appended): it
 * loads, with no version and no validators.
 */
START_TEST(value_without_provenance_loads)
{
	unsigned char buf[256], *p = buf;
	struct tier_value d;
	uint32_t crc;

	memcpy(p, "RBTV", 4);
	p = be(p + 4, 1, 2); /* version */
	p = be(p, 56, 2);    /* header length */
	p = be(p, 0, 4);     /* total, set below */
	*p++ = 1;            /* rules */
	*p++ = 0;            /* not truncated */
	p = be(p, 200, 2);   /* status */
	p = be(p, 0, 4);     /* fail streak */
	p = be(p, 1000, 8);  /* fetched_at */
	p = be(p, 2000, 8);  /* expires_at */
	p = be(p, 3000, 8);  /* stale_until */
	/* fail_since, next_retry, retry_after */
	p = be(be(be(p, 0, 8), 0, 8), 0, 8);
	p = be_str(p, "https://a.test");
	p = be_str(p, "");
	p = be_str(p, "");
	p = be_str(p, "User-agent: *\nDisallow: /\n");
	be(buf + 8, (uint64_t)(p - buf + 4), 4);
	crc = tier_crc32(buf, (size_t)(p - buf));
	p = be(p, crc, 4);
	ck_assert_int_eq(
	    tier_value_decode(buf, (size_t)(p - buf), "https://a.test", &d),
	    TV_OK);
	ck_assert_str_eq(d.body, "User-agent: *\nDisallow: /\n");
	ck_assert(d.fetched_at == 1000 && d.expires_at == 2000);
	ck_assert_str_eq(d.version, "");
	ck_assert(d.version_since == 0 && d.validated_at == 0);
	ck_assert_ptr_null(d.etag);
	ck_assert_ptr_null(d.last_modified);
	tier_value_clear(&d);
}
END_TEST

/*
 * Provenance round trip, and what a reader before it sees: the first 56
 * header bytes as they were, the strings right after the header length
 * the prefix declares (which such a reader skips to).
 */
START_TEST(value_provenance_roundtrip_and_old_readers)
{
	struct tier_value v, d, old;
	size_t len, olen, hdr;
	unsigned char *buf, *obuf;

	sample(&v);
	ck_assert_ptr_nonnull(obuf = (unsigned char *)tier_value_encode(
	                          &v, &olen)); /* no provenance */
	memcpy(v.version, "0123456789abcdef", 17);
	v.version_since = 1699000000000LL;
	v.validated_at = 1700000000123LL;
	v.etag = (char *)"\"e1\"";
	v.last_modified = (char *)"Sun, 22 Nov 2026 08:00:00 GMT";
	ck_assert_ptr_nonnull(
	    buf = (unsigned char *)tier_value_encode(&v, &len));
	ck_assert_int_eq(tier_value_decode(buf, len, v.origin, &d), TV_OK);
	ck_assert_str_eq(d.version, "0123456789abcdef");
	ck_assert(d.version_since == v.version_since &&
	          d.validated_at == v.validated_at);
	ck_assert_str_eq(d.etag, "\"e1\"");
	ck_assert_str_eq(d.last_modified, "Sun, 22 Nov 2026 08:00:00 GMT");
	ck_assert_mem_eq(d.body, v.body, v.body_len);
	tier_value_clear(&d);
	/* The old reader's view: prefix, 56 bytes, skip to hdr, strings. */
	hdr = (size_t)(buf[6] << 8 | buf[7]);
	ck_assert_uint_eq(hdr, 56 + 16 + 16 + 2 + 4 + 2 + 29 + 1 + 1);
	ck_assert_mem_eq(buf + 12, obuf + 12, 56);
	ck_assert_uint_eq(len - hdr, olen - (size_t)(obuf[6] << 8 | obuf[7]));
	ck_assert_mem_eq(buf + 12 + hdr, obuf + 12 + (obuf[6] << 8 | obuf[7]),
	    len - 12 - hdr - 4);
	/* Malformed provenance is refused like any bad field. */
	memset(&old, 0, sizeof(old));
	buf[12 + 56] = 'X'; /* not a hex digit */
	be(buf + len - 4, tier_crc32(buf, len - 4), 4);
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &old), TV_FIELD);
	free(buf);
	free(obuf);
}
END_TEST

/* The bytes of a file in tests/data, in buf; its length. */
static size_t
slurp(const char *name, unsigned char *buf, size_t size)
{
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", TESTDATADIR, name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "%s", path);
	n = fread(buf, 1, size, f);
	fclose(f);
	ck_assert_uint_lt(n, size);
	return n;
}

/*
 * Values the robotsd before causes wrote to a real redis-server
 * (tests/data/README.md): a 503 and a refused connection. They load, with
 * their provenance and no cause (0), which the reader then derives from
 * the status (shared_state_of(), the cache).
 */
START_TEST(value_before_cause_loads)
{
	static const struct {
		const char *file, *origin, *version;
		int status;
		const char *error;
	} rows[] = {
		{ "tier-value-nocause-503.bin", "http://down.test",
		    "69e4c6db8741dc34", 503, "HTTP status 503" },
		{ "tier-value-nocause-connect.bin", "http://dead.test",
		    "4696fab8f48b3837", 0, "Failed to connect to 127.0.0.1" },
	};
	unsigned char buf[1024], *re;
	struct tier_value d;
	size_t i, len, relen;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		len = slurp(rows[i].file, buf, sizeof(buf));
		ck_assert_int_eq(
		    tier_value_decode(buf, len, rows[i].origin, &d), TV_OK);
		ck_assert_int_eq(d.policy, TIER_POLICY_DISALLOW);
		ck_assert_int_eq(d.http_status, rows[i].status);
		ck_assert_uint_eq(d.fail_streak, 1);
		ck_assert_str_eq(d.version, rows[i].version);
		ck_assert_ptr_nonnull(strstr(d.last_error, rows[i].error));
		ck_assert_uint_eq(d.cause, 0);
		/*
		 * written again: two bytes longer (no cause, no history),
		 * the old bytes before them
		 */
		ck_assert_ptr_nonnull(
		    re = (unsigned char *)tier_value_encode(&d, &relen));
		ck_assert_uint_eq(relen, len + 2);
		ck_assert_mem_eq(
		    re + 12, buf + 12, (size_t)(buf[6] << 8 | buf[7]));
		ck_assert_uint_eq(re[12 + (buf[6] << 8 | buf[7])], 0);
		ck_assert_uint_eq(re[13 + (buf[6] << 8 | buf[7])], 0);
		free(re);
		tier_value_clear(&d);
	}
}
END_TEST

/* Failure state alone (no body), and an empty robots.txt. */
START_TEST(value_roundtrip_edges)
{
	struct tier_value v = { 0 }, d;
	size_t len;
	char *buf;

	v.origin = (char *)"http://a.test:8080";
	v.policy = TIER_POLICY_NONE;
	v.fail_streak = 1;
	v.body = (char *)"ignored";
	v.body_len = 7;
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, &len));
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_OK);
	ck_assert_ptr_null(d.body); /* only RULES carries a body */
	ck_assert_ptr_null(d.final_url);
	ck_assert_ptr_null(d.last_error);
	tier_value_clear(&d);
	free(buf);
	v.policy = TIER_POLICY_RULES;
	v.body_len = 0;
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, &len));
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_OK);
	ck_assert_ptr_nonnull(d.body);
	ck_assert_uint_eq(d.body_len, 0);
	tier_value_clear(&d);
	free(buf);
}
END_TEST

/* Values that cannot be encoded. */
START_TEST(value_encode_refuses)
{
	struct tier_value v;
	size_t len;

	sample(&v);
	v.origin = (char *)"";
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	sample(&v);
	v.policy = (enum tier_policy)4;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	sample(&v);
	v.http_status = 1000;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	sample(&v);
	v.body_len = TIER_VALUE_MAX_BODY + 1;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
}
END_TEST

/* --- history in a value ------------------------------------------------- */

#define HREC 35 /* one version: id, first, last, status, policy */

/* The sample with three versions, encoded; *at: where the history begins. */
static unsigned char *
hist_sample(size_t *len, size_t *at)
{
	static const struct tier_hist h[3] = {
		{ "0123456789abcdef", 1700000000000LL, 1700000500000LL, 200,
		    TIER_POLICY_RULES, 0 },
		{ "fedcba9876543210", 1690000000000LL, 1699999999999LL, 404,
		    TIER_POLICY_ALLOW, 0 },
		{ "00000000000000ff", 1680000000000LL, 1680000000000LL, 0,
		    TIER_POLICY_DISALLOW, 0 },
	};
	struct tier_value v;
	unsigned char *buf;

	sample(&v);
	v.hist = (struct tier_hist *)(uintptr_t)h;
	v.nhist = 3;
	ck_assert_ptr_nonnull(
	    buf = (unsigned char *)tier_value_encode(&v, len));
	*at = 12 + (size_t)(buf[6] << 8 | buf[7]) - (1 + 3 * HREC);
	return buf;
}

/* The history comes back as it was, newest first. */
START_TEST(value_history_roundtrip)
{
	struct tier_value d;
	size_t len, at;
	unsigned char *buf = hist_sample(&len, &at);

	ck_assert_uint_eq(buf[at], 3);
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_OK);
	ck_assert_uint_eq(d.nhist, 3);
	ck_assert_str_eq(d.hist[0].version, "0123456789abcdef");
	ck_assert(d.hist[0].first_seen == 1700000000000LL &&
	          d.hist[0].last_seen == 1700000500000LL);
	ck_assert_int_eq(d.hist[1].http_status, 404);
	ck_assert_int_eq(d.hist[1].policy, TIER_POLICY_ALLOW);
	ck_assert_str_eq(d.hist[2].version, "00000000000000ff");
	ck_assert_int_eq(d.hist[2].http_status, 0);
	ck_assert_int_eq(d.hist[2].policy, TIER_POLICY_DISALLOW);
	ck_assert_str_eq(d.origin, "https://example.com");
	tier_value_clear(&d);
	free(buf);
}
END_TEST

/* Hostile history bytes (CRC right): each refused, never guessed at. */
static const struct {
	const char *what;
	long at;         /* from the history's count byte */
	unsigned char b; /* the byte put there */
} hist_damages[] = {
	{ "more versions than bytes", 0, 4 },
	{ "a count past them all", 0, 255 },
	{ "an id not hex", 1 + 3, 'g' },
	{ "an id in upper case", 1 + 5, 'A' },
	{ "an id of NULs", 1 + 0, 0 },
	{ "the same id twice", 1 + HREC + 15, '1' }, /* ...ba98765432 1 0 */
	{ "first_seen before 1970", 1 + 16, 0x80 },
	{ "last_seen before first_seen", 1 + 24 + 2, 0x00 },
	{ "a status over 999", 1 + 32, 0x04 },
	{ "policy none", 1 + 34, 0 },
	{ "an unknown policy", 1 + 34, 4 },
};

START_TEST(value_history_damaged)
{
	struct tier_value d;
	size_t len, at;
	unsigned char *buf = hist_sample(&len, &at);

	if (hist_damages[_i].at == 1 + HREC + 15) { /* make id 2 = id 1 */
		memcpy(buf + at + 1 + HREC, buf + at + 1, 16);
	} else
		buf[at + (size_t)hist_damages[_i].at] = hist_damages[_i].b;
	be(buf + len - 4, tier_crc32(buf, len - 4), 4);
	ck_assert_msg(tier_value_decode(buf, len, NULL, &d) == TV_FIELD, "%s",
	    hist_damages[_i].what);
	ck_assert_ptr_null(d.hist);
	free(buf);
}
END_TEST

/* Histories the encoder refuses, like the decoder. */
START_TEST(value_history_encode_refuses)
{
	struct tier_hist h[2] = {
		{ "0123456789abcdef", 1000, 2000, 200, TIER_POLICY_RULES, 0 },
		{ "0123456789abcdef", 500, 600, 200, TIER_POLICY_RULES, 0 },
	};
	struct tier_value v;
	size_t len;

	sample(&v);
	v.hist = h;
	v.nhist = 2; /* one id twice */
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	memcpy(h[1].version, "0123456789ABCDEF", 16);
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	memcpy(h[1].version, "1123456789abcdef", 16);
	h[1].policy = TIER_POLICY_NONE;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	h[1].policy = TIER_POLICY_ALLOW;
	v.nhist = TIER_VALUE_MAX_HISTORY + 1;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	v.nhist = 2;
	char *ok = tier_value_encode(&v, &len);
	ck_assert_ptr_nonnull(ok);
	free(ok);
}
END_TEST

/*
 * Bytes a later revision appends after the history's flags (none: a
 * count of 0) are skipped (the header length covers them; the strings
 * still follow it).
 */
START_TEST(value_history_then_more)
{
	unsigned char *buf, *big;
	struct tier_value d;
	size_t len, at, hdr;

	buf = hist_sample(&len, &at);
	hdr = (size_t)(buf[6] << 8 | buf[7]);
	ck_assert_ptr_nonnull(big = malloc(len + 4));
	memcpy(big, buf, 12 + hdr);
	memcpy(big + 12 + hdr, "\0new", 4);
	memcpy(big + 12 + hdr + 4, buf + 12 + hdr, len - 12 - hdr);
	be(big + 6, hdr + 4, 2);
	be(big + 8, len + 4, 4);
	be(big + len + 4 - 4, tier_crc32(big, len + 4 - 4), 4);
	ck_assert_int_eq(tier_value_decode(big, len + 4, NULL, &d), TV_OK);
	ck_assert_uint_eq(d.nhist, 3);
	ck_assert_str_eq(d.hist[2].version, "00000000000000ff");
	ck_assert_mem_eq(d.body, "User-agent: *\nDisallow: /private\n", 33);
	tier_value_clear(&d);
	free(big);
	free(buf);
}
END_TEST

/*
 * A version's flags (a tdmrep.json that is invalid) follow the history:
 * a count, the history's, and a byte per version; a value whose versions
 * have none (robots.txt's) is byte for byte what it was before them.
 */
START_TEST(value_history_flags)
{
	struct tier_hist h[2] = {
		{ "0123456789abcdef", 1700000000000LL, 1700000500000LL, 200,
		    TIER_POLICY_RULES, TIER_HIST_INVALID },
		{ "fedcba9876543210", 1690000000000LL, 1699999999999LL, 200,
		    TIER_POLICY_RULES, 0 },
	};
	struct tier_value v, d;
	unsigned char *buf, *plain;
	size_t len, plen, hdr;

	sample(&v);
	v.hist = h;
	v.nhist = 2;
	ck_assert_ptr_nonnull(
	    buf = (unsigned char *)tier_value_encode(&v, &len));
	h[0].flags = 0;
	ck_assert_ptr_nonnull(
	    plain = (unsigned char *)tier_value_encode(&v, &plen));
	ck_assert_uint_eq(len, plen + 3); /* the count and two flags */
	hdr = (size_t)(buf[6] << 8 | buf[7]);
	ck_assert_mem_eq(buf + 12 + hdr - 3, "\2\1\0", 3);
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_OK);
	ck_assert_uint_eq(d.nhist, 2);
	ck_assert_uint_eq(d.hist[0].flags, TIER_HIST_INVALID);
	ck_assert_uint_eq(d.hist[1].flags, 0);
	tier_value_clear(&d);
	ck_assert_int_eq(tier_value_decode(plain, plen, NULL, &d), TV_OK);
	ck_assert_uint_eq(d.hist[0].flags, 0);
	tier_value_clear(&d);
	/* refused: a count that is not the history's, an unknown flag */
	buf[12 + hdr - 3] = 1;
	be(buf + len - 4, tier_crc32(buf, len - 4), 4);
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_FIELD);
	buf[12 + hdr - 3] = 2;
	buf[12 + hdr - 1] = 2;
	be(buf + len - 4, tier_crc32(buf, len - 4), 4);
	ck_assert_int_eq(tier_value_decode(buf, len, NULL, &d), TV_FIELD);
	ck_assert_ptr_null(d.hist);
	/* and not encoded */
	h[1].flags = 2;
	ck_assert_ptr_null(tier_value_encode(&v, &len));
	free(buf);
	free(plain);
}
END_TEST

/* Damage to an encoded value, and the reason the decoder must give. */
enum damage { CUT, EXTEND, FLIP, SET_BYTE, SET_BYTE_RESUM };
static const struct {
	const char *what;
	enum damage how;
	long at; /* byte offset; negative: from the end */
	unsigned char byte;
	enum tier_value_err want;
} damages[] = {
	{ "empty", CUT, 0, 0, TV_TRUNCATED },
	{ "three bytes", CUT, 3, 0, TV_TRUNCATED },
	{ "magic only", CUT, 4, 0, TV_TRUNCATED },
	{ "prefix only", CUT, 12, 0, TV_TRUNCATED },
	{ "last byte cut", CUT, -1, 0, TV_TRUNCATED },
	{ "half", CUT, -40, 0, TV_TRUNCATED },
	{ "trailing garbage", EXTEND, 0, 0, TV_LENGTH },
	{ "wrong magic", SET_BYTE, 0, 'X', TV_MAGIC },
	{ "version 2", SET_BYTE, 5, 2, TV_VERSION },
	{ "version 257", SET_BYTE, 4, 1, TV_VERSION },
	{ "version 0", SET_BYTE, 5, 0, TV_VERSION },
	{ "flipped header bit", FLIP, 20, 0x10, TV_CHECKSUM },
	{ "flipped body bit", FLIP, -10, 0x01, TV_CHECKSUM },
	{ "flipped checksum", FLIP, -1, 0x80, TV_CHECKSUM },
	{ "short header", SET_BYTE_RESUM, 7, 8, TV_FIELD },
	{ "huge header", SET_BYTE_RESUM, 6, 0xff, TV_TRUNCATED },
	{ "bad policy", SET_BYTE_RESUM, 12, 9, TV_FIELD },
	{ "bad truncated flag", SET_BYTE_RESUM, 13, 2, TV_FIELD },
	/* The strings begin after the prefix (12 bytes), the header of 56
	 * bytes, its provenance fields (36 without validators), the
	 * cause (1) and the history's count (1: none). */
	{ "origin length past the end", SET_BYTE_RESUM, 106, 0x7f,
	    TV_TRUNCATED },
	{ "NUL in origin", SET_BYTE_RESUM, 110, 0, TV_FIELD },
};

START_TEST(value_damaged)
{
	struct tier_value v, d;
	size_t len, n, at;
	unsigned char *buf, *bad;
	uint32_t crc;

	sample(&v);
	ck_assert_ptr_nonnull(
	    buf = (unsigned char *)tier_value_encode(&v, &len));
	n = damages[_i].how == CUT
	        ? (damages[_i].at < 0 ? len + (size_t)damages[_i].at
	                              : (size_t)damages[_i].at)
	    : damages[_i].how == EXTEND ? len + 1
	                                : len;
	/* An exact-size copy, so that ASan sees any read past n. */
	ck_assert_ptr_nonnull(bad = malloc(n > 0 ? n : 1));
	memcpy(bad, buf, n < len ? n : len);
	if (n > len)
		bad[len] = 0;
	at = damages[_i].at < 0 ? len + (size_t)damages[_i].at
	                        : (size_t)damages[_i].at;
	if (damages[_i].how == FLIP)
		bad[at] ^= damages[_i].byte;
	if (damages[_i].how == SET_BYTE || damages[_i].how == SET_BYTE_RESUM)
		bad[at] = damages[_i].byte;
	if (damages[_i].how == SET_BYTE_RESUM) { /* a valid checksum again */
		crc = tier_crc32(bad, n - 4);
		bad[n - 4] = (unsigned char)(crc >> 24);
		bad[n - 3] = (unsigned char)(crc >> 16);
		bad[n - 2] = (unsigned char)(crc >> 8);
		bad[n - 1] = (unsigned char)crc;
	}
	ck_assert_msg(tier_value_decode(bad, n, NULL, &d) == damages[_i].want,
	    "%s: got %s", damages[_i].what,
	    tier_value_strerror(tier_value_decode(bad, n, NULL, &d)));
	ck_assert_ptr_null(d.origin); /* nothing is kept from a refusal */
	free(bad);
	free(buf);
}
END_TEST

START_TEST(value_other_origin)
{
	struct tier_value v, d;
	size_t len;
	char *buf;

	sample(&v);
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, &len));
	ck_assert_int_eq(
	    tier_value_decode(buf, len, "https://example.org", &d), TV_ORIGIN);
	ck_assert_ptr_null(d.origin);
	free(buf);
	ck_assert_str_eq(tier_value_strerror(TV_VERSION),
	    "value written by an incompatible robotsd version");
}
END_TEST

/* A purge record: its bytes, and what a reader refuses of them. */
START_TEST(purge_record)
{
	static const char want[] =
	    "RBTP\0\1\0\0\0\0\0\x22\0\0\0\0\0\0\x30\x39https://a.test";
	static const struct {
		const char *bytes;
		size_t len;
		const char *origin;
	} bad[] = {
		{ want, sizeof(want) - 1, "https://b.test" },
		{ want, sizeof(want) - 1, "https://a.tes" },
		{ want, sizeof(want) - 2, "https://a.test" },
		{ "RBTQ\0\1\0\0\0\0\0\x22\0\0\0\0\0\0\x30\x39https://a.test",
		    34, "https://a.test" },
		{ "RBTP\0\1\0\0\0\0\0\x22\0\0\0\0\0\0\0\0https://a.test", 34,
		    "https://a.test" },
		{ "RBTP\0\1\0\0\0\0\0\x22\x80\0\0\0\0\0\0\0https://a.test", 34,
		    "https://a.test" },
		{ "RBTP\0\2\0\0\0\0\0\x22\0\0\0\0\0\0\x30\x39https://a.test",
		    34, "https://a.test" },
		{ "RBTP\0\1\0\0\0\0\0\x23\0\0\0\0\0\0\x30\x39https://a.test",
		    34, "https://a.test" },
		{ "RBTP", 4, "" },
	};
	int64_t ms = 0;
	size_t len, i;
	char *buf;

	ck_assert_ptr_nonnull(
	    buf = tier_purge_encode("https://a.test", 12345, &len));
	ck_assert_uint_eq(len, sizeof(want) - 1);
	ck_assert(memcmp(buf, want, len) == 0);
	ck_assert_int_eq(tier_purge_decode(buf, len, "https://a.test", &ms), 0);
	ck_assert_int_eq(ms, 12345);
	free(buf);
	ck_assert_ptr_null(tier_purge_encode("", 1, &len));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tier_purge_decode(bad[i].bytes, bad[i].len,
		                  bad[i].origin, &ms) == -1,
		    "row %zu", i);
}
END_TEST

/* The CRC is zlib's: the check value of "123456789". */
START_TEST(value_crc)
{
	ck_assert_uint_eq(tier_crc32("123456789", 9), 0xcbf43926u);
	ck_assert_uint_eq(tier_crc32("", 0), 0);
}
END_TEST

/* --- consistent hashing ------------------------------------------------- */

#define NKEYS 10000

/* --- tags (--redis-key-file) ------------------------------------------- */

static const unsigned char key0[TIER_KEY_LEN] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
	10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
	28, 29, 30, 31 };

/* The tag is RFC 2104 HMAC-SHA256 (value from Python's hmac module). */
START_TEST(tag_is_hmac_sha256)
{
	static const unsigned char want[32] = { 0xf0, 0x13, 0x37, 0x29, 0xc4,
		0x16, 0x3d, 0xed, 0xe8, 0x1e, 0x21, 0xcd, 0x47, 0x83, 0x92,
		0x56, 0xda, 0x58, 0x17, 0x12, 0x38, 0xc8, 0xa0, 0xd8, 0x74,
		0x39, 0x7c, 0x73, 0xb1, 0x4e, 0x1e, 0x47 };
	unsigned char tag[TIER_TAG_LEN];

	tier_tag_make(key0, "abc", 3, tag);
	ck_assert_mem_eq(tag, "RBTH", 4);
	ck_assert_mem_eq(tag + 4, want, 32);
}
END_TEST

/* A value as stored: encoded, then (tagged) its trailer under key0. */
static char *
stored(int tagged, size_t *len)
{
	struct tier_value v;
	char *buf;

	sample(&v);
	ck_assert_ptr_nonnull(buf = tier_value_encode(&v, len));
	if (tagged) {
		ck_assert_ptr_nonnull(buf = realloc(buf, *len + TIER_TAG_LEN));
		tier_tag_make(key0, buf, *len, (unsigned char *)buf + *len);
		*len += TIER_TAG_LEN;
	}
	return buf;
}

/* Which stored values each reader takes, and as how many bytes. */
START_TEST(tag_accept_and_refuse)
{
	unsigned char other[TIER_KEY_LEN];
	size_t len, plain;
	char *buf;

	free(stored(0, &plain));
	/* with the key: only a right tag */
	buf = stored(1, &len);
	ck_assert_int_eq(tier_tag_open(key0, buf, len), (long)plain);
	memcpy(other, key0, sizeof(other));
	other[31] ^= 1;
	ck_assert_int_eq(tier_tag_open(other, buf, len), -1);
	buf[20] ^= 1; /* a forged time */
	ck_assert_int_eq(tier_tag_open(key0, buf, len), -1);
	buf[20] ^= 1;
	buf[len - 1] ^= 1; /* a forged tag */
	ck_assert_int_eq(tier_tag_open(key0, buf, len), -1);
	ck_assert_int_eq(tier_tag_open(key0, buf, len - 1), -1);
	/* without the key: the trailer dropped unchecked */
	ck_assert_int_eq(tier_tag_open(NULL, buf, len), (long)plain);
	free(buf);
	/* an untagged value: refused with the key, taken without */
	buf = stored(0, &len);
	ck_assert_int_eq(tier_tag_open(key0, buf, len), -1);
	ck_assert_int_eq(tier_tag_open(NULL, buf, len), (long)len);
	ck_assert_int_eq(tier_tag_open(key0, "", 0), -1);
	free(buf);
}
END_TEST

static const struct {
	const char *text;
	int ok;
} key_texts[] = {
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F",
	    1 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
	    1 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	  "\n",
	    0 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1",
	    0 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0",
	    0 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1g",
	    0 },
	{ " 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	    0 },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\r"
	  "\n",
	    0 },
	{ "", 0 },
};

START_TEST(key_file_text)
{
	unsigned char key[TIER_KEY_LEN];
	const char *t = key_texts[_i].text;
	const char *why = tier_key_parse(t, strlen(t), key);

	ck_assert_msg((why == NULL) == key_texts[_i].ok, "row %d: %s", _i,
	    why != NULL ? why : "taken");
	if (why == NULL)
		ck_assert_mem_eq(key, key0, sizeof(key));
}
END_TEST

static const char *const servers[] = {
	"redis://10.0.0.1:6379/0",
	"redis://10.0.0.2:6379/0",
	"redis://10.0.0.3:6379/0",
	"redis://10.0.0.4:6379/0",
	"unix:///run/redis/a.sock?db=0",
};

static void
origin_of(size_t i, char *buf, size_t size)
{
	snprintf(buf, size, "%s://site%zu.example%zu.test%s",
	    i % 3 == 0 ? "http" : "https", i, i % 7, i % 5 == 0 ? ":8080" : "");
}

/* Every key maps to one server in range, and again to the same one. */
START_TEST(ring_stable)
{
	struct tier_ring *r, *again;
	size_t i, count[5] = { 0 };
	char key[128];

	ck_assert_ptr_nonnull(r = tier_ring_new(servers, 5));
	ck_assert_ptr_nonnull(again = tier_ring_new(servers, 5));
	for (i = 0; i < NKEYS; i++) {
		origin_of(i, key, sizeof(key));
		ck_assert_uint_lt(tier_ring_lookup(r, key), 5);
		ck_assert_uint_eq(
		    tier_ring_lookup(r, key), tier_ring_lookup(r, key));
		ck_assert_uint_eq(
		    tier_ring_lookup(r, key), tier_ring_lookup(again, key));
		count[tier_ring_lookup(r, key)]++;
	}
	/* Balanced within +-35% of the fair share with 160 points each. */
	for (i = 0; i < 5; i++)
		ck_assert_msg(count[i] > NKEYS / 5 * 65 / 100 &&
		                  count[i] < NKEYS / 5 * 135 / 100,
		    "server %zu holds %zu of %d keys", i, count[i], NKEYS);
	tier_ring_free(r);
	tier_ring_free(again);
}
END_TEST

/* The map depends on the set of servers, not on their order. */
START_TEST(ring_order_free)
{
	const char *const rev[] = { servers[2], servers[1], servers[0] };
	struct tier_ring *a, *b;
	size_t i;
	char key[128];

	ck_assert_ptr_nonnull(a = tier_ring_new(servers, 3));
	ck_assert_ptr_nonnull(b = tier_ring_new(rev, 3));
	for (i = 0; i < NKEYS; i++) {
		origin_of(i, key, sizeof(key));
		ck_assert_str_eq(servers[tier_ring_lookup(a, key)],
		    rev[tier_ring_lookup(b, key)]);
	}
	tier_ring_free(a);
	tier_ring_free(b);
}
END_TEST

/* N -> N+1 servers moves about 1/(N+1) of the keys, all to the new one. */
START_TEST(ring_grow)
{
	size_t n = (size_t)_i, i, moved = 0, from, to;
	struct tier_ring *a, *b;
	char key[128];

	ck_assert_ptr_nonnull(a = tier_ring_new(servers, n));
	ck_assert_ptr_nonnull(b = tier_ring_new(servers, n + 1));
	for (i = 0; i < NKEYS; i++) {
		origin_of(i, key, sizeof(key));
		from = tier_ring_lookup(a, key);
		to = tier_ring_lookup(b, key);
		if (from != to) {
			ck_assert_uint_eq(to, n); /* only to the new server */
			moved++;
		}
	}
	/* The fair share is NKEYS/(n+1); allow 0.6x to 1.4x of it. */
	ck_assert_msg(moved * (n + 1) * 10 >= (size_t)NKEYS * 6 &&
	                  moved * (n + 1) * 10 <= (size_t)NKEYS * 14,
	    "%zu -> %zu servers moved %zu of %d keys", n, n + 1, moved, NKEYS);
	tier_ring_free(a);
	tier_ring_free(b);
}
END_TEST

START_TEST(ring_one_server)
{
	struct tier_ring *r;

	ck_assert_ptr_null(tier_ring_new(servers, 0));
	ck_assert_ptr_nonnull(r = tier_ring_new(servers, 1));
	ck_assert_uint_eq(tier_ring_lookup(r, "https://example.com"), 0);
	ck_assert_uint_eq(tier_ring_lookup(r, ""), 0);
	tier_ring_free(r);
}
END_TEST

/* --- --redis URLs ------------------------------------------------------- */

static const struct {
	const char *url;
	int is_unix;
	const char *host, *path, *password;
	int port, db;
	const char *name;
	const char *user;
	int tls;
} good_urls[] = {
	{ "redis://localhost", 0, "localhost", NULL, NULL, 6379, 0,
	    "redis://localhost:6379/0", NULL, 0 },
	{ "redis://127.0.0.1:6380", 0, "127.0.0.1", NULL, NULL, 6380, 0,
	    "redis://127.0.0.1:6380/0", NULL, 0 },
	{ "redis://r1.example.net:7000/3", 0, "r1.example.net", NULL, NULL,
	    7000, 3, "redis://r1.example.net:7000/3", NULL, 0 },
	{ "redis://:s3cret@cache/1", 0, "cache", NULL, "s3cret", 6379, 1,
	    "redis://cache:6379/1", NULL, 0 },
	{ "redis://:p%40ss%3Aword@h:1/", 0, "h", NULL, "p@ss:word", 1, 0,
	    "redis://h:1/0", NULL, 0 },
	{ "redis://[::1]:6379/2", 0, "::1", NULL, NULL, 6379, 2,
	    "redis://[::1]:6379/2", NULL, 0 },
	{ "redis://[2001:db8::7]", 0, "2001:db8::7", NULL, NULL, 6379, 0,
	    "redis://[2001:db8::7]:6379/0", NULL, 0 },
	{ "unix:///run/redis/redis.sock", 1, NULL, "/run/redis/redis.sock",
	    NULL, 0, 0, "unix:///run/redis/redis.sock?db=0", NULL, 0 },
	{ "unix:///tmp/r.sock?db=15", 1, NULL, "/tmp/r.sock", NULL, 0, 15,
	    "unix:///tmp/r.sock?db=15", NULL, 0 },
	{ "unix://:pw@/tmp/r@1.sock", 1, NULL, "/tmp/r@1.sock", "pw", 0, 0,
	    "unix:///tmp/r@1.sock?db=0", NULL, 0 },
	{ "unix:///tmp/a@b.sock", 1, NULL, "/tmp/a@b.sock", NULL, 0, 0,
	    "unix:///tmp/a@b.sock?db=0", NULL, 0 },
	/* ACL users (Redis 6): AUTH USER PASSWORD */
	{ "redis://robotsd:s3cret@cache/1", 0, "cache", NULL, "s3cret", 6379, 1,
	    "redis://cache:6379/1", "robotsd", 0 },
	{ "redis://robotsd@cache", 0, "cache", NULL, NULL, 6379, 0,
	    "redis://cache:6379/0", "robotsd", 0 },
	{ "redis://a%40b%3Ac:p%3A@h", 0, "h", NULL, "p:", 6379, 0,
	    "redis://h:6379/0", "a@b:c", 0 },
	{ "unix://fleet:pw@/tmp/r.sock", 1, NULL, "/tmp/r.sock", "pw", 0, 0,
	    "unix:///tmp/r.sock?db=0", "fleet", 0 },
	{ "unix://fleet@/tmp/r.sock", 1, NULL, "/tmp/r.sock", NULL, 0, 0,
	    "unix:///tmp/r.sock?db=0", "fleet", 0 },
	/* TLS: the same URL and the same default port */
	{ "rediss://cache.example:6380/2", 0, "cache.example", NULL, NULL, 6380,
	    2, "rediss://cache.example:6380/2", NULL, 1 },
	{ "rediss://u:p@[::1]", 0, "::1", NULL, "p", 6379, 0,
	    "rediss://[::1]:6379/0", "u", 1 },
};

static int
streq_null(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

START_TEST(url_good)
{
	struct tier_url u;
	const char *err = NULL;

	ck_assert_msg(tier_url_parse(good_urls[_i].url, &u, &err) == 0,
	    "%s: %s", good_urls[_i].url, err);
	ck_assert_int_eq(u.is_unix, good_urls[_i].is_unix);
	ck_assert(streq_null(u.host, good_urls[_i].host));
	ck_assert(streq_null(u.path, good_urls[_i].path));
	ck_assert(streq_null(u.password, good_urls[_i].password));
	ck_assert(streq_null(u.user, good_urls[_i].user));
	ck_assert_int_eq(u.tls, good_urls[_i].tls);
	ck_assert_int_eq(u.port, good_urls[_i].port);
	ck_assert_int_eq(u.db, good_urls[_i].db);
	ck_assert_str_eq(u.name, good_urls[_i].name);
	tier_url_clear(&u);
}
END_TEST

static const struct {
	const char *url, *err;
} bad_urls[] = {
	{ "", "not a redis://, rediss:// or unix:// URL" },
	{ "localhost:6379", "not a redis://, rediss:// or unix:// URL" },
	{ "http://localhost", "not a redis://, rediss:// or unix:// URL" },
	{ "REDIS://localhost", "not a redis://, rediss:// or unix:// URL" },
	{ "rediss:/localhost", "not a redis://, rediss:// or unix:// URL" },
	{ "redisss://localhost", "not a redis://, rediss:// or unix:// URL" },
	{ "rediss://", "missing host" },
	{ "redis://", "missing host" },
	{ "redis:///3", "missing host" },
	{ "redis://:6379", "missing host" },
	{ "redis://:pw@", "missing host" },
	{ "redis://user:@host", "empty password" },
	{ "redis://us%zzer@host", "bad %XX escape in the user name" },
	{ "redis://us%20er:pw@host", "a space in the user name" },
	{ "redis://:@host", "empty password" },
	{ "redis://:a%4@host", "bad %XX escape in the password" },
	{ "redis://:a%zz@host", "bad %XX escape in the password" },
	{ "redis://:a%00b@host", "bad %XX escape in the password" },
	{ "redis://ho st", "bad character in host" },
	{ "redis://host?db=1", "bad character in host" },
	{ "redis://host:", "bad port (1-65535)" },
	{ "redis://host:0", "bad port (1-65535)" },
	{ "redis://host:65536", "bad port (1-65535)" },
	{ "redis://host:-1", "bad port (1-65535)" },
	{ "redis://host:63x", "bad port (1-65535)" },
	{ "redis://host:99999999999", "bad port (1-65535)" },
	{ "redis://host/x", "bad database number after '/'" },
	{ "redis://host/-1", "bad database number after '/'" },
	{ "redis://host/1/2", "bad database number after '/'" },
	{ "redis://host/2147483648", "bad database number after '/'" },
	{ "redis://[::1", "bad IPv6 address (write it as [ADDR])" },
	{ "redis://[]", "bad IPv6 address (write it as [ADDR])" },
	{ "redis://[fe80::1%eth0]", "bad IPv6 address" },
	{ "redis://::1", "missing host" },
	{ "unix://", "the socket path must be absolute (unix:///PATH)" },
	{ "unix:///", "the socket path must be absolute (unix:///PATH)" },
	{ "unix://relative.sock",
	    "the socket path must be absolute (unix:///PATH)" },
	{ "unix:///tmp/dir/",
	    "the socket path must be absolute (unix:///PATH)" },
	{ "unix:///tmp/r.sock?db=", "bad query: only ?db=N is understood" },
	{ "unix:///tmp/r.sock?db=x", "bad query: only ?db=N is understood" },
	{ "unix:///tmp/r.sock?password=x",
	    "bad query: only ?db=N is understood" },
	{ "unix:///tmp/r.sock?db=1&x=2",
	    "bad query: only ?db=N is understood" },
	{ "unix://:@/tmp/r.sock", "empty password" },
};

/* No password is ever shown in a message, even of a bad URL. */
static const struct {
	const char *url, *want;
} masked_urls[] = {
	{ "redis://:s3cret@db.example:6379/2",
	    "redis://***@db.example:6379/2" },
	{ "redis://db.example", "redis://db.example" },
	{ "unix://:pw@/run/redis.sock?db=1",
	    "unix://***@/run/redis.sock?db=1" },
	{ "redis://:p@ss/w@rd@h", "redis://***@h" }, /* unescaped '@' */
	{ "redis://user:pw@h", "redis://***@h" },
	{ ":pw@h", "***@h" },                 /* no scheme */
	{ "redis://h/0@x", "redis://***@x" }, /* masks more, never less */
	{ "", "" },
};

START_TEST(url_masked)
{
	char *m = tier_url_masked(masked_urls[_i].url);

	ck_assert_str_eq(m, masked_urls[_i].want);
	free(m);
}
END_TEST

START_TEST(url_bad)
{
	struct tier_url u;
	const char *err = NULL;

	ck_assert_msg(tier_url_parse(bad_urls[_i].url, &u, &err) == -1,
	    "%s was accepted", bad_urls[_i].url);
	ck_assert_msg(err != NULL && strcmp(err, bad_urls[_i].err) == 0,
	    "%s: got \"%s\"", bad_urls[_i].url, err);
	ck_assert_ptr_null(u.host); /* nothing is kept from a refusal */
	ck_assert_ptr_null(u.password);
	ck_assert_ptr_null(u.user);
	ck_assert_ptr_null(u.name);
}
END_TEST

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
tier_suite(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("value");

	tcase_add_test(tc, value_roundtrip);
	tcase_add_test(tc, value_without_provenance_loads);
	tcase_add_test(tc, value_provenance_roundtrip_and_old_readers);
	tcase_add_test(tc, value_before_cause_loads);
	tcase_add_test(tc, value_roundtrip_edges);
	tcase_add_test(tc, value_encode_refuses);
	tcase_add_loop_test(tc, value_damaged, 0, NELEM(damages));
	tcase_add_test(tc, value_other_origin);
	tcase_add_test(tc, purge_record);
	tcase_add_test(tc, value_crc);
	tcase_add_test(tc, value_history_roundtrip);
	tcase_add_loop_test(tc, value_history_damaged, 0, NELEM(hist_damages));
	tcase_add_test(tc, value_history_encode_refuses);
	tcase_add_test(tc, value_history_then_more);
	tcase_add_test(tc, value_history_flags);
	suite_add_tcase(s, tc);
	tc = tcase_create("tag");
	tcase_add_test(tc, tag_is_hmac_sha256);
	tcase_add_test(tc, tag_accept_and_refuse);
	tcase_add_loop_test(tc, key_file_text, 0, NELEM(key_texts));
	suite_add_tcase(s, tc);
	tc = tcase_create("ring");
	tcase_add_test(tc, ring_stable);
	tcase_add_test(tc, ring_order_free);
	tcase_add_loop_test(tc, ring_grow, 1, 5);
	tcase_add_test(tc, ring_one_server);
	suite_add_tcase(s, tc);
	tc = tcase_create("url");
	tcase_add_loop_test(tc, url_good, 0, NELEM(good_urls));
	tcase_add_loop_test(tc, url_bad, 0, NELEM(bad_urls));
	tcase_add_loop_test(tc, url_masked, 0, NELEM(masked_urls));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tier_suite, NULL, NULL);
