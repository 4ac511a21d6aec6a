/*
 * dispatch.c: the dispatcher and its op switch. Sessions
 * (dispatch_session.c) hand it each decoded request; checks go to
 * checkop.c, the small ops to dispatch_ops.c. Every answer leaves through
 * the session's struct reply.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>

#include "wire/buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "ops/dispatch.h"
#include "ops/dispatch_int.h"
#include "wire/proto.h"
#include "iface/reply.h"
#include "ops/session.h"
#include "base/xmalloc.h"

/* Answer one decoded request, its line read at t0; clears req. */
void
dispatch_request(
    struct dispatch *d, struct session *s, double t0, struct request *req)
{
	static const unsigned char kinds[] = { [OP_CHECK] = REPLY_CHECK_CACHED,
		[OP_INSPECT] = REPLY_INSPECT,
		[OP_PURGE] = REPLY_PURGE,
		[OP_STATS] = REPLY_STATS,
		[OP_PING] = REPLY_PING,
		[OP_CLOCK] = REPLY_PING,
		[OP_HISTORY] = REPLY_HISTORY,
		[OP_WATCH] = REPLY_WATCH };

	const struct reply_stamp st = { t0, kinds[req->op] };

	switch (req->op) {
	case OP_CHECK:
		check_request(&d->env, s, t0, req);
		break;
	case OP_INSPECT:
		dispatch_inspect(d, s, &st, req);
		break;
	case OP_PURGE:
		if (s->admin)
			dispatch_purge(d, s, &st, req);
		else
			dispatch_error(s, &st, req->id, PE_FORBIDDEN,
			    "purge needs the admin right: use robotsd's admin "
			    "socket, or run it as root, as robotsd's user or "
			    "as "
			    "a member of its admin-group");
		break;
	case OP_HISTORY:
		dispatch_history(d, s, &st, req);
		break;
	case OP_STATS:
		dispatch_stats(d, s, &st, req);
		break;
	case OP_PING:
	case OP_CLOCK:
		dispatch_simple(d, s, &st, req);
		break;
	case OP_WATCH:
		dispatch_watch(d, s, &st, req);
		break;
	}
	proto_request_clear(req);
}

struct dispatch *
dispatch_new(struct event_base *base, struct cache *cache, struct clock *clk,
    stats_fn stats, void *stats_arg)
{
	struct dispatch *d = xcalloc(1, sizeof(*d));

	d->cache = cache;
	d->clock = clk;
	d->stats = stats;
	d->stats_arg = stats_arg;
	d->env.base = base;
	d->env.cache = cache;
	d->env.answers = &d->answers;
	d->env.answer = &d->answer;
	TAILQ_INIT(&d->sessions);
	return d;
}

void
dispatch_configure(struct dispatch *d, const struct dispatch_settings *set)
{
	d->test_clock = set->test_clock;
	d->env.wait_timeout = set->wait_timeout;
}

/* The cache of tdmrep.json (NULL: --tdmrep off) and the --tdmrep mode. */
void
dispatch_set_tdm(struct dispatch *d, struct cache *tdm, int mode)
{
	d->env.tdm = tdm;
	d->env.tdm_mode = mode;
}

void
dispatch_set_feed(struct dispatch *d, struct feed *f)
{
	d->feed = f;
}

void
dispatch_free(struct dispatch *d)
{
	if (d == NULL)
		return;
	buf_clear(&d->answer);
	buf_clear(&d->unescaped);
	free(d);
}

/* Answer every waiting check with "timeout" (the drain's deadline). */
void
dispatch_expire_waiting(struct dispatch *d)
{
	struct session *s, *next;

	for (s = TAILQ_FIRST(&d->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, link); /* an answer may close its client */
		check_expire_all(s);
	}
}

uint64_t
dispatch_requests(const struct dispatch *d)
{
	return d->requests;
}

/* Verdicts given, by source and reason. */
const struct check_answers *
dispatch_answers(const struct dispatch *d)
{
	return &d->answers;
}
