/*
 * check_url.c: unit tests for src/robots/url.c: origin keys, match paths,
 * robots_path_normalize(), robots_url_origin(), robots_url_robots_txt() and the
 * errors. Expected values come from RFC 3986 (sections 3, 5.2.4, 5.4, 6.2), RFC
 * 9309 section 2.2.2, UTS #46 / IDNA2008 and the contract's Policy section;
 * each table row names the rule it checks, and failures print that name.
 */
#include <config.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "test_main.h"

struct parse_case {
	const char *name;
	const char *url;
	enum url_err err;
	const char *origin; /* NULL: not checked */
	const char *path;   /* NULL: not checked */
};

/* Origin keys: scheme, host and port. */
static const struct parse_case origin_cases[] = {
	{ "contract example: case folded, :443 and fragment dropped",
	    "https://Example.COM:443/a/b?q=1#frag", URL_OK,
	    "https://example.com", "/a/b?q=1" },
	{ "scheme is lowercased", "HTTP://example.com/", URL_OK,
	    "http://example.com", "/" },
	{ "host is lowercased, path case kept", "http://WWW.Example.Org/Path",
	    URL_OK, "http://www.example.org", "/Path" },
	{ "explicit default port 80 of http dropped", "http://example.com:80/x",
	    URL_OK, "http://example.com", "/x" },
	{ "explicit default port 443 of https dropped",
	    "https://example.com:443", URL_OK, "https://example.com", "/" },
	{ "explicit default port 21 of ftp dropped",
	    "ftp://ftp.example.com:21/pub/", URL_OK, "ftp://ftp.example.com",
	    "/pub/" },
	{ "443 is not the default of http", "http://example.com:443/", URL_OK,
	    "http://example.com:443", "/" },
	{ "80 is not the default of https", "https://example.com:80/", URL_OK,
	    "https://example.com:80", "/" },
	{ "non-default port kept", "http://example.com:8080/", URL_OK,
	    "http://example.com:8080", "/" },
	{ "highest port 65535 kept", "http://example.com:65535/", URL_OK,
	    "http://example.com:65535", "/" },
	{ "port with leading zeros is its number (RFC 3986 6.2.3)",
	    "http://example.com:0080/", URL_OK, "http://example.com", "/" },
	{ "empty port means the default (RFC 3986 6.2.3)",
	    "http://example.com:/", URL_OK, "http://example.com", "/" },
	{ "userinfo dropped", "https://user:pass@example.com/x", URL_OK,
	    "https://example.com", "/x" },
	{ "user without password dropped", "ftp://anonymous@ftp.example.com/",
	    URL_OK, "ftp://ftp.example.com", "/" },
	{ "%5C in the userinfo stays userinfo (WHATWG agrees)",
	    "http://a.test%5C@evil.test/p", URL_OK, "http://evil.test", "/p" },
	{ "%40 in the userinfo stays userinfo (RFC 3986 3.2.1)",
	    "ftp://user%40example.org:pw@ftp.example.com/", URL_OK,
	    "ftp://ftp.example.com", "/" },
	{ "backslash after the authority is path, not userinfo",
	    "http://a.test/x\\@evil.test", URL_OK, "http://a.test", NULL },
	{ "@ after the authority is path, not userinfo",
	    "http://a.test/@evil.test", URL_OK, "http://a.test",
	    "/@evil.test" },
	{ "trailing dot of the host dropped", "http://example.com./a", URL_OK,
	    "http://example.com", "/a" },
	{ "IDN host to punycode", "http://münchen.de/", URL_OK,
	    "http://xn--mnchen-3ya.de", "/" },
	{ "uppercase IDN host mapped to lowercase first (UTS #46)",
	    "http://MÜNCHEN.DE/", URL_OK, "http://xn--mnchen-3ya.de", "/" },
	{ "percent-encoded UTF-8 host decoded then IDN (RFC 3986 3.2.2)",
	    "http://m%C3%BCnchen.de/", URL_OK, "http://xn--mnchen-3ya.de",
	    "/" },
	{ "uppercase punycode host lowercased", "http://XN--MNCHEN-3YA.DE/",
	    URL_OK, "http://xn--mnchen-3ya.de", "/" },
	{ "IDNA2008 non-transitional keeps sharp s", "http://faß.de/", URL_OK,
	    "http://xn--fa-hia.de", "/" },
	{ "fullwidth letters mapped (UTS #46)", "http://ｅｘａｍｐｌｅ.com/",
	    URL_OK, "http://example.com", "/" },
	{ "IDN host with port and trailing dot",
	    "https://Bücher.example.:8443/", URL_OK,
	    "https://xn--bcher-kva.example:8443", "/" },
	{ "IPv6 literal in canonical form (RFC 5952)",
	    "http://[2001:DB8:0:0:0:0:0:1]:8080/", URL_OK,
	    "http://[2001:db8::1]:8080", "/" },
	{ "IPv6 longest zero run compressed (RFC 5952 4.2.3)",
	    "https://[2001:db8:0:0:1:0:0:1]/", URL_OK,
	    "https://[2001:db8::1:0:0:1]", "/" },
	{ "IPv6 with default port dropped", "http://[::1]:80/x", URL_OK,
	    "http://[::1]", "/x" },
	{ "IPv4 with port", "http://192.0.2.1:8080/a", URL_OK,
	    "http://192.0.2.1:8080", "/a" },
	{ "IPv4 shorthand read as an address (WHATWG URL)", "http://0x7f.1/",
	    URL_OK, "http://127.0.0.1", "/" },
	{ "IPv4 with a trailing dot read the same", "http://0x7f.1./", URL_OK,
	    "http://127.0.0.1", "/" },
	{ "IPv4 shorthand with an encoded dot read the same",
	    "http://0x7f%2E1/", URL_OK, "http://127.0.0.1", "/" },
	{ "underscore allowed in a host name", "https://my_host.example.com/",
	    URL_OK, "https://my_host.example.com", "/" },
};

/* Match paths: path + query, dot segments, percent-encoding. */
static const struct parse_case path_cases[] = {
	{ "empty path is /", "http://example.com", URL_OK, NULL, "/" },
	{ "query after an empty path", "http://example.com?a=b", URL_OK, NULL,
	    "/?a=b" },
	{ "empty query kept as '?' (Google GetPathParamsQuery)",
	    "http://example.com/x?", URL_OK, NULL, "/x?" },
	{ "fragment dropped", "http://example.com/x#frag", URL_OK, NULL, "/x" },
	{ "empty fragment dropped", "http://example.com/x#", URL_OK, NULL,
	    "/x" },
	{ "fragment after a query dropped, '?' in it too",
	    "http://example.com/p?q=1#f?x=2", URL_OK, NULL, "/p?q=1" },
	{ "URL in a query kept (Google GetPathParamsQuery)",
	    "http://www.example.com/a/b?c=http://d.e/", URL_OK, NULL,
	    "/a/b?c=http://d.e/" },
	{ "RFC 3986 5.2.4 example /a/b/c/./../../g", "http://a/a/b/c/./../../g",
	    URL_OK, NULL, "/a/g" },
	{ "RFC 3986 5.2.4 example mid/content=5/../6",
	    "http://a/mid/content=5/../6", URL_OK, NULL, "/mid/6" },
	{ "RFC 3986 5.4.2: more .. than segments stops at the root",
	    "http://a/b/c/../../../g", URL_OK, NULL, "/g" },
	{ "RFC 3986 5.4.2: /./g", "http://a/./g", URL_OK, NULL, "/g" },
	{ "RFC 3986 5.4.2: /../g", "http://a/../g", URL_OK, NULL, "/g" },
	{ "RFC 3986 5.4.2: g. .g g.. ..g are not dot segments",
	    "http://a/b/g./.g/g../..g", URL_OK, NULL, "/b/g./.g/g../..g" },
	{ "RFC 3986 5.4.2: ./g/. keeps a trailing slash", "http://a/b/c/./g/.",
	    URL_OK, NULL, "/b/c/g/" },
	{ "RFC 3986 5.4.2: g;x=1/../y", "http://a/b/c/g;x=1/../y", URL_OK, NULL,
	    "/b/c/y" },
	{ "RFC 3986 5.4.2: dot segments in the query are left alone",
	    "http://a/b/c/g?y/./x", URL_OK, NULL, "/b/c/g?y/./x" },
	{ "RFC 3986 5.4.2: dot segments in the fragment are dropped with it",
	    "http://a/b/c/g#s/../x", URL_OK, NULL, "/b/c/g" },
	{ "trailing .. leaves a directory", "http://a/a/b/..", URL_OK, NULL,
	    "/a/" },
	{ "/a/.. is the root", "http://a/a/..", URL_OK, NULL, "/" },
	{ "encoded dots are dot segments (RFC 3986 6.2.2.2)",
	    "http://a/a/%2e%2E/b", URL_OK, NULL, "/b" },
	{ "half-encoded .%2e is a dot segment", "http://a/x/a/.%2e/b", URL_OK,
	    NULL, "/x/b" },
	{ "// kept as is", "http://example.com//a//b/", URL_OK, NULL,
	    "//a//b/" },
	{ ".. removes an empty segment of //", "http://a/a//../b", URL_OK, NULL,
	    "/a/b" },
	{ "%7E decoded to ~", "http://example.com/%7Euser", URL_OK, NULL,
	    "/~user" },
	{ "RFC 9309 2.2.2: %62%61%7A is baz", "http://a/foo/bar/%62%61%7A",
	    URL_OK, NULL, "/foo/bar/baz" },
	{ "lowercase hex of an escape upper-cased", "http://a/%e3%83%84",
	    URL_OK, NULL, "/%E3%83%84" },
	{ "RFC 9309 2.2.2: raw UTF-8 percent-encoded", "http://a/foo/bar/ツ",
	    URL_OK, NULL, "/foo/bar/%E3%83%84" },
	{ "%2f upper-cased, not decoded to /", "http://a/a%2fb", URL_OK, NULL,
	    "/a%2Fb" },
	{ "..%2F is not a dot segment", "http://a/a/..%2Fb", URL_OK, NULL,
	    "/a/..%2Fb" },
	{ "literal * and $ in a path become %2A and %24", "http://a/a*b$",
	    URL_OK, NULL, "/a%2Ab%24" },
	{ "%2a stays encoded as %2A", "http://a/a%2ab", URL_OK, NULL,
	    "/a%2Ab" },
	{ "space in the path encoded as %20", "http://a/my doc", URL_OK, NULL,
	    "/my%20doc" },
	{ "space in the query is %20, not +", "http://a/s?q=a b", URL_OK, NULL,
	    "/s?q=a%20b" },
	{ "+ in the query kept", "http://a/s?a=1+2", URL_OK, NULL, "/s?a=1+2" },
	{ "lone % encoded as %25", "http://a/100%", URL_OK, NULL, "/100%25" },
	{ "% without two hex digits encoded as %25", "http://a/%zz", URL_OK,
	    NULL, "/%25zz" },
	{ "raw non-UTF-8 octets percent-encoded", "http://a/\xff\xfe", URL_OK,
	    NULL, "/%FF%FE" },
	{ "sub-delims and : @ kept", "http://a/a;b=c:d@e!f,g", URL_OK, NULL,
	    "/a;b=c:d@e!f,g" },
	{ "%00 stays encoded", "http://a/%00", URL_OK, NULL, "/%00" },
	{ "query escapes normalized too", "http://a/s?q=%7e%2f%c3%a4", URL_OK,
	    NULL, "/s?q=~%2F%C3%A4" },
};

/* What is not a usable absolute http/https/ftp URL. */
static const struct parse_case error_cases[] = {
	{ "mailto is unsupported", "mailto:a@example.com",
	    URL_UNSUPPORTED_SCHEME, NULL, NULL },
	{ "file is unsupported", "file:///etc/passwd", URL_UNSUPPORTED_SCHEME,
	    NULL, NULL },
	{ "javascript is unsupported", "javascript:alert(1)",
	    URL_UNSUPPORTED_SCHEME, NULL, NULL },
	{ "data is unsupported", "data:text/plain,x", URL_UNSUPPORTED_SCHEME,
	    NULL, NULL },
	{ "gopher is unsupported", "gopher://example.com/",
	    URL_UNSUPPORTED_SCHEME, NULL, NULL },
	{ "ws is unsupported", "ws://example.com/", URL_UNSUPPORTED_SCHEME,
	    NULL, NULL },
	{ "a relative path is bad", "/a/b", URL_BAD, NULL, NULL },
	{ "a host without scheme is bad", "example.com/x", URL_BAD, NULL,
	    NULL },
	{ "host:port without scheme is bad", "example.com:8080/x", URL_BAD,
	    NULL, NULL },
	{ "empty string is bad", "", URL_BAD, NULL, NULL },
	{ "scheme only is bad", "http://", URL_BAD, NULL, NULL },
	{ "empty authority is bad", "http:///x", URL_BAD, NULL, NULL },
	{ "one slash is bad", "http:/x", URL_BAD, NULL, NULL },
	{ "no slashes is bad", "http:x", URL_BAD, NULL, NULL },
	{ "query without host is bad", "http://?q", URL_BAD, NULL, NULL },
	{ "userinfo without host is bad", "http://user@/x", URL_BAD, NULL,
	    NULL },
	{ "port without host is bad", "http://:80/", URL_BAD, NULL, NULL },
	{ "port 0 is bad", "http://example.com:0/", URL_BAD, NULL, NULL },
	{ "port 65536 is bad", "http://example.com:65536/", URL_BAD, NULL,
	    NULL },
	{ "non-numeric port is bad", "http://example.com:http/", URL_BAD, NULL,
	    NULL },
	{ "space in the host is bad", "http://exa mple.com/", URL_BAD, NULL,
	    NULL },
	{ "% decoded into the host is bad", "http://a%25b.example/", URL_BAD,
	    NULL, NULL },
	{ "host of only a dot is bad", "http://./", URL_BAD, NULL, NULL },
	{ "empty label in the host is bad", "http://a..b/", URL_BAD, NULL,
	    NULL },
	{ "two trailing dots are bad", "http://a../", URL_BAD, NULL, NULL },
	{ "IDNA2008 disallowed symbol is bad", "http://☃.net/", URL_BAD, NULL,
	    NULL },
	{ "invalid UTF-8 host is bad", "http://\xff.example/", URL_BAD, NULL,
	    NULL },
	{ "IPv6 zone id is bad", "http://[fe80::1%25eth0]/", URL_BAD, NULL,
	    NULL },
	{ "unclosed IPv6 bracket is bad", "http://[::1/", URL_BAD, NULL, NULL },
	{ "IPv4 in brackets is bad (RFC 3986 3.2.2)", "http://[192.0.2.1]/",
	    URL_BAD, NULL, NULL },
	{ "tab in the path is bad", "http://a/a\tb", URL_BAD, NULL, NULL },
	{ "leading space is bad (nothing is trimmed)", " http://a/", URL_BAD,
	    NULL, NULL },
	{ "backslashes are bad", "http:\\\\example.com\\", URL_BAD, NULL,
	    NULL },
	{ "colons only are bad", "::::", URL_BAD, NULL, NULL },
	/* WHATWG URL Standard, authority state: for special schemes '\\' ends
	 * the host; curl reads it as userinfo: the parsers would disagree. */
	{ "backslash before @ in the authority is bad",
	    "http://a.test\\@evil.test/p", URL_BAD, NULL, NULL },
	{ "backslash in the userinfo is bad", "https://user\\@a.test/", URL_BAD,
	    NULL, NULL },
	{ "backslash in an ftp authority is bad", "ftp://a.test\\@evil.test/",
	    URL_BAD, NULL, NULL },
	{ "backslash ending the host is bad", "http://a.test\\x", URL_BAD, NULL,
	    NULL },
	{ "two @ in the authority are bad (first or last?)",
	    "http://a.test@b@evil.test/", URL_BAD, NULL, NULL },
	{ "tab in the userinfo is bad (WHATWG strips it)",
	    "http://a.te\tst@evil.test/", URL_BAD, NULL, NULL },
	{ "tab in the host is bad (WHATWG strips it)", "http://a.te\tst/",
	    URL_BAD, NULL, NULL },
	{ "newline in the authority is bad", "http://a.test\n@evil.test/",
	    URL_BAD, NULL, NULL },
	{ "%5C decoded into the host is bad", "http://a.test%5Cevil.test/",
	    URL_BAD, NULL, NULL },
	{ "%40 decoded into the host is bad", "http://a.test%40evil.test/",
	    URL_BAD, NULL, NULL },
	{ "fullwidth @ mapped into the host is bad (UTS #46)",
	    "http://a.test\xef\xbc\xa0"
	    "evil.test/",
	    URL_BAD, NULL, NULL },
};

/* The name of an error, for messages. */
static const char *
err_name(enum url_err err)
{
	switch (err) {
	case URL_OK:
		return "URL_OK";
	case URL_BAD:
		return "URL_BAD";
	case URL_UNSUPPORTED_SCHEME:
		return "URL_UNSUPPORTED_SCHEME";
	case URL_NOMEM:
		return "URL_NOMEM";
	}
	return "?";
}

/* Run one table row through robots_url_parse() and compare what it names. */
static void
check_parse_case(const struct parse_case *c)
{
	struct url u;
	enum url_err err = robots_url_parse(c->url, strlen(c->url), &u);

	ck_assert_msg(err == c->err,
	    "%s: robots_url_parse(\"%s\") is %s, want %s", c->name, c->url,
	    err_name(err), err_name(c->err));
	if (err != URL_OK) {
		ck_assert_msg(u.origin == NULL && u.path == NULL &&
		                  u.host == NULL && u.scheme == NULL,
		    "%s: failed robots_url_parse left fields set", c->name);
		return;
	}
	if (c->origin != NULL)
		ck_assert_msg(strcmp(u.origin, c->origin) == 0,
		    "%s: origin of \"%s\" is \"%s\", want \"%s\"", c->name,
		    c->url, u.origin, c->origin);
	ck_assert_msg(u.path[u.path_len] == '\0' && u.path[0] == '/',
	    "%s: path \"%s\" not '/'-led and NUL-terminated", c->name, u.path);
	if (c->path != NULL)
		ck_assert_msg(u.path_len == strlen(c->path) &&
		                  memcmp(u.path, c->path, u.path_len) == 0,
		    "%s: path of \"%s\" is \"%s\", want \"%s\"", c->name,
		    c->url, u.path, c->path);
	robots_url_clear(&u);
}

START_TEST(test_origin_key_normalized)
{
	check_parse_case(&origin_cases[_i]);
}
END_TEST

START_TEST(test_match_path_normalized)
{
	check_parse_case(&path_cases[_i]);
}
END_TEST

START_TEST(test_bad_and_unsupported_urls_rejected)
{
	check_parse_case(&error_cases[_i]);
}
END_TEST

/* A match path normalized again is unchanged. */
START_TEST(test_match_path_renormalizes_to_itself)
{
	const struct parse_case *c = &path_cases[_i];
	struct url u;
	char *again;
	size_t len;

	ck_assert_int_eq(robots_url_parse(c->url, strlen(c->url), &u), URL_OK);
	again = robots_path_normalize(u.path, u.path_len, &len);
	ck_assert_ptr_nonnull(again);
	ck_assert_msg(len == u.path_len && memcmp(again, u.path, len) == 0,
	    "%s: \"%s\" renormalized to \"%s\"", c->name, u.path, again);
	free(again);
	robots_url_clear(&u);
}
END_TEST

START_TEST(test_parse_fills_scheme_host_port)
{
	struct url u;
	const char *s = "HTTPS://user@Example.COM.:8443/x";

	ck_assert_int_eq(robots_url_parse(s, strlen(s), &u), URL_OK);
	ck_assert_str_eq(u.scheme, "https");
	ck_assert_str_eq(u.host, "example.com");
	ck_assert_int_eq(u.port, 8443);
	robots_url_clear(&u);
	s = "https://example.com:443/";
	ck_assert_int_eq(robots_url_parse(s, strlen(s), &u), URL_OK);
	ck_assert_int_eq(u.port, 0);
	robots_url_clear(&u);
	s = "http://[::1]:8080/";
	ck_assert_int_eq(robots_url_parse(s, strlen(s), &u), URL_OK);
	ck_assert_str_eq(u.host, "[::1]");
	ck_assert_int_eq(u.port, 8080);
	robots_url_clear(&u);
}
END_TEST

START_TEST(test_parse_reads_only_len_bytes)
{
	const char *s = "http://example.com/abc?q#f";
	struct url u;

	ck_assert_int_eq(
	    robots_url_parse(s, strlen("http://example.com/ab"), &u), URL_OK);
	ck_assert_str_eq(u.path, "/ab");
	ck_assert_uint_eq(u.path_len, 3);
	robots_url_clear(&u);
}
END_TEST

START_TEST(test_parse_rejects_embedded_nul)
{
	static const char s[] = "http://example.com/a\0b";
	struct url u;

	ck_assert_int_eq(robots_url_parse(s, sizeof(s) - 1, &u), URL_BAD);
}
END_TEST

/* Build "http://example.com/aaa..." of exactly len bytes. */
static char *
long_url(size_t len)
{
	static const char prefix[] = "http://example.com/";
	char *s = malloc(len);

	ck_assert_ptr_nonnull(s);
	memcpy(s, prefix, sizeof(prefix) - 1);
	memset(s + sizeof(prefix) - 1, 'a', len - (sizeof(prefix) - 1));
	return s;
}

START_TEST(test_url_of_max_len_accepted_longer_rejected)
{
	char *s = long_url(URL_MAX_LEN + 1);
	struct url u;

	ck_assert_int_eq(robots_url_parse(s, URL_MAX_LEN, &u), URL_OK);
	ck_assert_uint_eq(
	    u.path_len, URL_MAX_LEN - strlen("http://example.com"));
	robots_url_clear(&u);
	ck_assert_int_eq(robots_url_parse(s, URL_MAX_LEN + 1, &u), URL_BAD);
	free(s);
}
END_TEST

START_TEST(test_url_clear_is_idempotent)
{
	struct url u;

	ck_assert_int_eq(robots_url_parse("http://a/", 9, &u), URL_OK);
	robots_url_clear(&u);
	ck_assert_ptr_null(u.origin);
	ck_assert_ptr_null(u.path);
	robots_url_clear(&u);
	robots_url_clear(NULL);
}
END_TEST

/* Raw UTF-8 in a URL is the same bytes as a pattern's percent-encoded form. */
START_TEST(test_raw_utf8_path_equals_encoded_pattern)
{
	static const char pattern[] = "/caf%c3%a9/%E3%83%84";
	char norm[3 * sizeof(pattern)];
	size_t n = robots_pct_normalize(pattern, sizeof(pattern) - 1, norm, 1);
	struct url u;

	ck_assert_int_eq(robots_url_parse("http://a/café/ツ",
	                     strlen("http://a/café/ツ"), &u),
	    URL_OK);
	ck_assert_uint_eq(u.path_len, n);
	ck_assert(memcmp(u.path, norm, n) == 0);
	robots_url_clear(&u);
}
END_TEST

struct norm_case {
	const char *name;
	const char *in;
	const char *out;
};

static const struct norm_case norm_cases[] = {
	{ "empty path is /", "", "/" },
	{ "bare query gets a leading /", "?a=b", "/?a=b" },
	{ "relative path gets a leading /", "a/b", "/a/b" },
	{ "dot segments resolved, query untouched", "/a/../b?x/../y",
	    "/b?x/../y" },
	{ "fragment dropped as url_parse does", "/a?b#c/../d", "/a?b" },
	{ "escapes and wildcard octets normalized", "/%7e*$%2f",
	    "/~%2A%24%2F" },
	{ "non-ASCII and space encoded", "/é x", "/%C3%A9%20x" },
	{ "encoded dot-dot resolved", "/a/b/%2E%2E", "/a/" },
	{ "only dots", "/./..", "/" },
};

START_TEST(test_path_normalize_table)
{
	const struct norm_case *c = &norm_cases[_i];
	size_t len = 99;
	char *out = robots_path_normalize(c->in, strlen(c->in), &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_msg(len == strlen(c->out) && strcmp(out, c->out) == 0,
	    "%s: robots_path_normalize(\"%s\") is \"%s\" (len %zu), want "
	    "\"%s\"",
	    c->name, c->in, out, len, c->out);
	free(out);
}
END_TEST

/*
 * A hex digit's value (RFC 3986 2.1: HEXDIG, either case): the edges of
 * each range and the octets beside them, then every octet, of which only
 * the 22 digits have a value.
 */
START_TEST(test_hexval_table)
{
	static const struct {
		unsigned char c;
		int want;
	} cases[] = { { '0', 0 }, { '9', 9 }, { 'a', 10 }, { 'f', 15 },
		{ 'A', 10 }, { 'F', 15 }, { 'c', 12 }, { 'D', 13 }, { '/', -1 },
		{ ':', -1 }, { '@', -1 }, { 'G', -1 }, { '`', -1 }, { 'g', -1 },
		{ ' ', -1 }, { '%', -1 }, { 0, -1 }, { 0xc1, -1 }, { 0xe6, -1 },
		{ 0xff, -1 } };
	size_t i, digits = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(robots_hexval(cases[i].c) == cases[i].want,
		    "robots_hexval(0x%02x) is %d, want %d", cases[i].c,
		    robots_hexval(cases[i].c), cases[i].want);
	for (i = 0; i < 256; i++)
		if (robots_hexval((unsigned char)i) >= 0) {
			ck_assert_ptr_nonnull(
			    memchr("0123456789abcdefABCDEF", (int)i, 22));
			digits++;
		}
	ck_assert_uint_eq(digits, 22);
}
END_TEST

struct origin_case {
	const char *name;
	const char *in;
	enum url_err err;
	const char *origin;
};

static const struct origin_case url_origin_cases[] = {
	{ "bare host means https", "Example.COM", URL_OK,
	    "https://example.com" },
	{ "bare host with :443 drops it", "example.com:443", URL_OK,
	    "https://example.com" },
	{ "bare host with a port keeps it", "example.com:8080", URL_OK,
	    "https://example.com:8080" },
	{ "bare IPv6 host with port", "[::1]:8443", URL_OK,
	    "https://[::1]:8443" },
	{ "bare IDN host", "münchen.de", URL_OK, "https://xn--mnchen-3ya.de" },
	{ "bare host with trailing dot", "example.com.", URL_OK,
	    "https://example.com" },
	{ "full URL reduced to its origin", "http://Example.com:80/x?y#z",
	    URL_OK, "http://example.com" },
	{ "an origin key is its own origin", "https://example.com", URL_OK,
	    "https://example.com" },
	{ "ftp origin", "FTP://Example.COM:21", URL_OK, "ftp://example.com" },
	{ "host with a path is bad", "example.com/x", URL_BAD, NULL },
	{ "path only is bad", "/a", URL_BAD, NULL },
	{ "empty is bad", "", URL_BAD, NULL },
	{ "bare userinfo@host is bad", "user@example.com", URL_BAD, NULL },
	{ "backslash before @ is bad in a full URL too",
	    "http://a.test\\@evil.test", URL_BAD, NULL },
	{ "bare host with a backslash is bad", "a.test\\evil.test", URL_BAD,
	    NULL },
	{ "bare host port 0 is bad", "example.com:0", URL_BAD, NULL },
	{ "mailto is unsupported", "mailto:x@example.com",
	    URL_UNSUPPORTED_SCHEME, NULL },
	{ "gopher is unsupported", "gopher://example.com",
	    URL_UNSUPPORTED_SCHEME, NULL },
};

START_TEST(test_url_origin_table)
{
	const struct origin_case *c = &url_origin_cases[_i];
	enum url_err err = URL_NOMEM;
	char *o = robots_url_origin(c->in, strlen(c->in), &err);

	ck_assert_msg(err == c->err,
	    "%s: robots_url_origin(\"%s\") is %s, want %s", c->name, c->in,
	    err_name(err), err_name(c->err));
	if (c->origin == NULL)
		ck_assert_ptr_null(o);
	else
		ck_assert_msg(o != NULL && strcmp(o, c->origin) == 0,
		    "%s: robots_url_origin(\"%s\") is \"%s\", want \"%s\"",
		    c->name, c->in, o ? o : "(null)", c->origin);
	free(o);
}
END_TEST

START_TEST(test_robots_txt_url_appends_path)
{
	char *s = robots_url_robots_txt("https://example.com");

	ck_assert_str_eq(s, "https://example.com/robots.txt");
	free(s);
	s = robots_url_robots_txt("http://[::1]:8080");
	ck_assert_str_eq(s, "http://[::1]:8080/robots.txt");
	free(s);
	ck_assert_ptr_null(robots_url_robots_txt(NULL));
}
END_TEST

START_TEST(test_err_messages_are_distinct_text)
{
	const char *bad = robots_url_err_message(URL_BAD);
	const char *scheme = robots_url_err_message(URL_UNSUPPORTED_SCHEME);
	const char *nomem = robots_url_err_message(URL_NOMEM);

	ck_assert(bad[0] != '\0' && scheme[0] != '\0' && nomem[0] != '\0');
	ck_assert_str_ne(bad, scheme);
	ck_assert_str_ne(bad, nomem);
	ck_assert_ptr_nonnull(strstr(scheme, "scheme"));
}
END_TEST

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* All tests of this file. */
static Suite *
url_suite(void)
{
	Suite *s = suite_create("url");
	TCase *tc;

	tc = tcase_create("origin");
	tcase_add_loop_test(
	    tc, test_origin_key_normalized, 0, NELEM(origin_cases));
	tcase_add_test(tc, test_parse_fills_scheme_host_port);
	tcase_add_loop_test(
	    tc, test_url_origin_table, 0, NELEM(url_origin_cases));
	tcase_add_test(tc, test_robots_txt_url_appends_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("path");
	tcase_add_loop_test(
	    tc, test_match_path_normalized, 0, NELEM(path_cases));
	tcase_add_loop_test(
	    tc, test_match_path_renormalizes_to_itself, 0, NELEM(path_cases));
	tcase_add_loop_test(
	    tc, test_path_normalize_table, 0, NELEM(norm_cases));
	tcase_add_test(tc, test_raw_utf8_path_equals_encoded_pattern);
	tcase_add_test(tc, test_hexval_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(
	    tc, test_bad_and_unsupported_urls_rejected, 0, NELEM(error_cases));
	tcase_add_test(tc, test_parse_reads_only_len_bytes);
	tcase_add_test(tc, test_parse_rejects_embedded_nul);
	tcase_add_test(tc, test_url_of_max_len_accepted_longer_rejected);
	tcase_add_test(tc, test_url_clear_is_idempotent);
	tcase_add_test(tc, test_err_messages_are_distinct_text);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(url_suite, NULL, NULL);
