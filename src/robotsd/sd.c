/*
 * sd.c: systemd integration. Owns nothing but the calls to libsystemd:
 * readiness, reload and stop notifications (sd_notify(3)) and the socket
 * passed by socket activation (sd_listen_fds(3)). Built without libsystemd
 * (no HAVE_SYSTEMD), notifications do nothing and there is no passed socket.
 */
#include <config.h>

#include <sys/socket.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "sd.h"

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

/* The first passed fd that is a listening Unix stream socket, or -1. */
int
sysd_listen_fd(void)
{
	int n, fd;

	if ((n = sd_listen_fds(0)) <= 0)
		return -1;
	for (fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			continue;
		if (sysd_set_flags(fd) == -1)
			return -1;
		return fd;
	}
	return -1;
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
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", buf);
}

#else /* !HAVE_SYSTEMD */

/* No socket activation without libsystemd. */
int
sysd_listen_fd(void)
{
	return -1;
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
