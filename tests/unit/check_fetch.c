/*
 * check_fetch.c: the fetcher (fetch.c, fetch_curl.c) against an in-process
 * HTTP server on 127.0.0.1 (libevent's evhttp on the main loop, whose
 * events also bring the results back from the fetch thread). Origins are
 * named "origin.test" and reach the server through --connect-to, as the
 * integration tests do. The fetch thread starts at the loop's first turn:
 * until then every fetch started waits in the inbox.
 */
#include <config.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>

#include <netinet/in.h>

#include <check.h>
#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "robots.h"
#include "fetch/fetch.h"
#include "fetch/fetch_int.h"
#include "base/log.h"
#include "test_main.h"

static char test_ua[] = "robotsd-test/1";
static struct fetch_settings cf;
static struct event_base *evbase;
static struct fetcher *fetcher;
static struct evhttp *httpd; /* the origin server */

/* What one fetch ended with. */
struct outcome {
	int done;
	enum fetch_error error;
	int cause; /* enum fetch_cause */
	int status;
	size_t body_len;
	int truncated;
	unsigned redirects;
	char body[128];
	char retry_after[32];
	char raw[512];        /* raw_headers, or "(none)" */
	int on_main;          /* called back on the main thread */
	struct fetch *cancel; /* cancel this one when called back */
};

static int httpd_port;
static char connect_spec[64];
static char *connect_list[2] = { connect_spec, NULL };
static int outcomes;
static pthread_t main_thread;

/* A bit writer for the deflate stream below (RFC 1951: LSB first). */
struct bitw {
	unsigned char *out;
	size_t len;
	unsigned acc, n;
};

/* Append the low nbits of code, most significant first (Huffman codes). */
static void
bitw_code(struct bitw *w, unsigned code, int nbits)
{
	while (nbits-- > 0) {
		w->acc |= ((code >> nbits) & 1) << w->n;
		if (++w->n == 8) {
			w->out[w->len++] = (unsigned char)w->acc;
			w->acc = w->n = 0;
		}
	}
}

/*
 * A gzip stream of one literal 'a' then n copies of (length 258, distance
 * 1) in one fixed-Huffman block: 1 + 258 n bytes decoded from about 13 n / 8.
 * The CRC and size trailer are zeros: the reader stops long before them.
 */
static size_t
gzip_bomb(unsigned char *out, size_t n)
{
	static const unsigned char hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0,
		3 };
	struct bitw w = { out, sizeof(hdr), 0, 0 };
	size_t i;

	memcpy(out, hdr, sizeof(hdr));
	bitw_code(&w, 1, 1);          /* BFINAL */
	bitw_code(&w, 2, 2);          /* BTYPE 01 (bits LSB first) */
	bitw_code(&w, 0x30 + 'a', 8); /* literal 'a' */
	for (i = 0; i < n; i++) {
		bitw_code(&w, 0xc5, 8); /* length code 285: 258 */
		bitw_code(&w, 0, 5);    /* distance code 0: 1 */
	}
	bitw_code(&w, 0, 7);             /* end of block */
	bitw_code(&w, 0, (8 - w.n) % 8); /* pad to a byte */
	memset(out + w.len, 0, 8);
	return w.len + 8;
}

/* Reply with status, an optional header and body. */
static void
reply(struct evhttp_request *req, int code, const char *hname, const char *hval,
    const void *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();

	if (hname != NULL)
		evhttp_add_header(
		    evhttp_request_get_output_headers(req), hname, hval);
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, "X", b);
	evbuffer_free(b);
}

/* Redirect to path on the server, named by host. */
static void
redirect(struct evhttp_request *req, const char *host, const char *path)
{
	char loc[256];

	snprintf(loc, sizeof(loc), "http://%s/%s", host, path);
	reply(req, 302, "Location", loc, "", 0);
}

/* The server saw a /keep connection close. */
static int keep_closed;

static void
keep_close_cb(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	(void)arg;
	keep_closed++;
}

/* The test server: the path names the answer. */
static void
httpd_cb(struct evhttp_request *req, void *arg)
{
	const char *uri = evhttp_request_get_uri(req), *ua;
	static unsigned char big[600000];
	static unsigned char bomb[20000];
	char next[64], host[64];
	int n;

	(void)arg;
	if (strcmp(uri, "/ok") == 0)
		reply(req, 200, "Cache-Control", "max-age=600",
		    "User-agent: *\nDisallow: /x\n", 27);
	else if (strcmp(uri, "/keep") == 0) {
		evhttp_connection_set_closecb(
		    evhttp_request_get_connection(req), keep_close_cb, NULL);
		reply(req, 200, NULL, NULL, "kept", 4);
	} else if (strcmp(uri, "/ua") == 0) {
		ua = evhttp_find_header(
		    evhttp_request_get_input_headers(req), "User-Agent");
		reply(req, 200, NULL, NULL, ua, ua != NULL ? strlen(ua) : 0);
	} else if (strcmp(uri, "/big") == 0) {
		memset(big, '#', sizeof(big));
		reply(req, 200, NULL, NULL, big, sizeof(big));
	} else if (strcmp(uri, "/bomb") == 0)
		reply(req, 200, "Content-Encoding", "gzip", bomb,
		    gzip_bomb(bomb, 8000));
	else if (strcmp(uri, "/503") == 0 || strcmp(uri, "/robots.txt") == 0)
		reply(req, 503, "Retry-After", "120", "", 0);
	else if (sscanf(uri, "/redir/%d", &n) == 1 && n > 0) {
		snprintf(next, sizeof(next), "redir/%d", n - 1);
		redirect(req, "origin.test", next);
	} else if (strcmp(uri, "/redir/0") == 0)
		reply(req, 200, NULL, NULL, "final", 5);
	else if (strcmp(uri, "/to-private") == 0) {
		snprintf(host, sizeof(host), "127.0.0.1:%d", httpd_port);
		redirect(req, host, "ok");
	} else if (strcmp(uri, "/to-file") == 0)
		reply(req, 302, "Location", "file:///etc/passwd", "", 0);
	else if (strcmp(uri, "/to-bad") == 0)
		reply(req, 302, "Location", "http://bad host/", "", 0);
	else if (strcmp(uri, "/slow") != 0) /* /slow: never answered */
		reply(req, 404, NULL, NULL, "", 0);
}

/*
 * A fetcher on the contract's defaults, and the server, with origin.test:80
 * pointing at it.
 */
static void
setup(void)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	memset(&cf, 0, sizeof(cf));
	cf.user_agent = test_ua;
	cf.timeout = 30;
	cf.max_fetches = 256;
	cf.deny_private = 1;
	ck_assert_ptr_nonnull(evbase = event_base_new());
	ck_assert_ptr_nonnull(httpd = evhttp_new(evbase));
	evhttp_set_gencb(httpd, httpd_cb, NULL);
	ck_assert_ptr_nonnull(
	    bs = evhttp_bind_socket_with_handle(httpd, "127.0.0.1", 0));
	ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs),
	                     (struct sockaddr *)&sin, &sl),
	    0);
	httpd_port = ntohs(sin.sin_port);
	snprintf(connect_spec, sizeof(connect_spec),
	    "origin.test:80:127.0.0.1:%d", httpd_port);
	cf.connect_to = connect_list;
	ck_assert_ptr_nonnull(fetcher = fetcher_new(evbase, &cf));
}

/* Free everything; valgrind and ASan see leaks here. */
static void
teardown(void)
{
	fetcher_free(fetcher);
	evhttp_free(httpd);
	event_base_free(evbase);
}

/* Record a fetch's result. */
static void
outcome_cb(const struct fetch_result *r, void *arg)
{
	struct outcome *o = arg;

	o->done = 1;
	o->error = r->error;
	o->cause = r->cause;
	o->status = r->http_status;
	o->body_len = r->body_len;
	o->truncated = r->truncated;
	o->redirects = r->redirects;
	snprintf(o->body, sizeof(o->body), "%.*s",
	    (int)(r->body_len < 100 ? r->body_len : 100), r->body);
	snprintf(o->retry_after, sizeof(o->retry_after), "%s",
	    r->retry_after != NULL ? r->retry_after : "");
	if (r->raw_headers != NULL)
		snprintf(o->raw, sizeof(o->raw), "%.*s",
		    (int)r->raw_headers_len, r->raw_headers);
	else
		snprintf(o->raw, sizeof(o->raw), "(none)");
	o->on_main = pthread_equal(pthread_self(), main_thread);
	outcomes++;
	fetch_cancel(o->cancel);
}

/* Guard: a test that runs too long fails instead of hanging. */
static void
guard_cb(evutil_socket_t fd, short kind, void *arg)
{
	(void)fd;
	(void)kind;
	*(int *)arg = 1;
}

/* Run the loop until *count reaches want (at most 10 s). */
static void
run_until(const int *count, int want)
{
	struct timeval tv = { 10, 0 };
	struct event *guard;
	int expired = 0;

	guard = evtimer_new(evbase, guard_cb, &expired);
	evtimer_add(guard, &tv);
	while (*count < want && !expired)
		event_base_loop(evbase, EVLOOP_ONCE);
	event_free(guard);
	ck_assert_msg(!expired, "the loop did not get there in 10 s");
}

/* Fetch url and run the loop until it ends. */
static void
fetch_one(const char *url, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	outcomes = 0;
	ck_assert_ptr_nonnull(fetch_start(fetcher, url, outcome_cb, o));
	run_until(&outcomes, 1);
	ck_assert_int_eq(o->on_main, 1);
}

/*
 * Wait, without running the main loop, until the thread holds no fetch in
 * flight or queued beyond want: what it finished waits in the outbox.
 */
static void
wait_thread_down_to(size_t want)
{
	time_t give_up = time(NULL) + 10;

	while (fetcher_in_flight(fetcher) + fetcher_queued(fetcher) > want) {
		ck_assert_msg(time(NULL) < give_up,
		    "the fetch thread did not get down to %zu fetches in 10 s",
		    want);
		sched_yield();
	}
}

/* What the fetcher hands back for each kind of answer. */
static const struct {
	const char *path;
	enum fetch_error error;
	int status;
	int redirects; /* or -1: not checked */
	const char *body, *retry_after;
} answers[] = {
	{ "/ok", FETCH_OK, 200, 0, "User-agent: *\nDisallow: /x\n", "" },
	{ "/ua", FETCH_OK, 200, 0, "robotsd-test/1", "" }, /* --user-agent */
	{ "/redir/5", FETCH_OK, 200, 5, "final", "" },
	{ "/redir/6", FETCH_REDIRECTS, 302, -1, "", "" },
	{ "/503", FETCH_OK, 503, 0, "", "120" },
	{ "/missing", FETCH_OK, 404, 0, "", "" },
	/* Redirects to other protocols or bad URLs: as too many. */
	{ "/to-file", FETCH_REDIRECTS, 302, -1, "", "" },
	{ "/to-bad", FETCH_REDIRECTS, 302, -1, "", "" },
};

START_TEST(test_fetch_outcome_of_each_answer)
{
	struct outcome o;
	char url[64];

	snprintf(url, sizeof(url), "http://origin.test%s", answers[_i].path);
	fetch_one(url, &o);
	ck_assert_int_eq(o.error, answers[_i].error);
	ck_assert_int_eq(o.status, answers[_i].status);
	if (answers[_i].redirects >= 0)
		ck_assert_uint_eq(o.redirects, answers[_i].redirects);
	ck_assert_str_eq(o.body, answers[_i].body);
	ck_assert_uint_eq(o.body_len, strlen(answers[_i].body));
	ck_assert_str_eq(o.retry_after, answers[_i].retry_after);
}
END_TEST

/*
 * The final response's status line and headers as received, CRLF after
 * each, no blank line: evhttp writes its own Date and Content-Length
 * between the status line and the ones the handler set.
 */
/* The fetch thread running now. */
static pthread_t
fetch_thread_now(void)
{
	pthread_t t;

	pthread_mutex_lock(&fetcher->lock);
	t = fetcher->thread;
	pthread_mutex_unlock(&fetcher->lock);
	return t;
}

/*
 * curl keeps the connection for reuse, but not once the thread has had no
 * transfer for FETCH_IDLE_SECS: it is closed then (its TLS state freed),
 * the thread hands its loop over to a new thread and ends (its heap goes
 * back), and fetches work as before on the new thread's multi handle.
 */
START_TEST(test_fetch_idle_thread_closes_kept_connections)
{
	struct outcome o;
	pthread_t before;

	keep_closed = 0;
	fetch_one("http://origin.test/keep", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_str_eq(o.body, "kept");
	before = fetch_thread_now();
	run_until(&keep_closed, 1);
	fetch_one("http://origin.test/ok", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	/* the old thread broke its loop right after the close */
	ck_assert(!pthread_equal(fetch_thread_now(), before));
}
END_TEST

START_TEST(test_fetch_keeps_the_final_hops_raw_headers)
{
	struct outcome o;

	fetch_one("http://origin.test/503", &o);
	ck_assert_msg(
	    strncmp(o.raw, "HTTP/1.1 503 X\r\n", 16) == 0, "%s", o.raw);
	ck_assert_ptr_nonnull(strstr(o.raw, "\r\nRetry-After: 120\r\n"));
	ck_assert_ptr_null(strstr(o.raw, "\r\n\r\n"));
	ck_assert_str_eq(o.raw + strlen(o.raw) - 2, "\r\n");
	fetch_one("http://origin.test/redir/5", &o); /* the last hop only */
	ck_assert_msg(
	    strncmp(o.raw, "HTTP/1.1 200 X\r\n", 16) == 0, "%s", o.raw);
	ck_assert_ptr_null(strstr(o.raw, "Location"));
	ck_assert_ptr_null(strstr(o.raw + 1, "HTTP/1.1"));
}
END_TEST

START_TEST(test_fetch_body_cut_at_cap_counts_as_success)
{
	struct outcome o;

	fetch_one("http://origin.test/big", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(o.body_len, ROBOTS_MAX_BODY);
	ck_assert_int_eq(o.truncated, 1);
}
END_TEST

START_TEST(test_fetch_gzip_bomb_cut_at_cap_of_decoded_bytes)
{
	struct outcome o;
	char want[101];

	fetch_one("http://origin.test/bomb", &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(o.body_len, ROBOTS_MAX_BODY);
	ck_assert_int_eq(o.truncated, 1);
	memset(want, 'a', 100);
	want[100] = '\0';
	ck_assert_str_eq(o.body, want);
}
END_TEST

START_TEST(test_fetch_refuses_private_address_also_after_redirect)
{
	struct outcome o;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", httpd_port);
	fetch_one(url, &o);
	ck_assert_int_eq(o.error, FETCH_PRIVATE_ADDR);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(o.cause, CAUSE_CONNECT);
	fetch_one("http://origin.test/to-private", &o);
	ck_assert_int_eq(o.error, FETCH_PRIVATE_ADDR);
	cf.deny_private = 0;
	fetcher_configure(fetcher, &cf);
	fetch_one(url, &o);
	ck_assert_int_eq(o.error, FETCH_OK);
	ck_assert_int_eq(o.status, 200);
}
END_TEST

START_TEST(test_fetch_timeout_enforced)
{
	struct outcome o;

	cf.timeout = 1;
	fetcher_configure(fetcher, &cf);
	fetch_one("http://origin.test/slow", &o);
	ck_assert_int_eq(o.error, FETCH_TIMEOUT);
	ck_assert_int_eq(o.cause, CAUSE_TIMEOUT);
	ck_assert_int_eq(o.status, 0);
}
END_TEST

/* Each failure curl reports, as the cause an answer names. */
static const struct {
	CURLcode rc;
	enum fetch_cause cause;
} curl_causes[] = {
	{ CURLE_OK, CAUSE_NONE },
	{ CURLE_COULDNT_RESOLVE_HOST, CAUSE_DNS },
	{ CURLE_COULDNT_RESOLVE_PROXY, CAUSE_DNS },
	{ CURLE_COULDNT_CONNECT, CAUSE_CONNECT },
	{ CURLE_RECV_ERROR, CAUSE_CONNECT },
	{ CURLE_SEND_ERROR, CAUSE_CONNECT },
	{ CURLE_SSL_CONNECT_ERROR, CAUSE_TLS },
	{ CURLE_PEER_FAILED_VERIFICATION, CAUSE_TLS },
	{ CURLE_SSL_CACERT_BADFILE, CAUSE_TLS },
	{ CURLE_OPERATION_TIMEDOUT, CAUSE_TIMEOUT },
	{ CURLE_WEIRD_SERVER_REPLY, CAUSE_BAD_RESPONSE },
	{ CURLE_BAD_CONTENT_ENCODING, CAUSE_BAD_RESPONSE },
	{ CURLE_GOT_NOTHING, CAUSE_BAD_RESPONSE },
	{ CURLE_PARTIAL_FILE, CAUSE_BAD_RESPONSE },
	{ CURLE_HTTP2, CAUSE_BAD_RESPONSE },
	{ CURLE_OUT_OF_MEMORY, CAUSE_OTHER },
	{ CURLE_FAILED_INIT, CAUSE_OTHER },
};

START_TEST(test_fetch_cause_of_curl_code)
{
	ck_assert_int_eq(
	    fetch_cause_of_curl(curl_causes[_i].rc), curl_causes[_i].cause);
}
END_TEST

START_TEST(test_fetch_beyond_max_fetches_queued_not_dropped)
{
	struct outcome o[4];
	int i;

	cf.max_fetches = 1;
	fetcher_configure(fetcher, &cf);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(fetch_start(
		    fetcher, "http://origin.test/ok", outcome_cb, &o[i]));
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 0);
	ck_assert_uint_eq(fetcher_queued(fetcher), 4);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 3); /* one has a slot */
	run_until(&outcomes, 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(o[i].status, 200);
	ck_assert_uint_eq(atomic_load(&fetcher->max_running), 1);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 0);
	ck_assert_uint_eq(fetcher_queued(fetcher), 0);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 0);
	ck_assert_uint_eq(fetcher_bytes(fetcher), 0);
}
END_TEST

/*
 * The backlog (what --max-waiting counts) is the fetches beyond
 * --max-fetches, whether the thread has looked at them yet or not: here it
 * has not even started. A cancelled fetch leaves it at once.
 */
START_TEST(test_fetch_backlog_counts_only_fetches_beyond_free_slots)
{
	struct outcome o[3];
	struct fetch *fe[3];
	int i;

	cf.max_fetches = 2;
	fetcher_configure(fetcher, &cf);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 2; i++)
		ck_assert_ptr_nonnull(
		    fe[i] = fetch_start(
		        fetcher, "http://origin.test/ok", outcome_cb, &o[i]));
	ck_assert_uint_eq(fetcher_queued(fetcher), 2);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 0);
	ck_assert_ptr_nonnull(fe[2] = fetch_start(fetcher,
	                          "http://origin.test/ok", outcome_cb, &o[2]));
	ck_assert_uint_eq(fetcher_backlog(fetcher), 1);
	fetch_cancel(fe[2]);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 0);
	cf.max_fetches = 1; /* a reload lowering the slots counts at once */
	fetcher_configure(fetcher, &cf);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 1);
	run_until(&outcomes, 2);
	ck_assert_uint_eq(fetcher_backlog(fetcher), 0);
}
END_TEST

/*
 * However many slots are free, curl is handed at most 16 new transfers per
 * turn of the fetch thread's loop (it sets up all new ones in its next
 * call, TLS included): 40 fetches started at once go in as 16, 16 and 8.
 */
START_TEST(test_fetch_starts_at_most_16_per_loop_turn)
{
	struct outcome o[40];
	int i;

	cf.max_fetches = 256;
	fetcher_configure(fetcher, &cf);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 40; i++)
		ck_assert_ptr_nonnull(fetch_start(
		    fetcher, "http://origin.test/ok", outcome_cb, &o[i]));
	run_until(&outcomes, 40);
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(o[i].status, 200);
	ck_assert_uint_eq(atomic_load(&fetcher->max_per_turn), 16);
	ck_assert_uint_eq(fetcher_queued(fetcher), 0);
}
END_TEST

/*
 * A cancel before the thread took the fetch, and one just after it was
 * started while the thread runs (taken or not yet): neither calls back,
 * the others do, and every byte is given back.
 */
START_TEST(test_fetch_cancel_right_after_start)
{
	struct outcome o[3], sync;
	struct fetch *fe[3];
	int i;

	memset(o, 0, sizeof(o));
	fe[0] =
	    fetch_start(fetcher, "http://origin.test/ok", outcome_cb, &o[0]);
	fe[1] =
	    fetch_start(fetcher, "http://origin.test/ok", outcome_cb, &o[1]);
	fetch_cancel(fe[0]); /* the thread has not started yet */
	ck_assert_uint_eq(fetcher_queued(fetcher), 1);
	outcomes = 0;
	run_until(&outcomes, 1);
	ck_assert_int_eq(o[1].status, 200);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(
		    fe[i] = fetch_start(
		        fetcher, "http://origin.test/ok", outcome_cb, &o[i]));
	fetch_cancel(fe[1]);
	ck_assert_uint_eq(
	    fetcher_in_flight(fetcher) + fetcher_queued(fetcher), 2);
	run_until(&outcomes, 2);
	fetch_one("http://origin.test/ok", &sync); /* after the cancel */
	ck_assert_int_eq(o[0].done + o[1].done + o[2].done, 2);
	ck_assert_int_eq(o[1].done, 0);
	ck_assert_uint_eq(fetcher_bytes(fetcher), 0);
}
END_TEST

/*
 * A running fetch cancelled leaves the counters at once and is freed by
 * the thread; one the thread has finished but main not yet called back
 * (cancelled from another fetch's callback) is freed by main, uncalled.
 */
START_TEST(test_fetch_cancel_running_and_finished)
{
	struct outcome o[3];
	struct fetch *slow, *done;
	char url[64];

	memset(o, 0, sizeof(o));
	outcomes = 0;
	slow =
	    fetch_start(fetcher, "http://origin.test/slow", outcome_cb, &o[0]);
	fetch_one("http://origin.test/ok", &o[1]);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 1);
	fetch_cancel(slow);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 0);
	/* Refused in the thread: no server needed to end them. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", httpd_port);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	ck_assert_ptr_nonnull(fetch_start(fetcher, url, outcome_cb, &o[0]));
	wait_thread_down_to(0); /* o[0] is in the outbox */
	ck_assert_ptr_nonnull(
	    done = fetch_start(fetcher, url, outcome_cb, &o[1]));
	wait_thread_down_to(0);
	o[0].cancel = done;
	run_until(&outcomes, 1);
	fetch_one("http://origin.test/ok", &o[2]);
	ck_assert_int_eq(o[0].error, FETCH_PRIVATE_ADDR);
	ck_assert_int_eq(o[1].done, 0);
	ck_assert_uint_eq(fetcher_bytes(fetcher), 0);
}
END_TEST

/*
 * Freeing the fetcher with fetches in every hand (queued in the inbox,
 * running in curl, finished in the outbox) calls none back and frees them
 * all (ASan and valgrind would see a leak).
 */
START_TEST(test_fetch_free_with_fetches_in_flight)
{
	struct outcome o[6];
	char url[64];
	int i;

	memset(o, 0, sizeof(o));
	outcomes = 0;
	for (i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(fetch_start(
		    fetcher, "http://origin.test/slow", outcome_cb, &o[i]));
	fetch_one("http://origin.test/ok", &o[3]);
	ck_assert_uint_eq(fetcher_in_flight(fetcher), 3);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", httpd_port);
	memset(o, 0, sizeof(o));
	outcomes = 0;
	ck_assert_ptr_nonnull(fetch_start(fetcher, url, outcome_cb, &o[4]));
	wait_thread_down_to(3);
	ck_assert_ptr_nonnull(fetch_start(fetcher, url, outcome_cb, &o[5]));
	fetcher_free(fetcher);
	fetcher = NULL;
	ck_assert_int_eq(outcomes, 0);
}
END_TEST

/* The fetch suite. */
static Suite *
fetch_suite(void)
{
	Suite *s = suite_create("fetch");
	TCase *tc = tcase_create("fetch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_fetch_outcome_of_each_answer, 0,
	    (int)(sizeof(answers) / sizeof(answers[0])));
	tcase_add_test(tc, test_fetch_body_cut_at_cap_counts_as_success);
	tcase_add_test(tc, test_fetch_keeps_the_final_hops_raw_headers);
	tcase_add_test(tc, test_fetch_idle_thread_closes_kept_connections);
	tcase_add_test(tc, test_fetch_gzip_bomb_cut_at_cap_of_decoded_bytes);
	tcase_add_test(
	    tc, test_fetch_refuses_private_address_also_after_redirect);
	tcase_add_test(tc, test_fetch_timeout_enforced);
	tcase_add_loop_test(tc, test_fetch_cause_of_curl_code, 0,
	    (int)(sizeof(curl_causes) / sizeof(curl_causes[0])));
	tcase_add_test(tc, test_fetch_beyond_max_fetches_queued_not_dropped);
	tcase_add_test(
	    tc, test_fetch_backlog_counts_only_fetches_beyond_free_slots);
	tcase_add_test(tc, test_fetch_starts_at_most_16_per_loop_turn);
	tcase_add_test(tc, test_fetch_cancel_right_after_start);
	tcase_add_test(tc, test_fetch_cancel_running_and_finished);
	tcase_add_test(tc, test_fetch_free_with_fetches_in_flight);
	suite_add_tcase(s, tc);
	return s;
}

/* Run the suite; the exit status is the verdict. */
/* The fetch tests talk to 127.0.0.1 only, never through a proxy. */
static int
fetch_setup(void)
{
	unsetenv("http_proxy");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	log_init(1, LOG_WARNING);
	main_thread = pthread_self();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return 0;
}

static void
fetch_teardown(void)
{
	curl_global_cleanup();
}

TEST_PROGRAM(fetch_suite, fetch_setup, fetch_teardown);
