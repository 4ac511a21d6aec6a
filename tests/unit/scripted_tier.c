/*
 * scripted_tier.c: see scripted_tier.h. The tier.h and fetch.h functions
 * the fleet loader calls, recording instead of talking to Redis or an
 * origin.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "scripted_tier.h"
#include "tier/tier_value.h"

struct script_tier st;

/* Record a call. */
static struct script_call *
record(enum script_op op, const char *origin, tier_cb cb, void *arg)
{
	struct script_call *c;

	ck_assert_uint_lt(st.n, SCRIPT_CALLS);
	c = &st.call[st.n++];
	memset(c, 0, sizeof(*c));
	c->op = op;
	snprintf(c->origin, sizeof(c->origin), "%s", origin);
	c->cb = cb;
	c->arg = arg;
	return c;
}

void
tier_get(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	(void)t;
	record(OP_GET, origin, cb, arg)->timeout_ms = timeout_ms;
}

void
tier_lock(struct tier *t, const char *origin, int flags, long timeout_ms,
    tier_cb cb, void *arg)
{
	struct script_call *c = record(OP_LOCK, origin, cb, arg);

	(void)t;
	c->flags = flags;
	c->timeout_ms = timeout_ms;
}

void
tier_wait(
    struct tier *t, const char *origin, long timeout_ms, tier_cb cb, void *arg)
{
	(void)t;
	record(OP_WAIT, origin, cb, arg)->timeout_ms = timeout_ms;
}

void
tier_unlock(struct tier *t, const char *origin, const char *token, tier_cb cb,
    void *arg)
{
	struct script_call *c = record(OP_UNLOCK, origin, cb, arg);

	(void)t;
	snprintf(c->token, sizeof(c->token), "%s", token);
}

void
tier_publish(struct tier *t, const struct tier_value *v, long long px_ms,
    const char *token, tier_cb cb, void *arg)
{
	struct script_call *c = record(OP_PUBLISH, v->origin, cb, arg);

	(void)t;
	(void)px_ms;
	snprintf(c->token, sizeof(c->token), "%s", token);
}

void
tier_purge(struct tier *t, const char *origin, int64_t purged_at,
    long long px_ms, tier_cb cb, void *arg)
{
	(void)t;
	(void)purged_at;
	(void)px_ms;
	record(OP_PURGE, origin, cb, arg);
}

long
tier_budget_left(const struct tier *t, double started, double now)
{
	(void)t;
	(void)started;
	(void)now;
	return st.budget_left;
}

size_t
tier_nservers(const struct tier *t)
{
	(void)t;
	return 1;
}

void
tier_server_stats(const struct tier *t, size_t i, struct tier_server_stats *ss)
{
	(void)t;
	(void)i;
	memset(ss, 0, sizeof(*ss));
	ss->name = "redis://scripted";
}

const char *
tier_result_name(enum tier_result r)
{
	return r == TIER_OK ? "ok" : "not_ok";
}

struct fetch *
fetch_start(struct fetcher *f, const char *url, fetch_done_cb cb, void *arg)
{
	(void)f;
	st.fetches++;
	snprintf(st.fetch_url, sizeof(st.fetch_url), "%s", url);
	st.fetch_cb = cb;
	st.fetch_arg = arg;
	return (struct fetch *)&st; /* any non-NULL handle */
}

/* A conditional fetch is scripted as any other: the test answers it. */
struct fetch *
fetch_start_cond(struct fetcher *f, const char *url,
    const struct fetch_cond *cond, fetch_done_cb cb, void *arg)
{
	(void)cond;
	return fetch_start(f, url, cb, arg);
}

void
fetch_cancel(struct fetch *f)
{
	ck_assert_ptr_eq(f, (struct fetch *)&st);
	st.fetch_cancels++;
	st.fetch_cb = NULL;
}

size_t
fetcher_backlog(const struct fetcher *f)
{
	(void)f;
	return 0;
}

struct script_call *
script_last(enum script_op op)
{
	ck_assert_uint_gt(st.n, 0);
	ck_assert_int_eq(st.call[st.n - 1].op, op);
	return &st.call[st.n - 1];
}

void
script_answer(enum script_op op, enum tier_result result,
    struct tier_value *value, const char *token)
{
	struct script_call *c = script_last(op);
	struct tier_reply rep = {
		.result = result, .value = value, .token = token
	};

	ck_assert_int_eq(c->answered, 0);
	c->answered = 1;
	c->cb(&rep, c->arg);
	if (rep.value != NULL) { /* not taken: freed, as the tier does */
		tier_value_clear(rep.value);
		free(rep.value);
	}
}

void
script_fetched(enum fetch_error error)
{
	struct fetch_result r = { .error = error };
	fetch_done_cb cb = st.fetch_cb;

	ck_assert_ptr_nonnull(cb);
	st.fetch_cb = NULL;
	cb(&r, st.fetch_arg);
}
