/*
 * check_accept.c: the accept policy every listener shares (accept.h), as
 * a script of accept() failures and successes on a driven clock: the
 * first pause in a row is 0.1 s, each next one doubles up to 2 s, an
 * accept that works starts the row again; one line is due, then none for
 * 60 s, and the next one counts the pauses since the last.
 */
#include <config.h>

#include <check.h>

#include "conn/accept.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

#define OK (-1.0) /* a row where accept() works */

static const struct {
	double now;           /* seconds; OK: an accept worked instead */
	double pause;         /* the pause asked for */
	int log;              /* a line is due */
	unsigned long pauses; /* what that line counts */
} script[] = {
	{ 10.0, 0.1, 1, 1 }, /* the first failure: one line */
	{ 10.1, 0.2, 0, 0 }, /* in a row: doubled, no line */
	{ 10.3, 0.4, 0, 0 }, { 10.7, 0.8, 0, 0 }, { 11.5, 1.6, 0, 0 },
	{ 13.1, 2.0, 0, 0 },                  /* capped at 2 s */
	{ 15.1, 2.0, 0, 0 }, { OK, 0, 0, 0 }, /* accept works: the row ends */
	{ 20.0, 0.1, 0, 0 },                  /* back to 0.1 s; still no line */
	{ 69.9, 0.2, 0, 0 },                  /* 59.9 s after the line */
	{ 70.0, 0.4, 1, 9 }, /* 60 s: a line counting the nine since */
	{ 70.4, 0.8, 0, 0 }, { OK, 0, 0, 0 },
	{ 130.0, 0.1, 1, 2 }, /* 60 s later, after a success too */
};

START_TEST(test_script)
{
	struct accept_pause ap = { 0 };
	unsigned long counted = 0;
	int i, log;

	for (i = 0; i < NROWS(script); i++) {
		if (script[i].now == OK) {
			accept_pause_ok(&ap);
			continue;
		}
		ck_assert_double_eq_tol(
		    accept_pause_next(&ap, script[i].now, &log),
		    script[i].pause, 1e-9);
		ck_assert_msg(log == script[i].log, "row %d: log %d", i, log);
		ck_assert_int_eq(ap.paused, 1);
		if (!log)
			continue;
		counted = ap.pauses;
		ck_assert_msg(
		    counted == script[i].pauses, "row %d: %lu", i, counted);
		accept_pause_logged(&ap, script[i].now);
		ck_assert_uint_eq(ap.pauses, 0);
	}
}
END_TEST

/* The suite: the policy's rules. */
static Suite *
accept_suite(void)
{
	Suite *s = suite_create("accept");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, test_script);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(accept_suite, NULL, NULL);
