/*
 * options.c: the table of robotsd's options (options.h) and how one value
 * of one option is parsed into struct config. Every option is a row: its
 * name (long option and config file key), short option, type, range,
 * default, field, flags and help.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "conf/options.h"
#include "base/log.h"
#include "policy/netpolicy.h"
#include "policy/parse.h"
#include "policy/tier_url.h"
#include "base/xmalloc.h"

#define CONFIG_DEFAULT_FILE SYSCONFDIR "/robotsd.conf"
#define DAY 86400LL
#define TEN_YEARS (3650 * DAY)
#define KIB 1024LL
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

const struct option_def options[] = {
	{ "config", 'c', OT_CONFIG, 0, 0, NULL, OFF(config_file), 0, "FILE",
	    "config file (default: " CONFIG_DEFAULT_FILE " if it exists)" },
	{ "socket", 's', OT_STR, 0, 0, "/run/robotsd/robotsd.sock",
	    OFF(socket_path), 0, "PATH", "Unix socket to listen on" },
	{ "foreground", 'f', OT_FLAG, 0, 0, "no", OFF(foreground), 0, NULL,
	    "do not daemonize; log to stderr" },
	{ "socket-mode", 0, OT_MODE, 0, 0777, "0660", OFF(socket_mode), 0,
	    "MODE", "permissions of the socket file, octal" },
	{ "admin-group", 0, OT_STR, 0, 0, NULL, OFF(admin_group), OPT_RELOAD,
	    "GROUP", "members may purge, besides root and robotsd's own user" },
	{ "admin-socket", 0, OT_STR, 0, 0, NULL, OFF(admin_socket), 0, "PATH",
	    "also listen on PATH, mode 0660, group admin-group: every client "
	    "there may purge" },
	{ "user-agent", 0, OT_STR, 0, 0, "robotsd/" PACKAGE_VERSION,
	    OFF(user_agent), OPT_RELOAD, "STRING",
	    "User-Agent sent when fetching robots.txt" },
	{ "connect-to", 0, OT_LIST, 0, 0, NULL, OFF(connect_to), OPT_RELOAD,
	    "H:P:H2:P2", "fetch H:P from H2:P2 instead; may repeat" },
	{ "ca-file", 0, OT_STR, 0, 0, NULL, OFF(ca_file), OPT_RELOAD, "FILE",
	    "extra CA bundle for https fetches" },
	{ "default-ttl", 0, OT_LONG, 1, TEN_YEARS, "86400", OFF(default_ttl),
	    OPT_RELOAD, "SECONDS", "cache lifetime without Cache-Control" },
	{ "min-ttl", 0, OT_LONG, 0, TEN_YEARS, "60", OFF(min_ttl), OPT_RELOAD,
	    "SECONDS", "lower clamp for Cache-Control max-age" },
	{ "max-ttl", 0, OT_LONG, 0, TEN_YEARS, "2592000", OFF(max_ttl),
	    OPT_RELOAD, "SECONDS", "upper clamp for Cache-Control max-age" },
	{ "fetch-timeout", 0, OT_LONG, 1, DAY, "30", OFF(fetch_timeout),
	    OPT_RELOAD, "SECONDS", "whole-fetch timeout" },
	{ "max-fetches", 0, OT_LONG, 1, 1000000, "256", OFF(max_fetches),
	    OPT_RELOAD, "N", "fetches in flight at once" },
	{ "cache-max-bytes", 0, OT_BYTES, 1, 1024 * GIB, "1G",
	    OFF(cache_max_bytes), OPT_RELOAD, "BYTES",
	    "memory cap of the cache (LRU)" },
	{ "history-depth", 0, OT_LONG, 0, 255, "8", OFF(history_depth),
	    OPT_RELOAD, "N",
	    "distinct versions remembered per origin; 0: none" },
	{ "tdmrep", 0, OT_STR, 0, 0, "on-demand", OFF(tdmrep), 0,
	    "on-demand|always|off",
	    "fetch /.well-known/tdmrep.json when a check asks \"tdm\":true, "
	    "with every check, or never" },
	{ "state-file", 0, OT_STR, 0, 0, NULL, OFF(state_file), 0, "FILE",
	    "cache saved here on shutdown, loaded at start" },
	{ "state-save-interval", 0, OT_LONG, 0, TEN_YEARS, "300",
	    OFF(state_save_interval), OPT_RELOAD, "SECONDS",
	    "also save the state file this often; 0: only at exit" },
	{ "retry-min", 0, OT_LONG, 1, TEN_YEARS, "60", OFF(retry_min),
	    OPT_RELOAD, "SECONDS",
	    "first retry delay after a 5xx, network error or timeout" },
	{ "retry-max", 0, OT_LONG, 1, TEN_YEARS, "21600", OFF(retry_max),
	    OPT_RELOAD, "SECONDS", "cap of the doubling retry delay" },
	{ "retry-503-min", 0, OT_LONG, 1, TEN_YEARS, "30", OFF(retry_503_min),
	    OPT_RELOAD, "SECONDS", "first retry delay after a 503 or 429" },
	{ "retry-503-max", 0, OT_LONG, 1, TEN_YEARS, "3600", OFF(retry_503_max),
	    OPT_RELOAD, "SECONDS", "cap of the 503/429 retry delay" },
	{ "unreachable-allow-after", 0, OT_LONG, 0, TEN_YEARS, "2592000",
	    OFF(unreachable_allow_after), OPT_RELOAD, "SECONDS",
	    "allow all after failing this long without a break" },
	{ "max-connections", 0, OT_LONG, 1, 1000000, "4096",
	    OFF(max_connections), 0, "N", "client connections at once" },
	{ "max-waiting", 0, OT_LONG, 1, 100000000, "100000", OFF(max_waiting),
	    OPT_RELOAD, "N", "checks waiting on fetches at once" },
	{ "deny-private-addresses", 0, OT_BOOL, 0, 0, "yes",
	    OFF(deny_private_addresses), OPT_RELOAD, "yes|no",
	    "refuse to fetch from non-public addresses" },
	{ "redis", 0, OT_LIST, 0, 0, NULL, OFF(redis), 0, "URL",
	    "shared cache tier in Redis; may repeat" },
	{ "redis-timeout", 0, OT_LONG, 1, 60000, "250", OFF(redis_timeout), 0,
	    "MS", "Redis time a miss may take, milliseconds" },
	{ "redis-lock-time", 0, OT_LONG, 1, DAY, "40", OFF(redis_lock_time), 0,
	    "SECONDS", "longest lifetime of a fetch lock in Redis" },
	{ "archive-dir", 0, OT_STR, 0, 0, NULL, OFF(archive_dir), 0, "DIR",
	    "append each new robots.txt version fetched here to WARC files "
	    "in DIR" },
	{ "archive-max-file-bytes", 0, OT_BYTES, 64 * KIB, 1024 * GIB, "100M",
	    OFF(archive_max_file_bytes), 0, "BYTES",
	    "start a new archive file past this size" },
	{ "archive-max-bytes", 0, OT_BYTES, 0, 1024 * 1024 * GIB, "10G",
	    OFF(archive_max_bytes), 0, "BYTES",
	    "remove the oldest archive files past this total; 0: never" },
	{ "redis-key-file", 0, OT_STR, 0, 0, NULL, OFF(redis_key_file), 0,
	    "FILE", "the fleet's secret: Redis values carry its HMAC" },
	{ "redis-password-file", 0, OT_STR, 0, 0, NULL,
	    OFF(redis_password_file), 0, "FILE",
	    "Redis password for every --redis URL without one" },
	{ "redis-tls-ca-file", 0, OT_STR, 0, 0, NULL, OFF(redis_tls_ca_file), 0,
	    "FILE", "CA certificates for rediss:// (default: the system's)" },
	{ "redis-tls-cert-file", 0, OT_STR, 0, 0, NULL,
	    OFF(redis_tls_cert_file), 0, "FILE",
	    "client certificate for rediss:// (PEM)" },
	{ "redis-tls-key-file", 0, OT_STR, 0, 0, NULL, OFF(redis_tls_key_file),
	    0, "FILE", "private key of --redis-tls-cert-file (PEM)" },
	{ "redis-tls-server-name", 0, OT_STR, 0, 0, NULL,
	    OFF(redis_tls_server_name), 0, "NAME",
	    "name rediss:// servers' certificates must carry (default: the "
	    "URL's host)" },
	{ "stop-timeout", 0, OT_LONG, 0, DAY, "10", OFF(stop_timeout),
	    OPT_RELOAD, "SECONDS",
	    "at stop, answer checks still waiting after this; abandon "
	    "fetches" },
	{ "metrics", 0, OT_STR, 0, 0, NULL, OFF(metrics), 0, "ADDR:PORT",
	    "serve Prometheus metrics at /metrics" },
	{ "metrics-max-connections", 0, OT_LONG, 1, 100000, "64",
	    OFF(metrics_max_connections), 0, "N",
	    "metrics port connections at once; more wait to be accepted" },
	{ "log-level", 0, OT_LEVEL, 0, 0, "info", OFF(log_level), OPT_RELOAD,
	    "LEVEL", "error, warn, info or debug" },
	{ "max-line", 0, OT_SIZE, 64, 64 * MIB, "65536", OFF(max_line), 0,
	    "BYTES", "longest request line" },
	{ "max-output", 0, OT_SIZE, 4 * KIB, GIB, "8M", OFF(max_output), 0,
	    "BYTES", "output queued per connection before it is closed" },
	{ "max-output-total", 0, OT_SIZE, 64 * KIB, 64 * GIB, "64M",
	    OFF(all_output), 0, "BYTES",
	    "output queued for all connections together" },
	{ "write-timeout", 0, OT_LONG, 1, DAY, "60", OFF(write_timeout),
	    OPT_RELOAD, "SECONDS",
	    "close a client whose answers stay unread this long" },
	{ "test-clock", 0, OT_FLAG, 0, 0, "no", OFF(test_clock),
	    OPT_HIDDEN | OPT_ARGV, NULL,
	    "accept the \"clock\" op (tests only)" },
	{ NULL, 'n', OT_CHECK, 0, 0, NULL, OFF(check_only), 0, NULL,
	    "check the configuration and exit" },
	{ "help", 'h', OT_HELP, 0, 0, NULL, 0, 0, NULL, "show this help" },
	{ "version", 'V', OT_VERSION, 0, 0, NULL, 0, 0, NULL,
	    "show the version" },
};

const size_t noptions = sizeof(options) / sizeof(options[0]);
_Static_assert(
    sizeof(options) / sizeof(options[0]) <= OPTIONS_MAX, "raise OPTIONS_MAX");
#define NOPTIONS noptions

/* 1 for the options that only the command line can give. */
int
opt_argv_only(const struct option_def *d)
{
	return d->type >= OT_CONFIG || (d->flags & OPT_ARGV);
}

/* 1 when the option takes a value on the command line. */
int
opt_has_value(const struct option_def *d)
{
	return d->type <= OT_CONFIG && d->type != OT_FLAG;
}

/* Append to the NULL-terminated list at the option's place; first clears. */
static void
opt_list_add(
    struct config *cf, const struct option_def *d, const char *value, int first)
{
	char ***list = (char ***)(void *)((char *)cf + d->off);
	size_t *n = d->off == OFF(redis) ? &cf->nredis : &cf->nconnect_to;
	size_t i;

	if (first) {
		for (i = 0; i < *n; i++)
			free((*list)[i]);
		*n = 0;
	}
	*list = xreallocarray(*list, *n + 2, sizeof(**list));
	(*list)[(*n)++] = xstrdup(value);
	(*list)[*n] = NULL;
}

/* 0 if value is a valid item of list option d; else -1 and *err. */
static int
opt_list_check(const struct option_def *d, const char *value, char **err)
{
	struct tier_url u;
	const char *why;

	if (d->off == OFF(redis)) {
		if (tier_url_parse(value, &u, &why) == -1) {
			char *m = tier_url_masked(value);

			xasprintf(err, "'%s' is not a Redis URL: %s",
			    m != NULL ? m : "(URL)", why);
			free(m);
			return -1;
		}
		tier_url_clear(&u);
		return 0;
	}
	if (netpolicy_ct_parse(value, NULL) == -1) {
		xasprintf(err, "'%s' is not HOST:PORT:HOST2:PORT2", value);
		return -1;
	}
	return 0;
}

/* Message for a number out of range or malformed. */
static void
opt_range_error(const struct option_def *d, const char *value, char **err)
{
	const char *what = d->type == OT_LONG ? "number" : "size in bytes";

	xasprintf(err, "'%s' is not a %s between %lld and %lld", value, what,
	    d->min, d->max);
}

/* Parse a numeric value of d into *out; -1 and *err on error. */
static int
opt_parse_number(
    const struct option_def *d, const char *value, long long *out, char **err)
{
	const char *errstr;

	if (d->type == OT_MODE) {
		*out = parse_octal(value, d->min, d->max, &errstr);
		if (errstr != NULL)
			xasprintf(
			    err, "'%s' is not an octal mode up to 0777", value);
	} else {
		if (d->type == OT_LONG)
			*out = parse_num(value, d->min, d->max, &errstr);
		else
			*out = parse_size(value, d->min, d->max, &errstr);
		if (errstr != NULL)
			opt_range_error(d, value, err);
	}
	return errstr == NULL ? 0 : -1;
}

/*
 * Set option d from value (NULL: a flag given on the command line). first
 * is 1 the first time a source sets it (a list then replaces the old one).
 * Returns -1 and an allocated *err without location on error.
 */
int
opt_set(struct config *cf, const struct option_def *d, const char *value,
    int first, char **err)
{
	void *p = (char *)cf + d->off;
	long long n = 0;
	int b;

	switch (d->type) {
	case OT_STR:
		if (d->off == OFF(tdmrep) && parse_tdmrep(value) == -1) {
			xasprintf(
			    err, "'%s' is not on-demand, always or off", value);
			return -1;
		}
		free(*(char **)p);
		*(char **)p = xstrdup(value);
		return 0;
	case OT_FLAG:
	case OT_BOOL:
		if (value == NULL)
			b = 1;
		else if ((b = parse_bool(value)) == -1) {
			xasprintf(err, "'%s' is not yes or no", value);
			return -1;
		}
		*(int *)p = b;
		return 0;
	case OT_LEVEL:
		if ((b = log_level_parse(value)) == -1) {
			xasprintf(err, "'%s' is not error, warn, info or debug",
			    value);
			return -1;
		}
		*(int *)p = b;
		return 0;
	case OT_LIST:
		if (opt_list_check(d, value, err) == -1)
			return -1;
		opt_list_add(cf, d, value, first);
		return 0;
	case OT_CHECK:
		*(int *)p = 1;
		return 0;
	default:
		break;
	}
	if (opt_parse_number(d, value, &n, err) == -1)
		return -1;
	if (d->type == OT_LONG)
		*(long *)p = (long)n;
	else if (d->type == OT_BYTES)
		*(unsigned long long *)p = (unsigned long long)n;
	else if (d->type == OT_SIZE)
		*(size_t *)p = (size_t)n;
	else
		*(unsigned *)p = (unsigned)n;
	return 0;
}

/* Fill cf with the table's defaults. */
void
opt_defaults(struct config *cf)
{
	const struct option_def *d;
	char *err = NULL;

	cf->connect_to = xcalloc(1, sizeof(*cf->connect_to));
	for (d = options; d < options + NOPTIONS; d++) {
		if (d->def != NULL && opt_set(cf, d, d->def, 1, &err) == -1)
			fatalx("default of %s: %s", d->name, err);
	}
}

/* The table entry for a config file key; NULL if none. */
const struct option_def *
opt_find(const char *name)
{
	const struct option_def *d;

	for (d = options; d < options + NOPTIONS; d++)
		if (d->name != NULL && strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

/* Two bytes of names alike, case aside. */
static int
opt_same_char(char a, char b)
{
	return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/*
 * The edit distance of a and b, case aside: insertions, deletions,
 * substitutions and swaps of two neighbours (optimal string alignment),
 * each 1. Both are at most OPT_SUGGEST_MAX bytes long.
 */
static size_t
opt_distance(const char *a, const char *b)
{
	size_t row[3][OPT_SUGGEST_MAX + 1], la = strlen(a), lb = strlen(b);
	size_t i, j, v, *cur, *prev, *prev2;

	for (j = 0; j <= lb; j++)
		row[0][j] = j;
	for (i = 1; i <= la; i++) {
		cur = row[i % 3], prev = row[(i - 1) % 3];
		prev2 = row[(i + 1) % 3];
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			v = prev[j - 1] + !opt_same_char(a[i - 1], b[j - 1]);
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 &&
			    opt_same_char(a[i - 1], b[j - 2]) &&
			    opt_same_char(a[i - 2], b[j - 1]) &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
	}
	return row[la % 3][lb];
}

/* The option an unknown name is a slip for; see options.h. */
const char *
opt_suggest(const char *name, int in_file)
{
	const struct option_def *d, *best = NULL;
	size_t len = strlen(name), dist, best_dist = 3;

	if (len == 0 || len > OPT_SUGGEST_MAX)
		return NULL;
	for (d = options; d < options + NOPTIONS; d++) {
		if (d->name == NULL || (d->flags & OPT_HIDDEN) ||
		    (in_file && opt_argv_only(d)) ||
		    strlen(d->name) > OPT_SUGGEST_MAX)
			continue;
		dist = opt_distance(name, d->name);
		if (dist < best_dist && 2 * dist < len) {
			best = d;
			best_dist = dist;
		}
	}
	return best != NULL ? best->name : NULL;
}
