/*
 * check_server_conn.c: one client connection's I/O (server_conn.c) over a
 * socketpair, on the real libevent loop, with a stub session
 * (iface/session_ops.h) in place of the dispatcher's. The rules checked are
 * docs/protocol.md's: a request is one line ending in '\n', read however it
 * arrives; a line over --max-line is answered line_too_long once and the
 * connection stays usable; a client that lets answers pile up is no longer read
 * until it reads most of them, and is closed when one passes --max-output; a
 * client that goes away in the middle of its answers costs nothing; after a
 * half-close everything sent is answered, then the connection closes.
 *
 * The stub session answers "{...}" by echoing it, "big N" with an answer
 * of N bytes, "wait" with nothing (a check waiting on a fetch), anything
 * else with an error object, and records what it was given.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <event2/util.h>

#include "base/handover.h"
#include "base/histo.h"
#include "iface/reply.h"
#include "conn/server.h"
#include "conn/server_int.h"
#include "iface/session_ops.h"
#include "test_main.h"

#define MAX_LINE 16
#define MAX_OUTPUT 65536
#define BAD "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"bad_json\"}}\n"
#define TOO_LONG                                                               \
	"{\"id\":null,\"ok\":false,\"error\":{\"code\":\"line_too_long\"}}\n"
#define SERVER_BUSY "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"busy\"}}\n"

/* The stub dispatcher's one session (one connection per test). */
struct session {
	struct reply *out;
	int waiting;
};

static struct {
	char lines[512][MAX_LINE + 2]; /* what session_line() got */
	size_t nlines;
	size_t too_long; /* session_too_long() calls */
	size_t limit;    /* ... with this limit */
	int closed, freed;
} seen;

static void *
stub_open(void *arg, struct reply *out, int admin)
{
	struct session *s = calloc(1, sizeof(*s));

	(void)arg;
	(void)admin;
	ck_assert_ptr_nonnull(s);
	s->out = out;
	return s;
}

static void
stub_close(void *s)
{
	(void)s;
	seen.closed++;
}

static void
stub_free(void *s)
{
	if (s != NULL)
		seen.freed++;
	free(s);
}

static int
stub_waiting(const void *arg)
{
	const struct session *s = arg;

	return s->waiting;
}

static void
stub_too_long(void *arg, size_t limit)
{
	struct session *s = arg;
	const struct reply_stamp st = { s->out->t0, REPLY_OTHER };

	seen.too_long++;
	seen.limit = limit;
	s->out->ops->send(s->out, &st, TOO_LONG, sizeof(TOO_LONG) - 1);
}

static void
stub_line(void *arg, const char *line, size_t len)
{
	struct session *s = arg;
	const struct reply_stamp st = { s->out->t0, REPLY_PING };
	char *big;
	size_t n;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	ck_assert_uint_le(len, MAX_LINE);
	ck_assert_uint_lt(seen.nlines, 512);
	memcpy(seen.lines[seen.nlines], line, len);
	seen.lines[seen.nlines++][len] = '\0';
	line = seen.lines[seen.nlines - 1];
	if (line[0] == '{') {
		char echo[MAX_LINE + 2];

		memcpy(echo, line, len);
		echo[len] = '\n';
		s->out->ops->send(s->out, &st, echo, len + 1);
	} else if (sscanf(line, "big %zu", &n) == 1) {
		big = malloc(n);
		ck_assert_ptr_nonnull(big);
		memset(big, 'x', n - 1);
		big[n - 1] = '\n';
		s->out->ops->give(s->out, &st, big, n);
	} else if (strcmp(line, "wait") == 0)
		s->waiting = 1;
	else
		s->out->ops->send(s->out, &st, BAD, sizeof(BAD) - 1);
}

static const char *
stub_refusal(void *arg, size_t *len)
{
	(void)arg;
	*len = sizeof(SERVER_BUSY) - 1;
	return SERVER_BUSY;
}

static const struct session_ops stub_ops = { stub_open, stub_line,
	stub_too_long, stub_waiting, stub_close, stub_free, stub_refusal };

static struct event_base *base;
static struct server *srv;
static struct conn *conn;
static int peer = -1; /* the client's end */
static char got[1 << 20];
static size_t ngot;
static int peer_eof;

static void
setup(void)
{
	struct server_settings set = { .max_line = MAX_LINE,
		.max_output = MAX_OUTPUT,
		.output_budget = 1 << 20,
		.write_timeout = 60,
		.max_connections = 8,
		.admin_gid = -1 };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int lfd, sv[2];
	char *cause = NULL;

	signal(SIGPIPE, SIG_IGN); /* as robotsd does */
	memset(&seen, 0, sizeof(seen));
	ngot = 0;
	peer_eof = 0;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(event_base_priority_init(base, SERVER_PRIORITIES), 0);
	/* A listener on an abstract name the kernel picks (no file). */
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(
	    bind(lfd, (struct sockaddr *)&un, sizeof(sa_family_t)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	srv = server_new(base, &stub_ops, NULL, &set);
	ck_assert_int_eq(server_listen(srv, &set, lfd, &cause), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(evutil_make_socket_nonblocking(sv[0]), 0);
	peer = sv[1];
	conn = conn_new(srv, sv[0], 0);
}

static void
teardown(void)
{
	server_free(srv);
	event_base_free(base);
	if (peer != -1)
		close(peer);
	peer = -1;
}

/* Milliseconds on the monotonic clock: a bound on waits that fail. */
static double
ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Run the loop's ready events (the backlog's zero timer included). */
static void
turns(int n)
{
	while (n-- > 0)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* Read what the peer has, without blocking. */
static void
peer_read(void)
{
	ssize_t n;

	while (!peer_eof && ngot < sizeof(got) &&
	       (n = recv(peer, got + ngot, sizeof(got) - ngot, MSG_DONTWAIT)) !=
	           -1) {
		if (n == 0)
			peer_eof = 1;
		ngot += (size_t)n;
	}
}

/* Count the answer lines read so far. */
static size_t
answers(void)
{
	size_t i, n = 0;

	for (i = 0; i < ngot; i++)
		n += got[i] == '\n';
	return n;
}

/* Run the loop and read until want answers (or EOF) came; 5 s at most. */
static void
read_until(size_t want, int eof)
{
	double end = ms() + 5000;

	do {
		turns(4);
		peer_read();
	} while ((eof ? !peer_eof : answers() < want) && ms() < end);
}

static void
say(const char *s)
{
	ck_assert_int_eq(send(peer, s, strlen(s), 0), (ssize_t)strlen(s));
}

/* A line in pieces: nothing is handled until its '\n'. */
START_TEST(test_partial_line_waits_for_its_end)
{
	say("{\"a\":");
	turns(8);
	ck_assert_uint_eq(seen.nlines, 0);
	say("1}");
	turns(8);
	ck_assert_uint_eq(seen.nlines, 0);
	say("\n");
	read_until(1, 0);
	ck_assert_uint_eq(seen.nlines, 1);
	ck_assert_str_eq(seen.lines[0], "{\"a\":1}");
	ck_assert_uint_eq(ngot, 8);
	ck_assert_int_eq(memcmp(got, "{\"a\":1}\n", 8), 0);
}
END_TEST

/*
 * A connection handed over when --max-connections (8) are open counts
 * against the cap as an accepted one: it gets the answers it was owed,
 * then "overloaded", then the end; its unhandled request is not handled.
 */
START_TEST(test_handed_over_past_the_cap_is_refused)
{
	struct handover_conn h = { -1, 0, 0, "{a}\n", 4, "{owed}\n", 7 };
	int others[7], sv[2], i;

	for (i = 0; i < 7; i++) { /* with the fixture's, 8 open */
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		ck_assert_int_eq(evutil_make_socket_nonblocking(sv[0]), 0);
		(void)conn_new(srv, sv[0], 0);
		others[i] = sv[1];
	}
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(evutil_make_socket_nonblocking(sv[0]), 0);
	h.fd = sv[0];
	close(peer);
	peer = sv[1];
	conn_adopt(srv, &h);
	read_until(0, 1);
	ck_assert_uint_eq(ngot, 7 + sizeof(SERVER_BUSY) - 1);
	ck_assert_int_eq(memcmp(got, "{owed}\n" SERVER_BUSY, ngot), 0);
	ck_assert_int_eq(peer_eof, 1);
	ck_assert_uint_eq(seen.nlines, 0);
	for (i = 0; i < 7; i++)
		close(others[i]);
}
END_TEST

/* Several lines in one read: each handled, in order, answered in order. */
START_TEST(test_several_lines_in_one_read)
{
	say("{1}\n{2}\r\n{3}\n");
	read_until(3, 0);
	ck_assert_uint_eq(seen.nlines, 3);
	ck_assert_str_eq(seen.lines[0], "{1}");
	ck_assert_str_eq(seen.lines[1], "{2}");
	ck_assert_str_eq(seen.lines[2], "{3}");
	ck_assert_uint_eq(ngot, 12);
	ck_assert_int_eq(memcmp(got, "{1}\n{2}\n{3}\n", 12), 0);
}
END_TEST

/*
 * Over --max-line (16 bytes), whole or arriving in pieces without its
 * '\n': answered line_too_long once, the rest dropped, the next line
 * handled. 16 bytes, and 16 plus '\r', fit.
 */
START_TEST(test_line_too_long_then_usable)
{
	char pieces[101];

	say("{23456789abcdef}\n");   /* 16: fits */
	say("{23456789abcdef}\r\n"); /* 16 and a '\r': fits */
	say("{23456789abcdefg}\n");  /* 17: too long, all in one */
	memset(pieces, 'y', 100);
	pieces[100] = '\0';
	say(pieces); /* one line of 300 bytes, in three reads */
	read_until(3, 0);
	say(pieces);
	turns(8);
	say(pieces);
	turns(8);
	say("\n{next}\n");
	read_until(5, 0);
	ck_assert_uint_eq(seen.too_long, 2);
	ck_assert_uint_eq(seen.limit, MAX_LINE);
	ck_assert_uint_eq(seen.nlines, 3);
	ck_assert_str_eq(seen.lines[0], "{23456789abcdef}");
	ck_assert_str_eq(seen.lines[1], "{23456789abcdef}");
	ck_assert_str_eq(seen.lines[2], "{next}");
	ck_assert_uint_eq(answers(), 5);
	ck_assert_int_eq(srv->mem.input_bytes, 0); /* nothing of it held */
}
END_TEST

/* A malformed request: an error object, and the connection lives on. */
START_TEST(test_error_object_and_connection_lives)
{
	say("nonsense\n{ok}\n");
	read_until(2, 0);
	ck_assert_uint_eq(ngot, sizeof(BAD) - 1 + 5);
	ck_assert_int_eq(memcmp(got, BAD, sizeof(BAD) - 1), 0);
	ck_assert_int_eq(memcmp(got + sizeof(BAD) - 1, "{ok}\n", 5), 0);
	ck_assert_uint_eq(server_connections(srv), 1);
	ck_assert_int_eq(peer_eof, 0);
}
END_TEST

/*
 * A client that sends and never reads: once more than half of
 * --max-output is queued, its requests are no longer read; when it reads
 * its answers, the rest are handled, none lost, in order.
 */
START_TEST(test_peer_not_reading_is_paused_then_resumed)
{
	int small = 4096, i;
	size_t handled;
	char req[200 * 9 + 1];

	ck_assert_int_eq(
	    setsockopt(conn->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)),
	    0);
	for (i = 0; i < 200; i++)
		memcpy(req + i * 9, "big 1000\n", 9);
	req[200 * 9] = '\0';
	say(req);
	turns(64);
	handled = seen.nlines;
	/* paused once 33 answers (over half) were queued, not yet resumed */
	ck_assert_uint_ge(handled, 33);
	ck_assert_uint_lt(handled, 200);
	ck_assert_int_eq(conn->paused, 1);
	ck_assert_uint_gt(conn_queued(conn), MAX_OUTPUT / 4);
	ck_assert_uint_le(conn_queued(conn), MAX_OUTPUT);
	turns(64); /* still not read: nothing more handled */
	ck_assert_uint_eq(seen.nlines, handled);
	read_until(200, 0);
	ck_assert_uint_eq(seen.nlines, 200);
	ck_assert_uint_eq(ngot, 200 * 1000);
	ck_assert_int_eq(conn->paused, 0);
	ck_assert_uint_eq(server_connections(srv), 1);
}
END_TEST

/* One answer past --max-output: the connection is closed, output dropped. */
START_TEST(test_answer_over_max_output_closes)
{
	say("{a}\nbig 70000\n{b}\n");
	read_until(0, 1);
	ck_assert_int_eq(peer_eof, 1);
	ck_assert_uint_eq(ngot, 0); /* queued with it, dropped with it */
	ck_assert_uint_eq(seen.nlines, 2);
	ck_assert_uint_eq(server_connections(srv), 0);
	ck_assert_int_eq(seen.closed, 1);
	ck_assert_int_eq(seen.freed, 1);
	ck_assert_uint_eq(server_memory(srv)->output_bytes, 0);
}
END_TEST

/*
 * The client goes away in the middle of its answers and of a waiting
 * check: the connection closes, its session is closed then freed, and
 * none of its output stays counted.
 */
START_TEST(test_peer_closes_mid_answer)
{
	int small = 4096;

	ck_assert_int_eq(
	    setsockopt(conn->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)),
	    0);
	say("wait\nbig 20000\n");
	turns(16);
	ck_assert_uint_gt(conn_queued(conn), 0); /* the socket is full */
	close(peer);
	peer = -1;
	turns(16);
	ck_assert_uint_eq(server_connections(srv), 0);
	ck_assert_int_eq(seen.closed, 1);
	ck_assert_int_eq(seen.freed, 1);
	ck_assert_uint_eq(server_memory(srv)->output_bytes, 0);
	ck_assert_uint_eq(server_memory(srv)->input_bytes, 0);
}
END_TEST

/* Half-close: the last line, even without '\n', is answered, then EOF. */
START_TEST(test_half_close_answers_then_closes)
{
	say("{1}\n{2}");
	ck_assert_int_eq(shutdown(peer, SHUT_WR), 0);
	read_until(0, 1);
	ck_assert_uint_eq(ngot, 8);
	ck_assert_int_eq(memcmp(got, "{1}\n{2}\n", 8), 0);
	ck_assert_uint_eq(server_connections(srv), 0);
}
END_TEST

/*
 * An answer is timed from its stamp's t0 into its kind's histogram and
 * the overall one; a line sent without a stamp (a feed event) is not.
 */
START_TEST(test_answers_timed_by_their_stamp)
{
	const struct reply_stamp st = { histo_now() - 2, REPLY_HISTORY };
	const struct histo *all = server_latency(srv),
	                   *op = server_latency_op(srv, REPLY_HISTORY);
	uint64_t nall = all->count, nop = op->count;

	conn->reply.ops->send(&conn->reply, NULL, "e\n", 2);
	ck_assert_uint_eq(all->count, nall);
	conn->reply.ops->send(&conn->reply, &st, "a\n", 2);
	ck_assert_uint_eq(all->count, nall + 1);
	ck_assert_uint_eq(op->count, nop + 1);
	ck_assert_uint_eq(server_latency_op(srv, REPLY_PING)->count, 0);
	ck_assert(op->sum >= 2 && op->sum < 3);
	read_until(2, 0);
	ck_assert_uint_eq(ngot, 4);
	ck_assert_int_eq(memcmp(got, "e\na\n", 4), 0);
}
END_TEST

/* A shared line (reply.h) and whether it was released. */
static int released;

static void
line_release(struct reply_line *l)
{
	(void)l;
	released++;
}

/*
 * A line shared by two connections: queued by reference on both, counted
 * once in the output of all of them (its bytes, while anyone holds it),
 * its reference dropped by each once written there or once the
 * connection goes; the last lets it go, and the total drops to nothing.
 */
START_TEST(test_shared_line_counted_once)
{
	static char text[40000];
	struct reply_line l = { text, sizeof(text), 1, line_release, 0 };
	struct conn *c2;
	int sv[2], small = 4096;
	size_t n2 = 0;
	ssize_t n;
	char buf[4096];

	memset(text, 's', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\n';
	released = 0;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(evutil_make_socket_nonblocking(sv[0]), 0);
	ck_assert_int_eq(
	    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	c2 = conn_new(srv, sv[0], 0);
	conn->reply.ops->share(&conn->reply, &l);
	c2->reply.ops->send(
	    &c2->reply, NULL, "abc\n", 4); /* copies around it */
	c2->reply.ops->share(&c2->reply, &l);
	c2->reply.ops->send(&c2->reply, NULL, "def\n", 4);
	ck_assert_uint_eq(l.refs, 3);
	ck_assert_uint_eq(conn_queued(conn), sizeof(text));
	ck_assert_uint_eq(conn_queued(c2), sizeof(text) + 8);
	ck_assert_uint_eq(server_memory(srv)->output_bytes, sizeof(text) + 8);
	/* the first client reads it all: the second still holds it */
	read_until(1, 0);
	ck_assert_uint_eq(ngot, sizeof(text));
	ck_assert_int_eq(memcmp(got, text, sizeof(text)), 0);
	ck_assert_uint_eq(l.refs, 2);
	ck_assert_uint_gt(conn_queued(c2), 0);
	/* the memory the line holds, once, while anyone holds it */
	ck_assert_uint_eq(server_memory(srv)->output_bytes,
	    sizeof(text) + (conn_queued(c2) > sizeof(text) + 4 ? 8 : 4));
	/* the second reads some, then goes: nothing stays counted or held */
	turns(4);
	while ((n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		n2 += (size_t)n;
	ck_assert_uint_gt(n2, 4);
	ck_assert_uint_gt(conn_queued(c2), 4);
	ck_assert_uint_eq(server_memory(srv)->output_bytes, sizeof(text) + 4);
	close(sv[1]);
	turns(16);
	ck_assert_uint_eq(server_connections(srv), 1);
	ck_assert_uint_eq(l.refs, 1);
	ck_assert_uint_eq(server_memory(srv)->output_bytes, 0);
	ck_assert_int_eq(released, 0);
	/* a closing connection takes no reference */
	conn_close(conn, "test");
	conn->reply.ops->share(&conn->reply, &l);
	ck_assert_uint_eq(l.refs, 1);
}
END_TEST

static Suite *
server_conn_suite(void)
{
	Suite *s = suite_create("server_conn");
	TCase *tc = tcase_create("io");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_partial_line_waits_for_its_end);
	tcase_add_test(tc, test_several_lines_in_one_read);
	tcase_add_test(tc, test_line_too_long_then_usable);
	tcase_add_test(tc, test_error_object_and_connection_lives);
	tcase_add_test(tc, test_peer_not_reading_is_paused_then_resumed);
	tcase_add_test(tc, test_answer_over_max_output_closes);
	tcase_add_test(tc, test_peer_closes_mid_answer);
	tcase_add_test(tc, test_half_close_answers_then_closes);
	tcase_add_test(tc, test_shared_line_counted_once);
	tcase_add_test(tc, test_answers_timed_by_their_stamp);
	tcase_add_test(tc, test_handed_over_past_the_cap_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(server_conn_suite, NULL, NULL);
