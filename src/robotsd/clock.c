/*
 * clock.c: the daemon's "now": wall-clock seconds plus a test offset that
 * the hidden "clock" op moves forward, so lifetimes can be tested without
 * sleeping; unit tests freeze the wall clock itself.
 */
#include <config.h>

#include <time.h>

#include "clock.h"

/* Wall-clock seconds without the test offset. */
double
clock_wall(const struct clock *c)
{
	struct timespec ts;

	if (c != NULL && c->frozen > 0)
		return c->frozen;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall-clock seconds, with the test offset added. */
double
clock_now(const struct clock *c)
{
	return clock_wall(c) + (c != NULL ? c->offset : 0);
}

/* Move this clock forward (or back) by seconds. */
void
clock_advance(struct clock *c, double seconds)
{
	c->offset += seconds;
}

/* Monotonic seconds, for deadlines that must not move with the clock. */
double
clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
