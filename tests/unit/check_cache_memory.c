/*
 * check_cache_memory.c: what the cache holds and counts: each entry's
 * bytes, eviction by bytes in LRU order (never of an entry in flight), and
 * the counters of the stats op and /metrics (checks, fetches by class and
 * duration). Same fixture as check_cache.c: a scripted fetcher
 * (scripted_fetch.h) and a frozen clock. An entry's bytes are what the
 * allocator holds for its blocks (xheld()): the usable size and the size
 * word before it.
 */
#include <config.h>

#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "robots.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "cache/fetchlog.h"
#include "base/histo.h"
#include "cache/lifetime.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "scripted_fetch.h"
#include "cache_fixture.h"
#include "test_main.h"

/*
 * What the allocator may hold beyond a block of n bytes and its size word:
 * glibc rounds a chunk up to 16 bytes (and to its 32-byte minimum), and a
 * realloc() that shrinks keeps a rest under that minimum; ASan's
 * allocator reports the size asked for.
 */
#define HELD_SLACK 48

/* A block of n bytes is charged n and one size word, plus its rounding. */
static void
assert_held(size_t held, size_t n)
{
	ck_assert_uint_ge(held, n + sizeof(size_t));
	ck_assert_uint_le(held, n + sizeof(size_t) + HELD_SLACK);
}

START_TEST(test_entry_bytes_and_lru_eviction_by_bytes)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	size_t one;

	fetch_status("https://a.test", FETCH_OK, 404);
	one = st->bytes;
	ck_assert_uint_gt(one, strlen("https://a.test"));
	/*
	 * An idle entry is one block: its fields (with its version id, the
	 * two times of that version, the failure's cause and pointers to its
	 * validators and its history, both NULL here) and its origin.
	 */
	ck_assert_uint_le(one,
	    184 + strlen("https://a.test") + 1 + sizeof(size_t) + HELD_SLACK);
	fetch_rules("https://r.test");
	/* The same block, and the ruleset's (robots_memsize() asked for). */
	assert_held(st->bytes - 2 * one,
	    robots_memsize(entry("https://r.test")->robots));
	ck_assert_uint_eq(cache_purge(cache, "https://r.test"), 1);
	ck_assert_uint_eq(st->bytes, one);
	fetch_status("https://b.test", FETCH_OK, 404);
	fetch_status("https://c.test", FETCH_OK, 404);
	set.max_bytes = 3 * one;
	cache_configure(cache, &set);
	ck_assert_uint_eq(st->evictions, 0);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	fetch_status("https://d.test", FETCH_OK, 404);
	ck_assert_ptr_null(cache_find(cache, "https://b.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://c.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://d.test"));
	ck_assert_uint_eq(st->evictions, 1);
	ck_assert_uint_eq(st->entries, 3);
	ck_assert_uint_eq(st->bytes, 3 * one);
}
END_TEST

/*
 * xheld(), the rule by table: a block of n bytes is charged at least n and
 * its size word, and no more than the allocator's rounding above that (a
 * page for a block glibc maps on its own, from 128 KB); NULL holds nothing.
 */
START_TEST(test_held_is_the_block_and_its_size_word)
{
	static const struct {
		size_t n;     /* bytes asked for */
		size_t slack; /* the most rounding may add */
	} t[] = {
		{ 1, 32 },
		{ 24, 16 },
		{ 25, 16 },
		{ 100, 16 },
		{ 1000, 16 },
		{ 4096, 16 },
		{ 65536, 16 },
		{ 200 * 1024, 4096 + 16 },
		{ 600 * 1024, 4096 + 16 },
	};
	size_t i, held;
	void *p;

	ck_assert_uint_eq(xheld(NULL), 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_ptr_nonnull(p = malloc(t[i].n));
		held = xheld(p);
		ck_assert_msg(held >= t[i].n + sizeof(size_t) &&
		                  held <= t[i].n + sizeof(size_t) + t[i].slack,
		    "%zu bytes: held %zu", t[i].n, held);
		free(p);
	}
}
END_TEST

/* A robots.txt of about n bytes, distinct per origin number i. */
static size_t
make_body(char *buf, size_t cap, unsigned i, size_t n)
{
	size_t len = (size_t)snprintf(buf, cap, "User-agent: *\n");

	while (len < n && len + 64 < cap)
		len += (size_t)snprintf(buf + len, cap - len,
		    "Disallow: /o%u/p%zu/\nAllow: /o%u/p%zu/x$\n", i, len, i,
		    len);
	return len;
}

/*
 * Does glibc's allocator serve malloc() here? Its heap in use (mallinfo2())
 * then grows by a mapped block's size; under ASan or valgrind, whose
 * allocators it does not see, it does not.
 */
static int
glibc_heap(void)
{
	struct mallinfo2 a = mallinfo2(), b;
	void *p = malloc(1 << 20);
	int yes;

	b = mallinfo2();
	yes = p != NULL && b.hblkhd >= a.hblkhd + (1 << 20);
	free(p);
	return yes;
}

/*
 * What --cache-max-bytes caps is what the heap spends: fill the cache with
 * 1,500 origins (mostly small rulesets, where rounding weighs most; every
 * 250th of about 150 KB, which glibc maps on its own), each with
 * validators and a final URL. From the 100th origin on (the allocator's
 * per-thread cache of freed chunks, counted in use, is full of parser
 * scratch by then) the cache's bytes grow within 1.5% of the heap in use
 * (mallinfo2()), which also holds the cache's hash table. Charging the
 * sizes asked for counts 96.6% of it here. Only glibc's heap is
 * measured: another allocator's is not mallinfo2()'s.
 */
START_TEST(test_bytes_are_what_the_heap_holds)
{
	static char body[160 * 1024];
	const struct cache_stats *st = cache_stats(cache);
	struct fetch_result r;
	char origin[64], final[96];
	struct mallinfo2 m0, m1;
	size_t used0 = 0, used1, heap, bytes0 = 0, bytes;
	unsigned i;

	for (i = 0; i < 1500; i++) {
		if (i == 100) {
			m0 = mallinfo2();
			used0 = m0.uordblks + m0.hblkhd;
			bytes0 = st->bytes;
		}
		snprintf(origin, sizeof(origin), "https://o%u.example.test", i);
		snprintf(final, sizeof(final), "%s/robots.txt", origin);
		r = script_result(FETCH_OK, 200);
		r.body = body;
		r.body_len = make_body(body, sizeof(body), i,
		    i % 250 == 0 ? 150 * 1024 : i % 7 * 40);
		r.final_url = final;
		r.etag = "\"5f3a-1c2b\"";
		r.last_modified = "Mon, 23 Nov 2026 08:00:00 GMT";
		fetch_now(origin, &r);
	}
	ck_assert_uint_eq(st->entries, 1500);
	m1 = mallinfo2();
	used1 = m1.uordblks + m1.hblkhd;
	heap = used1 - used0;
	bytes = st->bytes - bytes0;
	if (glibc_heap())
		ck_assert_msg(
		    bytes >= heap * 985 / 1000 && bytes <= heap * 1015 / 1000,
		    "cache bytes %zu, heap growth %zu", bytes, heap);
	ck_assert_uint_eq(cache_purge_all(cache), 1500);
	ck_assert_uint_eq(st->bytes, 0);
}
END_TEST

START_TEST(test_lru_never_evicts_entries_in_flight)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	struct probe p;

	wait_on("https://a.test", &p);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
	fetch_status("https://c.test", FETCH_OK, 404);
	set.max_bytes = 1;
	cache_configure(cache, &set);
	ck_assert_ptr_nonnull(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_ptr_null(cache_find(cache, "https://c.test"));
	ck_assert_uint_eq(st->evictions, 1);
	ck_assert_uint_eq(script_count(&sc, "https://a.test"), 1);
	ck_assert_uint_eq(script_count(&sc, "https://b.test"), 1);
	/* Once its fetch ends and its waiter is answered, it may go. */
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p.calls, 1);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_uint_eq(st->evictions, 2);
}
END_TEST

/* The second cache of test_two_caches_one_budget and its fetches. */
static struct script sc2;
static struct cache *other;

/* A 404 for origin in the other cache: its check, then its fetch's end. */
static void
other_404(const char *origin)
{
	struct fetch_result r = script_result(FETCH_OK, 404);
	const struct cache_entry *e;

	ck_assert_int_eq(
	    cache_check(other, origin, 0, NULL, &e), CACHE_PENDING);
	script_fill(&sc2, origin, &r);
}

/*
 * Two caches, one budget (robots.txt's and tdmrep.json's under one
 * --cache-max-bytes): their bytes together stay within the cap, the idle
 * entry used least recently of either goes first, whichever cache is
 * inserting, and a cache whose peer holds nothing keeps the whole cap.
 */
START_TEST(test_two_caches_one_budget)
{
	const struct cache_stats *st = cache_stats(cache), *st2;
	const struct cache_entry *e;
	size_t one;

	script_init(&sc2);
	ck_assert_ptr_nonnull(other = cache_new(&set, &script_ops, &sc2, &clk));
	cache_share_budget(cache, other);
	st2 = cache_stats(other);
	fetch_status("https://a.test", FETCH_OK, 404);
	one = st->bytes;
	fetch_status("https://b.test", FETCH_OK, 404);
	fetch_status("https://c.test", FETCH_OK, 404);
	set.max_bytes = 3 * one;
	cache_configure(cache, &set);
	cache_configure(other, &set);
	/* the other holds nothing: the whole cap is this one's */
	ck_assert_uint_eq(st->entries, 3);
	ck_assert_uint_eq(st->evictions, 0);
	/* the other's first entry: a, used least recently, goes */
	other_404("https://x.test");
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_ptr_nonnull(cache_find(other, "https://x.test"));
	ck_assert_uint_eq(st->bytes + st2->bytes, 3 * one);
	/* b used again: of c and x, c is older */
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_HIT);
	other_404("https://y.test");
	ck_assert_ptr_null(cache_find(cache, "https://c.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_ptr_nonnull(cache_find(other, "https://x.test"));
	ck_assert_uint_eq(st->evictions, 2);
	/* this one inserting: the other's x is now the oldest, and goes */
	fetch_status("https://d.test", FETCH_OK, 404);
	ck_assert_ptr_null(cache_find(other, "https://x.test"));
	ck_assert_ptr_nonnull(cache_find(other, "https://y.test"));
	ck_assert_ptr_nonnull(cache_find(cache, "https://b.test"));
	ck_assert_uint_eq(st2->evictions, 1);
	ck_assert_uint_eq(st->bytes + st2->bytes, 3 * one);
	/* the other gone: the whole cap again, nothing evicted for e */
	cache_free(other);
	other = NULL;
	script_assert_settled(&sc2);
	fetch_status("https://e.test", FETCH_OK, 404);
	ck_assert_uint_eq(st->entries, 3);
	ck_assert_uint_eq(st->evictions, 2);
}
END_TEST

/* Every fetch applied is counted by class and its duration observed. */
START_TEST(test_fetch_stats_by_class_and_duration)
{
	static const struct {
		const char *origin;
		enum fetch_error err;
		int status;
		double seconds;
		enum fetch_class fc;
	} t[] = {
		{ "https://a.test", FETCH_OK, 200, 0.3, FC_2XX },
		{ "https://b.test", FETCH_OK, 503, 0.002, FC_5XX },
		{ "https://c.test", FETCH_OK, 429, 0.002, FC_429 },
		{ "https://d.test", FETCH_OK, 404, 0.002, FC_4XX },
		{ "https://e.test", FETCH_OK, 304, 0.002, FC_3XX },
		{ "https://f.test", FETCH_NETWORK, 0, 0.0, FC_NETWORK },
		{ "https://g.test", FETCH_TIMEOUT, 0, 30.5, FC_TIMEOUT },
		{ "https://h.test", FETCH_REDIRECTS, 301, 0.002, FC_REDIRECTS },
		{ "https://i.test", FETCH_PRIVATE_ADDR, 0, 0.0, FC_REFUSED },
		/* robotsd's own shortage: counted, no transfer observed */
		{ "https://j.test", FETCH_LOCAL, 0, 0.0, FC_LOCAL },
	};
	const struct fetch_stats *st = cache_fetch_stats(cache);
	struct fetch_result r;
	size_t i;

	log_set_level(LOG_ERR); /* the fetch lines are fetchlog's business */
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		r = script_result(t[i].err, t[i].status);
		r.seconds = t[i].seconds;
		ck_assert_int_eq(fetch_class_of(&r), t[i].fc);
		fetch_now(t[i].origin, &r);
		ck_assert_uint_eq(st->by_class[t[i].fc], 1);
	}
	for (i = 0; i < FC_COUNT; i++)
		ck_assert_uint_eq(st->by_class[i], 1);
	ck_assert_str_eq(fetch_class_name(FC_REFUSED), "refused");
	ck_assert_str_eq(fetch_class_name(FC_LOCAL), "local");
	ck_assert_uint_eq(st->seconds.count, 9);
	ck_assert_double_eq_tol(st->seconds.sum, 30.81, 1e-9);
	/* 0 and 0 <= 0.0001; 5 x 0.002 <= 0.0025; 0.3 <= 0.5; 30.5 <= 60 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 0), 2);
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 3), 2);  /* 0.001 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 4), 7);  /* 0.0025 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 10), 7); /* 0.25 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 11), 8); /* 0.5 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 16), 8); /* 30 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, 17), 9); /* 60 */
	ck_assert_uint_eq(histo_cumulative(&st->seconds, HISTO_BUCKETS), 9);
	log_set_level(LOG_INFO);
}
END_TEST

START_TEST(test_stats_count_every_check_exactly_once)
{
	const struct cache_stats *st = cache_stats(cache);
	const struct cache_entry *e;
	struct probe p[2];

	wait_on("https://a.test", &p[0]); /* miss, fetch 1 */
	wait_on("https://a.test", &p[1]); /* miss, coalesced */
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_PENDING);
	fill_status("https://a.test", FETCH_OK, 404);
	ck_assert_int_eq(p[0].calls + p[1].calls, 2);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_HIT);
	clock_advance(&clk, DAY);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	fill_status("https://a.test", FETCH_OK, 500);
	ck_assert_int_eq(check_now("https://a.test", &e), CACHE_STALE);
	ck_assert_ptr_null(cache_find(cache, "https://zzz.test"));
	ck_assert_uint_eq(st->misses, 3);
	ck_assert_uint_eq(st->coalesced, 2);
	ck_assert_uint_eq(st->hits, 2);
	ck_assert_uint_eq(st->stale, 2);
	ck_assert_uint_eq(st->fetches, 2);
	ck_assert_uint_eq(sc.n, 2);
	ck_assert_uint_eq(st->fetch_errors, 1);
	ck_assert_uint_eq(st->evictions, 0);
	ck_assert_uint_eq(st->entries, 1);
	ck_assert_uint_eq(st->waiting, 0);
	ck_assert_uint_eq(st->overloaded, 0);
	ck_assert_uint_eq(cache_purge_all(cache), 1);
	ck_assert_uint_eq(st->entries, 0);
	ck_assert_uint_eq(st->bytes, 0);
}
END_TEST

static Suite *
memory_suite(void)
{
	Suite *s = suite_create("cache_memory");
	TCase *tc = cache_fixture(s, "memory");

	tcase_add_test(tc, test_entry_bytes_and_lru_eviction_by_bytes);
	tcase_add_test(tc, test_held_is_the_block_and_its_size_word);
	tcase_add_test(tc, test_bytes_are_what_the_heap_holds);
	tcase_add_test(tc, test_lru_never_evicts_entries_in_flight);
	tcase_add_test(tc, test_two_caches_one_budget);
	tcase_add_test(tc, test_stats_count_every_check_exactly_once);
	tcase_add_test(tc, test_fetch_stats_by_class_and_duration);
	return s;
}

TEST_PROGRAM(memory_suite, cache_quiet_log, NULL);
