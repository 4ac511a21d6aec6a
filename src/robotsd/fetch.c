/*
 * fetch.c: robots.txt fetches on libcurl's multi-socket API, driven by the
 * libevent loop (the hiperfifo shape): sock_cb() mirrors curl's sockets as
 * persistent events, timer_cb() is curl's one timeout, check_multi_info()
 * turns every finished transfer into one fetch_done_cb call. Owns the CURLM,
 * every easy handle, the FIFO of fetches waiting for a free slot
 * (--max-fetches) and a copy of the config values it uses.
 *
 * The caller calls curl_global_init(CURL_GLOBAL_DEFAULT) once before
 * fetcher_new(); nothing here keeps global state.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "robots.h"
#include "buf.h"
#include "cabundle.h"
#include "fetch_int.h"
#include "strv.h"
#include "fetch.h"
#include "log.h"
#include "netpolicy.h"
#include "parse.h"

#define FETCH_MAX_REDIRS 5
#define FETCH_PROTOCOLS "http,https,ftp"
#define FETCH_DEFAULT_UA PACKAGE_NAME "/" PACKAGE_VERSION
/*
 * Idle keep-alive connections curl may keep (CURLMOPT_MAXCONNECTS). Each
 * origin is fetched about once a TTL, so few are ever reused; without a
 * cap curl keeps up to 4 per transfer added. Counted in the fd budget.
 */
#define FETCH_IDLE_CONNS FETCHER_IDLE_CONNS
/*
 * Once fetches have held this many bytes (bodies above all) since the heap
 * was last trimmed, the next moment no fetch runs or waits trims it. A
 * burst of fetches leaves glibc's heap full of freed bodies and parser
 * scratch between the rulesets it made (warming the 2,000 corpus origins:
 * 3 KB an origin, a fifth of what they keep); malloc_trim() hands those
 * pages back.
 */
#define FETCH_TRIM_BYTES (4 << 20)

/*
 * Transfers handed to curl per loop turn. curl sets up every new transfer
 * in its next curl_multi_socket_action() call, whichever socket that call
 * is for: 256 https fetches started at once made one callback of some
 * 100 ms of TLS setup while cached checks waited behind it. The rest start
 * in later turns, each after the clients' events.
 */
#define FETCH_BURST 16

static void fetch_check_multi_info(struct fetcher *);
static void fetch_finish(struct fetcher *, struct fetch *, CURLcode);
static int fetch_begin(struct fetch *);

/* Replace *dst with a copy of src (NULL allowed); -1 when memory runs out. */
static int
fetch_set_str(char **dst, const char *src)
{
	char *s = NULL;

	if (src != NULL && (s = strdup(src)) == NULL)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

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
		s->fetcher = f;
		s->fd = fd;
		LIST_INSERT_HEAD(&f->socks, s, link);
		curl_multi_assign(f->multi, fd, s);
	} else
		event_del(&s->ev);
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	event_assign(&s->ev, f->base, fd, kind, fetch_event_cb, f);
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

	if (fe->fetcher->connect_to[0] == NULL ||
	    curl_easy_getinfo(fe->easy, CURLINFO_EFFECTIVE_URL, &url) !=
	        CURLE_OK ||
	    url == NULL || (u = curl_url()) == NULL)
		return 0;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	        CURLUE_OK) {
		pnum = (long)parse_num(port, 1, 65535, &errstr);
		hit = netpolicy_ct_any(fe->fetcher->connect_to, host, pnum);
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

	(void)purpose;
	if (fe->fetcher->deny_private && netpolicy_private_sa(&addr->addr) &&
	    !fetch_connect_to_applies(fe)) {
		fe->private_refused = 1;
		return CURL_SOCKET_BAD;
	}
	return socket(
	    addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* Build the curl_slist of connect-to entries; -1 when memory runs out. */
static int
fetch_build_connect_to(struct fetch *fe)
{
	struct curl_slist *l;
	size_t i;

	for (i = 0; fe->fetcher->connect_to[i] != NULL; i++) {
		l = curl_slist_append(
		    fe->connect_to, fe->fetcher->connect_to[i]);
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
	    (fe->errbuf = calloc(1, CURL_ERROR_SIZE)) == NULL ||
	    fetch_build_connect_to(fe) == -1)
		return -1;
	curl_easy_setopt(e, CURLOPT_URL, fe->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, fe);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, fe->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	/* Timeout or cancel mid-lookup: forget the resolver thread, no join. */
	curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, f->user_agent);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, f->timeout * 1000L);
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
	if (f->ca.cur.fd != -1) {
		curl_easy_setopt(e, CURLOPT_CAINFO, f->ca.cur.path);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
	} else if (f->ca_file != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO, f->ca_file);
	return 0;
}

/* Free the easy handle and what goes with it (not in the multi). */
static void
fetch_release_easy(struct fetch *fe)
{
	if (fe->easy != NULL)
		curl_easy_cleanup(fe->easy);
	fe->easy = NULL;
	curl_slist_free_all(fe->connect_to);
	fe->connect_to = NULL;
	free(fe->errbuf);
	fe->errbuf = NULL;
}

/* Release a fetch that is in no list and not in the multi. */
static void
fetch_free(struct fetch *fe)
{
	size_t i;

	if (event_initialized(&fe->deadline))
		evtimer_del(&fe->deadline);
	fetch_release_easy(fe);
	fe->fetcher->bytes -= fe->held;
	for (i = 0; i < HDR_COUNT; i++)
		free(fe->hdr[i]);
	buf_clear(&fe->body);
	free(fe->url);
	free(fe);
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

/*
 * Make the easy handle (a queued fetch has none: a few hundred bytes
 * instead of several KB) and hand it to the multi; -1 if curl refuses it.
 */
static int
fetch_begin(struct fetch *fe)
{
	struct fetcher *f = fe->fetcher;
	struct timeval tv = { .tv_sec = f->timeout };

	if (fetch_setup_easy(fe) == -1 ||
	    curl_multi_add_handle(f->multi, fe->easy) != CURLM_OK) {
		fetch_release_easy(fe);
		return -1;
	}
	evtimer_assign(&fe->deadline, f->base, fetch_deadline_cb, fe);
	evtimer_add(&fe->deadline, &tv);
	fe->running = 1;
	TAILQ_INSERT_TAIL(&f->running, fe, link);
	f->nrunning++;
	return 0;
}

/* Refill the burst at the next loop turn, after the clients' events. */
static void
fetch_kick(struct fetcher *f)
{
	static const struct timeval now;

	if (!evtimer_pending(&f->kick, NULL))
		evtimer_add(&f->kick, &now);
}

static void fetch_start_queued(struct fetcher *);

static void
fetch_kick_cb(evutil_socket_t fd, short kind, void *arg)
{
	struct fetcher *f = arg;

	(void)fd;
	(void)kind;
	f->burst = FETCH_BURST; /* a new turn */
	fetch_start_queued(f);
}

/* Start queued fetches while there is a free slot and burst left. */
static void
fetch_start_queued(struct fetcher *f)
{
	struct fetch *fe;

	while (f->nrunning < f->max_fetches &&
	       (fe = TAILQ_FIRST(&f->queued)) != NULL) {
		if (f->burst == 0) {
			fetch_kick(f);
			break;
		}
		f->burst--;
		TAILQ_REMOVE(&f->queued, fe, link);
		f->nqueued--;
		if (fetch_begin(fe) == -1) {
			/* Only memory exhaustion gets here; requeue later. */
			TAILQ_INSERT_HEAD(&f->queued, fe, link);
			f->nqueued++;
			break;
		}
	}
}

/* A cut body is logged here; the fetch line is the cache's (fetchlog.h). */
static void
fetch_log_done(struct fetch *fe, const struct fetch_result *r)
{
	char ubuf[LOG_KV_BUF];

	if (r->truncated)
		log_event(LOG_INFO, "fetch_truncated", "url=%s bytes=%d",
		    log_kvs(fe->url, ubuf, sizeof(ubuf)), ROBOTS_MAX_BODY);
}

/* Trim the heap when the fetches that churned it are all done. */
static void
fetch_maybe_trim(struct fetcher *f)
{
	if (f->nrunning == 0 && f->nqueued == 0 &&
	    f->churn > FETCH_TRIM_BYTES) {
		f->churn = 0;
		malloc_trim(0);
	}
}

/* A transfer ended: take it out of curl, start the next, call back. */
static void
fetch_finish(struct fetcher *f, struct fetch *fe, CURLcode rc)
{
	struct fetch_result r;

	curl_multi_remove_handle(f->multi, fe->easy);
	TAILQ_REMOVE(&f->running, fe, link);
	f->nrunning--;
	fe->running = 0;
	fetch_start_queued(f);
	fetch_fill_result(fe, rc, &r);
	fetch_log_done(fe, &r);
	fe->cb(&r, fe->arg);
	f->churn += fe->held;
	fetch_free(fe);
	fetch_maybe_trim(f);
}

/* Turn every finished transfer into its callback. */
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

/* Create the fetcher; NULL when memory runs out or curl refuses. */
struct fetcher *
fetcher_new(struct event_base *base, const struct fetch_settings *set)
{
	struct fetcher *f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->base = base;
	f->ca = (struct cabundles)CABUNDLES_NONE;
	TAILQ_INIT(&f->running);
	TAILQ_INIT(&f->queued);
	LIST_INIT(&f->socks);
	if ((f->connect_to = strv_dup(NULL)) == NULL ||
	    (f->multi = curl_multi_init()) == NULL) {
		fetcher_free(f);
		return NULL;
	}
	evtimer_assign(&f->timer, base, fetch_timer_cb, f);
	evtimer_assign(&f->kick, base, fetch_kick_cb, f);
	f->burst = FETCH_BURST;
	curl_multi_setopt(
	    f->multi, CURLMOPT_SOCKETFUNCTION, fetch_multi_sock_cb);
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETDATA, f);
	curl_multi_setopt(
	    f->multi, CURLMOPT_TIMERFUNCTION, fetch_multi_timer_cb);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERDATA, f);
	curl_multi_setopt(
	    f->multi, CURLMOPT_MAXCONNECTS, (long)FETCH_IDLE_CONNS);
	if ((curl_version_info(CURLVERSION_NOW)->features &
	        CURL_VERSION_ASYNCHDNS) == 0)
		log_event(LOG_WARNING, "dns_synchronous",
		    "note=\"libcurl resolves names synchronously: a slow DNS "
		    "server will stall the daemon\"");
	fetcher_configure(f, set);
	if (f->user_agent == NULL) {
		fetcher_free(f);
		return NULL;
	}
	return f;
}

/* Cancel everything without callbacks and release curl and the fetcher. */
void
fetcher_free(struct fetcher *f)
{
	struct fetch *fe;

	if (f == NULL)
		return;
	f->max_fetches = 0; /* start nothing more */
	while ((fe = TAILQ_FIRST(&f->running)) != NULL)
		fetch_cancel(fe);
	while ((fe = TAILQ_FIRST(&f->queued)) != NULL)
		fetch_cancel(fe);
	if (f->multi != NULL) {
		curl_multi_cleanup(f->multi);
		evtimer_del(&f->timer);
		evtimer_del(&f->kick);
	}
	while (!LIST_EMPTY(&f->socks))
		fetch_sock_free(LIST_FIRST(&f->socks));
	strv_free(f->connect_to);
	free(f->user_agent);
	free(f->ca_file);
	cabundles_free(&f->ca);
	free(f);
}

/*
 * Apply a (re)loaded config. Fetches already running keep their settings;
 * a larger max_fetches starts queued ones at once. On memory exhaustion the
 * old values stay.
 */
void
fetcher_configure(struct fetcher *f, const struct fetch_settings *set)
{
	const char *ua =
	    set->user_agent != NULL ? set->user_agent : FETCH_DEFAULT_UA;
	char **ct, err[256];

	if ((ct = strv_dup(set->connect_to)) != NULL) {
		strv_free(f->connect_to);
		f->connect_to = ct;
	}
	if (fetch_set_str(&f->user_agent, ua) == -1 ||
	    fetch_set_str(&f->ca_file, set->ca_file) == -1)
		log_event(LOG_WARNING, "settings_not_applied",
		    "module=fetch error=\"out of memory\" outcome=kept_old");
	if (cabundles_update(&f->ca, set->ca_file, err, sizeof(err)) == -1)
		log_event(LOG_WARNING, "ca_bundle_failed",
		    "error=\"%s\" outcome=%s", err,
		    f->ca.cur.fd != -1 ? "kept_old" : "read_per_connection");
	f->timeout = set->timeout > 0 ? set->timeout : 30;
	f->max_fetches = set->max_fetches > 0 ? set->max_fetches : 1;
	f->deny_private = set->deny_private;
	fetch_start_queued(f);
}

/* Start (or queue) a GET of url; NULL only when memory runs out. */
struct fetch *
fetch_start(struct fetcher *f, const char *url, fetch_done_cb cb, void *arg)
{
	struct fetch *fe;

	if ((fe = calloc(1, sizeof(*fe))) == NULL)
		return NULL;
	fe->fetcher = f;
	fe->body = BUF_INIT(ROBOTS_MAX_BODY);
	fe->cb = cb;
	fe->arg = arg;
	if ((fe->url = strdup(url)) == NULL)
		goto fail;
	fe->held = sizeof(*fe) + strlen(url) + 1;
	f->bytes += fe->held;
	if (f->nrunning < f->max_fetches && TAILQ_EMPTY(&f->queued) &&
	    f->burst > 0) {
		if (fetch_begin(fe) == -1)
			goto fail;
		f->burst--;
	} else {
		TAILQ_INSERT_TAIL(&f->queued, fe, link);
		f->nqueued++;
		if (f->nrunning < f->max_fetches)
			fetch_kick(f);
	}
	return fe;
fail:
	fetch_free(fe);
	return NULL;
}

/* Drop a queued or running fetch; its callback never runs. */
void
fetch_cancel(struct fetch *fe)
{
	struct fetcher *f;

	if (fe == NULL)
		return;
	f = fe->fetcher;
	if (fe->running) {
		curl_multi_remove_handle(f->multi, fe->easy);
		TAILQ_REMOVE(&f->running, fe, link);
		f->nrunning--;
	} else {
		TAILQ_REMOVE(&f->queued, fe, link);
		f->nqueued--;
	}
	fetch_free(fe);
	fetch_start_queued(f);
}

/* Transfers in the multi now. */
size_t
fetcher_in_flight(const struct fetcher *f)
{
	return f->nrunning;
}

/* Fetches waiting for a free slot. */
size_t
fetcher_queued(const struct fetcher *f)
{
	return f->nqueued;
}

/* Bytes the fetches hold (curl's own buffers aside). */
size_t
fetcher_bytes(const struct fetcher *f)
{
	return f->bytes;
}
