/*
 * check_metrics.c: the metrics port's Host rule (metrics_host_ok()), one
 * table after RFC 9112 3.2 (an HTTP/1.1 request needs one Host field, no
 * request may carry two or an invalid one) and the grammar of its value,
 * uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2, 3.2.3).
 */
#include <config.h>

#include <stddef.h>

#include <check.h>

#include "conn/metrics.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

struct host_row {
	int http11;
	size_t n;         /* Host field lines */
	const char *host; /* the first one's value (after "Host:") */
	int ok;           /* else 400 */
};

static const struct host_row host_rows[] = {
	/* how many: one for HTTP/1.1, at most one for any request */
	{ 1, 0, NULL, 0 },
	{ 0, 0, NULL, 1 },
	{ 1, 1, "x", 1 },
	{ 0, 1, "x", 1 },
	{ 1, 2, "x", 0 },
	{ 0, 2, "x", 0 },
	{ 1, 3, "x", 0 },
	/* empty: what a client sends when the target has no authority */
	{ 1, 1, "", 1 },
	{ 1, 1, " \t", 1 },
	/* reg-name, IPv4, optional port (*DIGIT, so possibly empty) */
	{ 1, 1, "metrics.example", 1 },
	{ 1, 1, "metrics.example:9100", 1 },
	{ 1, 1, "127.0.0.1:9100", 1 },
	{ 1, 1, "Host-1_a~b", 1 },
	{ 1, 1, "x:", 1 },
	{ 1, 1, ":9100", 1 },
	{ 1, 1, "a!$&'()*+,;=b", 1 },
	{ 1, 1, "x%2Ey", 1 },
	{ 1, 1, "x \t", 1 }, /* whitespace around the value is no part of it */
	{ 1, 1, "x%2", 0 },
	{ 1, 1, "x%", 0 },
	{ 1, 1, "x%zz", 0 },
	{ 1, 1, "x:port", 0 },
	{ 1, 1, "x:9100:9101", 0 },
	{ 1, 1, "x:-1", 0 },
	{ 1, 1, "a b", 0 },
	{ 1, 1, "x/y", 0 },
	{ 1, 1, "user@x", 0 }, /* userinfo is never sent in Host */
	{ 1, 1, "http://x", 0 },
	{ 1, 1, "x\"y", 0 },
	{ 1, 1, "\xc3\xa9.example", 0 },
	{ 0, 1, "a b", 0 }, /* invalid in any version */
	/* IP-literal: IPv6 or IPvFuture in brackets */
	{ 1, 1, "[::1]", 1 },
	{ 1, 1, "[::1]:9100", 1 },
	{ 1, 1, "[2001:db8::ffff:192.0.2.1]:1", 1 },
	{ 1, 1, "[v1.fe80::a+en1]", 1 },
	{ 1, 1, "[V7.x]:80", 1 },
	{ 1, 1, "::1", 0 },
	{ 1, 1, "[::1", 0 },
	{ 1, 1, "[]", 0 },
	{ 1, 1, "[x]", 0 },
	{ 1, 1, "[1.2.3.4]", 0 },
	{ 1, 1, "[::1]x", 0 },
	{ 1, 1, "[::1]:x", 0 },
	{ 1, 1, "[::1%25eth0]", 0 }, /* a zone is not in uri-host */
	{ 1, 1, "[v1]", 0 },
	{ 1, 1, "[v.x]", 0 },
	{ 1, 1, "[v1.]", 0 },
	{ 1, 1, "[v1.a/b]", 0 },
};

START_TEST(test_host)
{
	const struct host_row *r = &host_rows[_i];

	ck_assert_msg(metrics_host_ok(r->http11, r->n, r->host) == r->ok,
	    "HTTP/1.%d, %zu Host, \"%s\": want %s", r->http11, r->n,
	    r->host != NULL ? r->host : "(none)", r->ok ? "served" : "400");
}
END_TEST

/* The metrics suite. */
static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("host");

	tcase_add_loop_test(tc, test_host, 0, NROWS(host_rows));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(metrics_suite, NULL, NULL);
