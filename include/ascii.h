/*
 * ascii.h: ASCII case, as robots.txt (RFC 9309 section 2.2.1), HTTP field
 * names (RFC 9110 section 5.1) and the page's <meta> names compare it:
 * without the locale, only A-Z folded.
 */
#ifndef ROBOTS_ASCII_H
#define ROBOTS_ASCII_H

#include <stddef.h>
#include <string.h>

/* c with A-Z folded to a-z; any other octet as it is. */
static inline int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Whether s (n bytes) is lit (lower case, NUL-terminated), case aside. */
static inline int
ascii_is_lit(const char *s, size_t n, const char *lit)
{
	size_t i;

	if (n != strlen(lit))
		return 0;
	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)s[i]) != (unsigned char)lit[i])
			return 0;
	return 1;
}

#endif /* ROBOTS_ASCII_H */
