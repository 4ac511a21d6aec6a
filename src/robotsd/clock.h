/*
 * clock.h: the daemon's notion of "now", in seconds. Everything that reads
 * the time for cache lifetimes and retry schedules goes through here, so
 * that tests can move time forward (the hidden "clock" op under --test-clock)
 * without sleeping.
 */
#ifndef ROBOTSD_CLOCK_H
#define ROBOTSD_CLOCK_H

struct clock {
	double offset; /* seconds added to the real monotonic-based clock */
};

/* Wall-clock seconds (with the test offset). */
double clock_now(const struct clock *);
void clock_advance(struct clock *, double seconds);

#endif /* ROBOTSD_CLOCK_H */
