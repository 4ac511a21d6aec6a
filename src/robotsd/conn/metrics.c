/*
 * metrics.c: the optional Prometheus endpoint's HTTP side: GET and HEAD
 * of /metrics and /healthz, served by libmicrohttpd on robotsd's own
 * libevent loop (its epoll descriptor is one event, its timeout one timer;
 * every call into it is from the loop's thread). The port may be open to
 * more than the scraper, so every resource is bounded: robotsd accepts
 * (so the listener pauses at max_conns connections, the rest waiting in
 * the kernel's backlog, and when descriptors run out, EMFILE or ENFILE,
 * accepting pauses as every listener does (accept.h), with one
 * rate-limited log line) and hands each connection to libmicrohttpd,
 * which refuses an address's connections past a quarter of the cap, keeps
 * each to a METRICS_MEMORY pool (a longer head is a 431) and closes one
 * whose answer stays unread METRICS_WRITE_TIMEOUT; a connection gets
 * METRICS_HEAD_TIMEOUT from its accept or its last answer to send a
 * complete request head, trickled or not, else it is shut. The body is
 * metrics_text.c's.
 */
#include <config.h>

#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <microhttpd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "conn/accept.h"
#include "conn/metrics.h"
#include "conn/metrics_text.h"
#include "policy/parse.h"

#define METRICS_MEMORY 8192      /* bytes a connection's head may take */
#define METRICS_HEAD_TIMEOUT 5   /* seconds to send a complete head */
#define METRICS_WRITE_TIMEOUT 10 /* seconds without any progress */

struct metrics {
	stats_fn stats;
	void *stats_arg;
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *resume;   /* ends a pause for want of descriptors */
	struct accept_pause ap; /* accept's pauses for descriptors */
	size_t nconns, max_conns;
	enum metrics_health health;
	struct MHD_Daemon *mhd;
	struct event *ready; /* libmicrohttpd's epoll descriptor */
	struct event *tick;  /* libmicrohttpd's next timeout */
};

/* One client of the port, as libmicrohttpd's socket context. */
struct metrics_conn {
	struct metrics *m;
	int fd;
	struct event *deadline; /* for a complete request head */
};

/* What /healthz answers from now on. */
void
metrics_set_health(struct metrics *m, enum metrics_health h)
{
	if (m != NULL)
		m->health = h;
}

static void metrics_listen_on(struct metrics *);

/*
 * Let libmicrohttpd do what is ready (reads, answers, writes, timeouts),
 * then wake it again when its next timeout falls due.
 */
static void
metrics_run(struct metrics *m)
{
	MHD_UNSIGNED_LONG_LONG ms;
	struct timeval tv;

	evtimer_del(m->tick);
	MHD_run(m->mhd);
	if (MHD_get_timeout(m->mhd, &ms) != MHD_YES)
		return;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(m->tick, &tv);
}

/* libmicrohttpd's epoll descriptor is readable, or its timeout is due. */
static void
metrics_ready(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	metrics_run(arg);
}

/*
 * A connection sent no complete head in time: shut it, so libmicrohttpd
 * reads its end and closes it (it has no call to close one).
 */
static void
metrics_conn_late(evutil_socket_t fd, short what, void *arg)
{
	struct metrics_conn *c = arg;

	(void)fd;
	(void)what;
	shutdown(c->fd, SHUT_RDWR);
	metrics_run(c->m);
}

/* Our state of connection mc; NULL if none. */
static struct metrics_conn *
metrics_conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i != NULL ? i->socket_context : NULL;
}

/* Give c METRICS_HEAD_TIMEOUT from now to send a complete head. */
static void
metrics_conn_wait_head(struct metrics_conn *c)
{
	struct timeval tv = { METRICS_HEAD_TIMEOUT, 0 };

	if (c != NULL)
		evtimer_add(c->deadline, &tv);
}

/* A connection starts (counted against the cap) or is closed. */
static void
metrics_conn_notify(void *arg, struct MHD_Connection *mc, void **ctx,
    enum MHD_ConnectionNotificationCode what)
{
	const union MHD_ConnectionInfo *i;
	struct metrics *m = arg;
	struct metrics_conn *c;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if ((c = *ctx) != NULL) {
			event_free(c->deadline);
			free(c);
			*ctx = NULL;
		}
		if (m->nconns-- == m->max_conns)
			metrics_listen_on(m);
		return;
	}
	if (++m->nconns >= m->max_conns)
		evconnlistener_disable(m->listener);
	i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	c = xcalloc(1, sizeof(*c));
	c->m = m;
	c->fd = i != NULL ? i->connect_fd : -1;
	if ((c->deadline = evtimer_new(m->base, metrics_conn_late, c)) ==
	    NULL) {
		if (c->fd != -1)
			shutdown(c->fd, SHUT_RDWR);
		free(c);
		return;
	}
	*ctx = c;
	metrics_conn_wait_head(c);
}

/* A request is over: the next head has its own deadline. */
static void
metrics_completed(void *arg, struct MHD_Connection *mc, void **req,
    enum MHD_RequestTerminationCode why)
{
	(void)arg;
	(void)req;
	(void)why;
	metrics_conn_wait_head(metrics_conn_of(mc));
}

/* A response of len bytes at data; NULL if out of memory. */
static struct MHD_Response *
metrics_response(size_t len, const char *data)
{
#if MHD_VERSION >= 0x00097701
	return MHD_create_response_from_buffer_copy(len, data);
#else
	return MHD_create_response_from_buffer(
	    len, (void *)(uintptr_t)data, MHD_RESPMEM_MUST_COPY);
#endif
}

/*
 * Queue an answer: status, Content-Type type, len bytes of data as the
 * body (libmicrohttpd leaves it out for HEAD). last: close after it.
 */
static enum MHD_Result
metrics_answer(struct MHD_Connection *mc, unsigned int status, const char *type,
    const char *data, size_t len, int last)
{
	struct MHD_Response *r = metrics_response(len, data);
	enum MHD_Result ok = MHD_NO;

	if (r == NULL)
		return MHD_NO;
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) ==
	        MHD_YES &&
	    (status != MHD_HTTP_METHOD_NOT_ALLOWED || /* RFC 9110 15.5.6 */
	        MHD_add_response_header(
	            r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") == MHD_YES) &&
	    (!last || MHD_add_response_header(
	                  r, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES))
		ok = MHD_queue_response(mc, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* An answer with a short text body, text and a newline. */
static enum MHD_Result
metrics_answer_text(
    struct MHD_Connection *mc, unsigned int status, const char *text, int last)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%s\n", text);

	return metrics_answer(mc, status, "text/plain", body, (size_t)n, last);
}

/* GET /metrics: the body, formatted now. */
static enum MHD_Result
metrics_scrape(struct metrics *m, struct MHD_Connection *mc)
{
	struct evbuffer *out = evbuffer_new();
	enum MHD_Result ok;

	if (out == NULL)
		return metrics_answer_text(
		    mc, MHD_HTTP_INTERNAL_SERVER_ERROR, "no memory", 1);
	metrics_body(m->stats, m->stats_arg, out);
	ok = metrics_answer(mc, MHD_HTTP_OK, "text/plain; version=0.0.4",
	    (const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out),
	    0);
	evbuffer_free(out);
	return ok;
}

/* Whether a Content-Length value announces a body: anything but 0. */
static int
metrics_has_body(const char *v)
{
	size_t zeros = strspn(v, "0");

	return zeros == 0 || v[zeros + strspn(v + zeros, " \t")] != '\0';
}

/*
 * Whether c may stand in a reg-name: unreserved or sub-delims (RFC 3986;
 * ASCII, whatever the locale).
 */
static int
metrics_regname_char(unsigned char c)
{
	return c != '\0' && strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                           "abcdefghijklmnopqrstuvwxyz0123456789"
	                           "-._~!$&'()*+,;=",
	                        c) != NULL;
}

/*
 * Whether the n bytes at s (between brackets) are an IPv6 address or an
 * IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
 */
static int
metrics_ip_literal(const char *s, size_t n)
{
	char v6[INET6_ADDRSTRLEN];
	struct in6_addr a;
	size_t i, hex;

	if (n > 0 && (s[0] == 'v' || s[0] == 'V')) {
		hex = strspn(s + 1, "0123456789abcdefABCDEF");
		if (hex == 0 || hex + 2 >= n || s[hex + 1] != '.')
			return 0;
		for (i = hex + 2; i < n; i++)
			if (!metrics_regname_char((unsigned char)s[i]) &&
			    s[i] != ':')
				return 0;
		return 1;
	}
	if (n == 0 || n >= sizeof(v6))
		return 0;
	memcpy(v6, s, n);
	v6[n] = '\0';
	return inet_pton(AF_INET6, v6, &a) == 1;
}

/*
 * The length of the uri-host at the start of the n bytes at s: an
 * IP-literal in brackets or a reg-name, which an IPv4 address also is
 * (RFC 3986 3.2.2); -1 when a bracket or an escape is wrong.
 */
static ptrdiff_t
metrics_host_len(const char *s, size_t n)
{
	const char *end;
	size_t i;

	if (n > 0 && s[0] == '[') {
		end = memchr(s, ']', n);
		if (end == NULL ||
		    !metrics_ip_literal(s + 1, (size_t)(end - s) - 1))
			return -1;
		return end - s + 1;
	}
	for (i = 0; i < n; i++) {
		if (s[i] == '%') { /* pct-encoded */
			if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) ||
			    !isxdigit((unsigned char)s[i + 2]))
				return -1;
			i += 2;
		} else if (!metrics_regname_char((unsigned char)s[i]))
			break;
	}
	return (ptrdiff_t)i;
}

/* The Host rule of RFC 9112 3.2; see metrics.h. */
int
metrics_host_ok(int http11, size_t n, const char *host)
{
	size_t len;
	ptrdiff_t h;

	if (n != 1)
		return n == 0 && !http11;
	host += strspn(host, " \t");
	len = strlen(host);
	while (len > 0 && (host[len - 1] == ' ' || host[len - 1] == '\t'))
		len--;
	if ((h = metrics_host_len(host, len)) < 0)
		return 0;
	if ((size_t)h == len)
		return 1;
	/* then ":" port, port = *DIGIT */
	return host[h] == ':' &&
	       strspn(host + h + 1, "0123456789") == len - (size_t)h - 1;
}

/* Of a request's fields: how many Host, the first one's value, and
 * whether a name holds whitespace (before its colon). */
struct metrics_fields {
	size_t nhost;
	const char *host;
	int bad_name;
};

/* Look at one field of a request. */
static enum MHD_Result
metrics_field(
    void *arg, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct metrics_fields *f = arg;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0 && f->nhost++ == 0)
		f->host = value != NULL ? value : "";
	if (strpbrk(key, " \t") != NULL)
		f->bad_name = 1;
	return MHD_YES;
}

/* Whether request mc announces a body (Content-Length but 0, any
 * Transfer-Encoding): robotsd reads none, so it answers 413 and closes. */
static int
metrics_announces_body(struct MHD_Connection *mc)
{
	const char *v = MHD_lookup_connection_value(
	    mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (v != NULL && metrics_has_body(v)) ||
	       MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
	           MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

/* The path of a target, an absolute-form one's too (RFC 9112 3.2.2);
 * libmicrohttpd has taken the query off. */
static const char *
metrics_path(const char *url)
{
	const char *p;

	if (strncasecmp(url, "http://", 7) != 0 &&
	    strncasecmp(url, "https://", 8) != 0)
		return url;
	p = strchr(strchr(url, ':') + 3, '/');
	return p != NULL ? p : "/";
}

/*
 * At the head: refuse it (and close) if it must be, before a byte of
 * a body is read; whether it was, *ok what queueing the answer gave.
 * libmicrohttpd has refused what it could not parse; left here: a space
 * before a field's colon (RFC 9112 5.1: 400, else the field could hide a
 * Content-Length and the body be read as the next request), the Host rule
 * (RFC 9112 3.2, metrics_host_ok()), a body announced (413), a method but
 * GET and HEAD (405).
 */
static int
metrics_refused(struct MHD_Connection *mc, const char *method,
    const char *version, enum MHD_Result *ok)
{
	struct metrics_fields f = { 0, NULL, 0 };
	unsigned int status = MHD_HTTP_BAD_REQUEST;
	const char *why = NULL;

	MHD_get_connection_values(mc, MHD_HEADER_KIND, metrics_field, &f);
	if (f.bad_name)
		why = "bad request";
	else if (!metrics_host_ok(strcmp(version, MHD_HTTP_VERSION_1_0) != 0,
	             f.nhost, f.host))
		why = "one valid Host field needed";
	else if (metrics_announces_body(mc)) {
		status = MHD_HTTP_CONTENT_TOO_LARGE;
		why = "no request body";
	} else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	           strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		why = "GET or HEAD only";
	}
	if (why == NULL)
		return 0;
	*ok = metrics_answer_text(mc, status, why, 1);
	return 1;
}

/* Answer a complete request that passed metrics_refused(): the route. */
static enum MHD_Result
metrics_request(struct metrics *m, struct MHD_Connection *mc, const char *url)
{
	static const char *const names[] = { "starting", "serving",
		"stopping" };
	int serving = m->health == METRICS_SERVING;

	url = metrics_path(url);
	if (strcmp(url, "/healthz") == 0)
		return metrics_answer_text(mc,
		    serving ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
		    names[m->health], 0);
	if (strcmp(url, "/metrics") != 0)
		return metrics_answer_text(
		    mc, MHD_HTTP_NOT_FOUND, "not found", 0);
	return metrics_scrape(m, mc);
}

/*
 * libmicrohttpd's access handler, called with the head (refused then if
 * it must be) and again once the request is complete, when it is
 * answered (an answer queued earlier would close the connection).
 */
static enum MHD_Result
metrics_handler(void *arg, struct MHD_Connection *mc, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **req)
{
	static char refused; /* *req of a request answered at its head */
	struct metrics *m = arg;
	struct metrics_conn *c;
	enum MHD_Result ok = MHD_YES;

	(void)upload;
	if (*req == NULL) {
		*req = m;
		if ((c = metrics_conn_of(mc)) != NULL)
			evtimer_del(c->deadline);
		if (metrics_refused(mc, method, version, &ok))
			*req = &refused;
		return ok;
	}
	if (*upload_len != 0 || *req == &refused) {
		*upload_len = 0;
		return MHD_YES;
	}
	return metrics_request(m, mc, url);
}

/* Accept again, unless the cap or a pause for descriptors holds it. */
static void
metrics_listen_on(struct metrics *m)
{
	if (!m->ap.paused && m->nconns < m->max_conns && m->listener != NULL)
		evconnlistener_enable(m->listener);
}

/* A new client: libmicrohttpd's from now on (it closes fd on failure). */
static void
metrics_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct metrics *m = arg;

	(void)l;
	accept_pause_ok(&m->ap);
	MHD_add_connection(m->mhd, fd, sa, (socklen_t)salen);
	metrics_run(m);
}

/* The pause for descriptors is over. */
static void
metrics_resume(evutil_socket_t fd, short what, void *arg)
{
	struct metrics *m = arg;

	(void)fd;
	(void)what;
	m->ap.paused = 0;
	metrics_listen_on(m);
}

/*
 * accept() failed for a reason other than a client gone or nothing to
 * accept (above all EMFILE, ENFILE: no descriptor left): pause accepting
 * as every listener does (accept.h).
 */
static void
metrics_accept_error(struct evconnlistener *l, void *arg)
{
	struct metrics *m = arg;

	accept_pause_start(&m->ap, l, NULL, m->resume, "metrics_accept_paused",
	    EVUTIL_SOCKET_ERROR(), m->nconns);
}

/* The listening socket on addr, or NULL + errno (or *gai). */
static struct evconnlistener *
metrics_listen(
    struct metrics *m, const char *host, unsigned short port, int *gai)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct evconnlistener *l = NULL;
	char ports[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(ports, sizeof(ports), "%u", port);
	errno = ENOMEM;
	if ((*gai = getaddrinfo(
	         host[0] != '\0' ? host : NULL, ports, &hints, &res)) != 0)
		return NULL;
	for (ai = res; ai != NULL && l == NULL; ai = ai->ai_next)
		l = evconnlistener_new_bind(m->base, metrics_accept, m,
		    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
		        LEV_OPT_REUSEABLE,
		    128, ai->ai_addr, (int)ai->ai_addrlen);
	freeaddrinfo(res);
	return l;
}

/*
 * libmicrohttpd's own messages (a connection refused, a head it cannot
 * parse, out of memory) as robotsd's log lines, "event=metrics_http
 * message=...", one newline-less line each; log_event()'s bucket for
 * that event keeps a flood of them from the log.
 */
static void __attribute__((format(printf, 2, 0)))
metrics_mhd_log(void *arg, const char *fmt, va_list ap)
{
	char msg[512], kv[LOG_KV_BUF];
	int n;

	(void)arg;
	if ((n = vsnprintf(msg, sizeof(msg), fmt, ap)) < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		n--;
	log_event(LOG_WARNING, "metrics_http", "message=%s",
	    log_kv(msg, (size_t)n, LOG_KV_MAX, kv, sizeof(kv)));
}

/*
 * libmicrohttpd, with no listener and no thread of its own, its epoll
 * descriptor and its timer on m's loop; 0, or -1.
 */
static int
metrics_http(struct metrics *m)
{
	const union MHD_DaemonInfo *i;
	unsigned int per_ip = (unsigned int)(m->max_conns / 4);

	m->mhd = MHD_start_daemon(
	    MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG, 0,
	    NULL, NULL, metrics_handler, m, MHD_OPTION_EXTERNAL_LOGGER,
	    metrics_mhd_log, m, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)m->max_conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    per_ip > 0 ? per_ip : 1, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)METRICS_WRITE_TIMEOUT,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_MEMORY,
	    MHD_OPTION_NOTIFY_CONNECTION, metrics_conn_notify, m,
	    MHD_OPTION_NOTIFY_COMPLETED, metrics_completed, m, MHD_OPTION_END);
	if (m->mhd == NULL ||
	    (i = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD)) ==
	        NULL ||
	    (m->ready = event_new(m->base, i->epoll_fd, EV_READ | EV_PERSIST,
	         metrics_ready, m)) == NULL ||
	    (m->tick = evtimer_new(m->base, metrics_ready, m)) == NULL ||
	    event_add(m->ready, NULL) == -1)
		return -1;
	return 0;
}

/* Listen for GET /metrics; see metrics.h. */
struct metrics *
metrics_new(struct event_base *base, const char *addr, size_t max_conns,
    stats_fn stats, void *stats_arg, char **cause)
{
	struct metrics *m;
	unsigned short port;
	char *host;
	int gai = 0;

	if (parse_hostport(addr, &host, &port) == -1) {
		xasprintf(cause, "metrics: '%s' is not ADDR:PORT", addr);
		return NULL;
	}
	m = xcalloc(1, sizeof(*m));
	m->stats = stats;
	m->stats_arg = stats_arg;
	m->base = base;
	m->max_conns = max_conns > 0 ? max_conns : 1;
	m->listener = metrics_listen(m, host, port, &gai);
	if (m->listener == NULL ||
	    (m->resume = evtimer_new(base, metrics_resume, m)) == NULL) {
		xasprintf(cause, "metrics: cannot listen on %s (%s)", addr,
		    gai != 0 ? gai_strerror(gai) : strerror(errno));
		free(host);
		metrics_free(m);
		return NULL;
	}
	free(host);
	if (metrics_http(m) == -1) {
		xasprintf(cause, "metrics: cannot start libmicrohttpd");
		metrics_free(m);
		return NULL;
	}
	evconnlistener_set_error_cb(m->listener, metrics_accept_error);
	return m;
}

/* Stop serving and free. */
void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	m->max_conns = 0; /* no listening again while closing */
	if (m->ready != NULL)
		event_free(m->ready);
	if (m->mhd != NULL)
		MHD_stop_daemon(m->mhd); /* closes every connection */
	if (m->tick != NULL)
		event_free(m->tick);
	if (m->listener != NULL)
		evconnlistener_free(m->listener);
	if (m->resume != NULL)
		event_free(m->resume);
	free(m);
}
