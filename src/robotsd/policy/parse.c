/*
 * parse.c: strict option values; see parse.h. Used by options.c for every
 * option, by netpolicy.c for --connect-to ports and by metrics.c for its
 * listening address.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/parse.h"
#include "base/xmalloc.h"

/* Strict integer in [min, max] in the given base; errstr NULL on success. */
static long long
parse_base(
    const char *s, int base, long long min, long long max, const char **errstr)
{
	long long v;
	char *end;

	*errstr = "invalid";
	if (s == NULL || !isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	v = strtoll(s, &end, base);
	if (*end != '\0' || errno == ERANGE)
		return 0;
	*errstr = v < min ? "too small" : v > max ? "too large" : NULL;
	return *errstr == NULL ? v : 0;
}

long long
parse_num(const char *s, long long min, long long max, const char **errstr)
{
	return parse_base(s, 10, min, max, errstr);
}

long long
parse_octal(const char *s, long long min, long long max, const char **errstr)
{
	return parse_base(s, 8, min, max, errstr);
}

long long
parse_size(const char *s, long long min, long long max, const char **errstr)
{
	char buf[32];
	size_t len = s != NULL ? strlen(s) : 0;
	long long mult = 1, v;

	*errstr = "invalid";
	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len + 1);
	switch (toupper((unsigned char)buf[len - 1])) {
	case 'K':
		mult = PARSE_KIB;
		break;
	case 'M':
		mult = PARSE_MIB;
		break;
	case 'G':
		mult = PARSE_GIB;
		break;
	}
	if (mult != 1)
		buf[len - 1] = '\0';
	v = parse_num(buf, 0, max / mult, errstr);
	if (*errstr != NULL)
		return 0;
	if (v * mult < min) {
		*errstr = "too small";
		return 0;
	}
	return v * mult;
}

int
parse_bool(const char *s)
{
	if (strcmp(s, "yes") == 0)
		return 1;
	if (strcmp(s, "no") == 0)
		return 0;
	return -1;
}

int
parse_hostport(const char *addr, char **host, unsigned short *port)
{
	const char *colon = strrchr(addr, ':'), *h = addr, *errstr;
	size_t hlen;
	long long p;

	if (colon == NULL || colon == addr)
		return -1;
	p = parse_num(colon + 1, 1, 65535, &errstr);
	if (errstr != NULL)
		return -1;
	hlen = (size_t)(colon - addr);
	if (addr[0] == '[') {
		if (hlen < 3 || addr[hlen - 1] != ']')
			return -1;
		h++;
		hlen -= 2;
	} else if (memchr(addr, ':', hlen) != NULL)
		return -1; /* an IPv6 address needs its brackets */
	if (host != NULL)
		*host = xstrndup(h, hlen);
	if (port != NULL)
		*port = (unsigned short)p;
	return 0;
}

/* The --tdmrep mode s names (enum tdm_mode's order), or -1. */
int
parse_tdmrep(const char *s)
{
	static const char *const modes[] = { "on-demand", "always", "off" };
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(s, modes[i]) == 0)
			return i;
	return -1;
}
