/*
 * looplag.h: how long the event loop keeps the daemon from answering. A
 * timer due every 10 ms measures how late it fires: a turn of the loop
 * that runs long (a callback doing too much at once) makes it late by as
 * much. The last 1,000 samples (10 s while nothing is late) give the p99
 * and the maximum the counters table shows; a histogram of every sample
 * since start gives Prometheus any quantile over any range.
 *
 * Of each lateness, the part the loop's own thread spent running (its CPU
 * time) tells robotsd's long turns from a busy machine's: while the daemon
 * waits for a CPU taken by other processes, the timer is late but that
 * part does not grow. Of the CPU time between arming the timer and its
 * firing, at most one tick can have gone before it was due: the rest is
 * work done while it was late.
 */
#ifndef ROBOTSD_LOOPLAG_H
#define ROBOTSD_LOOPLAG_H

#include <stdint.h>

struct event_base;
struct histo;
struct looplag;

struct looplag_stats {
	uint64_t p99_us; /* 99th percentile lateness, last 1,000 samples */
	uint64_t max_us; /* the largest of them */
	/* the part of each that the loop spent working: p99, the largest */
	uint64_t work_p99_us, work_max_us;
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
