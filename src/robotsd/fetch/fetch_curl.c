/*
 * fetch_curl.c: the fetch thread. Every libcurl call of the fetcher runs
 * here, on the thread's own event_base, in the hiperfifo shape:
 * sock_cb() mirrors curl's sockets as persistent events, timer_cb() is
 * curl's one timeout, check_multi_info() hands every finished transfer to
 * the main thread through the outbox (fetch_int.h says who owns what).
 * Owns the CURLM, every easy handle, the FIFO of fetches waiting for a free
 * slot (--max-fetches), the settings in use and the CA bundles.
 *
 * TLS setup (contexts, key shares, certificate checks) costs about a
 * millisecond of CPU a connection; here it runs beside the main loop, not
 * in it, so cached checks never wait behind it. Nothing here logs: log.c
 * is the main thread's; what needs a line travels back with the result.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include "policy/netpolicy.h"
#include "policy/parse.h"

#define FETCH_MAX_REDIRS 5
#define FETCH_PROTOCOLS "http,https,ftp"
/*
 * Idle keep-alive connections curl may keep (CURLMOPT_MAXCONNECTS). Each
 * origin is fetched about once a TTL, so few are ever reused; without a
 * cap curl keeps up to 4 per transfer added. Counted in the fd budget.
 */
#define FETCH_IDLE_CONNS FETCHER_IDLE_CONNS
/*
 * The thread's nice value: on a busy CPU the main loop (clients, cache)
 * goes first and TLS setup takes what is left. Lowering one's own
 * priority needs no privilege, but a seccomp filter may refuse it.
 */
#define FETCH_NICE 10
/* Seconds without a transfer before curl's connections and caches go. */
#define FETCH_IDLE_SECS 1

static void fetch_check_multi_info(struct fetcher *);
static int fetch_multi_new(struct fetcher *);
static void fetch_finish(struct fetcher *, struct fetch *, CURLcode);
static void fetch_start_queued(struct fetcher *);

/* libevent saw activity on one of curl's sockets: let curl act on it. */
static void
fetch_event_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;
	int action = 0;

	if (kind & EV_READ)
		action |= CURL_CSELECT_IN;
	if (kind & EV_WRITE)
		action |= CURL_CSELECT_OUT;
	curl_multi_socket_action(f->multi, fd, action, &f->still_running);
	/*
	 * No "still_running == 0: delete the timer" here (as hiperfifo has):
	 * check_multi_info() may have started a queued fetch, whose timer
	 * curl has just armed; curl deletes the timer itself (timeout -1).
	 */
	fetch_check_multi_info(f);
}

/* curl's timeout ran out. */
static void
fetch_timer_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;

	(void)fd;
	(void)kind;
	curl_multi_socket_action(
	    f->multi, CURL_SOCKET_TIMEOUT, 0, &f->still_running);
	fetch_check_multi_info(f);
}

/* CURLMOPT_TIMERFUNCTION: (re)arm or stop the one timer. */
static int
fetch_multi_timer_cb(CURLM *multi, long timeout_ms, void *arg)
{
	struct fetcher *f = arg;
	struct timeval tv;

	(void)multi;
	if (timeout_ms < 0) {
		evtimer_del(&f->timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(&f->timer, &tv);
	return 0;
}

/* Stop watching a socket and free its record. */
static void
fetch_sock_free(struct fetch_sock *s)
{
	event_del(&s->ev);
	LIST_REMOVE(s, link);
	free(s);
}

/* CURLMOPT_SOCKETFUNCTION: mirror what curl wants to watch on fd. */
static int
fetch_multi_sock_cb(
    CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct fetcher *f = arg;
	struct fetch_sock *s = sockp;
	short kind = EV_PERSIST;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL)
			fetch_sock_free(s);
		return 0;
	}
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return -1; /* curl fails the transfers on this fd */
		LIST_INSERT_HEAD(&f->socks, s, link);
		curl_multi_assign(f->multi, fd, s);
	} else
		event_del(&s->ev);
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	event_assign(&s->ev, f->tbase, fd, kind, fetch_event_cb, f);
	event_add(&s->ev, NULL);
	return 0;
}

/* Is the URL curl is connecting for reached through a --connect-to entry? */
static int
fetch_connect_to_applies(const struct fetch *fe)
{
	char *url = NULL, *host = NULL, *port = NULL;
	CURLU *u;
	const char *errstr;
	long pnum = 0;
	int hit = 0;

	if (fe->fetcher->set.connect_to[0] == NULL ||
	    curl_easy_getinfo(fe->easy, CURLINFO_EFFECTIVE_URL, &url) !=
	        CURLE_OK ||
	    url == NULL || (u = curl_url()) == NULL)
		return 0;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	        CURLUE_OK) {
		pnum = (long)parse_num(port, 1, 65535, &errstr);
		hit = netpolicy_ct_any(fe->fetcher->set.connect_to, host, pnum);
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return hit;
}

/* CURLOPT_OPENSOCKETFUNCTION: refuse non-public addresses when told to. */
static curl_socket_t
fetch_opensocket_cb(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
	struct fetch *fe = arg;
	curl_socket_t fd;

	(void)purpose;
	if (fe->fetcher->set.deny_private &&
	    netpolicy_private_sa(&addr->addr) &&
	    !fetch_connect_to_applies(fe)) {
		fe->private_refused = 1;
		return CURL_SOCKET_BAD;
	}
	fd =
	    socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
	if (fd == -1 && (errno == EMFILE || errno == ENFILE ||
	                    errno == ENOMEM || errno == ENOBUFS))
		fe->local_errno = errno; /* ours, not the origin's */
	return fd;
}

/* Build the curl_slist of connect-to entries; -1 when memory runs out. */
static int
fetch_build_connect_to(struct fetch *fe)
{
	struct curl_slist *l;
	size_t i;

	for (i = 0; fe->fetcher->set.connect_to[i] != NULL; i++) {
		l = curl_slist_append(
		    fe->connect_to, fe->fetcher->set.connect_to[i]);
		if (l == NULL)
			return -1;
		fe->connect_to = l;
	}
	return 0;
}

/* Create and configure the easy handle of a fetch. */
static int
fetch_setup_easy(struct fetch *fe)
{
	struct fetcher *f = fe->fetcher;
	CURL *e;

	if ((e = fe->easy = curl_easy_init()) == NULL ||
	    (fe->errbuf == NULL &&
	        (fe->errbuf = calloc(1, CURL_ERROR_SIZE)) == NULL) ||
	    fetch_build_connect_to(fe) == -1)
		return -1;
	curl_easy_setopt(e, CURLOPT_URL, fe->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, fe);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, fe->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	/* Timeout or cancel mid-lookup: forget the resolver thread, no join. */
	curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, f->set.user_agent);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, f->set.timeout * 1000L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)FETCH_MAX_REDIRS);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, FETCH_PROTOCOLS);
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, FETCH_PROTOCOLS);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, fetch_write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, fe);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, fetch_header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, fe);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, fetch_opensocket_cb);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, fe);
	if (fe->connect_to != NULL)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, fe->connect_to);
	if (fe->cond_headers != NULL)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, fe->cond_headers);
	if (f->ca.cur.fd != -1) {
		curl_easy_setopt(e, CURLOPT_CAINFO, f->ca.cur.path);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
	} else if (f->set.ca_file != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO, f->set.ca_file);
	return 0;
}

/* Free the easy handle and what goes with it (not in the multi). */
static void
fetch_release_easy(struct fetch *fe)
{
	/* Forgotten once deleted: the loop it was on may be renewed. */
	if (event_initialized(&fe->deadline)) {
		evtimer_del(&fe->deadline);
		memset(&fe->deadline, 0, sizeof(fe->deadline));
	}
	if (fe->easy != NULL)
		curl_easy_cleanup(fe->easy);
	fe->easy = NULL;
	curl_slist_free_all(fe->connect_to);
	fe->connect_to = NULL;
}

/*
 * --fetch-timeout ran out. curl's own timeout starts again at each
 * redirect, so this timer is what bounds the whole fetch.
 */
static void
fetch_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fetch *fe = arg;

	(void)fd;
	(void)what;
	fetch_finish(fe->fetcher, fe, CURLE_OPERATION_TIMEDOUT);
}

/* Keep *most the largest value it was shown (the tests read it). */
static void
fetch_note_most(atomic_size_t *most, size_t n)
{
	if (n > atomic_load(most))
		atomic_store(most, n);
}

/*
 * Make the easy handle (a queued fetch has none: a few hundred bytes
 * instead of several KB) and hand it to the multi; -1 if curl refuses it.
 */
static int
fetch_begin(struct fetch *fe)
{
	struct fetcher *f = fe->fetcher;
	struct timeval tv = { .tv_sec = f->set.timeout };

	if (fetch_setup_easy(fe) == -1 ||
	    curl_multi_add_handle(f->multi, fe->easy) != CURLM_OK) {
		fetch_release_easy(fe);
		return -1;
	}
	evtimer_assign(&fe->deadline, f->tbase, fetch_deadline_cb, fe);
	evtimer_add(&fe->deadline, &tv);
	fe->tstate = FETCH_T_RUNNING;
	TAILQ_INSERT_TAIL(&f->running, fe, link);
	fetch_note_most(&f->max_running, ++f->trunning);
	pthread_mutex_lock(&f->lock);
	fetch_set_phase(fe, FETCH_RUNNING);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* Refill the burst at the next loop turn, after the ready sockets. */
static void
fetch_kick(struct fetcher *f)
{
	static const struct timeval now;

	if (!evtimer_pending(&f->kick, NULL))
		evtimer_add(&f->kick, &now);
}

static void
fetch_kick_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;

	(void)fd;
	(void)kind;
	f->burst = FETCH_BURST; /* a new turn */
	f->turn_added = 0;
	fetch_start_queued(f);
}

/*
 * No transfer for FETCH_IDLE_SECS: close curl's idle connections and
 * free its caches, then end the loop for a new thread to take on
 * (fetch_thread_main), so that the thread's heap can go back. What a
 * burst of transfers left (TLS state of the kept connections, curl's
 * tables grown to the burst) is scattered between free chunks, and
 * glibc's per-thread cache of freed chunks, which only the thread's end
 * empties, pins about a page each: malloc_trim() alone returns little.
 */
static void
fetch_idle_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;

	(void)fd;
	(void)kind;
	if (f->trunning > 0 || !TAILQ_EMPTY(&f->queued))
		return;
	curl_multi_cleanup(f->multi);
	f->multi = NULL;
	while (!LIST_EMPTY(&f->socks))
		fetch_sock_free(LIST_FIRST(&f->socks));
	evtimer_del(&f->timer);
	f->handover = 1;
	event_base_loopbreak(f->tbase);
}

/* Nothing runs or waits: let curl go if it stays so. */
static void
fetch_note_idle(struct fetcher *f)
{
	struct timeval tv = { .tv_sec = FETCH_IDLE_SECS };

	if (f->trunning == 0 && TAILQ_EMPTY(&f->queued))
		evtimer_add(&f->idle, &tv);
}

/* Start queued fetches while there is a free slot and burst left. */
static void
fetch_start_queued(struct fetcher *f)
{
	struct fetch *fe;

	while (f->trunning < f->set.max_fetches &&
	       (fe = TAILQ_FIRST(&f->queued)) != NULL) {
		if (f->burst == 0) {
			fetch_kick(f);
			break;
		}
		f->burst--;
		TAILQ_REMOVE(&f->queued, fe, link);
		if (fetch_begin(fe) == -1) {
			/* Only memory exhaustion gets here; requeue later. */
			TAILQ_INSERT_HEAD(&f->queued, fe, link);
			break;
		}
		fetch_note_most(&f->max_per_turn, ++f->turn_added);
	}
}

/*
 * A transfer ended: take it out of curl, keep what main needs and hand it
 * over (a cancelled one waits on f->cancels to be freed here).
 */
static void
fetch_finish(struct fetcher *f, struct fetch *fe, CURLcode rc)
{
	int handed = 0;

	curl_multi_remove_handle(f->multi, fe->easy);
	TAILQ_REMOVE(&f->running, fe, link);
	f->trunning--;
	fe->tstate = FETCH_T_OUT;
	fetch_fill_outcome(fe, rc);
	fetch_release_easy(fe);
	pthread_mutex_lock(&f->lock);
	if (fetch_set_phase(fe, FETCH_ENDED)) {
		fe->where = FETCH_OUTBOX;
		TAILQ_INSERT_TAIL(&f->outbox, fe, link);
		handed = 1;
	}
	pthread_mutex_unlock(&f->lock);
	if (handed)
		fetch_post(f->wake_main);
	fetch_start_queued(f);
	fetch_note_idle(f);
}

/* Hand every finished transfer over. */
static void
fetch_check_multi_info(struct fetcher *f)
{
	struct fetch *fe;
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(f->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		fe = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &fe);
		if (fe != NULL)
			fetch_finish(f, fe, msg->data.result);
	}
}

/* Free a fetch the thread holds (cancelled, or the fetcher stops). */
static void
fetch_drop(struct fetcher *f, struct fetch *fe)
{
	switch (fe->tstate) {
	case FETCH_T_RUNNING:
		curl_multi_remove_handle(f->multi, fe->easy);
		TAILQ_REMOVE(&f->running, fe, link);
		f->trunning--;
		break;
	case FETCH_T_QUEUED:
		TAILQ_REMOVE(&f->queued, fe, link);
		break;
	case FETCH_T_OUT:
		break;
	}
	fetch_release_easy(fe);
	fetch_free_mem(fe);
}

/*
 * Take newer settings. Running fetches keep theirs; the previous CA
 * bundle stays open for those still redirecting under its path.
 */
static void
fetch_apply(struct fetcher *f, struct fetch_conf *c)
{
	if (c->ca.fd != -1)
		cabundles_install(&f->ca, &c->ca);
	fetch_conf_clear(&f->set);
	f->set = *c;
	free(c);
}

/* Main posted something: settings, new fetches, cancels, or stop. */
static void
fetch_inbox_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;
	struct fetch_cancels gone = STAILQ_HEAD_INITIALIZER(gone);
	struct fetch_conf *c;
	struct fetch *fe;

	(void)fd;
	(void)kind;
	fetch_take_post(f->wake_thread);
	pthread_mutex_lock(&f->lock);
	if (f->stop) {
		pthread_mutex_unlock(&f->lock);
		event_base_loopbreak(f->tbase);
		return;
	}
	c = f->conf;
	f->conf = NULL;
	while ((fe = TAILQ_FIRST(&f->inbox)) != NULL) {
		TAILQ_REMOVE(&f->inbox, fe, link);
		fe->where = FETCH_THREAD;
		fe->tstate = FETCH_T_QUEUED;
		TAILQ_INSERT_TAIL(&f->queued, fe, link);
	}
	STAILQ_CONCAT(&gone, &f->cancels);
	pthread_mutex_unlock(&f->lock);
	if (c != NULL)
		fetch_apply(f, c);
	while ((fe = STAILQ_FIRST(&gone)) != NULL) {
		STAILQ_REMOVE_HEAD(&gone, cancel_link);
		fetch_drop(f, fe);
	}
	fetch_start_queued(f);
	fetch_note_idle(f);
}

/* The thread's own events on its loop base; -1 when memory runs out. */
static int
fetch_loop_events(struct fetcher *f)
{
	evtimer_assign(&f->timer, f->tbase, fetch_timer_cb, f);
	evtimer_assign(&f->kick, f->tbase, fetch_kick_cb, f);
	evtimer_assign(&f->idle, f->tbase, fetch_idle_cb, f);
	event_assign(&f->inbox_ev, f->tbase, f->wake_thread,
	    EV_READ | EV_PERSIST, fetch_inbox_cb, f);
	return event_add(&f->inbox_ev, NULL);
}

/* The thread's loop and its events; -1 when memory runs out. */
int
fetch_thread_prepare(struct fetcher *f)
{
	if ((f->tbase = event_base_new()) == NULL)
		return -1;
	f->spare[0] = f->spare[1] = -1;
	(void)fetch_spare_make(f->spare); /* or at the first renewal */
	TAILQ_INIT(&f->running);
	TAILQ_INIT(&f->queued);
	LIST_INIT(&f->socks);
	f->ca = (struct cabundles)CABUNDLES_NONE;
	f->set.ca = (struct cabundle)CABUNDLE_NONE;
	f->burst = FETCH_BURST;
	return fetch_loop_events(f);
}

/* Count a renewal of the loop (err 0) or why it was kept, for main. */
static void
fetch_loop_note(struct fetcher *f, int err, int used)
{
	pthread_mutex_lock(&f->lock);
	if (err != 0) {
		f->loop_kept++;
		f->loop_errno = err;
	} else {
		f->loop_renewed++;
		f->loop_spared += (unsigned long)used;
	}
	pthread_mutex_unlock(&f->lock);
	fetch_post(f->wake_main);
}

/*
 * Idle, with curl and its sockets gone: a new loop base for the next
 * thread, the old one freed. libevent keeps a small record for every
 * descriptor number a loop ever watched until the loop is freed; the
 * fetch thread makes them as a burst opens connections, one between
 * every few freed bodies, and each one pins a page of the thread's heap
 * (about 1.4 MB after the 2,000 corpus origins). Nothing runs or waits,
 * and ended fetches forgot their deadline (fetch_release_easy()), so
 * nothing refers to the old base. Should no new base be had (no memory,
 * or no descriptor: fetch_spare.c), the old one goes on. Main logs each.
 */
static void
fetch_loop_renew(struct fetcher *f)
{
	struct event_base *old = f->tbase, *nb;
	int used;

	nb = fetch_spare_base(f->spare, event_base_get_method(old), &used);
	fetch_loop_note(f, nb == NULL ? errno : 0, used);
	if (nb == NULL)
		return;
	evtimer_del(&f->timer);
	evtimer_del(&f->kick);
	evtimer_del(&f->idle);
	event_del(&f->inbox_ev);
	f->tbase = nb;
	if (fetch_loop_events(f) == 0) {
		event_base_free(old);
		return;
	}
	event_base_free(nb); /* keep the old loop: it still works */
	f->tbase = old;
	(void)fetch_loop_events(f);
}

/* The multi handle, on the thread's loop; -1 when memory runs out. */
static int
fetch_multi_new(struct fetcher *f)
{
	if ((f->multi = curl_multi_init()) == NULL)
		return -1;
	curl_multi_setopt(
	    f->multi, CURLMOPT_SOCKETFUNCTION, fetch_multi_sock_cb);
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETDATA, f);
	curl_multi_setopt(
	    f->multi, CURLMOPT_TIMERFUNCTION, fetch_multi_timer_cb);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERDATA, f);
	curl_multi_setopt(
	    f->multi, CURLMOPT_MAXCONNECTS, (long)FETCH_IDLE_CONNS);
	return 0;
}

/* Drop every fetch the thread holds and curl with them. */
static void
fetch_thread_stop(struct fetcher *f)
{
	struct fetch *fe;

	pthread_mutex_lock(&f->lock);
	while ((fe = STAILQ_FIRST(&f->cancels)) != NULL) {
		STAILQ_REMOVE_HEAD(&f->cancels, cancel_link);
		if (fe->tstate == FETCH_T_OUT)
			fetch_drop(f, fe); /* in no list of the thread */
	}
	pthread_mutex_unlock(&f->lock);
	while ((fe = TAILQ_FIRST(&f->running)) != NULL)
		fetch_drop(f, fe);
	while ((fe = TAILQ_FIRST(&f->queued)) != NULL)
		fetch_drop(f, fe);
	curl_multi_cleanup(f->multi);
	f->multi = NULL;
	while (!LIST_EMPTY(&f->socks))
		fetch_sock_free(LIST_FIRST(&f->socks));
}

/*
 * Start a new thread on the loop, to follow this one after its end (the
 * signal mask is inherited: all blocked); 0 when there is none (stop was
 * asked, or no thread could start).
 */
static int
fetch_hand_over(struct fetcher *f)
{
	pthread_t t;
	int done = 0;

	pthread_mutex_lock(&f->lock);
	if (!f->stop) {
		f->prev = pthread_self();
		if (pthread_create(&t, NULL, fetch_thread_main, f) == 0) {
			f->thread = t;
			done = 1;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return done;
}

/* curl's multi handle failed: tell main, which fails every fetch. */
static void
fetch_thread_dead(struct fetcher *f)
{
	pthread_mutex_lock(&f->lock);
	f->dead = 1;
	pthread_mutex_unlock(&f->lock);
	fetch_post(f->wake_main);
}

/*
 * The fetch thread: its loop runs until fetcher_free() says stop. Idle,
 * it hands the loop over to a new thread and ends: the new one joins it,
 * which returns the old thread's cached chunks to its heap, and trims.
 */
void *
fetch_thread_main(void *arg)
{
	struct fetcher *f = arg;

	if (f->handover) {
		pthread_join(f->prev, NULL);
		f->handover = 0;
		malloc_trim(0);
	}
	/* Best effort: refused under a seccomp filter, which is fine. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), FETCH_NICE);
	(void)pthread_setname_np(pthread_self(), "robotsd-fetch");
	for (;;) {
		if (f->multi == NULL && fetch_multi_new(f) == -1) {
			fetch_thread_dead(f);
			return NULL;
		}
		event_base_dispatch(f->tbase);
		if (!f->handover)
			break;
		fetch_loop_renew(f);
		if (fetch_hand_over(f))
			return NULL;
		f->handover = 0; /* carry on here */
		malloc_trim(0);
	}
	fetch_thread_stop(f);
	return NULL;
}

/* Free the thread's loop and settings, once it ended (or never ran). */
void
fetch_thread_release(struct fetcher *f)
{
	if (f->tbase == NULL)
		return;
	evtimer_del(&f->timer);
	evtimer_del(&f->kick);
	evtimer_del(&f->idle);
	event_del(&f->inbox_ev);
	event_base_free(f->tbase);
	fetch_spare_close(f->spare);
	fetch_conf_clear(&f->set);
	cabundles_free(&f->ca);
}
