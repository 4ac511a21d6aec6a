/*
 * check_cfgerr.c: config-error mode's connections across the re-exec
 * (cfgerr.c, handover.c), on the real libevent loop over real sockets in
 * one process, as the re-exec keeps it: a request half read before the
 * hand-over is answered after it; a hand-over that cannot be named closes
 * the connections instead of leaving their sockets open and owned by no
 * one; connections taken over count against the connection cap as
 * accepted ones do. handover_pass_on() is wrapped (-Wl,--wrap) so that a
 * test can make it fail.
 *
 * The "session" cases run check_server_conn's rules with config-error
 * mode's sessions on the same server: a line is answered once its '\n'
 * comes, however it arrives; blank lines are not answered; an over-long
 * line is answered once with id null and the connection stays usable; a
 * client that lets answers pile up gets every one once it reads; after a
 * half-close everything sent is answered, then the end; a client past
 * the cap gets the one answer with id null, then the end.
 */
#include <config.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "base/handover.h"
#include "conn/cfgerr.h"
#include "test_main.h"

#define CAP 4096 /* cfgerr.c's MAX_CONNECTIONS */
#define ANSWER(id)                                                             \
	"{\"id\":" id ",\"ok\":false,\"error\":{\"code\":\"config\","          \
	"\"message\":\"robotsd's configuration is not in effect\"}}\n"

int __real_handover_pass_on(struct handover *);
int __wrap_handover_pass_on(struct handover *);

static int fail_pass_on; /* the wrapped handover_pass_on() fails */

/* handover_pass_on(), or its failure when a test asks for it. */
int
__wrap_handover_pass_on(struct handover *ho)
{
	return fail_pass_on ? -1 : __real_handover_pass_on(ho);
}

/*
 * A listening socket (an abstract address of its own: with CK_FORK=no,
 * as under valgrind, every test runs in one process) and its address in
 * *sun.
 */
static int
listener(struct sockaddr_un *sun)
{
	static int n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
	    "robotsd-check-cfgerr-%ld-%d", (long)getpid(), n++);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)sun, sizeof(*sun)), 0);
	ck_assert_int_eq(listen(fd, 16), 0);
	return fd;
}

/* A client connected to sun. */
static int
client(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(
	    connect(fd, (const struct sockaddr *)sun, sizeof(*sun)), 0);
	return fd;
}

/* Run what is ready on base, a few rounds, without waiting. */
static void
spin(struct event_base *base)
{
	int i;

	for (i = 0; i < 8; i++)
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
}

/*
 * What fd reads while base runs, NUL-terminated in buf; *eof: whether it
 * reached the end. Stops at the end or when a round brings nothing.
 */
static size_t
collect(struct event_base *base, int fd, char *buf, size_t size, int *eof)
{
	size_t got = 0;
	ssize_t r;
	int idle = 0;

	*eof = 0;
	while (got < size - 1 && idle < 50) {
		spin(base);
		r = recv(fd, buf + got, size - 1 - got, MSG_DONTWAIT);
		if (r == 0) {
			*eof = 1;
			break;
		}
		idle = r > 0 ? 0 : idle + 1;
		if (r > 0)
			got += (size_t)r;
	}
	buf[got] = '\0';
	return got;
}

/* How many descriptors this process has open. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n - 3; /* ".", "..", the directory's own */
}

/* A request read in part before the re-exec is answered after it. */
START_TEST(test_half_read_request_answered_after_hand_over)
{
	struct event_base *base = event_base_new();
	struct sockaddr_un sun;
	int lfd = listener(&sun), c = client(&sun), eof;
	struct cfgerr *ce = cfgerr_new(base, lfd);
	char buf[1024];

	unsetenv("ROBOTSD_HANDOVER");
	ck_assert_int_eq(send(c, "{\"id\":7}\n{\"id\"", 14, 0), 14);
	ck_assert_uint_eq(
	    collect(base, c, buf, sizeof(buf), &eof), strlen(ANSWER("7")));
	ck_assert_str_eq(buf, ANSWER("7"));
	cfgerr_hand_over(ce);
	ck_assert_ptr_nonnull(getenv("ROBOTSD_HANDOVER"));
	ce = cfgerr_new(base, lfd);
	cfgerr_take_over(ce);
	ck_assert_int_eq(send(c, ":8}\n", 4, 0), 4);
	ck_assert_int_eq(shutdown(c, SHUT_WR), 0);
	collect(base, c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("8"));
	ck_assert_int_eq(eof, 1);
	cfgerr_free(ce);
	event_base_free(base);
}
END_TEST

/*
 * A hand-over that cannot be named: its connections are closed (the
 * client reads the end at once) and no descriptor is left open.
 */
START_TEST(test_hand_over_not_named_closes_connections)
{
	struct event_base *base = event_base_new();
	struct sockaddr_un sun;
	int lfd = listener(&sun), c = client(&sun), eof, before;
	struct cfgerr *ce = cfgerr_new(base, lfd);
	char buf[1024];

	unsetenv("ROBOTSD_HANDOVER");
	ck_assert_int_eq(send(c, "{\"id\"", 5, 0), 5);
	ck_assert_uint_eq(collect(base, c, buf, sizeof(buf), &eof), 0);
	before = open_fds();
	fail_pass_on = 1;
	cfgerr_hand_over(ce);
	spin(base); /* libevent closes a freed connection's socket here */
	ck_assert_ptr_null(getenv("ROBOTSD_HANDOVER"));
	ck_assert_int_eq(open_fds(), before - 1); /* the connection's */
	ck_assert_int_eq(recv(c, buf, sizeof(buf), MSG_DONTWAIT), 0);
	event_base_free(base);
}
END_TEST

/* Record the connection fd in ho with in and out (NUL-terminated). */
static void
record(struct handover *ho, int fd, const char *in, const char *out)
{
	struct handover_conn h = { fd, 0, 0, in, strlen(in), out, strlen(out) };

	ck_assert_int_eq(handover_add(ho, &h), 0);
}

/*
 * CAP + 1 connections taken over: the first CAP are served, the one past
 * the cap gets the answers it was owed and the one answer of a refused
 * connection (id null; its unhandled request is not read), then the end.
 */
START_TEST(test_taken_over_connections_count_against_the_cap)
{
	static int cl[CAP + 1];
	struct rlimit rl = { 2 * CAP + 64, 2 * CAP + 64 };
	struct event_base *base = event_base_new();
	struct sockaddr_un sun;
	struct handover ho;
	struct cfgerr *ce;
	char buf[1024];
	int lfd = listener(&sun), sv[2], i, eof;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < 2 * CAP + 64) {
		printf("check_cfgerr: RLIMIT_NOFILE too low, cap not tried\n");
		return;
	}
	rl.rlim_cur = 2 * CAP + 64;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	unsetenv("ROBOTSD_HANDOVER");
	ck_assert_int_eq(handover_open(&ho), 0);
	for (i = 0; i <= CAP; i++) {
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		cl[i] = sv[0];
		record(&ho, sv[1], i == 0 ? "{\"id\":3}\n" : "",
		    i == CAP ? ANSWER("1") : "");
	}
	fail_pass_on = 0;
	ck_assert_int_eq(__real_handover_pass_on(&ho), 0);
	ce = cfgerr_new(base, lfd);
	cfgerr_take_over(ce);
	(void)send(cl[CAP], "{\"id\":2}\n", 9, MSG_NOSIGNAL);
	collect(base, cl[CAP], buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("1") ANSWER("null"));
	ck_assert_int_eq(eof, 1);
	collect(base, cl[0], buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("3"));
	ck_assert_int_eq(eof, 0);
	cfgerr_free(ce);
	event_base_free(base);
}
END_TEST

/* Config-error mode on a listener of its own, and one client of it. */
struct served {
	struct event_base *base;
	struct cfgerr *ce;
	int lfd, c;
	struct sockaddr_un sun;
};

static void
serve(struct served *sv)
{
	sv->base = event_base_new();
	ck_assert_ptr_nonnull(sv->base);
	sv->lfd = listener(&sv->sun);
	sv->c = client(&sv->sun);
	sv->ce = cfgerr_new(sv->base, sv->lfd);
	ck_assert_ptr_nonnull(sv->ce);
}

static void
unserve(struct served *sv)
{
	cfgerr_free(sv->ce);
	event_base_free(sv->base);
	close(sv->c);
	close(sv->lfd);
}

/* Send len bytes of p from sv's client, then run the loop. */
static void
put(struct served *sv, const char *p, size_t len)
{
	ck_assert_int_eq(send(sv->c, p, len, MSG_NOSIGNAL), (ssize_t)len);
	spin(sv->base);
}

/* A partial line is answered only once its '\n' comes. */
START_TEST(test_partial_line_waits_for_its_end)
{
	struct served sv;
	char buf[4096];
	int eof;

	serve(&sv);
	put(&sv, "{\"id\":1", 7);
	ck_assert_uint_eq(collect(sv.base, sv.c, buf, sizeof(buf), &eof), 0);
	put(&sv, "}\r\n", 3);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("1"));
	unserve(&sv);
}
END_TEST

/* Lines read together: each answered in order, blank ones not at all. */
START_TEST(test_several_lines_in_one_read)
{
	static const char in[] = "{\"id\":1}\n\n \t\r\n{\"id\":\"b\"} \n"
	                         "not json\n{\"op\":\"ping\",\"id\":3}\n";
	struct served sv;
	char buf[8192];
	int eof;

	serve(&sv);
	put(&sv, in, sizeof(in) - 1);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(
	    buf, ANSWER("1") ANSWER("\"b\"") ANSWER("null") ANSWER("3"));
	ck_assert_int_eq(eof, 0);
	unserve(&sv);
}
END_TEST

/*
 * Over 64 KiB without a '\n', and one line over it: each answered once,
 * with id null, and the next line is answered with its id.
 */
START_TEST(test_line_too_long_then_usable)
{
	static char big[65538];
	struct served sv;
	char buf[8192];
	int eof;

	memset(big, 'x', sizeof(big));
	serve(&sv);
	put(&sv, big, sizeof(big));
	put(&sv, big, 100);
	put(&sv, "\n{\"id\":4}\n", 11);
	big[sizeof(big) - 1] = '\n'; /* 65537 bytes and its '\n' */
	put(&sv, big, sizeof(big));
	put(&sv, "{\"id\":5}\n", 9);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(
	    buf, ANSWER("null") ANSWER("4") ANSWER("null") ANSWER("5"));
	unserve(&sv);
}
END_TEST

/*
 * A client that sends many lines and reads nothing for a while: once it
 * reads, it gets every answer, in order (reading it was paused past
 * 256 KiB of answers, and resumed).
 */
START_TEST(test_peer_not_reading_gets_every_answer)
{
	static char in[1000 * 16], want[1000 * 200], got[1000 * 200];
	struct served sv;
	size_t n = 0, w = 0, i;
	int eof;

	serve(&sv);
	for (i = 0; i < 1000; i++) {
		n += (size_t)snprintf(
		    in + n, sizeof(in) - n, "{\"id\":%zu}\n", i);
		w += (size_t)snprintf(want + w, sizeof(want) - w,
		    "{\"id\":%zu,\"ok\":false,\"error\":{\"code\":\"config\","
		    "\"message\":\"robotsd's configuration is not in "
		    "effect\"}}\n",
		    i);
	}
	put(&sv, in, n);
	ck_assert_int_eq(shutdown(sv.c, SHUT_WR), 0);
	ck_assert_uint_eq(collect(sv.base, sv.c, got, sizeof(got), &eof), w);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(eof, 1);
	unserve(&sv);
}
END_TEST

/* A half-close: every line sent is answered, the last without '\n'. */
START_TEST(test_half_close_answers_then_closes)
{
	struct served sv;
	char buf[4096];
	int eof;

	serve(&sv);
	put(&sv, "{\"id\":5}\n{\"id\":6}", 17);
	ck_assert_int_eq(shutdown(sv.c, SHUT_WR), 0);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("5") ANSWER("6"));
	ck_assert_int_eq(eof, 1);
	unserve(&sv);
}
END_TEST

/* The message set is what every answer and the refusal carry. */
START_TEST(test_message_set_is_answered)
{
	struct served sv;
	char buf[4096];
	int eof;

	serve(&sv);
	cfgerr_set_message(sv.ce, "x.conf:2: unknown option 'y'");
	put(&sv, "{\"id\":1}\n", 9);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf,
	    "{\"id\":1,\"ok\":false,\"error\":{\"code\":\"config\","
	    "\"message\":\"x.conf:2: unknown option 'y'\"}}\n");
	unserve(&sv);
}
END_TEST

/*
 * CAP clients connected: the one more gets the answer with id null and
 * the end, the others are served.
 */
START_TEST(test_client_past_the_cap_is_refused)
{
	static int cl[CAP + 1];
	/* Those the tests before left open count too (CK_FORK=no). */
	rlim_t need = (rlim_t)open_fds() + 2 * CAP + 64;
	struct rlimit rl;
	struct served sv;
	char buf[4096];
	int i, eof;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < need) {
		printf("check_cfgerr: RLIMIT_NOFILE too low, cap not tried\n");
		return;
	}
	if (rl.rlim_cur < need) {
		rl.rlim_cur = need;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	serve(&sv);
	cl[0] = sv.c;
	for (i = 1; i <= CAP; i++) {
		cl[i] = client(&sv.sun);
		spin(sv.base); /* accepted before the listen queue fills */
	}
	collect(sv.base, cl[CAP], buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("null"));
	ck_assert_int_eq(eof, 1);
	sv.c = cl[CAP - 1];
	put(&sv, "{\"id\":9}\n", 9);
	collect(sv.base, sv.c, buf, sizeof(buf), &eof);
	ck_assert_str_eq(buf, ANSWER("9"));
	for (i = 0; i < CAP; i++)
		if (cl[i] != sv.c)
			close(cl[i]);
	unserve(&sv);
}
END_TEST

static Suite *
cfgerr_suite(void)
{
	Suite *s = suite_create("cfgerr");
	TCase *tc = tcase_create("handover");
	TCase *ts = tcase_create("session");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_half_read_request_answered_after_hand_over);
	tcase_add_test(tc, test_hand_over_not_named_closes_connections);
	tcase_add_test(tc, test_taken_over_connections_count_against_the_cap);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ts, 60);
	tcase_add_test(ts, test_partial_line_waits_for_its_end);
	tcase_add_test(ts, test_several_lines_in_one_read);
	tcase_add_test(ts, test_line_too_long_then_usable);
	tcase_add_test(ts, test_peer_not_reading_gets_every_answer);
	tcase_add_test(ts, test_half_close_answers_then_closes);
	tcase_add_test(ts, test_message_set_is_answered);
	tcase_add_test(ts, test_client_past_the_cap_is_refused);
	suite_add_tcase(s, ts);
	return s;
}

TEST_PROGRAM(cfgerr_suite, NULL, NULL);
