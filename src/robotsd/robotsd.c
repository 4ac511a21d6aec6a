/*
 * robotsd.c: main. Loads the configuration, wires the modules onto one
 * libevent loop (fetcher, cache, server), installs the signal and timer
 * events (signals.h) that drive the lifecycle (lifecycle.h: TERM/INT stop
 * accepting, answer what is in flight, exit 0; HUP reloads) and tears
 * everything down again. Exit status: 0 after a stop, EX_CONFIG
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
#include "ops/tdmres.h"
#include "policy/parse.h"
#include "feed/feed.h"
#include "feed/feed_wire.h"
#include "fetch/fetch.h"
#include "base/log.h"
#include "base/looplag.h"
#include "conn/metrics.h"
#include "daemon.h"
#include "base/sd.h"
#include "persist/saver.h"
#include "persist/state.h"
#include "conn/server.h"
#include "lifecycle.h"
#include "signals.h"
#include "startup.h"
#include "stats.h"
#ifdef HAVE_REDIS
#include "tier/shared.h"
#include "tier/tier.h"
#endif

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
	if (rd->tdm != NULL)
		cache_configure(rd->tdm, &cs);
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

/*
 * Load the caches saved by the last run, if --state-file says where:
 * robots.txt's, and tdmrep.json's unless --tdmrep off (then its records
 * are passed over, counted).
 */
static void
robotsd_load_state(struct robotsd *rd)
{
	const struct config *cf = rd->conf;
	struct state_caches cs = { rd->cache, rd->tdm };
	char *cause = NULL, kv[LOG_KV_BUF], more[64] = "";
	struct state_counts n;

	if (cf->state_file == NULL)
		return;
	(void)state_tmp_sweep(cf->state_file, robotsd_tmp_removed);
	if (access(cf->state_file, F_OK) == -1 && errno == ENOENT) {
		/* the first start: nothing was saved yet */
		log_debug("no state file %s yet: nothing to load",
		    log_kvs(cf->state_file, kv, sizeof(kv)));
		return;
	}
	if (state_load(&cs, cf->state_file, cf->cache_max_bytes, &n, &cause) ==
	    -1) {
		log_event(LOG_WARNING, "state_load_failed",
		    "error=%s outcome=nothing_loaded",
		    log_kvs(cause, kv, sizeof(kv)));
		free(cause);
		return;
	}
	if (rd->tdm != NULL)
		snprintf(more, sizeof(more), " tdmrep=%ld", n.tdm);
	else if (n.skipped > 0)
		snprintf(more, sizeof(more), " tdmrep_skipped=%ld", n.skipped);
	log_event(LOG_INFO, "state_loaded", "origins=%ld file=%s%s", n.robots,
	    log_kvs(cf->state_file, kv, sizeof(kv)), more);
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
 * The caches: robots.txt's, and tdmrep.json's (tdmres.h; none with
 * --tdmrep off), both through the fleet with --redis, under one
 * --cache-max-bytes. The second is empty until a check asks for it.
 */
static void
robotsd_caches_new(struct robotsd *rd, const struct cache_settings *cs)
{
	if ((rd->cache = robotsd_cache_new(rd, cs)) == NULL)
		fatalx("out of memory");
	if (parse_tdmrep(rd->conf->tdmrep) == TDM_OFF)
		return;
	if ((rd->tdm = robotsd_cache_new(rd, cs)) == NULL)
		fatalx("out of memory");
	cache_set_kind(rd->tdm, &tdm_kind);
	cache_share_budget(rd->cache, rd->tdm);
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
 * The caches' new-version seam, to the archive: a version fetched here
 * with an HTTP answer (any status) is queued as a response record, naming
 * its resource unless it is robots.txt. One read from the shared tier is
 * not (the instance that fetched it archives it), nor a network error,
 * timeout or refusal (no HTTP message to keep).
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
		snprintf(url, sizeof(url), "%s%s", c->origin, c->kind->path);
	memset(&r, 0, sizeof(r));
	r.date = c->at;
	r.target_uri = f->final_url != NULL ? f->final_url : url;
	r.origin = c->origin;
	r.resource = c->kind != &cache_kind_robots ? c->kind->name : NULL;
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
 * Start the WARC archive's writer (--archive-dir) and have the caches
 * (robots.txt's, tdmrep.json's) hand it each new version fetched here. Never
 * fatal: a missing directory is logged and counted, and robotsd answers as
 * ever. Its files take the group of the socket file at socket: who may query
 * robotsd may read them.
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
	if (cache_listen(rd->cache, robotsd_archive_change, rd->archive) ==
	        -1 ||
	    (rd->tdm != NULL && cache_listen(rd->tdm, robotsd_archive_change,
	                            rd->archive) == -1))
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
	robotsd_caches_new(rd, &cs);
	rd->dispatch = dispatch_new(
	    rd->base, rd->cache, &rd->clock, stats_collect, &rd->stats);
	dispatch_set_tdm(rd->dispatch, rd->tdm, parse_tdmrep(cf->tdmrep));
	rd->feed = feed_new();
	dispatch_set_feed(rd->dispatch, rd->feed);
	feed_wire(rd->feed, rd->cache, rd->tdm, rd->tier,
	    cf->redis_key_file != NULL ? cf->redis_key : NULL);
	robotsd_configure(rd);
	robotsd_load_state(rd);
	rd->saver = saver_new();
	ss = robotsd_server_settings(cf);
	fd = robotsd_passed_socket(cf, where, wsz);
	rd->server =
	    server_new(rd->base, &dispatch_session_ops, rd->dispatch, &ss);
	/* The admin socket first: once a client can connect, both exist. */
	robotsd_admin_socket(rd, cf);
	if (server_listen(rd->server, &ss, fd, &cause) == -1) {
		server_stop_accepting(rd->server); /* the admin socket's file */
		fatalx("%s", cause);
	}
	rd->stats = (struct stats_sources){ rd->cache, rd->fetcher,
		rd->dispatch, rd->server, &rd->clock, rd->started, rd->shared,
		rd->looplag, rd->archive, rd->feed, &rd->limits, rd->tdm };
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
	cache_free(rd->tdm);
	archive_free(rd->archive); /* writes what is queued */
#ifdef HAVE_REDIS
	tier_free(rd->tier);
	shared_free(rd->shared);
#endif
	feed_free(rd->feed);
	fetcher_free(rd->fetcher);
	looplag_free(rd->looplag);
	signals_free(rd, sig);
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
	signals_install(&rd, &sig, robotsd_reload);
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
