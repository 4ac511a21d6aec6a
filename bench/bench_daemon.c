/*
 * bench_daemon.c: a load generator for a running robotsd. Owns its
 * connections and the prebuilt request lines; prints Markdown tables of
 * pipelined throughput (single-URL checks, then 16-URL batches of one
 * origin) and of the round-trip latency of one request at a time.
 *
 * usage: bench_daemon SOCKET URLS_FILE [CONNECTIONS] [SECONDS] [DEPTH]
 * One thread, poll(); each connection keeps DEPTH requests in flight.
 * Every answer must carry "ok":true and "allowed": (substring checks).
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BATCH 16
#define MAXCONN 256
#define LAT_ROUNDS 20000
#define INBUF (1 << 20)

/* Prebuilt request lines, contiguous in buf; line i is [off[i], off[i+1]). */
struct reqs {
	char *buf;
	size_t len, cap;
	size_t *off;
	size_t n;
	int per; /* URL answers per line */
};

struct conn {
	int fd;
	size_t next, pos;       /* line being written, byte position in buf */
	long owed, outstanding; /* lines to write / written, not answered */
	char *in;
	size_t in_len;
};

static const char *agents[] = { "Googlebot", "bingbot",
	"FooBot/2.1 (+https://foo.example)" };
static long bad, daemon_pid; /* bad answers; robotsd's pid or 0 */

/* Exit with a message. */
static void
die(const char *what)
{
	fprintf(stderr, "bench_daemon: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Seconds on clock id: CLOCK_MONOTONIC, or this process's CPU time. */
static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall-clock seconds. */
static double
now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Append the string s to r->buf, growing it. */
static void
put(struct reqs *r, const char *s)
{
	size_t len = strlen(s);

	if (r->len + len > r->cap) {
		r->cap = (r->len + len) * 2;
		if ((r->buf = realloc(r->buf, r->cap)) == NULL)
			die("realloc");
	}
	memcpy(r->buf + r->len, s, len);
	r->len += len;
}

/* Append a URL as a JSON string; " and \ escaped. */
static void
put_url(struct reqs *r, const char *u)
{
	put(r, "\"");
	for (char ch[3] = "\\"; *u != '\0'; u++) {
		ch[1] = *u;
		put(r, ch + (*u != '"' && *u != '\\'));
	}
	put(r, "\"");
}

/* Length of the scheme://host[:port] prefix of u. */
static size_t
origin_len(const char *u)
{
	const char *p = strstr(u, "://");

	p = p ? p + 3 : u;
	return (size_t)(p - u) + strcspn(p, "/?#");
}

/*
 * Request lines, agents in turn: per 1, {"op":"check","id":I,"agent":A,
 * "url":U} for each URL; else "urls":[...] with per URLs of one origin,
 * cycling over that origin's run of URLs in the file.
 */
static void
build(struct reqs *r, char **urls, size_t nurls, int per)
{
	char head[128];
	size_t run;

	r->per = per;
	if ((r->off = calloc(nurls + 1, sizeof *r->off)) == NULL)
		die("calloc");
	for (size_t at = 0; at < nurls; at += run) {
		size_t olen = origin_len(urls[at]);

		run = 1;
		while (at + run < nurls && origin_len(urls[at + run]) == olen &&
		       strncmp(urls[at], urls[at + run], olen) == 0)
			run++;
		for (size_t b = 0; b < (run + per - 1) / per; b++) {
			snprintf(head, sizeof head,
			    "{\"op\":\"check\",\"id\":%zu,\"agent\":\"%s\",%s",
			    r->n,
			    agents[r->n % (sizeof agents / sizeof *agents)],
			    per > 1 ? "\"urls\":[" : "\"url\":");
			r->off[r->n++] = r->len;
			put(r, head);
			for (size_t k = 0; k < (size_t)per; k++) {
				put(r, k > 0 ? "," : "");
				put_url(r, urls[at + (b * per + k) % run]);
			}
			put(r, per > 1 ? "]}\n" : "}\n");
		}
	}
	r->off[r->n] = r->len;
}

/* Read URLS_FILE into *text; one URL a line, split in place. */
static char **
read_urls(const char *path, char **text, size_t *n)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, *line;
	size_t len = 0;

	if (f == NULL || getdelim(text, &len, '\0', f) == -1)
		die(path);
	fclose(f);
	*n = 0;
	for (char *p = *text; (line = strsep(&p, "\r\n")) != NULL;) {
		if (*line == '\0')
			continue;
		if ((*n & 1023) == 0 &&
		    (v = realloc(v, (*n + 1024) * sizeof *v)) == NULL)
			die("realloc");
		v[(*n)++] = line;
	}
	return v;
}

/* Connect to the daemon's Unix socket. */
static int
dial(const char *path, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);

	if (fd == -1 || strlen(path) >= sizeof sa.sun_path)
		die("socket");
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1 &&
	    errno != EINPROGRESS)
		die(path);
	return fd;
}

/* Check one answer line; returns the URL answers it holds. */
static long
verify(const char *line, int per)
{
	long n = 0;

	for (const char *p = line; (p = strstr(p, "\"allowed\":")); p++)
		n++;
	if (strncmp(line, "{\"id\":", 6) != 0 || !strstr(line, "\"ok\":true") ||
	    strstr(line, "\"ok\":false") || n != per) {
		if (bad++ < 3)
			fprintf(
			    stderr, "bench_daemon: bad answer: %.300s\n", line);
	}
	return n;
}

/* Read what is there; verify whole lines; returns URL answers, -1 on EOF. */
static long
take_answers(struct conn *c, const struct reqs *r, int running)
{
	ssize_t k = read(c->fd, c->in + c->in_len, INBUF - 1 - c->in_len);
	char *p, *nl;
	long got = 0;

	if (k <= 0)
		return k == -1 && (errno == EINTR || errno == EAGAIN) ? 0 : -1;
	c->in_len += (size_t)k;
	c->in[c->in_len] = '\0';
	for (p = c->in; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		got += verify(p, r->per);
		c->outstanding--;
		if (running)
			c->owed++;
	}
	c->in_len -= (size_t)(p - c->in);
	memmove(c->in, p, c->in_len);
	return got;
}

/* Write owed lines, cycling over r; stops when the socket is full. */
static void
flush(struct conn *c, const struct reqs *r)
{
	while (c->owed > 0) {
		size_t end = c->next + (size_t)c->owed;
		ssize_t k;

		end = r->off[end < r->n ? end : r->n];
		k = write(c->fd, r->buf + c->pos, end - c->pos);
		if (k <= 0) {
			if (k == -1 && (errno == EAGAIN || errno == EINTR))
				return;
			die("write");
		}
		c->pos += (size_t)k;
		while (c->next < r->n && r->off[c->next + 1] <= c->pos) {
			c->next++;
			c->owed--;
			c->outstanding++;
		}
		if (c->next == r->n)
			c->next = c->pos = 0;
	}
}

/* Pipelined run for secs over nconn connections; returns URL answers. */
static long
pump(struct conn *c, int nconn, const struct reqs *r, double secs)
{
	struct pollfd pfd[MAXCONN];
	double stop = now() + secs;
	long answers = 0, busy = 1, got;

	while (busy) {
		int running = now() < stop;

		if (now() > stop + 30)
			die("answers still missing 30 s after the end");
		busy = 0;
		for (int i = 0; i < nconn; i++) {
			if (!running) /* no new lines; finish a partial one */
				c[i].owed = c[i].pos != r->off[c[i].next];
			flush(&c[i], r);
			pfd[i] = (struct pollfd){ .fd = c[i].fd,
				.events = POLLIN | (c[i].owed ? POLLOUT : 0) };
			busy |= c[i].owed > 0 || c[i].outstanding > 0;
		}
		if (busy && poll(pfd, (nfds_t)nconn, 100) == -1 &&
		    errno != EINTR)
			die("poll");
		for (int i = 0; busy && i < nconn; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if ((got = take_answers(&c[i], r, running)) < 0) {
				errno = ECONNRESET;
				die("robotsd closed a connection");
			}
			answers += got;
		}
	}
	return answers;
}

/* CPU seconds robotsd has used (utime + stime from /proc), or 0. */
static double
daemon_cpu(void)
{
	char path[64], buf[1024] = "", *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/stat", daemon_pid);
	if (daemon_pid == 0 || (f = fopen(path, "r")) == NULL)
		return 0;
	buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
	fclose(f);
	/* After "pid (comm) ": state and 10 fields, then utime and stime. */
	if ((p = strrchr(buf, ')')) != NULL)
		sscanf(p + 2,
		    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
		    &st);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* One pipelined run; prints its table row with robotsd's and our CPU. */
static void
run(const char *sock, const struct reqs *r, const char *mode, int nconn,
    double secs, long depth)
{
	struct conn c[MAXCONN];
	double t0 = now(), d0 = daemon_cpu(),
	       c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	char dcpu[32] = "n/a";
	long answers;

	for (int i = 0; i < nconn; i++) {
		c[i] = (struct conn){ .fd = dial(sock, SOCK_NONBLOCK),
			.owed = depth,
			.next = r->n * (size_t)i / (size_t)nconn };
		c[i].pos = r->off[c[i].next];
		if ((c[i].in = malloc(INBUF)) == NULL)
			die("malloc");
	}
	answers = pump(c, nconn, r, secs);
	t0 = now() - t0;
	if (daemon_pid != 0)
		snprintf(dcpu, sizeof dcpu, "%.2f", daemon_cpu() - d0);
	printf("| %s | %d | %ld | %ld | %.2f | %.0f | %s | %.2f |\n", mode,
	    nconn, depth, answers, t0, (double)answers / t0, dcpu,
	    clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	for (int i = 0; i < nconn; i++) {
		close(c[i].fd);
		free(c[i].in);
	}
}

/* Compare doubles for qsort. */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* LAT_ROUNDS sequential requests on one connection; median and p99. */
static void
latency(const char *sock, const struct reqs *r)
{
	static double lat[LAT_ROUNDS];
	struct conn c = { .fd = dial(sock, 0), .in = malloc(INBUF) };

	if (c.in == NULL)
		die("malloc");
	for (size_t i = 0; i < LAT_ROUNDS; i++) {
		size_t k = i % r->n, len = r->off[k + 1] - r->off[k];
		double t = now();

		if (write(c.fd, r->buf + r->off[k], len) != (ssize_t)len)
			die("write");
		c.outstanding = 1;
		while (c.outstanding > 0)
			if (take_answers(&c, r, 0) < 0)
				die("read");
		lat[i] = now() - t;
	}
	qsort(lat, LAT_ROUNDS, sizeof lat[0], cmp_double);
	printf("\n| round trips | median | p99 |\n| ---: | ---: | ---: |\n");
	printf("| %d | %.1f µs | %.1f µs |\n", LAT_ROUNDS,
	    lat[LAT_ROUNDS / 2] * 1e6, lat[LAT_ROUNDS * 99 / 100] * 1e6);
	close(c.fd);
	free(c.in);
}

/* Argument i as a number in [1, max], or def when absent. */
static long
arg_num(int argc, char **argv, int i, long def, long max)
{
	char *end = NULL;
	long v = argc > i ? strtol(argv[i], &end, 10) : def;

	errno = EINVAL;
	if ((end != NULL && *end != '\0') || v < 1 || v > max)
		die(argv[i]);
	return v;
}

int
main(int argc, char **argv)
{
	struct reqs single = { 0 }, batch = { 0 };
	size_t nurls;
	char **urls, *text = NULL;
	int nconn;
	long secs, depth;
	const char *env;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: bench_daemon SOCKET URLS_FILE "
		                "[CONNECTIONS] [SECONDS] [DEPTH]\n");
		return 2;
	}
	nconn = (int)arg_num(argc, argv, 3, 4, MAXCONN);
	secs = arg_num(argc, argv, 4, 5, 3600);
	depth = arg_num(argc, argv, 5, 64, 4096);
	urls = read_urls(argv[2], &text, &nurls);
	if (nurls == 0 && (errno = EINVAL))
		die(argv[2]);
	build(&single, urls, nurls, 1);
	build(&batch, urls, nurls, BATCH);
	if ((env = getenv("ROBOTSD_PID")) != NULL)
		daemon_pid = strtol(env, NULL, 10);
	printf("| mode | connections | depth | URL answers | seconds | "
	       "URL answers/s | robotsd CPU s | client CPU s |\n"
	       "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	run(argv[1], &single, "one URL per check", nconn, (double)secs, depth);
	run(argv[1], &batch, "16-URL batches", nconn, (double)secs, depth);
	latency(argv[1], &single);
	if (bad > 0)
		fprintf(stderr, "bench_daemon: %ld bad answers\n", bad);
	free(urls);
	free(text);
	free(single.buf);
	free(single.off);
	free(batch.buf);
	free(batch.off);
	return bad > 0;
}
