/*
 * check_config.c: robotsd's options (options.c, conf.c) against the
 * contract's table and robotsd.conf(5). The logging helpers are
 * check_log.c's.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <check.h>

#include "conf/conf.h"
#include "capture.h"
#include "base/log.h"
#include "tier/tier_url.h"

#define TOPSRCDIR TESTDATADIR "/../.."
#ifdef HAVE_REDIS
#define HAVE_REDIS_BUILD 1
#else
#define HAVE_REDIS_BUILD 0 /* --redis is refused: see test_redis_options */
#endif
#define MAXARGS 32

static struct config *cf;
static char *cause;
static char conf_path[PATH_MAX];

/* Free what a test left behind. */
static void
teardown(void)
{
	config_free(cf);
	cf = NULL;
	free(cause);
	cause = NULL;
	if (conf_path[0] != '\0')
		unlink(conf_path);
	conf_path[0] = '\0';
}

/* Write text to a new temporary file named in conf_path. */
static void
write_conf(const char *text)
{
	const char *tmp = getenv("TMPDIR");
	FILE *fp;
	int fd;

	snprintf(conf_path, sizeof(conf_path), "%s/check_config.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	ck_assert_int_ne(fd = mkstemp(conf_path), -1);
	ck_assert_ptr_nonnull(fp = fdopen(fd, "w"));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Replace the contents of conf_path. */
static void
rewrite_conf(const char *text)
{
	FILE *fp;

	ck_assert_ptr_nonnull(fp = fopen(conf_path, "w"));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/* config_load on "robotsd" plus the NULL-terminated arguments after first. */
static struct config *
load_args(int *exit_now, const char *first, ...)
{
	const char *argv[MAXARGS];
	int argc = 0, dummy;
	va_list ap;

	argv[argc++] = "robotsd";
	va_start(ap, first);
	for (; first != NULL && argc < MAXARGS - 1;
	     first = va_arg(ap, const char *))
		argv[argc++] = first;
	va_end(ap);
	argv[argc] = NULL;
	free(cause);
	cause = NULL;
	return config_load(
	    argc, (char **)argv, exit_now ? exit_now : &dummy, &cause);
}

/* Write text as the config file and load it with "-c FILE" first. */
#define LOAD(text, ...)                                                        \
	(write_conf(text), cf = load_args(NULL, "-c", conf_path, __VA_ARGS__))

/* "FILE:LINE: rest" for the current temporary config file. */
static char *
at_line(int line, const char *rest)
{
	static char buf[PATH_MAX + 256];

	snprintf(buf, sizeof(buf), "%s:%d: %s", conf_path, line, rest);
	return buf;
}

/* Read a whole file into a new string. */
static char *
slurp(const char *path)
{
	char *buf;
	FILE *fp;
	long n;

	ck_assert_msg(
	    (fp = fopen(path, "r")) != NULL, "%s: %s", path, strerror(errno));
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return buf;
}

START_TEST(test_defaults_equal_the_contract)
{
	LOAD("", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_str_eq(cf->socket_path, "/run/robotsd/robotsd.sock");
	ck_assert_int_eq(cf->foreground, 0);
	ck_assert_uint_eq(cf->socket_mode, 0660);
	ck_assert_str_eq(cf->user_agent, "robotsd/" PACKAGE_VERSION);
	ck_assert_uint_eq(cf->nconnect_to, 0);
	ck_assert_ptr_null(cf->connect_to[0]);
	ck_assert_ptr_null(cf->ca_file);
	ck_assert_int_eq(cf->default_ttl, 86400);
	ck_assert_int_eq(cf->min_ttl, 60);
	ck_assert_int_eq(cf->max_ttl, 2592000);
	ck_assert_int_eq(cf->fetch_timeout, 30);
	ck_assert_int_eq(cf->max_fetches, 256);
	ck_assert_uint_eq(cf->cache_max_bytes, 1024ULL * 1024 * 1024);
	ck_assert_ptr_null(cf->state_file);
	ck_assert_int_eq(cf->retry_min, 60);
	ck_assert_int_eq(cf->retry_max, 21600);
	ck_assert_int_eq(cf->retry_503_min, 30);
	ck_assert_int_eq(cf->retry_503_max, 3600);
	ck_assert_int_eq(cf->unreachable_allow_after, 2592000);
	ck_assert_int_eq(cf->max_connections, 4096);
	ck_assert_int_eq(cf->max_waiting, 100000);
	ck_assert_int_eq(cf->deny_private_addresses, 1);
	ck_assert_ptr_null(cf->redis);
	ck_assert_ptr_null(cf->metrics);
	ck_assert_int_eq(cf->log_level, LOG_INFO);
	ck_assert_uint_eq(cf->max_line, 65536);
	ck_assert_uint_eq(cf->max_output, 8 * 1024 * 1024);
	ck_assert_int_eq(cf->test_clock, 0);
	ck_assert_int_eq(cf->check_only, 0);
}
END_TEST

START_TEST(test_no_file_when_default_is_missing)
{
	if (access(SYSCONFDIR "/robotsd.conf", F_OK) == 0)
		return; /* installed: the file's contents are unknown here */
	cf = load_args(NULL, NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_ptr_null(cf->config_file);
	ck_assert_int_eq(cf->max_fetches, 256);
}
END_TEST

START_TEST(test_missing_c_file_is_an_error)
{
	cf = load_args(NULL, "-c", "/nonexistent/robotsd.conf", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(
	    cause, "/nonexistent/robotsd.conf: No such file or directory");
}
END_TEST

START_TEST(test_argv_sets_every_kind_of_value)
{
	LOAD("", "-s", "/tmp/x.sock", "-f", "--socket-mode", "0600",
	    "--user-agent", "FooBot/2 (+https://foo.example)", "--default-ttl",
	    "100", "--cache-max-bytes", "2M", "--deny-private-addresses", "no",
	    "--log-level", "debug", "--max-line", "1K", "--max-output", "1G",
	    "--state-file", "/var/x", "--test-clock", "-n", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_str_eq(cf->socket_path, "/tmp/x.sock");
	ck_assert_int_eq(cf->foreground, 1);
	ck_assert_uint_eq(cf->socket_mode, 0600);
	ck_assert_str_eq(cf->user_agent, "FooBot/2 (+https://foo.example)");
	ck_assert_int_eq(cf->default_ttl, 100);
	ck_assert_uint_eq(cf->cache_max_bytes, 2 * 1024 * 1024);
	ck_assert_int_eq(cf->deny_private_addresses, 0);
	ck_assert_int_eq(cf->log_level, LOG_DEBUG);
	ck_assert_uint_eq(cf->max_line, 1024);
	ck_assert_uint_eq(cf->max_output, 1024 * 1024 * 1024);
	ck_assert_str_eq(cf->state_file, "/var/x");
	ck_assert_int_eq(cf->test_clock, 1);
	ck_assert_int_eq(cf->check_only, 1);
}
END_TEST

START_TEST(test_file_lines_comments_and_whitespace)
{
	LOAD("# a comment\n"
	     "\n"
	     "   \t\n"
	     "  max-fetches   10  \n"
	     "\tuser-agent Foo Bot/1.0 (+https://x.example)\t\n"
	     "foreground yes\r\n"
	     "socket-mode 600\n"
	     "  # indented comment\n"
	     "log-level warn\n"
	     "retry-max 3000",
	    NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	ck_assert_int_eq(cf->max_fetches, 10);
	ck_assert_str_eq(cf->user_agent, "Foo Bot/1.0 (+https://x.example)");
	ck_assert_int_eq(cf->foreground, 1);
	ck_assert_uint_eq(cf->socket_mode, 0600);
	ck_assert_int_eq(cf->log_level, LOG_WARNING);
	ck_assert_int_eq(cf->retry_max, 3000);
}
END_TEST

START_TEST(test_command_line_beats_file)
{
	LOAD("max-fetches 10\nfetch-timeout 5\n", "--max-fetches", "20", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_int_eq(cf->max_fetches, 20);
	ck_assert_int_eq(cf->fetch_timeout, 5);
}
END_TEST

START_TEST(test_repeated_option_last_one_wins)
{
	LOAD("max-fetches 5\nmax-fetches 7\n", "--default-ttl", "9",
	    "--default-ttl", "11", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_int_eq(cf->max_fetches, 7);
	ck_assert_int_eq(cf->default_ttl, 11);
}
END_TEST

START_TEST(test_file_unknown_option_names_file_and_line)
{
	LOAD("# robotsd\n\nmax-fetchs 3\n", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause, at_line(3, "unknown option 'max-fetchs'"));
}
END_TEST

START_TEST(test_file_bad_number_names_option_and_range)
{
	LOAD("max-fetches abc\n", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    at_line(1, "max-fetches: 'abc' is not a number between 1 and "
	               "1000000"));
}
END_TEST

START_TEST(test_file_number_is_strict)
{
	static const char *const bad[] = { "max-fetches 12x\n",
		"max-fetches -5\n", "max-fetches +5\n", "max-fetches 0\n",
		"max-fetches 1000001\n", "max-fetches 99999999999999999999\n",
		"max-fetches 0x10\n", "fetch-timeout 1.5\n" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		LOAD(bad[i], NULL);
		ck_assert_msg(cf == NULL, "accepted %s", bad[i]);
		ck_assert_ptr_nonnull(strstr(cause, ":1: "));
		teardown();
	}
}
END_TEST

START_TEST(test_file_missing_value)
{
	LOAD("\nstate-file   \n", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause, at_line(2, "state-file: missing value"));
}
END_TEST

START_TEST(test_file_bad_values_of_each_kind)
{
	LOAD("deny-private-addresses maybe\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "deny-private-addresses: 'maybe' is not yes or no"));
	teardown();
	LOAD("log-level loud\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "log-level: 'loud' is not error, warn, info or debug"));
	teardown();
	LOAD("socket-mode 0999\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "socket-mode: '0999' is not an octal mode up to 0777"));
	teardown();
	LOAD("cache-max-bytes 2X\n", NULL);
	ck_assert_ptr_nonnull(cause);
	ck_assert_ptr_nonnull(strstr(cause, ":1: cache-max-bytes: '2X'"));
	teardown();
	LOAD("cache-max-bytes 99999999999G\n", NULL);
	ck_assert_ptr_null(cf);
	teardown();
	LOAD("config /etc/other.conf\n", NULL);
	ck_assert_str_eq(
	    cause, at_line(1, "config: only valid on the command line"));
}
END_TEST

START_TEST(test_size_suffixes_are_binary)
{
	LOAD("cache-max-bytes 3k\nmax-output 2M\nmax-line 100\n", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_uint_eq(cf->cache_max_bytes, 3072);
	ck_assert_uint_eq(cf->max_output, 2 * 1024 * 1024);
	ck_assert_uint_eq(cf->max_line, 100);
}
END_TEST

START_TEST(test_argv_bad_value_names_option)
{
	cf = load_args(NULL, "--max-fetches", "0", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(
	    cause, "--max-fetches: '0' is not a number between 1 and 1000000");
}
END_TEST

START_TEST(test_argv_syntax_errors)
{
	static const struct {
		const char *a, *b, *want;
	} cases[] = {
		{ "--bogus", NULL, "unknown option '--bogus'" },
		{ "--bogus=1", NULL, "unknown option '--bogus'" },
		{ "-x", NULL, "unknown option '-x'" },
		{ "--socket", NULL, "--socket: missing value" },
		{ "-s", NULL, "-s: missing value" },
		{ "--redis", "", "--redis: missing value" },
		{ "--foreground=yes", NULL, "--foreground: takes no value" },
		{ "extra", NULL, "unexpected argument 'extra'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cf = load_args(NULL, cases[i].a, cases[i].b, NULL);
		ck_assert_msg(cf == NULL, "accepted %s", cases[i].a);
		ck_assert_str_eq(cause, cases[i].want);
	}
}
END_TEST

START_TEST(test_lower_bound_above_upper_bound_is_error)
{
	cf = load_args(NULL, "--min-ttl", "100", "--max-ttl", "50", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause, "min-ttl (100) is greater than max-ttl (50)");
	cf = load_args(NULL, "--retry-min", "100", "--retry-max", "50", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(
	    cause, "retry-min (100) is greater than retry-max (50)");
	cf = load_args(NULL, "--retry-503-max", "10", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(
	    cause, "retry-503-min (30) is greater than retry-503-max (10)");
	cf = load_args(NULL, "--min-ttl", "50", "--max-ttl", "50", NULL);
	ck_assert_ptr_nonnull(cf);
}
END_TEST

START_TEST(test_connect_to_accumulates_and_argv_replaces_file)
{
	LOAD("connect-to a.example:443:127.0.0.1:8443\n"
	     "connect-to ::127.0.0.1:8080\n",
	    NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_uint_eq(cf->nconnect_to, 2);
	ck_assert_str_eq(cf->connect_to[0], "a.example:443:127.0.0.1:8443");
	ck_assert_str_eq(cf->connect_to[1], "::127.0.0.1:8080");
	ck_assert_ptr_null(cf->connect_to[2]);
	config_free(cf);
	cf = load_args(NULL, "-c", conf_path, "--connect-to",
	    "[::1]:80:[::1]:8080", "--connect-to", "b:80::81", NULL);
	ck_assert_ptr_nonnull(cf);
	ck_assert_uint_eq(cf->nconnect_to, 2);
	ck_assert_str_eq(cf->connect_to[0], "[::1]:80:[::1]:8080");
	ck_assert_str_eq(cf->connect_to[1], "b:80::81");
	ck_assert_ptr_null(cf->connect_to[2]);
}
END_TEST

START_TEST(test_connect_to_rejects_bad_shape)
{
	static const char *const bad[] = { "a:1:b", "a:x:b:2", "a:1:b:2:3",
		"a:70000:b:1", "[::1:80:b:1", "a b:1:c:2", "" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cf = load_args(NULL, "--connect-to", bad[i], NULL);
		ck_assert_msg(cf == NULL, "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(cause, "--connect-to: "));
	}
}
END_TEST

START_TEST(test_help_lists_options_but_not_test_clock)
{
	int exit_now = 0, saved, tmp;
	char *out;

	tmp = capture_begin(STDOUT_FILENO, &saved);
	cf = load_args(&exit_now, "--max-fetches", "3", "-h", NULL);
	out = capture_end(STDOUT_FILENO, saved, tmp);
	ck_assert_ptr_null(cf);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(exit_now, 1);
	ck_assert_ptr_nonnull(strstr(out, "usage: robotsd"));
	ck_assert_ptr_nonnull(strstr(out, "--max-fetches N"));
	ck_assert_ptr_nonnull(strstr(out, "-c, --config FILE"));
	ck_assert_ptr_null(strstr(out, "test-clock"));
	free(out);
}
END_TEST

START_TEST(test_version_prints_name_and_version)
{
	int exit_now = 0, saved, tmp;
	char *out;

	tmp = capture_begin(STDOUT_FILENO, &saved);
	cf = load_args(&exit_now, "-V", NULL);
	out = capture_end(STDOUT_FILENO, saved, tmp);
	ck_assert_ptr_null(cf);
	ck_assert_int_eq(exit_now, 1);
	ck_assert_str_eq(out, "robotsd " PACKAGE_VERSION "\n");
	free(out);
}
END_TEST

START_TEST(test_reload_keeps_argv_and_reads_file_changes)
{
	struct config *re;
	char **argv = calloc(6, sizeof(*argv));
	int exit_now;

	write_conf("max-fetches 10\nfetch-timeout 5\n");
	argv[0] = strdup("robotsd");
	argv[1] = strdup("-c");
	argv[2] = strdup(conf_path);
	argv[3] = strdup("--fetch-timeout");
	argv[4] = strdup("7");
	cf = config_load(5, argv, &exit_now, &cause);
	for (exit_now = 0; exit_now < 5; exit_now++)
		free(argv[exit_now]); /* the config keeps its own copy */
	free(argv);
	ck_assert_ptr_nonnull(cf);
	rewrite_conf("max-fetches 11\nfetch-timeout 6\n");
	re = config_reload(cf, &cause);
	ck_assert_ptr_nonnull(re);
	ck_assert_int_eq(re->max_fetches, 11);
	ck_assert_int_eq(re->fetch_timeout, 7);
	ck_assert_int_eq(cf->max_fetches, 10);
	config_free(re);
}
END_TEST

START_TEST(test_reload_keeps_options_that_need_a_restart)
{
	struct config *re;

	LOAD("socket /tmp/a.sock\nmax-connections 10\n", NULL);
	ck_assert_ptr_nonnull(cf);
	rewrite_conf("socket /tmp/b.sock\nmax-connections 20\nmax-fetches 3\n");
	re = config_reload(cf, &cause);
	ck_assert_ptr_nonnull(re);
	ck_assert_str_eq(re->socket_path, "/tmp/a.sock");
	ck_assert_int_eq(re->max_connections, 10);
	ck_assert_int_eq(re->max_fetches, 3);
	config_free(re);
}
END_TEST

START_TEST(test_reload_error_names_file_and_line)
{
	char want[PATH_MAX + 64], *real;

	LOAD("max-fetches 10\n", NULL);
	ck_assert_ptr_nonnull(cf);
	rewrite_conf("max-fetches 10\nmax-fetchs 3\n");
	ck_assert_ptr_null(config_reload(cf, &cause));
	real = realpath(conf_path, NULL);
	snprintf(want, sizeof(want), "%s:2: unknown option 'max-fetchs'", real);
	free(real);
	ck_assert_str_eq(cause, want);
}
END_TEST

/* The long option names that --help lists, except command-line-only ones. */
static char **
help_option_names(size_t *n)
{
	int exit_now, saved, tmp;
	char *out, *p, **names = calloc(64, sizeof(*names));
	size_t len;

	tmp = capture_begin(STDOUT_FILENO, &saved);
	load_args(&exit_now, "--help", NULL);
	out = capture_end(STDOUT_FILENO, saved, tmp);
	*n = 0;
	for (p = out; (p = strstr(p, " --")) != NULL && *n < 63; p += len) {
		p += 3;
		len = strcspn(p, " \n");
		names[*n] = strndup(p, len);
		if (strcmp(names[*n], "config") == 0 ||
		    strcmp(names[*n], "help") == 0 ||
		    strcmp(names[*n], "version") == 0)
			free(names[*n]);
		else
			(*n)++;
	}
	free(out);
	return names;
}

/* Free what help_option_names() returned. */
static void
free_names(char **names, size_t n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

START_TEST(test_every_option_is_documented)
{
	char *conf5 = slurp(TOPSRCDIR "/docs/robotsd.conf.5.in");
	char *etc = slurp(TOPSRCDIR "/etc/robotsd.conf");
	char **names, want[128];
	size_t i, n;

	names = help_option_names(&n);
	ck_assert_uint_ge(n, 26);
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "\n.It Ic %s ", names[i]);
		ck_assert_msg(strstr(conf5, want) != NULL,
		    "%s not in robotsd.conf.5.in", names[i]);
		snprintf(want, sizeof(want), "\n#%s ", names[i]);
		ck_assert_msg(strstr(etc, want) != NULL,
		    "%s not in etc/robotsd.conf", names[i]);
	}
	free_names(names, n);
	free(conf5);
	free(etc);
}
END_TEST

#ifdef HAVE_REDIS
/* Load a config file naming n Redis servers. */
static void
redis_servers(int n)
{
	char text[64 * 40];
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += snprintf(text + len, sizeof(text) - len,
		    "redis unix:///run/redis/%d.sock\n", i);
	if (conf_path[0] != '\0')
		unlink(conf_path);
	LOAD(text, NULL);
}
#endif

/*
 * --redis repeats (a file's list is replaced by the command line's), each
 * URL checked at load; a build without hiredis refuses it with the reason.
 */
START_TEST(test_redis_options)
{
	cf = load_args(NULL, "-c", "/dev/null", NULL);
	ck_assert_ptr_null(cf->redis);
	ck_assert_int_eq(cf->redis_timeout, 250);
	ck_assert_int_eq(cf->redis_lock_time, 40);
	config_free(cf);
	cf = load_args(NULL, "-c", "/dev/null", "--redis",
	    "redis://[::1]:7000/2", "--redis=redis://:x@bad:0", NULL);
	ck_assert_ptr_null(cf);
	/* the password is never shown */
	ck_assert_str_eq(cause, "--redis: 'redis://***@bad:0' is not a Redis "
	                        "URL: bad port (1-65535)");
	LOAD("redis redis://file-only\n", "--redis",
	    "unix:///run/redis.sock?db=1", "--redis", "redis://b",
	    "--redis-timeout", "100", NULL);
#ifdef HAVE_REDIS
	ck_assert_msg(cf != NULL, "%s", cause);
	ck_assert_uint_eq(cf->nredis, 2);
	ck_assert_str_eq(cf->redis[0], "unix:///run/redis.sock?db=1");
	ck_assert_str_eq(cf->redis[1], "redis://b");
	ck_assert_ptr_null(cf->redis[2]);
	ck_assert_int_eq(cf->redis_timeout, 100);
	config_free(cf);
	cf = load_args(NULL, "-c", "/dev/null", "--redis", "redis://a",
	    "--redis-lock-time", "30", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    "redis-lock-time (30) must be greater than fetch-timeout (30): a "
	    "lock must outlive the fetch it guards");
	redis_servers(TIER_MAX_SERVERS);
	ck_assert_msg(cf != NULL, "%s", cause);
	ck_assert_uint_eq(cf->nredis, 32);
	config_free(cf);
	redis_servers(TIER_MAX_SERVERS + 1);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    "redis: 33 servers given, at most 32 (stats and "
	    "/metrics show each one's state)");
#else
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    "redis: this robotsd was built without hiredis, so it has no "
	    "shared "
	    "Redis tier; rebuild it with hiredis (libhiredis-dev) or drop "
	    "--redis");
#endif
}
END_TEST

START_TEST(test_values_that_cannot_work_are_refused_at_load)
{
	ck_assert_ptr_null(
	    load_args(NULL, "-c", "/dev/null", "--metrics", "nonsense", NULL));
	ck_assert_str_eq(cause, "metrics: 'nonsense' is not ADDR:PORT");
	free(cause);
	cause = NULL;
	ck_assert_ptr_null(load_args(
	    NULL, "-c", "/dev/null", "--metrics", "127.0.0.1:99999", NULL));
	free(cause);
	cause = NULL;
	ck_assert_ptr_null(load_args(
	    NULL, "-c", "/dev/null", "--ca-file", "/nonexistent/ca.pem", NULL));
	ck_assert_str_eq(
	    cause, "ca-file: /nonexistent/ca.pem: No such file or directory");
	free(cause);
	cause = NULL;
	cf =
	    load_args(NULL, "-c", "/dev/null", "--metrics", "[::1]:9100", NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
}
END_TEST

/*
 * --redis-key-file: 64 hex digits and a newline; refused when others may
 * read or write the file (its group may read it), or its text is not that.
 */
START_TEST(test_redis_key_file)
{
	static const char *const bad_modes[] = { "0644", "0604", "0602" };
	char want[PATH_MAX + 256];
	size_t i;

	write_conf("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1"
	           "d1e1f\n");
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis-key-file", conf_path, NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	for (i = 0; i < 32; i++)
		ck_assert_uint_eq(cf->redis_key[i], i);
	config_free(cf);
	ck_assert_int_eq(chmod(conf_path, 0640), 0);
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis-key-file", conf_path, NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	config_free(cf);
	cf = NULL;
	for (i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++) {
		ck_assert_int_eq(
		    chmod(conf_path, (mode_t)strtol(bad_modes[i], NULL, 8)), 0);
		ck_assert_ptr_null(load_args(NULL, "-c", "/dev/null",
		    "--redis-key-file", conf_path, NULL));
		snprintf(want, sizeof(want),
		    "redis-key-file: %s: readable or writable by others (mode "
		    "%s); the fleet's secret must not be: chmod o-rw it",
		    conf_path, bad_modes[i]);
		ck_assert_str_eq(cause, want);
		free(cause);
		cause = NULL;
	}
	ck_assert_int_eq(chmod(conf_path, 0600), 0);
	rewrite_conf("0001020304050607\n");
	ck_assert_ptr_null(load_args(
	    NULL, "-c", "/dev/null", "--redis-key-file", conf_path, NULL));
	snprintf(want, sizeof(want),
	    "redis-key-file: %s: not 64 hex digits (and an optional newline)",
	    conf_path);
	ck_assert_str_eq(cause, want);
	free(cause);
	cause = NULL;
	ck_assert_ptr_null(load_args(NULL, "-c", "/dev/null",
	    "--redis-key-file", "/nonexistent/key", NULL));
	ck_assert_str_eq(cause,
	    "redis-key-file: /nonexistent/key: No such file or directory");
}
END_TEST

/* The password file: its first line; never the password in a message. */
START_TEST(test_redis_password_file)
{
	char path[] = "/tmp/robotsd-pwXXXXXX", *pw;
	int fd = mkstemp(path);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, "s3cret\nignored\n", 15), 15);
	close(fd);
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis-password-file", path, NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	pw = config_redis_password(cf, &cause);
	ck_assert_str_eq(pw, "s3cret");
	ck_assert_ptr_null(cause);
	free(pw);
	config_free(cf);
	cf = NULL;
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_ptr_null(load_args(
	    NULL, "-c", "/dev/null", "--redis-password-file", path, NULL));
	ck_assert_ptr_nonnull(strstr(cause, "empty first line"));
	free(cause);
	cause = NULL;
	unlink(path);
	ck_assert_ptr_null(load_args(
	    NULL, "-c", "/dev/null", "--redis-password-file", path, NULL));
	ck_assert_ptr_nonnull(strstr(cause, "No such file or directory"));
	free(cause);
	cause = NULL;
	cf = load_args(NULL, "-c", "/dev/null", NULL);
	ck_assert_ptr_null(config_redis_password(cf, &cause));
	ck_assert_ptr_null(cause);
}
END_TEST

START_TEST(test_shipped_config_parses)
{
	cf = load_args(NULL, "-c", TOPSRCDIR "/etc/robotsd.conf", NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
}
END_TEST

START_TEST(test_shipped_config_shows_the_defaults)
{
	char *etc = slurp(TOPSRCDIR "/etc/robotsd.conf"), *line, *nl;
	struct config *def;
	FILE *fp;

	/*
	 * Uncomment every "#name value" line: it must parse, to the defaults.
	 * The ca-file, redis-password-file and admin-group lines name an
	 * example file or group, which must exist to load.
	 */
	write_conf("");
	ck_assert_ptr_nonnull(fp = fopen(conf_path, "w"));
	for (line = etc; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' &&
		    strncmp(line, "#ca-file ", 9) != 0 &&
		    strncmp(line, "#redis-key-file ", 16) != 0 &&
		    strncmp(line, "#redis-password-file ", 21) != 0 &&
		    strncmp(line, "#admin-group ", 13) != 0 &&
		    (HAVE_REDIS_BUILD || strncmp(line, "#redis ", 7) != 0))
			fprintf(fp, "%.*s\n", (int)(nl - line - 1), line + 1);
	fclose(fp);
	free(etc);
	cf = load_args(NULL, "-c", conf_path, NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	def = load_args(NULL, "-c", "/dev/null", NULL);
	ck_assert_str_eq(cf->socket_path, def->socket_path);
	ck_assert_str_eq(cf->user_agent, def->user_agent);
	ck_assert_uint_eq(cf->socket_mode, def->socket_mode);
	ck_assert_int_eq(cf->foreground, def->foreground);
	ck_assert_int_eq(cf->default_ttl, def->default_ttl);
	ck_assert_int_eq(cf->min_ttl, def->min_ttl);
	ck_assert_int_eq(cf->max_ttl, def->max_ttl);
	ck_assert_int_eq(cf->fetch_timeout, def->fetch_timeout);
	ck_assert_int_eq(cf->max_fetches, def->max_fetches);
	ck_assert_uint_eq(cf->cache_max_bytes, def->cache_max_bytes);
	ck_assert_int_eq(cf->retry_min, def->retry_min);
	ck_assert_int_eq(cf->retry_max, def->retry_max);
	ck_assert_int_eq(cf->retry_503_min, def->retry_503_min);
	ck_assert_int_eq(cf->retry_503_max, def->retry_503_max);
	ck_assert_int_eq(
	    cf->unreachable_allow_after, def->unreachable_allow_after);
	ck_assert_int_eq(cf->max_connections, def->max_connections);
	ck_assert_int_eq(cf->max_waiting, def->max_waiting);
	ck_assert_int_eq(
	    cf->deny_private_addresses, def->deny_private_addresses);
	ck_assert_int_eq(cf->log_level, def->log_level);
	ck_assert_int_eq(cf->write_timeout, def->write_timeout);
	ck_assert_uint_eq(cf->max_line, def->max_line);
	ck_assert_uint_eq(cf->max_output, def->max_output);
	config_free(def);
}
END_TEST

/* The config suite. */
static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_defaults_equal_the_contract);
	tcase_add_test(tc, test_no_file_when_default_is_missing);
	tcase_add_test(tc, test_missing_c_file_is_an_error);
	tcase_add_test(tc, test_argv_sets_every_kind_of_value);
	tcase_add_test(tc, test_file_lines_comments_and_whitespace);
	tcase_add_test(tc, test_command_line_beats_file);
	tcase_add_test(tc, test_redis_options);
	tcase_add_test(tc, test_repeated_option_last_one_wins);
	tcase_add_test(tc, test_file_unknown_option_names_file_and_line);
	tcase_add_test(tc, test_file_bad_number_names_option_and_range);
	tcase_add_test(tc, test_file_number_is_strict);
	tcase_add_test(tc, test_file_missing_value);
	tcase_add_test(tc, test_file_bad_values_of_each_kind);
	tcase_add_test(tc, test_size_suffixes_are_binary);
	tcase_add_test(tc, test_argv_bad_value_names_option);
	tcase_add_test(tc, test_argv_syntax_errors);
	tcase_add_test(tc, test_lower_bound_above_upper_bound_is_error);
	tcase_add_test(tc, test_connect_to_accumulates_and_argv_replaces_file);
	tcase_add_test(tc, test_connect_to_rejects_bad_shape);
	tcase_add_test(tc, test_help_lists_options_but_not_test_clock);
	tcase_add_test(tc, test_version_prints_name_and_version);
	tcase_add_test(tc, test_reload_keeps_argv_and_reads_file_changes);
	tcase_add_test(tc, test_reload_keeps_options_that_need_a_restart);
	tcase_add_test(tc, test_reload_error_names_file_and_line);
	tcase_add_test(tc, test_every_option_is_documented);
	tcase_add_test(tc, test_values_that_cannot_work_are_refused_at_load);
	tcase_add_test(tc, test_redis_password_file);
	tcase_add_test(tc, test_shipped_config_parses);
	tcase_add_test(tc, test_redis_key_file);
	tcase_add_test(tc, test_shipped_config_shows_the_defaults);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	unsetenv("JOURNAL_STREAM");
	log_init(1, LOG_ERR); /* quiet: reload warnings are expected */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
