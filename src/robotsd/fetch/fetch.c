/*
 * fetch.c: the fetcher's main-thread side. libcurl runs on a thread of its
 * own (fetch_curl.c) with its own event_base, so the TLS setup of hundreds
 * of https fetches never delays the clients' events on the main loop. Here:
 * the API of fetch.h, and the two mailboxes between the threads, each a
 * list under one mutex and an eventfd that wakes the other side:
 *
 *   main -> thread: new fetches (inbox), cancels, settings, stop;
 *   thread -> main: ended fetches (outbox), called back one per event
 *   callback at the loop's low priority, like any other fetch event.
 *
 * What both threads call (the wake-ups, a fetch's phase, the frees) is
 * fetch_common.c's. fetch_int.h says who owns a fetch at each step.
 * Callbacks run on the main thread only, once per fetch not cancelled;
 * logging too (log.c is not thread-safe). The thread starts at the main
 * loop's first turn, so the daemon may fork (daemon()) after fetcher_new().
 *
 * The caller calls curl_global_init(CURL_GLOBAL_DEFAULT) once before
 * fetcher_new(); nothing here keeps global state.
 */
#include <config.h>

#include <sys/eventfd.h>
#include <sys/queue.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "robots.h"
#include "wire/buf.h"
#include "fetch/cabundle.h"
#include "fetch/fetch_int.h"
#include "base/strv.h"
#include "fetch/fetch.h"
#include "base/log.h"

#define FETCH_DEFAULT_UA PACKAGE_NAME "/" PACKAGE_VERSION
/*
 * Once fetches have held this many bytes (bodies above all) since the heap
 * was last trimmed, the next moment no fetch runs or waits trims it. A
 * burst of fetches leaves glibc's heaps full of freed bodies and parser
 * scratch between the rulesets it made (warming the 2,000 corpus origins:
 * 3 KB an origin, a fifth of what they keep); malloc_trim() hands those
 * pages back, the fetch thread's arena's included.
 */
#define FETCH_TRIM_BYTES (4 << 20)

static void
fetch_conf_free(struct fetch_conf *c)
{
	if (c == NULL)
		return;
	fetch_conf_clear(c);
	free(c);
}

/* A cut body is logged here; the fetch line is the cache's (fetchlog.h). */
static void
fetch_log_done(struct fetch *fe)
{
	char ubuf[LOG_KV_BUF];

	if (fe->truncated)
		log_event(LOG_INFO, "fetch_truncated", "url=%s bytes=%d",
		    log_kvs(fe->url, ubuf, sizeof(ubuf)), ROBOTS_MAX_BODY);
}

/* Trim the heap when the fetches that churned it are all done. */
static void
fetch_maybe_trim(struct fetcher *f)
{
	if (atomic_load(&f->nrunning) == 0 && atomic_load(&f->nqueued) == 0 &&
	    f->churn > FETCH_TRIM_BYTES) {
		f->churn = 0;
		malloc_trim(0);
	}
}

/* The fetch thread's loop renewals, as read under the lock. */
struct fetch_loop_seen {
	unsigned long renewed, kept, spared;
	int err;
};

/*
 * Log the fetch thread's loop renewals since the last look: each one at
 * debug, each one kept (no descriptor or memory for a new base: the old
 * loop goes on, robotsd with it) as a warning.
 */
static void
fetch_log_loop(struct fetcher *f, const struct fetch_loop_seen *s)
{
	char ebuf[LOG_KV_BUF];

	if (s->renewed != f->logged_renewed)
		log_event(LOG_DEBUG, "fetch_loop_renewed",
		    "renewed=%lu spare_used=%lu", s->renewed, s->spared);
	if (s->kept != f->logged_kept)
		log_event(LOG_WARNING, "fetch_loop_kept",
		    "kept=%lu error=%s note=\"the fetch thread keeps its "
		    "loop: no new one could be made\"",
		    s->kept, log_kvs(strerror(s->err), ebuf, sizeof(ebuf)));
	f->logged_renewed = s->renewed;
	f->logged_kept = s->kept;
}

/*
 * The thread ended fetches: call one back per callback (the loop looks at
 * the clients between them), and come again while more wait.
 */
static void
fetch_outbox_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;
	struct fetch_loop_seen seen;
	struct fetch_result r;
	struct fetch *fe;
	int more, dead;

	(void)fd;
	(void)kind;
	fetch_take_post(f->wake_main);
	pthread_mutex_lock(&f->lock);
	dead = f->dead;
	seen = (struct fetch_loop_seen){ f->loop_renewed, f->loop_kept,
		f->loop_spared, f->loop_errno };
	if ((fe = TAILQ_FIRST(&f->outbox)) != NULL) {
		TAILQ_REMOVE(&f->outbox, fe, link);
		fe->where = FETCH_MAIN;
	}
	more = !TAILQ_EMPTY(&f->outbox);
	pthread_mutex_unlock(&f->lock);
	fetch_log_loop(f, &seen);
	if (dead)
		fatalx("out of memory: the fetch thread cannot set up curl");
	if (more)
		event_active(&f->outbox_ev, EV_READ, 0);
	if (fe == NULL)
		return;
	fetch_log_done(fe);
	fetch_result_of(fe, &r);
	fe->cb(&r, fe->arg);
	f->churn += fe->held;
	fetch_free_mem(fe);
	if (!more)
		fetch_maybe_trim(f);
}

/* The main loop runs: start the thread (it must not predate a fork). */
static void
fetch_start_thread_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;
	sigset_t all, old;
	int rc;

	(void)fd;
	(void)kind;
	/* Signals are the main loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&f->lock); /* f->thread is under lock */
	rc = pthread_create(&f->thread, NULL, fetch_thread_main, f);
	pthread_mutex_unlock(&f->lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		fatalx("cannot start the fetch thread: %s", strerror(rc));
	f->started = 1;
}

/* Create the fetcher; NULL when memory runs out. */
struct fetcher *
fetcher_new(struct event_base *base, const struct fetch_settings *set)
{
	static const struct timeval now;
	struct fetcher *f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->base = base;
	f->wake_thread = f->wake_main = -1;
	pthread_mutex_init(&f->lock, NULL);
	TAILQ_INIT(&f->inbox);
	TAILQ_INIT(&f->outbox);
	STAILQ_INIT(&f->cancels);
	if ((f->wake_thread = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (f->wake_main = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    fetch_thread_prepare(f) == -1) {
		fetcher_free(f);
		return NULL;
	}
	event_assign(&f->outbox_ev, base, f->wake_main, EV_READ | EV_PERSIST,
	    fetch_outbox_cb, f);
	event_add(&f->outbox_ev, NULL);
	evtimer_assign(&f->start_ev, base, fetch_start_thread_cb, f);
	evtimer_add(&f->start_ev, &now);
	if ((curl_version_info(CURLVERSION_NOW)->features &
	        CURL_VERSION_ASYNCHDNS) == 0)
		log_event(LOG_WARNING, "dns_synchronous",
		    "note=\"libcurl resolves names synchronously: a slow DNS "
		    "server will stall the fetches\"");
	fetcher_configure(f, set);
	if (f->conf == NULL) {
		fetcher_free(f);
		return NULL;
	}
	return f;
}

/* Stop the thread, then free every fetch without callbacks, and all. */
void
fetcher_free(struct fetcher *f)
{
	struct fetch *fe;

	if (f == NULL)
		return;
	if (f->started) {
		pthread_t t;

		pthread_mutex_lock(&f->lock);
		f->stop = 1;
		t = f->thread; /* no handover after stop */
		pthread_mutex_unlock(&f->lock);
		fetch_post(f->wake_thread);
		pthread_join(t, NULL);
	}
	fetch_thread_release(f);
	while ((fe = TAILQ_FIRST(&f->inbox)) != NULL) {
		TAILQ_REMOVE(&f->inbox, fe, link);
		fetch_free_mem(fe);
	}
	while ((fe = TAILQ_FIRST(&f->outbox)) != NULL) {
		TAILQ_REMOVE(&f->outbox, fe, link);
		fetch_free_mem(fe);
	}
	fetch_conf_free(f->conf);
	if (event_initialized(&f->outbox_ev)) {
		event_del(&f->outbox_ev);
		event_del(&f->start_ev);
	}
	if (f->wake_thread != -1)
		close(f->wake_thread);
	if (f->wake_main != -1)
		close(f->wake_main);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* A copy of the settings for the thread; NULL when memory runs out. */
static struct fetch_conf *
fetch_conf_new(const struct fetch_settings *set)
{
	const char *ua =
	    set->user_agent != NULL ? set->user_agent : FETCH_DEFAULT_UA;
	struct fetch_conf *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->ca = (struct cabundle)CABUNDLE_NONE;
	if ((c->user_agent = strdup(ua)) == NULL ||
	    (set->ca_file != NULL &&
	        (c->ca_file = strdup(set->ca_file)) == NULL) ||
	    (c->connect_to = strv_dup(set->connect_to)) == NULL) {
		fetch_conf_free(c);
		return NULL;
	}
	c->timeout = set->timeout > 0 ? set->timeout : 30;
	c->max_fetches = set->max_fetches > 0 ? set->max_fetches : 1;
	c->deny_private = set->deny_private;
	return c;
}

/*
 * Apply a (re)loaded config: the thread takes a copy at its next turn.
 * Fetches already running keep what their easy handle was given (user
 * agent, timeout, CA bundle, --connect-to list); the address policy
 * checked at each of their connects (--deny-private-addresses, and which
 * --connect-to entries exempt a host) is the current one. A larger
 * max_fetches starts queued ones at once. On memory exhaustion the old
 * values stay.
 */
void
fetcher_configure(struct fetcher *f, const struct fetch_settings *set)
{
	struct fetch_conf *c, *old;
	char err[256], ebuf[LOG_KV_BUF];

	if ((c = fetch_conf_new(set)) == NULL) {
		log_event(LOG_WARNING, "settings_not_applied",
		    "module=fetch error=\"out of memory\" outcome=kept_old");
		return;
	}
	if (cabundles_make(&c->ca, set->ca_file, err, sizeof(err)) == -1)
		log_event(LOG_WARNING, "ca_bundle_failed",
		    "error=%s outcome=%s", log_kvs(err, ebuf, sizeof(ebuf)),
		    f->ca_made ? "kept_old" : "read_per_connection");
	else
		f->ca_made = 1;
	pthread_mutex_lock(&f->lock);
	if ((old = f->conf) != NULL && c->ca.fd == -1) {
		c->ca = old->ca; /* the thread has not seen it yet */
		old->ca = (struct cabundle)CABUNDLE_NONE;
	}
	f->conf = c;
	atomic_store(&f->slots, c->max_fetches);
	pthread_mutex_unlock(&f->lock);
	fetch_conf_free(old);
	fetch_post(f->wake_thread);
}

/*
 * Add "name: value" to the request headers l; -1 (l freed) when memory
 * runs out. The value was checked (lifetime_validator_ok): no line breaks.
 */
static int
fetch_add_header(struct curl_slist **l, const char *name, const char *value)
{
	struct curl_slist *n;
	char line[FETCH_MAX_VALIDATOR + 32];

	snprintf(line, sizeof(line), "%s: %s", name, value);
	if ((n = curl_slist_append(*l, line)) == NULL) {
		curl_slist_free_all(*l);
		*l = NULL;
		return -1;
	}
	*l = n;
	return 0;
}

/* The request headers of a conditional fetch; -1 when memory runs out. */
static int
fetch_cond_headers(struct fetch *fe, const struct fetch_cond *cond)
{
	if (cond == NULL)
		return 0;
	if (cond->etag != NULL && fetch_add_header(&fe->cond_headers,
	                              "If-None-Match", cond->etag) == -1)
		return -1;
	if (cond->last_modified != NULL &&
	    fetch_add_header(&fe->cond_headers, "If-Modified-Since",
	        cond->last_modified) == -1)
		return -1;
	return 0;
}

/* Start (or queue) a GET of url; NULL only when memory runs out. */
struct fetch *
fetch_start(struct fetcher *f, const char *url, fetch_done_cb cb, void *arg)
{
	return fetch_start_cond(f, url, NULL, cb, arg);
}

/* The same, conditional on cond's validators. */
struct fetch *
fetch_start_cond(struct fetcher *f, const char *url,
    const struct fetch_cond *cond, fetch_done_cb cb, void *arg)
{
	struct fetch *fe;

	if ((fe = calloc(1, sizeof(*fe))) == NULL)
		return NULL;
	if ((fe->url = strdup(url)) == NULL ||
	    fetch_cond_headers(fe, cond) == -1) {
		free(fe->url);
		free(fe);
		return NULL;
	}
	fe->fetcher = f;
	fe->body = BUF_INIT(ROBOTS_MAX_BODY);
	fe->raw = BUF_INIT(FETCH_MAX_RAW_HEADERS);
	fe->cb = cb;
	fe->arg = arg;
	fe->held = sizeof(*fe) + strlen(url) + 1;
	atomic_fetch_add(&f->bytes, fe->held);
	pthread_mutex_lock(&f->lock);
	fe->where = FETCH_INBOX;
	fe->phase = FETCH_ENDED;
	fetch_set_phase(fe, FETCH_QUEUED);
	TAILQ_INSERT_TAIL(&f->inbox, fe, link);
	pthread_mutex_unlock(&f->lock);
	fetch_post(f->wake_thread);
	return fe;
}

/*
 * Drop a queued or running fetch; its callback never runs. What the thread
 * never saw, or has finished with, is freed here; the rest by the thread.
 */
void
fetch_cancel(struct fetch *fe)
{
	struct fetcher *f;
	int mine = 0, post = 0;

	if (fe == NULL)
		return;
	f = fe->fetcher;
	pthread_mutex_lock(&f->lock);
	switch (fe->where) {
	case FETCH_INBOX:
		TAILQ_REMOVE(&f->inbox, fe, link);
		fetch_set_phase(fe, FETCH_ENDED);
		mine = 1;
		break;
	case FETCH_OUTBOX:
		TAILQ_REMOVE(&f->outbox, fe, link);
		mine = 1;
		break;
	case FETCH_THREAD:
		fetch_set_phase(fe, FETCH_ENDED);
		fe->cancelled = 1;
		STAILQ_INSERT_TAIL(&f->cancels, fe, cancel_link);
		post = 1; /* fe is the thread's to free from now on */
		break;
	case FETCH_MAIN:
		break; /* its own callback: freed when that returns */
	}
	pthread_mutex_unlock(&f->lock);
	if (mine)
		fetch_free_mem(fe);
	else if (post)
		fetch_post(f->wake_thread);
}

/* Transfers in the multi now. */
size_t
fetcher_in_flight(const struct fetcher *f)
{
	return atomic_load(&f->nrunning);
}

/* Fetches waiting for a free slot. */
size_t
fetcher_queued(const struct fetcher *f)
{
	return atomic_load(&f->nqueued);
}

/*
 * Fetches that must wait for a free slot: those beyond --max-fetches of
 * all not ended. Unlike fetcher_queued() it does not depend on how far the
 * fetch thread has got: a fetch handed over while a slot is free is not
 * counted, whether the thread has started it yet or not (on a loaded
 * machine the thread, niced, may take a while to look).
 */
size_t
fetcher_backlog(const struct fetcher *f)
{
	size_t n = atomic_load(&f->nactive), slots = atomic_load(&f->slots);

	return n > slots ? n - slots : 0;
}

/* Bytes the fetches hold (curl's own buffers aside). */
size_t
fetcher_bytes(const struct fetcher *f)
{
	return atomic_load(&f->bytes);
}
