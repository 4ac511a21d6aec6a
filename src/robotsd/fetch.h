/*
 * fetch.h: robots.txt fetches through libcurl's multi-socket API on the
 * libevent loop (the hiperfifo shape). Pure transport: one GET, redirects up
 * to 5 hops, body capped at ROBOTS_MAX_BODY decoded bytes, gzip/deflate
 * decoded; what the outcome means for the cache is decided by cache.c.
 * Extra fetches beyond max_fetches queue; they are never dropped.
 */
#ifndef ROBOTSD_FETCH_H
#define ROBOTSD_FETCH_H

#include <stddef.h>

/*
 * Idle keep-alive connections kept at most, and descriptors one fetch in
 * flight may hold (its connection and the threaded resolver's socketpair):
 * for the descriptor budget at start.
 */
#define FETCHER_IDLE_CONNS 32
#define FETCHER_FDS_PER_FETCH 3

struct event_base;
struct config;
struct fetcher;
struct fetch;

enum fetch_error {
	FETCH_OK,           /* an HTTP answer (any status) */
	FETCH_NETWORK,      /* DNS, connect, TLS, protocol error */
	FETCH_TIMEOUT,      /* --fetch-timeout ran out */
	FETCH_REDIRECTS,    /* more than 5 redirects or a loop */
	FETCH_PRIVATE_ADDR, /* refused by --deny-private-addresses */
};

struct fetch_result {
	enum fetch_error error;
	const char *error_message; /* human text when error != FETCH_OK */
	int http_status;           /* 0 when no HTTP answer */
	const char *body;          /* decoded, at most ROBOTS_MAX_BODY bytes */
	size_t body_len;
	int truncated;         /* the body was longer and was cut */
	const char *final_url; /* after redirects */
	unsigned redirects;
	/* Response headers the policy needs; NULL when absent. */
	const char *cache_control;
	const char *expires;
	const char *age;
	const char *retry_after;
	const char *date;
};

/* Called once per fetch; result and its strings are valid during the call. */
typedef void (*fetch_done_cb)(const struct fetch_result *, void *arg);

struct fetcher *fetcher_new(struct event_base *, const struct config *);
void fetcher_free(struct fetcher *); /* cancels fetches without callbacks */
/* Apply a reloaded config (user agent, timeouts, limits, connect-to). */
void fetcher_configure(struct fetcher *, const struct config *);
/* Start (or queue) a GET of url; returns NULL only when memory runs out. */
struct fetch *fetch_start(
    struct fetcher *, const char *url, fetch_done_cb, void *arg);
void fetch_cancel(struct fetch *); /* no callback after this */
size_t fetcher_in_flight(const struct fetcher *);
size_t fetcher_queued(const struct fetcher *);

#endif /* ROBOTSD_FETCH_H */
