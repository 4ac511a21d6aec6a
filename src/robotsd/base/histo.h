/*
 * histo.h: a latency histogram in seconds with fixed bucket bounds (the
 * same for every histogram of the daemon, from 100 us to 60 s), as
 * Prometheus histograms are exposed. Observing is O(buckets), no memory.
 */
#ifndef ROBOTSD_HISTO_H
#define ROBOTSD_HISTO_H

#include <stddef.h>
#include <stdint.h>

#define HISTO_BUCKETS 18

struct histo {
	uint64_t bucket[HISTO_BUCKETS + 1]; /* per bucket, not cumulative;
	                                       the last is above every bound */
	uint64_t count;
	double sum; /* seconds */
};

/* The upper bounds ("le") of the buckets, ascending. */
extern const double histo_bounds[HISTO_BUCKETS];

/* Count one observation of seconds (negative counts as 0). */
void histo_observe(struct histo *, double seconds);
/* n observations of seconds. */
void histo_observe_n(struct histo *, double seconds, uint64_t n);
/* Observations <= histo_bounds[i] (i == HISTO_BUCKETS: all of them). */
uint64_t histo_cumulative(const struct histo *, size_t i);
/* Seconds on the monotonic clock, for measuring durations. */
double histo_now(void);

#endif /* ROBOTSD_HISTO_H */
