/*
 * fnv.h: FNV-1a, the one non-cryptographic hash of robotsd and librobots
 * (hash tables, the tier ring, the feed's agent sets, the CA bundle's
 * identity). Header-only, no state: start from FNV1A64_INIT (or
 * FNV1A32_INIT) and feed the bytes, in as many calls as needed.
 */
#ifndef ROBOTSD_FNV_H
#define ROBOTSD_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_INIT 0xcbf29ce484222325ULL
#define FNV1A64_PRIME 0x100000001b3ULL
#define FNV1A32_INIT 2166136261u
#define FNV1A32_PRIME 16777619u

/* h extended by len bytes of buf. */
static inline uint64_t
fnv1a64(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len-- > 0)
		h = (h ^ *p++) * FNV1A64_PRIME;
	return h;
}

/* h extended by the bytes of the string s (without its NUL). */
static inline uint64_t
fnv1a64_str(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * FNV1A64_PRIME;
	return h;
}

/* h extended by one 32-bit word, taken whole (not byte by byte). */
static inline uint32_t
fnv1a32_word(uint32_t h, uint32_t w)
{
	return (h ^ w) * FNV1A32_PRIME;
}

#endif /* ROBOTSD_FNV_H */
