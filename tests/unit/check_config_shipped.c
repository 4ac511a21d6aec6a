/*
 * check_config_shipped.c: robotsd's options as shipped and documented:
 * every option in robotsd.conf(5) and robotsd(8), the shipped
 * robotsd.conf, the Redis options and their secret files, and values that
 * cannot work refused at load (check_config.c has the rest).
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
#include "policy/tier_url.h"
#include "config_fixture.h"
#include "test_main.h"

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

#ifdef HAVE_REDIS
/*
 * rediss:// and ACL users: refused at load when they cannot work: TLS not
 * built in, a user without a password, half a client certificate, a TLS
 * file robotsd cannot read.
 */
START_TEST(test_redis_tls_and_users)
{
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis", "redis://fleet@r", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    "redis: redis://r:6379/0: user 'fleet' has no password: give it "
	    "in the URL (USER:PASSWORD@) or --redis-password-file");
	free(cause);
	cause = NULL;
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis", "redis://fleet:pw@r", NULL);
	ck_assert_msg(cf != NULL, "%s", cause);
	config_free(cf);
	cf = load_args(
	    NULL, "-c", "/dev/null", "--redis", "rediss://r:6380", NULL);
#ifdef HAVE_REDIS_TLS
	ck_assert_msg(cf != NULL, "%s", cause);
	config_free(cf);
	cf = load_args(NULL, "-c", "/dev/null", "--redis", "rediss://r",
	    "--redis-tls-cert-file", "/dev/null", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause, "redis-tls-cert-file and redis-tls-key-file "
	                        "go together: give both or neither");
	free(cause);
	cause = NULL;
	cf = load_args(NULL, "-c", "/dev/null", "--redis", "rediss://r",
	    "--redis-tls-ca-file", "/nonexistent/ca.pem", NULL);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause, "redis-tls-ca-file: /nonexistent/ca.pem: No "
	                        "such file or directory");
#else
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(cause,
	    "redis: rediss://r:6380/0: rediss:// needs TLS, and this robotsd "
	    "was built without it (TLS needs hiredis 1.0 or later with "
	    "hiredis_ssl, as in Debian 13)");
#endif
}
END_TEST
#endif

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
	 * example file or group, which must exist to load; admin-socket has
	 * no default to compare with.
	 */
	write_conf("");
	ck_assert_ptr_nonnull(fp = fopen(conf_path, "w"));
	for (line = etc; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' &&
		    strncmp(line, "#ca-file ", 9) != 0 &&
		    strncmp(line, "#redis-key-file ", 16) != 0 &&
		    strncmp(line, "#redis-password-file ", 21) != 0 &&
		    strncmp(line, "#admin-group ", 13) != 0 &&
		    strncmp(line, "#admin-socket ", 14) != 0 &&
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
config_shipped_suite(void)
{
	Suite *s = suite_create("config_shipped");
	TCase *tc = tcase_create("shipped");

	tcase_add_checked_fixture(tc, NULL, config_teardown);
	tcase_add_test(tc, test_redis_options);
#ifdef HAVE_REDIS
	tcase_add_test(tc, test_redis_tls_and_users);
#endif
	tcase_add_test(tc, test_every_option_is_documented);
	tcase_add_test(tc, test_values_that_cannot_work_are_refused_at_load);
	tcase_add_test(tc, test_redis_password_file);
	tcase_add_test(tc, test_shipped_config_parses);
	tcase_add_test(tc, test_redis_key_file);
	tcase_add_test(tc, test_shipped_config_shows_the_defaults);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(config_shipped_suite, config_quiet_log, NULL);
