/*
 * tier_tag.c: HMAC-SHA256 tags of shared tier values and the fleet key's
 * format; see tier_tag.h. OpenSSL's libcrypto (already under libcurl).
 */
#include <config.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "robots.h"
#include "policy/tier_tag.h"

#define TAG_MAGIC "RBTH"
#define FRAME_LEN_AT 8 /* the value's u32 total length (tier_value.h) */

void
tier_tag_make(
    const unsigned char *key, const void *value, size_t len, unsigned char *tag)
{
	unsigned int n = 32;

	memcpy(tag, TAG_MAGIC, 4);
	if (HMAC(EVP_sha256(), key, TIER_KEY_LEN, value, len, tag + 4, &n) ==
	    NULL)
		memset(tag + 4, 0, 32); /* never matches a real tag */
}

/* Whether buf[0..len) is a value followed by a trailer (unchecked). */
static int
has_trailer(const unsigned char *b, size_t len)
{
	uint32_t framed;

	if (len < TIER_TAG_LEN + FRAME_LEN_AT + 4)
		return 0;
	framed = (uint32_t)b[FRAME_LEN_AT] << 24 |
	         (uint32_t)b[FRAME_LEN_AT + 1] << 16 |
	         (uint32_t)b[FRAME_LEN_AT + 2] << 8 | b[FRAME_LEN_AT + 3];
	return framed == len - TIER_TAG_LEN &&
	       memcmp(b + framed, TAG_MAGIC, 4) == 0;
}

long
tier_tag_open(const unsigned char *key, const void *buf, size_t len)
{
	unsigned char want[TIER_TAG_LEN];
	size_t n;

	if (!has_trailer(buf, len))
		return key == NULL && len <= LONG_MAX ? (long)len : -1;
	n = len - TIER_TAG_LEN;
	if (key == NULL)
		return (long)n;
	tier_tag_make(key, buf, n, want);
	if (CRYPTO_memcmp(want, (const unsigned char *)buf + n, TIER_TAG_LEN) !=
	    0)
		return -1;
	return (long)n;
}

int
tier_key_derive(const unsigned char *key, const char *label, unsigned char *out)
{
	unsigned int n = TIER_KEY_LEN;

	return HMAC(EVP_sha256(), key, TIER_KEY_LEN,
	           (const unsigned char *)label, strlen(label), out, &n) != NULL
	           ? 0
	           : -1;
}

int
tier_tag_equal(const unsigned char *a, const unsigned char *b)
{
	return CRYPTO_memcmp(a, b, TIER_TAG_LEN) == 0;
}

const char *
tier_key_parse(const char *text, size_t len, unsigned char *key)
{
	size_t i;
	int hi, lo;

	if (len == 2 * TIER_KEY_LEN + 1 && text[len - 1] == '\n')
		len--;
	if (len != 2 * TIER_KEY_LEN)
		return "not 64 hex digits (and an optional newline)";
	for (i = 0; i < TIER_KEY_LEN; i++) {
		if ((hi = robots_hexval((unsigned char)text[2 * i])) < 0 ||
		    (lo = robots_hexval((unsigned char)text[2 * i + 1])) < 0)
			return "not 64 hex digits (and an optional newline)";
		key[i] = (unsigned char)(hi << 4 | lo);
	}
	return NULL;
}
