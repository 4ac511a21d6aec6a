/*
 * robots_pct.c: the one percent-encoding normalization that both patterns
 * and URL paths go through before they are compared (RFC 9309 2.2.2), so a
 * pattern and a path that mean the same octets compare equal byte for byte.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "robots.h"

static const char hexdigits[] = "0123456789ABCDEF";

/* See robots.h. */
int
robots_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
static int
robots_pct_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

/* Octets that never stand for themselves in a URI: percent-encode them. */
static int
robots_pct_must_encode(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f;
}

/* Whether the '%' at s[i] starts an escape with a '*' in it: "%*A", "%E*2". */
static int
robots_pct_star_in_escape(const unsigned char *s, size_t i, size_t len)
{
	return (i + 1 < len && s[i + 1] == '*') ||
	       (i + 2 < len && robots_hexval(s[i + 1]) >= 0 && s[i + 2] == '*');
}

/* Write c as "%XX"; returns the new end. */
static char *
robots_pct_put_escape(char *o, unsigned char c)
{
	*o++ = '%';
	*o++ = hexdigits[c >> 4];
	*o++ = hexdigits[c & 0xf];
	return o;
}

/*
 * Octets copied as they are: bit 1 in a pattern, bit 2 in a path. Not
 * '%', not robots_pct_must_encode(); '*' and '$' only in a pattern.
 */
#define PLAIN(c)                                                               \
	((c) > 0x20 && (c) < 0x7f && (c) != '%'                                \
	        ? ((c) == '*' || (c) == '$' ? 1 : 3)                           \
	        : 0)
#define PLAIN4(c) PLAIN(c), PLAIN(c + 1), PLAIN(c + 2), PLAIN(c + 3)
#define PLAIN16(c) PLAIN4(c), PLAIN4(c + 4), PLAIN4(c + 8), PLAIN4(c + 12)
#define PLAIN64(c) PLAIN16(c), PLAIN16(c + 16), PLAIN16(c + 32), PLAIN16(c + 48)
static const unsigned char plain[256] = { PLAIN64(0), PLAIN64(64), PLAIN64(128),
	PLAIN64(192) };

size_t
robots_pct_normalize(const char *in, size_t len, char *out, int is_pattern)
{
	const unsigned char *s = (const unsigned char *)in;
	const unsigned char mask = is_pattern ? 1 : 2;
	char *o = out;
	size_t i, j;
	int hi, lo;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (plain[c] & mask) { /* copy the whole run */
			for (j = i + 1; j < len && (plain[s[j]] & mask); j++)
				;
			memcpy(o, s + i, j - i);
			o += j - i;
			i = j - 1;
			continue;
		}
		if (c == '%') {
			hi = i + 2 < len ? robots_hexval(s[i + 1]) : -1;
			lo = hi >= 0 ? robots_hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0) {
				/*
				 * A lone '%' is the octet '%' itself, except a
				 * pattern's escape cut by '*' ("%E*2"): that
				 * '%' stays, to match an escape in the path.
				 */
				if (is_pattern &&
				    robots_pct_star_in_escape(s, i, len))
					*o++ = '%';
				else
					o = robots_pct_put_escape(o, '%');
				continue;
			}
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
			if (robots_pct_unreserved(c))
				*o++ = (char)c;
			else
				o = robots_pct_put_escape(o, c);
		} else if (robots_pct_must_encode(c))
			o = robots_pct_put_escape(o, c);
		else if (!is_pattern && (c == '*' || c == '$'))
			o = robots_pct_put_escape(o, c);
		else
			*o++ = (char)c;
	}
	return (size_t)(o - out);
}
