/*
 * check_state.c: the state file (state.h) saved from a cache and loaded
 * into a new one. The cache is filled through a scripted fetcher
 * (scripted_fetch.h) on a frozen clock, so what was saved is known exactly.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <fcntl.h>

#include <check.h>

#include "robots.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "scripted_fetch.h"
#include "persist/state.h"
#include "test_main.h"

#define DAY 86400.0

static char dir[64];
static char path[96];

/* A cache on the contract's defaults and a state path in a new directory. */
static void
setup(void)
{
	cache_setup();
	snprintf(dir, sizeof(dir), "/tmp/check_state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
}

/* Free the cache (its fetches end or are cancelled) and the files. */
static void
teardown(void)
{
	cache_teardown();
	unlink(path);
	rmdir(dir);
}

/* fetch_now() with a 200 disallowing /p, used for max_age seconds. */
static void
fetch_rules(const char *origin, const char *max_age)
{
	struct fetch_result r = script_result(FETCH_OK, 200);

	r.body = "User-agent: *\nDisallow: /p\n";
	r.body_len = strlen(r.body);
	r.cache_control = max_age;
	r.final_url = "https://final.test/robots.txt";
	fetch_now(origin, &r);
}

/* Save the cache, free it and load the file into a new one. */
static void
save_and_reload(long want)
{
	char *cause = NULL;

	ck_assert_int_eq(state_save(cache, path, 10, &cause), want);
	ck_assert_ptr_null(cause);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), want);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, want);
}

/*
 * A full disk (/dev/full) says so: "No space left on device", not the
 * "Input/output error" that stdio's error flag alone would suggest, when
 * the state is larger than the write buffer.
 */
START_TEST(test_state_full_disk_is_named)
{
	static char body[4096];
	char origin[64], tmp[sizeof(path) + 16], *cause = NULL;
	struct fetch_result r = script_result(FETCH_OK, 200);
	int fd, i;

	/* 1,000 bodies of 4 KiB: several times the 1 MiB write buffer */
	memset(body, '#', sizeof(body));
	r.body = body;
	r.body_len = sizeof(body);
	for (i = 0; i < 1000; i++) {
		snprintf(origin, sizeof(origin), "https://o%d.test", i);
		fetch_now(origin, &r);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-FULL00", path);
	ck_assert_int_ne(fd = open("/dev/full", O_WRONLY | O_CLOEXEC), -1);
	ck_assert_int_eq(state_write(cache, fd, tmp, path, 10, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(strchr(cause, ':'), ": No space left on device");
	free(cause);
}
END_TEST

START_TEST(test_state_round_trip_keeps_rules_lifetime_and_retry_state)
{
	struct fetch_result down = script_result(FETCH_OK, 500);
	const struct cache_entry *e;
	struct robots_verdict v;
	double retry_at;

	fetch_rules("https://a.test", "max-age=5000");
	fetch_now("https://down.test", &down);
	retry_at = entry("https://down.test")->next_retry;
	/* A first fetch still running has nothing to save. */
	ck_assert_int_eq(check_now("https://new.test", &e), CACHE_PENDING);
	save_and_reload(2);
	ck_assert_ptr_null(cache_find(cache, "https://new.test"));
	e = entry("https://a.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->http_status, 200);
	ck_assert_str_eq(e->final_url, "https://final.test/robots.txt");
	ck_assert_double_eq(e->fetched_at, SCRIPT_T0);
	ck_assert_double_eq(cache_expires_in(cache, e), 5000);
	robots_check(e->robots, "bot", 3, "/p", 2, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.line, 2);
	e = entry("https://down.test");
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(e->http_status, 500);
	ck_assert_str_eq(e->last_error, "HTTP status 500");
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_double_eq(e->fail_since, SCRIPT_T0);
	ck_assert_double_eq(e->next_retry, retry_at);
}
END_TEST

/*
 * Each failure keeps its cause across a save and a load, the ones no HTTP
 * status tells included, and a good copy served stale while failing keeps
 * the failure's. Names from docs/protocol.md's cause codes.
 */
START_TEST(test_state_keeps_the_cause_of_each_failure)
{
	static const struct {
		const char *origin;
		enum fetch_error error;
		enum fetch_cause net; /* the transfer's, for FETCH_NETWORK */
		int status;
		const char *want;
	} rows[] = {
		{ "https://dns.test", FETCH_NETWORK, CAUSE_DNS, 0, "dns" },
		{ "https://connect.test", FETCH_NETWORK, CAUSE_CONNECT, 0,
		    "connect" },
		{ "https://tls.test", FETCH_NETWORK, CAUSE_TLS, 0, "tls" },
		{ "https://timeout.test", FETCH_TIMEOUT, CAUSE_NONE, 0,
		    "timeout" },
		{ "https://private.test", FETCH_PRIVATE_ADDR, CAUSE_NONE, 0,
		    "private_address" },
		{ "https://s503.test", FETCH_OK, CAUSE_NONE, 503, "http_503" },
		{ "https://s500.test", FETCH_OK, CAUSE_NONE, 500, "http_5xx" },
		{ "https://s429.test", FETCH_OK, CAUSE_NONE, 429, "http_429" },
	};
	struct fetch_result r;
	const struct cache_entry *e;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r = script_result(rows[i].error, rows[i].status);
		r.cause = (unsigned char)rows[i].net;
		fetch_now(rows[i].origin, &r);
	}
	/* a good copy, then a connection that fails: served stale */
	fetch_rules("https://stale.test", "max-age=60");
	clock_advance(&clk, 61);
	ck_assert_int_eq(check_now("https://stale.test", &e), CACHE_STALE);
	r = script_result(FETCH_NETWORK, 0);
	r.cause = CAUSE_CONNECT;
	script_fill(&sc, "https://stale.test", &r);
	ck_assert_int_eq(entry("https://stale.test")->stale, 1);
	save_and_reload((long)(sizeof(rows) / sizeof(rows[0])) + 1);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		e = entry(rows[i].origin);
		ck_assert_uint_eq(e->fail_streak, 1);
		ck_assert_msg(
		    strcmp(lifetime_cause_name(e->cause), rows[i].want) == 0,
		    "%s: cause %s, want %s", rows[i].origin,
		    lifetime_cause_name(e->cause), rows[i].want);
	}
	e = entry("https://stale.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_str_eq(lifetime_cause_name(e->cause), "connect");
	/* an origin that recovers drops its cause, saved or not */
	clock_advance(&clk, 3600);
	ck_assert_int_eq(check_now("https://s503.test", &e), CACHE_STALE);
	fill_status("https://s503.test", FETCH_OK, 404);
	save_and_reload((long)(sizeof(rows) / sizeof(rows[0])) + 1);
	ck_assert_int_eq(entry("https://s503.test")->cause, CAUSE_NONE);
}
END_TEST

START_TEST(test_state_loaded_entries_are_refreshed_when_due)
{
	const struct cache_entry *e;

	fetch_rules("https://a.test", "max-age=5000");
	save_and_reload(1);
	clock_advance(&clk, 4999);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_uint_eq(sc.n, 1);
	clock_advance(&clk, 1);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_uint_eq(sc.n, 2);
	ck_assert_uint_eq(script_count(&sc, "https://a.test"), 1);
}
END_TEST

START_TEST(test_state_keeps_a_stale_good_copy_past_30_days)
{
	struct fetch_result down = script_result(FETCH_NETWORK, 0);
	const struct cache_entry *e;

	fetch_rules("https://a.test", NULL);
	clock_advance(&clk, DAY);
	fetch_now("https://a.test", &down);
	ck_assert_int_eq(entry("https://a.test")->stale, 1);
	save_and_reload(1);
	clock_advance(&clk, 31 * DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	/* Without its good copy it would now allow all. */
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_ptr_nonnull(e->robots);
}
END_TEST

START_TEST(test_state_damaged_file_loads_nothing)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	char *cause = NULL;
	FILE *f;

	fetch_now("https://a.test", &r);
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 1);
	ck_assert_ptr_nonnull(f = fopen(path, "r+b"));
	ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
	ck_assert_int_ne(fputc('X', f), EOF);
	fclose(f);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, path));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	free(cause);
}
END_TEST

START_TEST(test_state_missing_file_is_an_empty_start)
{
	char *cause = NULL;

	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), 0);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(state_load(cache, "/nonexistent/robotsd/state",
	                     set.max_bytes, &cause),
	    0);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
}
END_TEST

/* The state file suite. */
/* One word into the state file's checksum. */
static uint64_t
mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* The state file's checksum: 8-byte words, the last zero-padded, then len. */
static uint64_t
checksum(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i;

	for (i = 0; i < len; i += 8) {
		w = 0;
		memcpy(&w, p + i, len - i < 8 ? len - i : 8);
		h = mix(h, w);
	}
	if (len % 8 == 0)
		h = mix(h, 0);
	return mix(h, len);
}

/* Read the whole (small) state file; *len its size. */
static unsigned char *
slurp(size_t *len)
{
	unsigned char *buf = malloc(1 << 20);
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* Write buf over the state file. */
static void
spit(const unsigned char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* Save the cache (want entries) and read the file back; *len its size. */
static unsigned char *
save_and_slurp(long want, size_t *len)
{
	char *cause = NULL;

	ck_assert_int_eq(state_save(cache, path, 10, &cause), want);
	return slurp(len);
}

/* Write buf (then freed) over the state file; start a new, empty cache. */
static void
spit_and_restart(unsigned char *buf, size_t len)
{
	spit(buf, len);
	free(buf);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
}

START_TEST(test_state_bad_second_record_loads_nothing)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	size_t len, pos = 14 + 16, rec;
	uint32_t lens[5], ilen;
	uint64_t sum;
	int32_t bad = 99;
	unsigned char *buf;
	char *cause = NULL;

	fetch_now("https://a.test", &r);
	fetch_now("https://b.test", &r);
	buf = save_and_slurp(2, &len);
	memcpy(&sum, buf + len - 8, 8);
	ck_assert(sum == checksum(buf, len - 8)); /* the format, pinned */
	/*
	 * Skip record 1: tag, fixed part (112 bytes: format 2's 72, two
	 * times, the version, two more string lengths), strings, image.
	 */
	memcpy(&ilen, buf + pos + 1 + 44, 4);
	memcpy(lens, buf + pos + 1 + 52, 3 * sizeof(lens[0]));
	memcpy(lens + 3, buf + pos + 1 + 104, 2 * sizeof(lens[0]));
	for (rec = pos + 1 + 112, pos = 0; pos < 5; pos++)
		rec += lens[pos] != UINT32_MAX ? lens[pos] : 0;
	pos = rec + ilen;
	ck_assert_int_eq(buf[pos], 1);
	memcpy(buf + pos + 1 + 32, &bad, 4); /* record 2's policy */
	sum = checksum(buf, len - 8);
	memcpy(buf + len - 8, &sum, 8); /* a valid checksum over it */
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_ptr_nonnull(strstr(cause, ": record 2 (at byte "));
	ck_assert_ptr_nonnull(strstr(cause, "): a policy out of range"));
	free(cause);
}
END_TEST

START_TEST(test_state_bad_file_keeps_what_was_cached_before)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	size_t len, before;
	unsigned char *buf;
	char *cause = NULL;

	fetch_now("https://a.test", &r);
	fetch_now("https://b.test", &r);
	buf = save_and_slurp(2, &len);
	buf[len - 1] ^= 1; /* the checksum, read after both records */
	spit_and_restart(buf, len);
	r = script_result(FETCH_OK, 500);
	fetch_now("https://b.test", &r);
	before = cache_stats(cache)->bytes;
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "a checksum that does not match"));
	free(cause);
	/* a.test came and went; b.test is the one fetched here. */
	ck_assert_uint_eq(cache_stats(cache)->entries, 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_int_eq(entry("https://b.test")->http_status, 500);
	ck_assert_uint_eq(cache_stats(cache)->bytes, before);
}
END_TEST

START_TEST(test_state_of_another_format_is_refused_whole)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	uint32_t old = 1;
	size_t len;
	unsigned char *buf;
	char *cause = NULL;

	fetch_now("https://a.test", &r);
	buf = save_and_slurp(1, &len);
	memcpy(buf + 14, &old, 4); /* a format before the previous one */
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	ck_assert_ptr_nonnull(
	    strstr(cause, ": written by another robotsd build or machine"));
	free(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
}
END_TEST

/* The version, its times and the validators survive a restart. */
START_TEST(test_state_round_trip_keeps_version_and_validators)
{
	struct fetch_result r = script_result(FETCH_OK, 200);
	const struct cache_entry *e;

	r.body = "User-agent: *\nDisallow: /p\n";
	r.body_len = strlen(r.body);
	r.etag = "\"e1\"";
	r.last_modified = "Sun, 22 Nov 2026 08:00:00 GMT";
	fetch_now("https://a.test", &r);
	fetch_status("https://gone.test", FETCH_OK, 404);
	fetch_status("https://down.test", FETCH_TIMEOUT, 0);
	save_and_reload(3);
	e = entry("https://a.test");
	/* sha256sum of the body, of "status:404", of "error:timeout" */
	ck_assert_str_eq(e->version, "09157021beade51a");
	ck_assert_double_eq(e->version_since, SCRIPT_T0);
	ck_assert_double_eq(e->validated_at, SCRIPT_T0);
	ck_assert_str_eq(cache_entry_etag(e), "\"e1\"");
	ck_assert_str_eq(
	    cache_entry_last_modified(e), "Sun, 22 Nov 2026 08:00:00 GMT");
	ck_assert_double_eq(cache_expires_in(cache, e), DAY);
	e = entry("https://gone.test");
	ck_assert_str_eq(e->version, "c4a3b17cef32e92b");
	ck_assert_ptr_null(e->validators);
	ck_assert_str_eq(
	    entry("https://down.test")->version, "b36ef9474f22db64");
}
END_TEST

/*
 * tests/data/state-format2.bin was saved by the robotsd before versions
 * (format 2, ruleset images of version 3) after three checks against the
 * integration tests' origin: http://rules.test (200, "User-agent:
 * *\nDisallow: /private\n", max-age=3600), http://gone.test (404) and
 * http://down.test (503). It loads; its entries have no version and are
 * due at once, so the first check of each refreshes it.
 */
/* Load the state file tests/data/name, which holds n entries. */
static void
load_data(const char *name, long n)
{
	char file[256], *cause = NULL;
	unsigned char buf[4096];
	size_t len;
	FILE *in;

	snprintf(file, sizeof(file), "%s/%s", TESTDATADIR, name);
	ck_assert_msg((in = fopen(file, "rb")) != NULL, "%s", file);
	len = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	ck_assert_uint_lt(len, sizeof(buf));
	spit(buf, len);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), n);
	ck_assert_ptr_null(cause);
}

START_TEST(test_state_of_format_2_loads_without_versions)
{
	const struct cache_entry *e;
	struct robots_verdict v;

	load_data("state-format2.bin", 3);
	e = entry("http://rules.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->http_status, 200);
	ck_assert_str_eq(e->version, "");
	ck_assert_ptr_null(e->validators);
	robots_check(e->robots, "bot", 3, "/private/x", 10, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_int_eq(entry("http://gone.test")->policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(entry("http://gone.test")->http_status, 404);
	ck_assert_int_eq(entry("http://down.test")->policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(entry("http://down.test")->http_status, 503);
	/* Due now: answered from the loaded copy while the refresh runs. */
	ck_assert_int_eq(check_now("http://rules.test", &e), CACHE_STALE);
	ck_assert_uint_eq(sc.n, 1);
	fill_status("http://rules.test", FETCH_OK, 404);
	ck_assert_str_eq(
	    entry("http://rules.test")->version, "c4a3b17cef32e92b");
}
END_TEST

/*
 * tests/data/state-format3-nocause.bin was saved by the robotsd before
 * causes were kept (format 3, the cause byte written as 0) after three
 * checks: http://rules.test (200), http://down.test (503) and
 * http://dead.test (connection refused). It loads as it always did: the
 * 503 names its cause from its status, the refused connection, which no
 * status tells, is "other". Its ruleset images are of version 4 (before
 * ai-use): read without preferences, so the cache refreshes them.
 */
START_TEST(test_state_of_format_3_before_causes_loads)
{
	const struct cache_entry *e;

	load_data("state-format3-nocause.bin", 3);
	e = entry("http://rules.test");
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->cause, CAUSE_NONE);
	ck_assert_str_eq(e->version, "38ee13a89fd0de18");
	ck_assert_int_eq(robots_has_prefs(e->robots), 0);
	e = entry("http://down.test");
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_str_eq(lifetime_cause_name(e->cause), "http_503");
	e = entry("http://dead.test");
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(e->http_status, 0);
	ck_assert_str_eq(lifetime_cause_name(e->cause), "other");
	ck_assert_ptr_nonnull(strstr(e->last_error, "Couldn't connect"));
}
END_TEST

START_TEST(test_state_fifo_and_oversize_are_refused)
{
	char *cause = NULL;

	ck_assert_uint_eq(state_max_size(1000), 2000 + (1 << 20));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(state_load(cache, path, 1 << 20, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, ": not a regular file"));
	free(cause);
	/* The save replaces the FIFO without opening it. */
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 0);
	/* A regular file now; make it one byte too long (sparse). */
	ck_assert_int_eq(truncate(path, (off_t)state_max_size(1000) + 1), 0);
	ck_assert_int_eq(state_load(cache, path, 1000, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "bytes, more than the"));
	free(cause);
}
END_TEST

static Suite *
state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(
	    tc, test_state_round_trip_keeps_rules_lifetime_and_retry_state);
	tcase_add_test(tc, test_state_loaded_entries_are_refreshed_when_due);
	tcase_add_test(tc, test_state_keeps_the_cause_of_each_failure);
	tcase_add_test(tc, test_state_of_format_3_before_causes_loads);
	tcase_add_test(tc, test_state_keeps_a_stale_good_copy_past_30_days);
	tcase_add_test(tc, test_state_damaged_file_loads_nothing);
	tcase_add_test(tc, test_state_missing_file_is_an_empty_start);
	tcase_add_test(tc, test_state_bad_second_record_loads_nothing);
	tcase_add_test(tc, test_state_bad_file_keeps_what_was_cached_before);
	tcase_add_test(tc, test_state_of_another_format_is_refused_whole);
	tcase_add_test(tc, test_state_fifo_and_oversize_are_refused);
	tcase_add_test(tc, test_state_round_trip_keeps_version_and_validators);
	tcase_add_test(tc, test_state_of_format_2_loads_without_versions);
	tcase_add_test(tc, test_state_full_disk_is_named);
	suite_add_tcase(s, tc);
	return s;
}

/* Run the suite; the exit status is the verdict. */
/* Warnings only: the tests provoke the notices. */
static int
quiet_log(void)
{
	log_init(1, LOG_WARNING);
	return 0;
}

TEST_PROGRAM(state_suite, quiet_log, NULL);
