/*
 * check_state.c: the state file (state.h) saved from a cache and loaded
 * into a new one, and with a tdmrep.json cache (ops/tdmres.h) beside it,
 * both. The caches are filled through a scripted fetcher
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
#include "ops/tdmres.h"
#include "persist/state.h"
#include "test_main.h"

#define DAY 86400.0
#define TDM_PATH "/.well-known/tdmrep.json"

static char dir[64];
static char path[96];
/* tdmrep.json's cache, for the tests that make one (tdm_new()); or NULL. */
static struct cache *tdm;
/* The caches a save writes and a load fills. */
#define CS (&(struct state_caches){ cache, tdm })

/* A cache on the contract's defaults and a state path in a new directory. */
static void
setup(void)
{
	cache_setup();
	snprintf(dir, sizeof(dir), "/tmp/check_state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
}

/* Free the caches (their fetches end or are cancelled) and the files. */
static void
teardown(void)
{
	cache_free(tdm);
	tdm = NULL;
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

/* A new tdmrep.json cache on set (freed first if there was one). */
static void
tdm_new(void)
{
	cache_free(tdm);
	ck_assert_ptr_nonnull(tdm = cache_new(&set, &script_ops, &sc, &clk));
	cache_set_kind(tdm, &tdm_kind);
}

/*
 * Free the caches and load the file (want entries in all) into new ones
 * on set (a tdmrep.json cache when there was one).
 */
static void
reload(long want)
{
	char *cause = NULL;

	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	if (tdm != NULL)
		tdm_new();
	ck_assert_int_eq(
	    state_load(CS, path, set.max_bytes, NULL, &cause), want);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries +
	                      (tdm != NULL ? cache_stats(tdm)->entries : 0),
	    want);
}

/* Save the cache, free it and load the file into a new one. */
static void
save_and_reload(long want)
{
	char *cause = NULL;

	ck_assert_int_eq(state_save(CS, path, 10, NULL, &cause), want);
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
	ck_assert_int_eq(state_write(CS, fd, tmp, path, 10, NULL, &cause), -1);
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
	ck_assert_int_eq(state_save(CS, path, 10, NULL, &cause), 1);
	ck_assert_ptr_nonnull(f = fopen(path, "r+b"));
	ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
	ck_assert_int_ne(fputc('X', f), EOF);
	fclose(f);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, path));
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	free(cause);
}
END_TEST

START_TEST(test_state_missing_file_is_an_empty_start)
{
	char *cause = NULL;

	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), 0);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(state_load(CS, "/nonexistent/robotsd/state",
	                     set.max_bytes, NULL, &cause),
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

	ck_assert_int_eq(state_save(CS, path, 10, NULL, &cause), want);
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
	if (tdm != NULL)
		tdm_new();
}

/*
 * Where record k (from 0) of a file starts (its tag, 1 or 2), and where
 * its ruleset image or tdmrep.json body does (*image, *ilen bytes): the
 * header, then per record the tag, the fixed part (112 bytes: format 2's
 * 72, two times, the version, two more string lengths), the strings, the
 * image, the count of its versions and those versions (28 bytes each).
 */
static size_t
record_at(const unsigned char *buf, int k, size_t *image, uint32_t *ilen)
{
	size_t pos = 14 + 16, rec;
	uint32_t lens[5], nvers;
	int i;

	for (;; k--) {
		ck_assert(buf[pos] == 1 || buf[pos] == 2);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), 2);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), n);
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
 * tests/data/state-format4.bin was saved by the robotsd before tdmrep.json
 * was kept in the state file (format 4) after three checks:
 * http://rules.test (200), http://gone.test (404) and http://down.test
 * (503). It loads into the robots.txt cache, the tdmrep.json cache beside
 * it staying empty, and saved again (format 5) loads alike.
 */
START_TEST(test_state_of_format_4_file_loads)
{
	const struct cache_entry *e;
	struct robots_verdict v;
	int i;

	tdm_new();
	load_data("state-format4.bin", 3);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(cache_stats(tdm)->entries, 0);
		e = entry("http://rules.test");
		ck_assert_int_eq(e->policy, CACHE_RULES);
		robots_check(e->robots, "bot", 3, "/private/x", 10, &v);
		ck_assert_int_eq(v.allowed, 0);
		/* sha256sum of the body */
		ck_assert_str_eq(e->version, "38ee13a89fd0de18");
		ck_assert_int_eq(
		    entry("http://gone.test")->policy, CACHE_ALLOW_ALL);
		e = entry("http://down.test");
		ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
		ck_assert_str_eq(lifetime_cause_name(e->cause), "http_503");
		if (i == 0)
			save_and_reload(3);
	}
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
	ck_assert_int_eq(state_save(CS, path, 10, NULL, &cause), 2);
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
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
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
	ck_assert_int_eq(state_load(CS, path, 1 << 20, NULL, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, ": not a regular file"));
	free(cause);
	/* The save replaces the FIFO without opening it. */
	ck_assert_int_eq(state_save(CS, path, 10, NULL, &cause), 0);
	/* A regular file now; make it one byte too long (sparse). */
	ck_assert_int_eq(truncate(path, (off_t)state_max_size(1000) + 1), 0);
	ck_assert_int_eq(state_load(CS, path, 1000, NULL, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "bytes, more than the"));
	free(cause);
}
END_TEST

/* tdmrep.json in the state file: every state, as robots.txt's. */

#define FILE_2                                                                 \
	"[{\"location\":\"/a/*\",\"tdm-reservation\":1,\"tdm-policy\":"        \
	"\"https://t.test/p.json\"},{\"location\":\"/"                         \
	"\",\"tdm-reservation\":0}]"
#define FILE_0 "[]"

/* End origin's running tdmrep.json fetch with r. */
static void
tdm_fill(const char *origin, const struct fetch_result *r)
{
	char url[160];
	size_t i;

	snprintf(url, sizeof(url), "%s" TDM_PATH, origin);
	for (i = sc.n; i-- > 0;)
		if (script_running(&sc.f[i]) && strcmp(sc.f[i].url, url) == 0)
			break;
	ck_assert_msg(i < sc.n, "no fetch of %s runs", url);
	sc.f[i].done = 1;
	sc.f[i].cb(r, sc.f[i].arg);
}

/* An outcome: err and status, body (NULL: none), a cause for a failure. */
struct tdm_outcome {
	enum fetch_error err;
	int status;
	const char *body;
	enum fetch_cause cause;
};

/* The fetch result of step t, with validators when it is a 200. */
static struct fetch_result
tdm_result(const struct tdm_outcome *t)
{
	struct fetch_result r = script_result(t->err, t->status);

	r.cause = (unsigned char)t->cause;
	if (t->body != NULL) {
		r.body = t->body;
		r.body_len = strlen(t->body);
	}
	if (t->status == 200) {
		r.etag = "\"t1\"";
		r.last_modified = "Sun, 22 Nov 2026 08:00:00 GMT";
		r.final_url = "https://final.test" TDM_PATH;
	}
	return r;
}

/*
 * The states of the contract's TDMRep section, each of one origin: its
 * first fetch, then (a day later, the file due) a second one or none.
 */
static const struct tdm_row {
	const char *origin;
	struct tdm_outcome first, then;
	const char *state; /* tdm_state_name() after both */
	int stale;         /* a good copy served while failing */
} tdm_rows[] = {
	{ "https://rules.test", { FETCH_OK, 200, FILE_2, CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "rules", 0 },
	{ "https://empty.test", { FETCH_OK, 200, FILE_0, CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "rules", 0 },
	{ "https://html.test", { FETCH_OK, 200, "<html>", CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "invalid", 0 },
	{ "https://blank.test", { FETCH_OK, 200, "", CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "invalid", 0 },
	{ "https://object.test",
	    { FETCH_OK, 200, "{\"location\":\"/\"}", CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "invalid", 0 },
	{ "https://none.test", { FETCH_OK, 404, NULL, CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "none", 0 },
	{ "https://gone.test", { FETCH_OK, 410, NULL, CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "none", 0 },
	{ "https://down.test", { FETCH_OK, 503, NULL, CAUSE_NONE },
	    { 0, 0, NULL, 0 }, "unreachable", 0 },
	{ "https://dns.test", { FETCH_NETWORK, 0, NULL, CAUSE_DNS },
	    { 0, 0, NULL, 0 }, "unreachable", 0 },
	{ "https://outage.test", { FETCH_OK, 200, FILE_2, CAUSE_NONE },
	    { FETCH_OK, 500, NULL, CAUSE_NONE }, "rules", 1 },
	{ "https://outage-none.test", { FETCH_OK, 404, NULL, CAUSE_NONE },
	    { FETCH_NETWORK, 0, NULL, CAUSE_CONNECT }, "none", 1 },
	{ "https://changed.test", { FETCH_OK, 200, FILE_2, CAUSE_NONE },
	    { FETCH_OK, 200, FILE_0, CAUSE_NONE }, "rules", 0 },
	{ "https://revived.test", { FETCH_OK, 503, NULL, CAUSE_NONE },
	    { FETCH_OK, 200, FILE_2, CAUSE_NONE }, "rules", 0 },
	{ "https://mended.test", { FETCH_OK, 200, "<html>", CAUSE_NONE },
	    { FETCH_OK, 200, FILE_2, CAUSE_NONE }, "rules", 0 },
	{ "https://broken.test", { FETCH_OK, 200, FILE_2, CAUSE_NONE },
	    { FETCH_OK, 200, "<html>", CAUSE_NONE }, "invalid", 0 },
};

/* Fetch row's origin as the row says. */
static void
tdm_fetch_row(const struct tdm_row *row)
{
	const struct cache_entry *e;
	struct fetch_result r = tdm_result(&row->first);

	ck_assert_int_eq(
	    cache_check(tdm, row->origin, 0, NULL, &e), CACHE_PENDING);
	tdm_fill(row->origin, &r);
	if (row->then.err == 0 && row->then.status == 0)
		return;
	clock_advance(&clk, DAY);
	ck_assert_int_eq(
	    cache_check(tdm, row->origin, 0, NULL, &e), CACHE_STALE);
	r = tdm_result(&row->then);
	tdm_fill(row->origin, &r);
}

/* What a check, inspect and history see of an entry of tdmrep.json. */
struct tdm_seen {
	struct cache_entry e; /* its fields; no strings (copied below) */
	char state[16], etag[64], lm[64], version[VERSION_HEX + 1];
	char final_url[160], last_error[160];
	char warnings[1024]; /* code line message; ... */
	char answers[512];   /* reservation location policy; per path */
	struct cache_version hist[CACHE_MAX_HISTORY];
	size_t nhist, bytes;
};

/* The warnings of d as text into out. */
static void
tdm_warnings_text(const struct tdm_doc *d, char *out, size_t n)
{
	const char *code;
	uint32_t line;
	char why[256];
	size_t i, k = 0;

	out[0] = '\0';
	i = 0;
	while (d != NULL && k < n &&
	       tdmrep_file_warning(
	           &d->f, i++, &code, &line, why, sizeof(why)) == 0)
		k += (size_t)snprintf(
		    out + k, n - k, "%s %u %s; ", code, (unsigned)line, why);
}

/* The answers for a few paths of e's origin into out. */
static void
tdm_answers_text(const struct cache_entry *e, char *out, size_t n)
{
	static const char *const paths[] = { "/a/x", "/b", "/" };
	struct robots_url ru;
	struct tdm_answer a;
	const char *v;
	char url[160];
	size_t i, k = 0;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && k < n; i++) {
		snprintf(url, sizeof(url), "%s%s", e->origin, paths[i]);
		ck_assert_int_eq(
		    robots_url_split(url, strlen(url), &ru), URL_OK);
		ck_assert_ptr_nonnull(tdm_answer_of(tdm, &ru.v, NULL, &a, &v));
		k += (size_t)snprintf(out + k, n - k, "%d %d %.*s %.*s; ",
		    (int)a.state, a.reservation, (int)a.location_len,
		    a.location != NULL ? a.location : "", (int)a.policy_len,
		    a.policy != NULL ? a.policy : "");
		robots_url_split_clear(&ru);
	}
}

/* What is seen of origin's tdmrep.json now. */
static void
tdm_see(const char *origin, struct tdm_seen *s)
{
	const struct cache_entry *e = cache_find(tdm, origin);

	ck_assert_msg(e != NULL, "%s: no tdmrep.json", origin);
	memset(s, 0, sizeof(*s));
	s->e = *e;
	s->e.origin = s->e.final_url = s->e.last_error = NULL;
	s->e.validators = NULL;
	s->e.doc = NULL;
	snprintf(s->final_url, sizeof(s->final_url), "%s",
	    e->final_url != NULL ? e->final_url : "-");
	snprintf(s->last_error, sizeof(s->last_error), "%s",
	    e->last_error != NULL ? e->last_error : "-");
	snprintf(s->state, sizeof(s->state), "%s", tdm_state_name(e));
	snprintf(s->etag, sizeof(s->etag), "%s",
	    cache_entry_etag(e) != NULL ? cache_entry_etag(e) : "-");
	snprintf(s->lm, sizeof(s->lm), "%s",
	    cache_entry_last_modified(e) != NULL ? cache_entry_last_modified(e)
	                                         : "-");
	memcpy(s->version, e->version, sizeof(s->version));
	tdm_warnings_text(e->policy == CACHE_RULES ? e->doc : NULL, s->warnings,
	    sizeof(s->warnings));
	tdm_answers_text(e, s->answers, sizeof(s->answers));
	s->nhist = cache_history(e, s->hist, CACHE_MAX_HISTORY);
	s->bytes = cache_stats(tdm)->bytes;
}

/* The versions of a and b are the same. */
static void
tdm_assert_same_history(const struct tdm_seen *a, const struct tdm_seen *b)
{
	size_t i;

	ck_assert_uint_eq(b->nhist, a->nhist);
	for (i = 0; i < a->nhist; i++) {
		ck_assert_str_eq(b->hist[i].version, a->hist[i].version);
		ck_assert_double_eq(
		    b->hist[i].first_seen, a->hist[i].first_seen);
		ck_assert_double_eq(b->hist[i].last_seen, a->hist[i].last_seen);
		ck_assert_int_eq(
		    b->hist[i].http_status, a->hist[i].http_status);
		ck_assert_int_eq(b->hist[i].policy, a->hist[i].policy);
		ck_assert_uint_eq(b->hist[i].flags, a->hist[i].flags);
	}
}

/* b, seen after a load, is a as saved. */
static void
tdm_assert_same(const struct tdm_seen *a, const struct tdm_seen *b)
{
	ck_assert_str_eq(b->state, a->state);
	ck_assert_int_eq(b->e.policy, a->e.policy);
	ck_assert_int_eq(b->e.http_status, a->e.http_status);
	ck_assert_double_eq(b->e.fetched_at, a->e.fetched_at);
	ck_assert_double_eq(b->e.expires_at, a->e.expires_at);
	ck_assert_double_eq(b->e.fail_since, a->e.fail_since);
	ck_assert_double_eq(b->e.next_retry, a->e.next_retry);
	ck_assert_double_eq(b->e.version_since, a->e.version_since);
	ck_assert_double_eq(b->e.validated_at, a->e.validated_at);
	ck_assert_uint_eq(b->e.fail_streak, a->e.fail_streak);
	ck_assert_uint_eq(b->e.cause, a->e.cause);
	ck_assert_uint_eq(b->e.stale, a->e.stale);
	ck_assert_uint_eq(b->e.body_bytes, a->e.body_bytes);
	ck_assert_uint_eq(b->e.truncated, a->e.truncated);
	ck_assert_str_eq(b->version, a->version);
	ck_assert_str_eq(b->etag, a->etag);
	ck_assert_str_eq(b->lm, a->lm);
	ck_assert_str_eq(b->final_url, a->final_url);
	ck_assert_str_eq(b->last_error, a->last_error);
	ck_assert_str_eq(b->warnings, a->warnings);
	ck_assert_str_eq(b->answers, a->answers);
	tdm_assert_same_history(a, b);
	ck_assert_uint_eq(b->bytes, a->bytes);
}

/*
 * Each state of tdmrep.json (the contract's: rules, invalid with why,
 * none, unreachable with its cause and retry, a good copy served through
 * an outage, a history of two versions) saved beside a robots.txt and
 * loaded is as it was: lifetimes, validators, version, warnings, answers,
 * bytes; and a check of it is answered without a fetch.
 */
START_TEST(test_state_tdmrep_keeps_every_state)
{
	const struct tdm_row *row = &tdm_rows[_i];
	struct tdm_seen before, after;
	const struct cache_entry *e;
	size_t fetches;

	tdm_new();
	fetch_rules("https://a.test", "max-age=5000");
	tdm_fetch_row(row);
	tdm_see(row->origin, &before);
	ck_assert_str_eq(before.state, row->state);
	ck_assert_uint_eq(before.e.stale, row->stale);
	/* the newest version's flags say what its state says */
	if (before.nhist > 0)
		ck_assert_uint_eq(before.hist[0].flags,
		    strcmp(row->state, "invalid") == 0 ? CACHE_VERSION_INVALID
		                                       : 0);
	save_and_reload(2);
	tdm_see(row->origin, &after);
	tdm_assert_same(&before, &after);
	fetches = sc.n;
	ck_assert_int_ne(cache_check_cached(tdm, row->origin, &e), CACHE_MISS);
	ck_assert_uint_eq(sc.n, fetches);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_RULES);
}
END_TEST

/* The validators loaded make the next refresh conditional; a 304 keeps. */
START_TEST(test_state_tdmrep_refresh_after_a_load_is_conditional)
{
	struct fetch_result nm = script_result(FETCH_OK, 304);
	struct tdm_seen before, after;
	const struct cache_entry *e;

	tdm_new();
	tdm_fetch_row(&tdm_rows[0]);
	tdm_see("https://rules.test", &before);
	save_and_reload(1);
	clock_advance(&clk, DAY);
	ck_assert_int_eq(
	    cache_check(tdm, "https://rules.test", 0, NULL, &e), CACHE_STALE);
	ck_assert_str_eq(sc.f[sc.n - 1].url, "https://rules.test" TDM_PATH);
	ck_assert_str_eq(sc.f[sc.n - 1].etag, "\"t1\"");
	ck_assert_str_eq(
	    sc.f[sc.n - 1].last_modified, "Sun, 22 Nov 2026 08:00:00 GMT");
	tdm_fill("https://rules.test", &nm);
	ck_assert_uint_eq(cache_stats(tdm)->revalidated, 1);
	tdm_see("https://rules.test", &after);
	ck_assert_str_eq(after.state, "rules");
	ck_assert_str_eq(after.version, before.version);
	ck_assert_str_eq(after.answers, before.answers);
}
END_TEST

/*
 * Without a tdmrep.json cache (--tdmrep off) a file's records of it are
 * passed over, counted; robots.txt's load. With one, the same file loads
 * them.
 */
START_TEST(test_state_tdmrep_records_pass_over_without_its_cache)
{
	struct state_counts n;
	char *cause = NULL;

	tdm_new();
	fetch_rules("https://a.test", NULL);
	tdm_fetch_row(&tdm_rows[0]);
	tdm_fetch_row(&tdm_rows[5]);
	ck_assert_int_eq(state_save(CS, path, 10, &n, &cause), 3);
	ck_assert_int_eq(n.robots, 1);
	ck_assert_int_eq(n.tdm, 2);
	cache_free(tdm);
	tdm = NULL;
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &script_ops, &sc, &clk));
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, &n, &cause), 1);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(n.robots, 1);
	ck_assert_int_eq(n.tdm, 0);
	ck_assert_int_eq(n.skipped, 2);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_RULES);
	tdm_new();
	reload(3);
	ck_assert_str_eq(
	    tdm_state_name(cache_find(tdm, "https://none.test")), "none");
}
END_TEST

/*
 * A file of format 4 (before tdmrep.json's records) loads; one that
 * claims format 4 and holds such a record is refused whole.
 */
START_TEST(test_state_of_format_4_loads_without_tdmrep_records)
{
	uint32_t four = 4;
	unsigned char *buf;
	char *cause = NULL;
	size_t len;

	tdm_new();
	fetch_rules("https://a.test", NULL);
	buf = save_and_slurp(1, &len);
	memcpy(buf + 14, &four, 4);
	resum(buf, len);
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), 1);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(entry("https://a.test")->policy, CACHE_RULES);
	tdm_fetch_row(&tdm_rows[0]);
	buf = save_and_slurp(2, &len);
	memcpy(buf + 14, &four, 4);
	resum(buf, len);
	spit_and_restart(buf, len);
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "): an unknown record tag"));
	free(cause);
	ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	ck_assert_uint_eq(cache_stats(tdm)->entries, 0);
}
END_TEST

/*
 * A tdmrep.json record made wrong (offset from its tag, SIZE_MAX: its
 * body's first byte; the bytes written there, or a number added to the
 * uint32_t there): refused whole with why, or (why NULL) left out alone
 * while the others load, answering as they did.
 */
static const struct tdm_bad {
	const char *what;
	size_t off;
	const char *bytes;
	size_t len;
	int32_t add;
	const char *why;
} tdm_bads[] = {
	{ "a body byte changed: not its version", SIZE_MAX, "{", 1, 0, NULL },
	{ "a version that is not the body's", 1 + 88, "g", 1, 0, NULL },
	{ "fetched_at negative", 1 + 7, "\377", 1, 0, NULL },
	{ "policy none with a body", 1 + 32, "\2", 1, 0,
	    "a policy and a body that disagree" },
	{ "policy out of range", 1 + 32, "\143", 1, 0,
	    "a policy out of range" },
	{ "body_bytes one short", 1 + 40, NULL, 0, -1,
	    "a policy and a body that disagree" },
	{ "image_len one more", 1 + 44, NULL, 0, 1,
	    "a policy and a body that disagree" },
	{ "image_len past the cap", 1 + 44, NULL, 0, 600000,
	    "a body longer than a fetch keeps" },
	{ "tag 3", 0, "\3", 1, 0, "an unknown record tag" },
};

/* Make record k of buf wrong as b says. */
static void
tdm_spoil(unsigned char *buf, int k, const struct tdm_bad *b)
{
	size_t pos, image;
	uint32_t ilen, v;

	pos = record_at(buf, k, &image, &ilen);
	ck_assert_int_eq(buf[pos], 2);
	if (b->off == SIZE_MAX)
		memcpy(buf + image, b->bytes, b->len);
	else if (b->bytes != NULL)
		memcpy(buf + pos + b->off, b->bytes, b->len);
	else {
		memcpy(&v, buf + pos + b->off, 4);
		v += (uint32_t)b->add;
		memcpy(buf + pos + b->off, &v, 4);
	}
}

START_TEST(test_state_tdmrep_bad_record)
{
	static const char *const o[] = { "https://a.test", "https://b.test",
		"https://c.test" };
	const struct tdm_bad *b = &tdm_bads[_i];
	struct tdm_seen before[3], after;
	unsigned char *buf;
	char *cause = NULL, *out;
	size_t len, i;
	int saved, tmp;

	tdm_new();
	fetch_rules("https://r.test", NULL);
	for (i = 0; i < 3; i++) {
		struct tdm_row row = tdm_rows[0];

		row.origin = o[i];
		tdm_fetch_row(&row);
		tdm_see(o[i], &before[i]);
	}
	buf = save_and_slurp(4, &len);
	tdm_spoil(buf, 2, b); /* b.test's, after r.test's and a.test's */
	resum(buf, len);
	spit_and_restart(buf, len);
	tmp = capture_begin(STDERR_FILENO, &saved);
	ck_assert_int_eq(state_load(CS, path, set.max_bytes, NULL, &cause),
	    b->why != NULL ? -1 : 3);
	out = capture_end(STDERR_FILENO, saved, tmp);
	if (b->why != NULL) {
		ck_assert_msg(cause != NULL && strstr(cause, b->why) != NULL,
		    "%s: %s", b->what, cause);
		ck_assert_uint_eq(cache_stats(tdm)->entries, 0);
		ck_assert_uint_eq(cache_stats(cache)->entries, 0);
	} else {
		ck_assert_msg(strstr(out, "record=3 origin=https://b.test "
		                          "resource=tdmrep reason=") != NULL,
		    "%s: %s", b->what, out);
		ck_assert_ptr_null(cache_find(tdm, "https://b.test"));
		for (i = 0; i < 3; i += 2) {
			tdm_see(o[i], &after);
			before[i].bytes = after.bytes; /* one entry fewer */
			tdm_assert_same(&before[i], &after);
		}
	}
	free(cause);
	free(out);
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
	tc = tcase_create("tdmrep");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_state_tdmrep_keeps_every_state, 0,
	    (int)(sizeof(tdm_rows) / sizeof(tdm_rows[0])));
	tcase_add_test(
	    tc, test_state_tdmrep_refresh_after_a_load_is_conditional);
	tcase_add_test(
	    tc, test_state_tdmrep_records_pass_over_without_its_cache);
	tcase_add_test(tc, test_state_of_format_4_loads_without_tdmrep_records);
	tcase_add_test(tc, test_state_of_format_4_file_loads);
	tcase_add_loop_test(tc, test_state_tdmrep_bad_record, 0,
	    (int)(sizeof(tdm_bads) / sizeof(tdm_bads[0])));
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
