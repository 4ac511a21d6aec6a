/*
 * check_cache_shared.c: the cache's side of the shared tier, driven with a
 * scripted loader (scripted_fetch.h plus the settled and purge hooks): a
 * fleet's state delivered instead of a fetch is installed as it is and
 * answers the waiters, a fetch here is handed to the settled hook with its
 * entry, a good copy kept here outlives a failure state that lost it, and
 * purge reaches the tier.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <check.h>

#include "robots.h"
#include "cache/cache.h"
#include "wire/version.h"
#include "base/clock.h"
#include "scripted_fetch.h"
#include "test_main.h"

#define ORIGIN "https://a.test"
#define BODY "User-agent: *\nDisallow: /private\n"

static struct cache_version hist_seen[CACHE_MAX_HISTORY];

/* What the hooks saw. */
static struct {
	int settled, good;
	size_t versions; /* the entry's history when settled */
	double expires_at;
	char purged[64];
} seen;

static void
hook_settled(void *fetch, const struct cache_entry *e, int good,
    const struct fetch_result *r)
{
	(void)fetch;
	(void)r;
	seen.settled++;
	seen.good = good;
	seen.expires_at = e->expires_at;
	seen.versions = cache_history(e, hist_seen, CACHE_MAX_HISTORY);
}

static void
hook_purge(void *impl, const char *origin)
{
	(void)impl;
	snprintf(seen.purged, sizeof(seen.purged), "%s", origin);
}

static const struct cache_fetch_ops loader_ops = {
	.start = script_start,
	.cancel = script_cancel,
	.queued = script_queued,
	.settled = hook_settled,
	.purge = hook_purge,
};

static void
setup(void)
{
	script_init(&sc);
	set = script_settings();
	clk = (struct clock){ .offset = 0, .frozen = SCRIPT_T0 };
	memset(&seen, 0, sizeof(seen));
	ck_assert_ptr_nonnull(cache = cache_new(&set, &loader_ops, &sc, &clk));
}

/* A good rules copy another instance fetched 100 s ago, for 1 hour. */
static struct shared_state
fleet_rules(void)
{
	return (struct shared_state){ .policy = CACHE_RULES,
		.http_status = 200,
		.fetched_at = SCRIPT_T0 - 100,
		.expires_at = SCRIPT_T0 + 3500,
		.good = 1,
		.final_url = ORIGIN "/robots.txt",
		.body = BODY,
		.body_len = sizeof(BODY) - 1 };
}

/* A failure state without a good copy: 503, retry in 120 s. */
static struct shared_state
fleet_failing(void)
{
	return (struct shared_state){ .policy = CACHE_DISALLOW_ALL,
		.http_status = 503,
		.fetched_at = SCRIPT_T0,
		.expires_at = SCRIPT_T0 + 120,
		.fail_streak = 1,
		.fail_since = SCRIPT_T0,
		.next_retry = SCRIPT_T0 + 120,
		.last_error = "HTTP status 503" };
}

/* End origin's load with the fleet's state s. */
static void
fill_shared(const struct shared_state *s)
{
	struct fetch_result r = { .shared = s };

	script_fill(&sc, ORIGIN, &r);
}

START_TEST(test_shared_state_installed_as_it_is)
{
	struct shared_state s = fleet_rules();
	const struct cache_entry *e;
	struct robots_verdict v;

	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&s);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_int_eq(e->shared, 1);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_double_eq(e->fetched_at, SCRIPT_T0 - 100);
	ck_assert_double_eq(e->expires_at, SCRIPT_T0 + 3500);
	ck_assert_uint_eq(e->body_bytes, sizeof(BODY) - 1);
	ck_assert_str_eq(e->final_url, ORIGIN "/robots.txt");
	robots_check(e->robots, "Bot", 3, "/private/x", 10, &v);
	ck_assert_int_eq(v.allowed, 0);    /* the body was compiled here */
	ck_assert_int_eq(seen.settled, 0); /* nothing to publish back */
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 0);
}
END_TEST

START_TEST(test_fetch_here_is_settled_with_its_entry)
{
	const struct cache_entry *e;

	fetch_status(ORIGIN, FETCH_OK, 404);
	ck_assert_int_eq(seen.settled, 1);
	ck_assert_int_eq(seen.good, 1);
	ck_assert_double_eq(seen.expires_at, SCRIPT_T0 + 86400);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_int_eq(e->shared, 0);
	clock_advance(&clk, 86400);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	fill_status(ORIGIN, FETCH_OK, 500);
	ck_assert_int_eq(seen.settled, 2);
	ck_assert_int_eq(seen.good, 1); /* the 404 copy is kept */
}
END_TEST

START_TEST(test_good_copy_outlives_a_shared_failure_state)
{
	struct shared_state ok = fleet_rules(), failing = fleet_failing();
	const struct cache_entry *e;
	const struct robots *rb;

	(void)check_now(ORIGIN, &e);
	fill_shared(&ok);
	rb = entry(ORIGIN)->robots;
	clock_advance(&clk, 3600); /* expired: the refresh finds a failure */
	failing.fetched_at = failing.fail_since = SCRIPT_T0 + 3600;
	failing.expires_at = failing.next_retry = SCRIPT_T0 + 3720;
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	fill_shared(&failing);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_ptr_eq(e->robots, rb);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_double_eq(e->next_retry, SCRIPT_T0 + 3720);
	ck_assert_double_eq(e->expires_at, SCRIPT_T0 + 3720);
	ck_assert_str_eq(e->last_error, "HTTP status 503");
}
END_TEST

START_TEST(test_shared_failure_state_without_copy_disallows)
{
	struct shared_state failing = fleet_failing();
	const struct cache_entry *e;

	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&failing);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_int_eq(e->stale, 0);
	ck_assert_double_eq(cache_expires_in(cache, e), 120);
	clock_advance(&clk, 119); /* no retry before the fleet's schedule */
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_uint_eq(sc.n, 1);
	clock_advance(&clk, 1); /* due: one retry, the old answer meanwhile */
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	ck_assert_uint_eq(sc.n, 2);
	fill_status(ORIGIN, FETCH_OK, 503);
}
END_TEST

/*
 * The fleet's failure state of an origin failing for longer than
 * --unreachable-allow-after (30 days here) with no good copy: allowed from
 * the very first answer, as a local failure streak would be (RFC 9309
 * section 2.3.1.4).
 */
START_TEST(test_shared_failure_past_allow_after_allows_at_once)
{
	struct shared_state failing = fleet_failing();
	const struct cache_entry *e;
	struct probe p;

	failing.fail_since = SCRIPT_T0 - set.life.unreachable_allow_after;
	failing.fail_streak = 40;
	wait_on(ORIGIN, &p);
	fill_shared(&failing);
	ck_assert_int_eq(p.calls, 1);
	ck_assert_int_eq(p.policy, CACHE_ALLOW_ALL); /* the first answer */
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_int_eq(e->policy, CACHE_ALLOW_ALL);
	/* one second short of it: still disallowed */
	ck_assert_uint_eq(cache_purge(cache, ORIGIN), 1);
	failing.fail_since += 1;
	wait_on(ORIGIN, &p);
	fill_shared(&failing);
	ck_assert_int_eq(p.policy, CACHE_DISALLOW_ALL);
}
END_TEST

/*
 * The cause of the fleet's failure state, installed without a copy here
 * and beside a good copy kept here; a state without one (an older writer)
 * names what its status says, else "other" (docs/protocol.md).
 */
static const struct {
	int status;
	enum fetch_cause cause; /* the value's */
	const char *want;
} fleet_causes[] = {
	{ 0, CAUSE_DNS, "dns" },
	{ 0, CAUSE_PRIVATE_ADDRESS, "private_address" },
	{ 503, CAUSE_HTTP_503, "http_503" },
	{ 0, CAUSE_NONE, "other" },
	{ 503, CAUSE_NONE, "http_503" },
	{ 500, CAUSE_NONE, "http_5xx" },
};

START_TEST(test_shared_failure_keeps_its_cause)
{
	struct shared_state ok = fleet_rules(), failing = fleet_failing();
	const struct cache_entry *e;

	failing.http_status = fleet_causes[_i].status;
	failing.cause = (unsigned char)fleet_causes[_i].cause;
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&failing);
	e = entry(ORIGIN);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_str_eq(lifetime_cause_name(e->cause), fleet_causes[_i].want);
	/* beside a good copy kept here: served stale with the same cause */
	ck_assert_uint_eq(cache_purge(cache, ORIGIN), 1);
	(void)check_now(ORIGIN, &e);
	fill_shared(&ok);
	clock_advance(&clk, 3600);
	failing.fetched_at = failing.fail_since = SCRIPT_T0 + 3600;
	failing.expires_at = failing.next_retry = SCRIPT_T0 + 3720;
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	fill_shared(&failing);
	e = entry(ORIGIN);
	ck_assert_int_eq(e->policy, CACHE_RULES);
	ck_assert_int_eq(e->stale, 1);
	ck_assert_str_eq(lifetime_cause_name(e->cause), fleet_causes[_i].want);
}
END_TEST

START_TEST(test_purge_reaches_the_tier)
{
	fetch_status(ORIGIN, FETCH_OK, 404);
	ck_assert_uint_eq(cache_purge(cache, ORIGIN), 1);
	ck_assert_str_eq(seen.purged, ORIGIN);
	seen.purged[0] = '\0';
	ck_assert_uint_eq(cache_purge(cache, "https://b.test"), 0);
	ck_assert_str_eq(seen.purged, "https://b.test");
}
END_TEST

/* The versions the cache told of, as "OLD>NEW" (OLD "-": none). */
static char changes[4][40];
static size_t nchanges;

static void
note_change(const struct cache_change *ch, void *arg)
{
	(void)arg;
	ck_assert_uint_lt(nchanges, 4);
	snprintf(changes[nchanges++], sizeof(changes[0]), "%s>%s",
	    ch->old_version != NULL ? ch->old_version : "-", ch->new_version);
}

/*
 * A change another instance told of (cache_refresh): the entry is loaded
 * anew at once though still fresh, the loader told since when a copy
 * stands for that change, the old copy answering meanwhile (fresh, not
 * stale); one load at a time; an origin not cached only with create.
 */
START_TEST(test_refresh_for_a_told_change)
{
	static const struct cache_fetch_ops cond_ops = {
		.start = script_start,
		.start_cond = script_start_cond,
		.cancel = script_cancel,
		.queued = script_queued,
	};
	struct shared_state s = fleet_rules();
	const struct cache_entry *e;
	char v1[VERSION_HEX + 1];

	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &cond_ops, &sc, &clk));
	nchanges = 0;
	ck_assert_int_eq(cache_listen(cache, note_change, NULL), 0);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&s);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	snprintf(v1, sizeof(v1), "%s", e->version);
	ck_assert_int_eq(cache_refresh(cache, ORIGIN, SCRIPT_T0 - 5, 0), 1);
	ck_assert_uint_eq(script_count(&sc, ORIGIN), 1);
	ck_assert_double_eq(sc.f[sc.n - 1].since, SCRIPT_T0 - 5);
	ck_assert_int_eq(cache_refresh(cache, ORIGIN, SCRIPT_T0 - 5, 0), 0);
	ck_assert_uint_eq(script_count(&sc, ORIGIN), 1);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_str_eq(e->version, v1);
	s.body = "User-agent: *\nDisallow: /\n";
	s.body_len = strlen(s.body);
	s.fetched_at = SCRIPT_T0 - 5;
	fill_shared(&s);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_str_ne(e->version, v1);
	ck_assert_uint_eq(nchanges, 2);
	ck_assert_str_eq(changes[0] + 2, v1); /* "->V1" */
	ck_assert_str_eq(changes[1] + VERSION_HEX + 1, e->version);
	/* not cached here: loaded only when asked to make it */
	ck_assert_int_eq(cache_refresh(cache, "https://b.test", 1, 0), -1);
	ck_assert_ptr_null(cache_find(cache, "https://b.test"));
	ck_assert_int_eq(cache_refresh(cache, "https://b.test", 1, 1), 1);
	ck_assert_uint_eq(script_count(&sc, "https://b.test"), 1);
	ck_assert_int_eq(check_now("https://b.test", &e), CACHE_PENDING);
}
END_TEST

/*
 * The fleet's versions are merged into the entry's: its own version first
 * (its times its own), the others newest first_seen first, one given twice
 * once with the widest times, up to --history-depth.
 */
START_TEST(test_fleet_versions_merged)
{
	struct shared_state s = fleet_rules();
	struct cache_version in[4] = {
		{ "", SCRIPT_T0 - 50, SCRIPT_T0 - 1, 200, CACHE_RULES, 0 },
		{ "2222222222222222", SCRIPT_T0 - 9000, SCRIPT_T0 - 8000, 404,
		    CACHE_ALLOW_ALL, 0 },
		{ "1111111111111111", SCRIPT_T0 - 5000, SCRIPT_T0 - 4000, 503,
		    CACHE_DISALLOW_ALL, 0 },
		{ "3333333333333333", SCRIPT_T0 - 99999, SCRIPT_T0 - 99990, 200,
		    CACHE_RULES, 0 },
	};
	struct cache_version out[CACHE_MAX_HISTORY];
	const struct cache_entry *e;
	size_t n;

	set.history_depth = 3;
	cache_configure(cache, &set);
	version_of_body(BODY, sizeof(BODY) - 1, in[0].version);
	s.version_since = SCRIPT_T0 - 100;
	s.validated_at = SCRIPT_T0 - 100;
	s.versions = in;
	s.nversions = 4;
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&s);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	n = cache_history(e, out, CACHE_MAX_HISTORY);
	ck_assert_uint_eq(n, 3); /* the depth: the oldest goes */
	ck_assert_str_eq(out[0].version, in[0].version);
	ck_assert_double_eq(out[0].first_seen, SCRIPT_T0 - 100); /* its own */
	ck_assert_str_eq(out[1].version, "1111111111111111");
	ck_assert_int_eq(out[1].http_status, 503);
	ck_assert_int_eq(out[1].policy, CACHE_DISALLOW_ALL);
	ck_assert_str_eq(out[2].version, "2222222222222222");
	ck_assert_double_eq(out[2].first_seen, SCRIPT_T0 - 9000);
	ck_assert_double_eq(out[2].last_seen, SCRIPT_T0 - 8000);
	/* Told again, with 2222's times wider: one record, widened. */
	in[1].first_seen = SCRIPT_T0 - 9500;
	in[1].last_seen = SCRIPT_T0 - 7000;
	clock_advance(&clk, 3600);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	s.fetched_at = SCRIPT_T0 + 3500;
	s.expires_at = SCRIPT_T0 + 7200;
	fill_shared(&s);
	n = cache_history(e, out, CACHE_MAX_HISTORY);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[2].version, "2222222222222222");
	ck_assert_double_eq(out[2].first_seen, SCRIPT_T0 - 9500);
	ck_assert_double_eq(out[2].last_seen, SCRIPT_T0 - 7000);
}
END_TEST

/* Two fleet versions first seen at once: the one seen last goes first. */
START_TEST(test_fleet_versions_tied_first_seen)
{
	struct shared_state s = fleet_rules();
	struct cache_version in[3] = {
		{ "", SCRIPT_T0 - 50, SCRIPT_T0 - 1, 200, CACHE_RULES, 0 },
		{ "2222222222222222", SCRIPT_T0 - 9000, SCRIPT_T0 - 1000, 200,
		    CACHE_RULES, 0 },
		{ "1111111111111111", SCRIPT_T0 - 9000, SCRIPT_T0 - 5000, 200,
		    CACHE_RULES, 0 },
	};
	struct cache_version out[CACHE_MAX_HISTORY];
	const struct cache_entry *e;

	set.history_depth = 3;
	cache_configure(cache, &set);
	version_of_body(BODY, sizeof(BODY) - 1, in[0].version);
	s.version_since = SCRIPT_T0 - 100;
	s.validated_at = SCRIPT_T0 - 100;
	s.versions = in;
	s.nversions = 3;
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	fill_shared(&s);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_HIT);
	ck_assert_uint_eq(cache_history(e, out, CACHE_MAX_HISTORY), 3);
	ck_assert_str_eq(out[1].version, "2222222222222222");
	ck_assert_str_eq(out[2].version, "1111111111111111");
}
END_TEST

/* A fetch here is published with its new version in its history. */
START_TEST(test_settled_with_the_new_version_in_history)
{
	const struct cache_entry *e;
	char v404[VERSION_HEX + 1];

	set.history_depth = 4;
	cache_configure(cache, &set);
	fetch_status(ORIGIN, FETCH_OK, 404);
	ck_assert_uint_eq(seen.versions, 1);
	clock_advance(&clk, 86400);
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_STALE);
	fill_status(ORIGIN, FETCH_OK, 410);
	ck_assert_int_eq(seen.settled, 2);
	ck_assert_uint_eq(seen.versions, 2);
	version_of_status(404, v404);
	ck_assert_str_eq(hist_seen[0].version, e->version);
	ck_assert_int_eq(hist_seen[0].http_status, 410);
	ck_assert_str_eq(hist_seen[1].version, v404);
}
END_TEST

/*
 * The history op of an origin not held: no peek without a tier; the
 * fleet's versions answered as given while there is no entry or it has no
 * version yet, merged into the entry's once it has one.
 */
START_TEST(test_history_learnt_unasked)
{
	struct cache_version in[2] = {
		{ "2222222222222222", SCRIPT_T0 - 900, SCRIPT_T0 - 800, 200,
		    CACHE_RULES, 0 },
		{ "1111111111111111", SCRIPT_T0 - 5000, SCRIPT_T0 - 4000, 404,
		    CACHE_ALLOW_ALL, 0 },
	};
	struct cache_version out[CACHE_MAX_HISTORY];
	const struct cache_entry *e;
	char v410[VERSION_HEX + 1];

	set.history_depth = 4;
	cache_configure(cache, &set);
	ck_assert_int_eq(cache_peek_history(cache, ORIGIN, NULL, NULL), -1);
	ck_assert_uint_eq(cache_history_learn(cache, ORIGIN, in, 2, out), 2);
	ck_assert_str_eq(out[1].version, "1111111111111111");
	ck_assert_double_eq(out[1].last_seen, SCRIPT_T0 - 4000);
	ck_assert_ptr_null(cache_find(cache, ORIGIN)); /* no entry made */
	ck_assert_int_eq(check_now(ORIGIN, &e), CACHE_PENDING);
	ck_assert_uint_eq(cache_history_learn(cache, ORIGIN, in, 2, out), 2);
	ck_assert_str_eq(out[0].version, "2222222222222222");
	fill_status(ORIGIN, FETCH_OK, 410);
	version_of_status(410, v410);
	ck_assert_uint_eq(cache_history_learn(cache, ORIGIN, in, 2, out), 3);
	ck_assert_str_eq(out[0].version, v410); /* its own first */
	ck_assert_str_eq(out[1].version, "2222222222222222");
	ck_assert_str_eq(out[2].version, "1111111111111111");
	/* kept: the entry's history is those three now */
	ck_assert_uint_eq(
	    cache_history(entry(ORIGIN), out, CACHE_MAX_HISTORY), 3);
	ck_assert_uint_eq(script_count(&sc, ORIGIN), 0); /* none started */
}
END_TEST

static Suite *
cache_shared_suite(void)
{
	Suite *s = suite_create("cache_shared");
	TCase *tc = tcase_create("loader");

	tcase_add_checked_fixture(tc, setup, cache_teardown);
	tcase_add_test(tc, test_shared_state_installed_as_it_is);
	tcase_add_test(tc, test_fetch_here_is_settled_with_its_entry);
	tcase_add_test(tc, test_good_copy_outlives_a_shared_failure_state);
	tcase_add_test(tc, test_shared_failure_state_without_copy_disallows);
	tcase_add_test(tc, test_shared_failure_past_allow_after_allows_at_once);
	tcase_add_loop_test(tc, test_shared_failure_keeps_its_cause, 0,
	    (int)(sizeof(fleet_causes) / sizeof(fleet_causes[0])));
	tcase_add_test(tc, test_purge_reaches_the_tier);
	tcase_add_test(tc, test_refresh_for_a_told_change);
	tcase_add_test(tc, test_fleet_versions_merged);
	tcase_add_test(tc, test_fleet_versions_tied_first_seen);
	tcase_add_test(tc, test_settled_with_the_new_version_in_history);
	tcase_add_test(tc, test_history_learnt_unasked);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(cache_shared_suite, NULL, NULL);
