/*
 * ctl_when.h: the pure rules of recheck (ctl_recheck.c): reading a TIME
 * and choosing the version in force at a time from an origin's captures.
 * No I/O; tests/unit/check_ctl_when.c holds their tables.
 */
#ifndef ROBOTSD_CTL_WHEN_H
#define ROBOTSD_CTL_WHEN_H

#include <stddef.h>

/*
 * The Unix time of TIME (len bytes): RFC 3339 section 5.6 date-time
 * ("2024-05-01T12:00:00Z", "2024-05-01t14:00:00.5+02:00"; a leap second
 * 60 is the next second) or Unix seconds (digits, an optional fraction).
 * 0, or -1 when TIME is neither or names no real date.
 */
int ctl_parse_time(const char *s, size_t len, double *t);

/* One capture of an origin's robots.txt: when, and which version. */
struct ctl_capture {
	double at;    /* Unix seconds */
	unsigned ver; /* the caller's index of the version */
	unsigned seq; /* the order it was read in: breaks ties of at */
};

/*
 * Sort n captures by time (equal times in the order read) and merge each
 * run of one version into its first capture, whose at is then when that
 * version was first seen in force; the number left.
 */
size_t ctl_timeline(struct ctl_capture *, size_t n);

/*
 * The capture in force at t in a timeline: the newest first seen at or
 * before t; -1 when every capture is later than t (or n is 0).
 */
long ctl_timeline_at(const struct ctl_capture *, size_t n, double t);

#endif /* ROBOTSD_CTL_WHEN_H */
