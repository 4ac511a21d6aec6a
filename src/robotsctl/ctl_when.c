/*
 * ctl_when.c: TIME and the version in force at a time (ctl_when.h).
 */
#include <config.h>

#include <stdlib.h>

#include "civil.h"
#include "ctl_when.h"

/* n digits at s as a number, or -1 when one is not a digit. */
static long
digits(const char *s, size_t n)
{
	long v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Days in month m of year y. */
static long
month_days(long y, long m)
{
	static const long days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/* Digits after a '.' at s[*i] as a fraction; -1 when none follows it. */
static double
fraction(const char *s, size_t len, size_t *i)
{
	double f = 0, scale = 0.1;
	size_t start;

	if (*i >= len || s[*i] != '.')
		return 0;
	start = ++*i;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
		f += (s[*i] - '0') * scale;
		scale /= 10;
		++*i;
	}
	return *i > start ? f : -1;
}

/* Unix seconds: digits, an optional fraction. */
static int
parse_unix(const char *s, size_t len, double *t)
{
	double v = 0, f;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	if (i == 0 || i > 15 || (f = fraction(s, len, &i)) < 0 || i != len)
		return -1;
	*t = v + f;
	return 0;
}

/* The offset at s ("Z", "+hh:mm", "-hh:mm") in seconds east; -1 if bad. */
static int
offset(const char *s, size_t len, long *off)
{
	long h, m;

	if (len == 1 && (s[0] == 'Z' || s[0] == 'z')) {
		*off = 0;
		return 0;
	}
	if (len != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' ||
	    (h = digits(s + 1, 2)) < 0 || (m = digits(s + 4, 2)) < 0 ||
	    h > 23 || m > 59)
		return -1;
	*off = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
	return 0;
}

/* RFC 3339 date-time. */
static int
parse_rfc3339(const char *s, size_t len, double *t)
{
	long y, mo, d, h, mi, sec, off;
	size_t i = 19;
	double f;

	if (len < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
		return -1;
	y = digits(s, 4);
	mo = digits(s + 5, 2);
	d = digits(s + 8, 2);
	h = digits(s + 11, 2);
	mi = digits(s + 14, 2);
	sec = digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return -1;
	if ((f = fraction(s, len, &i)) < 0 || offset(s + i, len - i, &off))
		return -1;
	*t = (double)(civil_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	              off) +
	     f;
	return 0;
}

/* See ctl_when.h. */
int
ctl_parse_time(const char *s, size_t len, double *t)
{
	if (len > 4 && s[4] == '-')
		return parse_rfc3339(s, len, t);
	return parse_unix(s, len, t);
}

/* qsort order: by time, then as read. */
static int
by_time(const void *a, const void *b)
{
	const struct ctl_capture *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* See ctl_when.h. */
size_t
ctl_timeline(struct ctl_capture *c, size_t n)
{
	size_t i, k = 0;

	if (n == 0)
		return 0;
	qsort(c, n, sizeof(*c), by_time);
	for (i = 1; i < n; i++)
		if (c[i].ver != c[k].ver)
			c[++k] = c[i];
	return k + 1;
}

/* See ctl_when.h. */
long
ctl_timeline_at(const struct ctl_capture *c, size_t n, double t)
{
	size_t lo = 0, hi = n; /* the first later than t is in [lo, hi] */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].at <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}
