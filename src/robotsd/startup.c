/*
 * startup.c: what robotsd does before it serves: the signals it handles
 * held until their handlers are in place, and a config that does not load.
 * Run by hand, that exits EX_CONFIG; handed its socket by systemd, robotsd
 * stays up in config-error mode (conn/cfgerr.h) so that clients get an
 * answer and the socket unit its service, until the file is fixed.
 */
#include <config.h>

#include <sys/auxv.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/log.h"
#include "base/sd.h"
#include "conf/conf.h"
#include "conn/cfgerr.h"
#include "startup.h"

/* Block (SIG_BLOCK) or release (SIG_UNBLOCK) the signals robotsd handles. */
void
startup_hold_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(how, &set, NULL) == -1)
		fatal("sigprocmask");
}

/* The config-error mode's loop: its server, signals and watchdog. */
struct cfgerr_loop {
	struct event_base *base;
	struct cfgerr *ce;
	int argc;
	char **argv;
	int reexec; /* the file loads now: execute robotsd anew */
};

/* The status "systemctl status robotsd" shows in config-error mode. */
static void
startup_config_error_status(const char *cause)
{
	sysd_status("config error: %s; answering every request with error "
	            "config until the file is fixed (robotsd -n, then "
	            "systemctl restart or reload)",
	    cause);
}

/* TERM, INT: stop (nothing is in flight); HUP: does the file load now? */
static void
startup_config_error_cb(evutil_socket_t signo, short what, void *arg)
{
	struct cfgerr_loop *l = arg;
	struct config *cf;
	char *cause = NULL, kv[LOG_KV_BUF];
	int exit_now = 0;

	(void)what;
	if (signo != SIGHUP) {
		sysd_stopping();
		event_base_loopbreak(l->base);
		return;
	}
	sysd_reloading();
	if ((cf = config_load(l->argc, l->argv, &exit_now, &cause)) == NULL) {
		log_event(LOG_ERR, "reload", "outcome=failed error=%s",
		    log_kvs(cause != NULL ? cause : "", kv, sizeof(kv)));
		if (cause != NULL) {
			cfgerr_set_cause(l->ce, cause);
			startup_config_error_status(cause);
		}
		free(cause);
		sysd_ready();
		return;
	}
	config_free(cf);
	log_event(LOG_INFO, "reload",
	    "outcome=reexec note=\"the config loads now: robotsd starts "
	    "anew on the same socket\"");
	l->reexec = 1;
	event_base_loopbreak(l->base);
}

/*
 * Execute robotsd anew with argv, from the file it was started from
 * (AT_EXECFN, the path given to execve()): the kernel names a process
 * after the file it executes ("/proc/self/exe" would make robotsd "exe" to
 * ps, pgrep -x and systemctl status), and a package upgrade that replaced
 * the file takes effect. Else from the file the running image was loaded
 * from, its link's " (deleted)" dropped (a file renamed over it is the
 * new one); last, the running image itself. Returns only on failure.
 */
static void
startup_reexec(char **argv)
{
	static const char deleted[] = " (deleted)";
	const char *started = (const char *)getauxval(AT_EXECFN);
	char path[PATH_MAX];
	ssize_t n;
	size_t tail = sizeof(deleted) - 1;

	if (started != NULL)
		execv(started, argv);
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		if ((size_t)n > tail &&
		    strcmp(path + (size_t)n - tail, deleted) == 0)
			path[(size_t)n - tail] = '\0';
		execv(path, argv);
	}
	execv("/proc/self/exe", argv);
}

/*
 * Config-error mode: the config did not load (cause), but systemd handed
 * robotsd its listening socket fd. Exiting would close nothing (systemd
 * holds the socket) but every client that connects would start robotsd
 * again, each start failing, until the start limit fails robotsd.socket
 * too. Instead robotsd stays up on that socket, answers every request with
 * the error "config" (conn/cfgerr.h), tells systemd it is ready with the
 * reason as its status, and keeps the watchdog fed. TERM or INT: exit 0.
 * HUP: if the file loads now, robotsd executes itself again in this
 * process (the same pid for Type=notify, the same argv) with the socket
 * passed on, and starts serving; else it logs why and stays.
 */
static int
startup_config_error(
    int argc, char **argv, int fd, const char *where, const char *cause)
{
	struct cfgerr_loop l = { NULL, NULL, argc, argv, 0 };
	struct event *ev[3] = { NULL, NULL, NULL }, *watchdog;
	static const int signos[3] = { SIGTERM, SIGINT, SIGHUP };
	unsigned long long wd_usec;
	char kv[LOG_KV_BUF];
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	log_init(1, LOG_INFO);
	if ((l.base = event_base_new()) == NULL ||
	    (l.ce = cfgerr_new(l.base, fd, cause)) == NULL)
		fatalx("cannot set up the event loop");
	for (i = 0; i < 3; i++)
		if ((ev[i] = evsignal_new(l.base, signos[i],
		         startup_config_error_cb, &l)) == NULL ||
		    evsignal_add(ev[i], NULL) == -1)
			fatalx("cannot install signal handlers");
	startup_hold_signals(SIG_UNBLOCK);
	watchdog = sysd_watchdog_start(l.base, &wd_usec);
	log_event(LOG_WARNING, "config_error",
	    "socket=%s note=\"the config does not load: answering every "
	    "request with error config until it is fixed and robotsd "
	    "restarted or reloaded\"",
	    log_kvs(where, kv, sizeof(kv)));
	startup_config_error_status(cause);
	sysd_ready();
	event_base_dispatch(l.base);
	sysd_watchdog_stop(watchdog);
	for (i = 0; i < 3; i++)
		event_free(ev[i]);
	cfgerr_free(l.ce);
	event_base_free(l.base);
	if (!l.reexec) {
		log_event(LOG_INFO, "stopped", "%s", "");
		return 0;
	}
	if (sysd_listen_fd_pass_on(fd) == -1)
		fatal("cannot pass the socket on");
	/* The new image unblocks them once it handles them. */
	startup_hold_signals(SIG_BLOCK);
	startup_reexec(argv);
	fatal("cannot execute robotsd anew (%s)", argv[0]);
}

/*
 * A config that does not load (cause): exit EX_CONFIG, unless systemd
 * handed robotsd its socket (startup_config_error()).
 */
int
startup_bad_config(int argc, char **argv, char *cause)
{
	char *why = NULL, where[256];
	int fd;

	log_startup_error("%s", cause);
	fd = sysd_listen_fd(where, sizeof(where), &why);
	if (why != NULL) {
		log_startup_error("%s", why);
		free(why);
	}
	if (fd == -1) {
		free(cause);
		return EX_CONFIG;
	}
	fd = startup_config_error(argc, argv, fd, where, cause);
	free(cause);
	return fd;
}
