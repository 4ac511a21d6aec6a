/*
 * check_tier_stage.c: the stages of a tier call (tier_int.h) and the moves
 * between them that tier_stage_legal allows, as a table: every pair of
 * stages, for a wait and for any other call, is either listed here as
 * legal or must be refused.
 */
#include <config.h>

#include <check.h>

#include "tier/tier_int.h"
#include "test_main.h"

struct move {
	int wait; /* 1: only a wait may make it; 0: any call */
	enum call_stage from, to;
};

/*
 * The legal moves, from the life of a call: formatted, then sent at once
 * or queued, written, answered; or its result decided before any I/O
 * (deferred); a wait goes back to polling after a written poll, and may
 * poll again or be cut off (its server lost) before its poll is written.
 */
static const struct move legal[] = {
	{ 0, CALL_NEW, CALL_QUEUED },
	{ 0, CALL_NEW, CALL_UNWRITTEN },
	{ 0, CALL_NEW, CALL_DEFERRED },
	{ 0, CALL_NEW, CALL_DONE },
	{ 0, CALL_QUEUED, CALL_UNWRITTEN },
	{ 0, CALL_QUEUED, CALL_DEFERRED },
	{ 0, CALL_QUEUED, CALL_DONE },
	{ 0, CALL_UNWRITTEN, CALL_SENT },
	{ 0, CALL_UNWRITTEN, CALL_DONE },
	{ 1, CALL_UNWRITTEN, CALL_UNWRITTEN },
	{ 1, CALL_UNWRITTEN, CALL_QUEUED },
	{ 1, CALL_UNWRITTEN, CALL_DEFERRED },
	{ 0, CALL_SENT, CALL_DONE },
	{ 1, CALL_SENT, CALL_QUEUED },
	{ 1, CALL_SENT, CALL_UNWRITTEN },
	{ 1, CALL_SENT, CALL_DEFERRED },
	{ 0, CALL_DEFERRED, CALL_DONE },
};

static int
listed(int wait, enum call_stage from, enum call_stage to)
{
	size_t i;

	for (i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
		if (legal[i].from == from && legal[i].to == to &&
		    (legal[i].wait == 0 || wait))
			return 1;
	return 0;
}

START_TEST(stage_moves_table)
{
	int wait, from, to;

	for (wait = 0; wait <= 1; wait++)
		for (from = 0; from < CALL_NSTAGES; from++)
			for (to = 0; to < CALL_NSTAGES; to++)
				ck_assert_msg(tier_stage_legal(wait, from,
				                  to) == listed(wait, from, to),
				    "wait=%d %s -> %s", wait,
				    tier_stage_name(from), tier_stage_name(to));
}
END_TEST

START_TEST(stage_done_is_final)
{
	int to;

	for (to = 0; to < CALL_NSTAGES; to++) {
		ck_assert_int_eq(tier_stage_legal(0, CALL_DONE, to), 0);
		ck_assert_int_eq(tier_stage_legal(1, CALL_DONE, to), 0);
	}
}
END_TEST

START_TEST(stage_out_of_range_refused)
{
	ck_assert_int_eq(tier_stage_legal(1, CALL_NSTAGES, CALL_DONE), 0);
	ck_assert_int_eq(tier_stage_legal(1, CALL_NEW, CALL_NSTAGES), 0);
	ck_assert_int_eq(
	    tier_stage_legal(1, (enum call_stage) - 1, CALL_DONE), 0);
	ck_assert_str_eq(tier_stage_name(CALL_NSTAGES), "?");
	ck_assert_str_eq(tier_stage_name(CALL_QUEUED), "queued");
	ck_assert_str_eq(tier_stage_name(CALL_DONE), "done");
}
END_TEST

static Suite *
stage_suite(void)
{
	Suite *s = suite_create("tier_stage");
	TCase *tc = tcase_create("moves");

	tcase_add_test(tc, stage_moves_table);
	tcase_add_test(tc, stage_done_is_final);
	tcase_add_test(tc, stage_out_of_range_refused);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(stage_suite, NULL, NULL);
