/*
 * url.c: URL normalization for librobots. Owns the origin key (the cache
 * key: lowercase scheme, host as punycode, non-default port) and the match
 * path (path + query, dot segments resolved, percent-encoding normalized by
 * robots_pct_normalize()) that robots_check() compares patterns against.
 *
 * libcurl's URL API splits the URL; libidn2 maps IDN hosts to punycode
 * (UTS #46, non-transitional). curl 7.88 quirks handled here, each tested
 * in tests/unit/check_url.c:
 * - it reads "http:/x" and "http:///x" as host "x": we require "scheme://"
 *   and a non-empty authority before handing the URL to curl;
 * - it percent-decodes the host, even "a%25b" into "a%b": the decoded host
 *   is checked against letters, digits, '-', '.' and '_';
 * - it accepts port 0, and removes dot segments only when written as raw
 *   dots, not "%2E": we ask for CURLU_PATH_AS_IS and resolve them after
 *   percent-decoding, so "/a/%2e%2e/b" is "/b";
 * - CURLU_URLENCODE writes lowercase hex and turns a space in the query into
 *   '+', so it is not used: CURLU_ALLOW_SPACE keeps raw spaces, which
 *   robots_pct_normalize() encodes as %20 like every other unsafe octet;
 * - CURLU_PUNYCODE converts through the process locale and fails (as "out
 *   of memory") in the C locale, so libidn2 is called directly;
 * - an IPv6 zone ("[fe80::1%25eth0]") is split off and would be lost from
 *   the origin: such URLs are rejected;
 * - it takes "a.test\@evil.test" as userinfo and host evil.test, where
 *   WHATWG parsers read host a.test: see url_check_authority().
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <idn2.h>

#include "robots.h"

/* DNS names are at most 253 octets without the trailing dot. */
#define URL_MAX_HOST 253

struct url_scheme {
	const char *name;
	int default_port;
};

static const struct url_scheme url_schemes[] = {
	{ "http", 80 },
	{ "https", 443 },
	{ "ftp", 21 },
};

/* The raw pieces of a URL as curl splits them; all owned by curl. */
struct url_parts {
	char *host;
	char *port;  /* NULL when absent */
	char *path;  /* raw, starts with '/' */
	char *query; /* NULL when absent, "" for a bare '?' */
};

/*
 * Length of the RFC 3986 scheme that starts s and ends at ':', or 0. A
 * "scheme" followed by a digit is a host and port ("localhost:8080/x").
 */
static size_t
url_scheme_len(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return 0;
	for (i = 1; i < len && s[i] != ':'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') &&
		    !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.')
			return 0;
	}
	if (i == len || (i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9'))
		return 0;
	return i;
}

/* The supported scheme named by s (any case), or NULL. */
static const struct url_scheme *
url_scheme_find(const char *s, size_t len)
{
	size_t i, j;

	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++) {
		const char *name = url_schemes[i].name;

		if (strlen(name) != len)
			continue;
		for (j = 0; j < len && (s[j] | 0x20) == name[j]; j++)
			;
		if (j == len)
			return &url_schemes[i];
	}
	return NULL;
}

/*
 * Reject an authority (s up to the first '/', '?' or '#') that parsers read
 * differently. curl takes "a.test\@evil.test" as userinfo "a.test\" and host
 * evil.test, while WHATWG parsers (browsers, many crawlers) end the host of
 * an http(s) or ftp URL at '\' and read a.test: any backslash is bad. With
 * two '@', curl splits at the first (and then rejects the host) while
 * WHATWG and Python's urllib split at the last: bad too. Tabs and newlines,
 * which WHATWG strips, and "%5C" or "%40" in the host, which curl decodes,
 * are rejected later (curl's control check, url_host_check()).
 */
static enum url_err
url_check_authority(const char *s, size_t len)
{
	size_t i;
	int at = 0;

	for (i = 0; i < len && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++)
		if (s[i] == '\\' || (s[i] == '@' && at++ > 0))
			return URL_BAD;
	return URL_OK;
}

/*
 * Check what curl is too lenient about: a supported scheme, then "//" and a
 * non-empty authority that all parsers read alike.
 */
static enum url_err
url_check_prefix(const char *s, size_t len, const struct url_scheme **sch)
{
	size_t n = url_scheme_len(s, len);

	if (n == 0)
		return URL_BAD;
	if ((*sch = url_scheme_find(s, n)) == NULL)
		return URL_UNSUPPORTED_SCHEME;
	if (len - n < 4 || s[n + 1] != '/' || s[n + 2] != '/')
		return URL_BAD;
	if (strchr("/?#", s[n + 3]) != NULL)
		return URL_BAD;
	return url_check_authority(s + n + 3, len - n - 3);
}

/* Map a curl URL API error to ours. */
static enum url_err
url_curl_err(CURLUcode rc)
{
	return rc == CURLUE_OUT_OF_MEMORY ? URL_NOMEM : URL_BAD;
}

/*
 * libcurl 8.8 and later leave out an empty query ("/x?" reads as "/x")
 * unless asked for it; 7.88 always gave it. RFC 9309 matches the path
 * and query as written, so "/x?" keeps its "?" on both.
 */
#ifdef CURLU_GET_EMPTY
#define URL_GET_FLAGS CURLU_GET_EMPTY
#else
#define URL_GET_FLAGS 0
#endif

/* Fetch an optional part: *out is NULL when the URL has none. */
static enum url_err
url_get_opt(CURLU *h, CURLUPart what, char **out)
{
	CURLUcode rc = curl_url_get(h, what, out, URL_GET_FLAGS);

	if (rc == CURLUE_OK)
		return URL_OK;
	*out = NULL;
	if (rc == CURLUE_OUT_OF_MEMORY)
		return URL_NOMEM;
	return URL_OK;
}

/* Free what url_split() got from curl. */
static void
url_parts_clear(struct url_parts *p)
{
	curl_free(p->host);
	curl_free(p->port);
	curl_free(p->path);
	curl_free(p->query);
	memset(p, 0, sizeof(*p));
}

/* Split the NUL-terminated URL s with curl. */
static enum url_err
url_split(CURLU *h, const char *s, struct url_parts *p)
{
	unsigned flags =
	    CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS | CURLU_ALLOW_SPACE;
	char *zone = NULL;
	CURLUcode rc;
	enum url_err err;

	memset(p, 0, sizeof(*p));
	if ((rc = curl_url_set(h, CURLUPART_URL, s, flags)) != CURLUE_OK)
		return url_curl_err(rc);
	if ((rc = curl_url_get(h, CURLUPART_HOST, &p->host, 0)) != CURLUE_OK)
		return url_curl_err(rc);
	if ((rc = curl_url_get(h, CURLUPART_PATH, &p->path, 0)) != CURLUE_OK)
		return url_curl_err(rc);
	if ((err = url_get_opt(h, CURLUPART_PORT, &p->port)) != URL_OK ||
	    (err = url_get_opt(h, CURLUPART_QUERY, &p->query)) != URL_OK ||
	    (err = url_get_opt(h, CURLUPART_ZONEID, &zone)) != URL_OK)
		return err;
	if (zone != NULL) {
		curl_free(zone);
		return URL_BAD;
	}
	return URL_OK;
}

/* The port as a number: 0 for the scheme's default, -1 when invalid. */
static int
url_port(const char *s, const struct url_scheme *sch)
{
	long v = 0;

	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -1;
	}
	if (v == 0)
		return -1;
	return v == sch->default_port ? 0 : (int)v;
}

/* An IPv6 literal "[...]" in canonical form (RFC 5952), or NULL. */
static enum url_err
url_host_ipv6(const char *h, char **out)
{
	char in[INET6_ADDRSTRLEN + 1], canon[INET6_ADDRSTRLEN];
	struct in6_addr a;
	size_t n = strlen(h);

	if (n < 3 || h[n - 1] != ']' || n - 2 >= sizeof(in))
		return URL_BAD;
	memcpy(in, h + 1, n - 2);
	in[n - 2] = '\0';
	if (inet_pton(AF_INET6, in, &a) != 1 ||
	    inet_ntop(AF_INET6, &a, canon, sizeof(canon)) == NULL)
		return URL_BAD;
	n = strlen(canon);
	if ((*out = malloc(n + 3)) == NULL)
		return URL_NOMEM;
	(*out)[0] = '[';
	memcpy(*out + 1, canon, n);
	memcpy(*out + 1 + n, "]", 2);
	return URL_OK;
}

/* Lowercase an ASCII host name; check its octets and that no label is empty. */
static enum url_err
url_host_check(char *h)
{
	size_t i, n = strlen(h);

	if (n == 0 || n > URL_MAX_HOST || h[0] == '.' || h[n - 1] == '.')
		return URL_BAD;
	for (i = 0; i < n; i++) {
		char c = h[i];

		if (c >= 'A' && c <= 'Z')
			h[i] = (char)(c | 0x20);
		else if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') &&
		         c != '-' && c != '_' && c != '.')
			return URL_BAD;
		if (c == '.' && h[i + 1] == '.')
			return URL_BAD;
	}
	return URL_OK;
}

/*
 * Let curl read a host again that IDN mapping, percent-decoding or a
 * dropped trailing dot changed, so that IPv4 forms are normalized as in any
 * other URL ("0x7f.1." is 127.0.0.1 like "0x7f.1"). *h passed
 * url_host_check().
 */
static enum url_err
url_host_again(char **h)
{
	static const char pre[] = "http://";
	size_t n = strlen(*h);
	char *s, *again = NULL;
	CURLU *u = NULL;
	CURLUcode rc = CURLUE_OUT_OF_MEMORY;

	if ((s = malloc(sizeof(pre) + n + 1)) == NULL ||
	    (u = curl_url()) == NULL)
		goto done;
	memcpy(s, pre, sizeof(pre) - 1);
	memcpy(s + sizeof(pre) - 1, *h, n);
	memcpy(s + sizeof(pre) - 1 + n, "/", 2);
	if ((rc = curl_url_set(
	         u, CURLUPART_URL, s, CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK)
		rc = curl_url_get(u, CURLUPART_HOST, &again, 0);
	if (rc == CURLUE_OK) {
		free(*h);
		if ((*h = strdup(again)) == NULL)
			rc = CURLUE_OUT_OF_MEMORY;
	}
done:
	curl_free(again);
	curl_url_cleanup(u);
	free(s);
	return rc == CURLUE_OK ? URL_OK : url_curl_err(rc);
}

/* Whether curl's IPv4 parser might read h (digits, hex digits, x, dots). */
static int
url_maybe_ipv4(const char *h)
{
	return h[strspn(h, "0123456789abcdefABCDEFxX.")] == '\0';
}

/* The normalized host: IPv6 canonical, IDN as punycode, lowercase. */
static enum url_err
url_host(const char *raw, char **out)
{
	const unsigned char *p;
	enum url_err err;
	size_t n;
	int rc, changed = 0;

	*out = NULL;
	if (raw[0] == '[')
		return url_host_ipv6(raw, out);
	for (p = (const unsigned char *)raw; *p != '\0' && *p < 0x80; p++)
		;
	if (*p == '\0') {
		if ((*out = strdup(raw)) == NULL)
			return URL_NOMEM;
	} else {
		rc = idn2_lookup_u8((const uint8_t *)raw, (uint8_t **)out,
		    IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
		if (rc != IDN2_OK) {
			*out = NULL;
			return rc == IDN2_MALLOC ? URL_NOMEM : URL_BAD;
		}
		changed = 1;
	}
	if ((n = strlen(*out)) > 0 && (*out)[n - 1] == '.') {
		(*out)[n - 1] = '\0'; /* "example.com." is "example.com" */
		changed = 1;
	}
	/* curl reads IPv4 forms before it percent-decodes ("5%2E2"). */
	if (url_maybe_ipv4(*out))
		changed = 1;
	if ((err = url_host_check(*out)) == URL_OK && changed)
		err = url_host_again(out);
	if (err != URL_OK) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* "scheme://host[:port]" in a new string. */
static char *
url_make_origin(const char *scheme, const char *host, int port)
{
	size_t ls = strlen(scheme), lh = strlen(host), n = 0;
	char digits[8], *o;
	int i = (int)sizeof(digits);

	while (port > 0) {
		digits[--i] = (char)('0' + port % 10);
		port /= 10;
	}
	if (i < (int)sizeof(digits))
		digits[--i] = ':';
	if ((o = malloc(ls + 3 + lh + (sizeof(digits) - (size_t)i) + 1)) ==
	    NULL)
		return NULL;
	memcpy(o + n, scheme, ls);
	n += ls;
	memcpy(o + n, "://", 3);
	n += 3;
	memcpy(o + n, host, lh);
	n += lh;
	memcpy(o + n, digits + i, sizeof(digits) - (size_t)i);
	n += sizeof(digits) - (size_t)i;
	o[n] = '\0';
	return o;
}

/*
 * Remove dot segments from the absolute path p (RFC 3986 5.2.4) in place;
 * returns the new length. Empty segments ("//") are kept.
 */
static size_t
url_remove_dots(char *p, size_t len)
{
	size_t i = 0, o = 0, end, seg;

	while (i < len) {
		/* p[i] is the '/' that starts the next input segment. */
		for (end = i + 1; end < len && p[end] != '/'; end++)
			;
		seg = end - i - 1;
		if (seg == 1 && p[i + 1] == '.') {
			if (end == len)
				p[o++] = '/';
		} else if (seg == 2 && p[i + 1] == '.' && p[i + 2] == '.') {
			while (o > 0 && p[--o] != '/')
				;
			if (end == len)
				p[o++] = '/';
		} else {
			memmove(p + o, p + i, end - i);
			o += end - i;
		}
		i = end;
	}
	return o;
}

/*
 * The match path of a raw path and query (query NULL when absent) in a new
 * NUL-terminated string: '/' first, percent-encoding normalized, then dot
 * segments resolved (so "%2E%2E" counts as ".."), then "?" and the query.
 */
static char *
url_match_path(const char *path, size_t plen, const char *query, size_t qlen,
    size_t *out_len)
{
	size_t n = 0, cap;
	char *o;

	if (plen > (SIZE_MAX - 3) / 3 || qlen > (SIZE_MAX - 3) / 3 - plen)
		return NULL;
	cap = 3 * (plen + qlen) + 3;
	if ((o = malloc(cap)) == NULL)
		return NULL;
	if (plen == 0 || path[0] != '/')
		o[n++] = '/';
	n += robots_pct_normalize(path, plen, o + n, 0);
	n = url_remove_dots(o, n);
	if (query != NULL) {
		o[n++] = '?';
		n += robots_pct_normalize(query, qlen, o + n, 0);
	}
	o[n] = '\0';
	*out_len = n;
	return o;
}

/* Split off the query, drop a fragment, normalize (see robots.h). */
char *
robots_path_normalize(const char *path, size_t len, size_t *out_len)
{
	const char *hash = len > 0 ? memchr(path, '#', len) : NULL;
	const char *q;
	size_t plen;

	if (hash != NULL)
		len = (size_t)(hash - path);
	q = len > 0 ? memchr(path, '?', len) : NULL;
	plen = q != NULL ? (size_t)(q - path) : len;
	return url_match_path(path, plen, q != NULL ? q + 1 : NULL,
	    q != NULL ? len - plen - 1 : 0, out_len);
}

/* Fill u from curl's parts of a URL whose scheme is sch. */
static enum url_err
url_fill(struct url *u, const struct url_scheme *sch, const struct url_parts *p)
{
	enum url_err err;

	if ((u->port = url_port(p->port, sch)) < 0)
		return URL_BAD;
	if ((err = url_host(p->host, &u->host)) != URL_OK)
		return err;
	if ((u->scheme = strdup(sch->name)) == NULL)
		return URL_NOMEM;
	if ((u->origin = url_make_origin(sch->name, u->host, u->port)) == NULL)
		return URL_NOMEM;
	u->path = url_match_path(p->path, strlen(p->path), p->query,
	    p->query != NULL ? strlen(p->query) : 0, &u->path_len);
	if (u->path == NULL)
		return URL_NOMEM;
	return URL_OK;
}

/* Check the prefix, split with curl, then normalize every piece. */
enum url_err
robots_url_parse(const char *s, size_t len, struct url *u)
{
	const struct url_scheme *sch = NULL;
	struct url_parts parts = { NULL, NULL, NULL, NULL };
	CURLU *h = NULL;
	char *copy = NULL;
	enum url_err err;

	memset(u, 0, sizeof(*u));
	if (len == 0 || len > URL_MAX_LEN || memchr(s, '\0', len) != NULL)
		return URL_BAD;
	if ((err = url_check_prefix(s, len, &sch)) != URL_OK)
		return err;
	err = URL_NOMEM;
	if ((copy = malloc(len + 1)) == NULL || (h = curl_url()) == NULL)
		goto fail;
	memcpy(copy, s, len);
	copy[len] = '\0';
	if ((err = url_split(h, copy, &parts)) != URL_OK)
		goto fail;
	err = url_fill(u, sch, &parts);
fail:
	if (err != URL_OK)
		robots_url_clear(u);
	url_parts_clear(&parts);
	curl_url_cleanup(h);
	free(copy);
	return err;
}

/* Free what robots_url_parse() filled in; u is left empty. */
void
robots_url_clear(struct url *u)
{
	if (u == NULL)
		return;
	free(u->origin);
	free(u->scheme);
	free(u->host);
	free(u->path);
	memset(u, 0, sizeof(*u));
}

/* Static English text for an error. */
const char *
robots_url_err_message(enum url_err err)
{
	switch (err) {
	case URL_OK:
		return "no error";
	case URL_BAD:
		return "not a valid absolute URL with a host";
	case URL_UNSUPPORTED_SCHEME:
		return "unsupported scheme: only http, https and ftp";
	case URL_NOMEM:
		return "out of memory";
	}
	return "unknown URL error";
}

/*
 * Whether s is a bare host ("example.com", "example.com:8080", "[::1]"):
 * no scheme (see url_scheme_len()), path, query, fragment or userinfo.
 */
static int
url_is_bare_host(const char *s, size_t len)
{
	return memchr(s, '/', len) == NULL && memchr(s, '?', len) == NULL &&
	       memchr(s, '#', len) == NULL && memchr(s, '@', len) == NULL &&
	       memchr(s, '\\', len) == NULL;
}

/* The origin key of a URL, or of a bare host read as https. */
char *
robots_url_origin(const char *s, size_t len, enum url_err *err)
{
	static const char https[] = "https://";
	struct url u;
	char *full = NULL, *origin;

	*err = URL_BAD;
	if (len == 0 || len > URL_MAX_LEN)
		return NULL;
	if (url_scheme_len(s, len) == 0) {
		if (!url_is_bare_host(s, len))
			return NULL;
		if ((full = malloc(sizeof(https) - 1 + len)) == NULL) {
			*err = URL_NOMEM;
			return NULL;
		}
		memcpy(full, https, sizeof(https) - 1);
		memcpy(full + sizeof(https) - 1, s, len);
		s = full;
		len += sizeof(https) - 1;
	}
	*err = robots_url_parse(s, len, &u);
	free(full);
	if (*err != URL_OK)
		return NULL;
	origin = u.origin;
	u.origin = NULL;
	robots_url_clear(&u);
	return origin;
}
