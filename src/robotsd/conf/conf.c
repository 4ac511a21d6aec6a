/*
 * conf.c: loading robotsd's options (options.h) from the command line and
 * the config file ("name value" lines, robotsd.conf(5)), --help, and
 * SIGHUP reload. Owns struct config and all it points to, including a
 * private copy of argv that reload re-applies so that the command line
 * keeps winning over the file.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <sys/stat.h>

#include "conf/conf.h"
#include "conf/options.h"
#include "base/log.h"
#include "policy/netpolicy.h"
#include "policy/parse.h"
#include "policy/tier_tag.h"
#include "policy/tier_url.h"
#include "base/xmalloc.h"

#define CONFIG_DEFAULT_FILE SYSCONFDIR "/robotsd.conf"
#define NOPTIONS noptions

/* An option from the command line, applied after the file. */
struct argv_opt {
	const struct option_def *def;
	const char *value; /* NULL: none */
};

/* Cut leading and trailing white space off s, in place. */
static char *
strip(char *s)
{
	size_t len;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
	return s;
}

/*
 * "; did you mean PREFIXNAME?" when the unknown option name (len bytes) is
 * a slip for one (opt_suggest()), else "": in buf.
 */
static const char *
config_did_you_mean(const char *name, size_t len, int in_file,
    const char *prefix, char *buf, size_t size)
{
	char key[OPT_SUGGEST_MAX + 1];
	const char *near;

	buf[0] = '\0';
	if (len > OPT_SUGGEST_MAX)
		return buf;
	memcpy(key, name, len);
	key[len] = '\0';
	if ((near = opt_suggest(key, in_file)) != NULL)
		snprintf(buf, size, "; did you mean %s%s?", prefix, near);
	return buf;
}

/* Apply one config file line; -1 and *cause ("FILE:LINE: ...") on error. */
static int
config_file_line(struct config *cf, char *line, const char *file,
    unsigned lineno, unsigned char *seen, char **cause)
{
	const struct option_def *d;
	char *name, *value, *err = NULL, near[OPT_SUGGEST_MAX + 32];

	name = strip(line);
	if (*name == '\0' || *name == '#')
		return 0;
	value = name + strcspn(name, " \t");
	if (*value != '\0')
		*value++ = '\0';
	value = strip(value);
	if ((d = opt_find(name)) == NULL) {
		xasprintf(cause, "%s:%u: unknown option '%s'%s", file, lineno,
		    name,
		    config_did_you_mean(
		        name, strlen(name), 1, "", near, sizeof(near)));
		return -1;
	}
	if (opt_argv_only(d)) {
		xasprintf(cause, "%s:%u: %s: only valid on the command line",
		    file, lineno, name);
		return -1;
	}
	if (*value == '\0') {
		xasprintf(
		    cause, "%s:%u: %s: missing value", file, lineno, name);
		return -1;
	}
	if (opt_set(cf, d, value, !seen[d - options], &err) == -1) {
		xasprintf(cause, "%s:%u: %s: %s", file, lineno, name, err);
		free(err);
		return -1;
	}
	seen[d - options] = 1;
	return 0;
}

/* Read the config file at path (shown as file); -1 and *cause on error. */
static int
config_read_file(
    struct config *cf, const char *path, const char *file, char **cause)
{
	unsigned char seen[OPTIONS_MAX] = { 0 };
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	FILE *fp;
	int rv = -1;

	if ((fp = fopen(path, "r")) == NULL) {
		xasprintf(cause, "%s: %s", file, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, fp) != -1) {
		if (config_file_line(cf, line, file, ++lineno, seen, cause) ==
		    -1)
			goto out;
	}
	if (ferror(fp)) {
		xasprintf(cause, "%s: %s", file, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	free(line);
	fclose(fp);
	return rv;
}

/* Print --help, generated from the table, to stdout. */
static void
config_usage(void)
{
	const struct option_def *d;
	char left[64];

	printf("usage: robotsd [-fhnV] [-c file] [-s path] [--option value "
	       "...]\n");
	for (d = options; d < options + NOPTIONS; d++) {
		if (d->flags & OPT_HIDDEN)
			continue;
		snprintf(left, sizeof(left), "%c%c%s%s%s%s%s",
		    d->shortopt ? '-' : ' ', d->shortopt ? d->shortopt : ' ',
		    d->shortopt && d->name ? ", " : "  ", d->name ? "--" : "",
		    d->name ? d->name : "", d->arg ? " " : "",
		    d->arg ? d->arg : "");
		if (strlen(left) > 28)
			printf("  %s\n  %-28s %s", left, "", d->help);
		else
			printf("  %-28s %s", left, d->help);
		if (d->def != NULL && d->type != OT_FLAG)
			printf(" (default: %s)", d->def);
		printf("\n");
	}
}

/* getopt_long's view of the table, and its short option string. */
static void
config_getopt_tables(struct option *longopts, char *shortopts)
{
	const struct option_def *d;
	size_t n = 0, s = 0;

	shortopts[s++] = '+'; /* stop at the first non-option */
	shortopts[s++] = ':'; /* ':' for a missing value */
	for (d = options; d < options + NOPTIONS; d++) {
		if (d->shortopt) {
			shortopts[s++] = (char)d->shortopt;
			if (opt_has_value(d))
				shortopts[s++] = ':';
		}
		if (d->name == NULL)
			continue;
		longopts[n].name = d->name;
		longopts[n].has_arg =
		    opt_has_value(d) ? required_argument : no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = 256 + (int)(d - options);
		n++;
	}
	shortopts[s] = '\0';
	memset(&longopts[n], 0, sizeof(longopts[n]));
}

/* The table entry for getopt_long's return value c; NULL if none. */
static const struct option_def *
opt_for_getopt(int c)
{
	const struct option_def *d;

	if (c >= 256 && c < 256 + (int)NOPTIONS)
		return &options[c - 256];
	for (d = options; d < options + NOPTIONS; d++)
		if (c != 0 && d->shortopt == c)
			return d;
	return NULL;
}

/* The error for a getopt_long failure ('?' or ':') at argv[optind - 1]. */
static void
config_getopt_error(int c, char **argv, char **cause)
{
	const struct option_def *d = opt_for_getopt(optopt);
	const char *arg = argv[optind - 1];
	char near[OPT_SUGGEST_MAX + 32];
	size_t len = strcspn(arg, "=");

	if (c == ':' && d != NULL && optopt < 256)
		xasprintf(cause, "-%c: missing value", optopt);
	else if (c == ':' && d != NULL)
		xasprintf(cause, "--%s: missing value", d->name);
	else if (d != NULL && optopt >= 256)
		xasprintf(cause, "--%s: takes no value", d->name);
	else if (optopt != 0)
		xasprintf(cause, "unknown option '-%c'", optopt);
	else
		xasprintf(cause, "unknown option '%.*s'%s", (int)len, arg,
		    len > 2 && strncmp(arg, "--", 2) == 0
		        ? config_did_you_mean(
		              arg + 2, len - 2, 0, "--", near, sizeof(near))
		        : "");
}

/*
 * Scan argv into out[] (applied after the file). -1 and *cause on error;
 * -1 and *exit_now without a cause after --help or --version.
 */
static int
config_scan_argv(int argc, char **argv, struct argv_opt *out, size_t *nout,
    int *exit_now, char **cause)
{
	struct option longopts[OPTIONS_MAX + 1];
	char shortopts[2 * OPTIONS_MAX + 3];
	const struct option_def *d;
	int c;

	config_getopt_tables(longopts, shortopts);
	optind = 0;
	opterr = 0;
	*nout = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if ((d = opt_for_getopt(c)) == NULL || c == '?' || c == ':') {
			config_getopt_error(c, argv, cause);
			return -1;
		}
		if (d->type == OT_HELP || d->type == OT_VERSION) {
			if (d->type == OT_HELP)
				config_usage();
			else
				printf("robotsd %s\n", PACKAGE_VERSION);
			*exit_now = 1;
			return -1;
		}
		if (opt_has_value(d) && *optarg == '\0') {
			xasprintf(cause, "--%s: missing value", d->name);
			return -1;
		}
		out[*nout].def = d;
		out[(*nout)++].value = opt_has_value(d) ? optarg : NULL;
	}
	if (optind < argc) {
		xasprintf(cause, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

/* Apply the scanned command line over the file's values. */
static int
config_apply_argv(
    struct config *cf, const struct argv_opt *opts, size_t n, char **cause)
{
	unsigned char seen[OPTIONS_MAX] = { 0 };
	const struct option_def *d;
	char *err = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		d = opts[i].def;
		if (d->type == OT_CONFIG)
			continue;
		if (opt_set(cf, d, opts[i].value, !seen[d - options], &err) ==
		    -1) {
			xasprintf(cause, "--%s: %s", d->name, err);
			free(err);
			return -1;
		}
		seen[d - options] = 1;
	}
	return 0;
}

#ifdef HAVE_REDIS
/* A file option that names a file robotsd cannot read: why, else NULL. */
static int
config_check_readable(const char *opt, const char *path, char **cause)
{
	if (path == NULL || access(path, R_OK) == 0)
		return 0;
	xasprintf(cause, "%s: %s: %s", opt, path, strerror(errno));
	return -1;
}

/*
 * What each URL needs beyond its syntax: TLS built in for rediss://, a
 * password for a user name, and the TLS files readable.
 */
static int
config_check_redis_urls(const struct config *cf, char **cause)
{
	struct tier_url u;
	const char *why;
	size_t i;
	int tls = 0;

	for (i = 0; i < cf->nredis; i++) {
		if (tier_url_parse(cf->redis[i], &u, &why) == -1)
			continue; /* refused when the option was read */
#ifndef HAVE_REDIS_TLS
		if (u.tls) {
			xasprintf(cause,
			    "redis: %s: rediss:// needs TLS, and this robotsd "
			    "was built without it (TLS needs hiredis 1.0 or "
			    "later with hiredis_ssl, as in Debian 13)",
			    u.name);
			tier_url_clear(&u);
			return -1;
		}
#endif
		if (u.user != NULL && u.password == NULL &&
		    cf->redis_password_file == NULL) {
			xasprintf(cause,
			    "redis: %s: user '%s' has no password: give it in "
			    "the URL (USER:PASSWORD@) or --redis-password-file",
			    u.name, u.user);
			tier_url_clear(&u);
			return -1;
		}
		tls |= u.tls;
		tier_url_clear(&u);
	}
	if (!tls)
		return 0;
	if ((cf->redis_tls_cert_file == NULL) !=
	    (cf->redis_tls_key_file == NULL)) {
		xasprintf(cause, "redis-tls-cert-file and redis-tls-key-file "
		                 "go together: give both or neither");
		return -1;
	}
	if (config_check_readable(
	        "redis-tls-ca-file", cf->redis_tls_ca_file, cause) == -1 ||
	    config_check_readable(
	        "redis-tls-cert-file", cf->redis_tls_cert_file, cause) == -1 ||
	    config_check_readable(
	        "redis-tls-key-file", cf->redis_tls_key_file, cause) == -1)
		return -1;
	return 0;
}
#endif

/* The shared tier: only with hiredis, and a lock that outlives a fetch. */
static int
config_check_redis(const struct config *cf, char **cause)
{
	if (cf->nredis == 0)
		return 0;
#ifndef HAVE_REDIS
	xasprintf(cause,
	    "redis: this robotsd was built without hiredis, so it has no "
	    "shared "
	    "Redis tier; rebuild it with hiredis (libhiredis-dev) or drop "
	    "--redis");
	return -1;
#else
	if (cf->nredis > TIER_MAX_SERVERS) {
		xasprintf(cause,
		    "redis: %zu servers given, at most %d (stats and /metrics "
		    "show each one's state)",
		    cf->nredis, TIER_MAX_SERVERS);
		return -1;
	}
	if (cf->redis_lock_time <= cf->fetch_timeout) {
		xasprintf(cause,
		    "redis-lock-time (%ld) must be greater than fetch-timeout "
		    "(%ld): a lock must outlive the fetch it guards",
		    cf->redis_lock_time, cf->fetch_timeout);
		return -1;
	}
	return config_check_redis_urls(cf, cause);
#endif
}

/*
 * --redis-key-file: a regular file neither readable nor writable by
 * others (its group may read it: a robotsd group shares it), holding 64
 * hex digits and an optional newline.
 */
static int
config_load_key(struct config *cf, char **cause)
{
	const char *path = cf->redis_key_file, *bad = NULL;
	char text[2 * TIER_KEY_LEN + 2];
	struct stat st;
	ssize_t n = -1;
	int fd;

	if (path == NULL)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) ==
	        -1 ||
	    fstat(fd, &st) == -1)
		bad = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
		xasprintf(cause,
		    "redis-key-file: %s: readable or writable by others (mode "
		    "%04o); the fleet's secret must not be: chmod o-rw it",
		    path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	} else if ((n = read(fd, text, sizeof(text))) == -1)
		bad = strerror(errno);
	else
		bad = tier_key_parse(text, (size_t)n, cf->redis_key);
	if (fd != -1)
		close(fd);
	explicit_bzero(text, sizeof(text));
	if (bad != NULL) {
		xasprintf(cause, "redis-key-file: %s: %s", path, bad);
		return -1;
	}
	return 0;
}

/* See conf.h. */
char *
config_redis_password(const struct config *cf, char **cause)
{
	char buf[1024];
	size_t n;
	FILE *f;

	*cause = NULL;
	if (cf->redis_password_file == NULL)
		return NULL;
	if ((f = fopen(cf->redis_password_file, "re")) == NULL) {
		xasprintf(cause, "redis-password-file: %s: %s",
		    cf->redis_password_file, strerror(errno));
		return NULL;
	}
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\r\n");
	if (n == 0 || n == sizeof(buf) - 1) {
		xasprintf(cause, "redis-password-file: %s: %s",
		    cf->redis_password_file,
		    n == 0 ? "empty first line" : "first line too long");
		return NULL;
	}
	buf[n] = '\0';
	return xstrdup(buf);
}

/* Values that parse but cannot work: say so now, not at the first use. */
static int
config_check_values(const struct config *cf, char **cause)
{
	if (cf->metrics != NULL &&
	    parse_hostport(cf->metrics, NULL, NULL) == -1) {
		xasprintf(cause, "metrics: '%s' is not ADDR:PORT", cf->metrics);
		return -1;
	}
	if (cf->redis_password_file != NULL) {
		char *pw = config_redis_password(cf, cause);

		if (pw == NULL)
			return -1;
		explicit_bzero(pw, strlen(pw));
		free(pw);
	}
	if (cf->admin_group != NULL && getgrnam(cf->admin_group) == NULL) {
		xasprintf(cause, "admin-group: no group '%s'", cf->admin_group);
		return -1;
	}
	if (cf->admin_socket != NULL &&
	    strcmp(cf->admin_socket, cf->socket_path) == 0) {
		xasprintf(cause, "admin-socket: %s is the socket itself",
		    cf->admin_socket);
		return -1;
	}
	if (cf->ca_file != NULL && access(cf->ca_file, R_OK) == -1) {
		xasprintf(
		    cause, "ca-file: %s: %s", cf->ca_file, strerror(errno));
		return -1;
	}
	return config_check_redis(cf, cause);
}

/* Check that each lower bound is at most its upper bound. */
static int
config_cross_check(const struct config *cf, char **cause)
{
	static const struct {
		const char *lo, *hi;
		size_t lo_off, hi_off;
	} pairs[] = {
		{ "min-ttl", "max-ttl", OFF(min_ttl), OFF(max_ttl) },
		{ "retry-min", "retry-max", OFF(retry_min), OFF(retry_max) },
		{ "retry-503-min", "retry-503-max", OFF(retry_503_min),
		    OFF(retry_503_max) },
	};
	const char *base = (const char *)cf;
	long lo, hi;
	size_t i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		lo = *(const long *)(base + pairs[i].lo_off);
		hi = *(const long *)(base + pairs[i].hi_off);
		if (lo > hi) {
			xasprintf(cause, "%s (%ld) is greater than %s (%ld)",
			    pairs[i].lo, lo, pairs[i].hi, hi);
			return -1;
		}
	}
	return 0;
}

/*
 * Find and read the config file: keep (reload), else -c, else the default
 * one if it exists. Sets cf->config_file to its absolute path.
 */
static int
config_load_file(struct config *cf, const char *keep,
    const struct argv_opt *opts, size_t n, char **cause)
{
	const char *file = keep;
	char *real;
	size_t i;

	for (i = 0; i < n && keep == NULL; i++)
		if (opts[i].def->type == OT_CONFIG)
			file = opts[i].value; /* the last -c wins */
	if (file == NULL) {
		if (access(CONFIG_DEFAULT_FILE, F_OK) == -1 && errno == ENOENT)
			return 0;
		file = CONFIG_DEFAULT_FILE;
	}
	if (config_read_file(cf, file, file, cause) == -1)
		return -1;
	if ((real = realpath(file, NULL)) == NULL)
		real = xstrdup(file);
	cf->config_file = real;
	return 0;
}

/* A private, NULL-terminated copy of argv. */
static char **
argv_dup(int argc, char **argv)
{
	char **copy = xcalloc((size_t)argc + 1, sizeof(*copy));
	int i;

	for (i = 0; i < argc; i++)
		copy[i] = xstrdup(argv[i]);
	return copy;
}

/* Defaults, then the file, then argv; keep: the file to re-read. */
static struct config *
config_build(
    int argc, char **argv, const char *keep, int *exit_now, char **cause)
{
	struct config *cf = xcalloc(1, sizeof(*cf));
	struct argv_opt *opts = xcalloc((size_t)argc + 1, sizeof(*opts));
	size_t n;

	*cause = NULL;
	*exit_now = 0;
	cf->argc = argc;
	cf->argv = argv_dup(argc, argv);
	opt_defaults(cf);
	if (config_scan_argv(argc, cf->argv, opts, &n, exit_now, cause) == -1 ||
	    config_load_file(cf, keep, opts, n, cause) == -1 ||
	    config_apply_argv(cf, opts, n, cause) == -1 ||
	    config_cross_check(cf, cause) == -1 ||
	    config_check_values(cf, cause) == -1 ||
	    config_load_key(cf, cause) == -1) {
		config_free(cf);
		cf = NULL;
	}
	free(opts);
	return cf;
}

/* Build the config from defaults, the config file and argv. */
struct config *
config_load(int argc, char **argv, int *exit_now, char **cause)
{
	return config_build(argc, argv, NULL, exit_now, cause);
}

/*
 * The last "metrics" line of the file at path whose value is ADDR:PORT,
 * every other line, good or bad, passed over; NULL if none.
 */
static char *
config_scan_metrics(const char *path)
{
	char *line = NULL, *name, *value, *addr = NULL;
	size_t cap = 0;
	FILE *fp;

	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	while (getline(&line, &cap, fp) != -1) {
		name = strip(line);
		value = name + strcspn(name, " \t");
		if (*value != '\0')
			*value++ = '\0';
		value = strip(value);
		if (strcmp(name, "metrics") != 0 ||
		    parse_hostport(value, NULL, NULL) == -1)
			continue;
		free(addr);
		addr = xstrdup(value);
	}
	free(line);
	fclose(fp);
	return addr;
}

/* Where metrics go while the config does not load; see conf.h. */
char *
config_metrics_address(int argc, char **argv)
{
	struct argv_opt *opts = xcalloc((size_t)argc + 1, sizeof(*opts));
	char **copy = argv_dup(argc, argv), *cause = NULL, *addr = NULL;
	const char *file = NULL, *given = NULL;
	size_t n = 0, i;
	int exit_now = 0, j;

	/* What argv says as far as it scans: -c, --metrics. */
	(void)config_scan_argv(argc, copy, opts, &n, &exit_now, &cause);
	free(cause);
	for (i = 0; i < n; i++) {
		if (opts[i].def->type == OT_CONFIG)
			file = opts[i].value;
		else if (opts[i].def->off == OFF(metrics) &&
		         parse_hostport(opts[i].value, NULL, NULL) == 0)
			given = opts[i].value;
	}
	if (given != NULL)
		addr = xstrdup(given);
	else if (file != NULL)
		addr = config_scan_metrics(file);
	else if (access(CONFIG_DEFAULT_FILE, F_OK) == 0)
		addr = config_scan_metrics(CONFIG_DEFAULT_FILE);
	for (j = 0; j < argc; j++)
		free(copy[j]);
	free(copy);
	free(opts);
	return addr;
}

/* 1 when option d has the same value in a and b. */
static int
opt_equal(
    const struct option_def *d, const struct config *a, const struct config *b)
{
	const char *pa = (const char *)a + d->off;
	const char *pb = (const char *)b + d->off;
	const char *sa, *sb;

	switch (d->type) {
	case OT_STR:
		sa = *(char *const *)pa;
		sb = *(char *const *)pb;
		return sa == sb || (sa && sb && strcmp(sa, sb) == 0);
	case OT_FLAG:
	case OT_BOOL:
	case OT_LEVEL:
		return *(const int *)pa == *(const int *)pb;
	case OT_LONG:
		return *(const long *)pa == *(const long *)pb;
	case OT_SIZE:
		return *(const size_t *)pa == *(const size_t *)pb;
	case OT_MODE:
		return *(const unsigned *)pa == *(const unsigned *)pb;
	default:
		return 1; /* reloadable or command line only */
	}
}

/* Copy option d's value from src to dst (types opt_equal compares). */
static void
opt_copy(
    const struct option_def *d, struct config *dst, const struct config *src)
{
	char *pd = (char *)dst + d->off;
	const char *ps = (const char *)src + d->off;
	const char *s;

	if (d->type == OT_STR) {
		s = *(char *const *)ps;
		free(*(char **)pd);
		*(char **)pd = s != NULL ? xstrdup(s) : NULL;
	} else if (d->type == OT_FLAG || d->type == OT_BOOL ||
	           d->type == OT_LEVEL)
		*(int *)pd = *(const int *)ps;
	else if (d->type == OT_LONG)
		*(long *)pd = *(const long *)ps;
	else if (d->type == OT_SIZE)
		*(size_t *)pd = *(const size_t *)ps;
	else if (d->type == OT_MODE)
		*(unsigned *)pd = *(const unsigned *)ps;
}

/*
 * Re-read the file, re-apply argv; options that need a restart keep, and
 * *kept names them (see conf.h).
 */
struct config *
config_reload(const struct config *old, char **kept, char **cause)
{
	const struct option_def *d;
	struct config *cf;
	char *names;
	int exit_now;

	*kept = NULL;
	cf = config_build(
	    old->argc, old->argv, old->config_file, &exit_now, cause);
	if (cf == NULL)
		return NULL;
	for (d = options; d < options + NOPTIONS; d++) {
		if ((d->flags & OPT_RELOAD) || opt_equal(d, old, cf))
			continue;
		log_event(LOG_WARNING, "reload_needs_restart",
		    "option=%s note=\"changed; takes effect after a "
		    "restart\"",
		    d->name);
		opt_copy(d, cf, old);
		xasprintf(&names, "%s%s%s", *kept != NULL ? *kept : "",
		    *kept != NULL ? "," : "", d->name);
		free(*kept);
		*kept = names;
	}
	return cf;
}

/* Free cf and everything it owns. */
void
config_free(struct config *cf)
{
	size_t i;
	int j;

	if (cf == NULL)
		return;
	free(cf->config_file);
	free(cf->socket_path);
	free(cf->user_agent);
	for (i = 0; i < cf->nconnect_to; i++)
		free(cf->connect_to[i]);
	free(cf->connect_to);
	free(cf->ca_file);
	free(cf->state_file);
	free(cf->tdmrep);
	for (i = 0; i < cf->nredis; i++)
		free(cf->redis[i]);
	free(cf->redis);
	free(cf->redis_key_file);
	explicit_bzero(cf->redis_key, sizeof(cf->redis_key));
	free(cf->metrics);
	free(cf->archive_dir);
	free(cf->admin_group);
	free(cf->admin_socket);
	free(cf->redis_password_file);
	free(cf->redis_tls_ca_file);
	free(cf->redis_tls_cert_file);
	free(cf->redis_tls_key_file);
	free(cf->redis_tls_server_name);
	for (j = 0; j < cf->argc; j++)
		free(cf->argv[j]);
	free(cf->argv);
	free(cf);
}
