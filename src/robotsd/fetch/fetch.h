/*
 * fetch.h: robots.txt fetches through libcurl's multi-socket API, on a
 * fetch thread with a libevent loop of its own (the hiperfifo shape);
 * results are called back on the caller's loop. Pure transport: one GET,
 * redirects up to 5 hops, body capped at ROBOTS_MAX_BODY decoded bytes,
 * gzip/deflate decoded; what the outcome means for the cache is decided by
 * cache.c.
 * Extra fetches beyond max_fetches queue; they are never dropped.
 */
#ifndef ROBOTSD_FETCH_H
#define ROBOTSD_FETCH_H

#include <stddef.h>

#include "iface/outcome.h"

/*
 * Idle keep-alive connections kept at most, and descriptors one fetch in
 * flight may hold (its connection and the threaded resolver's socketpair):
 * for the descriptor budget at start.
 */
#define FETCHER_IDLE_CONNS 32
#define FETCHER_FDS_PER_FETCH 3

struct event_base;
struct fetcher;
struct fetch;

struct fetch_settings {
	const char *user_agent;  /* NULL: robotsd's default */
	char *const *connect_to; /* NULL-terminated "H:P:H2:P2", or NULL */
	const char *ca_file;     /* NULL: the system's */
	long timeout;            /* seconds for a whole fetch */
	size_t max_fetches;      /* in flight at once; the rest queue */
	int deny_private;        /* refuse non-public addresses */
};

struct fetcher *fetcher_new(struct event_base *, const struct fetch_settings *);
void fetcher_free(struct fetcher *); /* cancels fetches without callbacks */
/* Apply new settings (a reload): user agent, timeouts, limits, connect-to. */
void fetcher_configure(struct fetcher *, const struct fetch_settings *);
/* Start (or queue) a GET of url; returns NULL only when memory runs out. */
struct fetch *fetch_start(
    struct fetcher *, const char *url, fetch_done_cb, void *arg);
/* fetch_start() sending the validators of cond (NULL: none). */
struct fetch *fetch_start_cond(struct fetcher *, const char *url,
    const struct fetch_cond *, fetch_done_cb, void *arg);
void fetch_cancel(struct fetch *); /* no callback after this */
size_t fetcher_in_flight(const struct fetcher *);
size_t fetcher_queued(const struct fetcher *);
size_t fetcher_backlog(const struct fetcher *); /* beyond --max-fetches */
size_t fetcher_bytes(const struct fetcher *);   /* structs, URLs, bodies */

#endif /* ROBOTSD_FETCH_H */
