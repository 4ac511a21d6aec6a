/*
 * check_bounds.c: the memory caps of bounds.c. Response header values stop
 * growing at BOUNDS_HEADER_MAX (4,096 bytes); a request line over --max-line
 * is answered and dropped as it arrives, so a client that never sends '\n'
 * makes robotsd hold at most max + 1 bytes plus one read.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy/bounds.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* A heap string of n copies of c. */
static char *
fill(size_t n, char c)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(test_header_value_of_4096_bytes_is_kept_4097_ignored)
{
	char *slot = NULL, *v = fill(BOUNDS_HEADER_MAX + 1, 'v');

	ck_assert_int_eq(BOUNDS_HEADER_MAX, 4096);
	ck_assert_int_eq(bounds_header_join(&slot, v, 4097), 0);
	ck_assert_ptr_null(slot);
	ck_assert_int_eq(bounds_header_join(&slot, v, 4096), 1);
	ck_assert_uint_eq(strlen(slot), 4096);
	free(slot);
	slot = NULL;
	ck_assert_int_eq(bounds_header_join(&slot, "max-age=60", 10), 1);
	ck_assert_int_eq(bounds_header_join(&slot, v, 4097), 0);
	ck_assert_str_eq(slot, "max-age=60");
	free(slot);
	free(v);
}
END_TEST

START_TEST(test_header_repeats_join_until_the_value_passes_4096)
{
	char *slot = NULL, *v = fill(4096, 'v');

	ck_assert_int_eq(bounds_header_join(&slot, "public", 6), 1);
	ck_assert_int_eq(bounds_header_join(&slot, "max-age=5", 9), 1);
	ck_assert_str_eq(slot, "public, max-age=5");
	free(slot);
	slot = NULL;
	ck_assert_int_eq(bounds_header_join(&slot, v, 4096), 1);
	ck_assert_int_eq(bounds_header_join(&slot, "a", 1), 1); /* old 4096 */
	ck_assert_uint_eq(strlen(slot), 4096 + 3);
	ck_assert_int_eq(bounds_header_join(&slot, "b", 1), 0); /* old 4099 */
	ck_assert_uint_eq(strlen(slot), 4096 + 3);
	free(slot);
	slot = NULL;
	ck_assert_int_eq(bounds_header_join(&slot, "", 0), 1);
	ck_assert_int_eq(bounds_header_join(&slot, "x", 1), 1);
	ck_assert_str_eq(slot, "x");
	free(slot);
	free(v);
}
END_TEST

struct line_row {
	size_t n;
	long eol;
	int eof, dropping;
	enum bounds_line want;
	size_t len;
};

/* max = 200 throughout. */
static const struct line_row line_rows[] = {
	{ 0, -1, 0, 0, BOUNDS_WAIT, 0 },
	{ 200, -1, 0, 0, BOUNDS_WAIT, 0 },
	{ 201, -1, 0, 0, BOUNDS_WAIT, 0 },     /* may still end in "\r\n" */
	{ 202, -1, 0, 0, BOUNDS_OVERFLOW, 0 }, /* no room left: drop */
	{ 70000, -1, 0, 0, BOUNDS_OVERFLOW, 0 },
	{ 202, -1, 0, 1, BOUNDS_OVERFLOW, 0 },
	{ 5, -1, 0, 1, BOUNDS_WAIT, 0 },
	{ 5, -1, 1, 0, BOUNDS_LINE, 5 }, /* a last line without '\n' */
	{ 201, -1, 1, 0, BOUNDS_LINE, 201 },
	{ 300, -1, 1, 0, BOUNDS_TOO_LONG, 300 },
	{ 0, -1, 1, 0, BOUNDS_WAIT, 0 },
	{ 5, -1, 1, 1, BOUNDS_WAIT, 0 },
	{ 300, -1, 1, 1, BOUNDS_OVERFLOW, 0 },
	{ 10, 0, 0, 0, BOUNDS_LINE, 0 },
	{ 10, 3, 0, 0, BOUNDS_LINE, 3 },
	{ 300, 200, 0, 0, BOUNDS_LINE, 200 },
	{ 300, 201, 0, 0, BOUNDS_LINE, 201 },
	{ 300, 202, 0, 0, BOUNDS_TOO_LONG, 202 },
	{ 300, 50, 0, 1, BOUNDS_SKIP, 50 },
	{ 300, 250, 1, 1, BOUNDS_SKIP, 250 },
};

START_TEST(test_request_line)
{
	const struct line_row *r = &line_rows[_i];
	size_t len = 12345;
	enum bounds_line got =
	    bounds_request_line(r->n, r->eol, r->eof, r->dropping, 200, &len);

	ck_assert_int_eq(got, r->want);
	if (got != BOUNDS_WAIT && got != BOUNDS_OVERFLOW)
		ck_assert_uint_eq(len, r->len);
}
END_TEST

/* A client sends ten times --max-line without '\n', 1,000 bytes a read. */
START_TEST(test_endless_line_is_never_held_past_the_cap)
{
	size_t max = 65536, n = 0, most = 0, sent, len = 0;
	int dropping = 0, answers = 0;

	for (sent = 0; sent < 10 * max; sent += 1000) {
		n += 1000;
		most = n > most ? n : most;
		if (bounds_request_line(n, -1, 0, dropping, max, &len) ==
		    BOUNDS_OVERFLOW) {
			answers += !dropping;
			dropping = 1;
			n = 0;
		}
	}
	ck_assert_uint_le(most, max + 1 + 1000);
	ck_assert_int_eq(answers, 1);
	ck_assert_int_eq(
	    bounds_request_line(n + 1, (long)n, 0, dropping, max, &len),
	    BOUNDS_SKIP);
	ck_assert_uint_eq(len, n);
}
END_TEST

START_TEST(test_line_fits_the_cap_or_one_cr_over)
{
	char *line = fill(202, 'x');

	ck_assert_int_eq(bounds_line_fits(line, 0, 200), 1);
	ck_assert_int_eq(bounds_line_fits(line, 200, 200), 1);
	ck_assert_int_eq(bounds_line_fits(line, 201, 200), 0);
	line[200] = '\r';
	ck_assert_int_eq(bounds_line_fits(line, 201, 200), 1);
	ck_assert_int_eq(bounds_line_fits(line, 202, 200), 0);
	free(line);
}
END_TEST

/* The bounds suite. */
static Suite *
bounds_suite(void)
{
	Suite *s = suite_create("bounds");
	TCase *tc = tcase_create("caps");

	tcase_add_test(
	    tc, test_header_value_of_4096_bytes_is_kept_4097_ignored);
	tcase_add_test(
	    tc, test_header_repeats_join_until_the_value_passes_4096);
	tcase_add_loop_test(tc, test_request_line, 0, NROWS(line_rows));
	tcase_add_test(tc, test_endless_line_is_never_held_past_the_cap);
	tcase_add_test(tc, test_line_fits_the_cap_or_one_cr_over);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(bounds_suite, NULL, NULL);
