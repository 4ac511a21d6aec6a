/*
 * check_robots.c: the robots.txt parser of librobots (lines, keys,
 * groups), rule by rule; the matcher is check_match.c's. Sources: RFC 9309,
 * Google's robots.txt specification (its example tables are transcribed below)
 * and the google/robotstxt reference parser where the RFC leaves room. Paths
 * are fed already normalized, as robots_check() expects.
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots_helpers.h"
#include "test_main.h"

START_TEST(test_records_end_at_cr_lf_crlf_and_mixes)
{
	struct robots *r =
	    parse("User-agent: *\rDisallow: /a\nDisallow: /b\r\nDisallow: /c"
	          "\n\r\nDisallow: /d");

	expect_rule(r, "x", "/a", 0, "/a", 2);
	expect_rule(r, "x", "/b", 0, "/b", 3);
	expect_rule(r, "x", "/c", 0, "/c", 4);
	/* "\n\r\n" is two line ends: an empty line 5, then line 6. */
	expect_rule(r, "x", "/d", 0, "/d", 6);
	robots_unref(r);
}
END_TEST

START_TEST(test_leading_utf8_bom_is_ignored)
{
	struct robots *r = parse("\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n");

	expect_rule(r, "x", "/x", 0, "/x", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_partial_bom_is_ignored_as_google_does)
{
	struct robots *r = parse("\xEF\xBBUser-agent: *\nDisallow: /y\n");

	expect_rule(r, "x", "/y", 0, "/y", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_keys_match_by_prefix_as_google_does)
{
	/* google/robotstxt: StartsWithIgnoreCase(key, "disallow"), ... */
	struct robots *r =
	    parse("User-agents: *\nDisallowed: /x\n"
	          "Allowing: /x/y\nSitemaps: https://e.example/s\n");

	expect_rule(r, "x", "/x", 0, "/x", 2);
	expect_rule(r, "x", "/x/y", 1, "/x/y", 3);
	ck_assert_uint_eq(robots_sitemap_count(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_comments_are_ignored_anywhere)
{
	struct robots *r = parse("# top\nUser-agent: * # all\n"
	                         "Disallow: /x # not /y\n#Disallow: /y\n"
	                         "Disallow: /z#tight\n");

	expect_rule(r, "x", "/x", 0, "/x", 3);
	expect_no_rule(r, "x", "/y");
	expect_rule(r, "x", "/ztight", 0, "/z", 5);
	robots_unref(r);
}
END_TEST

START_TEST(test_whitespace_around_fields_and_values_is_trimmed)
{
	struct robots *r =
	    parse("  User-agent  :  *  \n\tDisallow\t:\t/x y\t\n");

	/* The value keeps its inner space; it matches the encoded path. */
	expect_rule(r, "x", "/x y", 0, "/x y", 2);
	expect_rule(r, "x", "/x%20y/z", 0, "/x y", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_field_names_are_case_insensitive)
{
	struct robots *r = parse("USER-AGENT: *\ndisALLOW: /x\naLLoW: /x/y\n");

	expect_rule(r, "x", "/x/a", 0, "/x", 2);
	expect_rule(r, "x", "/x/y", 1, "/x/y", 3);
	robots_unref(r);
}
END_TEST

START_TEST(test_unknown_fields_are_ignored)
{
	struct robots *r = parse("User-agent: *\nNoindex: /x\nFoo: bar\n"
	                         "Host: example.com\nDisallow: /y\n");

	expect_no_rule(r, "x", "/x");
	expect_rule(r, "x", "/y", 0, "/y", 5);
	ck_assert_uint_eq(robots_rule_count(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_line_without_colon_needs_two_tokens_and_known_key)
{
	struct robots *r = parse("User-agent *\nDisallow /x\n"
	                         "Disallow /y /z\nFoo /w\nDisallow\n");

	expect_rule(r, "x", "/x", 0, "/x", 2);
	expect_no_rule(r, "x", "/y");
	expect_no_rule(r, "x", "/w");
	ck_assert_uint_eq(robots_rule_count(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_google_misspellings_are_accepted)
{
	struct robots *r = parse("useragent: a\ndisalow: /1\n"
	                         "user agent: b\ndissallow: /2\n"
	                         "user-agent: c\ndissalow: /3\n"
	                         "User-Agent: d\ndiasllow: /4\n"
	                         "user-agent: e\ndisallaw: /5\n"
	                         "site-map: https://example.com/s.xml\n");

	expect_rule(r, "a", "/1", 0, "/1", 2);
	expect_rule(r, "b", "/2", 0, "/2", 4);
	expect_rule(r, "c", "/3", 0, "/3", 6);
	expect_rule(r, "d", "/4", 0, "/4", 8);
	expect_rule(r, "e", "/5", 0, "/5", 10);
	ck_assert_uint_eq(robots_sitemap_count(r), 1);
	ck_assert(sitemap_is(r, 0, "https://example.com/s.xml"));
	robots_unref(r);
}
END_TEST

/* "User-agent: *\nDisallow: /aaa...a$" with the line n bytes long. */
static char *
long_line_body(size_t n)
{
	static const char head[] = "User-agent: *\nDisallow: /";
	size_t h = sizeof(head) - 1, line = n, i;
	char *b = malloc(h + line + 2);

	ck_assert_ptr_nonnull(b);
	memcpy(b, head, h);
	/* The line is "Disallow: /" (11 bytes) + a's + "$". */
	for (i = 0; i < line - 12; i++)
		b[h + i] = 'a';
	b[h + line - 12] = '$';
	b[h + line - 11] = '\0';
	return b;
}

START_TEST(test_line_is_cut_after_16663_bytes_as_google_does)
{
	/* Google keeps kMaxLineLen - 1 = 16,663 bytes of a line. */
	char *kept = long_line_body(ROBOTS_MAX_LINE - 1);
	char *cut = long_line_body(ROBOTS_MAX_LINE);
	char *path = malloc(ROBOTS_MAX_LINE + 2);
	struct robots *r1, *r2;
	struct robots_verdict v;
	size_t a = ROBOTS_MAX_LINE - 1 - 12;

	ck_assert_ptr_nonnull(path);
	path[0] = '/';
	memset(path + 1, 'a', a + 2); /* more a's than either pattern has */
	r1 = robots_parse(kept, strlen(kept));
	r2 = robots_parse(cut, strlen(cut));
	ck_assert_ptr_nonnull(r1);
	ck_assert_ptr_nonnull(r2);
	/* 16,663 bytes: the '$' is kept, "/a...a" + 'a' does not match. */
	robots_check(r1, "x", 1, path, a + 2, &v);
	ck_assert_int_eq(v.reason, ROBOTS_REASON_NO_RULE);
	/* 16,664 bytes: the '$' falls off, so the rule is a prefix. */
	robots_check(r2, "x", 1, path, a + 3, &v);
	ck_assert_int_eq(v.reason, ROBOTS_REASON_RULE);
	ck_assert_int_eq(v.allowed, 0);
	ck_assert_uint_eq(v.rule.pattern_len, ROBOTS_MAX_LINE - 1 - 10);
	robots_unref(r1);
	robots_unref(r2);
	free(kept);
	free(cut);
	free(path);
}
END_TEST

START_TEST(test_only_first_512000_bytes_are_parsed)
{
	static const char head[] = "User-agent: *\n";
	static const char tail[] = "\nDisallow: /abc\nDisallow: /later\n";
	size_t h = sizeof(head) - 1, len = ROBOTS_MAX_BODY + sizeof(tail);
	char *b = malloc(len);
	struct robots *r;

	ck_assert_ptr_nonnull(b);
	memcpy(b, head, h);
	memset(b + h, '#', len - h);
	/* The cap falls inside "/abc": the rule is read as "/ab". */
	memcpy(b + ROBOTS_MAX_BODY - 14, tail, sizeof(tail) - 1);
	r = robots_parse(b, len);
	ck_assert_ptr_nonnull(r);
	expect_rule(r, "x", "/abx", 0, "/ab", 3);
	expect_no_rule(r, "x", "/later");
	robots_unref(r);
	free(b);
}
END_TEST

START_TEST(test_nul_html_and_invalid_utf8_are_survived)
{
	static const char body[] = "<html>\0\xff\xfe\n\xc3(\nUser-agent: *\n"
	                           "Disallow: /x\0/y\n<p>Disallow: /z</p>\n"
	                           "\x80\x81: \xff\nDisallow: /w\n";
	struct robots *r = robots_parse(body, sizeof(body) - 1);

	ck_assert_ptr_nonnull(r);
	/* A NUL ends the line for the reference parser (C strings). */
	expect_rule(r, "x", "/x/y", 0, "/x", 4);
	expect_no_rule(r, "x", "/z");
	expect_rule(r, "x", "/w", 0, "/w", 7);
	robots_unref(r);
}
END_TEST

START_TEST(test_empty_and_null_bodies_allow_everything)
{
	struct robots *r = robots_parse(NULL, 0);

	ck_assert_ptr_nonnull(r);
	expect_no_rule(r, "x", "/");
	ck_assert_uint_eq(robots_group_count(r), 0);
	robots_unref(r);
	r = parse("");
	expect_no_rule(r, "x", "/a");
	robots_unref(r);
}
END_TEST

/*
 * Groups.
 */

START_TEST(test_consecutive_user_agent_lines_share_a_group)
{
	struct robots *r = parse("User-agent: a\nUser-agent: b\nDisallow: /x\n"
	                         "\nUser-agent: c\nDisallow: /y\n");

	expect_rule(r, "a", "/x", 0, "/x", 3);
	expect_rule(r, "b", "/x", 0, "/x", 3);
	expect_no_rule(r, "c", "/x");
	expect_no_rule(r, "a", "/y");
	robots_unref(r);
}
END_TEST

START_TEST(test_rules_before_any_user_agent_are_ignored)
{
	struct robots *r = parse("Disallow: /x\nUser-agent: *\nDisallow: /y\n");

	expect_no_rule(r, "x", "/x");
	expect_rule(r, "x", "/y", 0, "/y", 3);
	ck_assert_uint_eq(robots_rule_count(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_sitemap_and_unknown_lines_do_not_end_a_group)
{
	/* Google's example: a and b form one group. */
	struct robots *r = parse("user-agent: a\n"
	                         "sitemap: https://example.com/sitemap.xml\n"
	                         "\nuser-agent: b\ndisallow: /\n");
	struct robots *r2 = parse("user-agent: a\ndisallow: /x\nfoo: bar\n"
	                          "disallow: /y\nuser-agent: b\n");

	expect_rule(r, "a", "/page", 0, "/", 5);
	expect_rule(r, "b", "/page", 0, "/", 5);
	expect_rule(r2, "a", "/y", 0, "/y", 4);
	expect_no_rule(r2, "b", "/y");
	robots_unref(r);
	robots_unref(r2);
}
END_TEST

START_TEST(test_groups_naming_the_same_agent_are_merged)
{
	/* Google's example of grouping of groups. */
	struct robots *r = parse("user-agent: googlebot-news\ndisallow: /fish\n"
	                         "\nuser-agent: *\ndisallow: /carrots\n"
	                         "\nuser-agent: googlebot-news\n"
	                         "disallow: /shrimp\n");

	expect_rule(r, "googlebot-news", "/fish", 0, "/fish", 2);
	expect_rule(r, "googlebot-news", "/shrimp", 0, "/shrimp", 8);
	expect_no_rule(r, "googlebot-news", "/carrots");
	expect_rule(r, "otherbot", "/carrots", 0, "/carrots", 5);
	robots_unref(r);
}
END_TEST

START_TEST(test_star_group_is_the_fallback)
{
	struct robots *r =
	    parse("User-agent: a\nDisallow: /a\n\nUser-agent: *\n"
	          "Disallow: /star\n");

	expect_rule(r, "b", "/star", 0, "/star", 5);
	expect_no_rule(r, "a", "/star");
	robots_unref(r);
}
END_TEST

START_TEST(test_user_agent_value_is_cut_to_its_product_token)
{
	struct robots *r = parse("User-agent: MJ12bot\nDisallow: /mj\n\n"
	                         "User-agent: Googlebot/2.1\nDisallow: /g\n\n"
	                         "User-agent: * extra words\nDisallow: /s\n");

	/* MJ12bot names "mj": the agent MJ12bot reduces to "MJ" too. */
	expect_rule(r, "MJ12bot/1.5", "/mj", 0, "/mj", 2);
	expect_rule(r, "mj", "/mj", 0, "/mj", 2);
	expect_no_rule(r, "mj12", "/s"); /* "mj" named: no fallback */
	expect_rule(r, "googlebot", "/g", 0, "/g", 5);
	/* "* extra words" is the '*' group. */
	expect_rule(r, "other", "/s", 0, "/s", 8);
	robots_unref(r);
}
END_TEST

START_TEST(test_caller_agent_is_reduced_and_compared_ignoring_case)
{
	struct robots *r =
	    parse("User-agent: foobot\nDisallow: /f\nUser-agent: *\n"
	          "Disallow: /\n");

	expect_rule(r, "FooBot/2.1 (+https://foo.example)", "/f", 0, "/f", 2);
	expect_rule(r, "FOOBOT", "/f", 0, "/f", 2);
	/* "FooBotX" is another token; "Foo" is a shorter one. */
	expect_rule(r, "FooBotX", "/f", 0, "/", 4);
	expect_rule(r, "Foo", "/f", 0, "/", 4);
	robots_unref(r);
}
END_TEST

START_TEST(test_named_agent_without_rules_ignores_the_star_group)
{
	/* Google: ever_seen_specific_agent -> the '*' rules do not apply. */
	struct robots *r =
	    parse("User-agent: *\nDisallow: /\n\nUser-agent: foo\n");

	expect_no_rule(r, "foo", "/x");
	expect_rule(r, "bar", "/x", 0, "/", 2);
	robots_unref(r);
}
END_TEST

START_TEST(test_user_agent_precedence_google_example)
{
	/* Google's specification: which group each crawler follows. */
	struct robots *r = parse("user-agent: googlebot-news\ndisallow: /g1\n"
	                         "\nuser-agent: *\ndisallow: /g2\n"
	                         "\nuser-agent: googlebot\ndisallow: /g3\n");

	expect_rule(r, "googlebot-news", "/g1", 0, "/g1", 2);
	expect_no_rule(r, "googlebot-news", "/g2");
	expect_no_rule(r, "googlebot-news", "/g3");
	expect_rule(r, "Googlebot", "/g3", 0, "/g3", 8);
	expect_no_rule(r, "Googlebot", "/g1");
	expect_rule(r, "Storebot-Google", "/g2", 0, "/g2", 5);
	expect_no_rule(r, "Storebot-Google", "/g3");
	robots_unref(r);
}
END_TEST

/*
 * Rule values.
 */

START_TEST(test_empty_value_is_ignored_but_ends_the_agent_lines)
{
	struct robots *r = parse("User-agent: a\nDisallow:\nUser-agent: b\n"
	                         "Disallow: /\nAllow:\n");

	expect_no_rule(r, "a", "/x");
	expect_rule(r, "b", "/x", 0, "/", 4);
	ck_assert_uint_eq(robots_rule_count(r), 1);
	robots_unref(r);
}
END_TEST

START_TEST(test_value_not_starting_with_slash_or_star_never_matches)
{
	/* The reference parser anchors it at the path's leading '/'. */
	struct robots *r =
	    parse("User-agent: *\nDisallow: fish/\nDisallow: *cat\n");

	expect_no_rule(r, "x", "/fish/");
	expect_rule(r, "x", "/bobcat", 0, "*cat", 3);
	robots_unref(r);
}
END_TEST

START_TEST(test_crawl_delay_of_the_chosen_group)
{
	struct robots *r = parse("User-agent: a\nCrawl-delay: 2.5\n"
	                         "Disallow: /x\n\nUser-agent: *\n"
	                         "Crawl-delay: 10\nCrawl-delay: 20\n"
	                         "Disallow: /y\n\n"
	                         "User-agent: c\nCrawl-delay: soon\n");
	struct robots_verdict v;

	v = check(r, "a", "/x");
	ck_assert_double_eq(v.crawl_delay, 2.5);
	v = check(r, "b", "/x");
	ck_assert_double_eq(v.crawl_delay, 10);
	/* c has its own group: no delay there, and no fallback to '*'. */
	v = check(r, "c", "/x");
	ck_assert(v.crawl_delay < 0);
	ck_assert_double_eq(robots_group_crawl_delay(r, 0), 2.5);
	ck_assert_double_eq(robots_group_crawl_delay(r, 1), 10);
	ck_assert(robots_group_crawl_delay(r, 2) < 0);
	robots_unref(r);
}
END_TEST

START_TEST(test_sitemaps_are_all_kept_in_order)
{
	struct robots *r =
	    parse("Sitemap: https://a.example/1.xml\n"
	          "User-agent: *\nSitemap: https://a.example/2.xml"
	          "   \nDisallow: /\nsitemap:\n"
	          "SITEMAP: https://b.example/3.xml\n");
	size_t len;

	ck_assert_uint_eq(robots_sitemap_count(r), 3);
	ck_assert(sitemap_is(r, 0, "https://a.example/1.xml"));
	ck_assert(sitemap_is(r, 1, "https://a.example/2.xml"));
	ck_assert(sitemap_is(r, 2, "https://b.example/3.xml"));
	ck_assert_ptr_null(robots_sitemap(r, 3, &len));
	robots_unref(r);
}
END_TEST

static Suite *
robots_suite(void)
{
	Suite *s = suite_create("robots");
	TCase *p = tcase_create("parse"), *g = tcase_create("groups");

	tcase_add_test(p, test_records_end_at_cr_lf_crlf_and_mixes);
	tcase_add_test(p, test_leading_utf8_bom_is_ignored);
	tcase_add_test(p, test_partial_bom_is_ignored_as_google_does);
	tcase_add_test(p, test_keys_match_by_prefix_as_google_does);
	tcase_add_test(p, test_comments_are_ignored_anywhere);
	tcase_add_test(p, test_whitespace_around_fields_and_values_is_trimmed);
	tcase_add_test(p, test_field_names_are_case_insensitive);
	tcase_add_test(p, test_unknown_fields_are_ignored);
	tcase_add_test(
	    p, test_line_without_colon_needs_two_tokens_and_known_key);
	tcase_add_test(p, test_google_misspellings_are_accepted);
	tcase_add_test(p, test_line_is_cut_after_16663_bytes_as_google_does);
	tcase_add_test(p, test_only_first_512000_bytes_are_parsed);
	tcase_add_test(p, test_nul_html_and_invalid_utf8_are_survived);
	tcase_add_test(p, test_empty_and_null_bodies_allow_everything);
	tcase_add_test(p, test_empty_value_is_ignored_but_ends_the_agent_lines);
	tcase_add_test(
	    p, test_value_not_starting_with_slash_or_star_never_matches);
	tcase_add_test(p, test_crawl_delay_of_the_chosen_group);
	tcase_add_test(p, test_sitemaps_are_all_kept_in_order);
	tcase_add_test(g, test_consecutive_user_agent_lines_share_a_group);
	tcase_add_test(g, test_rules_before_any_user_agent_are_ignored);
	tcase_add_test(g, test_sitemap_and_unknown_lines_do_not_end_a_group);
	tcase_add_test(g, test_groups_naming_the_same_agent_are_merged);
	tcase_add_test(g, test_star_group_is_the_fallback);
	tcase_add_test(g, test_user_agent_value_is_cut_to_its_product_token);
	tcase_add_test(
	    g, test_caller_agent_is_reduced_and_compared_ignoring_case);
	tcase_add_test(
	    g, test_named_agent_without_rules_ignores_the_star_group);
	tcase_add_test(g, test_user_agent_precedence_google_example);
	suite_add_tcase(s, p);
	suite_add_tcase(s, g);
	return s;
}

TEST_PROGRAM(robots_suite, NULL, NULL);
