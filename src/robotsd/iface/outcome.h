/*
 * outcome.h: what one robots.txt fetch came back with. The fetcher fills
 * it; the cache (and its tests) read it. Types only.
 */
#ifndef ROBOTSD_OUTCOME_H
#define ROBOTSD_OUTCOME_H

#include <stddef.h>

struct cache_version;

/* The longest ETag or Last-Modified kept and sent back (bytes). */
#define FETCH_MAX_VALIDATOR 256

/* The most bytes of status line and headers kept (fetch_result). */
#define FETCH_MAX_RAW_HEADERS 16384

enum fetch_error {
	FETCH_OK,           /* an HTTP answer (any status) */
	FETCH_NETWORK,      /* DNS, connect, TLS, protocol error */
	FETCH_TIMEOUT,      /* --fetch-timeout ran out */
	FETCH_REDIRECTS,    /* more than 5 redirects or a loop */
	FETCH_PRIVATE_ADDR, /* refused by --deny-private-addresses */
	/*
	 * robotsd's own resources ran out (descriptors, memory): says nothing
	 * of the origin, so it is never cached nor shared.
	 */
	FETCH_LOCAL,
};

/*
 * Why an origin is unreachable, finer than enum fetch_error: the "cause"
 * of an answer (docs/protocol.md). Names in lifetime_cause_name(); values
 * are only ever appended.
 */
enum fetch_cause {
	CAUSE_NONE,            /* not failing */
	CAUSE_DNS,             /* the host name did not resolve */
	CAUSE_CONNECT,         /* no connection, or it broke off */
	CAUSE_TLS,             /* handshake or certificate */
	CAUSE_TIMEOUT,         /* --fetch-timeout ran out */
	CAUSE_PRIVATE_ADDRESS, /* refused by --deny-private-addresses */
	CAUSE_HTTP_5XX,        /* a 5xx answer other than 503 */
	CAUSE_HTTP_429,        /* 429 Too Many Requests */
	CAUSE_HTTP_503,        /* 503 Service Unavailable */
	CAUSE_BAD_RESPONSE,    /* not valid HTTP, corrupt encoding, cut short */
	CAUSE_OTHER,           /* anything else, or not recorded */
	CAUSE_COUNT
};

struct fetch_result {
	enum fetch_error error;
	const char *error_message; /* human text when error != FETCH_OK */
	/* enum fetch_cause of a transfer error (curl's code); else NONE */
	unsigned char cause;
	int http_status;  /* 0 when no HTTP answer */
	const char *body; /* decoded, at most ROBOTS_MAX_BODY bytes */
	size_t body_len;
	int truncated;         /* the body was longer and was cut */
	const char *final_url; /* after redirects */
	unsigned redirects;
	double seconds; /* the transfer's duration; 0 if unknown */
	/*
	 * The final response's status line and headers as received, each line
	 * ending in CRLF (capped at FETCH_MAX_RAW_HEADERS bytes; NULL when
	 * there was no HTTP answer).
	 */
	const char *raw_headers;
	size_t raw_headers_len;
	/* The address the final response came from (numeric), or NULL. */
	const char *ip;
	/* Response headers the policy needs; NULL when absent. */
	const char *cache_control;
	const char *expires;
	const char *age;
	const char *retry_after;
	const char *date;
	const char *etag; /* validators of the response, as sent */
	const char *last_modified;
	/*
	 * Not NULL: no fetch happened here; the fleet's state for the origin
	 * was found in the shared tier (every field above is unset).
	 */
	const struct shared_state *shared;
};

/*
 * An origin's state as another robotsd instance left it in the shared
 * tier: the cache installs it as it is instead of applying its policy to a
 * fetch. policy is an enum cache_policy; body is the robots.txt body to
 * compile again (policy CACHE_RULES), so a parser upgrade never trusts an
 * older compiled form.
 */
struct shared_state {
	int policy;
	int http_status;
	double fetched_at, expires_at;
	int good;      /* a copy from a 2xx/4xx answer */
	int stale;     /* serving that copy while failing */
	int truncated; /* the body was cut at 500 KiB */
	unsigned fail_streak;
	double fail_since, next_retry;
	const char *final_url;  /* or NULL */
	const char *last_error; /* or NULL */
	const char *body;
	size_t body_len;
	/*
	 * Provenance, when the writer kept it (else NULL / 0): the version id
	 * of a state without rules (a ruleset's is computed from body), when
	 * that version was first fetched and last confirmed.
	 */
	const char *version;
	double version_since, validated_at;
	const char *etag, *last_modified; /* a 2xx copy's validators */
	/* enum fetch_cause of a failing origin; NONE: the writer kept none */
	unsigned char cause;
	/*
	 * The versions the fleet saw (the writer's history, cache_history()'s
	 * order), merged into the entry's; none from an older writer.
	 */
	const struct cache_version *versions;
	size_t nversions;
};

/*
 * The validators of a conditional refresh (RFC 9110 section 13.1): sent as
 * If-None-Match and If-Modified-Since; NULL when there is none.
 * fetched_since, for a loader with copies of its own (the shared tier):
 * answer from one only when it was fetched at or after this (clock
 * seconds), else fetch; 0: any usable copy. A plain fetcher ignores it.
 */
struct fetch_cond {
	const char *etag;
	const char *last_modified;
	double fetched_since;
};

/* Called once per fetch; result and its strings are valid during the call. */
typedef void (*fetch_done_cb)(const struct fetch_result *, void *arg);

#endif /* ROBOTSD_OUTCOME_H */
