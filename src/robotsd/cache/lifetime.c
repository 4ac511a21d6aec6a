/*
 * lifetime.c: the cache policy's pure rules (lifetime.h). Every function
 * here is a function of its arguments only.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "robots.h"
#include "cache/lifetime.h"
#include "iface/outcome.h"
#include "civil.h"

/* Parse leading decimal seconds; see lifetime.h. */
double
lifetime_parse_secs(const char *s)
{
	double v = 0;
	int any = 0;

	while (*s == ' ' || *s == '\t' || *s == '"')
		s++;
	for (; *s >= '0' && *s <= '9'; s++, any = 1)
		if (v < 1e12)
			v = v * 10 + (*s - '0');
	return any ? v : -1;
}

/*
 * Find directive name in a Cache-Control value: 1 if present, with *v set
 * to its seconds (or -1 without a number); 0 if absent.
 */
static int
cc_find(const char *cc, const char *name, double *v)
{
	size_t n = strlen(name);
	const char *p = cc;

	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (strncasecmp(p, name, n) == 0 &&
		    (p[n] == '\0' || p[n] == ',' || p[n] == '=' ||
		        p[n] == ' ' || p[n] == '\t')) {
			*v = p[n] == '=' ? lifetime_parse_secs(p + n + 1) : -1;
			return 1;
		}
		p = strchr(p, ',');
	}
	return 0;
}

/* Clamp v into [lo, hi] (hi below lo means lo). */
static double
clamp(double v, double lo, double hi)
{
	if (v > hi)
		v = hi;
	return v < lo ? lo : v;
}

/* A number of exactly n digits at *s, advancing; -1 if not there. */
static int
date_num(const char **s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if ((*s)[i] < '0' || (*s)[i] > '9')
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	return v;
}

/* The month of a three-letter name at *s (0-11), advancing; -1 if none. */
static int
date_month(const char **s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	int m;

	for (m = 0; m < 12; m++)
		if (strncmp(*s, months + 3 * m, 3) == 0) {
			*s += 3;
			return m;
		}
	return -1;
}

/* Skip a literal at *s; 0, or -1 when it is not there. */
static int
date_lit(const char **s, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*s, lit, n) != 0)
		return -1;
	*s += n;
	return 0;
}

/* "HH:MM:SS" into seconds of the day; -1 when malformed. */
static long
date_time(const char **s)
{
	int h = date_num(s, 2), m, sec;

	if (h < 0 || date_lit(s, ":") == -1 || (m = date_num(s, 2)) < 0 ||
	    date_lit(s, ":") == -1 || (sec = date_num(s, 2)) < 0 || h > 23 ||
	    m > 59 || sec > 60)
		return -1;
	return (long)h * 3600 + m * 60 + sec;
}

/*
 * RFC 9110 section 5.6.7: a two-digit year is the most recent year with
 * those digits that is not more than 50 years after now's year.
 */
static int
date_year2(int yy, double now)
{
	int cur = 1970 + (int)floor(now / 31556952.0), y;

	y = cur - cur % 100 + yy;
	return y > cur + 50 ? y - 100 : y;
}

/* The three forms, after the weekday; *t set, 0, or -1. */
static int
date_forms(const char *s, int form, double now, double *t)
{
	int d, m, y;
	long secs;

	if (form == 2) { /* asctime: "Nov  6 08:49:37 1994" */
		if ((m = date_month(&s)) < 0 || date_lit(&s, " ") == -1)
			return -1;
		if (*s == ' ') {
			s++;
			d = date_num(&s, 1);
		} else
			d = date_num(&s, 2);
		if (d < 1 || date_lit(&s, " ") == -1 ||
		    (secs = date_time(&s)) < 0 || date_lit(&s, " ") == -1 ||
		    (y = date_num(&s, 4)) < 0)
			return -1;
	} else { /* "06 Nov 1994 08:49:37 GMT" or "06-Nov-94 08:49:37 GMT" */
		const char *sep = form == 0 ? " " : "-";

		if ((d = date_num(&s, 2)) < 1 || date_lit(&s, sep) == -1 ||
		    (m = date_month(&s)) < 0 || date_lit(&s, sep) == -1 ||
		    (y = date_num(&s, form == 0 ? 4 : 2)) < 0 ||
		    date_lit(&s, " ") == -1 || (secs = date_time(&s)) < 0 ||
		    date_lit(&s, " GMT") == -1)
			return -1;
		if (form == 1)
			y = date_year2(y, now);
	}
	if (*s != '\0' || d > 31)
		return -1;
	*t = (double)civil_days(y, m + 1, d) * 86400 + (double)secs;
	return 0;
}

/* An HTTP date; see lifetime.h. */
int
http_date_parse(const char *s, double now, double *t)
{
	static const char *const wkday[] = { "Mon", "Tue", "Wed", "Thu", "Fri",
		"Sat", "Sun" };
	static const char *const weekday[] = { "Monday", "Tuesday", "Wednesday",
		"Thursday", "Friday", "Saturday", "Sunday" };
	size_t i;

	while (*s == ' ' || *s == '\t')
		s++;
	for (i = 0; i < 7; i++) {
		if (strncmp(s, weekday[i], strlen(weekday[i])) == 0 &&
		    strncmp(s + strlen(weekday[i]), ", ", 2) == 0)
			return date_forms(
			    s + strlen(weekday[i]) + 2, 1, now, t);
		if (strncmp(s, wkday[i], 3) != 0)
			continue;
		if (strncmp(s + 3, ", ", 2) == 0)
			return date_forms(s + 5, 0, now, t);
		if (s[3] == ' ')
			return date_forms(s + 4, 2, now, t);
	}
	return -1;
}

/*
 * Seconds from the response's Date to the HTTP date t, both in the origin
 * server's frame; without a valid Date header, wall stands in for it. -1
 * if t is invalid.
 */
static int
http_delta(const char *t, const char *date_hdr, double wall, double *delta)
{
	double when, date;

	if (http_date_parse(t, wall, &when) == -1)
		return -1;
	if (date_hdr == NULL || http_date_parse(date_hdr, wall, &date) == -1)
		date = wall;
	*delta = when - date;
	return 0;
}

/* The class of an outcome: librobots' status table; see lifetime.h. */
enum lifetime_class
lifetime_classify(int answered, int redirects, int status)
{
	switch (robots_status_class(answered, redirects, status)) {
	case ROBOTS_STATUS_RULES:
		return LT_RULES;
	case ROBOTS_STATUS_ALLOW_ALL:
		return LT_ALLOW_ALL;
	case ROBOTS_STATUS_FAILED_SOON:
		return LT_FAILED_SOON;
	case ROBOTS_STATUS_FAILED:
		break;
	}
	return LT_FAILED;
}

/* The class of a refresh's outcome; see lifetime.h. */
enum lifetime_class
lifetime_classify_refresh(
    int answered, int redirects, int status, int conditional)
{
	if (conditional && answered && !redirects && status == 304)
		return LT_REVALIDATED;
	return lifetime_classify(answered, redirects, status);
}

/* Whether a validator may be kept and sent; see lifetime.h. */
int
lifetime_validator_ok(const char *v)
{
	size_t n;

	if (v == NULL || *v == '\0')
		return 0;
	for (n = 0; v[n] != '\0'; n++)
		if (n == FETCH_MAX_VALIDATOR || (unsigned char)v[n] < 0x20 ||
		    v[n] == 0x7f)
			return 0;
	return 1;
}

/* The cause of a failed fetch; see lifetime.h. */
enum fetch_cause
lifetime_cause(enum fetch_error error, enum fetch_cause net, int status)
{
	switch (error) {
	case FETCH_OK:
		break;
	case FETCH_NETWORK:
		return net != CAUSE_NONE ? net : CAUSE_OTHER;
	case FETCH_TIMEOUT:
		return CAUSE_TIMEOUT;
	case FETCH_PRIVATE_ADDR:
		return CAUSE_PRIVATE_ADDRESS;
	case FETCH_REDIRECTS:
		return CAUSE_NONE;
	case FETCH_LOCAL: /* robotsd's own, never an origin's state */
		return CAUSE_OTHER;
	}
	if (lifetime_classify(1, 0, status) == LT_RULES ||
	    lifetime_classify(1, 0, status) == LT_ALLOW_ALL)
		return CAUSE_NONE;
	if (status == 503)
		return CAUSE_HTTP_503;
	if (status == 429)
		return CAUSE_HTTP_429;
	return status >= 500 && status < 600 ? CAUSE_HTTP_5XX
	                                     : CAUSE_BAD_RESPONSE;
}

/* The stable name of a cause; see lifetime.h. */
const char *
lifetime_cause_name(enum fetch_cause cause)
{
	static const char *const names[CAUSE_COUNT] = { "", "dns", "connect",
		"tls", "timeout", "private_address", "http_5xx", "http_429",
		"http_503", "bad_response", "other" };

	return (unsigned)cause < CAUSE_COUNT ? names[cause] : "other";
}

/* The lifetime of a 2xx/4xx answer; see lifetime.h. */
double
lifetime_ttl(
    const struct lifetime_settings *set, const struct http_meta *h, double wall)
{
	double v, age = h->age != NULL ? lifetime_parse_secs(h->age) : 0;
	const char *cc = h->cache_control;

	if (age < 0)
		age = 0;
	if (cc != NULL) {
		if (cc_find(cc, "no-store", &v) || cc_find(cc, "no-cache", &v))
			return set->min_ttl;
		if (cc_find(cc, "s-maxage", &v) || cc_find(cc, "max-age", &v))
			return clamp(v - age, set->min_ttl, set->max_ttl);
	}
	if (h->expires != NULL) {
		if (http_delta(h->expires, h->date, wall, &v) == -1)
			v = 0; /* an invalid Expires means already expired */
		return clamp(v - age, set->min_ttl, set->max_ttl);
	}
	return set->default_ttl;
}

/* Seconds a Retry-After asks for; see lifetime.h. */
double
lifetime_retry_after(const struct http_meta *h, double wall)
{
	double v;

	if (h->retry_after == NULL)
		return -1;
	if ((v = lifetime_parse_secs(h->retry_after)) >= 0)
		return v;
	if (http_delta(h->retry_after, h->date, wall, &v) == -1)
		return -1;
	return v > 0 ? v : 0;
}

/* A fraction in [0, 0.1) fixed by origin and streak. */
double
lifetime_jitter(uint64_t hash, unsigned streak)
{
	uint64_t x = hash ^ ((uint64_t)streak * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (double)(x % 1000) / 10000.0;
}

/* The delay before a retry; see lifetime.h. */
double
lifetime_backoff(const struct lifetime_settings *set, unsigned streak, int soon,
    double retry_after, uint64_t origin_hash)
{
	double lo = soon ? set->retry_503_min : set->retry_min;
	double hi = soon ? set->retry_503_max : set->retry_max;
	unsigned k = streak > 0 ? streak - 1 : 0;
	double base;

	if (soon && retry_after >= 0)
		return clamp(retry_after, lo, hi);
	base = clamp(ldexp(lo, k > 60 ? 60 : (int)k), lo, hi);
	return clamp(base * (1 + lifetime_jitter(origin_hash, streak)), lo, hi);
}

/* Failing long enough to be allowed (RFC 9309 section 2.3.1.4). */
int
lifetime_give_up(
    const struct lifetime_settings *set, double fail_since, double now)
{
	return now - fail_since >= set->unreachable_allow_after;
}

/* A shared state's times within this instance's bounds; see lifetime.h. */
void
lifetime_clamp_shared(const struct lifetime_settings *ls, double now,
    unsigned fail_streak, double *fetched_at, double *expires_at,
    double *fail_since, double *next_retry)
{
	double retry_hi = ls->retry_max > ls->retry_503_max ? ls->retry_max
	                                                    : ls->retry_503_max;
	double life = *expires_at - *fetched_at, until, last;

	if (*fetched_at > now + LIFETIME_SKEW)
		*fetched_at = now + LIFETIME_SKEW;
	/* a failed fetch schedules its retry; a streak begins by then */
	last = *fetched_at < now ? *fetched_at : now;
	if (*fail_since > *fetched_at)
		*fail_since = *fetched_at;
	if (*next_retry > last + retry_hi)
		*next_retry = last + retry_hi;
	if (fail_streak > 0)
		until = last + retry_hi;
	else
		until = *fetched_at + (life < ls->max_ttl ? life : ls->max_ttl);
	if (*expires_at > until)
		*expires_at = until;
}
