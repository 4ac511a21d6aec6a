/*
 * check_cfgerr.c: config-error mode's connections across the re-exec
 * (cfgerr.c, handover.c), on the real libevent loop over real sockets in
 * one process, as the re-exec keeps it: a request half read before the
 * hand-over is answered after it; a hand-over that cannot be named closes
 * the connections instead of leaving their sockets open and owned by no
 * one; connections taken over count against the connection cap as
 * accepted ones do. handover_pass_on() is wrapped (-Wl,--wrap) so that a
 * test can make it fail.
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

static Suite *
cfgerr_suite(void)
{
	Suite *s = suite_create("cfgerr");
	TCase *tc = tcase_create("handover");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_half_read_request_answered_after_hand_over);
	tcase_add_test(tc, test_hand_over_not_named_closes_connections);
	tcase_add_test(tc, test_taken_over_connections_count_against_the_cap);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(cfgerr_suite, NULL, NULL);
