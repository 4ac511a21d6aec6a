/*
 * url_fast.c: the common URL shape split without allocating, for the
 * daemon's cached-check hot path. robots_url_fast() accepts only a conservative
 * grammar whose normalization is a copy and a lowercasing, and says "not
 * mine" (0) for anything else, which the caller then hands to
 * robots_url_parse():
 *
 *   ("http" | "https") "://" host [":" port] ["/" path ["?" query]]
 *
 * - scheme in any case (lowercased in the origin, as robots_url_parse() does);
 * - host: labels of ASCII letters, digits and '-', joined by single dots,
 *   lowercased; no label empty, longer than 63, starting or ending with
 *   '-', or starting with "xn--" (punycode: left to robots_url_parse()); at
 * most 253 bytes; and the last label must not start with a digit, so that no
 * host curl could read as an IPv4 number (decimal, octal, "0x" hex, or fewer
 * than four parts) is taken: curl only reads a host as IPv4 when every label,
 * the last included, starts with a digit;
 * - port: 1 to 65535 without a leading zero; the scheme's default dropped;
 * - path and query: printable ASCII except '%', '*', '$', '#' and a
 *   backslash (which robots_pct_normalize() would rewrite, or which mean
 *   something else), and no "." or ".." segment in the path; a missing
 *   path is "/" and a bare "?" is kept.
 * tests/fuzz/fuzz_url.c and tests/unit/check_url_fast.c check that every
 * URL accepted here gives exactly robots_url_parse()'s origin and path.
 */
#include <config.h>

#include <string.h>

#include "robots.h"

#define URL_FAST_MAX_HOST 253
#define URL_FAST_MAX_LABEL 63

/* Octet classes, one table load per octet. */
enum {
	UF_HOST = 1,   /* letter, digit or '-': may be in a host label */
	UF_PLAIN = 2,  /* a path or query octet that normalizes to itself */
	UF_SLASH = 4,  /* '/' */
	UF_QUERY = 8,  /* '?' */
	UF_DOT = 16,   /* '.' */
	UF_UPPER = 32, /* 'A'..'Z': or-ing this bit in lowercases */
};

#define P UF_PLAIN
#define H (UF_HOST | UF_PLAIN)
#define U (UF_HOST | UF_PLAIN | UF_UPPER)
#define D (UF_DOT | UF_PLAIN)
#define S UF_SLASH
#define Q UF_QUERY
/*
 * Printable ASCII except '%', '*', '$', '#' and a backslash is plain: those
 * are what robots_pct_normalize() rewrites or what ends a path. Controls,
 * space, DEL and octets >= 0x80 are 0.
 */
static const unsigned char url_fast_class[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
	0, P, P, 0, 0, 0, P, P, P, P, 0, P, P, H, D, S, /* ' ' to '/' */
	H, H, H, H, H, H, H, H, H, H, P, P, P, P, P, Q, /* '0' to '?' */
	P, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, /* '@' to 'O' */
	U, U, U, U, U, U, U, U, U, U, U, P, 0, P, P, P, /* 'P' to '_' */
	P, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* '`' to 'o' */
	H, H, H, H, H, H, H, H, H, H, H, P, P, P, P, 0, /* 'p' to DEL */
};
#undef P
#undef H
#undef U
#undef D
#undef S
#undef Q

/*
 * Length of "http://" or "https://" (any case) at s, or 0; *https tells
 * which.
 */
static size_t
url_fast_scheme(const char *s, size_t len, int *https)
{
	size_t n;

	if (len < 8 || (s[0] | 0x20) != 'h' || (s[1] | 0x20) != 't' ||
	    (s[2] | 0x20) != 't' || (s[3] | 0x20) != 'p')
		return 0;
	*https = (s[4] | 0x20) == 's';
	n = 4 + (size_t)*https;
	if (s[n] != ':' || s[n + 1] != '/' || s[n + 2] != '/')
		return 0;
	return n + 3;
}

/* Whether the label l of n bytes (lowercased) ends a host validly. */
static int
url_fast_label_ok(const char *l, size_t n)
{
	return n > 0 && n <= URL_FAST_MAX_LABEL && l[0] != '-' &&
	       l[n - 1] != '-' && !(n >= 4 && memcmp(l, "xn--", 4) == 0);
}

/*
 * Copy the host at s, lowercased, to o; returns its length, or 0 when it
 * is outside the grammar. The host ends at the first octet that is not a
 * label character or a dot.
 */
static size_t
url_fast_host(const char *s, size_t len, char *o)
{
	size_t i, label = 0;

	for (i = 0; i < len && i <= URL_FAST_MAX_HOST; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned k = url_fast_class[c];

		if (k & UF_HOST)
			o[i] = (char)(c | (k & UF_UPPER));
		else if (k & UF_DOT) {
			if (!url_fast_label_ok(o + label, i - label))
				return 0;
			o[i] = '.';
			label = i + 1;
		} else
			break;
	}
	if (i > URL_FAST_MAX_HOST || !url_fast_label_ok(o + label, i - label))
		return 0;
	if (o[label] >= '0' && o[label] <= '9')
		return 0; /* curl might read the host as an IPv4 address */
	return i;
}

/*
 * The port digits at s (after ':'), up to '/' or the end: their count, or
 * 0 when they are not 1..65535 without a leading zero. *port gets the
 * value.
 */
static size_t
url_fast_port(const char *s, size_t len, unsigned *port)
{
	size_t i;
	unsigned v = 0;

	if (len == 0 || s[0] < '1' || s[0] > '9')
		return 0;
	for (i = 0; i < len && i < 5 && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	if (v > 65535 || (i < len && s[i] != '/'))
		return 0;
	*port = v;
	return i;
}

/* Whether the path segment seg[0..n) is "." or "..". */
static int
url_fast_dots(const char *seg, size_t n)
{
	return (n == 1 && seg[0] == '.') ||
	       (n == 2 && seg[0] == '.' && seg[1] == '.');
}

/*
 * Check the path (from its leading '/') and query at s: 1 when every octet
 * is safe and no path segment is a dot segment.
 */
static int
url_fast_path_ok(const char *s, size_t len)
{
	size_t i, seg = 1;
	unsigned k = 0;

	for (i = 1; i < len; i++) {
		k = url_fast_class[(unsigned char)s[i]];
		if (k & UF_PLAIN)
			continue;
		if (k != UF_SLASH)
			break;
		if (url_fast_dots(s + seg, i - seg))
			return 0;
		seg = i + 1;
	}
	if (url_fast_dots(s + seg, i - seg) || (i < len && k != UF_QUERY))
		return 0;
	for (; i < len; i++)
		if (!url_fast_class[(unsigned char)s[i]])
			return 0;
	return 1;
}

/* ":port" at o; returns its length. */
static size_t
url_fast_put_port(char *o, unsigned port)
{
	char digits[6];
	size_t n = 0, i;

	while (port > 0) {
		digits[n++] = (char)('0' + port % 10);
		port /= 10;
	}
	o[0] = ':';
	for (i = 0; i < n; i++)
		o[1 + i] = digits[n - 1 - i];
	return n + 1;
}

int
robots_url_fast(
    const char *s, size_t len, char *buf, size_t bufsz, struct url_view *v)
{
	size_t i, o, h;
	unsigned port = 0;
	int https = 0;

	if (len > URL_MAX_LEN || bufsz < len + 3 ||
	    (i = url_fast_scheme(s, len, &https)) == 0)
		return 0;
	memcpy(buf, https ? "https://" : "http://", i);
	if ((h = url_fast_host(s + i, len - i, buf + i)) == 0)
		return 0;
	o = i += h;
	if (i < len && s[i] == ':') {
		if ((h = url_fast_port(s + i + 1, len - i - 1, &port)) == 0)
			return 0;
		i += 1 + h;
		if (port != (https ? 443u : 80u))
			o += url_fast_put_port(buf + o, port);
	}
	if (i < len && (s[i] != '/' || !url_fast_path_ok(s + i, len - i)))
		return 0;
	buf[o] = '\0';
	v->origin = buf;
	v->origin_len = o;
	v->path = buf + o + 1;
	if (i == len)
		memcpy(buf + o + 1, "/", 2);
	else {
		memcpy(buf + o + 1, s + i, len - i);
		buf[o + 1 + len - i] = '\0';
	}
	v->path_len = i == len ? 1 : len - i;
	return 1;
}
