/*
 * loadgen.c: a load generator for line protocols over a Unix socket.
 *
 * usage: loadgen [-c CONNS] [-d DEPTH] [-t SECONDS] [-w WARMUP] [-r RATE]
 *                [-e EXPECT] SOCKET FILE
 *
 * Opens CONNS connections to SOCKET, each keeping DEPTH request lines in
 * flight; the lines come from FILE (one request a line, used in turn and
 * cycled). Every answer is one line: answers are counted by newline, so
 * the same program drives robotsd (JSON lines) and redis-server (inline
 * "PING", answered "+PONG"). With -e, an answer line that does not hold
 * EXPECT is counted bad. With -r, requests are sent at RATE per second in
 * all (DEPTH then only bounds what may be in flight), and a latency counts
 * from the time the request was due, so a stall is not hidden.
 *
 * One thread, epoll. After WARMUP seconds (default 0.5) it counts for
 * SECONDS (default 5), then prints one line of key=value figures:
 * requests/s, latency percentiles in microseconds, bad answers, and its
 * own CPU seconds per request (to show it is not the bottleneck).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN 1024
#define MAXDEPTH 4096
#define INBUF 65536
#define OUTBUF 65536
/* Latency histogram: 50 ns buckets below 1 ms, 10 us buckets to 1 s. */
#define FINE_NS 50
#define FINE_N 20000
#define COARSE_NS 10000
#define COARSE_N 100000
#define NBUCKET (FINE_N + COARSE_N + 1)

struct lines {
	char *text;  /* the file, every line ending in '\n' */
	size_t *off; /* line i is [off[i], off[i + 1]) */
	size_t n;
};

struct conn {
	int fd;
	size_t next;                /* next line to send */
	char out[OUTBUF];           /* bytes not yet written */
	size_t out_len, out_pos;    /* queued, written */
	uint64_t sent_at[MAXDEPTH]; /* ring of send times, ns */
	unsigned head, count;       /* oldest, in flight */
	char in[INBUF];
	size_t in_len;
	int want_out;
};

struct opts {
	long conns, depth, rate;
	double secs, warmup;
	const char *expect;
};

static struct conn *conns;
static long nconn, depth;
static const char *expect;
static uint32_t hist[NBUCKET];
static uint64_t answers, bad, lat_max;
static int counting;

/* Exit with a message and errno's text. */
static void
die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Monotonic nanoseconds. */
static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* This process's CPU seconds. */
static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read FILE into lines; a last line without '\n' gets one. */
static void
read_lines(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 1 << 16, i, cnt = 0;
	size_t n;

	if (f == NULL)
		die(path);
	if ((l->text = malloc(cap + 1)) == NULL)
		die("malloc");
	while ((n = fread(l->text + len, 1, cap - len, f)) > 0)
		if ((len += n) == cap &&
		    (l->text = realloc(l->text, (cap *= 2) + 1)) == NULL)
			die("realloc");
	fclose(f);
	if (len > 0 && l->text[len - 1] != '\n')
		l->text[len++] = '\n';
	for (i = 0; i < len; i++)
		cnt += l->text[i] == '\n';
	if (cnt == 0) {
		fprintf(stderr, "loadgen: %s: no request lines\n", path);
		exit(2);
	}
	if ((l->off = malloc((cnt + 1) * sizeof(*l->off))) == NULL)
		die("malloc");
	l->off[0] = 0;
	for (i = 0, l->n = 0; i < len; i++)
		if (l->text[i] == '\n')
			l->off[++l->n] = i + 1;
}

/* A non-blocking connection to the Unix socket at path. */
static int
dial(const char *path)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd == -1)
		die("socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "loadgen: socket path too long\n");
		exit(2);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		die(path);
	return fd;
}

/* Count one latency in the histogram. */
static void
record(uint64_t ns)
{
	size_t b;

	if (!counting)
		return;
	answers++;
	if (ns > lat_max)
		lat_max = ns;
	if (ns < (uint64_t)FINE_NS * FINE_N)
		b = ns / FINE_NS;
	else if ((b = FINE_N + (ns - (uint64_t)FINE_NS * FINE_N) / COARSE_NS) >
	         FINE_N + COARSE_N)
		b = FINE_N + COARSE_N;
	hist[b]++;
}

/* The latency in microseconds below which a fraction q of answers fell. */
static double
percentile(double q)
{
	uint64_t want = (uint64_t)(q * (double)answers), seen = 0;
	size_t b;

	for (b = 0; b < NBUCKET; b++)
		if ((seen += hist[b]) > want || seen == answers)
			break;
	if (b < FINE_N)
		return (double)(b + 1) * FINE_NS / 1000.0;
	if (b == FINE_N + COARSE_N) /* beyond the histogram: the maximum */
		return (double)lat_max / 1000.0;
	return ((double)FINE_NS * FINE_N +
	           (double)(b - FINE_N + 1) * COARSE_NS) /
	       1000.0;
}

/* Queue the next line on c, stamped t; 0 when the buffer is full. */
static int
queue_line(struct conn *c, const struct lines *l, uint64_t t)
{
	size_t len = l->off[c->next + 1] - l->off[c->next];

	if (c->out_len + len > OUTBUF) {
		if (c->out_pos == 0 || c->out_len - c->out_pos + len > OUTBUF)
			return 0;
		memmove(c->out, c->out + c->out_pos, c->out_len - c->out_pos);
		c->out_len -= c->out_pos;
		c->out_pos = 0;
	}
	memcpy(c->out + c->out_len, l->text + l->off[c->next], len);
	c->out_len += len;
	c->next = c->next + 1 == l->n ? 0 : c->next + 1;
	c->sent_at[(c->head + c->count) % MAXDEPTH] = t;
	c->count++;
	return 1;
}

/* Write what c has queued; -1 on a dead peer. */
static int
flush_out(struct conn *c)
{
	ssize_t n;

	while (c->out_pos < c->out_len) {
		n = write(c->fd, c->out + c->out_pos, c->out_len - c->out_pos);
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -1;
		c->out_pos += (size_t)n;
	}
	c->out_pos = c->out_len = 0;
	return 0;
}

/* Take the complete answer lines in c->in; t is now. */
static void
take_answers(struct conn *c, uint64_t t)
{
	char *p = c->in, *end = c->in + c->in_len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (c->count == 0) {
			fprintf(
			    stderr, "loadgen: an answer nobody asked for\n");
			exit(1);
		}
		if (expect != NULL && counting &&
		    memmem(p, (size_t)(nl - p), expect, strlen(expect)) == NULL)
			bad++;
		record(t - c->sent_at[c->head]);
		c->head = (c->head + 1) % MAXDEPTH;
		c->count--;
		p = nl + 1;
	}
	c->in_len = (size_t)(end - p);
	memmove(c->in, p, c->in_len);
}

/* Read what c's peer answered; -1 on EOF or error. */
static int
read_in(struct conn *c)
{
	ssize_t n;

	for (;;) {
		n = read(c->fd, c->in + c->in_len, INBUF - c->in_len);
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		c->in_len += (size_t)n;
		take_answers(c, now_ns());
		if (c->in_len == INBUF) {
			fprintf(stderr, "loadgen: an answer over %d bytes\n",
			    INBUF);
			exit(1);
		}
	}
}

/* Ask epoll for writability of c only while it has bytes waiting. */
static void
watch(int ep, struct conn *c)
{
	int want = c->out_pos < c->out_len;
	struct epoll_event ev = { .events = EPOLLIN | (want ? EPOLLOUT : 0),
		.data.ptr = c };

	if (want != c->want_out) {
		c->want_out = want;
		if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == -1)
			die("epoll_ctl");
	}
}

/* Closed loop: top every connection up to depth. */
static void
top_up(int ep, const struct lines *l)
{
	uint64_t t = now_ns();
	long i;

	for (i = 0; i < nconn; i++) {
		struct conn *c = &conns[i];

		while (c->count < (unsigned)depth && queue_line(c, l, t))
			;
		if (flush_out(c) == -1)
			die("write");
		watch(ep, c);
	}
}

/* Open loop: send the requests due by now, round robin, stamped due. */
static void
send_due(
    int ep, const struct lines *l, uint64_t start, long rate, uint64_t *sent)
{
	uint64_t t = now_ns(), due;
	static long rr;
	long tries;

	for (;;) {
		due = start + *sent * 1000000000u / (uint64_t)rate;
		if (due > t)
			break;
		for (tries = 0; tries < nconn; tries++) {
			struct conn *c = &conns[rr];

			rr = (rr + 1) % nconn;
			if (c->count < (unsigned)depth && queue_line(c, l, due))
				break;
		}
		if (tries == nconn)
			break; /* all full: the next turn sends it, late */
		(*sent)++;
	}
	for (tries = 0; tries < nconn; tries++) {
		if (flush_out(&conns[tries]) == -1)
			die("write");
		watch(ep, &conns[tries]);
	}
}

/* One epoll wait and its events. */
static void
turn(int ep, int tfd)
{
	struct epoll_event evs[64];
	uint64_t ticks;
	int n, i;

	if ((n = epoll_wait(ep, evs, 64, 100)) == -1 && errno != EINTR)
		die("epoll_wait");
	for (i = 0; i < n; i++) {
		struct conn *c = evs[i].data.ptr;

		if (c == NULL) {
			if (read(tfd, &ticks, sizeof(ticks)) < 0 &&
			    errno != EAGAIN)
				die("timerfd");
			continue;
		}
		if ((evs[i].events & EPOLLIN) && read_in(c) == -1) {
			fprintf(stderr, "loadgen: the server closed\n");
			exit(1);
		}
		if ((evs[i].events & EPOLLOUT) && flush_out(c) == -1)
			die("write");
	}
}

/* A timerfd ticking every 50 us, for the open loop. */
static int
ticker(int ep)
{
	struct itimerspec it = { .it_interval = { 0, 50000 },
		.it_value = { 0, 50000 } };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (tfd == -1 || timerfd_settime(tfd, 0, &it, NULL) == -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) == -1)
		die("timerfd");
	return tfd;
}

/* Parse a number option in [lo, hi]. */
static double
num(const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "loadgen: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

/* Parse the command line; returns the index of SOCKET. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	int ch;

	*o = (struct opts){ 16, 1, 0, 5.0, 0.5, NULL };
	while ((ch = getopt(argc, argv, "c:d:t:w:r:e:")) != -1) {
		switch (ch) {
		case 'c':
			o->conns = (long)num(optarg, 1, MAXCONN);
			break;
		case 'd':
			o->depth = (long)num(optarg, 1, MAXDEPTH);
			break;
		case 't':
			o->secs = num(optarg, 0.01, 3600);
			break;
		case 'w':
			o->warmup = num(optarg, 0, 3600);
			break;
		case 'r':
			o->rate = (long)num(optarg, 1, 1e9);
			break;
		case 'e':
			o->expect = optarg;
			break;
		default:
			optind = argc;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr,
		    "usage: loadgen [-c CONNS] [-d DEPTH] [-t SECONDS] "
		    "[-w WARMUP] [-r RATE] [-e EXPECT] SOCKET FILE\n");
		exit(2);
	}
	return optind;
}

/* Connect everything and register it with a new epoll instance. */
static int
setup(const char *path)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	long i;

	if (ep == -1)
		die("epoll_create1");
	if ((conns = calloc((size_t)nconn, sizeof(*conns))) == NULL)
		die("calloc");
	for (i = 0; i < nconn; i++) {
		struct epoll_event ev = { .events = EPOLLIN,
			.data.ptr = &conns[i] };

		conns[i].fd = dial(path);
		conns[i].next = (size_t)i * 7919; /* spread the lines */
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev) == -1)
			die("epoll_ctl");
	}
	return ep;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct lines l;
	int i = parse_opts(argc, argv, &o), ep, tfd = -1;
	uint64_t start, stop, sent = 0;
	double cpu0;
	long k;

	nconn = o.conns;
	depth = o.depth;
	expect = o.expect;
	read_lines(argv[i + 1], &l);
	ep = setup(argv[i]);
	for (k = 0; k < nconn; k++)
		conns[k].next %= l.n;
	if (o.rate > 0)
		tfd = ticker(ep);
	start = now_ns();
	stop = start + (uint64_t)((o.warmup + o.secs) * 1e9);
	cpu0 = cpu_s();
	for (;;) {
		uint64_t t = now_ns();

		if (!counting && t >= start + (uint64_t)(o.warmup * 1e9)) {
			counting = 1;
			cpu0 = cpu_s();
		}
		if (t >= stop)
			break;
		if (o.rate > 0)
			send_due(ep, &l, start, o.rate, &sent);
		else
			top_up(ep, &l);
		turn(ep, tfd);
	}
	printf("rps=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
	       "answers=%llu bad=%llu conns=%ld depth=%ld rate=%ld "
	       "cpu_ns_per_req=%.0f\n",
	    (double)answers / o.secs, percentile(0.5), percentile(0.99),
	    percentile(0.999), (double)lat_max / 1000.0,
	    (unsigned long long)answers, (unsigned long long)bad, nconn, depth,
	    o.rate, answers ? (cpu_s() - cpu0) * 1e9 / (double)answers : 0.0);
	return bad > 0 ? 3 : 0;
}
