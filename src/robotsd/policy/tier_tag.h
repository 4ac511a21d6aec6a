/*
 * tier_tag.h: the authentication tag of a shared tier value
 * (--redis-key-file). Pure: no I/O.
 *
 * With the fleet's key, what robotsd stores in Redis is the encoded value
 * (tier_value.h) followed by a trailer of TIER_TAG_LEN bytes: "RBTH" and
 * the HMAC-SHA256 under the key of the value's bytes. The trailer is
 * outside the value's own frame (its length and CRC-32 do not cover it),
 * so the value's format evolves on its own.
 */
#ifndef ROBOTSD_TIER_TAG_H
#define ROBOTSD_TIER_TAG_H

#include <stddef.h>

#define TIER_KEY_LEN 32
#define TIER_TAG_LEN (4 + 32)

/* The trailer of value[0..len) under key into tag. */
void tier_tag_make(const unsigned char *key, const void *value, size_t len,
    unsigned char *tag);

/*
 * The length of the value stored as buf[0..len), or -1 when refused. With
 * a key (non-NULL) buf must end with a trailer whose tag is right; without
 * one, a trailer, if buf has one, is dropped unchecked.
 */
long tier_tag_open(const unsigned char *key, const void *buf, size_t len);

/*
 * A key of its own for one use of the fleet's key (label: what it tags,
 * e.g. "robotsd feed v2"): the HMAC-SHA256 under key of label, into out
 * (TIER_KEY_LEN bytes); -1 when it could not be computed. A tag made
 * under it never passes for a tier value's, nor the other way round.
 */
int tier_key_derive(
    const unsigned char *key, const char *label, unsigned char *out);
/* 1 when two trailers (TIER_TAG_LEN bytes) are equal, in constant time. */
int tier_tag_equal(const unsigned char *a, const unsigned char *b);

/*
 * Parse a key file's text: 64 hex digits and an optional newline, into
 * key[TIER_KEY_LEN]; NULL when right, else why not.
 */
const char *tier_key_parse(const char *text, size_t len, unsigned char *key);

#endif /* ROBOTSD_TIER_TAG_H */
