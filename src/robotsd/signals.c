/*
 * signals.c: robotsd's signals and timers as lifecycle events, and the
 * lifecycle's ops over the daemon's modules (signals.h).
 */
#include <config.h>

#include <signal.h>
#include <string.h>

#include <event2/event.h>

#include "base/log.h"
#include "base/sd.h"
#include "cache/cache.h"
#include "conf/conf.h"
#include "conn/metrics.h"
#include "conn/server.h"
#include "ops/dispatch.h"
#include "persist/saver.h"
#include "persist/state.h"
#include "wire/buf.h"
#include "signals.h"

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

/* One origin being fetched: counted, and named if among the first. */
static void
signals_stop_fetch_cb(const struct cache_entry *e, int good, void *arg)
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
signals_log_stopping(struct robotsd *rd, int signo)
{
	struct stop_fetches sf = { 0, BUF_INIT(0) };
	char kv[LOG_KV_BUF];

	cache_foreach_fetching(rd->cache, signals_stop_fetch_cb, &sf);
	buf_add(&sf.names, "", 1);
	log_event(LOG_INFO, "stopping",
	    "signal=%d waiting=%zu fetches=%zu origins=%s stop_timeout=%ld",
	    signo, cache_stats(rd->cache)->waiting, sf.n,
	    log_kvs(sf.names.state == BUF_OK && sf.n > 0 ? sf.names.p : NULL,
	        kv, sizeof(kv)),
	    rd->conf->stop_timeout);
	buf_clear(&sf.names);
}

/* The wall clock, for the drain's deadline. */
static double
signals_now(void *arg)
{
	(void)arg;
	return clock_wall(NULL);
}

/* The live config's stop and save settings. */
static void
signals_settings(void *arg, struct lifecycle_settings *s)
{
	const struct config *cf = ((struct robotsd *)arg)->conf;

	s->stop_timeout = cf->stop_timeout;
	s->save_interval = cf->state_save_interval;
	s->saves = cf->state_file != NULL;
}

/* A stop begins: its log line, the health endpoint and systemd. */
static void
signals_announce_stop(void *arg, int signo)
{
	struct robotsd *rd = arg;

	signals_log_stopping(rd, signo);
	metrics_set_health(rd->metrics, METRICS_STOPPING);
	sysd_status("stopping: answering the checks in flight");
	sysd_stopping();
}

/* Stop taking new clients. */
static void
signals_stop_accepting(void *arg)
{
	server_stop_accepting(((struct robotsd *)arg)->server);
}

/* Whether a client is not answered yet. */
static int
signals_busy(void *arg)
{
	return server_busy(((struct robotsd *)arg)->server);
}

/* Answer the checks still waiting "timeout". */
static void
signals_expire_waiting(void *arg)
{
	dispatch_expire_waiting(((struct robotsd *)arg)->dispatch);
}

/* Look every DRAIN_POLL_USEC whether the clients are answered. */
static void
signals_drain_arm(void *arg)
{
	struct robotsd *rd = arg;
	struct timeval tv = { 0, DRAIN_POLL_USEC };

	evtimer_add(rd->signals->drain, &tv);
}

/* Leave the loop at the end of this turn. */
static void
signals_exit_loop(void *arg)
{
	event_base_loopexit(((struct robotsd *)arg)->base, NULL);
}

/* Leave the loop now. */
static void
signals_break_loop(void *arg)
{
	event_base_loopbreak(((struct robotsd *)arg)->base);
}

/* (Re)arm the periodic save timer; 0 disarms it. */
static void
signals_save_arm(void *arg, long seconds)
{
	struct robotsd *rd = arg;
	struct timeval tv = { seconds, 0 };

	evtimer_del(rd->signals->save);
	if (seconds > 0)
		event_add(rd->signals->save, &tv);
}

/* Save the caches to --state-file in a child process (saver.h). */
static int
signals_save_start(void *arg)
{
	struct robotsd *rd = arg;
	struct state_caches cs = { rd->cache, rd->tdm };

	return saver_start(
	    rd->saver, &cs, rd->conf->state_file, STATE_SAVE_TIMEOUT);
}

/* Abandon a save still running. */
static void
signals_save_cancel(void *arg, const char *why)
{
	saver_cancel(((struct robotsd *)arg)->saver, why);
}

/* Reap a save that ended. */
static void
signals_save_poll(void *arg)
{
	saver_poll(((struct robotsd *)arg)->saver);
}

/* Wait for the running save, until its deadline. */
static void
signals_save_wait(void *arg)
{
	saver_wait(((struct robotsd *)arg)->saver);
}

static const struct lifecycle_ops signals_ops = {
	signals_now,
	signals_settings,
	signals_announce_stop,
	signals_stop_accepting,
	signals_busy,
	signals_expire_waiting,
	signals_drain_arm,
	signals_exit_loop,
	signals_break_loop,
	NULL, /* the caller's reload */
	signals_save_arm,
	signals_save_start,
	signals_save_cancel,
	signals_save_poll,
	signals_save_wait,
};

/* SIGTERM/SIGINT: stop accepting and drain; a second one exits now. */
static void
signals_term_cb(evutil_socket_t signo, short what, void *arg)
{
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_TERM, (int)signo);
}

/* SIGHUP: reload. */
static void
signals_hup_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_HUP, SIGHUP);
}

/* The drain's poll timer. */
static void
signals_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_DRAIN_TICK, 0);
}

/* --state-save-interval ran out. */
static void
signals_save_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_SAVE_TICK, 0);
}

/* SIGCHLD: a save may have ended. */
static void
signals_chld_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lifecycle_event(((struct robotsd *)arg)->lc, LC_CHLD, SIGCHLD);
}

/*
 * Install the signal events and the lifecycle they feed, which reloads
 * the config with reload (lifecycle_ops' reload).
 */
void
signals_install(struct robotsd *rd, struct signals *sig, int (*reload)(void *))
{
	signal(SIGPIPE, SIG_IGN);
	rd->signals = sig;
	sig->ops = signals_ops;
	sig->ops.reload = reload;
	if ((rd->lc = lifecycle_new(&sig->ops, rd)) == NULL)
		fatalx("out of memory");
	sig->term = evsignal_new(rd->base, SIGTERM, signals_term_cb, rd);
	sig->intr = evsignal_new(rd->base, SIGINT, signals_term_cb, rd);
	sig->hup = evsignal_new(rd->base, SIGHUP, signals_hup_cb, rd);
	sig->drain = event_new(rd->base, -1, EV_PERSIST, signals_drain_cb, rd);
	sig->save = event_new(rd->base, -1, EV_PERSIST, signals_save_cb, rd);
	sig->chld = evsignal_new(rd->base, SIGCHLD, signals_chld_cb, rd);
	if (sig->term == NULL || sig->intr == NULL || sig->hup == NULL ||
	    sig->drain == NULL || sig->save == NULL || sig->chld == NULL ||
	    evsignal_add(sig->chld, NULL) == -1 ||
	    evsignal_add(sig->term, NULL) == -1 ||
	    evsignal_add(sig->intr, NULL) == -1 ||
	    evsignal_add(sig->hup, NULL) == -1)
		fatalx("cannot install signal handlers");
}

/* Free the signal events, the watchdog timer and the lifecycle. */
void
signals_free(struct robotsd *rd, struct signals *sig)
{
	event_free(sig->term);
	event_free(sig->intr);
	event_free(sig->hup);
	event_free(sig->drain);
	event_free(sig->save);
	event_free(sig->chld);
	sysd_watchdog_stop(sig->watchdog);
	lifecycle_free(rd->lc);
	rd->lc = NULL;
}
