/*
 * robotsd.c: main. Loads the configuration, wires the modules onto one
 * libevent loop (fetcher, cache, server), handles the signals (TERM/INT:
 * stop accepting, answer what is in flight, exit 0; HUP: reload) and tears
 * everything down again. Exit status: 0 after a stop, EX_CONFIG (78) for a
 * bad command line, config file or passed socket (restarting cannot help),
 * 1 for any other failure.
 */
#include <config.h>

#include <sys/resource.h>

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "cache.h"
#include "config.h"
#include "fetch.h"
#include "log.h"
#include "metrics.h"
#include "robotsd.h"
#include "sd.h"
#include "state.h"
#include "server.h"

/* How often a stopping daemon looks whether its clients are answered. */
#define DRAIN_POLL_USEC 20000

struct signals {
	struct event *term, *intr, *hup, *drain;
	struct event *watchdog; /* NULL unless WatchdogSec= */
	double drain_deadline;
	int expired; /* waiting checks were answered "timeout" */
};

/*
 * Drain: exit once every client is answered. At the deadline, checks still
 * waiting are answered "timeout" and get one more second to be written.
 */
static void
robotsd_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct robotsd *rd = arg;
	struct signals *sig = rd->signals;

	(void)fd;
	(void)what;
	if (!server_busy(rd->server))
		event_base_loopexit(rd->base, NULL);
	else if (clock_wall() >= sig->drain_deadline) {
		if (sig->expired)
			event_base_loopexit(rd->base, NULL);
		server_expire_waiting(rd->server);
		sig->expired = 1;
		sig->drain_deadline = clock_wall() + 1;
	}
}

/* SIGTERM/SIGINT: stop accepting and drain; a second one exits now. */
static void
robotsd_term_cb(evutil_socket_t signo, short what, void *arg)
{
	struct robotsd *rd = arg;
	struct signals *sig = rd->signals;
	struct timeval tv = { 0, DRAIN_POLL_USEC };

	(void)what;
	if (rd->stopping) {
		event_base_loopbreak(rd->base);
		return;
	}
	log_info("signal %d: stopping", (int)signo);
	rd->stopping = 1;
	sysd_status("stopping: answering the checks in flight");
	sysd_stopping();
	server_stop_accepting(rd->server);
	sig->drain_deadline = clock_wall() + rd->conf->fetch_timeout + 1;
	evtimer_add(sig->drain, &tv);
}

/* SIGHUP: reload the config file; the command line keeps winning. */
static void
robotsd_hup_cb(evutil_socket_t signo, short what, void *arg)
{
	struct robotsd *rd = arg;
	struct config *cf;
	char *cause = NULL;

	(void)signo;
	(void)what;
	sysd_reloading();
	if ((cf = config_reload(rd->conf, &cause)) == NULL) {
		log_warnx(
		    "reload failed, keeping the old configuration: %s", cause);
		free(cause);
		sysd_ready();
		return;
	}
	log_set_level(cf->log_level);
	cache_configure(rd->cache, cf);
	fetcher_configure(rd->fetcher, cf);
	config_free(rd->conf);
	rd->conf = cf;
	log_info("configuration reloaded");
	sysd_ready();
}

/* Install the signal events. */
static void
robotsd_signals(struct robotsd *rd, struct signals *sig)
{
	signal(SIGPIPE, SIG_IGN);
	rd->signals = sig;
	sig->term = evsignal_new(rd->base, SIGTERM, robotsd_term_cb, rd);
	sig->intr = evsignal_new(rd->base, SIGINT, robotsd_term_cb, rd);
	sig->hup = evsignal_new(rd->base, SIGHUP, robotsd_hup_cb, rd);
	sig->drain = event_new(rd->base, -1, EV_PERSIST, robotsd_drain_cb, rd);
	if (sig->term == NULL || sig->intr == NULL || sig->hup == NULL ||
	    sig->drain == NULL || evsignal_add(sig->term, NULL) == -1 ||
	    evsignal_add(sig->intr, NULL) == -1 ||
	    evsignal_add(sig->hup, NULL) == -1)
		fatalx("cannot install signal handlers");
}

/* Options that this build does not act on yet, or that are for tests. */
static void
robotsd_warn_unsupported(const struct config *cf)
{
	if (cf->redis != NULL)
		log_warnx("redis: not supported yet, ignored");
	if (cf->test_clock)
		log_warnx("TEST CLOCK ON (--test-clock): any client of the "
		          "socket can move robotsd's clock; for tests only, "
		          "never in production");
}

/* Load the cache saved by the last run, if --state-file says where. */
static void
robotsd_load_state(struct robotsd *rd)
{
	char *cause = NULL;
	long n;

	if (rd->conf->state_file == NULL)
		return;
	if ((n = state_load(rd->cache, rd->conf->state_file, &cause)) == -1) {
		log_warnx("state: %s; starting with an empty cache", cause);
		free(cause);
	} else
		log_info("state: %ld origins loaded from %s", n,
		    rd->conf->state_file);
}

/* Save the cache for the next run, if --state-file says where. */
static void
robotsd_save_state(struct robotsd *rd)
{
	char *cause = NULL;
	long n;

	if (rd->conf->state_file == NULL)
		return;
	if ((n = state_save(rd->cache, rd->conf->state_file, &cause)) == -1) {
		log_warnx("state: not saved: %s", cause);
		free(cause);
	} else
		log_info(
		    "state: %ld origins saved to %s", n, rd->conf->state_file);
}

/*
 * Raise the descriptor limit to its hard limit: every client connection
 * and every fetch needs one, and running out would turn fetches into
 * network errors. Warn when the configured maxima cannot all fit.
 */
static void
robotsd_raise_nofile(const struct config *cf)
{
	struct rlimit rl;
	rlim_t need =
	    (rlim_t)cf->max_connections + (rlim_t)cf->max_fetches + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("setrlimit");
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need)
		log_warnx("only %llu file descriptors for max-connections %ld "
		          "and max-fetches %ld; raise the limit or lower them",
		    (unsigned long long)rl.rlim_cur, cf->max_connections,
		    cf->max_fetches);
}

/*
 * The socket passed by socket activation (its path in where), else -1 and
 * the configured path in where. A passed socket robotsd cannot serve is a
 * configuration error of the service manager's unit: exit EX_CONFIG.
 */
static int
robotsd_passed_socket(const struct config *cf, char *where, size_t wsz)
{
	char *cause = NULL;
	int fd = sysd_listen_fd(where, wsz, &cause);

	if (cause != NULL) {
		log_errx("%s", cause);
		exit(EX_CONFIG);
	}
	if (fd == -1)
		snprintf(where, wsz, "%s", cf->socket_path);
	else
		log_info(
		    "socket activation: serving the passed socket %s", where);
	return fd;
}

/* Create the loop and the modules, and listen on where (set here). */
static void
robotsd_start(struct robotsd *rd, char *where, size_t wsz)
{
	char *cause = NULL;
	int fd, daemonize = !rd->conf->foreground && !sysd_detected();

	/*
	 * curl converts an IDN host in a redirect's Location through the
	 * locale's charset: make it UTF-8. Nothing else here is
	 * locale-dependent for bytes below 0x80.
	 */
	if (setlocale(LC_CTYPE, "C.UTF-8") == NULL)
		log_warnx(
		    "no C.UTF-8 locale: redirects to IDN hosts will fail");
	robotsd_raise_nofile(rd->conf);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init failed");
	if ((rd->base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	rd->started = clock_now(&rd->clock);
	if ((rd->fetcher = fetcher_new(rd->base, rd->conf)) == NULL ||
	    (rd->cache = cache_new(rd->conf, rd->fetcher, &rd->clock)) == NULL)
		fatalx("out of memory");
	robotsd_load_state(rd);
	fd = robotsd_passed_socket(rd->conf, where, wsz);
	if ((rd->server = server_new(rd, fd, &cause)) == NULL)
		fatalx("%s", cause);
	if (rd->conf->metrics != NULL &&
	    (rd->metrics = metrics_new(rd, rd->conf->metrics, &cause)) == NULL)
		fatalx("%s", cause);
	if (daemonize) {
		/* Keep the directory: relative paths in the config stay valid.
		 */
		if (daemon(1, 0) == -1)
			fatal("daemon");
		if (event_reinit(rd->base) == -1)
			fatalx("event_reinit failed");
	}
}

/* Free everything main() created. */
static void
robotsd_stop(struct robotsd *rd, struct signals *sig)
{
	metrics_free(rd->metrics);
	server_free(rd->server);
	robotsd_save_state(rd);
	cache_free(rd->cache);
	fetcher_free(rd->fetcher);
	event_free(sig->term);
	event_free(sig->intr);
	event_free(sig->hup);
	event_free(sig->drain);
	sysd_watchdog_stop(sig->watchdog);
	event_base_free(rd->base);
	libevent_global_shutdown();
	curl_global_cleanup();
	config_free(rd->conf);
}

int
main(int argc, char **argv)
{
	struct robotsd rd = { 0 };
	struct signals sig = { 0 };
	char *cause = NULL, where[256];
	unsigned long long wd_usec;
	int exit_now = 0;

	if ((rd.conf = config_load(argc, argv, &exit_now, &cause)) == NULL) {
		if (exit_now)
			return 0;
		log_startup_error("%s", cause);
		free(cause);
		return EX_CONFIG;
	}
	if (rd.conf->check_only) {
		printf("configuration OK\n");
		config_free(rd.conf);
		return 0;
	}
	/* -f: stderr, even when a supervisor that is not the journal runs us */
	log_init(rd.conf->foreground, rd.conf->log_level);
	robotsd_warn_unsupported(rd.conf);
	robotsd_start(&rd, where, sizeof(where));
	robotsd_signals(&rd, &sig);
	if ((sig.watchdog = sysd_watchdog_start(rd.base, &wd_usec)) != NULL)
		log_info("watchdog: WATCHDOG=1 every %llu ms", wd_usec / 1000);
	log_info("robotsd %s listening on %s", PACKAGE_VERSION, where);
	sysd_status("serving %s", where);
	sysd_ready();
	event_base_dispatch(rd.base);
	log_info("stopped");
	robotsd_stop(&rd, &sig);
	return 0;
}
