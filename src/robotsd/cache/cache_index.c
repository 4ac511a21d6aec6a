/*
 * cache_index.c: the cache's origin index, a chained hash table (FNV-1a,
 * doubling when entries reach the bucket count) over the entries of
 * cache_int.h: O(1) lookup.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache_int.h"

/* FNV-1a, 64 bits. */
uint64_t
cache_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Find an origin's entry, or NULL. */
struct entry *
cache_lookup(const struct cache *c, const char *origin)
{
	uint64_t h = cache_hash(origin);
	struct entry *e;

	for (e = c->buckets[h & (c->nbuckets - 1)]; e != NULL; e = e->hnext)
		if (e->hash == (uint32_t)h && strcmp(e->origin, origin) == 0)
			return e;
	return NULL;
}

/* Start loading what a lookup of origin reads first: its bucket. */
void
cache_prefetch(const struct cache *c, const char *origin)
{
	__builtin_prefetch(&c->buckets[cache_hash(origin) & (c->nbuckets - 1)]);
}

/*
 * Double the bucket array; on memory exhaustion keep the old one. Entries
 * keep 32 bits of their hash: buckets stay fewer than 2^32.
 */
void
cache_grow(struct cache *c)
{
	size_t n = c->nbuckets * 2, i;
	struct entry **b, *e, *next;

	if ((b = calloc(n, sizeof(*b))) == NULL)
		return;
	for (i = 0; i < c->nbuckets; i++) {
		for (e = c->buckets[i]; e != NULL; e = next) {
			next = e->hnext;
			e->hnext = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

/* Take an entry out of the hash chain. */
void
cache_unhash(struct cache *c, struct entry *e)
{
	struct entry **pp = &c->buckets[e->hash & (c->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	e->hnext = NULL;
}
