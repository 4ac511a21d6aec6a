/*
 * cache_fixture.h: what the cache's test programs (check_cache*.c) share
 * beside scripted_fetch.h: their fixture, quiet logs, and the fetches and
 * clock moves they all make.
 */
#ifndef TESTS_CACHE_FIXTURE_H
#define TESTS_CACHE_FIXTURE_H

#define DAY 86400.0
#define RULES_BODY "User-agent: *\nDisallow: /private\n"
#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* fetch_now() with a 200 whose body disallows everything. */
static inline void
fetch_rules(const char *origin)
{
	static const char body[] = "User-agent: *\nDisallow: /\n";
	struct fetch_result r = script_result(FETCH_OK, 200);

	r.body = body;
	r.body_len = sizeof(body) - 1;
	fetch_now(origin, &r);
}

/* Move the clock so that clock_now() is exactly t. */
static inline void
advance_to(double t)
{
	clk.offset = t - clk.frozen; /* exact: t and frozen are close */
	ck_assert_double_eq(clock_now(&clk), t);
}

/* A test case of the cache suite, on the fixture. */
static inline TCase *
cache_fixture(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, cache_setup, cache_teardown);
	suite_add_tcase(s, tc);
	return tc;
}

/* Warnings only: the tests provoke the notices. */
static inline int
cache_quiet_log(void)
{
	log_init(1, LOG_WARNING);
	return 0;
}

#endif /* TESTS_CACHE_FIXTURE_H */
