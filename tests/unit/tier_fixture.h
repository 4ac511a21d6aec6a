/*
 * tier_fixture.h: redis-server processes and a bounded event loop driver
 * for check_tier_redis.c (tier_fixture.c).
 */
#ifndef ROBOTSD_TIER_FIXTURE_H
#define ROBOTSD_TIER_FIXTURE_H

#include <sys/types.h>

#include <check.h>
#include <hiredis/hiredis.h>

#define MAXSRV 2

struct redis {
	pid_t pid;
	char sock[128]; /* unix socket, or "" for TCP */
	int port;
	char url[160]; /* the tier's URL of a Unix socket server */
};

extern char dir[64];             /* private directory of the sockets */
extern struct redis srv[MAXSRV]; /* set up by setup(), not started */
extern struct event_base *base;  /* the loop the tier runs on */

const char *redis_bin(void);
int free_port(void);
redisContext *sync_client(const struct redis *); /* NULL: cannot connect */
void redis_start(int i, const char *password);   /* waits until it answers */
void redis_kill(int i);                          /* SIGKILL, socket removed */
redisReply *redis_cmd(int i, const char *fmt, ...); /* blocking, caller's */
long long redis_int(int i, const char *fmt, const char *key);
void setup(void);
void teardown(void);
double now_ms(void); /* monotonic */
/* Run the loop until *n >= want or ms pass; 1 if reached. */
int drive_until(const int *n, int want, long ms);
void drive_for(long ms); /* run the loop for ms */
/*
 * The main of a test program on Redis: skipped (77) without redis-server,
 * else the suite make() returns, run; the exit status.
 */
int fixture_setup(void);

#endif /* ROBOTSD_TIER_FIXTURE_H */
