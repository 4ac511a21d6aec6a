/*
 * fetch_int.h: the fetcher's structures, shared by fetch.c (transfers on
 * the loop) and fetch_resp.c (what a response leaves: headers, body, the
 * result). Nothing else includes it.
 */
#ifndef ROBOTSD_FETCH_INT_H
#define ROBOTSD_FETCH_INT_H

#include <sys/queue.h>

#include <curl/curl.h>
#include <event2/event_struct.h>

#include "buf.h"
#include "cabundle.h"
#include "fetch.h"

enum fetch_hdr {
	HDR_CACHE_CONTROL,
	HDR_EXPIRES,
	HDR_AGE,
	HDR_RETRY_AFTER,
	HDR_DATE,
	HDR_COUNT,
};

/* One socket curl asked us to watch. */
struct fetch_sock {
	LIST_ENTRY(fetch_sock) link;
	struct fetcher *fetcher;
	curl_socket_t fd;
	struct event ev;
};

struct fetch {
	TAILQ_ENTRY(fetch) link;
	struct fetcher *fetcher;
	CURL *easy;
	struct curl_slist *connect_to; /* own copy: outlives a reload */
	char *url;
	fetch_done_cb cb;
	void *arg;
	int running;           /* in the multi (else queued) */
	struct event deadline; /* the whole fetch, redirects included */
	struct buf body;       /* capped at ROBOTS_MAX_BODY */
	int truncated;
	int nomem;
	int private_refused;
	char *hdr[HDR_COUNT];
	char *errbuf; /* CURL_ERROR_SIZE, with the easy handle */
	size_t held;  /* bytes counted in fetcher->bytes */
};

TAILQ_HEAD(fetch_list, fetch);

struct fetcher {
	struct event_base *base;
	CURLM *multi;
	struct event timer;
	struct event kick; /* next turn: a new burst of starts */
	int burst;         /* transfers curl may still be handed this turn */
	int still_running;
	struct fetch_list running;
	struct fetch_list queued;
	size_t nrunning;
	size_t nqueued;
	size_t bytes; /* the fetches themselves, their URLs and bodies */
	size_t churn; /* bytes held by fetches ended since the last trim */
	LIST_HEAD(, fetch_sock) socks;
	/* Copied from the settings. */
	char *user_agent;
	char *ca_file;
	struct cabundles ca;
	char **connect_to; /* NULL-terminated */
	long timeout;
	size_t max_fetches;
	int deny_private;
};

/* The response (fetch_resp.c). */
void fetch_reset_response(struct fetch *);
size_t fetch_header_cb(char *, size_t, size_t, void *);
size_t fetch_write_cb(char *, size_t, size_t, void *);
void fetch_fill_result(struct fetch *, CURLcode, struct fetch_result *);

#endif /* ROBOTSD_FETCH_INT_H */
