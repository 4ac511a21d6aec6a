/*
 * check_log.c: the logging helpers of log.c: escaping, level names, the
 * line format on stderr and in the journal, and the choice of sink.
 */
#include <config.h>

#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "capture.h"
#include "base/log.h"

/* log_escape() of a NUL-terminated string into a buffer of bufsz. */
static const char *
esc(const char *s, size_t max, size_t bufsz)
{
	static char buf[256];

	return log_escape(s, strlen(s), max, buf, bufsz);
}

START_TEST(test_log_escape_c_style)
{
	ck_assert_str_eq(esc("plain /a?b=c", 100, 256), "plain /a?b=c");
	ck_assert_str_eq(
	    esc("a\nb\rc\td\\e\"f", 100, 256), "a\\nb\\rc\\td\\\\e\\\"f");
	ck_assert_str_eq(
	    esc("\x01\x7f\xff\xc3\xa9", 100, 256), "\\x01\\x7f\\xff\\xc3\\xa9");
}
END_TEST

START_TEST(test_log_escape_cuts_with_ellipsis)
{
	char buf[16];

	ck_assert_str_eq(esc("abcdef", 3, 256), "abc...");
	ck_assert_str_eq(esc("abcdef", 6, 256), "abcdef");
	ck_assert_str_eq(esc("abcdefghij", 100, 8), "abcd...");
	ck_assert_str_eq(esc("abc", 100, 4), "abc");
	ck_assert_str_eq(esc("\n\n\n", 100, 6), "\\n...");
	ck_assert_str_eq(
	    log_escape("a\0b", 3, 10, buf, sizeof(buf)), "a\\x00b");
	ck_assert_str_eq(log_escape(NULL, 0, 10, buf, sizeof(buf)), "(null)");
}
END_TEST

START_TEST(test_log_level_parse)
{
	ck_assert_int_eq(log_level_parse("error"), LOG_ERR);
	ck_assert_int_eq(log_level_parse("warn"), LOG_WARNING);
	ck_assert_int_eq(log_level_parse("info"), LOG_INFO);
	ck_assert_int_eq(log_level_parse("debug"), LOG_DEBUG);
	ck_assert_int_eq(log_level_parse("verbose"), -1);
	ck_assert_int_eq(log_level_parse(""), -1);
}
END_TEST

START_TEST(test_log_foreground_line_format_and_errno)
{
	char want[64], *out, *p;
	int saved, tmp;

	log_init(1, LOG_INFO);
	tmp = capture_begin(STDERR_FILENO, &saved);
	errno = EBADF;
	log_warn("origin %s", "x");
	ck_assert_int_eq(errno, EBADF);
	log_debug("not shown at info");
	log_info("shown");
	out = capture_end(STDERR_FILENO, saved, tmp);
	log_init(1, LOG_ERR);
	/* "2026-11-23T07:50:00Z robotsd[pid]: warn: ..." */
	ck_assert_uint_ge(strlen(out), 21);
	ck_assert_msg(out[4] == '-' && out[7] == '-' && out[10] == 'T' &&
	                  out[13] == ':' && out[16] == ':' && out[19] == 'Z' &&
	                  out[20] == ' ',
	    "no timestamp: %s", out);
	snprintf(want, sizeof(want), "robotsd[%ld]: warn: origin x: %s\n",
	    (long)getpid(), strerror(EBADF));
	ck_assert_msg(
	    strncmp(out + 21, want, strlen(want)) == 0, "got %s", out);
	p = strchr(out, '\n') + 1;
	snprintf(
	    want, sizeof(want), "robotsd[%ld]: info: shown\n", (long)getpid());
	ck_assert_str_eq(p + 21, want);
	free(out);
}
END_TEST

START_TEST(test_log_sink_is_syslog_only_in_background_without_journal)
{
	ck_assert_int_eq(log_sink_pick(0, 0), LOG_SINK_SYSLOG);
	ck_assert_int_eq(log_sink_pick(1, 0), LOG_SINK_STDERR);
	ck_assert_int_eq(log_sink_pick(0, 1), LOG_SINK_JOURNAL);
	ck_assert_int_eq(log_sink_pick(1, 1), LOG_SINK_JOURNAL);
}
END_TEST

/* Make $JOURNAL_STREAM name fd ("dev:ino"), as systemd does for stderr. */
static void
set_journal_stream(int fd)
{
	struct stat sb;
	char v[64];

	ck_assert_int_eq(fstat(fd, &sb), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)sb.st_dev,
	    (unsigned long long)sb.st_ino);
	ck_assert_int_eq(setenv("JOURNAL_STREAM", v, 1), 0);
}

START_TEST(test_log_journal_line_has_priority_prefix_only)
{
	char want[96], *out;
	int saved, tmp;

	tmp = capture_begin(STDERR_FILENO, &saved);
	set_journal_stream(STDERR_FILENO);
	log_init(0, LOG_WARNING);
	log_info("filtered");
	errno = ENOENT;
	log_warn("journal %d", 1);
	log_init(1, LOG_INFO); /* -f with stderr the journal: still "<N>" */
	log_info("fg");
	unsetenv("JOURNAL_STREAM");
	out = capture_end(STDERR_FILENO, saved, tmp);
	log_init(1, LOG_ERR);
	/* sd-daemon(3): "<4>" is LOG_WARNING, "<6>" LOG_INFO. */
	snprintf(want, sizeof(want), "<4>warn: journal 1: %s\n<6>info: fg\n",
	    strerror(ENOENT));
	ck_assert_str_eq(out, want);
	free(out);
}
END_TEST

START_TEST(test_log_background_without_journal_is_not_on_stderr)
{
	char *out;
	int saved, tmp;

	/* stderr a plain file, as /dev/null after daemon(): syslog only. */
	tmp = capture_begin(STDERR_FILENO, &saved);
	log_init(0, LOG_WARNING);
	log_warnx("check_log: unit test line, to syslog");
	out = capture_end(STDERR_FILENO, saved, tmp);
	log_init(1, LOG_ERR);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST
START_TEST(test_log_kv_values_bare_or_quoted)
{
	static const struct {
		const char *in;
		size_t len, max, bufsz;
		const char *want;
	} t[] = {
		{ "https://x.example", 17, 200, 64, "https://x.example" },
		{ "/a?b=c", 6, 200, 64, "\"/a?b=c\"" },
		{ "two words", 9, 200, 64, "\"two words\"" },
		{ "", 0, 200, 64, "\"\"" },
		{ "say \"hi\"", 8, 200, 64, "\"say \\\"hi\\\"\"" },
		{ "a\nb", 3, 200, 64, "\"a\\nb\"" },
		{ "a\\b", 3, 200, 64, "\"a\\\\b\"" },
		{ "\xff\x01", 2, 200, 64, "\"\\xff\\x01\"" },
		{ "abcdef", 6, 3, 64, "\"abc...\"" },
		{ "abcdefghij", 10, 200, 8, "\"ab...\"" },
		{ "x", 1, 200, 2, "" },
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(
		    strcmp(log_kv(t[i].in, t[i].len, t[i].max, buf, t[i].bufsz),
		        t[i].want) == 0,
		    "%zu: got [%s] want [%s]", i, buf, t[i].want);
	ck_assert_str_eq(log_kvs(NULL, buf, sizeof(buf)), "-");
	ck_assert_str_eq(log_kvs("a b", buf, sizeof(buf)), "\"a b\"");
}
END_TEST

START_TEST(test_log_bucket_refills_at_its_rate)
{
	struct log_bucket b = { 0 };
	int i, n = 0;

	for (i = 0; i < 5; i++)
		n += log_bucket_take(&b, 100.0, 3, 2);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(b.suppressed, 2);
	ck_assert_int_eq(log_bucket_take(&b, 100.4, 3, 2), 0); /* 0.8 */
	ck_assert_int_eq(log_bucket_take(&b, 100.5, 3, 2), 1); /* 1.0 */
	ck_assert_int_eq(log_bucket_take(&b, 100.5, 3, 2), 0);
	ck_assert_uint_eq(b.suppressed, 4);
	n = 0;
	for (i = 0; i < 10; i++) /* a long pause refills up to the burst */
		n += log_bucket_take(&b, 1000.0, 3, 2);
	ck_assert_int_eq(n, 3);
	/* A clock going back starts over rather than starving. */
	ck_assert_int_eq(log_bucket_take(&b, 5.0, 3, 2), 1);
}
END_TEST

/* How many times needle occurs in hay. */
static int
count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Bytes written to the capture file so far. */
static off_t
captured(int tmp)
{
	struct stat st;

	ck_assert_int_eq(fstat(tmp, &st), 0);
	return st.st_size;
}

START_TEST(test_log_event_line_and_flood_summary)
{
	char *out, *p, want[64], kv[LOG_KV_BUF];
	unsigned long dropped = 0, tries = 0;
	int saved, tmp, i;
	off_t before;

	log_init(1, LOG_INFO);
	tmp = capture_begin(STDERR_FILENO, &saved);
	log_event(LOG_INFO, "fetch", "origin=%s status=%d",
	    log_kvs("https://a b", kv, sizeof(kv)), 503);
	log_event(LOG_DEBUG, "fetch", "not at info");
	for (i = 0; i < 300; i++)
		log_event(LOG_WARNING, "flood", "n=%d", i);
	/*
	 * The bucket refills on the monotonic clock, which no test drives:
	 * repeat the last line until one gets through (a token comes back
	 * every 20 ms); each try that does not is one more line dropped.
	 */
	for (before = captured(tmp); captured(tmp) == before; tries++)
		log_event(LOG_WARNING, "flood", "n=last");
	out = capture_end(STDERR_FILENO, saved, tmp);
	log_init(1, LOG_ERR);
	snprintf(want, sizeof(want), "robotsd[%ld]: info: event=fetch ",
	    (long)getpid());
	ck_assert_msg(strstr(out, want) != NULL, "got %s", out);
	ck_assert_msg(strstr(out, "info: event=fetch origin=\"https://a b\" "
	                          "status=503\n") != NULL,
	    "got %s", out);
	ck_assert_int_eq(count_of(out, "not at info"), 0);
	p = strstr(out, "warn: event=log_suppressed kind=flood lines=");
	ck_assert_msg(p != NULL, "no summary in %s", out);
	dropped = strtoul(p + strlen("warn: event=log_suppressed kind=flood "
	                             "lines="),
	    NULL, 10);
	ck_assert_uint_ge(dropped, 50);
	ck_assert_uint_eq(count_of(out, "event=flood ") + dropped, 300 + tries);
	ck_assert_int_eq(count_of(out, "event=flood n=last\n"), 1);
	free(out);
}
END_TEST

/* The log suite. */
static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tl = tcase_create("log");

	tcase_add_test(tl, test_log_escape_c_style);
	tcase_add_test(tl, test_log_escape_cuts_with_ellipsis);
	tcase_add_test(tl, test_log_level_parse);
	tcase_add_test(tl, test_log_foreground_line_format_and_errno);
	tcase_add_test(
	    tl, test_log_sink_is_syslog_only_in_background_without_journal);
	tcase_add_test(tl, test_log_journal_line_has_priority_prefix_only);
	tcase_add_test(
	    tl, test_log_background_without_journal_is_not_on_stderr);
	tcase_add_test(tl, test_log_kv_values_bare_or_quoted);
	tcase_add_test(tl, test_log_bucket_refills_at_its_rate);
	tcase_add_test(tl, test_log_event_line_and_flood_summary);
	suite_add_tcase(s, tl);
	return s;
}

/* Run the suite; the exit status is the verdict. */
int
main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	unsetenv("JOURNAL_STREAM");
	log_init(1, LOG_ERR);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
