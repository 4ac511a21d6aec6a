/*
 * check_lifetime.c: the cache policy's pure rules (lifetime.h), each as a
 * table: the status classes of the contract's "Policy" section, RFC 9111
 * lifetimes, the retry schedule, RFC 9309's 30-day allowance, and RFC
 * 9110's three HTTP date forms.
 */
#include <config.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "cache/lifetime.h"
#include "iface/outcome.h"
#include "test_main.h"

#define DAY 86400.0
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The shipped defaults (robotsd.conf(5)). */
static const struct lifetime_settings set = {
	.default_ttl = DAY,
	.min_ttl = 60,
	.max_ttl = 30 * DAY,
	.retry_min = 60,
	.retry_max = 21600,
	.retry_503_min = 30,
	.retry_503_max = 3600,
	.unreachable_allow_after = 30 * DAY,
};

/* 1994-11-06 08:49:37 UTC, RFC 9110's example date. */
#define RFC_DATE 784111777.0

START_TEST(test_status_classes)
{
	static const struct {
		int answered, redirects, status;
		enum lifetime_class want;
	} rows[] = {
		{ 1, 0, 200, LT_RULES },
		{ 1, 0, 204, LT_RULES },
		{ 1, 0, 299, LT_RULES },
		{ 1, 0, 300, LT_ALLOW_ALL },
		{ 1, 0, 304, LT_ALLOW_ALL },
		{ 1, 0, 399, LT_ALLOW_ALL },
		{ 1, 0, 400, LT_ALLOW_ALL },
		{ 1, 0, 401, LT_ALLOW_ALL },
		{ 1, 0, 403, LT_ALLOW_ALL },
		{ 1, 0, 404, LT_ALLOW_ALL },
		{ 1, 0, 410, LT_ALLOW_ALL },
		{ 1, 0, 428, LT_ALLOW_ALL },
		{ 1, 0, 429, LT_FAILED_SOON },
		{ 1, 0, 430, LT_ALLOW_ALL },
		{ 1, 0, 499, LT_ALLOW_ALL },
		{ 1, 0, 500, LT_FAILED },
		{ 1, 0, 502, LT_FAILED },
		{ 1, 0, 503, LT_FAILED_SOON },
		{ 1, 0, 504, LT_FAILED },
		{ 1, 0, 599, LT_FAILED },
		{ 1, 0, 100, LT_FAILED },
		{ 1, 0, 199, LT_FAILED },
		{ 0, 0, 0, LT_FAILED },      /* network error, timeout */
		{ 1, 1, 302, LT_ALLOW_ALL }, /* too many redirects */
		{ 0, 1, 0, LT_ALLOW_ALL },
	};
	size_t i;

	for (i = 0; i < N(rows); i++)
		ck_assert_msg(
		    lifetime_classify(rows[i].answered, rows[i].redirects,
		        rows[i].status) == rows[i].want,
		    "row %zu: status %d", i, rows[i].status);
}
END_TEST

/*
 * A refresh: a 304 keeps the ruleset only when validators were sent (RFC
 * 9110 section 15.4.5); every other outcome, and a 304 to a request
 * without them, is classified as a first fetch is.
 */
START_TEST(test_refresh_classes)
{
	static const struct {
		int answered, redirects, status, conditional;
		enum lifetime_class want;
	} rows[] = {
		{ 1, 0, 304, 1, LT_REVALIDATED },
		{ 1, 0, 304, 0, LT_ALLOW_ALL },
		{ 1, 1, 304, 1, LT_ALLOW_ALL }, /* too many redirects */
		{ 1, 0, 200, 1, LT_RULES },
		{ 1, 0, 200, 0, LT_RULES },
		{ 1, 0, 206, 1, LT_RULES },
		{ 1, 0, 301, 1, LT_ALLOW_ALL },
		{ 1, 0, 302, 0, LT_ALLOW_ALL },
		{ 1, 0, 404, 1, LT_ALLOW_ALL },
		{ 1, 0, 404, 0, LT_ALLOW_ALL },
		{ 1, 0, 410, 1, LT_ALLOW_ALL },
		{ 1, 0, 412, 1, LT_ALLOW_ALL },
		{ 1, 0, 429, 1, LT_FAILED_SOON },
		{ 1, 0, 500, 1, LT_FAILED },
		{ 1, 0, 503, 1, LT_FAILED_SOON },
		{ 1, 0, 503, 0, LT_FAILED_SOON },
		{ 0, 0, 0, 1, LT_FAILED },
		{ 0, 0, 0, 0, LT_FAILED },
	};
	size_t i;

	for (i = 0; i < N(rows); i++)
		ck_assert_msg(lifetime_classify_refresh(rows[i].answered,
		                  rows[i].redirects, rows[i].status,
		                  rows[i].conditional) == rows[i].want,
		    "row %zu: status %d", i, rows[i].status);
}
END_TEST

/* Which validators are kept and sent back. */
START_TEST(test_validators_kept)
{
	static char longest[FETCH_MAX_VALIDATOR + 2];
	static const struct {
		const char *v;
		int ok;
	} rows[] = {
		{ "\"abc\"", 1 },
		{ "W/\"abc\"", 1 },
		{ "Tue, 24 Nov 2026 10:00:00 GMT", 1 },
		{ "\"caf\xc3\xa9\"", 1 }, /* obs-text */
		{ NULL, 0 },
		{ "", 0 },
		{ "\"a\r\nX-Injected: 1\"", 0 },
		{ "\"a\nb\"", 0 },
		{ "\"a\tb\"", 0 },
		{ "\"a\x7f\"", 0 },
	};
	size_t i;

	for (i = 0; i < N(rows); i++)
		ck_assert_msg(lifetime_validator_ok(rows[i].v) == rows[i].ok,
		    "row %zu", i);
	memset(longest, 'x', FETCH_MAX_VALIDATOR);
	ck_assert_int_eq(lifetime_validator_ok(longest), 1);
	longest[FETCH_MAX_VALIDATOR] = 'x'; /* one byte too many */
	ck_assert_int_eq(lifetime_validator_ok(longest), 0);
}
END_TEST

/* The cause each failure names, and the stable names (docs/protocol.md). */
START_TEST(test_causes)
{
	static const struct {
		enum fetch_error error;
		enum fetch_cause net;
		int status;
		enum fetch_cause want;
		const char *name;
	} rows[] = {
		{ FETCH_OK, CAUSE_NONE, 200, CAUSE_NONE, "" },
		{ FETCH_OK, CAUSE_NONE, 404, CAUSE_NONE, "" },
		{ FETCH_OK, CAUSE_NONE, 302, CAUSE_NONE, "" },
		{ FETCH_OK, CAUSE_NONE, 500, CAUSE_HTTP_5XX, "http_5xx" },
		{ FETCH_OK, CAUSE_NONE, 502, CAUSE_HTTP_5XX, "http_5xx" },
		{ FETCH_OK, CAUSE_NONE, 599, CAUSE_HTTP_5XX, "http_5xx" },
		{ FETCH_OK, CAUSE_NONE, 503, CAUSE_HTTP_503, "http_503" },
		{ FETCH_OK, CAUSE_NONE, 429, CAUSE_HTTP_429, "http_429" },
		{ FETCH_OK, CAUSE_NONE, 100, CAUSE_BAD_RESPONSE,
		    "bad_response" },
		{ FETCH_OK, CAUSE_NONE, 600, CAUSE_BAD_RESPONSE,
		    "bad_response" },
		{ FETCH_NETWORK, CAUSE_DNS, 0, CAUSE_DNS, "dns" },
		{ FETCH_NETWORK, CAUSE_CONNECT, 0, CAUSE_CONNECT, "connect" },
		{ FETCH_NETWORK, CAUSE_TLS, 0, CAUSE_TLS, "tls" },
		{ FETCH_NETWORK, CAUSE_BAD_RESPONSE, 0, CAUSE_BAD_RESPONSE,
		    "bad_response" },
		{ FETCH_NETWORK, CAUSE_NONE, 0, CAUSE_OTHER, "other" },
		{ FETCH_TIMEOUT, CAUSE_TIMEOUT, 0, CAUSE_TIMEOUT, "timeout" },
		{ FETCH_TIMEOUT, CAUSE_NONE, 0, CAUSE_TIMEOUT, "timeout" },
		/* refused before connecting: curl saw a failed connect */
		{ FETCH_PRIVATE_ADDR, CAUSE_CONNECT, 0, CAUSE_PRIVATE_ADDRESS,
		    "private_address" },
		{ FETCH_REDIRECTS, CAUSE_NONE, 302, CAUSE_NONE, "" },
	};
	size_t i;

	for (i = 0; i < N(rows); i++) {
		enum fetch_cause c =
		    lifetime_cause(rows[i].error, rows[i].net, rows[i].status);

		ck_assert_msg(c == rows[i].want, "row %zu: cause %d", i, c);
		ck_assert_str_eq(lifetime_cause_name(c), rows[i].name);
	}
	ck_assert_str_eq(lifetime_cause_name(CAUSE_COUNT), "other");
}
END_TEST

START_TEST(test_lifetimes)
{
	static const struct {
		const char *cc, *expires, *age, *date;
		double want;
	} rows[] = {
		{ NULL, NULL, NULL, NULL, DAY },
		{ "max-age=3600", NULL, NULL, NULL, 3600 },
		{ "MAX-AGE=3600", NULL, NULL, NULL, 3600 },
		{ "public, max-age=120", NULL, NULL, NULL, 120 },
		{ "max-age=\"120\"", NULL, NULL, NULL, 120 },
		{ "s-maxage=100, max-age=3600", NULL, NULL, NULL, 100 },
		{ "max-age=3600, s-maxage=100", NULL, NULL, NULL, 100 },
		{ "max-age=59", NULL, NULL, NULL, 60 }, /* min_ttl */
		{ "max-age=0", NULL, NULL, NULL, 60 },
		{ "max-age=2592001", NULL, NULL, NULL, 30 * DAY }, /* max */
		{ "max-age=abc", NULL, NULL, NULL, 60 }, /* invalid: stale */
		{ "no-store", NULL, NULL, NULL, 60 },
		{ "no-cache", NULL, NULL, NULL, 60 },
		{ "no-cache, max-age=3600", NULL, NULL, NULL, 60 },
		{ "max-agex=3600", NULL, NULL, NULL, DAY }, /* not max-age */
		{ "private", NULL, NULL, NULL, DAY },
		{ "max-age=3600", NULL, "100", NULL, 3500 },
		{ "max-age=3600", NULL, "x", NULL, 3600 },
		{ "max-age=3600", "Sun, 06 Nov 1994 10:49:37 GMT", NULL,
		    "Sun, 06 Nov 1994 08:49:37 GMT", 3600 },
		{ NULL, "Sun, 06 Nov 1994 10:49:37 GMT", NULL,
		    "Sun, 06 Nov 1994 08:49:37 GMT", 7200 },
		{ NULL, "Sun, 06 Nov 1994 10:49:37 GMT", "200",
		    "Sun, 06 Nov 1994 08:49:37 GMT", 7000 },
		/* Without a Date, the wall clock (RFC_DATE) stands in. */
		{ NULL, "Sun, 06 Nov 1994 09:49:37 GMT", NULL, NULL, 3600 },
		{ NULL, "Sun, 06 Nov 1994 09:49:37 GMT", NULL, "junk", 3600 },
		{ NULL, "0", NULL, NULL, 60 }, /* invalid Expires: expired */
		{ NULL, "Sun, 06 Nov 1994 07:49:37 GMT", NULL, NULL, 60 },
	};
	struct http_meta m = { 0 };
	double got;
	size_t i;

	for (i = 0; i < N(rows); i++) {
		m.cache_control = rows[i].cc;
		m.expires = rows[i].expires;
		m.age = rows[i].age;
		m.date = rows[i].date;
		got = lifetime_ttl(&set, &m, RFC_DATE);
		ck_assert_msg(got == rows[i].want, "row %zu: %.3f, want %.3f",
		    i, got, rows[i].want);
	}
}
END_TEST

START_TEST(test_retry_after)
{
	static const struct {
		const char *ra, *date;
		double want;
	} rows[] = {
		{ NULL, NULL, -1 },
		{ "120", NULL, 120 },
		{ " 120", NULL, 120 },
		{ "0", NULL, 0 },
		{ "Sun, 06 Nov 1994 08:54:37 GMT",
		    "Sun, 06 Nov 1994 08:49:37 GMT", 300 },
		{ "Sun, 06 Nov 1994 08:54:37 GMT", NULL, 300 },
		{ "Sun, 06 Nov 1994 08:44:37 GMT", NULL, 0 }, /* past */
		{ "soon", NULL, -1 },
	};
	struct http_meta m = { 0 };
	size_t i;

	for (i = 0; i < N(rows); i++) {
		m.retry_after = rows[i].ra;
		m.date = rows[i].date;
		ck_assert_msg(
		    lifetime_retry_after(&m, RFC_DATE) == rows[i].want,
		    "row %zu", i);
	}
}
END_TEST

START_TEST(test_backoff_schedule)
{
	static const struct {
		unsigned streak;
		int soon;
		double retry_after, base; /* base = 0: exactly retry_after */
	} rows[] = {
		{ 1, 0, -1, 60 }, { 2, 0, -1, 120 }, { 3, 0, -1, 240 },
		{ 9, 0, -1, 15360 }, { 10, 0, -1, 21600 }, /* the cap */
		{ 1000, 0, -1, 21600 }, { 1, 1, -1, 30 }, { 7, 1, -1, 1920 },
		{ 8, 1, -1, 3600 },
		{ 1, 0, 120, 60 }, /* Retry-After only counts for 503/429 */
	};
	uint64_t h = 0x1234567890abcdefULL;
	double want, got, hi;
	size_t i;

	for (i = 0; i < N(rows); i++) {
		hi = rows[i].soon ? set.retry_503_max : set.retry_max;
		want = rows[i].base * (1 + lifetime_jitter(h, rows[i].streak));
		want = want > hi ? hi : want;
		got = lifetime_backoff(
		    &set, rows[i].streak, rows[i].soon, rows[i].retry_after, h);
		ck_assert_msg(
		    got == want, "row %zu: %.6f, want %.6f", i, got, want);
	}
}
END_TEST

START_TEST(test_retry_after_clamped_to_the_short_schedule)
{
	static const double rows[][2] = {
		{ 120, 120 },
		{ 5, 30 },
		{ 30, 30 },
		{ 3600, 3600 },
		{ 99999, 3600 },
		{ 0, 30 },
	};
	size_t i;

	for (i = 0; i < N(rows); i++)
		ck_assert_msg(
		    lifetime_backoff(&set, 1, 1, rows[i][0], 7) == rows[i][1],
		    "row %zu", i);
}
END_TEST

START_TEST(test_jitter_is_below_a_tenth_and_spreads_origins)
{
	double j, first = lifetime_jitter(1, 1);
	int differ = 0;
	uint64_t h;

	for (h = 1; h <= 1000; h++) {
		j = lifetime_jitter(h * 0x9e3779b97f4a7c15ULL, 3);
		ck_assert(j >= 0 && j < 0.1);
		differ += lifetime_jitter(h, 1) != first;
	}
	ck_assert_int_gt(differ, 900);
	ck_assert(lifetime_jitter(42, 2) == lifetime_jitter(42, 2));
}
END_TEST

START_TEST(test_thirty_days_without_a_good_copy_allow_all)
{
	static const struct {
		double since, now;
		int want;
	} rows[] = {
		{ 1000, 1000, 0 },
		{ 1000, 1000 + 30 * DAY - 1, 0 },
		{ 1000, 1000 + 30 * DAY, 1 },
		{ 1000, 1000 + 31 * DAY, 1 },
	};
	size_t i;

	for (i = 0; i < N(rows); i++)
		ck_assert_msg(lifetime_give_up(&set, rows[i].since,
		                  rows[i].now) == rows[i].want,
		    "row %zu", i);
}
END_TEST

/*
 * Times read from the shared tier, as the contract bounds them: no lifetime
 * beyond the reader's max-ttl (30 days here) from the value's fetch time,
 * which is at most 60 s ahead of the reader's clock; a failure state until
 * at most the longest retry (6 h); nothing earlier is moved.
 */
START_TEST(test_shared_times_within_local_bounds)
{
	static const double now = 1.8e9, Y = 365 * DAY;
	static const struct {
		unsigned streak;
		double fetched, expires, since, retry; /* given */
		double wf, we, ws, wr;                 /* wanted */
	} rows[] = {
		/* an honest copy: untouched */
		{ 0, now - 100, now + DAY, 0, 0, now - 100, now + DAY, 0, 0 },
		/* expired: untouched */
		{ 0, now - DAY, now - 10, 0, 0, now - DAY, now - 10, 0, 0 },
		/* fetched a year ago, a lifetime of a year: max-ttl from then
		 */
		{ 0, now - Y, now + 10, 0, 0, now - Y, now - Y + 30 * DAY, 0,
		    0 },
		/* a publisher's clock a year ahead */
		{ 0, now + Y, now + Y + DAY, 0, 0, now + 60, now + 60 + DAY, 0,
		    0 },
		/* "allow all" for about 292 million years */
		{ 0, now, 9.2e15, 0, 0, now, now + 30 * DAY, 0, 0 },
		/* at the bounds exactly: untouched */
		{ 0, now + 60, now + 60 + 30 * DAY, 0, 0, now + 60,
		    now + 60 + 30 * DAY, 0, 0 },
		/* failing, retry a year away, its streak begun in the future */
		{ 3, now, now + Y, now + DAY, now + Y, now, now + 21600, now,
		    now + 21600 },
		/* failing within the schedule: untouched */
		{ 1, now - 10, now + 600, now - 10, now + 600, now - 10,
		    now + 600, now - 10, now + 600 },
		/*
		 * failed 6 h less 100 s ago, retry a year away: what a retry
		 * scheduled then allows, whenever it is read (not now + 6 h)
		 */
		{ 2, now - 21500, now + Y, now - DAY, now + Y, now - 21500,
		    now + 100, now - DAY, now + 100 },
		/* failed a year ago, never retried: over, however reread */
		{ 2, now - Y, 9.2e15, now - Y, 9.2e15, now - Y, now - Y + 21600,
		    now - Y, now - Y + 21600 },
		/* failing, fetched 60 s ahead: from now, not from then */
		{ 1, now + 60, now + Y, now + 60, now + Y, now + 60,
		    now + 21600, now + 60, now + 21600 },
		/* a streak begun after its last fetch: begun by then */
		{ 1, now - 10, now + 600, now, now + 600, now - 10, now + 600,
		    now - 10, now + 600 },
	};
	size_t i;

	for (i = 0; i < N(rows); i++) {
		double f = rows[i].fetched, e = rows[i].expires,
		       fs = rows[i].since, r = rows[i].retry;

		lifetime_clamp_shared(
		    &set, now, rows[i].streak, &f, &e, &fs, &r);
		ck_assert_msg(f == rows[i].wf && e == rows[i].we &&
		                  fs == rows[i].ws && r == rows[i].wr,
		    "row %zu: %.0f %.0f %.0f %.0f", i, f - now, e - now, fs, r);
	}
}
END_TEST

START_TEST(test_http_dates)
{
	static const struct {
		const char *s;
		double want; /* -1: not a date (no valid row is -1) */
	} rows[] = {
		{ "Sun, 06 Nov 1994 08:49:37 GMT", RFC_DATE },
		{ "Sunday, 06-Nov-94 08:49:37 GMT", RFC_DATE },
		{ "Sun Nov  6 08:49:37 1994", RFC_DATE },
		{ "Sun Nov 16 08:49:37 1994", RFC_DATE + 10 * DAY },
		{ "  Sun, 06 Nov 1994 08:49:37 GMT", RFC_DATE },
		{ "Thu, 01 Jan 1970 00:00:00 GMT", 0 },
		{ "Thu, 01 Jan 2099 00:00:00 GMT", 4070908800.0 },
		{ "Tue, 29 Feb 2000 12:00:00 GMT", 951825600.0 },
		{ "Thursday, 01-Jan-70 00:00:00 GMT", 0 },
		/* Two-digit years, seen from 1994: 1969, not 2069. */
		{ "Wednesday, 31-Dec-69 00:00:00 GMT", -DAY },
		{ "Sun, 06 Nov 1994 08:49:37 UTC", -1 },
		{ "Sun, 6 Nov 1994 08:49:37 GMT", -1 },
		{ "Sun, 06 Nov 1994 24:00:00 GMT", -1 },
		{ "Sun, 06 Nov 1994 08:60:00 GMT", -1 },
		{ "Sun, 32 Nov 1994 08:49:37 GMT", -1 },
		{ "Sun, 06 Foo 1994 08:49:37 GMT", -1 },
		{ "Sun, 06 Nov 1994 08:49:37 GMT x", -1 },
		{ "Sun, 06 Nov 94 08:49:37 GMT", -1 },
		{ "Nov 6 1994", -1 },
		{ "120", -1 },
		{ "", -1 },
	};
	double t;
	size_t i;
	int rc;

	for (i = 0; i < N(rows); i++) {
		t = -2;
		rc = http_date_parse(rows[i].s, RFC_DATE, &t);
		ck_assert_msg(rows[i].want == -1 ? rc == -1 : rc == 0,
		    "row %zu: %s", i, rows[i].s);
		if (rc == 0)
			ck_assert_msg(t == rows[i].want, "row %zu: %.0f", i, t);
	}
}
END_TEST

START_TEST(test_two_digit_years_are_at_most_50_years_ahead)
{
	static const struct {
		const char *s;
		double now, want;
	} rows[] = {
		/* Seen from 2026-06-01: 69 is 2069, 77 is 1977. */
		{ "Tuesday, 31-Dec-69 00:00:00 GMT", 1780272000.0,
		    3155673600.0 },
		{ "Saturday, 01-Jan-77 00:00:00 GMT", 1780272000.0,
		    220924800.0 },
		{ "Friday, 01-Jan-76 00:00:00 GMT", 1780272000.0,
		    3345062400.0 },
	};
	double t;
	size_t i;

	for (i = 0; i < N(rows); i++) {
		ck_assert_int_eq(
		    http_date_parse(rows[i].s, rows[i].now, &t), 0);
		ck_assert_msg(t == rows[i].want, "row %zu: %.0f", i, t);
	}
}
END_TEST

START_TEST(test_leading_seconds)
{
	ck_assert(lifetime_parse_secs("120") == 120);
	ck_assert(lifetime_parse_secs(" \t\"5\"") == 5);
	ck_assert(lifetime_parse_secs("12x") == 12);
	ck_assert(lifetime_parse_secs("") == -1);
	ck_assert(lifetime_parse_secs("-5") == -1);
	ck_assert(lifetime_parse_secs("x1") == -1);
	/* Digits past 1e12 stop growing the value: no overflow. */
	ck_assert(lifetime_parse_secs("99999999999999999999999999") ==
	          9999999999999.0);
}
END_TEST

static Suite *
lifetime_suite(void)
{
	Suite *s = suite_create("lifetime");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_status_classes);
	tcase_add_test(tc, test_refresh_classes);
	tcase_add_test(tc, test_validators_kept);
	tcase_add_test(tc, test_causes);
	tcase_add_test(tc, test_lifetimes);
	tcase_add_test(tc, test_retry_after);
	tcase_add_test(tc, test_backoff_schedule);
	tcase_add_test(tc, test_retry_after_clamped_to_the_short_schedule);
	tcase_add_test(tc, test_jitter_is_below_a_tenth_and_spreads_origins);
	tcase_add_test(tc, test_thirty_days_without_a_good_copy_allow_all);
	tcase_add_test(tc, test_shared_times_within_local_bounds);
	tcase_add_test(tc, test_http_dates);
	tcase_add_test(tc, test_two_digit_years_are_at_most_50_years_ahead);
	tcase_add_test(tc, test_leading_seconds);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(lifetime_suite, NULL, NULL);
