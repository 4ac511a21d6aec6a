/*
 * handover.c: client connections carried across execv() (handover.h).
 * The memfd holds, per connection, a record (magic, fd, flags, lengths)
 * followed by its input and output bytes. Everything the new image reads
 * is checked: the variable's pid must be ours, the file a regular one,
 * each record whole and within bounds, each fd above stderr, inheritable
 * (what the old image made it; adopting makes it close-on-exec, so a fd
 * named twice is adopted once) and a connected, non-listening AF_UNIX
 * stream socket. A record that fails is skipped, its fd left alone; a
 * file that stops making sense ends the hand-over there.
 */
#include <config.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/handover.h"
#include "base/log.h"
#include "base/xmalloc.h"

#define HANDOVER_ENV "ROBOTSD_HANDOVER"
#define HANDOVER_MAGIC 0x52484f31u /* "RHO1" */
#define HANDOVER_MAX_CONNS 65536

enum { HO_SKIPPING = 1, HO_CLOSING = 2 };

struct handover_rec {
	uint32_t magic;
	int32_t fd;
	uint32_t flags;
	uint32_t inlen;
	uint32_t outlen;
};

/* Write all of p at ho's offset; -1 on error. */
static int
handover_write(struct handover *ho, const void *p, size_t n)
{
	const char *s = p;
	ssize_t w;

	while (n > 0) {
		if ((w = pwrite(ho->fd, s, n, ho->off)) <= 0) {
			if (w == -1 && errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
		ho->off += w;
	}
	return 0;
}

/* Start a hand-over; see handover.h. */
int
handover_open(struct handover *ho)
{
	ho->off = 0;
	ho->fd = memfd_create("robotsd-handover", MFD_CLOEXEC);
	return ho->fd == -1 ? -1 : 0;
}

/* Record one connection; see handover.h. */
int
handover_add(struct handover *ho, const struct handover_conn *h)
{
	struct handover_rec r = { HANDOVER_MAGIC, h->fd,
		(h->skipping ? HO_SKIPPING : 0) | (h->closing ? HO_CLOSING : 0),
		(uint32_t)h->inlen, (uint32_t)h->outlen };
	off_t start = ho->off;
	int fl;

	if (h->fd < 0 || h->inlen > HANDOVER_MAX_IN ||
	    h->outlen > HANDOVER_MAX_OUT || (fl = fcntl(h->fd, F_GETFD)) == -1)
		return -1;
	if (handover_write(ho, &r, sizeof(r)) == -1 ||
	    handover_write(ho, h->in, h->inlen) == -1 ||
	    handover_write(ho, h->out, h->outlen) == -1 ||
	    fcntl(h->fd, F_SETFD, fl & ~FD_CLOEXEC) == -1) {
		ho->off = start;
		(void)!ftruncate(ho->fd, start);
		return -1;
	}
	return 0;
}

/* Name the memfd in the environment; see handover.h. */
int
handover_pass_on(struct handover *ho)
{
	char v[64];
	int fl;

	snprintf(v, sizeof(v), "%ld:%d", (long)getpid(), ho->fd);
	if ((fl = fcntl(ho->fd, F_GETFD)) == -1 ||
	    fcntl(ho->fd, F_SETFD, fl & ~FD_CLOEXEC) == -1 ||
	    setenv(HANDOVER_ENV, v, 1) == -1)
		return -1;
	return 0;
}

/* A decimal in [0, INT_MAX] that is all of s up to end; -1 if not. */
static long
handover_num(const char *s, const char *end)
{
	long v = 0;

	if (s == end || end - s > 10)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v <= INT_MAX ? v : -1;
}

/* The memfd $ROBOTSD_HANDOVER names for this process, or -1. */
static int
handover_env_fd(void)
{
	const char *v = getenv(HANDOVER_ENV), *colon;
	struct stat st;
	long pid, fd;

	if (v == NULL)
		return -1;
	if ((colon = strchr(v, ':')) == NULL ||
	    (pid = handover_num(v, colon)) != (long)getpid() ||
	    (fd = handover_num(colon + 1, colon + strlen(colon))) <= 2 ||
	    fstat((int)fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) == -1) {
		log_event(LOG_WARNING, "handover_ignored",
		    "note=\"$" HANDOVER_ENV " names no hand-over for this "
		    "process\"");
		return -1;
	}
	return (int)fd;
}

/* Is fd a handed-over client: see the top of the file. */
static int
handover_sock_ok(int fd, int memfd)
{
	struct sockaddr_un sun;
	socklen_t len;
	int v, fl;

	if (fd <= 2 || fd == memfd || (fl = fcntl(fd, F_GETFD)) == -1 ||
	    (fl & FD_CLOEXEC))
		return 0;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    v != AF_UNIX)
		return 0;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM)
		return 0;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 || v != 0)
		return 0;
	len = sizeof(sun);
	if (getpeername(fd, (struct sockaddr *)&sun, &len) == -1)
		return 0;
	if (fcntl(fd, F_SETFD, fl | FD_CLOEXEC) == -1 ||
	    (fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return 0;
	return 1;
}

/* Read n bytes at *off into p (n may be 0); -1 if the file is short. */
static int
handover_read(int fd, off_t *off, void *p, size_t n)
{
	ssize_t r;
	size_t got = 0;

	while (got < n) {
		r = pread(fd, (char *)p + got, n - got, *off + (off_t)got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	*off += (off_t)n;
	return 0;
}

/* Adopt the handed-over connections; see handover.h. */
size_t
handover_take(void (*adopt)(void *, const struct handover_conn *), void *arg)
{
	struct handover_rec r;
	struct handover_conn h;
	char *in = NULL, *out = NULL;
	off_t off = 0;
	size_t n = 0, i;
	int memfd = handover_env_fd();

	(void)unsetenv(HANDOVER_ENV);
	if (memfd == -1)
		return 0;
	for (i = 0; i < HANDOVER_MAX_CONNS; i++) {
		if (handover_read(memfd, &off, &r, sizeof(r)) == -1 ||
		    r.magic != HANDOVER_MAGIC || r.inlen > HANDOVER_MAX_IN ||
		    r.outlen > HANDOVER_MAX_OUT)
			break;
		in = xreallocarray(in, r.inlen + 1, 1);
		out = xreallocarray(out, r.outlen + 1, 1);
		if (handover_read(memfd, &off, in, r.inlen) == -1 ||
		    handover_read(memfd, &off, out, r.outlen) == -1)
			break;
		if (!handover_sock_ok(r.fd, memfd)) {
			log_event(LOG_WARNING, "handover_skipped",
			    "fd=%ld note=\"not a connected Unix stream "
			    "socket handed over\"",
			    (long)r.fd);
			continue;
		}
		h = (struct handover_conn){ r.fd, (r.flags & HO_SKIPPING) != 0,
			(r.flags & HO_CLOSING) != 0, in, r.inlen, out,
			r.outlen };
		adopt(arg, &h);
		n++;
	}
	free(in);
	free(out);
	close(memfd);
	log_event(LOG_INFO, "handover", "connections=%zu", n);
	return n;
}
