/*
 * fetch_spare.c: a new loop base for the fetch thread that never costs
 * robotsd its life when descriptors run out. libevent's event_base_new()
 * takes an epoll descriptor and a pipe (for its signal handling) and ends
 * the process (exit 1, "evsig_init_: socketpair") when it can have no
 * pipe: clients holding every descriptor while the idle fetch thread
 * renewed its loop ended robotsd. Here the thread keeps a spare pipe,
 * made while descriptors are there, and the pipe2() below hands it to
 * libevent on that thread, during that call, when the system has no pipe
 * to give (EMFILE, ENFILE). No other descriptor is asked for: the base is
 * made with the old one's method only (epoll), whose descriptor, if none
 * is left, makes event_base_new_with_config() fail, and the old loop goes
 * on. Any other call of pipe2() in the process is the system's own.
 */
#include <config.h>

#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "fetch/fetch_int.h"

/* The spare pipe that pipe2() may hand out on this thread, or NULL. */
static _Thread_local int *fetch_spare_offer;

/* Give fd the flags pipe2() was asked for; 0, or -1 with errno. */
static int
fetch_spare_flags(int fd, int flags)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1 || fcntl(fd, F_SETFL,
	                    (flags & O_NONBLOCK) ? fl | O_NONBLOCK
	                                         : fl & ~O_NONBLOCK) == -1)
		return -1;
	return fcntl(fd, F_SETFD, (flags & O_CLOEXEC) ? FD_CLOEXEC : 0);
}

/*
 * The system's pipe2(); on the fetch thread renewing its loop, when that
 * fails for want of a descriptor, the spare pipe, once.
 */
int
pipe2(int fd[2], int flags)
{
	int *sp = fetch_spare_offer;
	int e;

	if (syscall(SYS_pipe2, fd, flags) == 0)
		return 0;
	e = errno;
	if (sp == NULL || sp[0] == -1 || (e != EMFILE && e != ENFILE))
		return -1;
	if (fetch_spare_flags(sp[0], flags) == -1 ||
	    fetch_spare_flags(sp[1], flags) == -1) {
		errno = e;
		return -1;
	}
	fd[0] = sp[0];
	fd[1] = sp[1];
	sp[0] = sp[1] = -1;
	return 0;
}

int
fetch_spare_make(int spare[2])
{
	if (spare[0] != -1)
		return 0;
	if (syscall(SYS_pipe2, spare, O_CLOEXEC) == 0)
		return 0;
	spare[0] = spare[1] = -1;
	return -1;
}

void
fetch_spare_close(int spare[2])
{
	if (spare[0] != -1) {
		(void)close(spare[0]);
		(void)close(spare[1]);
	}
	spare[0] = spare[1] = -1;
}

/* Only method: every other one libevent has is avoided. */
static struct event_config *
fetch_spare_config(const char *method)
{
	struct event_config *cfg = event_config_new();
	const char **m = event_get_supported_methods();

	if (cfg == NULL)
		return NULL;
	for (; m != NULL && *m != NULL; m++)
		if (strcmp(*m, method) != 0 &&
		    event_config_avoid_method(cfg, *m) == -1) {
			event_config_free(cfg);
			return NULL;
		}
	return cfg;
}

struct event_base *
fetch_spare_base(int spare[2], const char *method, int *used)
{
	struct event_config *cfg;
	struct event_base *nb;
	int e;

	*used = 0;
	if (fetch_spare_make(spare) == -1)
		return NULL;
	if ((cfg = fetch_spare_config(method)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	errno = 0;
	fetch_spare_offer = spare;
	nb = event_base_new_with_config(cfg);
	e = errno != 0 ? errno : ENOMEM;
	fetch_spare_offer = NULL;
	*used = spare[0] == -1;
	event_config_free(cfg);
	errno = e;
	return nb;
}
