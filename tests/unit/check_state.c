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
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "robots.h"
#include "robots_int.h"
#include "capture.h"
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

/* Free the cache and load the file (want entries) into a new one on set. */
static void
reload(long want)
{
	char *cause = NULL;

	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), want);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, want);
}

/* Save the cache, free it and load the file into a new one. */
static void
save_and_reload(long want)
{
	char *cause = NULL;

	ck_assert_int_eq(state_save(cache, path, 10, &cause), want);
	ck_assert_ptr_null(cause);
	reload(want);
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

/*
 * Where record k (from 0) of a format 3 file starts (its tag), and where
 * its ruleset image does (*image, *ilen bytes): the header, then per
 * record the tag, the fixed part (112 bytes: format 2's 72, two times,
 * the version, two more string lengths), the strings, the image, the
 * count of its versions and those versions (28 bytes each).
 */
static size_t
record_at(const unsigned char *buf, int k, size_t *image, uint32_t *ilen)
{
	size_t pos = 14 + 16, rec;
	uint32_t lens[5], nvers;
	int i;

	for (;; k--) {
		ck_assert_int_eq(buf[pos], 1);
		memcpy(ilen, buf + pos + 1 + 44, 4);
		memcpy(lens, buf + pos + 1 + 52, 3 * sizeof(lens[0]));
		memcpy(lens + 3, buf + pos + 1 + 104, 2 * sizeof(lens[0]));
		for (rec = pos + 1 + 112, i = 0; i < 5; i++)
			rec += lens[i] != UINT32_MAX ? lens[i] : 0;
		if (k == 0)
			break;
		memcpy(&nvers, buf + rec + *ilen, 4); /* the versions kept */
		pos = rec + *ilen + 4 + (size_t)nvers * 28;
	}
	*image = rec;
	return pos;
}

/* Make the checksum of buf (len bytes) right again. */
static void
resum(unsigned char *buf, size_t len)
{
	uint64_t sum = checksum(buf, len - 8);

	memcpy(buf + len - 8, &sum, 8);
}

START_TEST(test_state_bad_second_record_loads_nothing)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	size_t len, pos, image;
	uint32_t ilen;
	uint64_t sum;
	int32_t bad = 99;
	unsigned char *buf;
	char *cause = NULL;

	fetch_now("https://a.test", &r);
	fetch_now("https://b.test", &r);
	buf = save_and_slurp(2, &len);
	memcpy(&sum, buf + len - 8, 8);
	ck_assert(sum == checksum(buf, len - 8)); /* the format, pinned */
	pos = record_at(buf, 1, &image, &ilen);
	memcpy(buf + pos + 1 + 32, &bad, 4); /* record 2's policy */
	resum(buf, len);                     /* a valid checksum over it */
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_ptr_nonnull(strstr(cause, ": record 2 (at byte "));
	ck_assert_ptr_nonnull(strstr(cause, "): a policy out of range"));
	free(cause);
}
END_TEST

/*
 * A record framed right whose ruleset image fails the deep check, or
 * whose times are not times (offset in the fixed part, value), is left
 * out with one log line; the records around it load.
 */
static const struct bad_field {
	const char *what;
	size_t off; /* in the fixed part; SIZE_MAX: in the image */
	double value;
} bad_fields[] = {
	{ "fetched_at NaN", 0, NAN },
	{ "expires_at inf", 8, INFINITY },
	{ "fail_since -inf", 16, -INFINITY },
	{ "next_retry -1", 24, -1 },
	{ "version_since 1e300", 72, 1e300 },
	{ "validated_at after 9999", 80, 253402300800.0 },
	{ "the image's crawl delay NaN", SIZE_MAX, NAN },
};

START_TEST(test_state_bad_image_or_time_drops_that_origin_alone)
{
	const struct bad_field *f = &bad_fields[_i];
	size_t len, pos, image;
	uint32_t ilen;
	unsigned char *buf;
	char *cause = NULL, *out;
	int saved, tmp;

	fetch_rules("https://a.test", "max-age=5000");
	fetch_rules("https://b.test", "max-age=5000");
	fetch_rules("https://c.test", "max-age=5000");
	buf = save_and_slurp(3, &len);
	pos = record_at(buf, 1, &image, &ilen);
	ck_assert_int_eq(memcmp(buf + pos + 1 + 112, "https://b.test", 14), 0);
	if (f->off != SIZE_MAX)
		memcpy(buf + pos + 1 + f->off, &f->value, sizeof(double));
	else /* the '*' group's delay, in the header of the image */
		memcpy(buf + image + offsetof(struct robots, global) +
		           offsetof(struct robots_merged, crawl_delay),
		    &f->value, sizeof(double));
	resum(buf, len);
	spit_and_restart(buf, len);
	tmp = capture_begin(STDERR_FILENO, &saved);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), 2);
	out = capture_end(STDERR_FILENO, saved, tmp);
	ck_assert_ptr_null(cause);
	ck_assert_ptr_nonnull(cache_find(cache, "https://a.test"));
	ck_assert_ptr_null(cache_find(cache, "https://b.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://c.test"));
	ck_assert_msg(strstr(out, "event=state_entry_dropped") != NULL &&
	                  strstr(out, "record=2 origin=https://b.test") != NULL,
	    "%s: %s", f->what, out);
	ck_assert_ptr_null(strstr(strstr(out, "dropped") + 1, "dropped"));
	free(out);
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
 * A ruleset from a format 2 file (an image of version 3, without
 * preference data) saved again before its refresh (the origin down, or
 * robotsd stopped first) loads again: an image of this build's version
 * may hold no preference section.
 */
START_TEST(test_state_of_format_2_saved_again_before_a_refresh_loads)
{
	struct robots_verdict v;

	load_data("state-format2.bin", 3);
	save_and_reload(3);
	ck_assert_int_eq(entry("http://rules.test")->policy, CACHE_RULES);
	ck_assert(!robots_has_prefs(entry("http://rules.test")->robots));
	robots_check(
	    entry("http://rules.test")->robots, "bot", 3, "/private/x", 10, &v);
	ck_assert_int_eq(v.allowed, 0);
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

/*
 * Give a.test four versions on a history of depth: 200 "A", 200 "B", a
 * 404, 200 "C", two days apart, each fetched twice (first and last seen
 * differ); b.test one.
 */
static void
fetch_four_versions(size_t depth)
{
	static const struct {
		const char *body;
		int status;
	} steps[] = { { "A", 200 }, { "B", 200 }, { "", 404 }, { "C", 200 } };
	struct fetch_result r;
	size_t i, j;

	set.history_depth = depth;
	cache_configure(cache, &set);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		for (j = 0; j < 2; j++) {
			r = script_result(FETCH_OK, steps[i].status);
			r.body = steps[i].body;
			r.body_len = strlen(r.body);
			fetch_now("https://a.test", &r);
			clock_advance(&clk, 2 * DAY);
		}
	fetch_rules("https://b.test", NULL);
}

/* The history of origin; how many versions. */
static size_t
history_of(const char *origin, struct cache_version *v)
{
	return cache_history(entry(origin), v, CACHE_MAX_HISTORY);
}

/*
 * The versions of an origin survive a save and a load as they were: ids,
 * times, statuses and states, newest first, and the bytes they take; an
 * origin of one version stays one.
 */
START_TEST(test_state_round_trip_keeps_the_history)
{
	struct cache_version before[CACHE_MAX_HISTORY],
	    after[CACHE_MAX_HISTORY];
	size_t n, i, bytes;

	fetch_four_versions(8);
	ck_assert_uint_eq(n = history_of("https://a.test", before), 4);
	bytes = cache_stats(cache)->bytes;
	save_and_reload(2);
	ck_assert_uint_eq(history_of("https://a.test", after), n);
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(after[i].version, before[i].version);
		ck_assert_double_eq(after[i].first_seen, before[i].first_seen);
		ck_assert_double_eq(after[i].last_seen, before[i].last_seen);
		ck_assert_double_lt(after[i].first_seen, after[i].last_seen);
		ck_assert_int_eq(after[i].http_status, before[i].http_status);
		ck_assert_int_eq(after[i].policy, before[i].policy);
	}
	/* sha256sum of "C", "status:404", "B", "A" */
	ck_assert_str_eq(after[0].version, "6b23c0d5f35d1b11");
	ck_assert_str_eq(after[1].version, "c4a3b17cef32e92b");
	ck_assert_int_eq(after[1].policy, CACHE_ALLOW_ALL);
	ck_assert_int_eq(after[1].http_status, 404);
	ck_assert_str_eq(after[2].version, "df7e70e5021544f4");
	ck_assert_str_eq(after[3].version, "559aead08264d579");
	ck_assert_uint_eq(history_of("https://b.test", after), 1);
	ck_assert_uint_eq(cache_stats(cache)->bytes, bytes);
	/* A version seen after the load goes on top of the saved ones. */
	fetch_status("https://a.test", FETCH_OK, 404);
	ck_assert_uint_eq(history_of("https://a.test", after), 4);
	ck_assert_str_eq(after[0].version, "c4a3b17cef32e92b");
	ck_assert_str_eq(after[1].version, "6b23c0d5f35d1b11");
	ck_assert_str_eq(after[2].version, "df7e70e5021544f4");
	ck_assert_str_eq(after[3].version, "559aead08264d579");
}
END_TEST

/*
 * A history saved deeper than --history-depth now allows loads its newest
 * versions; a depth under 2 keeps none, the entry being its only one.
 */
START_TEST(test_state_history_loads_within_the_depth)
{
	struct cache_version v[CACHE_MAX_HISTORY];
	char *cause = NULL;

	fetch_four_versions(8);
	ck_assert_int_eq(state_save(cache, path, 10, &cause), 2);
	set.history_depth = 2;
	reload(2);
	ck_assert_uint_eq(history_of("https://a.test", v), 2);
	ck_assert_str_eq(v[0].version, "6b23c0d5f35d1b11");
	ck_assert_str_eq(v[1].version, "c4a3b17cef32e92b");
	set.history_depth = 1;
	reload(2);
	ck_assert_uint_eq(history_of("https://a.test", v), 1);
	ck_assert_str_eq(v[0].version, "6b23c0d5f35d1b11");
}
END_TEST

/*
 * A bad saved version refuses the file whole, named. The file holds one
 * entry of four versions, which end it: its count, then 28 bytes each
 * (the id's 16 hex digits, first and last seen, the status, the state).
 */
static const struct {
	long at; /* from the count: -4; a version's field: 28 * i + ... */
	const char *bytes;
	size_t len;
	const char *why;
} bad_versions[] = {
	{ -4, "\1\0\0\0", 4, "a count of versions out of range" },
	{ -4, "\0\1\0\0", 4, "a count of versions out of range" },
	{ 28 + 3, "G", 1, "a version that is not 16 hex digits" },
	{ 28 * 3 + 15, "A", 1, "a version that is not 16 hex digits" },
	{ 26, "\0", 1, "a policy out of range" },
	{ 28 + 26, "\4", 1, "a policy out of range" },
	{ 24, "\350\3", 2, "an HTTP status out of range" },
	{ 24, "\377\377", 2, "an HTTP status out of range" },
	{ 20, "\0\0\0\0", 4, "a version last seen before it was first seen" },
};

START_TEST(test_state_bad_version_refuses_the_file)
{
	size_t len, vers;
	unsigned char *buf;
	char *cause = NULL, want[96];
	uint64_t sum;
	uint32_t n;

	fetch_four_versions(8);
	ck_assert_uint_eq(cache_purge(cache, "https://b.test"), 1);
	buf = save_and_slurp(1, &len);
	vers = len - 9 - 4 * 28; /* before the end's tag and checksum */
	memcpy(&n, buf + vers - 4, 4);
	ck_assert_uint_eq(n, 4);
	memcpy(buf + (long)vers + bad_versions[_i].at, bad_versions[_i].bytes,
	    bad_versions[_i].len);
	sum = checksum(buf, len - 8);
	memcpy(buf + len - 8, &sum, 8);
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(cache, path, set.max_bytes, &cause), -1);
	snprintf(want, sizeof(want), "): %s", bad_versions[_i].why);
	ck_assert_msg(
	    cause != NULL && strstr(cause, want) != NULL, "%s", cause);
	free(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
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
	tcase_add_loop_test(tc,
	    test_state_bad_image_or_time_drops_that_origin_alone, 0,
	    (int)(sizeof(bad_fields) / sizeof(bad_fields[0])));
	tcase_add_test(tc, test_state_bad_file_keeps_what_was_cached_before);
	tcase_add_test(tc, test_state_of_another_format_is_refused_whole);
	tcase_add_test(tc, test_state_fifo_and_oversize_are_refused);
	tcase_add_test(tc, test_state_round_trip_keeps_version_and_validators);
	tcase_add_test(tc, test_state_of_format_2_loads_without_versions);
	tcase_add_test(
	    tc, test_state_of_format_2_saved_again_before_a_refresh_loads);
	tcase_add_test(tc, test_state_full_disk_is_named);
	tcase_add_test(tc, test_state_round_trip_keeps_the_history);
	tcase_add_test(tc, test_state_history_loads_within_the_depth);
	tcase_add_loop_test(tc, test_state_bad_version_refuses_the_file, 0,
	    sizeof(bad_versions) / sizeof(bad_versions[0]));
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
