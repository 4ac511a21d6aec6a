/*
 * robotsd.c: main. Loads the configuration, wires the modules onto one
 * libevent loop (fetcher, cache, server), turns the signals and timers into
 * events of the lifecycle (lifecycle.h: TERM/INT stop accepting, answer
 * what is in flight, exit 0; HUP reloads) with the ops it acts through,
 * and tears everything down again. Exit status: 0 after a stop, EX_CONFIG
 * (78) for a bad command line, config file or passed socket (restarting
 * cannot help), 1 for any other failure. A config that does not load, or
 * that robotsd cannot start with (robotsd_claim()), when systemd handed
 * robotsd its socket is not an exit: see startup.h's config-error mode.
 */
#include <config.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <locale.h>
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "persist/archive.h"
#include "wire/buf.h"
#include "cache/cache.h"
#include "conf/conf.h"
#include "ops/dispatch.h"
#include "feed/feed.h"
#include "feed/feed_wire.h"
#include "fetch/fetch.h"
#include "base/log.h"
#include "base/looplag.h"
#include "conn/metrics.h"
#include "robotsd.h"
#include "base/sd.h"
#include "persist/saver.h"
#include "persist/state.h"
#include "conn/server.h"
#include "lifecycle.h"
#include "startup.h"
#include "stats.h"
#ifdef HAVE_REDIS
#include "tier/shared.h"
#include "tier/tier.h"
#endif

/* How often a stopping daemon looks whether its clients are answered. */
#define DRAIN_POLL_USEC 20000
/*
 * The longest a state file save may take before it is abandoned: with the
 * drain (--fetch-timeout + 2 s by default) well within systemd's 90 s.
 */
#define STATE_SAVE_TIMEOUT 30.0

/* The origins being fetched, for the stopping line: a count and a few. */
struct stop_fetches {
	size_t n;
	struct buf names; /* the first STOP_ORIGINS, comma-separated */
};
#define STOP_ORIGINS 5

static void
robotsd_stop_fetch_cb(const struct cache_entry *e, int good, void *arg)
{
	struct stop_fetches *sf = arg;

	(void)good;
	if (sf->n++ >= STOP_ORIGINS)
		return;
	if (sf->names.len > 0)
		buf_lit(&sf->names, ",");
	buf_add(&sf->names, e->origin, strlen(e->origin));
}

/*
 * The one line a stop logs: what it waits for (checks waiting, fetches
 * under way and their first origins) and for how long at most.
 */
static void
robotsd_log_stopping(struct robotsd *rd, int signo)
{
	struct stop_fetches sf = { 0, BUF_INIT(0) };
	char kv[LOG_KV_BUF];

	cache_foreach_fetching(rd->cache, robotsd_stop_fetch_cb, &sf);
	buf_add(&sf.names, "", 1);
	log_event(LOG_INFO, "stopping",
	    "signal=%d waiting=%zu fetches=%zu origins=%s stop_timeout=%ld",
	    signo, cache_stats(rd->cache)->waiting, sf.n,
	    log_kvs(sf.names.state == BUF_OK && sf.n > 0 ? sf.names.p : NULL,
	        kv, sizeof(kv)),
	    rd->conf->stop_timeout);
	buf_clear(&sf.names);
}

/* The cache fetches through the fetcher (cache.h's interface). */
static void *
robotsd_fetch_start(void *impl, const char *url, fetch_done_cb cb, void *arg)
{
	return fetch_start(impl, url, cb, arg);
}

static void *
robotsd_fetch_start_cond(void *impl, const char *url,
    const struct fetch_cond *cond, fetch_done_cb cb, void *arg)
{
	return fetch_start_cond(impl, url, cond, cb, arg);
}

static void
robotsd_fetch_cancel(void *f)
{
	fetch_cancel(f);
}

static size_t
robotsd_fetch_queued(const void *impl)
{
	return fetcher_backlog(impl);
}

static const struct cache_fetch_ops robotsd_fetch_ops = {
	.start = robotsd_fetch_start,
	.start_cond = robotsd_fetch_start_cond,
	.cancel = robotsd_fetch_cancel,
	.queued = robotsd_fetch_queued,
};

/* The cache's settings from the config. */
static struct cache_settings
robotsd_cache_settings(const struct config *cf)
{
	return (struct cache_settings){
		.life = {
			.default_ttl = (double)cf->default_ttl,
			.min_ttl = (double)cf->min_ttl,
			.max_ttl = (double)cf->max_ttl,
			.retry_min = (double)cf->retry_min,
			.retry_max = (double)cf->retry_max,
			.retry_503_min = (double)cf->retry_503_min,
			.retry_503_max = (double)cf->retry_503_max,
			.unreachable_allow_after =
			    (double)cf->unreachable_allow_after,
		},
		.max_bytes = (size_t)cf->cache_max_bytes,
		.max_waiting = cf->max_waiting > 0 ? (size_t)cf->max_waiting : 0,
		.history_depth = (size_t)cf->history_depth,
	};
}

/* The fetcher's settings from the config. */
static struct fetch_settings
robotsd_fetch_settings(const struct config *cf)
{
	return (struct fetch_settings){
		.user_agent = cf->user_agent,
		.connect_to = cf->connect_to,
		.ca_file = cf->ca_file,
		.timeout = cf->fetch_timeout,
		.max_fetches =
		    cf->max_fetches > 0 ? (size_t)cf->max_fetches : 1,
		.deny_private = cf->deny_private_addresses,
	};
}

/* --admin-group's gid, or -1 (none, or gone since the config check). */
static long
robotsd_admin_gid(const struct config *cf)
{
	struct group *gr;

	if (cf->admin_group == NULL || (gr = getgrnam(cf->admin_group)) == NULL)
		return -1;
	return (long)gr->gr_gid;
}

/*
 * When a check waiting on fetches is answered ("timeout" if still
 * waiting): after two fetch timeouts, plus slack. A wait for another
 * instance's fetch looks again then (shared.h).
 */
static double
robotsd_answer_s(const struct config *cf)
{
	return 2.0 * (double)cf->fetch_timeout + 5;
}

#ifdef HAVE_REDIS
/*
 * The lifetime of a fetch lock this instance sets and renews: at most
 * --redis-lock-time, and --fetch-timeout plus 2 s. A holder that stops
 * leaves a lock that expires that soon, so a waiter notices (a second
 * more) and fetches (--fetch-timeout) before the deadline of any check
 * that came after the holder's last renewal (twice --fetch-timeout plus
 * 5 s): the real answer, not "timeout" (docs/scaling.md).
 */
static long
robotsd_lock_hold_ms(const struct config *cf)
{
	long s = cf->fetch_timeout + 2;

	return 1000 * (cf->redis_lock_time < s ? cf->redis_lock_time : s);
}
#endif

/* The server's settings from the config. */
static struct server_settings
robotsd_server_settings(const struct config *cf)
{
	return (struct server_settings){
		.path = cf->socket_path,
		.mode = cf->socket_mode,
		.max_line = cf->max_line,
		.max_output = cf->max_output,
		.output_budget = cf->all_output,
		.write_timeout = cf->write_timeout,
		.max_connections = (size_t)cf->max_connections,
		.admin_gid = robotsd_admin_gid(cf),
	};
}

/*
 * Hand every module its settings from rd->conf (at start and after a
 * reload): no module reads the config itself.
 */
static void
robotsd_configure(struct robotsd *rd)
{
	const struct config *cf = rd->conf;
	struct server_settings ss = robotsd_server_settings(cf);
	struct cache_settings cs = robotsd_cache_settings(cf);
	struct fetch_settings fs = robotsd_fetch_settings(cf);
	struct dispatch_settings ds = {
		.test_clock = cf->test_clock,
		.wait_timeout = robotsd_answer_s(cf),
	};

	log_set_level(cf->log_level);
	fetcher_configure(rd->fetcher, &fs);
	cache_configure(rd->cache, &cs);
#ifdef HAVE_REDIS
	if (rd->shared != NULL)
		shared_configure(
		    rd->shared, &cs.life, (long)(robotsd_answer_s(cf) * 1000));
	if (rd->tier != NULL)
		tier_set_hold(rd->tier, robotsd_lock_hold_ms(cf));
#endif
	dispatch_configure(rd->dispatch, &ds);
	feed_configure(rd->feed, cf->max_output, cf->all_output);
	rd->limits = (struct stats_limits){ cf->cache_max_bytes,
		(uint64_t)cf->max_waiting, (uint64_t)cf->max_connections,
		(uint64_t)cf->max_fetches };
	if (rd->server != NULL)
		server_configure(rd->server, &ss);
}

/*
 * A reload applied: say so, naming the options it kept for want of a
 * restart (kept, comma-separated, or NULL) in its log line and in
 * systemctl status until the next reload.
 */
static void
robotsd_reloaded(struct robotsd *rd, const char *kept)
{
	if (kept == NULL) {
		log_event(LOG_INFO, "reload", "outcome=ok");
		sysd_status("serving %s", rd->where);
	} else {
		log_event(LOG_WARNING, "reload",
		    "outcome=ok needs_restart=%s note=\"applied, except these "
		    "options: they take effect after a restart\"",
		    kept);
		sysd_status("serving %s; reloaded, but these options take "
		            "effect only after a restart: %s",
		    rd->where, kept);
	}
	sysd_ready();
}

/*
 * SIGHUP: reload the config file; the command line keeps winning. 0 once
 * the new config is applied and said, -1 when the old one is kept.
 */
static int
robotsd_reload(void *arg)
{
	struct robotsd *rd = arg;
	struct config *cf;
	char *cause = NULL, *kept = NULL, kv[LOG_KV_BUF];

	sysd_reloading();
	if ((cf = config_reload(rd->conf, &kept, &cause)) == NULL) {
		log_event(LOG_ERR, "reload", "outcome=failed error=%s",
		    log_kvs(cause, kv, sizeof(kv)));
		free(cause);
		sysd_ready();
		return -1;
	}
	config_free(rd->conf);
	rd->conf = cf;
	robotsd_configure(rd);
	robotsd_reloaded(rd, kept);
	free(kept);
	return 0;
}

/* The signal and timer events that feed the lifecycle. */
struct signals {
	struct event *term, *intr, *hup, *drain;
	struct event *save;     /* --state-save-interval */
	struct event *chld;     /* a save's child process ended */
	struct event *watchdog; /* NULL unless WatchdogSec= */
};

/* The wall clock, for the drain's deadline. */
static double
robotsd_lc_now(void *arg)
{
	(void)arg;
	return clock_wall(NULL);
}

/* The live config's stop and save settings. */
static void
robotsd_lc_settings(void *arg, struct lifecycle_settings *s)
{
	const struct config *cf = ((struct robotsd *)arg)->conf;

	s->stop_timeout = cf->stop_timeout;
	s->save_interval = cf->state_save_interval;
	s->saves = cf->state_file != NULL;
}

/* A stop begins: its log line, the health endpoint and systemd. */
static void
robotsd_lc_announce_stop(void *arg, int signo)
{
	struct robotsd *rd = arg;

	robotsd_log_stopping(rd, signo);
	metrics_set_health(rd->metrics, METRICS_STOPPING);
	sysd_status("stopping: answering the checks in flight");
	sysd_stopping();
}

/* Stop taking new clients. */
static void
robotsd_lc_stop_accepting(void *arg)
{
	server_stop_accepting(((struct robotsd *)arg)->server);
}

/* Whether a client is not answered yet. */
static int
robotsd_lc_busy(void *arg)
{
	return server_busy(((struct robotsd *)arg)->server);
}

/* Answer the checks still waiting "timeout". */
static void
robotsd_lc_expire_waiting(void *arg)
{
	dispatch_expire_waiting(((struct robotsd *)arg)->dispatch);
}

/* Look every DRAIN_POLL_USEC whether the clients are answered. */
static void
robotsd_lc_drain_arm(void *arg)
{
	struct robotsd *rd = arg;
	struct timeval tv = { 0, DRAIN_POLL_USEC };

	evtimer_add(rd->signals->drain, &tv);
}

/* Leave the loop at the end of this turn. */
static void
robotsd_lc_exit_loop(void *arg)
{
	event_base_loopexit(((struct robotsd *)arg)->base, NULL);
}

/* Leave the loop now. */
static void
robotsd_lc_break_loop(void *arg)
{
	event_base_loopbreak(((struct robotsd *)arg)->base);
}

/* (Re)arm the periodic save timer; 0 disarms it. */
static void
robotsd_lc_save_arm(void *arg, long seconds)
{
	struct robotsd *rd = arg;
	struct timeval tv = { seconds, 0 };

	evtimer_del(rd->signals->save);
	if (seconds > 0)
		event_add(rd->signals->save, &tv);
}

/* Save the cache to --state-file in a child process (saver.h). */
static int
robotsd_lc_save_start(void *arg)
{
	struct robotsd *rd = arg;

	return saver_start(
	    rd->saver, rd->cache, rd->conf->state_file, STATE_SAVE_TIMEOUT);
}

/* Abandon a save still running. */
static void
robotsd_lc_save_cancel(void *arg, const char *why)
{
	saver_cancel(((struct robotsd *)arg)->saver, why);
}

/* Reap a save that ended. */
static void
robotsd_lc_save_poll(void *arg)
{
	saver_poll(((struct robotsd *)arg)->saver);
}

/* Wait for the running save, until its deadline. */
static void
robotsd_lc_save_wait(void *arg)
{
	saver_wait(((struct robotsd *)arg)->saver);
}

static const struct lifecycle_ops robotsd_lc_ops = {
	robotsd_lc_now,
	robotsd_lc_settings,
	robotsd_lc_announce_stop,
	robotsd_lc_stop_accepting,
	robotsd_lc_busy,
	robotsd_lc_expire_waiting,
	robotsd_lc_drain_arm,
	robotsd_lc_exit_loop,
	robotsd_lc_break_loop,
	robotsd_reload,
	robotsd_lc_save_arm,
	robotsd_lc_save_start,
	robotsd_lc_save_cancel,
	robotsd_lc_save_poll,
	robotsd_lc_save_wait,
};

/* SIGTERM/SIGINT: stop accepting and drain; a second one exits now. */
static void
robotsd_term_cb(evutil_socket_t signo, short what, void *arg)
{
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_TERM, (int)signo);
}

/* SIGHUP: reload. */
static void
robotsd_hup_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_HUP, SIGHUP);
}

/* The drain's poll timer. */
static void
robotsd_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_DRAIN_TICK, 0);
}

/* --state-save-interval ran out. */
static void
robotsd_save_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_SAVE_TICK, 0);
}

/* SIGCHLD: a save may have ended. */
static void
robotsd_chld_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_CHLD, SIGCHLD);
}

/* Install the signal events and the lifecycle they feed. */
static void
robotsd_signals(struct robotsd *rd, struct signals *sig)
{
	signal(SIGPIPE, SIG_IGN);
	rd->signals = sig;
	if ((rd->lc = lifecycle_new(&robotsd_lc_ops, rd)) == NULL)
		fatalx("out of memory");
	sig->term = evsignal_new(rd->base, SIGTERM, robotsd_term_cb, rd);
	sig->intr = evsignal_new(rd->base, SIGINT, robotsd_term_cb, rd);
	sig->hup = evsignal_new(rd->base, SIGHUP, robotsd_hup_cb, rd);
	sig->drain = event_new(rd->base, -1, EV_PERSIST, robotsd_drain_cb, rd);
	sig->save = event_new(rd->base, -1, EV_PERSIST, robotsd_save_cb, rd);
	sig->chld = evsignal_new(rd->base, SIGCHLD, robotsd_chld_cb, rd);
	if (sig->term == NULL || sig->intr == NULL || sig->hup == NULL ||
	    sig->drain == NULL || sig->save == NULL || sig->chld == NULL ||
	    evsignal_add(sig->chld, NULL) == -1 ||
	    evsignal_add(sig->term, NULL) == -1 ||
	    evsignal_add(sig->intr, NULL) == -1 ||
	    evsignal_add(sig->hup, NULL) == -1)
		fatalx("cannot install signal handlers");
}

/* Options that this build does not act on yet, or that are for tests. */
static void
robotsd_warn_unsupported(const struct config *cf)
{
	if (cf->test_clock)
		log_event(LOG_WARNING, "test_clock_on",
		    "note=\"TEST CLOCK ON (--test-clock): any client of the "
		    "socket can move robotsd's clock; for tests only, never "
		    "in production\"");
}

static void
robotsd_tmp_removed(const char *path)
{
	char kv[LOG_KV_BUF];

	log_event(LOG_INFO, "state_tmp_removed",
	    "file=%s note=\"left by a save that was interrupted\"",
	    log_kvs(path, kv, sizeof(kv)));
}

/* Load the cache saved by the last run, if --state-file says where. */
static void
robotsd_load_state(struct robotsd *rd)
{
	const struct config *cf = rd->conf;
	char *cause = NULL, kv[LOG_KV_BUF];
	long n;

	if (cf->state_file == NULL)
		return;
	(void)state_tmp_sweep(cf->state_file, robotsd_tmp_removed);
	if (access(cf->state_file, F_OK) == -1 && errno == ENOENT) {
		/* the first start: nothing was saved yet */
		log_debug("no state file %s yet: nothing to load",
		    log_kvs(cf->state_file, kv, sizeof(kv)));
		return;
	}
	if ((n = state_load(rd->cache, cf->state_file, cf->cache_max_bytes,
	         &cause)) == -1) {
		log_event(LOG_WARNING, "state_load_failed",
		    "error=%s outcome=nothing_loaded",
		    log_kvs(cause, kv, sizeof(kv)));
		free(cause);
	} else
		log_event(LOG_INFO, "state_loaded", "origins=%ld file=%s", n,
		    log_kvs(cf->state_file, kv, sizeof(kv)));
}

/*
 * Keep glibc's first thresholds: chunks of 128 KB and more (large bodies
 * and rulesets) are mapped on their own and unmapped when freed, and no
 * heap keeps more than 1 MB free at its top. glibc would raise both after
 * the first large free (to 1.8 MB and 3.7 MB after warming the corpus),
 * and the fetch thread's heap, whose top malloc_trim() never shrinks,
 * then keeps megabytes of freed transfers resident for good.
 */
static void
robotsd_tune_malloc(void)
{
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	(void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

/*
 * Raise the descriptor limit to its hard limit: every client connection
 * needs one, every fetch up to FETCHER_FDS_PER_FETCH, curl keeps up to
 * FETCHER_IDLE_CONNS idle connections, and running out would turn fetches
 * into network errors. Warn when the configured maxima cannot all fit.
 */
static void
robotsd_raise_nofile(const struct config *cf)
{
	char kv[LOG_KV_BUF];
	struct rlimit rl;
	rlim_t need = (rlim_t)cf->max_connections +
	              (rlim_t)cf->max_fetches * FETCHER_FDS_PER_FETCH +
	              FETCHER_IDLE_CONNS + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_event(LOG_WARNING, "fd_limit_not_raised",
			    "error=%s",
			    log_kvs(strerror(errno), kv, sizeof(kv)));
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need)
		log_event(LOG_WARNING, "fd_limit_low",
		    "limit=%llu needed=%llu max_connections=%ld "
		    "max_fetches=%ld note=\"raise the limit or lower them\"",
		    (unsigned long long)rl.rlim_cur, (unsigned long long)need,
		    cf->max_connections, cf->max_fetches);
}

/*
 * The socket passed by socket activation (its path in where), else -1 and
 * the configured path in where. A passed socket robotsd cannot serve is a
 * configuration error of the service manager's unit: exit EX_CONFIG.
 */
static int
robotsd_passed_socket(const struct config *cf, char *where, size_t wsz)
{
	char *cause = NULL, kv[LOG_KV_BUF];
	int fd = sysd_listen_fd(where, wsz, &cause);

	if (cause != NULL) {
		log_errx("%s", cause);
		exit(EX_CONFIG);
	}
	if (fd == -1)
		snprintf(where, wsz, "%s", cf->socket_path);
	else
		log_event(LOG_INFO, "socket_activation", "socket=%s",
		    log_kvs(where, kv, sizeof(kv)));
	return fd;
}

/*
 * The admin socket: the one socket activation passed beside the main one
 * (FileDescriptorName=admin), else admin-socket's, if set, created with
 * admin-group's group. A passed one wins, as the main socket does.
 */
static void
robotsd_admin_socket(struct robotsd *rd, const struct config *cf)
{
	char *cause = NULL, where[256], kv[LOG_KV_BUF];
	int fd = sysd_admin_fd(where, sizeof(where));

	if (fd == -1 && cf->admin_socket == NULL)
		return;
	if (fd == -1)
		snprintf(where, sizeof(where), "%s", cf->admin_socket);
	if (server_listen_admin(rd->server, cf->admin_socket,
	        robotsd_admin_gid(cf), fd, &cause) == -1)
		fatalx("admin-socket %s", cause);
	log_event(LOG_INFO, "admin_socket", "socket=%s passed=%s",
	    log_kvs(where, kv, sizeof(kv)), fd == -1 ? "no" : "yes");
}

/*
 * With --redis: the shared tier's connections; -1 and the cause when it
 * cannot start (the password file unreadable, a TLS file that does not
 * load). The tier's options take effect at start only; a reload keeps the
 * tier as it is.
 */
static int
robotsd_tier_claim(struct robotsd *rd, char **cause)
{
#ifdef HAVE_REDIS
	const struct config *cf = rd->conf;
	struct tier_config tc = {
		.urls = (const char *const *)cf->redis,
		.nurls = cf->nredis,
		.timeout_ms = cf->redis_timeout,
		.lock_ms = cf->redis_lock_time * 1000,
		.key = cf->redis_key_file != NULL ? cf->redis_key : NULL,
		.tls_ca_file = cf->redis_tls_ca_file,
		.tls_cert_file = cf->redis_tls_cert_file,
		.tls_key_file = cf->redis_tls_key_file,
		.tls_server_name = cf->redis_tls_server_name,
	};
	char *pw;

	if (cf->nredis == 0)
		return 0;
	if ((pw = config_redis_password(cf, cause)) == NULL && *cause != NULL)
		return -1;
	tc.password = pw;
	rd->tier = tier_new(rd->base, &tc, cause);
	if (pw != NULL) {
		explicit_bzero(pw, strlen(pw));
		free(pw);
	}
	return rd->tier != NULL ? 0 : -1;
#else
	(void)rd; /* conf.c refuses --redis in a build without hiredis */
	(void)cause;
	return 0;
#endif
}

/* With --redis: the fleet loader in front of the fetcher (shared.h). */
static void
robotsd_tier_start(struct robotsd *rd)
{
#ifdef HAVE_REDIS
	const struct config *cf = rd->conf;
	struct lifetime_settings life;

	if (rd->tier == NULL)
		return;
	rd->shared = shared_new(rd->tier, rd->fetcher, &rd->clock,
	    (long)(robotsd_answer_s(cf) * 1000));
	life = robotsd_cache_settings(cf).life;
	shared_configure(
	    rd->shared, &life, (long)(robotsd_answer_s(cf) * 1000));
	log_event(LOG_INFO, "shared_tier", "servers=%zu", cf->nredis);
#else
	(void)rd;
#endif
}

/*
 * What robotsd can fail to start with though its config loads: the
 * metrics port (taken, or an address not this host's) and the shared
 * tier. Claimed before anything that is hard to undo; the cause, or NULL.
 */
static char *
robotsd_claim(struct robotsd *rd)
{
	const struct config *cf = rd->conf;
	char *cause = NULL;

	if (cf->metrics != NULL &&
	    (rd->metrics = metrics_new(rd->base, cf->metrics,
	         (size_t)cf->metrics_max_connections, stats_collect, &rd->stats,
	         &cause)) == NULL)
		return cause;
	if (robotsd_tier_claim(rd, &cause) == -1)
		return cause;
	return NULL;
}

/* Undo what robotsd_start() did up to a robotsd_claim() that failed. */
static void
robotsd_unclaim(struct robotsd *rd)
{
	metrics_free(rd->metrics);
#ifdef HAVE_REDIS
	tier_free(rd->tier);
#endif
	event_base_loop(rd->base, EVLOOP_NONBLOCK);
	event_base_free(rd->base);
	curl_global_cleanup();
	config_free(rd->conf);
}

/* The cache, fetching through the fleet loader with --redis. */
static struct cache *
robotsd_cache_new(struct robotsd *rd, const struct cache_settings *cs)
{
#ifdef HAVE_REDIS
	if (rd->shared != NULL)
		return cache_new(cs, &shared_fetch_ops, rd->shared, &rd->clock);
#endif
	return cache_new(cs, &robotsd_fetch_ops, rd->fetcher, &rd->clock);
}

/*
 * The event loop, with two priorities: the clients' sockets (server.c)
 * first, then everything else, fetches included. Callbacks of the second
 * run at most 16 at a time or for 2 ms before the loop looks at the
 * clients again, so a burst of TLS handshakes or fetch completions cannot
 * hold a cached check for long.
 */
static struct event_base *
robotsd_base(void)
{
	struct timeval most = { 0, 2000 };
	struct event_config *cfg;
	struct event_base *base;

	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_max_dispatch_interval(
	        cfg, &most, 16, SERVER_PRIORITY + 1) == -1)
		fatalx("out of memory");
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL ||
	    event_base_priority_init(base, SERVER_PRIORITIES) == -1)
		fatalx("cannot set up the event loop");
	return base;
}

/*
 * The cache's new-version seam, to the archive: a version fetched here
 * with an HTTP answer (any status) is queued as a response record. One
 * read from the shared tier is not (the instance that fetched it archives
 * it), nor a network error, timeout or refusal (no HTTP message to keep).
 */
static void
robotsd_archive_change(const struct cache_change *c, void *arg)
{
	const struct fetch_result *f = c->fetched;
	char url[2048];
	struct warc_response r;

	if (f == NULL || f->error != FETCH_OK || f->raw_headers == NULL)
		return;
	if (f->final_url == NULL)
		snprintf(url, sizeof(url), "%s/robots.txt", c->origin);
	memset(&r, 0, sizeof(r));
	r.date = c->at;
	r.target_uri = f->final_url != NULL ? f->final_url : url;
	r.origin = c->origin;
	r.ip = f->ip;
	r.version = c->new_version;
	r.http_head = f->raw_headers;
	r.http_head_len = f->raw_headers_len;
	r.body = f->body;
	r.body_len = f->body_len;
	r.truncated = f->truncated;
	(void)archive_add(arg, &r); /* a drop is counted and logged there */
}

/*
 * Start the WARC archive's writer (--archive-dir) and have the cache hand
 * it each new version fetched here. Never fatal: a missing directory is
 * logged and counted, and robotsd answers as ever. Its files take the
 * group of the socket file at socket: who may query robotsd may read them.
 */
static void
robotsd_archive_start(struct robotsd *rd, const char *socket)
{
	const struct config *cf = rd->conf;
	struct archive_settings as = { cf->archive_dir,
		cf->archive_max_file_bytes, cf->archive_max_bytes,
		ARCHIVE_QUEUE_BYTES, -1 };
	struct stat st;

	if (cf->archive_dir == NULL)
		return;
	if (stat(socket, &st) == 0 && S_ISSOCK(st.st_mode))
		as.gid = (long)st.st_gid;
	if ((rd->archive = archive_new(&as)) == NULL)
		return;
	rd->stats.archive = rd->archive;
	if (cache_listen(rd->cache, robotsd_archive_change, rd->archive) == -1)
		fatalx("too many cache listeners");
}

/*
 * Create the loop and the modules, and listen on where (set here); NULL,
 * or the cause when robotsd cannot start with its config (then
 * robotsd_unclaim()).
 */
static char *
robotsd_start(struct robotsd *rd, char *where, size_t wsz)
{
	const struct config *cf = rd->conf;
	struct server_settings ss;
	struct cache_settings cs;
	struct fetch_settings fs;
	char *cause = NULL;
	int fd, daemonize = !cf->foreground && !sysd_detected();

	/* curl converts an IDN host in a Location by the locale: UTF-8. */
	if (setlocale(LC_CTYPE, "C.UTF-8") == NULL)
		log_event(LOG_WARNING, "no_utf8_locale",
		    "note=\"no C.UTF-8 locale: redirects to IDN hosts will "
		    "fail\"");
	robotsd_raise_nofile(cf);
	robotsd_tune_malloc();
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init failed");
	rd->base = robotsd_base();
	if ((cause = robotsd_claim(rd)) != NULL)
		return cause;
	rd->started = clock_now(&rd->clock);
	rd->looplag = looplag_new(rd->base);
	cs = robotsd_cache_settings(cf);
	fs = robotsd_fetch_settings(cf);
	if ((rd->fetcher = fetcher_new(rd->base, &fs)) == NULL)
		fatalx("out of memory");
	robotsd_tier_start(rd);
	if ((rd->cache = robotsd_cache_new(rd, &cs)) == NULL)
		fatalx("out of memory");
	rd->dispatch = dispatch_new(
	    rd->base, rd->cache, &rd->clock, stats_collect, &rd->stats);
	rd->feed = feed_new();
	dispatch_set_feed(rd->dispatch, rd->feed);
	feed_wire(rd->feed, rd->cache, rd->tier,
	    cf->redis_key_file != NULL ? cf->redis_key : NULL);
	robotsd_configure(rd);
	robotsd_load_state(rd);
	rd->saver = saver_new();
	ss = robotsd_server_settings(cf);
	fd = robotsd_passed_socket(cf, where, wsz);
	if ((rd->server = server_new(
	         rd->base, rd->dispatch, &ss, fd, &cause)) == NULL)
		fatalx("%s", cause);
	robotsd_admin_socket(rd, cf);
	rd->stats = (struct stats_sources){ rd->cache, rd->fetcher,
		rd->dispatch, rd->server, &rd->clock, rd->started, rd->shared,
		rd->looplag, rd->archive, rd->feed, &rd->limits };
	if (daemonize) {
		/* Keep the directory: relative paths in the config stay valid.
		 */
		if (daemon(1, 0) == -1)
			fatal("daemon");
		if (event_reinit(rd->base) == -1)
			fatalx("event_reinit failed");
	}
	robotsd_archive_start(rd, where); /* a thread: after daemon()'s fork */
	return NULL;
}

/* Free everything main() created. */
static void
robotsd_stop(struct robotsd *rd, struct signals *sig)
{
	metrics_free(rd->metrics);
	server_free(rd->server);
	dispatch_free(rd->dispatch);
	lifecycle_save_at_exit(rd->lc);
	saver_free(rd->saver);
	cache_free(rd->cache);
	archive_free(rd->archive); /* writes what is queued */
#ifdef HAVE_REDIS
	tier_free(rd->tier);
	shared_free(rd->shared);
#endif
	feed_free(rd->feed);
	fetcher_free(rd->fetcher);
	looplag_free(rd->looplag);
	event_free(sig->term);
	event_free(sig->intr);
	event_free(sig->hup);
	event_free(sig->drain);
	event_free(sig->save);
	event_free(sig->chld);
	sysd_watchdog_stop(sig->watchdog);
	lifecycle_free(rd->lc);
	/* A host name lookup the tier cancelled ends, and frees, from here. */
	event_base_loop(rd->base, EVLOOP_NONBLOCK);
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
	char *cause = NULL, kv[LOG_KV_BUF];
	unsigned long long wd_usec;
	int exit_now = 0;

	if ((rd.conf = config_load(argc, argv, &exit_now, &cause)) == NULL) {
		if (exit_now)
			return 0;
		return startup_bad_config(argc, argv, cause);
	}
	if (rd.conf->check_only) {
		/*
		 * Said when asked, not into the journal at every start and
		 * reload (the units run -n first) unless at debug.
		 */
		if (!log_fd_is_journal(STDOUT_FILENO) ||
		    rd.conf->log_level >= LOG_DEBUG)
			printf("configuration OK\n");
		config_free(rd.conf);
		return 0;
	}
	/* -f: stderr, even when a supervisor that is not the journal runs us */
	log_init(rd.conf->foreground, rd.conf->log_level);
	robotsd_warn_unsupported(rd.conf);
	/*
	 * The socket exists before the signal events do: hold TERM, INT and
	 * HUP until they are installed, so that a client that sees the socket
	 * and stops robotsd at once gets an orderly stop, not the default
	 * action.
	 */
	startup_hold_signals(SIG_BLOCK);
	if ((cause = robotsd_start(&rd, rd.where, sizeof(rd.where))) != NULL) {
		robotsd_unclaim(&rd);
		return startup_start_error(argc, argv, cause);
	}
	robotsd_signals(&rd, &sig);
	startup_hold_signals(SIG_UNBLOCK);
	lifecycle_schedule_save(rd.lc);
	if ((sig.watchdog = sysd_watchdog_start(rd.base, &wd_usec)) != NULL)
		log_event(
		    LOG_INFO, "watchdog", "interval_ms=%llu", wd_usec / 1000);
	log_event(LOG_INFO, "start", "version=%s socket=%s", PACKAGE_VERSION,
	    log_kvs(rd.where, kv, sizeof(kv)));
	sysd_status("serving %s", rd.where);
	sysd_ready();
	metrics_set_health(rd.metrics, METRICS_SERVING);
	server_take_over(rd.server); /* clients of config-error mode */
	event_base_dispatch(rd.base);
	log_event(LOG_INFO, "stopped", "%s", "");
	robotsd_stop(&rd, &sig);
	return 0;
}
