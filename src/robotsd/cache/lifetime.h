/*
 * lifetime.h: the cache's policy as pure functions, with no clock, no I/O
 * and no state of their own: what a fetch outcome means (the contract's
 * status table), how long an answer may be used (RFC 9111 section 4.2.1
 * with the configured bounds), when a failing origin is retried (jittered
 * exponential backoff, the shorter 503/429 schedule, Retry-After), and
 * when an origin failing for long enough without a good copy is allowed
 * (RFC 9309 section 2.3.1.4). cache.c applies them; tests/unit/
 * check_lifetime.c holds their tables.
 */
#ifndef ROBOTSD_LIFETIME_H
#define ROBOTSD_LIFETIME_H

#include <stdint.h>

#include "iface/outcome.h"

struct lifetime_settings {
	double default_ttl; /* an answer without caching headers */
	double min_ttl, max_ttl;
	double retry_min, retry_max;         /* 5xx, network errors */
	double retry_503_min, retry_503_max; /* 503 and 429 */
	double unreachable_allow_after;      /* then allow all */
};

/* The response headers the policy reads; NULL when absent. */
struct http_meta {
	const char *cache_control;
	const char *expires;
	const char *age;
	const char *retry_after;
	const char *date;
};

enum lifetime_class {
	LT_RULES,     /* 2xx: the body's rules */
	LT_ALLOW_ALL, /* 3xx left unfollowed, 4xx but 429, too many redirects */
	LT_FAILED,    /* 5xx, 429, network error, timeout: disallow, retry */
	LT_FAILED_SOON, /* 503 and 429: the short schedule, Retry-After */
	LT_REVALIDATED, /* 304 to a conditional refresh: keep the entry */
};

/*
 * The class of an outcome: answered says whether an HTTP status came back
 * (else a network error or timeout), redirects whether it ended on too
 * many redirects (an allow-all whatever the status). The table itself is
 * librobots' robots_status_class(), which robotsctl shares.
 */
enum lifetime_class lifetime_classify(int answered, int redirects, int status);
/*
 * The class of a refresh's outcome: conditional says the request sent the
 * validators of a ruleset still held. A 304 to it is LT_REVALIDATED (the
 * ruleset is kept, with a lifetime from the 304's headers); anything else,
 * and a 304 to a request without validators, is lifetime_classify()'s.
 */
enum lifetime_class lifetime_classify_refresh(
    int answered, int redirects, int status, int conditional);
/*
 * Whether an ETag or Last-Modified value may be kept and sent back: 1 to
 * FETCH_MAX_VALIDATOR bytes, none a control character (no line breaks
 * that would inject a header) or DEL.
 */
int lifetime_validator_ok(const char *);

/*
 * Seconds a 2xx/4xx answer may be used: no-store or no-cache mean the
 * minimum; else s-maxage (a shared cache's own), else max-age, else
 * Expires - Date, each minus Age and clamped to [min_ttl, max_ttl]; an
 * invalid value means already stale (the minimum). Else the default TTL.
 * wall is the time standing in for a missing Date header.
 */
/*
 * The cause of a failed fetch: from error, the transfer's own cause
 * (net) and the status of an HTTP answer. CAUSE_NONE when the outcome is
 * no failure (2xx, 4xx, redirects).
 */
enum fetch_cause lifetime_cause(
    enum fetch_error, enum fetch_cause net, int http_status);
/* The stable name of a cause ("dns", "http_503", ...); "" for NONE. */
const char *lifetime_cause_name(enum fetch_cause);

double lifetime_ttl(
    const struct lifetime_settings *, const struct http_meta *, double wall);

/* Seconds a Retry-After asks for (delta seconds or HTTP date), or -1. */
double lifetime_retry_after(const struct http_meta *, double wall);

/*
 * Delay before retry number streak (streak >= 1) on the schedule [lo, hi]
 * (the short one when soon): base = min(lo * 2^(streak-1), hi), delay =
 * min(base * (1 + j), hi) with j = lifetime_jitter() in [0, 0.1). A
 * Retry-After (retry_after >= 0, soon only) is clamped to [lo, hi] and
 * gets no jitter.
 */
double lifetime_backoff(const struct lifetime_settings *, unsigned streak,
    int soon, double retry_after, uint64_t origin_hash);

/*
 * Times another instance shared (through Redis), as far as this one's own
 * settings allow, whatever clock or intent wrote them: fetched_at no later
 * than now + LIFETIME_SKEW, fail_since no later than that fetched_at (a
 * streak begins by its last failed fetch); next_retry no later than the
 * longest retry (retry_max, retry_503_max) after the earlier of fetched_at
 * and now, as a failed fetch schedules it; expires_at no later than that
 * too while failing (failing: fail_streak > 0), else no later than the
 * (bounded) fetched_at plus the value's own lifetime, itself at most
 * max_ttl. So the end of a value's state is fixed by the value: reading
 * the same value again later moves it by LIFETIME_SKEW at most, never
 * past fetched_at + its bound. Nothing is moved later than it was.
 */
#define LIFETIME_SKEW 60.0
void lifetime_clamp_shared(const struct lifetime_settings *, double now,
    unsigned fail_streak, double *fetched_at, double *expires_at,
    double *fail_since, double *next_retry);

/* A fraction in [0, 0.1) fixed by origin and streak: spreads retries. */
double lifetime_jitter(uint64_t origin_hash, unsigned streak);

/* 1 when an origin failing since fail_since is to be allowed at now. */
int lifetime_give_up(
    const struct lifetime_settings *, double fail_since, double now);

/*
 * Parse leading decimal seconds (after blanks and a quote); -1 if none.
 * Values past 1e12 stop growing.
 */
double lifetime_parse_secs(const char *);

/*
 * An HTTP date (RFC 9110 section 5.6.7: IMF-fixdate, the obsolete RFC 850
 * and asctime forms) as seconds since the epoch; -1 when it is none. now
 * places an RFC 850 two-digit year: never more than 50 years ahead of it.
 */
int http_date_parse(const char *, double now, double *t);

#endif /* ROBOTSD_LIFETIME_H */
