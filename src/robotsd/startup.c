/*
 * startup.c: what robotsd does before it serves: the signals it handles
 * held until their handlers are in place, and a config that does not load.
 * Run by hand, that exits EX_CONFIG; handed its socket by systemd, robotsd
 * stays up in config-error mode (conn/cfgerr.h) so that clients get an
 * answer and the socket unit its service, until the file is fixed.
 */
#include <config.h>

#include <sys/auxv.h>
#include <sys/signalfd.h>

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
#include "base/xmalloc.h"
#include "conf/conf.h"
#include "conn/cfgerr.h"
#include "conn/metrics.h"
#include "startup.h"

/* Scrapers config-error mode's /metrics serves at once (the default). */
#define CFGERR_METRICS_CONNS 64

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

/* What config-error mode says of its cause: it did not load, or start. */
struct cfgerr_kind {
	const char *message; /* the answers' message, before the cause */
	const char *status;  /* systemctl status's line, before the cause */
	const char *until;   /* and after it */
	const char *note;    /* the config_error log line's */
};

static const struct cfgerr_kind cfgerr_load = {
	"robotsd's configuration does not load: ",
	"config error: ",
	"; answering every request with error config until the file is "
	"fixed (robotsd -n, then systemctl restart or reload)",
	"the config does not load: answering every request with error "
	"config until it is fixed and robotsd restarted or reloaded",
};

static const struct cfgerr_kind cfgerr_start = {
	"robotsd cannot start with its configuration: ",
	"start error: ",
	"; answering every request with error config until the cause is "
	"fixed (then systemctl restart or reload)",
	"robotsd cannot start with this config: answering every request "
	"with error config until the cause is fixed and robotsd restarted "
	"or reloaded",
};

/* The config-error mode's loop: its server, signals and watchdog. */
struct cfgerr_loop {
	struct event_base *base;
	struct cfgerr *ce;
	struct metrics *metrics; /* NULL: no metrics address, or no bind */
	struct cfgerr *ace;      /* on the passed admin socket, or NULL */
	int argc;
	char **argv;
	int reexec; /* the file loads now: execute robotsd anew */
};

/* Answer, and show in "systemctl status robotsd", cause of kind k. */
static void
startup_config_error_cause(
    struct cfgerr_loop *l, const struct cfgerr_kind *k, const char *cause)
{
	char *msg;

	xasprintf(&msg, "%s%s", k->message, cause);
	cfgerr_set_message(l->ce, msg);
	if (l->ace != NULL)
		cfgerr_set_message(l->ace, msg);
	free(msg);
	sysd_status("%s%s%s", k->status, cause, k->until);
}

/* HUP: 1 when the file loads now, else 0 and its cause answered. */
static int
startup_config_error_reload(struct cfgerr_loop *l)
{
	struct config *cf;
	char *cause = NULL, kv[LOG_KV_BUF];
	int exit_now = 0;

	sysd_reloading();
	if ((cf = config_load(l->argc, l->argv, &exit_now, &cause)) == NULL) {
		log_event(LOG_ERR, "reload", "outcome=failed error=%s",
		    log_kvs(cause != NULL ? cause : "", kv, sizeof(kv)));
		if (cause != NULL)
			startup_config_error_cause(l, &cfgerr_load, cause);
		free(cause);
		sysd_ready();
		return 0;
	}
	config_free(cf);
	log_event(LOG_INFO, "reload",
	    "outcome=reexec note=\"the config loads now: robotsd starts "
	    "anew on the same socket\"");
	return 1;
}

/* Config-error mode's counters table: robotsd_config_error 1. */
static size_t
startup_config_error_stats(void *arg, struct metric *out)
{
	(void)arg;
	out[0] = cfgerr_metric(1);
	return 1;
}

/*
 * Serve /metrics, where the config would have it if it can be read that
 * far (config_metrics_address()), so that robotsd_config_error reaches
 * the scraper; /healthz answers 503 "starting". NULL if there is no such
 * address or it cannot be bound (logged).
 */
static struct metrics *
startup_config_error_metrics(struct event_base *base, int argc, char **argv)
{
	char *addr = config_metrics_address(argc, argv), *cause = NULL;
	char kv[LOG_KV_BUF];
	struct metrics *m;

	if (addr == NULL)
		return NULL;
	m = metrics_new(base, addr, CFGERR_METRICS_CONNS,
	    startup_config_error_stats, NULL, &cause);
	if (m == NULL) {
		log_event(LOG_WARNING, "metrics_failed", "addr=%s error=%s",
		    addr, log_kvs(cause != NULL ? cause : "", kv, sizeof(kv)));
		free(cause);
	} else
		log_event(LOG_INFO, "metrics", "addr=%s config_error=1", addr);
	free(addr);
	return m;
}

/*
 * The signals, read from a signalfd one at a time: TERM, INT: stop
 * (nothing is in flight); HUP: does the file load now? Once robotsd is to
 * execute itself anew it reads on only for a stop: they stay blocked, so
 * that one sent later stays pending across execve() for the new image,
 * which handles it once its handlers are in place. None is lost.
 */
static void
startup_config_error_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cfgerr_loop *l = arg;
	struct signalfd_siginfo si;

	(void)what;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGHUP) {
			l->reexec = 0;
			sysd_stopping();
			event_base_loopbreak(l->base);
			return;
		}
		if (!l->reexec)
			l->reexec = startup_config_error_reload(l);
	}
	if (l->reexec)
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
 * Config-error mode: the config did not load or start (cause, of kind k),
 * but systemd handed robotsd its listening socket fd. Exiting would close
 * nothing (systemd holds the socket) but every client that connects would
 * start robotsd again, each start failing, until the start limit fails
 * robotsd.socket too. Instead robotsd stays up on that socket, answers
 * every request with the error "config" (conn/cfgerr.h), tells systemd it
 * is ready with the reason as its status, and keeps the watchdog fed. TERM
 * or INT: exit 0. HUP: if the file loads now, robotsd executes itself
 * again in this process (the same pid for Type=notify, the same argv) with
 * the socket and every client connection passed on (cfgerr_hand_over()),
 * and starts serving; else it logs why and stays.
 * The signals stay blocked throughout (startup_config_error_cb()).
 */
static int
startup_config_error(int argc, char **argv, int fd, const char *where,
    const struct cfgerr_kind *k, const char *cause)
{
	struct cfgerr_loop l = { .argc = argc, .argv = argv };
	char apath[256];
	int afd = sysd_admin_fd(apath, sizeof(apath));
	struct event *sigev, *watchdog;
	unsigned long long wd_usec;
	char kv[LOG_KV_BUF];
	sigset_t set;
	int sfd;

	signal(SIGPIPE, SIG_IGN);
	log_init(1, LOG_INFO);
	startup_hold_signals(SIG_BLOCK);
	if (sigprocmask(SIG_BLOCK, NULL, &set) == -1 ||
	    (sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("signalfd");
	if ((l.base = event_base_new()) == NULL ||
	    (l.ce = cfgerr_new(l.base, fd)) == NULL ||
	    (afd != -1 && (l.ace = cfgerr_new(l.base, afd)) == NULL) ||
	    (sigev = event_new(l.base, sfd, EV_READ | EV_PERSIST,
	         startup_config_error_cb, &l)) == NULL ||
	    event_add(sigev, NULL) == -1)
		fatalx("cannot set up the event loop");
	l.metrics = startup_config_error_metrics(l.base, argc, argv);
	watchdog = sysd_watchdog_start(l.base, &wd_usec);
	log_event(LOG_WARNING, "config_error", "socket=%s note=\"%s\"",
	    log_kvs(where, kv, sizeof(kv)), k->note);
	startup_config_error_cause(&l, k, cause);
	cfgerr_take_over(l.ce);
	sysd_ready();
	event_base_dispatch(l.base);
	sysd_watchdog_stop(watchdog);
	event_free(sigev);
	close(sfd);
	if (l.reexec)
		cfgerr_hand_over(l.ce); /* no request in flight lost */
	else
		cfgerr_free(l.ce);
	metrics_free(l.metrics); /* its port, free for the new image */
	if (l.ace != NULL)
		cfgerr_free(l.ace);
	event_base_free(l.base);
	if (!l.reexec) {
		log_event(LOG_INFO, "stopped", "%s", "");
		return 0;
	}
	if (sysd_listen_fd_pass_on(fd) == -1)
		fatal("cannot pass the socket on");
	startup_reexec(argv); /* the new image unblocks the signals */
	fatal("cannot execute robotsd anew (%s)", argv[0]);
}

/*
 * cause, of kind k: exit with status, unless systemd handed robotsd its
 * socket (startup_config_error()).
 */
static int
startup_cannot_serve(
    int argc, char **argv, const struct cfgerr_kind *k, char *cause, int status)
{
	char *why = NULL, where[256];
	int fd;

	fd = sysd_listen_fd(where, sizeof(where), &why);
	if (why != NULL) {
		log_startup_error("%s", why);
		free(why);
	}
	if (fd != -1)
		status = startup_config_error(argc, argv, fd, where, k, cause);
	free(cause);
	return status;
}

/* A config that does not load; see startup.h. */
int
startup_bad_config(int argc, char **argv, char *cause)
{
	log_startup_error("%s", cause);
	return startup_cannot_serve(argc, argv, &cfgerr_load, cause, EX_CONFIG);
}

/* A config that loads but cannot start; see startup.h. */
int
startup_start_error(int argc, char **argv, char *cause)
{
	log_errx("%s", cause);
	return startup_cannot_serve(argc, argv, &cfgerr_start, cause, 1);
}
