/*
 * tier_fixture.c: for check_tier_redis: real redis-server processes, each
 * started on a private Unix socket (or a free TCP port) without
 * persistence and killed with the test, blocking clients to look at what
 * the tier wrote, and a bounded driver of the event loop.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "base/log.h"
#include "tier_fixture.h"

char dir[64];
struct redis srv[MAXSRV];
struct event_base *base;

/* --- redis-server ----------------------------------------------------------
 */

const char *
redis_bin(void)
{
	return access("/usr/bin/redis-server", X_OK) == 0
	           ? "/usr/bin/redis-server"
	           : "redis-server";
}

int
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* A blocking client to look at what the tier wrote. */
redisContext *
sync_client(const struct redis *r)
{
	struct timeval tv = { 2, 0 };
	redisContext *c =
	    r->sock[0] != '\0'
	        ? redisConnectUnixWithTimeout(r->sock, tv)
	        : redisConnectWithTimeout("127.0.0.1", r->port, tv);

	return c != NULL && c->err == 0 ? c : (redisFree(c), NULL);
}

void
redis_start(int i, const char *password)
{
	struct redis *r = &srv[i];
	char port[16], *argv[16];
	redisContext *c;
	int n = 0, tries;

	snprintf(port, sizeof(port), "%d", r->sock[0] != '\0' ? 0 : r->port);
	argv[n++] = (char *)"redis-server";
	argv[n++] = (char *)"--port";
	argv[n++] = port;
	argv[n++] = (char *)"--bind";
	argv[n++] = (char *)"127.0.0.1";
	argv[n++] = (char *)"--save";
	argv[n++] = (char *)"";
	argv[n++] = (char *)"--appendonly";
	argv[n++] = (char *)"no";
	if (r->sock[0] != '\0') {
		argv[n++] = (char *)"--unixsocket";
		argv[n++] = r->sock;
	}
	if (password != NULL) {
		argv[n++] = (char *)"--requirepass";
		argv[n++] = (char *)password;
	}
	argv[n] = NULL;
	ck_assert_int_ne(r->pid = fork(), -1);
	if (r->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		freopen("/dev/null", "w", stdout);
		execv(redis_bin(), argv);
		_exit(127);
	}
	for (tries = 0; tries < 500; tries++) { /* up to 5 s to listen */
		if ((c = sync_client(r)) != NULL) {
			redisFree(c);
			return;
		}
		usleep(10000);
	}
	ck_abort_msg("redis-server did not start");
}

void
redis_kill(int i)
{
	if (srv[i].pid > 0) {
		kill(srv[i].pid, SIGKILL);
		waitpid(srv[i].pid, NULL, 0);
		srv[i].pid = 0;
	}
	if (srv[i].sock[0] != '\0')
		unlink(srv[i].sock);
}

/* Run a command on server i, blocking; the reply is the caller's. */
redisReply *
redis_cmd(int i, const char *fmt, ...)
{
	redisContext *c = sync_client(&srv[i]);
	redisReply *r;
	va_list ap;

	ck_assert_ptr_nonnull(c);
	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	redisFree(c);
	ck_assert_ptr_nonnull(r);
	return r;
}

long long
redis_int(int i, const char *fmt, const char *key)
{
	redisReply *r = redis_cmd(i, fmt, key);
	long long v;

	ck_assert_int_eq(r->type, REDIS_REPLY_INTEGER);
	v = r->integer;
	freeReplyObject(r);
	return v;
}

void
setup(void)
{
	int i;

	snprintf(dir, sizeof(dir), "/tmp/check_tier.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < MAXSRV; i++) {
		memset(&srv[i], 0, sizeof(srv[i]));
		snprintf(
		    srv[i].sock, sizeof(srv[i].sock), "%s/r%d.sock", dir, i);
		snprintf(srv[i].url, sizeof(srv[i].url), "unix://%s/r%d.sock",
		    dir, i);
	}
	ck_assert_ptr_nonnull(base = event_base_new());
}

void
teardown(void)
{
	int i;

	for (i = 0; i < MAXSRV; i++)
		redis_kill(i);
	rmdir(dir);
	event_base_free(base);
}

/* --- driving the loop -------------------------------------------------------
 */

double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
}

/* Run the loop until *n >= want or ms pass; 1 if reached. */
int
drive_until(const int *n, int want, long ms)
{
	struct timeval tv = { 0, 5000 };
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	double end = now_ms() + ms;

	event_add(tick, &tv); /* wakes the loop to look at the clock */
	while (*n < want && now_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
	return *n >= want;
}

/* Run the loop for ms (to see that nothing more happens). */
void
drive_for(long ms)
{
	int never = 0;

	drive_until(&never, 1, ms);
}

/* Call and wait for its one callback (bounded by 5 s). */

int
fixture_setup(void)
{
	if (access(redis_bin(), X_OK) != 0 && system("command -v redis-server "
	                                             ">/dev/null") != 0) {
		fprintf(stderr, "redis-server not found: skipped\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN); /* as robotsd does */
	log_set_level(getenv("TIER_LOG") != NULL ? LOG_DEBUG : LOG_ERR);
	return 0;
}
