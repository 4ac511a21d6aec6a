/*
 * budget.h: the rules that keep a client connection's output bounded and
 * a turn of the event loop short (docs/protocol.md, "Slow readers" and
 * "All clients together"). Pure: counts in, a decision out; server.c and
 * server_conn.c own the connections and act on what these answer.
 *
 * One connection may queue max_output bytes of answers: past half of it
 * its requests are no longer read, past all of it it is closed. All the
 * connections together may queue output_budget bytes: past half of it, a
 * connection that gets an answer while holding more than the average is
 * no longer read; past all of it, the largest holders are closed until
 * the total is under three quarters, and no request line is handled. A
 * paused connection is read again once its client has read all but a
 * quarter of max_output.
 */
#ifndef ROBOTSD_BUDGET_H
#define ROBOTSD_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* Request lines handled in one turn of the loop, microseconds at most. */
#define BUDGET_SLICE_US 4000

/* A connection's output and everyone's, when it has queued an answer. */
struct budget_view {
	size_t queued;        /* this connection's unread answers, bytes */
	int paused;           /* its reading is stopped already */
	size_t total;         /* every connection's unread answers, bytes */
	size_t nconns;        /* connections open (this one included) */
	size_t max_output;    /* --max-output */
	size_t output_budget; /* --max-output-total */
};

/* What queueing an answer calls for; flags, 0: nothing. */
enum budget_act {
	BUDGET_CLOSE = 1,       /* over its own cap: close it, nothing else */
	BUDGET_PAUSE = 2,       /* stop reading it */
	BUDGET_PAUSE_TOTAL = 4, /* with BUDGET_PAUSE: the total's doing */
	BUDGET_SHED = 8,        /* the total is over: close the largest */
};

/* A connection has queued an answer: enum budget_act flags. */
unsigned budget_answered(const struct budget_view *);
/* 1 when a paused connection holding queued bytes may be read again. */
int budget_resume(size_t queued, size_t max_output);
/* What a connection may still queue before its cap (0 when closing). */
size_t budget_room(size_t queued, size_t max_output, int closing);
/* 1 while the total is over the budget: handle no line, shed. */
int budget_over(size_t total, size_t output_budget);
/* 1 while shedding must close one more connection. */
int budget_shed_more(size_t total, size_t output_budget);

/* May a connection handle its next line in this turn of the loop? */
enum budget_turn {
	BUDGET_GO,        /* yes, within the slice under way */
	BUDGET_NEW_SLICE, /* yes, and a new turn's slice begins now */
	BUDGET_YIELD,     /* no: put it on the backlog for a later turn */
};

/*
 * over: budget_over() now; new_turn: the first line of a turn of the
 * loop; backlog: connections wait on the backlog; now_us and slice_us:
 * the time and when this turn's slice began (microseconds).
 */
enum budget_turn budget_turn(
    int over, int new_turn, int backlog, uint64_t now_us, uint64_t slice_us);

#endif /* ROBOTSD_BUDGET_H */
