/*
 * check_tdmres.c: a cache of tdmrep.json (ops/tdmres.h's kind) driven
 * through cache_check() with the scripted fetcher and a frozen clock: the
 * URL it fetches, the TDMRep state each outcome gives (a table), the good
 * copy kept through a failure, Cache-Control lifetimes and a conditional
 * refresh answered 304.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "cache/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "ops/tdmres.h"
#include "robots.h"
#include "wire/page.h"
#include "scripted_fetch.h"
#include "cache_fixture.h"
#include "test_main.h"

#define O "http://t.example"
#define FILE_2                                                                 \
	"[{\"location\":\"/a/*\",\"tdm-reservation\":1},{\"location\":\"/"     \
	"\",\"tdm-reservation\":0}]"

/* The fixture's cache, made a tdmrep.json cache. */
static void
tdm_setup(void)
{
	cache_setup();
	cache_set_kind(cache, &tdm_kind);
}

/* End O's running tdmrep.json fetch with r. */
static void
tdm_fill(const struct fetch_result *r)
{
	size_t i;

	for (i = sc.n; i-- > 0;)
		if (script_running(&sc.f[i]) &&
		    strcmp(sc.f[i].url, O "/.well-known/tdmrep.json") == 0)
			break;
	ck_assert_msg(i < sc.n, "no tdmrep.json fetch of " O " runs");
	sc.f[i].done = 1;
	sc.f[i].cb(r, sc.f[i].arg);
}

/* A check of O that starts its fetch, ended with r. */
static void
tdm_fetch(const struct fetch_result *r)
{
	const struct cache_entry *e;
	size_t started = sc.n;

	ck_assert_int_eq(check_now(O, &e), CACHE_PENDING);
	ck_assert_uint_eq(sc.n, started + 1);
	tdm_fill(r);
}

/* A 200 with body. */
static struct fetch_result
ok_body(const char *body)
{
	struct fetch_result r = script_result(FETCH_OK, 200);

	r.body = body;
	r.body_len = strlen(body);
	return r;
}

static const struct {
	enum fetch_error err;
	int status;
	const char *body;
	const char *state;
	const char *why; /* an invalid file's warning */
} outcomes[] = {
	{ FETCH_OK, 200, FILE_2, "rules", NULL },
	{ FETCH_OK, 200, "[]", "rules", NULL },
	{ FETCH_OK, 203, FILE_2, "rules", NULL },
	{ FETCH_OK, 200, "{\"location\":\"/\"}", "invalid",
	    "not a JSON array of rules: invalid" },
	{ FETCH_OK, 200, "", "invalid", NULL },
	{ FETCH_OK, 200, "<html>", "invalid", NULL },
	{ FETCH_OK, 404, "", "none", NULL },
	{ FETCH_OK, 410, "", "none", NULL },
	{ FETCH_OK, 403, "", "none", NULL },
	{ FETCH_OK, 401, "", "none", NULL },
	{ FETCH_OK, 500, "", "unreachable", NULL },
	{ FETCH_OK, 503, "", "unreachable", NULL },
	{ FETCH_OK, 429, "", "unreachable", NULL },
	{ FETCH_NETWORK, 0, "", "unreachable", NULL },
	{ FETCH_TIMEOUT, 0, "", "unreachable", NULL },
};

/* Each outcome's state, from a first fetch of O's tdmrep.json. */
START_TEST(test_outcome_state)
{
	struct fetch_result r = ok_body(outcomes[_i].body);
	const struct cache_entry *e;
	const struct tdm_doc *d;
	const char *code;
	uint32_t line;
	char why[256];

	r.error = outcomes[_i].err;
	r.http_status = outcomes[_i].status;
	if (r.error != FETCH_OK)
		r.error_message = "scripted failure";
	tdm_fetch(&r);
	e = entry(O);
	ck_assert_str_eq(tdm_state_name(e), outcomes[_i].state);
	ck_assert_str_eq(sc.f[0].url, O "/.well-known/tdmrep.json");
	d = e->doc;
	if (strcmp(outcomes[_i].state, "invalid") == 0) {
		ck_assert_ptr_nonnull(d);
		ck_assert_ptr_null(d->f.rules);
		ck_assert_int_eq(tdmrep_file_warning(
		                     &d->f, 0, &code, &line, why, sizeof(why)),
		    0);
		ck_assert_str_eq(code, "tdmrep_invalid");
		if (outcomes[_i].why != NULL)
			ck_assert_str_eq(why, outcomes[_i].why);
	} else if (strcmp(outcomes[_i].state, "rules") == 0)
		ck_assert_uint_eq(robots_tdmrep_count(d->f.rules),
		    strcmp(outcomes[_i].body, "[]") == 0 ? 0 : 2);
	else
		ck_assert_ptr_null(d);
	ck_assert_uint_eq(
	    e->fail_streak, strcmp(outcomes[_i].state, "unreachable") == 0);
}
END_TEST

/* Not fetched yet: pending. */
START_TEST(test_pending)
{
	const struct cache_entry *e;

	ck_assert_int_eq(check_now(O, &e), CACHE_PENDING);
	ck_assert_str_eq(tdm_state_name(entry(O)), "pending");
	tdm_fill(&(struct fetch_result){
	    .error = FETCH_OK, .http_status = 404, .body = "" });
}
END_TEST

/*
 * The answer of a URL whose file is not settled (a check that did not
 * wait): nothing without a page ("tdm":null), but a page's own
 * TDM-Reservation is still answered, as the state "pending" without a
 * version; once the file is fetched it is the file's state.
 */
START_TEST(test_answer_pending)
{
	struct wire_pair h[] = { { { "TDM-Reservation", 15, 0 }, { "1", 1, 0 },
	    0 } };
	struct wire_page page = { 1, h, 1, NULL, 0 };
	struct fetch_result r = ok_body(FILE_2);
	const struct cache_entry *e;
	const char *version = "x";
	struct robots_url u;
	struct tdm_answer a;

	ck_assert_int_eq(robots_url_split(O "/b", strlen(O "/b"), &u), URL_OK);
	ck_assert_ptr_null(tdm_answer_of(cache, &u.v, NULL, &a, &version));
	ck_assert_int_eq(check_now(O, &e), CACHE_PENDING);
	ck_assert_ptr_null(tdm_answer_of(cache, &u.v, NULL, &a, &version));
	ck_assert_ptr_eq(tdm_answer_of(cache, &u.v, &page, &a, &version), &a);
	ck_assert_int_eq(a.state, TDM_STATE_PENDING);
	ck_assert_int_eq(a.reservation, 1);
	ck_assert_int_eq(a.from, TDM_FROM_HEADER);
	ck_assert_ptr_null(a.location);
	ck_assert_ptr_null(a.policy);
	ck_assert_ptr_null(version);
	tdm_fill(&r);
	ck_assert_ptr_eq(tdm_answer_of(cache, &u.v, &page, &a, &version), &a);
	ck_assert_int_eq(a.state, TDM_STATE_RULES);
	ck_assert_int_eq(a.reservation, 1);
	ck_assert_str_eq(a.location, "/");
	ck_assert_ptr_nonnull(version);
	robots_url_split_clear(&u);
}
END_TEST

/*
 * A 503 after a good copy: the copy answers (stale, still "rules") while
 * the retries run on robots.txt's 503 schedule; the retry's 200 ends it.
 */
START_TEST(test_failure_keeps_the_good_copy)
{
	struct fetch_result r = ok_body(FILE_2);
	struct fetch_result fail = script_result(FETCH_OK, 503);
	const struct cache_entry *e;
	const void *doc;

	tdm_fetch(&r);
	doc = entry(O)->doc;
	advance_to(SCRIPT_T0 + DAY);
	ck_assert_int_eq(check_now(O, &e), CACHE_STALE);
	tdm_fill(&fail);
	e = entry(O);
	ck_assert_str_eq(tdm_state_name(e), "rules");
	ck_assert_ptr_eq(e->doc, doc);
	ck_assert_uint_eq(e->stale, 1);
	ck_assert_uint_eq(e->fail_streak, 1);
	ck_assert_double_ge(e->next_retry - clock_now(&clk), 30);
	ck_assert_double_le(e->next_retry - clock_now(&clk), 3600);
	ck_assert_uint_eq(cache_stats(cache)->fetch_errors, 1);
	advance_to(e->next_retry);
	ck_assert_int_eq(check_now(O, &e), CACHE_STALE);
	tdm_fill(&r);
	e = entry(O);
	ck_assert_uint_eq(e->stale, 0);
	ck_assert_uint_eq(e->fail_streak, 0);
}
END_TEST

/*
 * Failing 30 days with no good copy: robots.txt's fallback to allow-all
 * (RFC 9309 section 2.3.1.4) is not tdmrep.json's, which stays
 * "unreachable" (the contract's state for 5xx), never "none".
 */
START_TEST(test_unreachable_past_allow_after_stays_unreachable)
{
	struct fetch_result fail = script_result(FETCH_OK, 503);
	const struct cache_entry *e;

	tdm_fetch(&fail);
	clock_advance(&clk, 31 * DAY);
	(void)check_now(O, &e); /* answered as it is; a retry starts */
	ck_assert_str_eq(tdm_state_name(entry(O)), "unreachable");
	tdm_fill(&fail);
	e = entry(O);
	ck_assert_int_eq(e->policy, CACHE_DISALLOW_ALL);
	ck_assert_str_eq(tdm_state_name(e), "unreachable");
}
END_TEST

/*
 * The rules count against the cache's bytes: 20 members with
 * 1,500-byte locations hold at least their four copies of each.
 */
START_TEST(test_rules_bytes_are_counted)
{
	static char body[40000];
	struct fetch_result r;
	size_t i, n = 0;

	n += (size_t)snprintf(body + n, sizeof(body) - n, "[");
	for (i = 0; i < 20; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n,
		    "%s{\"location\":\"/%zu%01500d\",\"tdm-reservation\":1}",
		    i ? "," : "", i, 0);
	snprintf(body + n, sizeof(body) - n, "]");
	r = ok_body(body);
	tdm_fetch(&r);
	ck_assert_uint_eq(robots_tdmrep_count(
	                      ((const struct tdm_doc *)entry(O)->doc)->f.rules),
	    20);
	ck_assert_uint_ge(cache_stats(cache)->bytes, 20 * 4 * 1500);
}
END_TEST

/*
 * The body is kept with the rules (the state file saves it) and counts
 * against the cache's bytes: 200,000 bytes of blanks in an empty array
 * compile to no rules, and still hold that much.
 */
START_TEST(test_the_body_kept_is_counted)
{
	static char body[200002];
	struct fetch_result r;
	const void *kept;
	size_t len;

	memset(body, ' ', sizeof(body) - 1);
	body[0] = '[';
	body[sizeof(body) - 2] = ']';
	r = ok_body(body);
	tdm_fetch(&r);
	ck_assert_str_eq(tdm_state_name(entry(O)), "rules");
	ck_assert_uint_ge(cache_stats(cache)->bytes, sizeof(body) - 1);
	kept = tdm_kind.source(entry(O)->doc, &len);
	ck_assert_uint_eq(len, sizeof(body) - 1);
	ck_assert_int_eq(memcmp(kept, body, len), 0);
}
END_TEST

/* Cache-Control max-age sets the lifetime; none: --default-ttl. */
START_TEST(test_lifetime)
{
	struct fetch_result r = ok_body(FILE_2);

	r.cache_control = "max-age=3600";
	tdm_fetch(&r);
	ck_assert_double_eq(expires_in(O), 3600);
	cache_purge_all(cache);
	r.cache_control = NULL;
	tdm_fetch(&r);
	ck_assert_double_eq(expires_in(O), DAY);
}
END_TEST

/* A refresh sends the validators; its 304 keeps the compiled file. */
START_TEST(test_revalidated)
{
	struct fetch_result r = ok_body(FILE_2);
	struct fetch_result nm = script_result(FETCH_OK, 304);
	const struct cache_entry *e;
	const void *doc;

	r.etag = "\"v1\"";
	tdm_fetch(&r);
	doc = entry(O)->doc;
	advance_to(SCRIPT_T0 + DAY);
	ck_assert_int_eq(check_now(O, &e), CACHE_STALE);
	ck_assert_str_eq(sc.f[1].etag, "\"v1\"");
	tdm_fill(&nm);
	e = entry(O);
	ck_assert_ptr_eq(e->doc, doc);
	ck_assert_str_eq(tdm_state_name(e), "rules");
	ck_assert_uint_eq(cache_stats(cache)->revalidated, 1);
	ck_assert_double_eq(expires_in(O), DAY);
}
END_TEST

/* A version's state by its policy and flags: the names inspect gives. */
START_TEST(test_version_state_names)
{
	static const struct {
		int policy;
		unsigned flags;
		const char *state;
	} t[] = {
		{ CACHE_RULES, 0, "rules" },
		{ CACHE_RULES, CACHE_VERSION_INVALID, "invalid" },
		{ CACHE_ALLOW_ALL, 0, "none" },
		{ CACHE_DISALLOW_ALL, 0, "unreachable" },
		{ CACHE_NONE, 0, "pending" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_str_eq(
		    tdm_version_state(t[i].policy, t[i].flags), t[i].state);
}
END_TEST

/* What the version seam told: each change's flags and states. */
static char told[8][64];
static size_t ntold;

static void
tell_cb(const struct cache_change *c, void *arg)
{
	(void)arg;
	ck_assert_ptr_eq(c->kind, &tdm_kind);
	ck_assert_uint_lt(ntold, 8);
	snprintf(told[ntold++], sizeof(told[0]), "%s>%s",
	    c->old_version != NULL
	        ? tdm_version_state(c->old_policy, c->old_flags)
	        : "-",
	    tdm_version_state(c->entry->policy, c->new_flags));
}

/*
 * Each version of the file keeps its state in the history: a file with
 * rules, one that is not a JSON array (invalid, though a 2xx as the first
 * was), a 404 (none) and a 500 with no good copy (unreachable); newest
 * first, the current one first; and the version seam tells each change
 * with the flags of both sides.
 */
START_TEST(test_history_keeps_each_state)
{
	static const struct {
		int status;
		const char *body;
	} steps[] = {
		{ 200, FILE_2 },
		{ 200, "{\"location\":\"/\"}" },
		{ 404, "" },
		{ 200, "[]" },
	};
	static const char *const want[] = { "rules", "none", "invalid",
		"rules" };
	static const char *const seam[] = { "->rules", "rules>invalid",
		"invalid>none", "none>rules" };
	struct cache_version v[CACHE_MAX_HISTORY];
	struct fetch_result r;
	const struct cache_entry *e;
	size_t i, n;

	set.history_depth = 8;
	cache_configure(cache, &set);
	ntold = 0;
	ck_assert_int_eq(cache_listen(cache, tell_cb, NULL), 0);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		r = ok_body(steps[i].body);
		r.http_status = steps[i].status;
		if (i == 0)
			tdm_fetch(&r);
		else {
			advance_to(SCRIPT_T0 + (double)i * 2 * DAY);
			ck_assert_int_eq(check_now(O, &e), CACHE_STALE);
			tdm_fill(&r);
		}
	}
	n = cache_history(entry(O), v, CACHE_MAX_HISTORY);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(
		    cache_version_state(cache, v[i].policy, v[i].flags),
		    want[i]);
	ck_assert_uint_eq(v[2].flags, CACHE_VERSION_INVALID);
	ck_assert_int_eq(v[2].http_status, 200);
	ck_assert_uint_eq(ntold, 4);
	for (i = 0; i < ntold; i++)
		ck_assert_str_eq(told[i], seam[i]);
}
END_TEST

/* The only version, never a second: its state from the entry's file. */
START_TEST(test_history_of_one_invalid_version)
{
	struct fetch_result r = ok_body("<html>");
	struct cache_version v[2];

	tdm_fetch(&r);
	ck_assert_uint_eq(cache_history(entry(O), v, 2), 1);
	ck_assert_str_eq(
	    cache_version_state(cache, v[0].policy, v[0].flags), "invalid");
}
END_TEST

static Suite *
tdmres_suite(void)
{
	Suite *s = suite_create("tdmres");
	TCase *tc = tcase_create("kind");

	tcase_add_checked_fixture(tc, tdm_setup, cache_teardown);
	tcase_add_loop_test(tc, test_outcome_state, 0, NROWS(outcomes));
	tcase_add_test(tc, test_pending);
	tcase_add_test(tc, test_answer_pending);
	tcase_add_test(tc, test_failure_keeps_the_good_copy);
	tcase_add_test(tc, test_lifetime);
	tcase_add_test(tc, test_revalidated);
	tcase_add_test(tc, test_unreachable_past_allow_after_stays_unreachable);
	tcase_add_test(tc, test_rules_bytes_are_counted);
	tcase_add_test(tc, test_the_body_kept_is_counted);
	tcase_add_test(tc, test_version_state_names);
	tcase_add_test(tc, test_history_keeps_each_state);
	tcase_add_test(tc, test_history_of_one_invalid_version);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tdmres_suite, cache_quiet_log, NULL);
