/*
 * histo.c: fixed-bucket latency histograms (histo.h).
 */
#include <config.h>

#include <time.h>

#include "base/histo.h"

const double histo_bounds[HISTO_BUCKETS] = { 0.0001, 0.00025, 0.0005, 0.001,
	0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
	60 };

void
histo_observe(struct histo *h, double seconds)
{
	histo_observe_n(h, seconds, 1);
}

void
histo_observe_n(struct histo *h, double seconds, uint64_t n)
{
	size_t i;

	if (!(seconds > 0))
		seconds = 0;
	for (i = 0; i < HISTO_BUCKETS && seconds > histo_bounds[i]; i++)
		;
	h->bucket[i] += n;
	h->count += n;
	h->sum += seconds * (double)n;
}

uint64_t
histo_cumulative(const struct histo *h, size_t i)
{
	uint64_t n = 0;
	size_t j;

	for (j = 0; j <= i && j <= HISTO_BUCKETS; j++)
		n += h->bucket[j];
	return n;
}

double
histo_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
