/*
 * looplag.h: how long the event loop keeps the daemon from answering. A
 * timer due every 10 ms measures how late it fires: a turn of the loop
 * that runs long (a callback doing too much at once) makes it late by as
 * much. The last 1,000 samples (10 s while nothing is late) give the p99
 * and the maximum the counters table shows; a histogram of every sample
 * since start gives Prometheus any quantile over any range.
 */
#ifndef ROBOTSD_LOOPLAG_H
#define ROBOTSD_LOOPLAG_H

#include <stdint.h>

struct event_base;
struct histo;
struct looplag;

struct looplag_stats {
	uint64_t p99_us;  /* 99th percentile lateness, last 1,000 samples */
	uint64_t max_us;  /* the largest of them */
	uint64_t late;    /* samples late by more than 10 ms, since start */
	uint64_t samples; /* samples since start */
};

struct looplag *looplag_new(struct event_base *);
void looplag_free(struct looplag *); /* NULL ok */
struct looplag_stats looplag_stats(const struct looplag *);
const struct histo *looplag_histo(const struct looplag *);
/* Microseconds on the monotonic clock, for timing work within a turn. */
uint64_t looplag_now_us(void);

#endif /* ROBOTSD_LOOPLAG_H */
