/*
 * metrics.c: the optional Prometheus text endpoint. Owns its listener and
 * its connections: a small HTTP/1.x server (GET and HEAD of /metrics and
 * /healthz, keep-alive) whose every resource is bounded, since the port
 * may be open to more than the scraper: at most max_conns connections
 * (past them the listener is paused, the rest wait in the kernel's
 * backlog), a request head of at most METRICS_MAX_HEAD bytes completed
 * within METRICS_HEAD_TIMEOUT of its first byte, an idle connection
 * closed after METRICS_IDLE_TIMEOUT, an answer left unread closed after
 * METRICS_WRITE_TIMEOUT, and when descriptors run out (EMFILE, ENFILE)
 * accepting paused for METRICS_BACKOFF_MIN doubling to _MAX, with one
 * rate-limited log line, never a loop retrying accept(). Formats the
 * counters table it is handed (metric.h) at request time, with
 * robotsd_build_info and the process metrics (from /proc/self) after it,
 * and answers /healthz from the daemon's state.
 */
#include <config.h>

#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "base/clock.h"
#include "base/histo.h"
#include "base/log.h"
#include "policy/parse.h"
#include "base/xmalloc.h"
#include "conn/metrics.h"

#define METRICS_MAX_HEAD 8192    /* bytes of a request line and headers */
#define METRICS_HEAD_TIMEOUT 5   /* seconds from a head's first byte */
#define METRICS_IDLE_TIMEOUT 30  /* seconds between requests */
#define METRICS_WRITE_TIMEOUT 10 /* seconds an answer may stay unread */
#define METRICS_LINGER 2         /* seconds read after the last answer */
#define METRICS_BACKOFF_MIN 0.1  /* seconds accepting pauses at EMFILE */
#define METRICS_BACKOFF_MAX 2.0
#define METRICS_LOG_EVERY 60.0 /* seconds between two lines of pauses */

struct metrics_conn;

struct metrics {
	stats_fn stats;
	void *stats_arg;
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *resume; /* ends a pause for want of descriptors */
	double backoff;       /* the next pause, seconds; 0: none yet */
	int paused;           /* for want of descriptors */
	double logged;        /* clock_monotonic() of the last such line */
	unsigned long pauses; /* pauses since that line */
	size_t nconns, max_conns;
	struct metrics_conn *conns; /* every open connection */
	enum metrics_health health;
};

/* One client of the port. */
struct metrics_conn {
	struct metrics *m;
	struct bufferevent *bev;
	struct event *timer; /* the head or idle deadline */
	int in_head;         /* bytes of a request head have come */
	int closing;         /* the last answer is being written */
	struct metrics_conn *prev, *next;
};

/* "# HELP" and "# TYPE" when v starts a family (prev is the sample before). */
static void
metrics_family(
    struct evbuffer *out, const struct metric *v, const struct metric *prev)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	if (prev != NULL && strcmp(prev->prom, v->prom) == 0)
		return;
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", v->prom,
	    v->help, v->prom, types[v->type]);
}

/* A histogram's buckets, sum and count; label ('k="v",...') or NULL. */
static void
metrics_histogram(struct evbuffer *out, const char *prom, const char *label,
    const struct histo *h)
{
	const char *l = label != NULL ? label : "",
	           *c = label != NULL ? "," : "";
	const char *o = label != NULL ? "{" : "", *e = label != NULL ? "}" : "";
	size_t i;

	for (i = 0; i < HISTO_BUCKETS; i++)
		evbuffer_add_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n",
		    prom, l, c, histo_bounds[i],
		    (unsigned long long)histo_cumulative(h, i));
	evbuffer_add_printf(out,
	    "%s_bucket{%s%sle=\"+Inf\"} %llu\n%s_sum%s%s%s %.9g\n"
	    "%s_count%s%s%s %llu\n",
	    prom, l, c, (unsigned long long)h->count, prom, o, l, e, h->sum,
	    prom, o, l, e, (unsigned long long)h->count);
}

/* The counters table, in the exposition format. */
static void
metrics_table(struct metrics *m, struct evbuffer *out)
{
	struct metric v[METRICS_MAX];
	size_t i, n = m->stats(m->stats_arg, v);

	for (i = 0; i < n; i++) {
		metrics_family(out, &v[i], i > 0 ? &v[i - 1] : NULL);
		if (v[i].type == METRIC_HISTOGRAM)
			metrics_histogram(
			    out, v[i].prom, v[i].label, v[i].histo);
		else if (v[i].label != NULL)
			evbuffer_add_printf(out, "%s{%s} %llu\n", v[i].prom,
			    v[i].label, (unsigned long long)v[i].value);
		else
			evbuffer_add_printf(out, "%s %llu\n", v[i].prom,
			    (unsigned long long)v[i].value);
	}
}

/* Open file descriptors: the entries of /proc/self/fd; -1 if unknown. */
static long
metrics_open_fds(void)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/*
 * The boot time, seconds since the epoch: the wall clock less the time
 * since boot (CLOCK_BOOTTIME, the clock of /proc/self/stat's start time).
 * Not /proc/stat's btime, which a unit's ProcSubset=pid hides; 0 if unknown.
 */
static double
metrics_boot_time(void)
{
	struct timespec now, up;
	double secs;

	if (clock_gettime(CLOCK_REALTIME, &now) == -1 ||
	    clock_gettime(CLOCK_BOOTTIME, &up) == -1)
		return 0;
	secs = (double)(now.tv_sec - up.tv_sec);
	return secs + (double)(now.tv_nsec - up.tv_nsec) / 1e9;
}

/* The process metrics of the Prometheus client libraries, from /proc. */
static void
metrics_process(struct evbuffer *out)
{
	unsigned long long ut, st, start, rss;
	double tck = (double)sysconf(_SC_CLK_TCK);
	char buf[1024], *p;
	long fds = metrics_open_fds();
	FILE *f;
	size_t n;

	if ((f = fopen("/proc/self/stat", "r")) == NULL)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After "pid (comm)": fields 3.. ; utime is 14, rss 24. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2,
	        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
	        "%*d %*d %*d %*d %*d %*d %llu %*u %llu",
	        &ut, &st, &start, &rss) != 4 ||
	    tck <= 0)
		return;
	evbuffer_add_printf(out,
	    "# HELP process_cpu_seconds_total User and system CPU time.\n"
	    "# TYPE process_cpu_seconds_total counter\n"
	    "process_cpu_seconds_total %.2f\n"
	    "# HELP process_resident_memory_bytes Resident memory.\n"
	    "# TYPE process_resident_memory_bytes gauge\n"
	    "process_resident_memory_bytes %llu\n"
	    "# HELP process_start_time_seconds Start time since the epoch.\n"
	    "# TYPE process_start_time_seconds gauge\n"
	    "process_start_time_seconds %.2f\n",
	    (double)(ut + st) / tck,
	    rss * (unsigned long long)sysconf(_SC_PAGESIZE),
	    metrics_boot_time() + (double)start / tck);
	if (fds >= 0)
		evbuffer_add_printf(out,
		    "# HELP process_open_fds Open file descriptors.\n"
		    "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
		    fds);
}

/* The /metrics body: the table, the build info, the process. */
static void
metrics_body(struct metrics *m, struct evbuffer *out)
{
	metrics_table(m, out);
	evbuffer_add_printf(out,
	    "# HELP robotsd_build_info The running robotsd's version.\n"
	    "# TYPE robotsd_build_info gauge\n"
	    "robotsd_build_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	metrics_process(out);
}

/* What /healthz answers from now on. */
void
metrics_set_health(struct metrics *m, enum metrics_health h)
{
	if (m != NULL)
		m->health = h;
}

static void metrics_conn_read(struct bufferevent *, void *);
static void metrics_conn_closing(struct metrics_conn *);
static void metrics_listen_on(struct metrics *);

/* Close c and forget it; accept again if the cap had paused it. */
static void
metrics_conn_free(struct metrics_conn *c)
{
	struct metrics *m = c->m;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		m->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	event_free(c->timer);
	bufferevent_free(c->bev);
	free(c);
	if (m->nconns-- == m->max_conns)
		metrics_listen_on(m);
}

/* Wait at most seconds for the next step of c. */
static void
metrics_conn_deadline(struct metrics_conn *c, long seconds)
{
	struct timeval tv = { seconds, 0 };

	evtimer_add(c->timer, &tv);
}

/* The head or idle deadline passed. */
static void
metrics_conn_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	metrics_conn_free(arg);
}

/*
 * The peer closed, an error, or an answer stayed unread too long. A peer
 * that only shut its side of the connection after its requests still gets
 * the answers to all of them: libevent stopped reading, the answer being
 * written reads the next request (metrics_conn_written()), and reading
 * again once none is left finds the end of file with nothing to write.
 */
static void
metrics_conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct metrics_conn *c = arg;

	if ((what & BEV_EVENT_EOF) && !c->closing &&
	    evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	metrics_conn_free(c);
}

/* Lingering after the last answer: what the client still sends. */
static void
metrics_conn_discard(struct bufferevent *bev, void *arg)
{
	(void)arg;
	evbuffer_drain(bufferevent_get_input(bev),
	    evbuffer_get_length(bufferevent_get_input(bev)));
}

/*
 * An answer is written: read the next, or after the last one shut the
 * sending side and read what the client still sends until it closes, at
 * most METRICS_LINGER seconds (closing with unread bytes would reset the
 * connection, and the client could lose the answer).
 */
static void
metrics_conn_written(struct bufferevent *bev, void *arg)
{
	struct metrics_conn *c = arg;

	if (c->closing) {
		shutdown(bufferevent_getfd(bev), SHUT_WR);
		bufferevent_setcb(
		    bev, metrics_conn_discard, NULL, metrics_conn_event, c);
		bufferevent_setwatermark(bev, EV_READ, 0, 0);
		evbuffer_drain(bufferevent_get_input(bev),
		    evbuffer_get_length(bufferevent_get_input(bev)));
		bufferevent_enable(bev, EV_READ);
		metrics_conn_deadline(c, METRICS_LINGER);
		return;
	}
	bufferevent_enable(bev, EV_READ);
	metrics_conn_read(bev, c);
}

/* Write what is queued, then close. */
static void
metrics_conn_closing(struct metrics_conn *c)
{
	c->closing = 1;
	event_del(c->timer);
	bufferevent_disable(c->bev, EV_READ);
}

/*
 * Queue one answer: status line, headers, and the body (body, or text
 * and a newline) unless head. last: say so, and close once it is written.
 */
static void
metrics_answer(struct metrics_conn *c, int status, const char *reason,
    const char *type, struct evbuffer *body, const char *text, int head,
    int last)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t len =
	    body != NULL ? evbuffer_get_length(body) : strlen(text) + 1;

	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "%s%s\r\n",
	    status, reason, type, len,
	    status == 405 ? "Allow: GET, HEAD\r\n" : "", /* RFC 9110 */
	    last ? "Connection: close\r\n" : "");
	if (head)
		;
	else if (body != NULL)
		evbuffer_add_buffer(out, body);
	else
		evbuffer_add_printf(out, "%s\n", text);
	if (last)
		metrics_conn_closing(c);
}

/* An answer with a short text body. */
static void
metrics_answer_text(struct metrics_conn *c, int status, const char *reason,
    const char *text, int head, int last)
{
	metrics_answer(c, status, reason, "text/plain", NULL, text, head, last);
}

/* The value of a header line "name: value" (case aside); NULL if not. */
static const char *
metrics_header(const char *line, const char *name)
{
	size_t n = strlen(name);

	if (strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	return line + strspn(line, " \t");
}

/* Whether the comma-separated list v holds token (case aside). */
static int
metrics_has_token(const char *v, const char *token)
{
	size_t n = strlen(token), len;

	for (; *v != '\0'; v += *v == ',') {
		v += strspn(v, " \t");
		len = strcspn(v, ",");
		if (strncasecmp(v, token, n) == 0 &&
		    v[n + strspn(v + n, " \t")] == v[len])
			return 1;
		v += len;
	}
	return 0;
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

/*
 * Answer one request head (len bytes, NUL-terminated, lines ending "\r\n"
 * or "\n"). A NUL in it, a space before a field's colon or a line begun
 * with one (obs-fold) is a 400 (RFC 9112 5.1, 5.2): each could hide a
 * Content-Length from the checks here, and the body would then be read as
 * the next request. So are an HTTP/1.1 request without Host and any with
 * two or an invalid one (RFC 9112 3.2, metrics_host_ok()).
 */
static void
metrics_request(struct metrics_conn *c, char *req, size_t len)
{
	static const char *const names[] = { "starting", "serving",
		"stopping" };
	struct metrics *m = c->m;
	char *line, *next, *colon, method[8], target[256], version[16];
	int head, last, body = 0, keep = 0, shut = 0, bad, v11;
	const char *v, *host = NULL;
	size_t nhost = 0;
	struct evbuffer *out;

	bad = memchr(req, '\0', len) != NULL;
	next = req;
	line = strsep(&next, "\n");
	bad = bad ||
	      sscanf(line, "%7s %255s %15s", method, target, version) != 3 ||
	      strncmp(version, "HTTP/1.", 7) != 0;
	while (!bad && (line = strsep(&next, "\n")) != NULL) {
		line[strcspn(line, "\r")] = '\0';
		colon = strchr(line, ':');
		if ((colon != NULL && colon > line &&
		        (colon[-1] == ' ' || colon[-1] == '\t')) ||
		    line[0] == ' ' || line[0] == '\t')
			bad = 1;
		if ((v = metrics_header(line, "Content-Length")) != NULL &&
		    metrics_has_body(v))
			body = 1;
		if (metrics_header(line, "Transfer-Encoding") != NULL)
			body = 1;
		if ((v = metrics_header(line, "Host")) != NULL && nhost++ == 0)
			host = v;
		if ((v = metrics_header(line, "Connection")) != NULL) {
			shut |= metrics_has_token(v, "close");
			keep |= metrics_has_token(v, "keep-alive");
		}
	}
	if (bad) {
		metrics_answer_text(c, 400, "Bad Request", "bad request", 0, 1);
		return;
	}
	v11 = strcmp(version, "HTTP/1.0") != 0;
	head = strcmp(method, "HEAD") == 0;
	if (!metrics_host_ok(v11, nhost, host)) {
		metrics_answer_text(c, 400, "Bad Request",
		    "one valid Host field needed", head, 1);
		return;
	}
	last = shut || !(v11 || keep) || body;
	target[strcspn(target, "?")] = '\0';
	if (strncasecmp(target, "http://", 7) == 0 ||
	    strncasecmp(target, "https://", 8) == 0) { /* absolute-form */
		line = strchr(strchr(target, ':') + 3, '/');
		memmove(target, line != NULL ? line : "/",
		    line != NULL ? strlen(line) + 1 : 2);
	}
	if (body)
		metrics_answer_text(
		    c, 413, "Payload Too Large", "no request body", head, 1);
	else if (!head && strcmp(method, "GET") != 0)
		metrics_answer_text(
		    c, 405, "Method Not Allowed", "GET or HEAD only", 0, 1);
	else if (strcmp(target, "/healthz") == 0)
		metrics_answer_text(c, m->health == METRICS_SERVING ? 200 : 503,
		    m->health == METRICS_SERVING ? "OK" : "Service Unavailable",
		    names[m->health], head, last);
	else if (strcmp(target, "/metrics") != 0)
		metrics_answer_text(
		    c, 404, "Not Found", "not found", head, last);
	else if ((out = evbuffer_new()) == NULL)
		metrics_answer_text(
		    c, 500, "Internal Server Error", "no memory", head, 1);
	else {
		metrics_body(m, out);
		metrics_answer(c, 200, "OK", "text/plain; version=0.0.4", out,
		    NULL, head, last);
		evbuffer_free(out);
	}
}

/* The length of the request head at the start of in, with its blank
 * line; 0 while it is incomplete. */
static size_t
metrics_head_len(struct evbuffer *in)
{
	struct evbuffer_ptr crlf = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	struct evbuffer_ptr lf = evbuffer_search(in, "\n\n", 2, NULL);

	if (crlf.pos != -1 && (lf.pos == -1 || crlf.pos < lf.pos))
		return (size_t)crlf.pos + 4;
	return lf.pos != -1 ? (size_t)lf.pos + 2 : 0;
}

/*
 * Bytes came: answer the complete request head first in line, the next
 * once that answer is written (a client that sends many and reads none
 * holds one answer, not all).
 */
static void
metrics_conn_read(struct bufferevent *bev, void *arg)
{
	struct metrics_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char req[METRICS_MAX_HEAD + 1];
	size_t len;

	if (c->closing || evbuffer_get_length(in) == 0 ||
	    evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	if ((len = metrics_head_len(in)) == 0 || len > METRICS_MAX_HEAD) {
		if (len > METRICS_MAX_HEAD ||
		    evbuffer_get_length(in) >= METRICS_MAX_HEAD) {
			evbuffer_drain(in, evbuffer_get_length(in));
			metrics_answer_text(c, 431,
			    "Request Header Fields Too Large",
			    "request head too large", 0, 1);
		} else if (!c->in_head) {
			c->in_head = 1;
			metrics_conn_deadline(c, METRICS_HEAD_TIMEOUT);
		}
		return;
	}
	evbuffer_remove(in, req, len);
	req[len] = '\0';
	c->in_head = 0;
	metrics_conn_deadline(c, METRICS_IDLE_TIMEOUT);
	metrics_request(c, req, len);
}

/* Accept again, unless the cap or a pause for descriptors holds it. */
static void
metrics_listen_on(struct metrics *m)
{
	if (!m->paused && m->nconns < m->max_conns)
		evconnlistener_enable(m->listener);
}

/* A new client. */
static void
metrics_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct timeval wt = { METRICS_WRITE_TIMEOUT, 0 };
	struct metrics *m = arg;
	struct metrics_conn *c;

	(void)sa;
	(void)salen;
	m->backoff = 0; /* accept works again */
	if (m->nconns >= m->max_conns || (c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->m = m;
	if ((c->bev = bufferevent_socket_new(
	         m->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->timer = evtimer_new(m->base, metrics_conn_timeout, c)) ==
	        NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			close(fd);
		free(c);
		return;
	}
	bufferevent_setcb(c->bev, metrics_conn_read, metrics_conn_written,
	    metrics_conn_event, c);
	bufferevent_set_timeouts(c->bev, NULL, &wt);
	/* reading stops with a full head's worth unanswered */
	bufferevent_setwatermark(c->bev, EV_READ, 0, METRICS_MAX_HEAD);
	bufferevent_enable(c->bev, EV_READ);
	metrics_conn_deadline(c, METRICS_IDLE_TIMEOUT);
	c->next = m->conns;
	if (m->conns != NULL)
		m->conns->prev = c;
	m->conns = c;
	if (++m->nconns == m->max_conns)
		evconnlistener_disable(l);
}

/* The pause for descriptors is over. */
static void
metrics_resume(evutil_socket_t fd, short what, void *arg)
{
	struct metrics *m = arg;

	(void)fd;
	(void)what;
	m->paused = 0;
	metrics_listen_on(m);
}

/*
 * accept() failed for a reason other than a client gone or nothing to
 * accept (above all EMFILE, ENFILE: no descriptor left): pause accepting,
 * longer each time in a row, since the listening socket stays readable
 * and retrying at once would spin. One line says so, then none for
 * METRICS_LOG_EVERY seconds (the next counts the pauses in between).
 */
static void
metrics_accept_error(struct evconnlistener *l, void *arg)
{
	struct metrics *m = arg;
	int err = EVUTIL_SOCKET_ERROR();
	double now = clock_monotonic();
	struct timeval tv;

	m->backoff = m->backoff == 0 ? METRICS_BACKOFF_MIN : m->backoff * 2;
	if (m->backoff > METRICS_BACKOFF_MAX)
		m->backoff = METRICS_BACKOFF_MAX;
	tv.tv_sec = (time_t)m->backoff;
	tv.tv_usec = (suseconds_t)((m->backoff - (double)tv.tv_sec) * 1e6);
	evconnlistener_disable(l);
	m->paused = 1;
	evtimer_add(m->resume, &tv);
	m->pauses++;
	if (m->logged != 0 && now - m->logged < METRICS_LOG_EVERY)
		return;
	log_event(LOG_WARNING, "metrics_accept_paused",
	    "error=\"%s\" connections=%zu pause_ms=%.0f pauses=%lu",
	    strerror(err), m->nconns, m->backoff * 1000, m->pauses);
	m->logged = now;
	m->pauses = 0;
}

/* Listen for GET /metrics; see metrics.h. */
struct metrics *
metrics_new(struct event_base *base, const char *addr, size_t max_conns,
    stats_fn stats, void *stats_arg, char **cause)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct metrics *m;
	unsigned short port;
	char *host, ports[8];
	int gai, err = ENOMEM;

	if (parse_hostport(addr, &host, &port) == -1) {
		xasprintf(cause, "metrics: '%s' is not ADDR:PORT", addr);
		return NULL;
	}
	m = xcalloc(1, sizeof(*m));
	m->stats = stats;
	m->stats_arg = stats_arg;
	m->base = base;
	m->max_conns = max_conns > 0 ? max_conns : 1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(ports, sizeof(ports), "%u", port);
	if ((gai = getaddrinfo(
	         host[0] != '\0' ? host : NULL, ports, &hints, &res)) == 0)
		for (ai = res; ai != NULL && !m->listener; ai = ai->ai_next) {
			m->listener =
			    evconnlistener_new_bind(base, metrics_accept, m,
			        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
			            LEV_OPT_REUSEABLE,
			        128, ai->ai_addr, (int)ai->ai_addrlen);
			if (m->listener == NULL)
				err = errno;
		}
	if (res != NULL)
		freeaddrinfo(res);
	free(host);
	if (m->listener == NULL ||
	    (m->resume = evtimer_new(base, metrics_resume, m)) == NULL) {
		xasprintf(cause, "metrics: cannot listen on %s (%s)", addr,
		    gai != 0 ? gai_strerror(gai) : strerror(err));
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
	while (m->conns != NULL)
		metrics_conn_free(m->conns);
	if (m->listener != NULL)
		evconnlistener_free(m->listener);
	if (m->resume != NULL)
		event_free(m->resume);
	free(m);
}
