/*
 * checkop.h: the check op, the daemon's hot path. Parses each URL, asks the
 * cache, and answers at once (hit, stale, error) or parks the check on its
 * session until every fetch it waits on has ended or its deadline passes.
 * Answers are written as JSON text (wire/jsonw.h), not built as objects.
 */
#ifndef ROBOTSD_CHECKOP_H
#define ROBOTSD_CHECKOP_H

#include <stdint.h>

struct event_base;
struct cache;
struct session;
struct request;
struct buf;

/* Verdicts given, by source and reason (the answers' fields). */
#define CHECK_SOURCES 4 /* cache, fetched, stale, shared */
#define CHECK_REASONS 5 /* rule, no_rule, robots_txt, unavailable, ... */
struct check_answers {
	uint64_t n[CHECK_SOURCES][CHECK_REASONS];
	uint64_t verdicts[2]; /* [0] allowed, [1] disallowed */
};
extern const char *const check_source_names[CHECK_SOURCES];
extern const char *const check_reason_names[CHECK_REASONS];

struct check_env {
	struct event_base *base;
	struct cache *cache;
	double wait_timeout;           /* seconds a parked check may wait */
	struct check_answers *answers; /* counted here */
	/* The fast path's answers: reused, or handed over with give(). */
	struct buf *answer;
};

struct cache_entry;
/*
 * {"code":C,"message":M}: why a failing entry is failing (its cause and
 * last error), for check answers and inspect; "null" when not failing.
 */
void check_cause(struct buf *, const struct cache_entry *);

/* Answer a check request for session s, now or when its fetches end. */
void check_op(const struct check_env *, struct session *, struct request *);
struct wire_check;
/*
 * The fast path for a check decoded by wire_fast (its strings borrowed for
 * the call only): 1 when it was taken care of: answered at once, or for a
 * batch some of whose origins are not cached, answered up to the first of
 * them and the rest left waiting as check_op() would; 0 when nothing was
 * done and the line must take the full path (proto_decode(), check_op()).
 */
int check_fast(
    const struct check_env *, struct session *, const struct wire_check *);
/* Answer the session's waiting checks now with "timeout". */
void check_expire_all(struct session *);
/* The session is closing: drop its waiting checks unanswered. */
void check_cancel_all(struct session *);

#endif /* ROBOTSD_CHECKOP_H */
