/*
 * tier_ring.h: consistent hashing of origin keys onto the shared tier's
 * Redis servers. Pure: no I/O.
 *
 * Each server puts TIER_RING_VNODES points on a 64-bit ring, hashed from
 * its name (its canonical URL, without password), so the map depends on
 * the set of servers and not on the order they were given in; an origin
 * belongs to the first point at or after its own hash. Adding a server to
 * N moves only about 1/(N+1) of the origins, all of them to the new one.
 */
#ifndef ROBOTSD_TIER_RING_H
#define ROBOTSD_TIER_RING_H

#include <stddef.h>
#include <stdint.h>

#define TIER_RING_VNODES 160

struct tier_ring;

/*
 * A ring over names[0..n) (n >= 1, names distinct); NULL when memory runs
 * out. The ring keeps no pointer to the names.
 */
struct tier_ring *tier_ring_new(const char *const *names, size_t n);
void tier_ring_free(struct tier_ring *); /* NULL is fine */
/* Index in names[] of the server that holds key. */
size_t tier_ring_lookup(const struct tier_ring *, const char *key);
/* The 64-bit hash the ring uses (FNV-1a, then a splitmix64 finalizer). */
uint64_t tier_hash(const void *buf, size_t len);

#endif /* ROBOTSD_TIER_RING_H */
