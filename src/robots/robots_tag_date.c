/*
 * robots_tag_date.c: the dates of unavailable_after (robots_tag.h lists
 * the forms): RFC 1123, RFC 850 and RFC 822 dates as Google documents for
 * the rule, and ISO 8601 dates and date-times. The calendar arithmetic is
 * civil.h's, as for the HTTP dates robotsd reads.
 */
#include <config.h>

#include <string.h>

#include "civil.h"
#include "robots_int.h"
#include "robots_tag.h"
#include "robots_tag_int.h"

struct rtd_cur {
	const char *s;
	size_t i, n;
};

/* Between min and max digits into *v; 0, or -1 with fewer than min. */
static int
robots_tag_date_num(struct rtd_cur *c, size_t min, size_t max, int *v)
{
	size_t k = 0;

	*v = 0;
	while (
	    k < max && c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
		*v = *v * 10 + (c->s[c->i++] - '0');
		k++;
	}
	return k >= min ? 0 : -1;
}

/* Whether the next byte is ch; consumed if so. */
static int
robots_tag_date_eat(struct rtd_cur *c, char ch)
{
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return 1;
	}
	return 0;
}

static void
robots_tag_date_spaces(struct rtd_cur *c)
{
	while (c->i < c->n && c->s[c->i] == ' ')
		c->i++;
}

/* The letters at the cursor: their count, consumed. */
static size_t
robots_tag_date_word(struct rtd_cur *c, const char **w)
{
	size_t start = c->i;

	*w = c->s + c->i;
	while (c->i < c->n && ((c->s[c->i] >= 'a' && c->s[c->i] <= 'z') ||
	                          (c->s[c->i] >= 'A' && c->s[c->i] <= 'Z')))
		c->i++;
	return c->i - start;
}

int
robots_tag_weekday(const char *s, size_t n)
{
	static const char *const days[] = { "monday", "tuesday", "wednesday",
		"thursday", "friday", "saturday", "sunday" };
	size_t d, i;

	for (d = 0; d < 7; d++) {
		if (n != 3 && n != strlen(days[d]))
			continue;
		i = 0;
		while (i < n && ascii_lower((unsigned char)s[i]) == days[d][i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* Seconds since the epoch, or -1 when a field is out of range. */
static int
robots_tag_date_make(const int f[6], int zone_min, int64_t *t)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };
	int y = f[0], m = f[1], d = f[2], leap;

	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1000 || y > 9999 || m < 1 || m > 12 || d < 1 ||
	    d > mdays[m - 1] || (m == 2 && d == 29 && !leap) || f[3] > 23 ||
	    f[4] > 59 || f[5] > 60)
		return -1;
	*t = (int64_t)civil_days(y, m, d) * 86400 + f[3] * 3600 + f[4] * 60 +
	     f[5] - (int64_t)zone_min * 60;
	return 0;
}

/* "hh:mm" and optional ":ss" into f[3..5]. */
static int
robots_tag_date_time(struct rtd_cur *c, int f[6])
{
	if (robots_tag_date_num(c, 2, 2, &f[3]) != 0 ||
	    !robots_tag_date_eat(c, ':') ||
	    robots_tag_date_num(c, 2, 2, &f[4]) != 0)
		return -1;
	f[5] = 0;
	if (robots_tag_date_eat(c, ':') &&
	    robots_tag_date_num(c, 2, 2, &f[5]) != 0)
		return -1;
	return 0;
}

/* "+hh", "+hhmm" or "+hh:mm" (or '-'), the offset in minutes; or -1. */
static int
robots_tag_date_offset(struct rtd_cur *c, int *zone)
{
	int sign, h, m = 0;

	if (c->i >= c->n || (c->s[c->i] != '+' && c->s[c->i] != '-'))
		return -1;
	sign = c->s[c->i++] == '-' ? -1 : 1;
	if (robots_tag_date_num(c, 2, 2, &h) != 0 || h > 23)
		return -1;
	robots_tag_date_eat(c, ':');
	if (c->i < c->n && robots_tag_date_num(c, 2, 2, &m) != 0)
		return -1;
	if (m > 59)
		return -1;
	*zone = sign * (h * 60 + m);
	return 0;
}

/* An RFC 822 zone name or offset; absent is GMT. */
static int
robots_tag_date_zone(struct rtd_cur *c, int *zone)
{
	static const char *const names[] = { "gmt", "ut", "utc", "z", "est",
		"edt", "cst", "cdt", "mst", "mdt", "pst", "pdt" };
	static const int offs[] = { 0, 0, 0, 0, -300, -240, -360, -300, -420,
		-360, -480, -420 };
	const char *w;
	size_t n, k, j;

	*zone = 0;
	if (c->i == c->n)
		return 0;
	if (c->s[c->i] == '+' || c->s[c->i] == '-')
		return robots_tag_date_offset(c, zone);
	n = robots_tag_date_word(c, &w);
	for (k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		j = 0;
		while (j < n && ascii_lower((unsigned char)w[j]) == names[k][j])
			j++;
		if (j == n && names[k][n] == '\0') {
			*zone = offs[k];
			return 0;
		}
	}
	return -1;
}

/* A month's 3-letter name, 1 to 12, or -1. */
static int
robots_tag_date_month(struct rtd_cur *c)
{
	static const char months[] = "janfebmaraprmayjunjulaugsepoctnovdec";
	const char *w;
	int m;

	if (robots_tag_date_word(c, &w) != 3)
		return -1;
	for (m = 0; m < 12; m++)
		if (ascii_lower((unsigned char)w[0]) == months[3 * m] &&
		    ascii_lower((unsigned char)w[1]) == months[3 * m + 1] &&
		    ascii_lower((unsigned char)w[2]) == months[3 * m + 2])
			return m + 1;
	return -1;
}

/* [weekday ","] day ('-' | ' ') month sep year " " time [" " zone]. */
static int
robots_tag_date_rfc(struct rtd_cur *c, int64_t *t)
{
	int f[6], zone, sep;
	const char *w;
	size_t n, at = c->i;

	if ((n = robots_tag_date_word(c, &w)) > 0) {
		if (!robots_tag_weekday(w, n) || !robots_tag_date_eat(c, ','))
			return -1;
		robots_tag_date_spaces(c);
	} else
		c->i = at;
	if (robots_tag_date_num(c, 1, 2, &f[2]) != 0 || c->i >= c->n)
		return -1;
	sep = c->s[c->i++];
	if ((sep != ' ' && sep != '-') ||
	    (f[1] = robots_tag_date_month(c)) < 0 ||
	    !robots_tag_date_eat(c, (char)sep))
		return -1;
	at = c->i;
	if (robots_tag_date_num(c, 2, 4, &f[0]) != 0 || c->i - at == 3)
		return -1;
	if (c->i - at == 2)
		f[0] += f[0] < 70 ? 2000 : 1900;
	if (!robots_tag_date_eat(c, ' '))
		return -1;
	robots_tag_date_spaces(c);
	if (robots_tag_date_time(c, f) != 0)
		return -1;
	robots_tag_date_spaces(c);
	if (robots_tag_date_zone(c, &zone) != 0 || c->i != c->n)
		return -1;
	return robots_tag_date_make(f, zone, t);
}

/* YYYY-MM-DD [('T' | ' ') hh:mm[:ss[.frac]] [Z | offset]]. */
static int
robots_tag_date_iso(struct rtd_cur *c, int64_t *t)
{
	int f[6] = { 0, 0, 0, 0, 0, 0 }, zone = 0, frac;

	if (robots_tag_date_num(c, 4, 4, &f[0]) != 0 ||
	    !robots_tag_date_eat(c, '-') ||
	    robots_tag_date_num(c, 2, 2, &f[1]) != 0 ||
	    !robots_tag_date_eat(c, '-') ||
	    robots_tag_date_num(c, 2, 2, &f[2]) != 0)
		return -1;
	if (c->i < c->n) {
		if (c->s[c->i] != 'T' && c->s[c->i] != 't' && c->s[c->i] != ' ')
			return -1;
		c->i++;
		if (robots_tag_date_time(c, f) != 0)
			return -1;
		if (robots_tag_date_eat(c, '.') &&
		    robots_tag_date_num(c, 1, 9, &frac) != 0)
			return -1;
		if (c->i < c->n && !robots_tag_date_eat(c, 'Z') &&
		    !robots_tag_date_eat(c, 'z') &&
		    robots_tag_date_offset(c, &zone) != 0)
			return -1;
	}
	if (c->i != c->n)
		return -1;
	return robots_tag_date_make(f, zone, t);
}

int
robots_tag_parse_date(const char *s, size_t len, int64_t *t)
{
	struct rtd_cur c;

	c.s = robots_trim_ows(s, &len);
	c.i = 0;
	c.n = len;
	if (len >= 5 && s[4] == '-' && s[0] >= '0' && s[0] <= '9')
		return robots_tag_date_iso(&c, t);
	return robots_tag_date_rfc(&c, t);
}
