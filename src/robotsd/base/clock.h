/*
 * clock.h: the daemon's notion of "now", in seconds. Everything that reads
 * the time for cache lifetimes and retry schedules goes through here, so
 * that tests can move time forward (the hidden "clock" op under
 * --test-clock) without sleeping, and unit tests can freeze it.
 */
#ifndef ROBOTSD_CLOCK_H
#define ROBOTSD_CLOCK_H

struct clock {
	double offset; /* seconds added to the wall clock */
	double frozen; /* when > 0: the wall clock stands still here (tests) */
	double held;   /* when > 0: "now" while a request line is answered */
	double stamp;  /* clock_hold_at()'s last stamp, and its reading: */
	double read;   /* the wall clock without the offset */
};

/* Wall-clock seconds since the epoch, with the test offset added. */
double clock_now(const struct clock *);
/*
 * Wall-clock seconds without the test offset (c may be NULL): the frame
 * origin servers live in. Only for turning an HTTP date into a duration
 * when the response has no Date header (see docs/internals/cache.md), and
 * for deadlines that tests never move.
 */
double clock_wall(const struct clock *);
/* Move the clock forward (or back), a held "now" with it. */
void clock_advance(struct clock *, double seconds);
/*
 * Read the clock once and answer that reading from clock_now() until
 * clock_release(): a request line is answered at one instant (every URL
 * of a batch gets the same lifetimes), and a batch of N URLs reads the
 * system clock once instead of 2N times.
 */
void clock_hold(struct clock *);
/*
 * clock_hold() for a line of the lines read together, which the server
 * stamped alike (stamp > 0, reply.h's t0): the first reads the clock, the
 * others reuse that reading (the test offset added anew to each).
 */
void clock_hold_at(struct clock *, double stamp);
void clock_release(struct clock *);
/* Monotonic seconds (no test offset): for deadlines such as a save's. */
double clock_monotonic(void);

#endif /* ROBOTSD_CLOCK_H */
