/*
 * civil.h: days of the proleptic Gregorian calendar, for the dates robotsd
 * reads (HTTP dates, lifetime.c), robotsctl reads (RFC 3339 times,
 * ctl_when.c) and librobots reads (unavailable_after, robots_tag_date.c).
 * Header-only, pure.
 */
#ifndef ROBOTS_CIVIL_H
#define ROBOTS_CIVIL_H

/* Days from 1970-01-01 to y-m-d (m 1-12; H. Hinnant's days_from_civil). */
static inline long long
civil_days(long y, long m, long d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

#endif /* ROBOTS_CIVIL_H */
