/*
 * budget.c: a client connection's output budget and its share of a turn
 * of the loop; see budget.h and docs/protocol.md.
 */
#include <config.h>

#include "conn/budget.h"

/* See budget.h. */
unsigned
budget_answered(const struct budget_view *v)
{
	unsigned act = 0;
	int paused = v->paused;

	if (v->queued > v->max_output)
		return BUDGET_CLOSE;
	if (v->queued > v->max_output / 2 && !paused) {
		act |= BUDGET_PAUSE;
		paused = 1;
	}
	if (v->total > v->output_budget / 2 && !paused && v->nconns > 0 &&
	    v->queued > v->total / v->nconns)
		act |= BUDGET_PAUSE | BUDGET_PAUSE_TOTAL;
	if (budget_over(v->total, v->output_budget))
		act |= BUDGET_SHED;
	return act;
}

int
budget_resume(size_t queued, size_t max_output)
{
	return queued <= max_output / 4;
}

size_t
budget_room(size_t queued, size_t max_output, int closing)
{
	return closing || queued >= max_output ? 0 : max_output - queued;
}

int
budget_over(size_t total, size_t output_budget)
{
	return total > output_budget;
}

int
budget_shed_more(size_t total, size_t output_budget)
{
	return total > output_budget / 4 * 3;
}

/* See budget.h. */
enum budget_turn
budget_turn(
    int over, int new_turn, int backlog, uint64_t now_us, uint64_t slice_us)
{
	if (over)
		return BUDGET_YIELD;
	if (new_turn)
		return backlog ? BUDGET_YIELD : BUDGET_NEW_SLICE;
	return now_us - slice_us > BUDGET_SLICE_US ? BUDGET_YIELD : BUDGET_GO;
}
