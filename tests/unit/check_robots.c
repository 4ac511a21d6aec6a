/*
 * check_robots.c: the robots.txt parser and matcher of librobots, rule by
 * rule: RFC 9309, Google's robots.txt specification (its example tables are
 * transcribed below) and the google/robotstxt reference parser where the RFC
 * leaves room. Paths are fed already normalized, as robots_check() expects.
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

/* Compile a NUL-terminated body; never NULL in a test. */
static struct robots *
parse(const char *body)
{
	struct robots *r = robots_parse(body, strlen(body));

	ck_assert_ptr_nonnull(r);
	return r;
}

/* The verdict for agent on a raw path, normalized as a match path. */
static struct robots_verdict
check(const struct robots *r, const char *agent, const char *path)
{
	struct robots_verdict v;
	size_t len = strlen(path);
	char *norm = malloc(3 * len + 1);
	size_t n;

	ck_assert_ptr_nonnull(norm);
	n = robots_pct_normalize(path, len, norm, 0);
	robots_check(r, agent, strlen(agent), norm, n, &v);
	free(norm);
	return v;
}

/* Assert that a rule decided: allowed or not, by pattern on line. */
static void
expect_rule(const struct robots *r, const char *agent, const char *path,
    int allowed, const char *pattern, unsigned line)
{
	struct robots_verdict v = check(r, agent, path);

	ck_assert_msg(v.reason == ROBOTS_REASON_RULE,
	    "%s %s: expected a rule to decide, got %s", agent, path,
	    robots_reason_name(v.reason));
	ck_assert_msg(v.allowed == allowed, "%s %s: expected %s by %s", agent,
	    path, allowed ? "allowed" : "disallowed", pattern);
	ck_assert_int_eq(
	    v.rule.directive, allowed ? ROBOTS_ALLOW : ROBOTS_DISALLOW);
	ck_assert_msg(
	    v.rule.pattern_len == strlen(pattern) &&
	        memcmp(v.rule.pattern, pattern, v.rule.pattern_len) == 0,
	    "%s %s: expected pattern '%s', got '%.*s'", agent, path, pattern,
	    (int)v.rule.pattern_len, v.rule.pattern);
	ck_assert_uint_eq(v.rule.line, line);
}

/* Assert that no rule matched: allowed with reason no_rule. */
static void
expect_no_rule(const struct robots *r, const char *agent, const char *path)
{
	struct robots_verdict v = check(r, agent, path);

	ck_assert_msg(v.allowed && v.reason == ROBOTS_REASON_NO_RULE,
	    "%s %s: expected no rule, got %s %s line %u", agent, path,
	    v.allowed ? "allowed" : "disallowed", robots_reason_name(v.reason),
	    v.rule.line);
}

/* Whether sitemap i of r is exactly s. */
static int
sitemap_is(const struct robots *r, size_t i, const char *s)
{
	size_t len;
	const char *p = robots_sitemap(r, i, &len);

	return p != NULL && len == strlen(s) && memcmp(p, s, len) == 0;
}

/*
 * Parsing.
 */

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
	robots_unref(copy);
}
END_TEST

static Suite *
robots_suite(void)
{
	Suite *s = suite_create("robots");
	TCase *p = tcase_create("parse"), *g = tcase_create("groups");
	TCase *m = tcase_create("match"), *o = tcase_create("object");

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
	tcase_add_test(o, test_verdict_points_at_the_rule_as_written);
	tcase_add_test(o, test_refcount_and_memsize);
	tcase_add_test(o, test_introspection_lists_groups_agents_and_rules);
	tcase_add_test(o, test_names_of_directives_and_reasons);
	tcase_add_test(o, test_image_round_trip_gives_the_same_verdicts);
	suite_add_tcase(s, p);
	suite_add_tcase(s, g);
	suite_add_tcase(s, m);
	suite_add_tcase(s, o);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(robots_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
