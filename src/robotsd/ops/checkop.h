/*
 * checkop.h: the check op, the daemon's hot path. Both request decoders
 * hand it one shape (struct wire_check); each URL is split, looked up and
 * its row written into the answer at once when its origin is settled in
 * the cache, or the check parks on its session until every fetch it waits
 * on has ended or its deadline passes. Answers are JSON text (wire/jsonw.h).
 */
#ifndef ROBOTSD_CHECKOP_H
#define ROBOTSD_CHECKOP_H

#include <stdint.h>

struct event_base;
struct cache;
struct session;
struct request;
struct buf;
struct jw;
struct wire_check;

/* Where a verdict came from (the answer's "source"). */
enum check_source {
	CHECK_CACHE,   /* a fresh cached copy */
	CHECK_FETCHED, /* the fetch this check waited on */
	CHECK_STALE,   /* an old copy, while it is refetched */
	CHECK_SHARED,  /* a copy the shared tier gave the waited fetch */
	CHECK_SOURCES
};
/* Why it says so (the answer's "reason"). */
enum check_reason {
	CHECK_RULE,        /* a rule decided */
	CHECK_NO_RULE,     /* no rule matched */
	CHECK_ROBOTS_TXT,  /* the URL is /robots.txt itself */
	CHECK_UNAVAILABLE, /* no robots.txt (4xx): allowed */
	CHECK_UNREACHABLE, /* robots.txt failed: disallowed */
	CHECK_REASONS
};
/* Their names in answers and metrics, looked up only when written. */
extern const char *const check_source_names[CHECK_SOURCES];
extern const char *const check_reason_names[CHECK_REASONS];

/* Verdicts given, by source and reason. */
struct check_answers {
	uint64_t n[CHECK_SOURCES][CHECK_REASONS];
	uint64_t verdicts[2]; /* [0] allowed, [1] disallowed */
};

struct check_env {
	struct event_base *base;
	struct cache *cache;
	struct cache *tdm;   /* tdmrep.json's (tdmres.h); NULL: --tdmrep off */
	int tdm_mode;        /* enum tdm_mode */
	double wait_timeout; /* seconds a parked check may wait */
	struct check_answers *answers; /* counted here */
	/* Answers written now: reused, or handed over with give() (NULL:
	 * a buffer for each answer). */
	struct buf *answer;
};

struct cache_entry;
/*
 * {"code":C,"message":M}: why a failing entry is failing (its cause and
 * last error), for check answers and inspect; "null" when not failing.
 */
void check_cause(struct jw *, const struct cache_entry *);

/*
 * Answer check c for session s, its line read at t0 (monotonic seconds,
 * where the latency of its answer counts from: reply.h): at once when
 * every URL is settled, else once the fetches it waits on end (c's
 * strings are copied then, once).
 */
void check_op(const struct check_env *, struct session *, double t0,
    const struct wire_check *c);
/* The same for a check the full decoder (proto_decode()) made. */
void check_request(const struct check_env *, struct session *, double t0,
    const struct request *);
/* Answer the session's waiting checks now with "timeout". */
void check_expire_all(struct session *);
/* The session is closing: drop its waiting checks unanswered. */
void check_cancel_all(struct session *);

#endif /* ROBOTSD_CHECKOP_H */
