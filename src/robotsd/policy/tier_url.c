/*
 * tier_url.c: parse a --redis URL (forms in tier_url.h) strictly: every
 * part is checked and every refusal says which part is wrong.
 */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "policy/tier_url.h"

/* A decimal number in [min, max] made of all of s[0..len); -1 if not. */
static long
parse_dec(const char *s, size_t len, long min, long max)
{
	long v = 0;
	size_t i;

	if (len == 0 || len > 10)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v < min || v > max ? -1 : v;
}

/* s[0..len) with %XX decoded; NULL on a bad escape (what names it). */
static char *
decode_escaped(const char *s, size_t len, const char *what, const char **err)
{
	char *out = malloc(len + 1), *o = out;
	size_t i;

	if (out == NULL) {
		*err = "out of memory";
		return NULL;
	}
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= len ||
		    robots_hexval((unsigned char)s[i + 1]) < 0 ||
		    robots_hexval((unsigned char)s[i + 2]) < 0 ||
		    (s[i + 1] == '0' && s[i + 2] == '0')) {
			free(out);
			*err = what;
			return NULL;
		}
		*o++ = (char)(robots_hexval((unsigned char)s[i + 1]) << 4 |
		              robots_hexval((unsigned char)s[i + 2]));
		i += 2;
	}
	*o = '\0';
	return out;
}

/*
 * Take "[USER][:PASSWORD]@" from the front of *p: a password alone (the
 * default user), a user and its password (an ACL user), or a user alone
 * (its password from --redis-password-file).
 */
static int
parse_userinfo(
    const char **p, int is_unix, struct tier_url *u, const char **err)
{
	const char *at = strchr(*p, '@'), *slash = strchr(*p, '/'), *colon;

	if (at == NULL || (is_unix && (slash < at || at[1] != '/')))
		return 0; /* an '@' in the socket's path */
	colon = memchr(*p, ':', (size_t)(at - *p));
	if (colon != *p &&
	    (u->user = decode_escaped(*p,
	         (size_t)((colon != NULL ? colon : at) - *p),
	         "bad %XX escape in the user name", err)) == NULL)
		return -1;
	if (u->user != NULL && strchr(u->user, ' ') != NULL) {
		*err = "a space in the user name";
		return -1;
	}
	if (colon != NULL && colon + 1 == at) {
		*err = "empty password";
		return -1;
	}
	if (colon != NULL &&
	    (u->password = decode_escaped(colon + 1, (size_t)(at - colon - 1),
	         "bad %XX escape in the password", err)) == NULL)
		return -1;
	*p = at + 1;
	return 0;
}

static int
host_char_ok(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_';
}

/* HOST or [V6] from s[0..len) into u->host. */
static int
parse_host(const char *s, size_t len, struct tier_url *u, const char **err)
{
	size_t i, start = 0, end = len;

	if (len == 0) {
		*err = "missing host";
		return -1;
	}
	if (s[0] == '[') {
		if (s[len - 1] != ']' || len < 4) {
			*err = "bad IPv6 address (write it as [ADDR])";
			return -1;
		}
		start = 1, end = len - 1;
	}
	for (i = start; i < end; i++) {
		int c = (unsigned char)s[i];

		if (start == 1 ? !(isxdigit(c) || c == ':' || c == '.')
		               : !host_char_ok(c)) {
			*err = start == 1 ? "bad IPv6 address"
			                  : "bad character in host";
			return -1;
		}
	}
	if ((u->host = strndup(s + start, end - start)) == NULL) {
		*err = "out of memory";
		return -1;
	}
	return 0;
}

/* "HOST[:PORT][/DB]" after "redis://[:PASSWORD@]". */
static int
parse_tcp(const char *p, struct tier_url *u, const char **err)
{
	const char *slash = strchr(p, '/'), *end, *colon;
	size_t hlen;
	long v;

	end = slash != NULL ? slash : p + strlen(p);
	colon = memchr(p, ']', (size_t)(end - p));
	colon = memchr(colon != NULL ? colon : p, ':',
	    (size_t)(end - (colon != NULL ? colon : p)));
	hlen = (size_t)((colon != NULL ? colon : end) - p);
	if (parse_host(p, hlen, u, err) == -1)
		return -1;
	u->port = 6379;
	if (colon != NULL) {
		if ((v = parse_dec(
		         colon + 1, (size_t)(end - colon - 1), 1, 65535)) < 0) {
			*err = "bad port (1-65535)";
			return -1;
		}
		u->port = (int)v;
	}
	if (slash != NULL && slash[1] != '\0') {
		if ((v = parse_dec(slash + 1, strlen(slash + 1), 0,
		         TIER_URL_MAX_DB)) < 0) {
			*err = "bad database number after '/'";
			return -1;
		}
		u->db = (int)v;
	}
	return 0;
}

/* "/PATH[?db=N]" after "unix://[:PASSWORD@]". */
static int
parse_unix(const char *p, struct tier_url *u, const char **err)
{
	const char *q = strchr(p, '?');
	size_t plen = q != NULL ? (size_t)(q - p) : strlen(p);
	long v;

	u->is_unix = 1;
	if (plen < 2 || p[0] != '/' || p[plen - 1] == '/') {
		*err = "the socket path must be absolute (unix:///PATH)";
		return -1;
	}
	if ((u->path = strndup(p, plen)) == NULL) {
		*err = "out of memory";
		return -1;
	}
	if (q == NULL)
		return 0;
	if (strncmp(q, "?db=", 4) != 0 ||
	    (v = parse_dec(q + 4, strlen(q + 4), 0, TIER_URL_MAX_DB)) < 0) {
		*err = "bad query: only ?db=N is understood";
		return -1;
	}
	u->db = (int)v;
	return 0;
}

static int
make_name(struct tier_url *u)
{
	const char *scheme = u->tls ? "rediss" : "redis";
	int n;

	if (u->is_unix)
		n = asprintf(&u->name, "unix://%s?db=%d", u->path, u->db);
	else
		n = asprintf(&u->name,
		    strchr(u->host, ':') != NULL ? "%s://[%s]:%d/%d"
		                                 : "%s://%s:%d/%d",
		    scheme, u->host, u->port, u->db);
	if (n < 0)
		u->name = NULL;
	return n < 0 ? -1 : 0;
}

int
tier_url_parse(const char *s, struct tier_url *u, const char **err)
{
	int r;

	memset(u, 0, sizeof(*u));
	if (strncmp(s, "rediss://", 9) == 0 || strncmp(s, "redis://", 8) == 0) {
		u->tls = s[5] == 's';
		s += u->tls ? 9 : 8;
		r = parse_userinfo(&s, 0, u, err);
		r = r == 0 ? parse_tcp(s, u, err) : r;
	} else if (strncmp(s, "unix://", 7) == 0) {
		s += 7;
		r = parse_userinfo(&s, 1, u, err);
		r = r == 0 ? parse_unix(s, u, err) : r;
	} else {
		*err = "not a redis://, rediss:// or unix:// URL";
		r = -1;
	}
	if (r == 0 && make_name(u) == -1) {
		*err = "out of memory";
		r = -1;
	}
	if (r == -1)
		tier_url_clear(u);
	return r;
}

void
tier_url_clear(struct tier_url *u)
{
	if (u == NULL)
		return;
	free(u->host);
	free(u->path);
	free(u->user);
	free(u->password);
	free(u->name);
	memset(u, 0, sizeof(*u));
}

/* See tier_url.h. */
char *
tier_url_masked(const char *s)
{
	const char *at = strrchr(s, '@'), *from = strstr(s, "://");
	size_t head;
	char *out;

	from = from != NULL && (at == NULL || from < at) ? from + 3 : s;
	if (at == NULL)
		return strdup(s);
	head = (size_t)(from - s);
	if ((out = malloc(head + 3 + strlen(at) + 1)) == NULL)
		return NULL;
	memcpy(out, s, head);
	memcpy(out + head, "***", 3);
	memcpy(out + head + 3, at, strlen(at) + 1);
	return out;
}
