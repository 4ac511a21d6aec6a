/*
 * check_budget.c: the client connection budget of budget.c, each rule as a
 * table checked against docs/protocol.md ("Slow readers", "All clients
 * together") and the clients_deferred counter's description: a connection
 * is paused past half of --max-output and closed past all of it; past
 * half of --max-output-total one holding more than the average is
 * paused; past all of it the largest are shed until the total is under
 * three quarters and no line is handled; a turn handles lines for 4 ms.
 */
#include <config.h>

#include <stdlib.h>

#include <check.h>

#include "conn/budget.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* --max-output 1000, --max-output-total 10000 in every row below. */
#define MAX 1000
#define TOTAL 10000

#define P BUDGET_PAUSE
#define PT (BUDGET_PAUSE | BUDGET_PAUSE_TOTAL)
#define S BUDGET_SHED
#define C BUDGET_CLOSE

static const struct {
	size_t queued;
	int paused;
	size_t total, nconns;
	unsigned act;
} answered_rows[] = {
	/* one connection's cap: passing it closes, whatever else */
	{ 1000, 0, 1000, 1, P },   /* at the cap: paused, not closed */
	{ 1001, 0, 1001, 1, C },   /* passes it: closed */
	{ 1001, 1, 1001, 1, C },   /* paused already: closed all the same */
	{ 1001, 0, 20000, 50, C }, /* closed, no shed asked for it */
	{ 500, 0, 500, 1, 0 },     /* half the cap: still read */
	{ 501, 0, 501, 1, P },     /* more than half: paused */
	{ 501, 1, 501, 1, 0 },     /* paused already: nothing new */
	/* all connections: past half the budget, above the average */
	{ 400, 0, 5000, 20, 0 },  /* half the budget: nobody paused */
	{ 251, 0, 5001, 20, PT }, /* past half, above the average 250 */
	{ 250, 0, 5001, 20, 0 },  /* the average itself: still read */
	{ 400, 1, 5001, 20, 0 },  /* paused already */
	{ 600, 0, 6000, 10, P },  /* its own cap's pause, not the total's */
	/* past all of it: shed */
	{ 100, 0, 10000, 100, 0 }, /* at the budget: no shedding */
	{ 100, 0, 10001, 100, S }, /* past it, at the average: shed only */
	{ 101, 0, 10001, 100, PT | S },
	{ 101, 1, 10001, 100, S },
	{ 900, 0, 10001, 12, P | S },
};

START_TEST(test_answered)
{
	struct budget_view v = { answered_rows[_i].queued,
		answered_rows[_i].paused, answered_rows[_i].total,
		answered_rows[_i].nconns, MAX, TOTAL };

	ck_assert_uint_eq(budget_answered(&v), answered_rows[_i].act);
}
END_TEST

/* A paused connection is read again once its client read most (3/4). */
static const struct {
	size_t queued;
	int resume;
} resume_rows[] = {
	{ 0, 1 },
	{ 250, 1 },
	{ 251, 0 },
	{ 500, 0 },
};

START_TEST(test_resume)
{
	ck_assert_int_eq(
	    budget_resume(resume_rows[_i].queued, MAX), resume_rows[_i].resume);
}
END_TEST

/* What an answer may still take (watch feeds and batches ask it). */
static const struct {
	size_t queued;
	int closing;
	size_t room;
} room_rows[] = {
	{ 0, 0, 1000 }, { 999, 0, 1 }, { 1000, 0, 0 },
	{ 1500, 0, 0 }, /* a line in progress passed it */
	{ 0, 1, 0 },    /* closing: nothing */
};

START_TEST(test_room)
{
	ck_assert_uint_eq(
	    budget_room(room_rows[_i].queued, MAX, room_rows[_i].closing),
	    room_rows[_i].room);
}
END_TEST

/* Over the budget (no line handled) and shedding down to three quarters. */
static const struct {
	size_t total, budget;
	int over, shed_more;
} total_rows[] = {
	{ 0, TOTAL, 0, 0 },
	{ 7500, TOTAL, 0, 0 }, /* three quarters: shedding stops */
	{ 7501, TOTAL, 0, 1 },
	{ 10000, TOTAL, 0, 1 },
	{ 10001, TOTAL, 1, 1 },
	{ 67108864, 67108864, 0, 1 }, /* the defaults: 64 MiB */
	{ 50331648, 67108864, 0, 0 }, /* 48 MiB */
	{ 50331649, 67108864, 0, 1 },
};

START_TEST(test_total)
{
	ck_assert_int_eq(
	    budget_over(total_rows[_i].total, total_rows[_i].budget),
	    total_rows[_i].over);
	ck_assert_int_eq(
	    budget_shed_more(total_rows[_i].total, total_rows[_i].budget),
	    total_rows[_i].shed_more);
}
END_TEST

/* A turn's slice: 4 ms of lines; the backlog goes first at a new turn. */
#define T0 1000000u
static const struct {
	int over, new_turn, backlog;
	uint64_t now;
	enum budget_turn turn;
} turn_rows[] = {
	{ 0, 1, 0, T0, BUDGET_NEW_SLICE },
	{ 0, 1, 1, T0, BUDGET_YIELD }, /* queue behind the backlog */
	{ 1, 1, 0, T0, BUDGET_YIELD }, /* over the budget */
	{ 1, 0, 0, T0, BUDGET_YIELD },
	{ 0, 0, 0, T0 + 4000, BUDGET_GO },    /* the slice's last microsecond */
	{ 0, 0, 0, T0 + 4001, BUDGET_YIELD }, /* used up */
	{ 0, 0, 1, T0 + 10, BUDGET_GO },      /* mid-slice: the backlog waits */
};

START_TEST(test_turn)
{
	ck_assert_int_eq(BUDGET_SLICE_US, 4000);
	ck_assert_int_eq(budget_turn(turn_rows[_i].over, turn_rows[_i].new_turn,
	                     turn_rows[_i].backlog, turn_rows[_i].now, T0),
	    turn_rows[_i].turn);
}
END_TEST

static Suite *
budget_suite(void)
{
	Suite *s = suite_create("budget");
	TCase *tc = tcase_create("rules");

	tcase_add_loop_test(tc, test_answered, 0, NROWS(answered_rows));
	tcase_add_loop_test(tc, test_resume, 0, NROWS(resume_rows));
	tcase_add_loop_test(tc, test_room, 0, NROWS(room_rows));
	tcase_add_loop_test(tc, test_total, 0, NROWS(total_rows));
	tcase_add_loop_test(tc, test_turn, 0, NROWS(turn_rows));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(budget_suite, NULL, NULL);
