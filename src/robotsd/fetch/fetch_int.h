/*
 * fetch_int.h: the fetcher's structures, shared by fetch.c (the main
 * thread's side: the API, the mailboxes), fetch_curl.c (the fetch thread:
 * every libcurl call), fetch_common.c (what both threads call),
 * fetch_resp.c (what a response leaves: headers, body, the result) and
 * fetch_spare.c (the thread's next loop base, whatever descriptors are
 * left). Only those and the fetcher's unit test include it.
 *
 * Who owns a struct fetch (f->lock guards where, phase and cancelled, the
 * lists inbox, outbox and cancels, and the counters' changes):
 *
 *   FETCH_INBOX   main made it and posted it; main may still take it back
 *                 (a cancel frees it there: the thread never saw it).
 *   FETCH_THREAD  the thread's: in its FIFO or in the multi. A cancel marks
 *                 it cancelled and posts it on f->cancels; the thread takes
 *                 it out of curl and frees it.
 *   FETCH_OUTBOX  the transfer ended: the thread has filled res and freed
 *                 every curl resource, and never looks at it again. Main
 *                 calls back (unless a cancel took it first) and frees it.
 *   FETCH_MAIN    main is calling its callback; then main frees it.
 *
 * url, cb and arg are set before the fetch is posted and never change.
 * What curl fills (body, hdr, res) is the thread's until it moves the fetch
 * to the outbox under the lock, and main's after it took it from there.
 */
#ifndef ROBOTSD_FETCH_INT_H
#define ROBOTSD_FETCH_INT_H

#include <sys/queue.h>

#include <pthread.h>
#include <stdatomic.h>

#include <curl/curl.h>
#include <event2/event_struct.h>

#include "wire/buf.h"
#include "fetch/cabundle.h"
#include "fetch/fetch.h"

/*
 * Transfers handed to curl per turn of the fetch thread's loop. curl sets
 * up every new transfer (connect, TLS context, ClientHello) in its next
 * curl_multi_socket_action() call, whichever socket that call is for; the
 * rest start in later turns, after the sockets that are ready.
 */
#define FETCH_BURST 16

enum fetch_hdr {
	HDR_CACHE_CONTROL,
	HDR_EXPIRES,
	HDR_AGE,
	HDR_RETRY_AFTER,
	HDR_DATE,
	HDR_ETAG,
	HDR_LAST_MODIFIED,
	HDR_COUNT,
};

enum fetch_where { FETCH_INBOX, FETCH_THREAD, FETCH_OUTBOX, FETCH_MAIN };

/* What the counters count it as (none once ended or cancelled). */
enum fetch_phase { FETCH_QUEUED, FETCH_RUNNING, FETCH_ENDED };

/* Where the thread keeps it. */
enum fetch_tstate { FETCH_T_QUEUED, FETCH_T_RUNNING, FETCH_T_OUT };

/* One socket curl asked the thread to watch. */
struct fetch_sock {
	LIST_ENTRY(fetch_sock) link;
	struct event ev; /* on the socket curl named */
};

#define FETCH_IP_SIZE 46 /* INET6_ADDRSTRLEN */

struct fetch {
	TAILQ_ENTRY(fetch) link;         /* inbox, thread FIFO/multi, outbox */
	STAILQ_ENTRY(fetch) cancel_link; /* f->cancels */
	struct fetcher *fetcher;
	char *url;
	fetch_done_cb cb;
	void *arg;
	size_t held; /* bytes counted in fetcher->bytes */
	/* Under f->lock (one byte each: never a word shared with others). */
	unsigned char where;     /* enum fetch_where */
	unsigned char phase;     /* enum fetch_phase */
	unsigned char cancelled; /* set once, by main */
	/* The fetch thread's while it owns the fetch. */
	unsigned char tstate; /* enum fetch_tstate */
	unsigned char nomem;
	unsigned char private_refused;
	int local_errno; /* socket() failed for want of local resources */
	/* The outcome: filled by the thread, read by main from the outbox. */
	unsigned char truncated;
	unsigned char error; /* enum fetch_error */
	unsigned char cause; /* enum fetch_cause of curl's code */
	int http_status;
	unsigned redirects;
	double seconds;
	const char *error_message; /* errbuf or a static string */
	char *final_url;           /* NULL: url */
	struct buf body;           /* capped at ROBOTS_MAX_BODY */
	char *hdr[HDR_COUNT];
	struct buf raw;         /* status line and headers, capped */
	char ip[FETCH_IP_SIZE]; /* curl's primary IP of the last transfer */
	char *errbuf;           /* CURL_ERROR_SIZE */
	CURL *easy;
	struct curl_slist *connect_to;   /* own copy: outlives a reload */
	struct curl_slist *cond_headers; /* If-None-Match etc., or NULL */
	struct event deadline; /* the whole fetch, redirects included */
};

TAILQ_HEAD(fetch_list, fetch);
STAILQ_HEAD(fetch_cancels, fetch);

/* Settings as the thread uses them: main makes a copy, the thread owns it. */
struct fetch_conf {
	char *user_agent;
	char *ca_file;
	char **connect_to;  /* NULL-terminated */
	struct cabundle ca; /* fd -1: none made */
	long timeout;
	size_t max_fetches;
	int deny_private;
};

struct fetcher {
	/* Main's. */
	struct event_base *base;
	struct event outbox_ev; /* on base: the thread ended some */
	struct event start_ev;  /* on base: start the thread */
	int ca_made;            /* a bundle was made (and posted) once */
	size_t churn; /* bytes held by fetches ended since the last trim */
	int started;
	unsigned long logged_renewed, logged_kept; /* loop renewals logged */
	int wake_thread; /* eventfds: a message waits */
	int wake_main;
	/* Under lock. */
	pthread_mutex_t lock;
	struct fetch_list inbox;
	struct fetch_list outbox;
	struct fetch_cancels cancels;
	struct fetch_conf *conf; /* newer settings, not yet taken */
	int stop;
	int dead; /* the thread could not set curl up */
	/* The thread's loop renewals, for main to log (fetch_log_loop()). */
	unsigned long loop_renewed, loop_kept, loop_spared;
	int loop_errno;   /* why the last one was kept */
	pthread_t thread; /* the one running: an idle thread hands over */
	/* Read anywhere; changed under lock (bytes: anywhere, atomically). */
	atomic_size_t nrunning;
	atomic_size_t nqueued;
	atomic_size_t
	    nactive;         /* queued or running: ENDED is the only way out */
	atomic_size_t slots; /* the newest --max-fetches (main writes it) */
	atomic_size_t bytes; /* the fetches themselves, their URLs and bodies */
	/* For tests: most transfers in the multi at once, and per turn. */
	atomic_size_t max_running;
	atomic_size_t max_per_turn;
	/* The thread's. */
	struct event_base *tbase;
	struct event inbox_ev;
	CURLM *multi;
	struct event timer;
	struct event kick; /* next turn: a new burst of starts */
	struct event idle; /* no transfer for a while: let curl go */
	int handover;      /* idle: end, a new thread takes the loop on */
	pthread_t prev;    /* the thread that handed over, to join */
	int burst;         /* transfers curl may still be handed this turn */
	size_t turn_added;
	int still_running;
	struct fetch_list running;
	struct fetch_list queued;
	size_t trunning; /* in the multi, cancelled ones included */
	LIST_HEAD(, fetch_sock) socks;
	struct fetch_conf set;
	struct cabundles ca;
	int spare[2]; /* a pipe for the next loop base (fetch_spare.c) */
};

/* The fetch thread (fetch_curl.c). */
int fetch_thread_prepare(struct fetcher *); /* on main, before it runs */
void *fetch_thread_main(void *);
void fetch_thread_release(struct fetcher *); /* on main, after it ended */

/*
 * The fetch thread's next loop base, made with method only and, should the
 * system have no pipe left, the spare pipe (made here first if need be);
 * NULL with errno when none can be had. *used: the spare went into it.
 */
struct event_base *fetch_spare_base(
    int spare[2], const char *method, int *used);
int fetch_spare_make(int spare[2]); /* 0, or -1 with errno */
void fetch_spare_close(int spare[2]);

/* Both sides (fetch_common.c). */
void fetch_post(int fd);
void fetch_take_post(int fd);
int fetch_set_phase(struct fetch *, enum fetch_phase); /* under lock */
void fetch_conf_clear(struct fetch_conf *);
void fetch_free_mem(struct fetch *);

/* The response (fetch_resp.c). */
void fetch_reset_response(struct fetch *);
size_t fetch_header_cb(char *, size_t, size_t, void *);
size_t fetch_write_cb(char *, size_t, size_t, void *);
void fetch_fill_outcome(struct fetch *, CURLcode); /* on the thread */
/* The cause a failed transfer's code names (CAUSE_NONE for CURLE_OK). */
enum fetch_cause fetch_cause_of_curl(CURLcode);
void fetch_result_of(const struct fetch *, struct fetch_result *);

#endif /* ROBOTSD_FETCH_INT_H */
