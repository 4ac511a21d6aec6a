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
#include "policy/tier_url.h"
#include "config_fixture.h"
#include "test_main.h"

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
	ck_assert_str_eq(cf->tdmrep, "on-demand");
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
	ck_assert_str_eq(cause,
	    at_line(
	        3, "unknown option 'max-fetchs'; did you mean max-fetches?"));
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
		config_teardown();
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
	config_teardown();
	LOAD("log-level loud\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "log-level: 'loud' is not error, warn, info or debug"));
	config_teardown();
	LOAD("tdmrep sometimes\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "tdmrep: 'sometimes' is not on-demand, always or off"));
	config_teardown();
	LOAD("tdmrep always\n", NULL);
	ck_assert_str_eq(cf->tdmrep, "always");
	config_teardown();
	LOAD("socket-mode 0999\n", NULL);
	ck_assert_str_eq(cause,
	    at_line(1, "socket-mode: '0999' is not an octal mode up to 0777"));
	config_teardown();
	LOAD("cache-max-bytes 2X\n", NULL);
	ck_assert_ptr_nonnull(cause);
	ck_assert_ptr_nonnull(strstr(cause, ":1: cache-max-bytes: '2X'"));
	config_teardown();
	LOAD("cache-max-bytes 99999999999G\n", NULL);
	ck_assert_ptr_null(cf);
	config_teardown();
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
		{ "--max-fetchs", "3",
		    "unknown option '--max-fetchs'; did you mean "
		    "--max-fetches?" },
		{ "--confg=/x", NULL,
		    "unknown option '--confg'; did you mean --config?" },
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
	char *kept = (char *)"unset";
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
	re = config_reload(cf, &kept, &cause);
	ck_assert_ptr_nonnull(re);
	ck_assert_int_eq(re->max_fetches, 11);
	ck_assert_int_eq(re->fetch_timeout, 7);
	ck_assert_int_eq(cf->max_fetches, 10);
	ck_assert_ptr_null(kept); /* every change applied */
	config_free(re);
}
END_TEST

START_TEST(test_reload_keeps_options_that_need_a_restart)
{
	struct config *re;
	char *kept = NULL;

	LOAD("socket /tmp/a.sock\nmax-connections 10\n", NULL);
	ck_assert_ptr_nonnull(cf);
	rewrite_conf("socket /tmp/b.sock\nmax-connections 20\nmax-fetches 3\n");
	re = config_reload(cf, &kept, &cause);
	ck_assert_ptr_nonnull(re);
	ck_assert_str_eq(re->socket_path, "/tmp/a.sock");
	ck_assert_int_eq(re->max_connections, 10);
	ck_assert_int_eq(re->max_fetches, 3);
	/* Named in the table's order; max-fetches is applied, not named. */
	ck_assert_str_eq(kept, "socket,max-connections");
	free(kept);
	config_free(re);
}
END_TEST

START_TEST(test_reload_error_names_file_and_line)
{
	char want[PATH_MAX + 64], *real, *kept = (char *)"unset";

	LOAD("max-fetches 10\n", NULL);
	ck_assert_ptr_nonnull(cf);
	rewrite_conf("max-fetches 10\nmax-fetchs 3\n");
	ck_assert_ptr_null(config_reload(cf, &kept, &cause));
	real = realpath(conf_path, NULL);
	snprintf(want, sizeof(want),
	    "%s:2: unknown option 'max-fetchs'; did you mean max-fetches?",
	    real);
	free(real);
	ck_assert_str_eq(cause, want);
	ck_assert_ptr_null(kept);
}
END_TEST

/* The "did you mean" rule (opt_suggest()), by table. */
START_TEST(test_suggest_rule)
{
	static const struct {
		const char *name;
		int in_file;
		const char *want; /* NULL: no suggestion */
	} cases[] = {
		{ "max-fetchs", 1, "max-fetches" },   /* a deletion */
		{ "max-fetchess", 1, "max-fetches" }, /* an insertion */
		{ "max_fetches", 1, "max-fetches" },  /* a substitution */
		{ "max-fecthes", 1,
		    "max-fetches" },               /* two neighbours swapped */
		{ "max-fetch", 1, "max-fetches" }, /* distance 2 */
		{ "MAX-FETCHES", 1, "max-fetches" }, /* case aside */
		{ "metric", 1, "metrics" }, { "sokcet", 1, "socket" },
		{ "retry-mix", 1,
		    "retry-min" },          /* a tie: the first in the table */
		{ "max-fxtchxx", 1, NULL }, /* distance 3 */
		{ "mx", 1, NULL },   /* distance 1, not under half of 2 bytes */
		{ "abcd", 1, NULL }, /* nothing near */
		{ "bogus-option", 1, NULL },
		{ "confg", 1, NULL }, /* config: the command line's only */
		{ "confg", 0, "config" }, { "hepl", 0, "help" },
		{ "test-clok", 0, NULL }, /* hidden */
		{ "", 1, NULL },
		{ "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"
		  "mmmm",
		    1, NULL }, /* 64 bytes: checked, far from all */
		{ "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"
		  "mmmmm",
		    1, NULL }, /* 65 bytes: too long to be checked */
	};
	const char *got;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = opt_suggest(cases[i].name, cases[i].in_file);
		if (cases[i].want == NULL)
			ck_assert_msg(got == NULL, "%s: got %s", cases[i].name,
			    got != NULL ? got : "");
		else
			ck_assert_msg(
			    got != NULL && strcmp(got, cases[i].want) == 0,
			    "%s: want %s, got %s", cases[i].name, cases[i].want,
			    got != NULL ? got : "(none)");
	}
}
END_TEST

/* config_metrics_address on "robotsd" plus argv (NULL-terminated). */
static char *
metrics_address(const char *first, ...)
{
	const char *argv[MAXARGS];
	int argc;
	va_list ap;

	va_start(ap, first);
	argc = fill_argv(argv, first, ap);
	va_end(ap);
	return config_metrics_address(argc, (char **)argv);
}

/* Where config-error mode serves /metrics: the file read past its errors. */
START_TEST(test_metrics_address_of_a_bad_config)
{
	static const struct {
		const char *file, *argv_metrics, *want;
	} cases[] = {
		{ "bogus 1\nmetrics 127.0.0.1:9100\n", NULL, "127.0.0.1:9100" },
		{ "metrics 127.0.0.1:9100\nmax-fetches x\n", NULL,
		    "127.0.0.1:9100" },
		{ "metrics [::1]:1\nmetrics  127.0.0.1:2 \n", NULL,
		    "127.0.0.1:2" }, /* the last one, stripped */
		{ "metrics 127.0.0.1:2\nmetrics nope\n", NULL, "127.0.0.1:2" },
		{ "metrics\n# metrics 127.0.0.1:1\n", NULL, NULL },
		{ "max-fetches x\n", NULL, NULL },
		{ "metrics 127.0.0.1:1\n", "127.0.0.1:3", "127.0.0.1:3" },
		{ "metrics 127.0.0.1:1\n", "nope", "127.0.0.1:1" },
	};
	char *got;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_conf(cases[i].file);
		got = cases[i].argv_metrics == NULL
		          ? metrics_address("-f", "-c", conf_path, NULL)
		          : metrics_address("-c", conf_path, "--metrics",
		                cases[i].argv_metrics, NULL);
		if (cases[i].want == NULL)
			ck_assert_msg(got == NULL, "case %zu: got %s", i, got);
		else
			ck_assert_msg(
			    got != NULL && strcmp(got, cases[i].want) == 0,
			    "case %zu: got %s", i, got != NULL ? got : "NULL");
		free(got);
		unlink(conf_path);
		conf_path[0] = '\0';
	}
	/* A command line that does not scan is read as far as it goes. */
	write_conf("metrics 127.0.0.1:4\n");
	got = metrics_address("-c", conf_path, "--bogus", NULL);
	ck_assert_str_eq(got, "127.0.0.1:4");
	free(got);
	got = metrics_address("-c", "/nonexistent/robotsd.conf", NULL);
	ck_assert_ptr_null(got);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, NULL, config_teardown);
	tcase_add_test(tc, test_defaults_equal_the_contract);
	tcase_add_test(tc, test_no_file_when_default_is_missing);
	tcase_add_test(tc, test_missing_c_file_is_an_error);
	tcase_add_test(tc, test_argv_sets_every_kind_of_value);
	tcase_add_test(tc, test_file_lines_comments_and_whitespace);
	tcase_add_test(tc, test_command_line_beats_file);
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
	tcase_add_test(tc, test_suggest_rule);
	tcase_add_test(tc, test_metrics_address_of_a_bad_config);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(config_suite, config_quiet_log, NULL);
