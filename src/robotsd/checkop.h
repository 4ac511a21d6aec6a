/*
 * checkop.h: the check op, the daemon's hot path. Parses each URL, asks the
 * cache, and answers at once (hit, stale, error) or parks the check on its
 * session until every fetch it waits on has ended or its deadline passes.
 * Answers are written as JSON text (wire/jsonw.h), not built as objects.
 */
#ifndef ROBOTSD_CHECKOP_H
#define ROBOTSD_CHECKOP_H

struct event_base;
struct cache;
struct session;
struct request;

struct check_env {
	struct event_base *base;
	struct cache *cache;
	double wait_timeout; /* seconds a parked check may wait */
};

/* Answer a check request for session s, now or when its fetches end. */
void check_op(const struct check_env *, struct session *, struct request *);
struct wire_check;
/*
 * The fast path for a single-URL check decoded by wire_fast: 1 when it was
 * answered at once from the cache; 0 when nothing was done and the line
 * must take the full path (proto_decode(), check_op()).
 */
int check_fast(
    const struct check_env *, struct session *, const struct wire_check *);
/* Answer the session's waiting checks now with "timeout". */
void check_expire_all(struct session *);
/* The session is closing: drop its waiting checks unanswered. */
void check_cancel_all(struct session *);

#endif /* ROBOTSD_CHECKOP_H */
