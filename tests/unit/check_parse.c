/*
 * check_parse.c: option value parsing (parse.c), one table per parser:
 * boundaries on both sides, overflow, signs, spaces, suffixes and every
 * error string.
 */
#include <config.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy/parse.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

struct num_row {
	const char *s;
	long long min, max;
	long long want;
	const char *err; /* NULL: valid */
};

static const struct num_row num_rows[] = {
	{ "0", 0, 10, 0, NULL },
	{ "10", 0, 10, 10, NULL },
	{ "11", 0, 10, 0, "too large" },
	{ "0", 1, 10, 0, "too small" },
	{ "1", 1, 10, 1, NULL },
	{ "007", 0, 10, 7, NULL },
	{ "65535", 1, 65535, 65535, NULL },
	{ "65536", 1, 65535, 0, "too large" },
	{ "9223372036854775807", 0, LLONG_MAX, LLONG_MAX, NULL },
	{ "9223372036854775808", 0, LLONG_MAX, 0, "invalid" },
	{ "99999999999999999999999", 0, LLONG_MAX, 0, "invalid" },
	{ "-1", -5, 10, 0, "invalid" },
	{ "+1", 0, 10, 0, "invalid" },
	{ " 1", 0, 10, 0, "invalid" },
	{ "1 ", 0, 10, 0, "invalid" },
	{ "1\n", 0, 10, 0, "invalid" },
	{ "", 0, 10, 0, "invalid" },
	{ "0x10", 0, 100, 0, "invalid" },
	{ "1e3", 0, 10000, 0, "invalid" },
	{ "1.5", 0, 10, 0, "invalid" },
	{ "12a", 0, 100, 0, "invalid" },
	{ "a", 0, 10, 0, "invalid" },
	{ NULL, 0, 10, 0, "invalid" },
};

/* Compare a parse result with its row. */
static void
assert_row(const struct num_row *r, long long got, const char *err)
{
	if (r->err == NULL) {
		ck_assert_msg(err == NULL, "'%s': %s", r->s, err);
		ck_assert_int_eq(got, r->want);
	} else {
		ck_assert_msg(err != NULL, "'%s' accepted as %lld", r->s, got);
		ck_assert_str_eq(err, r->err);
		ck_assert_int_eq(got, 0);
	}
}

START_TEST(test_num)
{
	const struct num_row *r = &num_rows[_i];
	const char *err = "unset";
	long long got = parse_num(r->s, r->min, r->max, &err);

	assert_row(r, got, err);
}
END_TEST

static const struct num_row octal_rows[] = {
	{ "0", 0, 0777, 0, NULL },
	{ "600", 0, 0777, 0600, NULL },
	{ "0660", 0, 0777, 0660, NULL },
	{ "777", 0, 0777, 0777, NULL },
	{ "1000", 0, 0777, 0, "too large" },
	{ "8", 0, 0777, 0, "invalid" },
	{ "678", 0, 0777, 0, "invalid" },
	{ "-1", 0, 0777, 0, "invalid" },
	{ " 7", 0, 0777, 0, "invalid" },
	{ "", 0, 0777, 0, "invalid" },
};

START_TEST(test_octal)
{
	const struct num_row *r = &octal_rows[_i];
	const char *err = "unset";
	long long got = parse_octal(r->s, r->min, r->max, &err);

	assert_row(r, got, err);
}
END_TEST

#define G PARSE_GIB
static const struct num_row size_rows[] = {
	{ "0", 0, 100, 0, NULL },
	{ "100", 0, 100, 100, NULL },
	{ "101", 0, 100, 0, "too large" },
	{ "63", 64, 1000, 0, "too small" },
	{ "64", 64, 1000, 64, NULL },
	{ "1K", 0, 1 << 20, 1024, NULL },
	{ "1k", 0, 1 << 20, 1024, NULL },
	{ "3M", 0, G, 3 << 20, NULL },
	{ "3m", 0, G, 3 << 20, NULL },
	{ "1G", 0, G, G, NULL },
	{ "1g", 0, G, G, NULL },
	{ "1024M", 0, G, G, NULL },
	{ "1025M", 0, G, 0, "too large" },
	{ "2G", 0, G, 0, "too large" },
	{ "4K", 4 * 1024, G, 4096, NULL },
	{ "3K", 4 * 1024, G, 0, "too small" },
	{ "0K", 1, G, 0, "too small" },
	{ "8589934591G", 0, LLONG_MAX, 8589934591LL * G, NULL },
	{ "8589934592G", 0, LLONG_MAX, 0, "too large" },
	{ "99999999999999999999G", 0, LLONG_MAX, 0, "invalid" },
	{ "K", 0, G, 0, "invalid" },
	{ "1KB", 0, G, 0, "invalid" },
	{ "1T", 0, G, 0, "invalid" },
	{ "1 K", 0, G, 0, "invalid" },
	{ "1K ", 0, G, 0, "invalid" },
	{ "-1K", 0, G, 0, "invalid" },
	{ "+1K", 0, G, 0, "invalid" },
	{ "1.5K", 0, G, 0, "invalid" },
	{ "", 0, G, 0, "invalid" },
	{ "1234567890123456789012345678901", 0, LLONG_MAX, 0, "invalid" },
};
#undef G

START_TEST(test_size)
{
	const struct num_row *r = &size_rows[_i];
	const char *err = "unset";
	long long got = parse_size(r->s, r->min, r->max, &err);

	assert_row(r, got, err);
}
END_TEST

START_TEST(test_bool_takes_exactly_yes_or_no)
{
	ck_assert_int_eq(parse_bool("yes"), 1);
	ck_assert_int_eq(parse_bool("no"), 0);
	ck_assert_int_eq(parse_bool("Yes"), -1);
	ck_assert_int_eq(parse_bool("YES"), -1);
	ck_assert_int_eq(parse_bool("true"), -1);
	ck_assert_int_eq(parse_bool("1"), -1);
	ck_assert_int_eq(parse_bool("yes "), -1);
	ck_assert_int_eq(parse_bool(""), -1);
}
END_TEST

struct addr_row {
	const char *s;
	const char *host; /* NULL: invalid */
	unsigned short port;
};

static const struct addr_row addr_rows[] = {
	{ "127.0.0.1:9100", "127.0.0.1", 9100 },
	{ "localhost:1", "localhost", 1 },
	{ "h:65535", "h", 65535 },
	{ "[::1]:9100", "::1", 9100 },
	{ "[fe80::1%lo]:80", "fe80::1%lo", 80 },
	{ "h:0", NULL, 0 },
	{ "h:65536", NULL, 0 },
	{ "h:", NULL, 0 },
	{ "h:-1", NULL, 0 },
	{ "h: 80", NULL, 0 },
	{ "h:80 ", NULL, 0 },
	{ ":80", NULL, 0 },
	{ "h", NULL, 0 },
	{ "", NULL, 0 },
	{ "::1:80", NULL, 0 },
	{ "[]:80", NULL, 0 },
	{ "[::1:80", NULL, 0 },
	{ "[::1]x:80", NULL, 0 },
};

START_TEST(test_hostport)
{
	const struct addr_row *r = &addr_rows[_i];
	char *host = NULL;
	unsigned short port = 0;
	int rc = parse_hostport(r->s, &host, &port);

	if (r->host == NULL) {
		ck_assert_msg(rc == -1, "'%s' accepted", r->s);
		ck_assert_ptr_null(host);
		ck_assert_int_eq(
		    parse_hostport(r->s, NULL, NULL), -1); /* validate only */
		return;
	}
	ck_assert_msg(rc == 0, "'%s' refused", r->s);
	ck_assert_str_eq(host, r->host);
	ck_assert_uint_eq(port, r->port);
	ck_assert_int_eq(parse_hostport(r->s, NULL, NULL), 0);
	free(host);
}
END_TEST

/* The parse suite. */
static Suite *
parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("values");

	tcase_add_loop_test(tc, test_num, 0, NROWS(num_rows));
	tcase_add_loop_test(tc, test_octal, 0, NROWS(octal_rows));
	tcase_add_loop_test(tc, test_size, 0, NROWS(size_rows));
	tcase_add_test(tc, test_bool_takes_exactly_yes_or_no);
	tcase_add_loop_test(tc, test_hostport, 0, NROWS(addr_rows));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(parse_suite, NULL, NULL);
