/*
 * scripted_tier.h: a shared tier and a fetcher that talk to nothing, for
 * driving the fleet loader (shared.c) through every stage. The loader is
 * linked against these instead of tier.c and fetch.c: each tier call it
 * makes is recorded with its callback, and the test answers the pending
 * one as Redis would (script_answer); each fetch it starts is recorded,
 * and the test ends it (script_fetched). tier_budget_left() answers what
 * the test set, so a budget is spent without waiting for it.
 */
#ifndef TESTS_SCRIPTED_TIER_H
#define TESTS_SCRIPTED_TIER_H

#include <stddef.h>

#include "fetch/fetch.h"
#include "tier/tier.h"

enum script_op { OP_GET, OP_LOCK, OP_WAIT, OP_UNLOCK, OP_PUBLISH, OP_PURGE };

/* One tier call the loader made. */
struct script_call {
	enum script_op op;
	char origin[128];
	char token[TIER_TOKEN_LEN + 1]; /* unlock, publish */
	int flags;                      /* lock */
	long timeout_ms;                /* get, lock, wait */
	tier_cb cb;
	void *arg;
	int answered;
};

#define SCRIPT_CALLS 64

struct script_tier {
	struct script_call call[SCRIPT_CALLS];
	size_t n;
	long budget_left; /* what tier_budget_left() answers */
	/* The fetch the loader started (one at a time here). */
	int fetches, fetch_cancels;
	char fetch_url[128];
	fetch_done_cb fetch_cb;
	void *fetch_arg;
};

extern struct script_tier st;

/* The last call made; fails the test unless it is op. */
struct script_call *script_last(enum script_op op);
/* Answer the last call (an op with a callback) with result. */
void script_answer(enum script_op op, enum tier_result result,
    struct tier_value *value, const char *token);
/* End the fetch the loader started. */
void script_fetched(enum fetch_error error);

#endif /* TESTS_SCRIPTED_TIER_H */
