/*
 * check_match.c: the matcher of librobots (longest match, allow on ties,
 * wildcards, percent-encoding, Google's path and precedence tables) and
 * the compiled ruleset as an object (memory, refcount, introspection, the
 * image round trip). Paths are fed already normalized, as robots_check()
 * expects. The parser is check_robots.c's.
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

START_TEST(test_longest_match_wins)
{
	struct robots *r = parse(
	    "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n");

	expect_rule(r, "x", "/a/x", 0, "/a", 2);
	expect_rule(r, "x", "/a/b/x", 1, "/a/b", 3);
	expect_rule(r, "x", "/a/b/c", 0, "/a/b/c", 4);
	robots_unref(r);
}
END_TEST

START_TEST(test_allow_wins_a_tie)
{
	struct robots *r =
	    parse("User-agent: *\nDisallow: /folder\nAllow: /folder\n");

	expect_rule(r, "x", "/folder/page", 1, "/folder", 3);
	robots_unref(r);
}
END_TEST

START_TEST(test_no_matching_rule_allows)
{
	struct robots *r = parse("User-agent: *\nDisallow: /private\n");

	expect_no_rule(r, "x", "/public");
	expect_no_rule(r, "x", "/Private");
	robots_unref(r);
}
END_TEST

START_TEST(test_robots_txt_path_is_always_allowed)
{
	struct robots *r = parse("User-agent: *\nDisallow: /\n");
	struct robots_verdict v = check(r, "x", "/robots.txt");

	ck_assert_int_eq(v.allowed, 1);
	ck_assert_int_eq(v.reason, ROBOTS_REASON_ROBOTS_TXT);
	/* Only the exact path: with a query it is another URL. */
	expect_rule(r, "x", "/robots.txt?x=1", 0, "/", 2);
	expect_rule(r, "x", "/robots.txt/", 0, "/", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_star_matches_any_sequence_and_dollar_anchors)
{
	struct robots *r = parse("User-agent: *\nDisallow: /*.pdf$\n"
	                         "Disallow: /a*b*c\nDisallow: /end$\n");

	expect_rule(r, "x", "/x/y.pdf", 0, "/*.pdf$", 2);
	expect_no_rule(r, "x", "/x/y.pdf?q");
	expect_rule(r, "x", "/a-b-c-d", 0, "/a*b*c", 3);
	expect_rule(r, "x", "/abc", 0, "/a*b*c", 3);
	expect_no_rule(r, "x", "/acb");
	expect_rule(r, "x", "/end", 0, "/end$", 4);
	expect_no_rule(r, "x", "/ending");
	robots_unref(r);
}
END_TEST

START_TEST(test_trailing_star_adds_nothing_but_length)
{
	struct robots *r =
	    parse("User-agent: *\nDisallow: /fish*\nAllow: /fish\n");

	/* Both match; "/fish*" is one octet longer, so it decides. */
	expect_rule(r, "x", "/fish", 0, "/fish*", 2);
	expect_rule(r, "x", "/fishheads", 0, "/fish*", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_paths_match_case_sensitively)
{
	struct robots *r = parse("User-agent: *\nDisallow: /Fish\n");

	expect_rule(r, "x", "/Fish.asp", 0, "/Fish", 2);
	expect_no_rule(r, "x", "/fish.asp");
	robots_unref(r);
}
END_TEST

START_TEST(test_allow_index_html_also_allows_its_directory)
{
	struct robots *r =
	    parse("User-agent: *\nDisallow: /\n"
	          "Allow: /dir/index.html\nAllow: /d2/index.htm\n");

	expect_rule(r, "x", "/dir/index.html", 1, "/dir/index.html", 3);
	/* As if "Allow: /dir/$": the directory itself, nothing else. */
	expect_rule(r, "x", "/dir/", 1, "/dir/index.html", 3);
	expect_rule(r, "x", "/dir/other", 0, "/", 2);
	expect_rule(r, "x", "/d2/", 1, "/d2/index.htm", 4);
	robots_unref(r);
}
END_TEST

START_TEST(test_specificity_is_normalized_octets_wildcards_included)
{
	struct robots *r = parse("User-agent: *\nDisallow: /%7Ejoe\n"
	                         "Allow: /~jo*\nAllow: /caf%C3%A9\n"
	                         "Disallow: /caf\xC3\xA9\n");

	/* "/%7Ejoe" is "/~joe": 5 octets, as many as "/~jo*": allow wins. */
	expect_rule(r, "x", "/~joe", 1, "/~jo*", 3);
	/* Raw UTF-8 and its escapes are the same 10 octets: allow wins. */
	expect_rule(r, "x", "/caf%C3%A9", 1, "/caf%C3%A9", 4);
	robots_unref(r);
}
END_TEST

START_TEST(test_percent_encoding_is_normalized_on_both_sides)
{
	struct robots *r = parse("User-agent: *\nDisallow: /%7ebob\n"
	                         "Disallow: /a%2fb\nDisallow: /caf\xC3\xA9\n"
	                         "Disallow: /%62ar\n");

	expect_rule(r, "x", "/~bob", 0, "/%7ebob", 2);
	expect_rule(r, "x", "/%7Ebob", 0, "/%7ebob", 2);
	expect_rule(r, "x", "/a%2Fb", 0, "/a%2fb", 3);
	expect_no_rule(r, "x", "/a/b"); /* %2F stays distinct from '/' */
	expect_rule(r, "x", "/caf%c3%a9", 0, "/caf\xC3\xA9", 4);
	expect_rule(r, "x", "/bar", 0, "/%62ar", 5);
	robots_unref(r);
}
END_TEST

START_TEST(test_escaped_star_and_dollar_are_literals)
{
	struct robots *r = parse("User-agent: *\nDisallow: /a%2A\n"
	                         "Disallow: /p$q\nDisallow: /d%24$\n");

	expect_rule(r, "x", "/a*", 0, "/a%2A", 2);
	expect_no_rule(r, "x", "/abc");
	/* A '$' before the end of a pattern is a literal '$'. */
	expect_rule(r, "x", "/p$q/r", 0, "/p$q", 3);
	expect_rule(r, "x", "/d$", 0, "/d%24$", 4);
	expect_no_rule(r, "x", "/d$x");
	robots_unref(r);
}
END_TEST

START_TEST(test_escape_cut_by_star_matches_the_escaped_path)
{
	/* Google keeps the '%' of "%8*2" literal; it matches "%82" in a path.
	 */
	struct robots *r = parse("User-agent: *\nDisallow: /%E2%8*2%AC/x\n"
	                         "Disallow: /a%*2Fb\n");

	expect_rule(r, "x", "/%E2%82%AC/x", 0, "/%E2%8*2%AC/x", 2);
	expect_rule(r, "x", "/a%2Fb", 0, "/a%*2Fb", 3);
	expect_no_rule(r, "x", "/a/b");
	robots_unref(r);
}
END_TEST

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

/* A row of Google's path-matching table: does pattern match path? */
struct path_row {
	const char *pattern;
	const char *path;
	int matches;
};

/*
 * Google's specification, "URL matching based on path values", every row
 * (a match is a Disallow deciding, on line 2; no match is no rule).
 */
static const struct path_row google_paths[] = {
	{ "/", "/", 1 },
	{ "/", "/any/url?x", 1 },
	{ "/*", "/", 1 },
	{ "/*", "/any/url?x", 1 },
	{ "/$", "/", 1 },
	{ "/$", "/page", 0 },
	{ "/fish", "/fish", 1 },
	{ "/fish", "/fish.html", 1 },
	{ "/fish", "/fish/salmon.html", 1 },
	{ "/fish", "/fishheads", 1 },
	{ "/fish", "/fishheads/yummy.html", 1 },
	{ "/fish", "/fish.php?id=anything", 1 },
	{ "/fish", "/Fish.asp", 0 },
	{ "/fish", "/catfish", 0 },
	{ "/fish", "/?id=fish", 0 },
	{ "/fish", "/desert/fish", 0 },
	{ "/fish*", "/fish", 1 },
	{ "/fish*", "/fish.html", 1 },
	{ "/fish*", "/fish/salmon.html", 1 },
	{ "/fish*", "/fishheads", 1 },
	{ "/fish*", "/fishheads/yummy.html", 1 },
	{ "/fish*", "/fish.php?id=anything", 1 },
	{ "/fish*", "/Fish.asp", 0 },
	{ "/fish*", "/catfish", 0 },
	{ "/fish*", "/?id=fish", 0 },
	{ "/fish*", "/desert/fish", 0 },
	{ "/fish/", "/fish/", 1 },
	{ "/fish/", "/fish/?id=anything", 1 },
	{ "/fish/", "/fish/salmon.htm", 1 },
	{ "/fish/", "/fish", 0 },
	{ "/fish/", "/fish.html", 0 },
	{ "/fish/", "/animals/fish/", 0 },
	{ "/fish/", "/Fish/Salmon.asp", 0 },
	{ "/*.php", "/index.php", 1 },
	{ "/*.php", "/filename.php", 1 },
	{ "/*.php", "/folder/filename.php", 1 },
	{ "/*.php", "/folder/filename.php?parameters", 1 },
	{ "/*.php", "/folder/any.php.file.html", 1 },
	{ "/*.php", "/filename.php/", 1 },
	{ "/*.php", "/", 0 },
	{ "/*.php", "/windows.PHP", 0 },
	{ "/*.php$", "/filename.php", 1 },
	{ "/*.php$", "/folder/filename.php", 1 },
	{ "/*.php$", "/filename.php?parameters", 0 },
	{ "/*.php$", "/filename.php/", 0 },
	{ "/*.php$", "/filename.php5", 0 },
	{ "/*.php$", "/windows.PHP", 0 },
	{ "/fish*.php", "/fish.php", 1 },
	{ "/fish*.php", "/fishheads/catfish.php?parameters", 1 },
	{ "/fish*.php", "/Fish.PHP", 0 },
};

START_TEST(test_google_path_matching_table)
{
	const struct path_row *row = &google_paths[_i];
	char body[64];
	struct robots *r;

	snprintf(
	    body, sizeof(body), "User-agent: *\nDisallow: %s\n", row->pattern);
	r = parse(body);
	if (row->matches)
		expect_rule(r, "FooBot", row->path, 0, row->pattern, 2);
	else
		expect_no_rule(r, "FooBot", row->path);
	robots_unref(r);
}
END_TEST

/* Google's specification, "Order of precedence for rules". */
START_TEST(test_google_order_of_precedence_table)
{
	struct robots *r;

	r = parse("User-agent: *\nallow: /p\ndisallow: /\n");
	expect_rule(r, "x", "/page", 1, "/p", 2);
	robots_unref(r);
	r = parse("User-agent: *\nallow: /folder\ndisallow: /folder\n");
	expect_rule(r, "x", "/folder/page", 1, "/folder", 2);
	robots_unref(r);
	r = parse("User-agent: *\nallow: /page\ndisallow: /*.htm\n");
	expect_rule(r, "x", "/page.htm", 0, "/*.htm", 3);
	robots_unref(r);
	r = parse("User-agent: *\nallow: /page\ndisallow: /*.ph\n");
	expect_rule(r, "x", "/page.php5", 1, "/page", 2);
	robots_unref(r);
	r = parse("User-agent: *\nallow: /$\ndisallow: /\n");
	expect_rule(r, "x", "/", 1, "/$", 2);
	expect_rule(r, "x", "/page.htm", 0, "/", 3);
	robots_unref(r);
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

	tcase_add_test(m, test_longest_match_wins);
	tcase_add_test(m, test_allow_wins_a_tie);
	tcase_add_test(m, test_no_matching_rule_allows);
	tcase_add_test(m, test_robots_txt_path_is_always_allowed);
	tcase_add_test(m, test_star_matches_any_sequence_and_dollar_anchors);
	tcase_add_test(m, test_trailing_star_adds_nothing_but_length);
	tcase_add_test(m, test_paths_match_case_sensitively);
	tcase_add_test(m, test_allow_index_html_also_allows_its_directory);
	tcase_add_test(
	    m, test_specificity_is_normalized_octets_wildcards_included);
	tcase_add_test(m, test_percent_encoding_is_normalized_on_both_sides);
	tcase_add_test(m, test_escaped_star_and_dollar_are_literals);
	tcase_add_test(m, test_escape_cut_by_star_matches_the_escaped_path);
	tcase_add_test(m, test_pathological_patterns_match_in_linear_time);
	tcase_add_loop_test(m, test_google_path_matching_table, 0,
	    (int)(sizeof(google_paths) / sizeof(google_paths[0])));
	tcase_add_test(m, test_google_order_of_precedence_table);
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
