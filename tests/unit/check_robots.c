/*
 * check_robots.c: the robots.txt parser of librobots where the input is
 * made, not written: line ends, BOMs, NULs, the line and body caps, no
 * body. What a written robots.txt compiles to is in the golden pairs of
 * tests/data/robots (check_golden.c). Sources: RFC 9309, Google's
 * robots.txt specification and the google/robotstxt reference parser.
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots_helpers.h"
#include "test_main.h"

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

static Suite *
robots_suite(void)
{
	Suite *s = suite_create("robots");
	TCase *p = tcase_create("parse");

	tcase_add_test(p, test_line_is_cut_after_16663_bytes_as_google_does);
	tcase_add_test(p, test_only_first_512000_bytes_are_parsed);
	tcase_add_test(p, test_nul_html_and_invalid_utf8_are_survived);
	tcase_add_test(p, test_empty_and_null_bodies_allow_everything);
	suite_add_tcase(s, p);
	return s;
}

TEST_PROGRAM(robots_suite, NULL, NULL);
