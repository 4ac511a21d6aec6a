/*
 * check_url_fast.c: unit tests for src/robots/url_fast.c. robots_url_fast()
 * must give exactly robots_url_parse()'s origin and path for every URL it
 * takes, and leave every URL outside its grammar to robots_url_parse(). A table
 * of edges says for each URL which of the two splits it and what the result is;
 * then every URL of the benchmark corpus (bench/corpus.tar.xz, urls.txt) is
 * split both ways, and the fast one must take the large majority.
 * robots_url_split() (src/robots/url_split.c), which picks one of the two,
 * is checked against the same table.
 */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "test_main.h"

#define TOPSRCDIR TESTDATADIR "/../.."
#define CORPUS_CMD                                                             \
	"xz -dc '" TOPSRCDIR "/bench/corpus.tar.xz' | tar -xOf - urls.txt"

struct fast_case {
	const char *name;
	const char *url;
	int fast;           /* robots_url_fast() takes it */
	const char *origin; /* robots_url_parse()'s origin, NULL if it fails */
	const char *path;
};

#define L63 "abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abc"
#define L58 "abcdefghij0123456789abcdefghij0123456789abcdefghij01234567"
#define H250 L63 "." L63 "." L63 "." L58

static const struct fast_case cases[] = {
	{ "plain https URL", "https://example.com/a/b?q=1", 1,
	    "https://example.com", "/a/b?q=1" },
	{ "scheme and host lowercased, path case kept",
	    "HTTP://WWW.Example.ORG/Path", 1, "http://www.example.org",
	    "/Path" },
	{ "mixed-case scheme, no path is /", "hTTpS://a.test", 1,
	    "https://a.test", "/" },
	{ "default port of http dropped", "http://a.test:80/x", 1,
	    "http://a.test", "/x" },
	{ "default port of https dropped", "https://a.test:443/", 1,
	    "https://a.test", "/" },
	{ "443 kept for http", "http://a.test:443/", 1, "http://a.test:443",
	    "/" },
	{ "80 kept for https", "https://a.test:80/", 1, "https://a.test:80",
	    "/" },
	{ "highest port, no path", "http://a.test:65535", 1,
	    "http://a.test:65535", "/" },
	{ "one-digit port", "http://a.test:1/", 1, "http://a.test:1", "/" },
	{ "empty query kept", "http://a.test/x?", 1, "http://a.test", "/x?" },
	{ "query is not dot-resolved, may hold '?' and '/'",
	    "http://a.test/x??y/../", 1, "http://a.test", "/x??y/../" },
	{ "empty segments kept", "http://a.test//x//", 1, "http://a.test",
	    "//x//" },
	{ "first label of digits is a name", "https://1111.com.tw/zone/", 1,
	    "https://1111.com.tw", "/zone/" },
	{ "hyphens and digits inside labels", "http://a-b.c0.x-1.test/", 1,
	    "http://a-b.c0.x-1.test", "/" },
	{ "dots inside segments are not dot segments",
	    "http://a.test/..x/.y/x../...", 1, "http://a.test",
	    "/..x/.y/x../..." },
	{ "'@' after the authority is path", "http://a.test/@evil.test", 1,
	    "http://a.test", "/@evil.test" },
	{ "single-label host and port", "http://localhost:8080/", 1,
	    "http://localhost:8080", "/" },
	{ "safe punctuation kept", "http://a.test/~u/;p=1,2!'()+:@&=_-", 1,
	    "http://a.test", "/~u/;p=1,2!'()+:@&=_-" },
	{ "label of 63 octets", "http://" L63 ".test/", 1,
	    "http://" L63 ".test", "/" },
	{ "host of 253 octets", "http://" H250 ".ab/", 1, "http://" H250 ".ab",
	    "/" },
	{ "escape decoded by robots_url_parse()", "https://a.test/%7Eu", 0,
	    "https://a.test", "/~u" },
	{ "dot segment resolved", "https://a.test/a/./b", 0, "https://a.test",
	    "/a/b" },
	{ "final dot-dot segment", "https://a.test/a/..", 0, "https://a.test",
	    "/" },
	{ "'*' and '$' encoded", "https://a.test/a*b$", 0, "https://a.test",
	    "/a%2Ab%24" },
	{ "fragment dropped", "https://a.test/x#frag", 0, "https://a.test",
	    "/x" },
	{ "raw space encoded", "https://a.test/a b", 0, "https://a.test",
	    "/a%20b" },
	{ "non-ASCII path encoded", "https://a.test/\xc3\xbc", 0,
	    "https://a.test", "/%C3%BC" },
	{ "backslash in the path", "http://a.test/a\\b", 0, "http://a.test",
	    "/a\\b" },
	{ "query without a path", "http://a.test?x", 0, "http://a.test",
	    "/?x" },
	{ "IPv4 address", "http://127.0.0.1/", 0, "http://127.0.0.1", "/" },
	{ "IPv4 in hex and two parts", "http://0x7f.1/", 0, "http://127.0.0.1",
	    "/" },
	{ "last label starting with a digit", "http://a.2/", 0, "http://a.2",
	    "/" },
	{ "punycode label", "http://xn--mnchen-3ya.de/", 0,
	    "http://xn--mnchen-3ya.de", "/" },
	{ "uppercase punycode label", "http://XN--MNCHEN-3YA.DE/", 0,
	    "http://xn--mnchen-3ya.de", "/" },
	{ "IDN host", "http://m\xc3\xbcnchen.de/", 0,
	    "http://xn--mnchen-3ya.de", "/" },
	{ "port with a leading zero", "http://a.test:0080/", 0, "http://a.test",
	    "/" },
	{ "empty port", "http://a.test:/", 0, "http://a.test", "/" },
	{ "port 0", "http://a.test:0/", 0, NULL, NULL },
	{ "port past 65535", "http://a.test:65536/", 0, NULL, NULL },
	{ "trailing dot of the host", "http://a.test./", 0, "http://a.test",
	    "/" },
	{ "empty label", "http://a..test/", 0, NULL, NULL },
	{ "label starting with '-'", "http://-a.test/", 0, "http://-a.test",
	    "/" },
	{ "label ending with '-'", "http://a-.test/", 0, "http://a-.test",
	    "/" },
	{ "underscore in the host", "http://a_b.test/", 0, "http://a_b.test",
	    "/" },
	{ "label of 64 octets", "http://" L63 "d.test/", 0,
	    "http://" L63 "d.test", "/" },
	{ "host of 254 octets", "http://" H250 ".abc/", 0, NULL, NULL },
	{ "userinfo", "http://user@a.test/", 0, "http://a.test", "/" },
	{ "IPv6 literal", "http://[::1]/", 0, "http://[::1]", "/" },
	{ "ftp scheme", "ftp://a.test/", 0, "ftp://a.test", "/" },
	{ "no host", "http:///x", 0, NULL, NULL },
	{ "no scheme", "a.test/x", 0, NULL, NULL },
};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* robots_url_fast() and robots_url_parse() on s: both agree when
 * robots_url_fast() takes it. */
static int
split_both(const char *s, size_t len, enum url_err *err, struct url *u)
{
	char *buf = malloc(len + 3);
	struct url_view v;
	int fast;

	ck_assert_ptr_nonnull(buf);
	fast = robots_url_fast(s, len, buf, len + 3, &v);
	*err = robots_url_parse(s, len, u);
	if (fast) {
		ck_assert_msg(*err == URL_OK, "%s: robots_url_parse failed", s);
		ck_assert_str_eq(v.origin, u->origin);
		ck_assert_uint_eq(v.origin_len, strlen(u->origin));
		ck_assert_uint_eq(v.path_len, u->path_len);
		ck_assert_str_eq(v.path, u->path);
	}
	free(buf);
	return fast;
}

START_TEST(test_edge_table)
{
	const struct fast_case *c = &cases[_i];
	enum url_err err;
	struct url u;
	int fast = split_both(c->url, strlen(c->url), &err, &u);

	ck_assert_msg(
	    fast == c->fast, "%s: robots_url_fast gave %d", c->name, fast);
	if (c->origin == NULL) {
		ck_assert_msg(
		    err != URL_OK, "%s: robots_url_parse took it", c->name);
		return;
	}
	ck_assert_msg(err == URL_OK, "%s: robots_url_parse failed", c->name);
	ck_assert_str_eq(u.origin, c->origin);
	ck_assert_str_eq(u.path, c->path);
	robots_url_clear(&u);
}
END_TEST

/*
 * robots_url_split(), the check path's one way in: each edge split by
 * robots_url_fast() when it takes it (on the stack, plain origin), else by
 * robots_url_parse(), with the table's origin and path or robots_url_parse()'s
 * error.
 */
START_TEST(test_split_falls_back_to_url_parse)
{
	const struct fast_case *c = &cases[_i];
	struct robots_url r;
	enum url_err err = robots_url_split(c->url, strlen(c->url), &r);

	if (c->origin == NULL) {
		ck_assert_msg(err != URL_OK, "%s: split took it", c->name);
		return;
	}
	ck_assert_msg(err == URL_OK, "%s: split failed", c->name);
	ck_assert_int_eq(r.parsed, !c->fast);
	ck_assert_int_eq(r.plain, c->fast);
	ck_assert_uint_eq(r.v.origin_len, strlen(c->origin));
	ck_assert_str_eq(r.v.origin, c->origin);
	ck_assert_uint_eq(r.v.path_len, strlen(c->path));
	ck_assert_str_eq(r.v.path, c->path);
	robots_url_split_clear(&r);
	ck_assert_int_eq(r.parsed, 0);
}
END_TEST

/* A URL of the fast shape past ROBOTS_URL_STACK bytes is robots_url_parse()'s.
 */
START_TEST(test_split_long_url_parsed)
{
	static char url[ROBOTS_URL_STACK + 64];
	struct robots_url r;
	size_t n = (size_t)snprintf(url, sizeof(url), "https://a.test/");

	memset(url + n, 'x', sizeof(url) - n - 1);
	url[sizeof(url) - 1] = '\0';
	ck_assert_int_eq(robots_url_split(url, ROBOTS_URL_STACK, &r), URL_OK);
	ck_assert_int_eq(r.parsed, 0);
	robots_url_split_clear(&r);
	ck_assert_int_eq(
	    robots_url_split(url, ROBOTS_URL_STACK + 1, &r), URL_OK);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_str_eq(r.v.origin, "https://a.test");
	ck_assert_uint_eq(r.v.path_len, ROBOTS_URL_STACK + 1 - n + 1);
	robots_url_split_clear(&r);
}
END_TEST

START_TEST(test_buffer_too_small_refused)
{
	static const char s[] = "http://a.test";
	char buf[sizeof(s) + 2];
	struct url_view v;

	ck_assert_int_eq(
	    robots_url_fast(s, sizeof(s) - 1, buf, sizeof(buf) - 1, &v), 0);
	ck_assert_int_eq(
	    robots_url_fast(s, sizeof(s) - 1, buf, sizeof(buf), &v), 1);
	ck_assert_str_eq(v.origin, "http://a.test");
	ck_assert_str_eq(v.path, "/");
}
END_TEST

START_TEST(test_reads_only_len_bytes)
{
	char buf[64];
	struct url_view v;

	ck_assert_int_eq(
	    robots_url_fast("http://a.test/xyz", 15, buf, 64, &v), 1);
	ck_assert_str_eq(v.path, "/x");
	ck_assert_int_eq(
	    robots_url_fast("http://a.test\0/x", 16, buf, 64, &v), 0);
	ck_assert_int_eq(
	    robots_url_fast("http://a.test/\0x", 16, buf, 64, &v), 0);
}
END_TEST

START_TEST(test_corpus_urls_agree)
{
	FILE *f = popen(CORPUS_CMD, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, fast = 0;
	ssize_t len;
	enum url_err err;
	struct url u;

	ck_assert_ptr_nonnull(f);
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		n++;
		fast += (size_t)split_both(line, (size_t)len, &err, &u);
		if (err == URL_OK)
			robots_url_clear(&u);
	}
	free(line);
	ck_assert_int_eq(pclose(f), 0);
	printf("url_fast: %zu of %zu corpus URLs\n", fast, n);
	ck_assert_uint_ge(n, 20000);
	ck_assert_uint_ge(fast * 100, n * 95);
}
END_TEST

static Suite *
url_fast_suite(void)
{
	Suite *s = suite_create("url_fast");
	TCase *tc = tcase_create("url_fast");

	tcase_add_loop_test(tc, test_edge_table, 0, NELEM(cases));
	tcase_add_loop_test(
	    tc, test_split_falls_back_to_url_parse, 0, NELEM(cases));
	tcase_add_test(tc, test_split_long_url_parsed);
	tcase_add_test(tc, test_buffer_too_small_refused);
	tcase_add_test(tc, test_reads_only_len_bytes);
	tcase_add_test(tc, test_corpus_urls_agree);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(url_fast_suite, NULL, NULL);
