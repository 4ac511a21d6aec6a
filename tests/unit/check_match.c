/*
 * check_match.c: the matcher of librobots where the input is made (linear
 * time, long rule lists) and the compiled ruleset as an object (memory,
 * refcount, introspection, the image round trip). Paths are fed already
 * normalized, as robots_check() expects. Longest match, ties, wildcards,
 * percent-encoding and Google's path and precedence tables are golden
 * pairs in tests/data/robots (check_golden.c).
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots_helpers.h"
#include "test_main.h"

/*
 * Matching.
 */

START_TEST(test_pathological_patterns_match_in_linear_time)
{
	static const char body[] =
	    "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*b\n"
	    "Disallow: /*aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab$\n";
	struct robots *r = parse(body);
	struct robots_verdict v;
	char *path = malloc(10001);
	int i;

	ck_assert_ptr_nonnull(path);
	path[0] = '/';
	memset(path + 1, 'a', 9999);
	/* Exponential backtracking would not finish: this is 10,000 runs. */
	for (i = 0; i < 10000; i++) {
		robots_check(r, "x", 1, path, 10000, &v);
		ck_assert_int_eq(v.reason, ROBOTS_REASON_NO_RULE);
	}
	path[9999] = 'b';
	robots_check(r, "x", 1, path, 10000, &v);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.line, 3);
	robots_unref(r);
	free(path);
}
END_TEST

/*
 * The ruleset object.
 */

/* A distinct bot name for i < 26^3: "botaaa", "botbaa", ... */
static const char *
bot_name(int i, char name[8])
{
	memcpy(name, "bot", 3);
	name[3] = (char)('a' + i % 26);
	name[4] = (char)('a' + i / 26 % 26);
	name[5] = (char)('a' + i / 676 % 26);
	name[6] = '\0';
	return name;
}

/* Append formatted text to b (cap bytes) at n. */
#define PUT(...)                                                               \
	do {                                                                   \
		int w_ = snprintf(b + n, cap - n, __VA_ARGS__);                \
		ck_assert(w_ > 0 && (size_t)w_ < cap - n);                     \
		n += (size_t)w_;                                               \
	} while (0)

START_TEST(test_memory_stays_linear_with_many_agents_and_groups)
{
	/* 3000 agents share 10000 rules, and each has a group of its own:
	 * merging must not copy the shared rules for every agent. */
	size_t cap = ROBOTS_MAX_BODY, n = 0;
	char *b = malloc(cap);
	struct robots *r;
	char name[8];
	int i;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < 3000; i++)
		PUT("User-agent: %s\n", bot_name(i, name));
	for (i = 0; i < 10000; i++)
		PUT("Disallow: /%d/\n", i);
	for (i = 0; i < 3000; i++)
		PUT("User-agent: %s\nAllow: /1/\n", bot_name(i, name));
	r = robots_parse(b, n);
	ck_assert_ptr_nonnull(r);
	/* Copies would take 3000 * 10000 entries: over 100 MB. */
	ck_assert_uint_lt(robots_memsize(r), 8 * n);
	/* botaaa (agent 0): its own Allow ties the shared Disallow. */
	expect_rule(r, "botaaa", "/1/x", 1, "/1/", 13002);
	expect_rule(r, "botbcd", "/9999/", 0, "/9999/", 13000);
	robots_unref(r);
	free(b);
}
END_TEST

/* The '*' rules, padded with pad more that match none of the paths. */
static struct robots *
padded(const char *rules, size_t pad, const char *other)
{
	char body[2048];
	size_t i, n = (size_t)snprintf(body, sizeof(body), "%s", rules);

	for (i = 0; i < pad; i++)
		n += (size_t)snprintf(
		    body + n, sizeof(body) - n, "Disallow: /zz%zu/\n", i);
	snprintf(body + n, sizeof(body) - n, "%s", other);
	return parse(body);
}

START_TEST(test_short_and_long_rule_lists_give_the_same_verdicts)
{
	/* A short list is read in order (the whole table when it is the
	 * only list), a long one through its prefix index: the same rules,
	 * padded from 0 to 24 more that match none of the paths, beside
	 * another agent's group or not, decide every path the same way. */
	static const char *const paths[] = { "/", "/a", "/a/b", "/a/b/c.php",
		"/a/x.php?q", "/ab", "/b/c", "/c.php", "/d", "/d/e" };
	static const char rules[] =
	    "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /*.php$\n"
	    "Allow: /a/*.php\nDisallow: /d/\nAllow: /d$\nDisallow: /b*/c\n";
	static const char *const others[] = { "",
		"\nUser-agent: other\nDisallow: /a/b\n" };
	struct robots_verdict want[10], got;
	struct robots *r;
	size_t i, pad, o;

	for (o = 0; o < 2; o++)
		for (pad = 0; pad <= 24; pad++) {
			r = padded(rules, pad, others[o]);
			for (i = 0; i < 10; i++) {
				got = check(r, "bot", paths[i]);
				if (o == 0 && pad == 0) {
					want[i] = got;
					continue;
				}
				ck_assert_msg(
				    got.allowed == want[i].allowed &&
				        got.reason == want[i].reason &&
				        got.rule.line == want[i].rule.line,
				    "%s with %zu more rules, other group %zu",
				    paths[i], pad, o);
			}
			robots_unref(r);
		}
	/* The globs and anchors decided where they should. */
	ck_assert_uint_eq(want[3].rule.line, 5);
	ck_assert_uint_eq(want[4].rule.line, 5);
	ck_assert_uint_eq(want[6].rule.line, 8);
	ck_assert_uint_eq(want[7].rule.line, 4);
	ck_assert_uint_eq(want[8].rule.line, 7);
}
END_TEST

START_TEST(test_two_rule_file_compiles_small)
{
	/* A cache of a million such origins keeps a million of these: at
	 * most 200 bytes, a 208-byte malloc chunk. */
	struct robots *r =
	    parse("User-agent: *\nDisallow: /p123456/\nAllow: /\n");

	ck_assert_uint_le(robots_memsize(r), 200);
	expect_rule(r, "x", "/p123456/z", 0, "/p123456/", 2);
	expect_rule(r, "x", "/x", 1, "/", 3);
	robots_unref(r);
}
END_TEST

START_TEST(test_verdict_points_at_the_rule_as_written)
{
	static const char body[] = "User-agent: *\n\n  Disallow:   /A%7e*  \n";
	struct robots *r = robots_parse(body, sizeof(body) - 1);
	struct robots_verdict v;

	ck_assert_ptr_nonnull(r);
	robots_check(r, "x", 1, "/A~b", 4, &v);
	ck_assert_int_eq(v.reason, ROBOTS_REASON_RULE);
	ck_assert_uint_eq(v.rule.line, 3);
	ck_assert_uint_eq(v.rule.pattern_len, 6);
	ck_assert(memcmp(v.rule.pattern, "/A%7e*", 6) == 0);
	/* The pattern lives in the ruleset, not in the body. */
	ck_assert(
	    v.rule.pattern < body || v.rule.pattern >= body + sizeof(body));
	robots_unref(r);
}
END_TEST

START_TEST(test_refcount_and_memsize)
{
	struct robots *r = parse("User-agent: *\nDisallow: /x\n");

	ck_assert_ptr_eq(robots_ref(r), r);
	robots_unref(r);
	expect_rule(r, "x", "/x", 0, "/x", 2);
	ck_assert_uint_gt(robots_memsize(r), 0);
	robots_unref(r);
	robots_unref(NULL);
}
END_TEST

START_TEST(test_introspection_lists_groups_agents_and_rules)
{
	struct robots *r = parse("User-agent: Googlebot/2.1\nUser-agent: *\n"
	                         "Disallow: /a\nAllow: /b\n\nUser-agent: 123\n"
	                         "User-agent: bing\nDisallow: /c\n");
	const char *a;
	size_t len;

	ck_assert_uint_eq(robots_group_count(r), 2);
	ck_assert_uint_eq(robots_rule_count(r), 3);
	ck_assert_uint_eq(robots_group_agent_count(r, 0), 2);
	a = robots_group_agent(r, 0, 0, &len);
	ck_assert(len == 9 && memcmp(a, "Googlebot", 9) == 0);
	a = robots_group_agent(r, 0, 1, &len);
	ck_assert(len == 1 && a[0] == '*');
	ck_assert_uint_eq(robots_group_rule_count(r, 0), 2);
	/* "123" names nobody and is not listed. */
	ck_assert_uint_eq(robots_group_agent_count(r, 1), 1);
	a = robots_group_agent(r, 1, 0, &len);
	ck_assert(len == 4 && memcmp(a, "bing", 4) == 0);
	ck_assert_uint_eq(robots_group_rule_count(r, 1), 1);
	ck_assert_ptr_null(robots_group_agent(r, 2, 0, &len));
	robots_unref(r);
}
END_TEST

START_TEST(test_names_of_directives_and_reasons)
{
	ck_assert_str_eq(robots_directive_name(ROBOTS_ALLOW), "allow");
	ck_assert_str_eq(robots_directive_name(ROBOTS_DISALLOW), "disallow");
	ck_assert_str_eq(robots_reason_name(ROBOTS_REASON_RULE), "rule");
	ck_assert_str_eq(robots_reason_name(ROBOTS_REASON_NO_RULE), "no_rule");
	ck_assert_str_eq(
	    robots_reason_name(ROBOTS_REASON_ROBOTS_TXT), "robots_txt");
}
END_TEST

START_TEST(test_image_round_trip_gives_the_same_verdicts)
{
	struct robots *r = parse("User-agent: FooBot\nDisallow: /a\n"
	                         "Allow: /a/b$\nCrawl-delay: 2\n"
	                         "Sitemap: https://x.test/s.xml\n"),
	              *copy;
	const void *img;
	void *buf;
	size_t len;

	img = robots_image(r, &len);
	ck_assert_uint_eq(len, robots_memsize(r));
	ck_assert_ptr_nonnull(copy = robots_from_image(img, len));
	robots_unref(r);
	expect_rule(copy, "FooBot/2.1", "/a/x", 0, "/a", 2);
	expect_rule(copy, "foobot", "/a/b", 1, "/a/b$", 3);
	expect_no_rule(copy, "OtherBot", "/a/x");
	ck_assert_double_eq(check(copy, "FooBot", "/").crawl_delay, 2);
	ck_assert(sitemap_is(copy, 0, "https://x.test/s.xml"));
	/* Bytes of the wrong size are not an image. */
	img = robots_image(copy, &len);
	ck_assert_ptr_null(robots_from_image(img, len - 1));
	ck_assert_ptr_null(robots_from_image(img, 8));
	/* Adopted without a copy: the buffer becomes the ruleset. */
	ck_assert_ptr_nonnull(buf = malloc(len));
	memcpy(buf, img, len);
	robots_unref(copy);
	ck_assert_ptr_eq(copy = robots_adopt_image(buf, len), buf);
	expect_rule(copy, "foobot", "/a/b", 1, "/a/b$", 3);
	img = robots_image(copy, &len);
	ck_assert_ptr_nonnull(buf = malloc(len));
	memcpy(buf, img, len);
	/* Not an image of that size: refused, and freed. */
	ck_assert_ptr_null(robots_adopt_image(buf, len - 1));
	robots_unref(copy);
}
END_TEST

static Suite *
match_suite(void)
{
	Suite *s = suite_create("match");
	TCase *m = tcase_create("match"), *o = tcase_create("object");

	tcase_add_test(m, test_pathological_patterns_match_in_linear_time);
	tcase_add_test(o, test_memory_stays_linear_with_many_agents_and_groups);
	tcase_add_test(
	    o, test_short_and_long_rule_lists_give_the_same_verdicts);
	tcase_add_test(o, test_two_rule_file_compiles_small);
	tcase_add_test(o, test_verdict_points_at_the_rule_as_written);
	tcase_add_test(o, test_refcount_and_memsize);
	tcase_add_test(o, test_introspection_lists_groups_agents_and_rules);
	tcase_add_test(o, test_names_of_directives_and_reasons);
	tcase_add_test(o, test_image_round_trip_gives_the_same_verdicts);
	suite_add_tcase(s, m);
	suite_add_tcase(s, o);
	return s;
}

TEST_PROGRAM(match_suite, NULL, NULL);
