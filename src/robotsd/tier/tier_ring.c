/*
 * tier_ring.c: the consistent hash ring of tier_ring.h, a sorted array of
 * (point, server) searched by bisection.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tier/tier_ring.h"

struct ring_point {
	uint64_t hash;
	size_t server;
};

struct tier_ring {
	struct ring_point *points;
	size_t npoints;
};

uint64_t
tier_hash(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len-- > 0) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static int
point_cmp(const void *a, const void *b)
{
	const struct ring_point *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->server < y->server ? -1 : x->server > y->server;
}

struct tier_ring *
tier_ring_new(const char *const *names, size_t n)
{
	struct tier_ring *r;
	char buf[64];
	size_t i, k, nlen;
	uint64_t h;

	if (n == 0 || (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->points = calloc(n * TIER_RING_VNODES, sizeof(*r->points));
	if (r->points == NULL) {
		free(r);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		nlen = strlen(names[i]);
		h = tier_hash(names[i], nlen);
		for (k = 0; k < TIER_RING_VNODES; k++) {
			/* Each point: the name's hash and the point's number.
			 */
			snprintf(buf, sizeof(buf), "%016llx#%zu",
			    (unsigned long long)h, k);
			r->points[r->npoints].hash =
			    tier_hash(buf, strlen(buf));
			r->points[r->npoints++].server = i;
		}
	}
	qsort(r->points, r->npoints, sizeof(*r->points), point_cmp);
	return r;
}

void
tier_ring_free(struct tier_ring *r)
{
	if (r == NULL)
		return;
	free(r->points);
	free(r);
}

size_t
tier_ring_lookup(const struct tier_ring *r, const char *key)
{
	uint64_t h = tier_hash(key, strlen(key));
	size_t lo = 0, hi = r->npoints, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->points[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r->points[lo == r->npoints ? 0 : lo].server;
}
