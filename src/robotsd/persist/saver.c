/*
 * saver.c: state file saves in a child process. fork() gives the child a
 * snapshot of the cache; it writes the file (state_write) and exits while
 * the loop goes on answering. The parent bounds every save: one still
 * running at its deadline is killed and its temporary file removed, so
 * neither a slow disk nor a huge cache stalls the loop or hangs shutdown.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "persist/saver.h"
#include "persist/state.h"
#include "base/xmalloc.h"

/* How often saver_wait() looks whether the child is done. */
#define SAVER_POLL_NSEC 10000000L

struct saver {
	pid_t pid;       /* the child, or -1 */
	char *tmp;       /* its temporary file */
	char *path;      /* the state file it replaces */
	double deadline; /* clock_monotonic() */
};

struct saver *
saver_new(void)
{
	struct saver *sv = xcalloc(1, sizeof(*sv));

	sv->pid = -1;
	return sv;
}

/* Forget the finished child. */
static void
saver_clear(struct saver *sv)
{
	sv->pid = -1;
	free(sv->tmp);
	free(sv->path);
	sv->tmp = sv->path = NULL;
}

/* Kill the child, reap it and remove its temporary file. */
static void
saver_kill(struct saver *sv, const char *why)
{
	char kv[LOG_KV_BUF], kv2[LOG_KV_BUF];

	if (sv->pid == -1)
		return;
	kill(sv->pid, SIGKILL);
	while (waitpid(sv->pid, NULL, 0) == -1 && errno == EINTR)
		;
	if (unlink(sv->tmp) == 0)
		log_event(LOG_WARNING, "state_save_failed", "file=%s error=%s",
		    log_kvs(sv->path, kv, sizeof(kv)),
		    log_kvs(why, kv2, sizeof(kv2)));
	saver_clear(sv);
}

void
saver_free(struct saver *sv)
{
	if (sv == NULL)
		return;
	saver_kill(sv, "robotsd stopped");
	free(sv);
}

/* Close every descriptor but stdin, stdout, stderr and keep. */
static void
saver_close_fds(int keep)
{
	struct rlimit rl;
	int i, max;

	if (keep > 3)
		(void)close_range(3, (unsigned)keep - 1, 0);
	if (close_range((unsigned)keep + 1, ~0U, 0) == 0)
		return;
	/* No close_range (a kernel before 5.9): one by one. */
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
	          ? (int)rl.rlim_cur
	          : 65536;
	for (i = 3; i < max; i++)
		if (i != keep)
			(void)close(i);
}

/* In the child: write the file, log the outcome, exit. */
static void
saver_child(const struct state_caches *cs, int fd, const char *tmp,
    const char *path, double timeout, pid_t parent)
{
	char *cause = NULL, kv[LOG_KV_BUF], more[32] = "";
	struct state_counts got;

	/* Never outlive robotsd (a SIGKILL leaves no one to kill us). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(1);
	/* Hold nothing of robotsd's: the listening socket above all. */
	closelog(); /* syslog reopens its own socket if it logs */
	saver_close_fds(fd);
	/* The parent's signal events must not see the service's signals. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	if (state_write(cs, fd, tmp, path, timeout, &got, &cause) == -1) {
		log_event(LOG_WARNING, "state_save_failed", "error=%s",
		    log_kvs(cause, kv, sizeof(kv)));
		_exit(1);
	}
	if (cs->tdm != NULL)
		snprintf(more, sizeof(more), " tdmrep=%ld", got.tdm);
	log_event(LOG_INFO, "state_saved", "origins=%ld file=%s%s", got.robots,
	    log_kvs(path, kv, sizeof(kv)), more);
	_exit(0);
}

/* Start a save; see saver.h. */
int
saver_start(struct saver *sv, const struct state_caches *cs, const char *path,
    double timeout)
{
	char *cause = NULL, *tmp, kv[LOG_KV_BUF];
	pid_t pid, parent = getpid();
	int fd;

	if (saver_poll(sv)) {
		log_event(LOG_WARNING, "state_save_skipped",
		    "why=previous_save_running note=\"the last save still "
		    "runs; this one is skipped\"");
		return -1;
	}
	if ((fd = state_tmp_open(path, &tmp, &cause)) == -1) {
		log_event(LOG_WARNING, "state_save_failed", "error=%s",
		    log_kvs(cause, kv, sizeof(kv)));
		free(cause);
		return -1;
	}
	if ((pid = fork()) == -1) {
		log_event(LOG_WARNING, "state_save_failed", "error=%s",
		    log_kvs(strerror(errno), kv, sizeof(kv)));
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (pid == 0)
		saver_child(cs, fd, tmp, path, timeout, parent);
	close(fd);
	sv->pid = pid;
	sv->tmp = tmp;
	sv->path = xstrdup(path);
	sv->deadline = clock_monotonic() + timeout;
	return 0;
}

/* Reap a finished child, kill a late one; see saver.h. */
int
saver_poll(struct saver *sv)
{
	pid_t rc;

	if (sv->pid == -1)
		return 0;
	while ((rc = waitpid(sv->pid, NULL, WNOHANG)) == -1 && errno == EINTR)
		;
	if (rc == sv->pid || rc == -1) {
		saver_clear(sv);
		return 0;
	}
	if (clock_monotonic() < sv->deadline)
		return 1;
	saver_kill(sv, "the save took longer than its deadline, abandoned");
	return 0;
}

/* Wait for the save to end, at most until its deadline; see saver.h. */
void
saver_wait(struct saver *sv)
{
	struct timespec ts = { 0, SAVER_POLL_NSEC };

	while (saver_poll(sv))
		nanosleep(&ts, NULL);
}

/* Abandon a save still running; see saver.h. */
void
saver_cancel(struct saver *sv, const char *why)
{
	saver_kill(sv, why);
}
