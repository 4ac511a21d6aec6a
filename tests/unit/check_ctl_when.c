/*
 * check_ctl_when.c: recheck's pure rules (ctl_when.c): TIME as RFC 3339
 * or Unix seconds, and the version in force at a time from an origin's
 * captures (sorted, runs of one version merged, the newest first seen at
 * or before the time).
 */
#include <config.h>

#include <string.h>

#include <check.h>

#include "ctl_when.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

static const struct {
	const char *in;
	int ok;
	double want;
} times[] = {
	{ "1704067200", 0, 1704067200 },
	{ "1704067200.25", 0, 1704067200.25 },
	{ "0", 0, 0 },
	{ "2024-01-01T00:00:00Z", 0, 1704067200 },
	{ "2024-01-01t00:00:00z", 0, 1704067200 },
	{ "2024-01-01T02:00:00+02:00", 0, 1704067200 },
	{ "2023-12-31T19:00:00-05:00", 0, 1704067200 },
	{ "2024-01-01T00:00:00.5Z", 0, 1704067200.5 },
	{ "2024-02-29T00:00:00Z", 0, 1709164800 },
	{ "1970-01-01T00:00:00Z", 0, 0 },
	{ "2016-12-31T23:59:60Z", 0, 1483228800 }, /* a leap second */
	{ "2023-02-29T00:00:00Z", -1, 0 },         /* no such day */
	{ "2024-13-01T00:00:00Z", -1, 0 },
	{ "2024-01-01T24:00:00Z", -1, 0 },
	{ "2024-01-01T00:00:00", -1, 0 }, /* no offset */
	{ "2024-01-01 00:00:00Z", -1, 0 },
	{ "2024-01-01T00:00:00.Z", -1, 0 },
	{ "2024-01-01T00:00:00+2:00", -1, 0 },
	{ "2024-01-01", -1, 0 },
	{ "", -1, 0 },
	{ "-5", -1, 0 },
	{ "12x", -1, 0 },
	{ "1.", -1, 0 },
};

START_TEST(test_parse_time)
{
	double t = -1;
	int rc = ctl_parse_time(times[_i].in, strlen(times[_i].in), &t);

	ck_assert_msg(rc == times[_i].ok, "%s: %d", times[_i].in, rc);
	if (rc == 0)
		ck_assert_msg(t == times[_i].want, "%s: %f", times[_i].in, t);
}
END_TEST

/*
 * Captures (at, version) in the order read; then a time and the version
 * and first-seen time in force then (ver -1: none).
 */
static const struct {
	const char *name;
	struct ctl_capture caps[6];
	size_t n;
	double t;
	int ver;
	double first_seen;
} picks[] = {
	{ "before the first", { { 10, 1, 0 } }, 1, 9, -1, 0 },
	{ "at the first", { { 10, 1, 0 } }, 1, 10, 1, 10 },
	{ "no captures", { { 0, 0, 0 } }, 0, 10, -1, 0 },
	{ "between two", { { 10, 1, 0 }, { 20, 2, 1 } }, 2, 15, 1, 10 },
	{ "after the last", { { 10, 1, 0 }, { 20, 2, 1 } }, 2, 25, 2, 20 },
	{ "read out of order", { { 20, 2, 0 }, { 10, 1, 1 } }, 2, 15, 1, 10 },
	{ "a run merged into its first",
	    { { 10, 1, 0 }, { 20, 1, 1 }, { 30, 1, 2 } }, 3, 35, 1, 10 },
	{ "a version again starts a run",
	    { { 10, 1, 0 }, { 20, 2, 1 }, { 30, 1, 2 } }, 3, 35, 1, 30 },
	{ "a tie: the later read wins", { { 10, 1, 0 }, { 10, 2, 1 } }, 2, 10,
	    2, 10 },
};

START_TEST(test_pick)
{
	struct ctl_capture c[6];
	size_t n;
	long i;

	memcpy(c, picks[_i].caps, sizeof(c));
	n = ctl_timeline(c, picks[_i].n);
	i = ctl_timeline_at(c, n, picks[_i].t);
	if (picks[_i].ver < 0) {
		ck_assert_msg(i == -1, "%s: %ld", picks[_i].name, i);
		return;
	}
	ck_assert_msg(i >= 0, "%s: none", picks[_i].name);
	ck_assert_msg((int)c[i].ver == picks[_i].ver, "%s: version %u",
	    picks[_i].name, c[i].ver);
	ck_assert_msg(c[i].at == picks[_i].first_seen, "%s: first seen %f",
	    picks[_i].name, c[i].at);
}
END_TEST

/* The ctl_when suite. */
static Suite *
ctl_when_suite(void)
{
	Suite *s = suite_create("ctl_when");
	TCase *tc = tcase_create("when");

	tcase_add_loop_test(tc, test_parse_time, 0, NROWS(times));
	tcase_add_loop_test(tc, test_pick, 0, NROWS(picks));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(ctl_when_suite, NULL, NULL);
