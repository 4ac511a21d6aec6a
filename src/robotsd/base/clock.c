/*
 * clock.c: the daemon's "now": wall-clock seconds plus a test offset that
 * the hidden "clock" op moves forward, so lifetimes can be tested without
 * sleeping; unit tests freeze the wall clock itself.
 */
#include <config.h>

#include <time.h>

#include "base/clock.h"

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

/* Wall-clock seconds, with the test offset added; or the held reading. */
double
clock_now(const struct clock *c)
{
	if (c != NULL && c->held > 0)
		return c->held;
	return clock_wall(c) + (c != NULL ? c->offset : 0);
}

/* Move this clock forward (or back) by seconds. */
void
clock_advance(struct clock *c, double seconds)
{
	c->offset += seconds;
	if (c->held > 0)
		c->held += seconds;
}

/* Answer clock_now() from one reading until clock_release(). */
void
clock_hold(struct clock *c)
{
	c->held = 0;
	c->held = clock_now(c);
}

void
clock_hold_at(struct clock *c, double stamp)
{
	if (c->frozen > 0 || stamp <= 0 || stamp != c->stamp) {
		c->read = clock_wall(c);
		c->stamp = stamp;
	}
	c->held = c->read + c->offset;
}

void
clock_release(struct clock *c)
{
	c->held = 0;
}

/* Monotonic seconds, for deadlines that must not move with the clock. */
double
clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
