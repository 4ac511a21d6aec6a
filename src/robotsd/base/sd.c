/*
 * sd.c: systemd integration. Owns nothing but the calls to libsystemd:
 * readiness, reload, stop and watchdog notifications (sd_notify(3)) and the
 * sockets passed by socket activation (sd_listen_fds(3)), which must be the
 * one listening Unix stream socket robotsd serves and, optionally, its admin
 * socket, named "admin" (FileDescriptorName=admin). Built without libsystemd
 * (no HAVE_SYSTEMD), notifications do nothing and there is no passed socket.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "base/sd.h"
#include "base/xmalloc.h"

/* 1 when the environment shows that systemd started us. */
int
sysd_detected(void)
{
	return getenv("NOTIFY_SOCKET") != NULL ||
	       getenv("LISTEN_FDS") != NULL || getenv("JOURNAL_STREAM") != NULL;
}

#ifdef HAVE_SYSTEMD

/* Make fd non-blocking and close-on-exec; -1 on error. */
static int
sysd_set_flags(int fd)
{
	int fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -1;
	if ((fl = fcntl(fd, F_GETFD)) == -1 ||
	    fcntl(fd, F_SETFD, fl | FD_CLOEXEC) == -1)
		return -1;
	return 0;
}

/* The path fd is bound to ("@name" when abstract) into path. */
static void
sysd_sock_path(int fd, char *path, size_t pathsz)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	size_t n;

	memset(&sun, 0, sizeof(sun));
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path)) {
		snprintf(path, pathsz, "(unnamed)");
		return;
	}
	n = len - offsetof(struct sockaddr_un, sun_path);
	if (sun.sun_path[0] == '\0')
		snprintf(path, pathsz, "@%.*s", (int)(n - 1), sun.sun_path + 1);
	else
		snprintf(path, pathsz, "%.*s", (int)strnlen(sun.sun_path, n),
		    sun.sun_path);
}

/* The admin socket passed beside the main one, or -1; how many were. */
static int sysd_admin = -1;
static int sysd_nfds;

/* Is fd a listening Unix stream socket? 0, or -1 with *cause. */
static int
sysd_check_unix(int fd, char **cause)
{
	if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
		xasprintf(cause,
		    "socket activation: the passed socket is %s; "
		    "robotsd serves only a listening Unix stream "
		    "socket (ListenStream=/path)",
		    sd_is_socket_inet(fd, 0, 0, -1, 0) > 0
		        ? "a TCP/IP socket"
		        : "not a listening Unix stream socket");
		return -1;
	}
	if (sysd_set_flags(fd) == -1) {
		xasprintf(
		    cause, "socket activation: fcntl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Of the n passed sockets, named names: the main one (returned) and the
 * one named "admin" (FileDescriptorName=admin) in sysd_admin. -1 with
 * *cause when they are not one main socket and at most one admin socket.
 */
static int
sysd_pick(int n, char **names, char **cause)
{
	int i, fd, main_fd = -1;

	for (i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		if (sysd_check_unix(fd, cause) == -1)
			return -1;
		if (names != NULL && names[i] != NULL &&
		    strcmp(names[i], SYSD_ADMIN_NAME) == 0 && sysd_admin == -1)
			sysd_admin = fd;
		else if (main_fd == -1)
			main_fd = fd;
		else {
			xasprintf(cause,
			    "socket activation: %d sockets passed; robotsd "
			    "serves exactly one Unix stream socket, and an "
			    "admin socket named " SYSD_ADMIN_NAME
			    " (FileDescriptorName=" SYSD_ADMIN_NAME ")",
			    n);
			return -1;
		}
	}
	if (main_fd == -1)
		xasprintf(cause,
		    "socket activation: only the admin socket "
		    "was passed; robotsd needs its own socket too");
	return main_fd;
}

/* The passed socket; see sd.h. */
int
sysd_listen_fd(char *path, size_t pathsz, char **cause)
{
	char **names = NULL;
	int i, n, fd;

	*cause = NULL;
	sysd_admin = -1;
	sysd_nfds = 0;
	if ((n = sd_listen_fds_with_names(0, &names)) == 0)
		return -1;
	if (n < 0) {
		xasprintf(
		    cause, "socket activation: LISTEN_FDS: %s", strerror(-n));
		return -1;
	}
	fd = sysd_pick(n, names, cause);
	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	if (fd == -1) {
		sysd_admin = -1;
		return -1;
	}
	sysd_nfds = n;
	sysd_sock_path(fd, path, pathsz);
	return fd;
}

/* The admin socket passed with the main one; see sd.h. */
int
sysd_admin_fd(char *path, size_t pathsz)
{
	if (sysd_admin != -1)
		sysd_sock_path(sysd_admin, path, pathsz);
	return sysd_admin;
}

/* Pass fd on to the program execv()'d next; see sd.h. */
int
sysd_listen_fd_pass_on(int fd)
{
	char pid[32], nfds[16];
	int fl, i;

	if (fd < SD_LISTEN_FDS_START || sysd_nfds < 1 ||
	    fd >= SD_LISTEN_FDS_START + sysd_nfds)
		return -1;
	/* Every passed socket, the admin socket too, with LISTEN_FDNAMES. */
	for (i = 0; i < sysd_nfds; i++)
		if ((fl = fcntl(SD_LISTEN_FDS_START + i, F_GETFD)) == -1 ||
		    fcntl(SD_LISTEN_FDS_START + i, F_SETFD, fl & ~FD_CLOEXEC) ==
		        -1)
			return -1;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(nfds, sizeof(nfds), "%d", sysd_nfds);
	if (setenv("LISTEN_FDS", nfds, 1) == -1 ||
	    setenv("LISTEN_PID", pid, 1) == -1)
		return -1;
	return 0;
}

/* The watchdog timer: one WATCHDOG=1 per tick of the loop. */
static void
sysd_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/* The watchdog timer, if the service manager asks for pings; see sd.h. */
struct event *
sysd_watchdog_start(struct event_base *base, unsigned long long *usec)
{
	uint64_t wd = 0;
	struct event *ev;
	struct timeval tv;

	*usec = 0;
	if (sd_watchdog_enabled(0, &wd) <= 0 || wd == 0)
		return NULL;
	wd /= 2;
	tv.tv_sec = (time_t)(wd / 1000000);
	tv.tv_usec = (suseconds_t)(wd % 1000000);
	if ((ev = event_new(base, -1, EV_PERSIST, sysd_watchdog_cb, NULL)) ==
	        NULL ||
	    event_add(ev, &tv) == -1) {
		if (ev != NULL)
			event_free(ev);
		return NULL;
	}
	*usec = wd;
	sd_notify(0, "WATCHDOG=1");
	return ev;
}

/* Tell systemd that start-up (or a reload) is complete. */
void
sysd_ready(void)
{
	sd_notify(0, "READY=1");
}

/* Tell systemd that a reload has begun (with the time, for notify-reload). */
void
sysd_reloading(void)
{
	struct timespec ts;
	unsigned long long usec = 0;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		usec = (unsigned long long)ts.tv_sec * 1000000ULL +
		       (unsigned long long)ts.tv_nsec / 1000ULL;
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", usec);
}

/* Tell systemd that we are shutting down. */
void
sysd_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

/* Set the one-line status that "systemctl status" shows. */
void
sysd_status(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", buf);
}

#else /* !HAVE_SYSTEMD */

/* No socket activation without libsystemd. */
int
sysd_listen_fd(char *path, size_t pathsz, char **cause)
{
	(void)path;
	(void)pathsz;
	*cause = NULL;
	return -1;
}

/* No admin socket without libsystemd. */
int
sysd_admin_fd(char *path, size_t pathsz)
{
	(void)path;
	(void)pathsz;
	return -1;
}

/* Nothing was passed without libsystemd. */
int
sysd_listen_fd_pass_on(int fd)
{
	(void)fd;
	return -1;
}

/* No watchdog without libsystemd. */
struct event *
sysd_watchdog_start(struct event_base *base, unsigned long long *usec)
{
	(void)base;
	*usec = 0;
	return NULL;
}

/* No-op without libsystemd. */
void
sysd_ready(void)
{
}

/* No-op without libsystemd. */
void
sysd_reloading(void)
{
}

/* No-op without libsystemd. */
void
sysd_stopping(void)
{
}

/* No-op without libsystemd. */
void
sysd_status(const char *fmt, ...)
{
	(void)fmt;
}

#endif /* HAVE_SYSTEMD */

/* Stop the watchdog timer (NULL is fine). */
void
sysd_watchdog_stop(struct event *ev)
{
	if (ev != NULL)
		event_free(ev);
}
