/*
 * tier_value.c: encode and decode the shared tier's value for one origin
 * (layout in tier_value.h). The decoder trusts nothing: every length is
 * checked against the bytes left before it is used.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "tier/tier_value.h"

#define MAGIC "RBTV"
#define PREFIX_LEN 12 /* magic, version, header length, total length */
#define HEADER_LEN 56 /* the version 1 header fields */
#define NSTRINGS 4
/* The provenance fields appended to the header, without the validators. */
#define PROV_LEN (TIER_VALUE_VERSION_HEX + 8 + 8 + 2 + 2)
#define CAUSE_LEN 1 /* the cause, appended after the provenance */
/* One version of the history appended after the cause. */
#define HIST_REC (TIER_VALUE_VERSION_HEX + 8 + 8 + 2 + 1)

uint32_t
tier_crc32(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t crc = 0xffffffffu;
	int k;

	while (len-- > 0) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static unsigned char *
put_u16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
	return p + 2;
}

static unsigned char *
put_u32(unsigned char *p, uint32_t v)
{
	p = put_u16(p, (unsigned)(v >> 16));
	return put_u16(p, (unsigned)(v & 0xffff));
}

static unsigned char *
put_i64(unsigned char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;

	p = put_u32(p, (uint32_t)(u >> 32));
	return put_u32(p, (uint32_t)u);
}

static unsigned char *
put_str(unsigned char *p, const char *s, size_t len)
{
	p = put_u32(p, (uint32_t)len);
	if (len > 0)
		memcpy(p, s, len);
	return p + len;
}

static uint32_t
get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int64_t
get_i64(const unsigned char *p)
{
	return (int64_t)((uint64_t)get_u32(p) << 32 | get_u32(p + 4));
}

static size_t
str_len(const char *s)
{
	return s == NULL ? 0 : strlen(s);
}

/* 1 when s is TIER_VALUE_VERSION_HEX lower-case hex digits. */
static int
hex_id(const unsigned char *s)
{
	size_t i;

	for (i = 0; i < TIER_VALUE_VERSION_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* See tier_value.h. */
int
tier_hist_ok(const struct tier_hist *hs, size_t i)
{
	const struct tier_hist *h = &hs[i];
	size_t j;

	if (!hex_id((const unsigned char *)h->version) ||
	    h->version[TIER_VALUE_VERSION_HEX] != '\0' || h->first_seen <= 0 ||
	    h->last_seen < h->first_seen || h->http_status < 0 ||
	    h->http_status > 999 || h->policy < TIER_POLICY_RULES ||
	    h->policy > TIER_POLICY_DISALLOW || (h->flags & ~TIER_HIST_FLAGS))
		return 0;
	for (j = 0; j < i; j++)
		if (memcmp(hs[j].version, h->version, TIER_VALUE_VERSION_HEX) ==
		    0)
			return 0;
	return 1;
}

/* 0 when v can be encoded. */
static int
value_check(const struct tier_value *v, size_t body_len)
{
	size_t i;

	if (v->origin == NULL || v->origin[0] == '\0' ||
	    strlen(v->origin) > TIER_VALUE_MAX_ORIGIN)
		return -1;
	if (v->policy < TIER_POLICY_NONE || v->policy > TIER_POLICY_DISALLOW)
		return -1;
	if (v->http_status < 0 || v->http_status > 999)
		return -1;
	if (str_len(v->final_url) > TIER_VALUE_MAX_URL ||
	    str_len(v->last_error) > TIER_VALUE_MAX_ERROR ||
	    str_len(v->etag) > TIER_VALUE_MAX_VALIDATOR ||
	    str_len(v->last_modified) > TIER_VALUE_MAX_VALIDATOR)
		return -1;
	if (v->nhist > TIER_VALUE_MAX_HISTORY ||
	    (v->nhist > 0 && v->hist == NULL))
		return -1;
	for (i = 0; i < v->nhist; i++)
		if (!tier_hist_ok(v->hist, i))
			return -1;
	return body_len > TIER_VALUE_MAX_BODY ? -1 : 0;
}

/* Whether a version of v's history has flags (then appended). */
static int
hist_flagged(const struct tier_value *v)
{
	size_t i;

	for (i = 0; i < v->nhist; i++)
		if (v->hist[i].flags != 0)
			return 1;
	return 0;
}

/* The history appended after the cause, and its flags when any. */
static unsigned char *
put_hist(unsigned char *p, const struct tier_value *v)
{
	size_t i;

	*p++ = (unsigned char)v->nhist;
	for (i = 0; i < v->nhist; i++) {
		memcpy(p, v->hist[i].version, TIER_VALUE_VERSION_HEX);
		p = put_i64(p + TIER_VALUE_VERSION_HEX, v->hist[i].first_seen);
		p = put_i64(p, v->hist[i].last_seen);
		p = put_u16(p, (unsigned)v->hist[i].http_status);
		*p++ = (unsigned char)v->hist[i].policy;
	}
	if (!hist_flagged(v))
		return p; /* robots.txt's values are as before the flags */
	*p++ = (unsigned char)v->nhist;
	for (i = 0; i < v->nhist; i++)
		*p++ = (unsigned char)v->hist[i].flags;
	return p;
}

static unsigned char *
put_header(unsigned char *p, const struct tier_value *v)
{
	*p++ = (unsigned char)v->policy;
	*p++ = v->truncated ? 1 : 0;
	p = put_u16(p, (unsigned)v->http_status);
	p = put_u32(p, v->fail_streak);
	p = put_i64(p, v->fetched_at);
	p = put_i64(p, v->expires_at);
	p = put_i64(p, v->stale_until);
	p = put_i64(p, v->fail_since);
	p = put_i64(p, v->next_retry);
	p = put_i64(p, v->retry_after);
	memset(p, 0, TIER_VALUE_VERSION_HEX);
	memcpy(p, v->version, strnlen(v->version, TIER_VALUE_VERSION_HEX));
	p = put_i64(p + TIER_VALUE_VERSION_HEX, v->version_since);
	p = put_i64(p, v->validated_at);
	p = put_u16(p, (unsigned)str_len(v->etag));
	memcpy(p, v->etag != NULL ? v->etag : "", str_len(v->etag));
	p = put_u16(p + str_len(v->etag), (unsigned)str_len(v->last_modified));
	memcpy(p, v->last_modified != NULL ? v->last_modified : "",
	    str_len(v->last_modified));
	p += str_len(v->last_modified);
	*p++ = v->cause;
	return put_hist(p, v);
}

char *
tier_value_encode(const struct tier_value *v, size_t *len)
{
	size_t body_len = v->policy == TIER_POLICY_RULES ? v->body_len : 0;
	size_t total, hdr;
	unsigned char *buf, *p;

	if (value_check(v, body_len) == -1)
		return NULL;
	hdr = HEADER_LEN + PROV_LEN + str_len(v->etag) +
	      str_len(v->last_modified) + CAUSE_LEN + 1 + v->nhist * HIST_REC +
	      (hist_flagged(v) ? 1 + v->nhist : 0);
	total = PREFIX_LEN + hdr + NSTRINGS * 4 + strlen(v->origin) +
	        str_len(v->final_url) + str_len(v->last_error) + body_len + 4;
	if ((buf = malloc(total)) == NULL)
		return NULL;
	memcpy(buf, MAGIC, 4);
	p = put_u16(buf + 4, TIER_VALUE_VERSION);
	p = put_u16(p, (unsigned)hdr);
	p = put_u32(p, (uint32_t)total);
	p = put_header(p, v);
	p = put_str(p, v->origin, strlen(v->origin));
	p = put_str(p, v->final_url, str_len(v->final_url));
	p = put_str(p, v->last_error, str_len(v->last_error));
	p = put_str(p, v->body, body_len);
	put_u32(p, tier_crc32(buf, total - 4));
	*len = total;
	return (char *)buf;
}

/* Check the prefix and the checksum; the header length in *hdr. */
static enum tier_value_err
check_frame(const unsigned char *b, size_t len, size_t *hdr)
{
	uint32_t total;

	if (len >= 4 && memcmp(b, MAGIC, 4) != 0)
		return TV_MAGIC;
	if (len < PREFIX_LEN)
		return TV_TRUNCATED;
	if ((b[4] << 8 | b[5]) != TIER_VALUE_VERSION)
		return TV_VERSION;
	*hdr = (size_t)(b[6] << 8 | b[7]);
	total = get_u32(b + 8);
	if (total > len)
		return TV_TRUNCATED;
	if (total < len)
		return TV_LENGTH;
	if (len < PREFIX_LEN + 4 + *hdr)
		return TV_TRUNCATED;
	if (*hdr < HEADER_LEN)
		return TV_FIELD;
	if (tier_crc32(b, len - 4) != get_u32(b + len - 4))
		return TV_CHECKSUM;
	return TV_OK;
}

/*
 * The flags of the history's versions at p (before end), appended after
 * them: none (a count of 0), or as many as versions, each a known flag
 * set; TV_FIELD otherwise. What follows them is a later revision's:
 * skipped.
 */
static enum tier_value_err
get_hist_flags(
    const unsigned char *p, const unsigned char *end, struct tier_value *v)
{
	size_t i, n = *p++;

	if (n == 0)
		return TV_OK; /* none: a later revision's bytes may follow */
	if (n != v->nhist || (size_t)(end - p) < n)
		return TV_FIELD;
	for (i = 0; i < n; i++) {
		if (p[i] & ~TIER_HIST_FLAGS)
			return TV_FIELD;
		v->hist[i].flags = p[i];
	}
	return TV_OK;
}

/*
 * The history at p (before end), appended after the cause: every version
 * checked as the encoder checks them; TV_FIELD when one is wrong or they
 * do not fit. Their flags follow when a version has some.
 */
static enum tier_value_err
get_hist(const unsigned char *p, const unsigned char *end, struct tier_value *v)
{
	size_t i, n = *p++;
	struct tier_hist *h;

	if (n == 0)
		return TV_OK;
	if ((size_t)(end - p) / HIST_REC < n)
		return TV_FIELD;
	if ((v->hist = calloc(n, sizeof(*v->hist))) == NULL)
		return TV_NOMEM;
	for (i = 0; i < n; i++, p += HIST_REC) {
		h = &v->hist[i];
		memcpy(h->version, p, TIER_VALUE_VERSION_HEX);
		h->first_seen = get_i64(p + TIER_VALUE_VERSION_HEX);
		h->last_seen = get_i64(p + TIER_VALUE_VERSION_HEX + 8);
		h->http_status = p[HIST_REC - 3] << 8 | p[HIST_REC - 2];
		h->policy = (enum tier_policy)p[HIST_REC - 1];
		v->nhist = i + 1;
		if (!tier_hist_ok(v->hist, i))
			return TV_FIELD;
	}
	return p < end ? get_hist_flags(p, end, v) : TV_OK;
}

/*
 * The provenance fields and the cause appended to a header of hdr bytes at
 * p, if there; TV_FIELD when they are malformed.
 */
static enum tier_value_err
get_provenance(const unsigned char *p, size_t hdr, struct tier_value *v)
{
	const unsigned char *end = p + hdr;
	size_t i, n;
	char **out[2] = { &v->etag, &v->last_modified };

	if (hdr < HEADER_LEN + PROV_LEN)
		return TV_OK; /* written before provenance */
	p += HEADER_LEN;
	for (i = 0; i < TIER_VALUE_VERSION_HEX; i++) /* hex digits, or zeros */
		if (p[0] == 0 ? p[i] != 0
		              : !((p[i] >= '0' && p[i] <= '9') ||
		                    (p[i] >= 'a' && p[i] <= 'f')))
			return TV_FIELD;
	if (p[0] != 0)
		memcpy(v->version, p, TIER_VALUE_VERSION_HEX);
	v->version_since = get_i64(p + TIER_VALUE_VERSION_HEX);
	v->validated_at = get_i64(p + TIER_VALUE_VERSION_HEX + 8);
	p += TIER_VALUE_VERSION_HEX + 16;
	for (i = 0; i < 2; i++) {
		if (end - p < 2 ||
		    (n = (size_t)(p[0] << 8 | p[1])) > (size_t)(end - p - 2) ||
		    n > TIER_VALUE_MAX_VALIDATOR || memchr(p + 2, 0, n) != NULL)
			return TV_FIELD;
		if (n > 0) {
			if ((*out[i] = malloc(n + 1)) == NULL)
				return TV_NOMEM;
			memcpy(*out[i], p + 2, n);
			(*out[i])[n] = '\0';
		}
		p += 2 + n;
	}
	if (p == end)
		return TV_OK; /* written before the cause */
	v->cause = *p++;
	return p < end ? get_hist(p, end, v) : TV_OK; /* else before history */
}

static void
get_header(const unsigned char *p, struct tier_value *v)
{
	v->policy = (enum tier_policy)p[0];
	v->truncated = p[1];
	v->http_status = p[2] << 8 | p[3];
	v->fail_streak = get_u32(p + 4);
	v->fetched_at = get_i64(p + 8);
	v->expires_at = get_i64(p + 16);
	v->stale_until = get_i64(p + 24);
	v->fail_since = get_i64(p + 32);
	v->next_retry = get_i64(p + 40);
	v->retry_after = get_i64(p + 48);
}

/*
 * Take one string from *p (with *left bytes before the checksum): a copy in
 * *out (NULL when empty and !keep_empty). text: no NUL allowed.
 */
static enum tier_value_err
get_str(const unsigned char **p, size_t *left, size_t max, int text,
    int keep_empty, char **out, size_t *outlen)
{
	size_t n;

	if (*left < 4)
		return TV_TRUNCATED;
	n = get_u32(*p);
	if (n > *left - 4)
		return TV_TRUNCATED;
	if (n > max || (text && memchr(*p + 4, '\0', n) != NULL))
		return TV_FIELD;
	if (n > 0 || keep_empty) {
		if ((*out = malloc(n + 1)) == NULL)
			return TV_NOMEM;
		memcpy(*out, *p + 4, n);
		(*out)[n] = '\0';
	}
	if (outlen != NULL)
		*outlen = n;
	*p += 4 + n;
	*left -= 4 + n;
	return TV_OK;
}

static enum tier_value_err
get_strings(const unsigned char *p, size_t left, struct tier_value *v)
{
	int rules = v->policy == TIER_POLICY_RULES;
	enum tier_value_err e;

	if ((e = get_str(&p, &left, TIER_VALUE_MAX_ORIGIN, 1, 0, &v->origin,
	         NULL)) != TV_OK ||
	    (e = get_str(&p, &left, TIER_VALUE_MAX_URL, 1, 0, &v->final_url,
	         NULL)) != TV_OK ||
	    (e = get_str(&p, &left, TIER_VALUE_MAX_ERROR, 1, 0, &v->last_error,
	         NULL)) != TV_OK ||
	    (e = get_str(&p, &left, rules ? TIER_VALUE_MAX_BODY : 0, 0, rules,
	         &v->body, &v->body_len)) != TV_OK)
		return e;
	if (v->origin == NULL)
		return TV_FIELD;
	return left == 0 ? TV_OK : TV_LENGTH;
}

enum tier_value_err
tier_value_decode(
    const void *buf, size_t len, const char *origin, struct tier_value *v)
{
	const unsigned char *b = buf;
	enum tier_value_err e;
	size_t hdr = 0;

	memset(v, 0, sizeof(*v));
	if ((e = check_frame(b, len, &hdr)) != TV_OK)
		return e;
	get_header(b + PREFIX_LEN, v);
	if (v->policy > TIER_POLICY_DISALLOW || v->truncated > 1 ||
	    v->http_status > 999)
		e = TV_FIELD;
	else if ((e = get_provenance(b + PREFIX_LEN, hdr, v)) == TV_OK)
		e = get_strings(
		    b + PREFIX_LEN + hdr, len - PREFIX_LEN - hdr - 4, v);
	if (e == TV_OK && origin != NULL && strcmp(origin, v->origin) != 0)
		e = TV_ORIGIN;
	if (e != TV_OK)
		tier_value_clear(v);
	return e;
}

const char *
tier_value_strerror(enum tier_value_err e)
{
	switch (e) {
	case TV_OK:
		return "ok";
	case TV_TRUNCATED:
		return "truncated value";
	case TV_MAGIC:
		return "not a robotsd value (bad magic)";
	case TV_VERSION:
		return "value written by an incompatible robotsd version";
	case TV_LENGTH:
		return "value length does not match its header";
	case TV_CHECKSUM:
		return "value checksum mismatch";
	case TV_FIELD:
		return "value field out of range";
	case TV_ORIGIN:
		return "value belongs to another origin";
	case TV_NOMEM:
		return "out of memory";
	}
	return "unknown value error";
}

void
tier_value_clear(struct tier_value *v)
{
	if (v == NULL)
		return;
	free(v->origin);
	free(v->final_url);
	free(v->last_error);
	free(v->body);
	free(v->etag);
	free(v->last_modified);
	free(v->hist);
	memset(v, 0, sizeof(*v));
}

/* An origin's purge record (see tier_value.h). */
char *
tier_purge_encode(const char *origin, int64_t purged_at, size_t *len)
{
	size_t n = strlen(origin);
	unsigned char *buf, *p;

	if (n == 0 || n > TIER_VALUE_MAX_ORIGIN ||
	    (buf = malloc(TIER_PURGE_HDR + n)) == NULL)
		return NULL;
	memcpy(buf, "RBTP", 4);
	p = put_u16(buf + 4, 1);
	p = put_u16(p, 0);
	p = put_u32(p, (uint32_t)(TIER_PURGE_HDR + n));
	p = put_i64(p, purged_at);
	memcpy(p, origin, n);
	*len = TIER_PURGE_HDR + n;
	return (char *)buf;
}

/* The time of origin's purge record buf[0..len); -1: not one. */
int
tier_purge_decode(
    const void *buf, size_t len, const char *origin, int64_t *purged_at)
{
	const unsigned char *b = buf;
	size_t n = strlen(origin);
	int64_t ms;

	if (len != TIER_PURGE_HDR + n || memcmp(b, "RBTP\0\1\0\0", 8) != 0 ||
	    get_u32(b + 8) != len || memcmp(b + TIER_PURGE_HDR, origin, n) != 0)
		return -1;
	if ((ms = get_i64(b + 12)) <= 0)
		return -1;
	*purged_at = ms;
	return 0;
}
