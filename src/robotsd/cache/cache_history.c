/*
 * cache_history.c: the last --history-depth distinct versions of each
 * cached origin. An origin that only ever had one version keeps none here
 * (its entry is that version); an array of depth records of 20 bytes is
 * allocated once a second version comes, counted in the entry's bytes.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache_int.h"

/* One version: its id in binary, its times in Unix seconds. */
struct hist_rec {
	uint8_t id[VERSION_HEX / 2];
	uint32_t first_seen, last_seen;
	int16_t http_status;
	uint8_t policy;
	uint8_t flags; /* CACHE_VERSION_* */
};

struct history {
	uint8_t n, cap;
	struct hist_rec r[]; /* newest first */
};

/* Clock seconds as kept: whole seconds, clamped to what 32 bits hold. */
static uint32_t
hist_time(double t)
{
	return t <= 0 ? 0 : t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

/* A hex digit's value (the id was written by version.c: lower case). */
static unsigned
hist_nibble(char c)
{
	return c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0');
}

/* The record of a version as an entry held it. */
static struct hist_rec
hist_rec_of(const char *version, double since, double validated, int status,
    int policy, unsigned flags)
{
	struct hist_rec h = { .first_seen = hist_time(since),
		.last_seen = hist_time(validated > since ? validated : since),
		.http_status = (int16_t)status,
		.policy = (uint8_t)policy,
		.flags = (uint8_t)(policy == CACHE_RULES ? flags : 0) };
	size_t i;

	for (i = 0; i < sizeof(h.id); i++)
		h.id[i] = (uint8_t)(hist_nibble(version[2 * i]) << 4 |
		                    hist_nibble(version[2 * i + 1]));
	/* A copy served while failing is still the 2xx it came with. */
	if (policy == CACHE_RULES && (status < 200 || status > 299))
		h.http_status = 200;
	return h;
}

/* Forget an entry's history. */
void
cache_history_free(struct entry *e)
{
	free(e->hist);
	e->hist = NULL;
}

/* Put h first, dropping an older record of the same id and the oldest. */
static void
hist_push(struct history *hs, const struct hist_rec *h, size_t depth)
{
	size_t i, n = hs->n;

	for (i = 0; i < n; i++)
		if (memcmp(hs->r[i].id, h->id, sizeof(h->id)) == 0)
			break;
	if (i == n && n == depth)
		i = n - 1; /* full: the oldest goes */
	else if (i == n)
		hs->n++;
	memmove(&hs->r[1], &hs->r[0], i * sizeof(hs->r[0]));
	hs->r[0] = *h;
}

/* See cache_int.h. */
void
cache_history_note(
    const struct cache *c, struct entry *e, const struct cache_snap *old)
{
	size_t depth = c->set.history_depth;
	struct hist_rec h;

	e->vflags = (uint8_t)cache_entry_flags(c, &e->pub);
	if (depth < 2 || e->pub.version[0] == '\0') {
		cache_history_free(e);
		return;
	}
	if (depth > UINT8_MAX)
		depth = UINT8_MAX;
	if (strcmp(old->version, e->pub.version) == 0) {
		if (e->hist != NULL)
			e->hist->r[0].last_seen =
			    hist_time(e->pub.validated_at);
		return;
	}
	if (e->hist == NULL) {
		if (old->version[0] == '\0')
			return; /* the entry is its only version */
		if ((e->hist = malloc(sizeof(*e->hist) +
		                      depth * sizeof(e->hist->r[0]))) == NULL)
			return;
		e->hist->cap = (uint8_t)depth;
		e->hist->n = 1;
		e->hist->r[0] =
		    hist_rec_of(old->version, old->since, old->validated_at,
		        old->http_status, old->policy, old->flags);
	}
	if (depth > e->hist->cap)
		depth = e->hist->cap;
	if (e->hist->n > depth)
		e->hist->n = (uint8_t)depth;
	h = hist_rec_of(e->pub.version, e->pub.version_since,
	    e->pub.validated_at, e->pub.http_status, e->pub.policy, e->vflags);
	hist_push(e->hist, &h, depth);
}

/* The record of a version the caller gives (cache_version). */
static struct hist_rec
hist_rec_in(const struct cache_version *v)
{
	return hist_rec_of(v->version, v->first_seen, v->last_seen,
	    v->http_status, (int)v->policy, v->flags);
}

/* See cache_int.h. */
int
cache_history_set(const struct cache *c, struct entry *e,
    const struct cache_version *v, size_t n)
{
	size_t depth = c->set.history_depth, i;
	struct history *hs;

	if (depth > UINT8_MAX)
		depth = UINT8_MAX;
	if (n > depth)
		n = depth; /* the newest depth of them */
	if (n < 2 || e->pub.version[0] == '\0' ||
	    strcmp(v[0].version, e->pub.version) != 0)
		return -1;
	if ((hs = malloc(sizeof(*hs) + depth * sizeof(hs->r[0]))) == NULL)
		return -1;
	hs->cap = (uint8_t)depth;
	hs->n = (uint8_t)n;
	for (i = 0; i < n; i++)
		hs->r[i] = hist_rec_in(&v[i]);
	cache_history_free(e);
	e->hist = hs;
	return 0;
}

/* A record for the caller. */
static void
hist_out(const struct hist_rec *h, struct cache_version *v)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < sizeof(h->id); i++) {
		v->version[2 * i] = hex[h->id[i] >> 4];
		v->version[2 * i + 1] = hex[h->id[i] & 15];
	}
	v->version[VERSION_HEX] = '\0';
	v->first_seen = h->first_seen;
	v->last_seen = h->last_seen;
	v->http_status = h->http_status;
	v->policy = (enum cache_policy)h->policy;
	v->flags = h->flags;
}

/* An entry's versions, newest first; see cache.h. */
size_t
cache_history(
    const struct cache_entry *pe, struct cache_version *out, size_t max)
{
	const struct entry *e = (const struct entry *)(const void *)pe;
	struct hist_rec h;
	size_t i;

	if (e->hist != NULL) {
		for (i = 0; i < e->hist->n && i < max; i++)
			hist_out(&e->hist->r[i], &out[i]);
		return i;
	}
	if (pe->version[0] == '\0' || max == 0)
		return 0;
	h = hist_rec_of(pe->version, pe->version_since, pe->validated_at,
	    pe->http_status, pe->policy, e->vflags);
	hist_out(&h, &out[0]);
	return 1;
}

/* qsort: the version first seen last goes first. */
static int
hist_newer_first(const void *a, const void *b)
{
	const struct cache_version *x = a, *y = b;

	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? 1 : -1;
	if (x->last_seen != y->last_seen)
		return x->last_seen < y->last_seen ? 1 : -1;
	return 0;
}

/* Where version id is in v[0..n), or n. */
static size_t
hist_find(const struct cache_version *v, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].version, id) == 0)
			break;
	return i;
}

/* See cache_int.h. */
void
cache_history_merge(const struct cache *c, struct entry *e,
    const struct cache_version *in, size_t n)
{
	struct cache_version *all;
	size_t i, k, m;

	if (n == 0 || c->set.history_depth < 2 || e->pub.version[0] == '\0')
		return;
	if (n > CACHE_MAX_HISTORY)
		n = CACHE_MAX_HISTORY;
	if ((all = malloc((CACHE_MAX_HISTORY + n) * sizeof(*all))) == NULL)
		return;
	m = cache_history(&e->pub, all, CACHE_MAX_HISTORY);
	for (i = 0; i < n; i++) {
		if ((k = hist_find(all, m, in[i].version)) == m)
			all[m++] = in[i];
		else if (k > 0) { /* the current one is the entry's own */
			all[k].first_seen =
			    fmin(all[k].first_seen, in[i].first_seen);
			all[k].last_seen =
			    fmax(all[k].last_seen, in[i].last_seen);
		}
	}
	if (m > 1)
		qsort(all + 1, m - 1, sizeof(*all), hist_newer_first);
	(void)cache_history_set(c, e, all, m);
	free(all);
}

/* See cache.h. */
unsigned
cache_entry_flags(const struct cache *c, const struct cache_entry *e)
{
	if (e->policy != CACHE_RULES || e->doc == NULL ||
	    c->kind->flags == NULL)
		return 0;
	return c->kind->flags(e->doc);
}

/* See cache.h. */
const char *
cache_version_state(
    const struct cache *c, enum cache_policy policy, unsigned flags)
{
	if (c->kind->version_state != NULL)
		return c->kind->version_state((int)policy, flags);
	return cache_policy_name(policy);
}

/* See cache.h. */
size_t
cache_history_learn(struct cache *c, const char *origin,
    const struct cache_version *v, size_t n, struct cache_version *out)
{
	struct entry *e = cache_lookup(c, origin);

	if (e == NULL || e->pub.version[0] == '\0' ||
	    e->pub.policy == CACHE_NONE) {
		if (n > CACHE_MAX_HISTORY)
			n = CACHE_MAX_HISTORY;
		if (n > 0) /* v may be NULL when there is none */
			memcpy(out, v, n * sizeof(*out));
		return n;
	}
	cache_history_merge(c, e, v, n);
	return cache_history(&e->pub, out, CACHE_MAX_HISTORY);
}
