/*
 * sd.h: systemd integration. Readiness, reload and stop notifications
 * (sd_notify) and socket activation (LISTEN_FDS). Built without libsystemd,
 * every call is a harmless no-op and sysd_listen_fd() returns -1.
 */
#ifndef ROBOTSD_SD_H
#define ROBOTSD_SD_H

/* 1 when started by systemd (NOTIFY_SOCKET, LISTEN_FDS or JOURNAL_STREAM). */
int sysd_detected(void);
#include <stddef.h>

struct event;
struct event_base;

/*
 * The listening Unix stream socket passed by socket activation, with the
 * path it is bound to in path; -1 with *cause NULL when none was passed.
 * Anything but exactly one listening Unix stream socket, plus at most one
 * named SYSD_ADMIN_NAME (sysd_admin_fd()), is refused (a TCP socket, two
 * unnamed sockets): -1 and an allocated *cause. The fd is non-blocking
 * and close-on-exec on return.
 */
int sysd_listen_fd(char *path, size_t pathsz, char **cause);
/* The name (FileDescriptorName=) that marks the passed admin socket. */
#define SYSD_ADMIN_NAME "admin"
/*
 * The listening Unix stream socket named SYSD_ADMIN_NAME that the last
 * sysd_listen_fd() found beside the main one, with its path in path; every
 * connection on it may run admin ops. -1 when none was passed.
 */
int sysd_admin_fd(char *path, size_t pathsz);
/*
 * Keep fd, the socket sysd_listen_fd() returned, and the admin socket open
 * across execv() and set LISTEN_FDS and LISTEN_PID (LISTEN_FDNAMES stays) so
 * that the program executed next, in this process, finds it as its passed
 * socket; -1 on failure.
 */
int sysd_listen_fd_pass_on(int fd);
/*
 * When the service manager asks for keep-alive pings (WatchdogSec=, i.e.
 * $WATCHDOG_USEC), a timer on base that sends WATCHDOG=1 every half
 * interval (*usec), so that a loop that stops turning is caught; else NULL.
 */
struct event *sysd_watchdog_start(
    struct event_base *base, unsigned long long *usec);
void sysd_watchdog_stop(struct event *); /* NULL is fine */
void sysd_ready(void);
void sysd_reloading(void);
void sysd_stopping(void);
/* A one-line status for "systemctl status" (printf format). */
void sysd_status(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif /* ROBOTSD_SD_H */
