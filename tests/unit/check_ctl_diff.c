/*
 * check_ctl_diff.c: the unified diff of "robotsctl diff" (ctl_diff.c),
 * each row's expected text written by GNU diff -u (diffutils) from the
 * same two inputs.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "robotsctl.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define TEN "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
#define TWENTY TEN "l11\nl12\nl13\nl14\nl15\nl16\nl17\nl18\nl19\nl20\n"

/* robotsctl.c's, which the test does not link. */
void
ctl_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static const struct {
	const char *name, *a, *b, *want;
} rows[] = {
	{ "the same", TEN, TEN, "" },
	{ "one changed in ten", TEN,
	    "l1\nl2\nl3\nl4\nL5\nl6\nl7\nl8\nl9\nl10\n",
	    "--- A\n+++ B\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n"
	    " l8\n" },
	{ "added at the end", "a\nb\n", "a\nb\nc\n",
	    "--- A\n+++ B\n@@ -1,2 +1,3 @@\n a\n b\n+c\n" },
	{ "from empty", "", "x\ny\n",
	    "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+x\n+y\n" },
	{ "two far apart", TWENTY,
	    "l1\nX2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\nl14\nl15\n"
	    "l16\nl17\nX18\nl19\nl20\n",
	    "--- A\n+++ B\n@@ -1,5 +1,5 @@\n l1\n-l2\n+X2\n l3\n l4\n l5\n"
	    "@@ -15,6 +15,6 @@\n l15\n l16\n l17\n-l18\n+X18\n l19\n l20\n" },
	{ "two close: one hunk", TWENTY,
	    "l1\nl2\nl3\nl4\nX5\nl6\nl7\nl8\nl9\nl10\nX11\nl12\nl13\nl14\nl15\n"
	    "l16\nl17\nl18\nl19\nl20\n",
	    "--- A\n+++ B\n@@ -2,13 +2,13 @@\n l2\n l3\n l4\n-l5\n+X5\n l6\n "
	    "l7\n"
	    " l8\n l9\n l10\n-l11\n+X11\n l12\n l13\n l14\n" },
	{ "first removed", "a\nb\nc\n", "b\nc\n",
	    "--- A\n+++ B\n@@ -1,3 +1,2 @@\n-a\n b\n c\n" },
};

START_TEST(test_diff)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	ck_assert_ptr_nonnull(f);
	rc = ctl_diff(f, "A", rows[_i].a, strlen(rows[_i].a), "B", rows[_i].b,
	    strlen(rows[_i].b));
	fclose(f);
	ck_assert_int_eq(rc, rows[_i].want[0] != '\0');
	ck_assert_msg(
	    strcmp(text, rows[_i].want) == 0, "%s:\n%s", rows[_i].name, text);
	free(text);
}
END_TEST

/* Past the LCS table's size the middle is all removed, then all added. */
START_TEST(test_large_middle_is_replaced_whole)
{
	size_t n = 3000, i, alen = 0, blen = 0;
	char *a = malloc(n * 16), *b = malloc(n * 16), *text = NULL;
	size_t len = 0, minus = 0, plus = 0;
	FILE *f = open_memstream(&text, &len);
	const char *p;

	for (i = 0; i < n; i++) {
		alen += (size_t)snprintf(a + alen, 16, "a%zu\n", i);
		blen += (size_t)snprintf(b + blen, 16, "b%zu\n", i);
	}
	ck_assert_int_eq(ctl_diff(f, "A", a, alen, "B", b, blen), 1);
	fclose(f);
	for (p = text; (p = strchr(p, '\n')) != NULL; p++) {
		minus += p[1] == '-';
		plus += p[1] == '+';
	}
	ck_assert_uint_eq(minus, n);    /* "--- A" starts the text */
	ck_assert_uint_eq(plus, n + 1); /* "+++ B" and the lines */
	free(a);
	free(b);
	free(text);
}
END_TEST

/* The ctl_diff suite. */
static Suite *
ctl_diff_suite(void)
{
	Suite *s = suite_create("ctl_diff");
	TCase *tc = tcase_create("diff");

	tcase_add_loop_test(tc, test_diff, 0, NROWS(rows));
	tcase_add_test(tc, test_large_middle_is_replaced_whole);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(ctl_diff_suite, NULL, NULL);
