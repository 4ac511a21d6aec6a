/*
 * wire_fast.c: the check request fast path (see wire_fast.h). A cursor
 * walks the line once; every "not sure" is a plain return 0.
 */
#include "wire_fast.h"

#include <string.h>

struct cur {
	const unsigned char *p, *end;
	char *scratch; /* where the next unescaped string goes */
};

/* Skip JSON whitespace, as jansson does. */
static void
ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
	                            *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

/* The value of hex digit ch, or -1. */
static int
hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
		return (ch | 0x20) - 'a' + 10;
	return -1;
}

/* One escape after the backslash at c->p[-1]: its byte, or -1. */
static int
unescape(struct cur *c)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	int v = 0, i, h;

	if (c->p >= c->end)
		return -1;
	if (*c->p != 'u') {
		if (*c->p == '\0' || (e = strchr(from, *c->p)) == NULL)
			return -1;
		c->p++;
		return (unsigned char)to[e - from];
	}
	if (c->end - c->p < 5)
		return -1;
	for (i = 1; i <= 4; i++) {
		if ((h = hexval(c->p[i])) < 0)
			return -1;
		v = v << 4 | h;
	}
	if (v > 0x7f)
		return -1; /* UTF-8 output, surrogates: jansson's business */
	c->p += 5;
	return v;
}

/*
 * A string at c->p (just past its opening quote): printable ASCII and the
 * escapes unescape() knows. Sets *s, *len; 0 on success, -1 otherwise.
 */
static int
string(struct cur *c, const char **s, size_t *len)
{
	const unsigned char *start = c->p;
	char *out;
	int b;

	while (c->p < c->end && *c->p != '"' && *c->p != '\\' &&
	       *c->p >= 0x20 && *c->p < 0x80)
		c->p++;
	if (c->p < c->end && *c->p == '"') {
		*s = (const char *)start;
		*len = (size_t)(c->p++ - start);
		return 0;
	}
	if (c->p >= c->end || *c->p != '\\')
		return -1;
	out = c->scratch;
	memcpy(out, start, (size_t)(c->p - start));
	c->scratch += c->p - start;
	while (c->p < c->end && *c->p != '"') {
		if (*c->p == '\\') {
			c->p++;
			if ((b = unescape(c)) < 0)
				return -1;
			*c->scratch++ = (char)b;
		} else if (*c->p >= 0x20 && *c->p < 0x80) {
			*c->scratch++ = (char)*c->p++;
		} else {
			return -1;
		}
	}
	if (c->p >= c->end)
		return -1;
	c->p++;
	*s = out;
	*len = (size_t)(c->scratch - out);
	return 0;
}

/* A key: a plain string (no escapes) followed by ':'. Its id, or -1. */
static int
key(struct cur *c)
{
	static const struct {
		const char *name;
		size_t len;
	} keys[] = { { "op", 2 }, { "url", 3 }, { "agent", 5 }, { "id", 2 },
		{ "wait", 4 } };
	const unsigned char *start;
	size_t len, i;

	if (c->p >= c->end || *c->p != '"')
		return -1;
	start = ++c->p;
	while (c->p < c->end && *c->p != '"' && *c->p != '\\')
		c->p++;
	if (c->p >= c->end || *c->p != '"')
		return -1;
	len = (size_t)(c->p++ - start);
	ws(c);
	if (c->p >= c->end || *c->p++ != ':')
		return -1;
	ws(c);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].len == len && memcmp(keys[i].name, start, len) == 0)
			return (int)i;
	return -1;
}

/* A non-negative integer jansson holds exactly: no sign, no leading 0. */
static int
integer(struct cur *c, long long *v)
{
	int digits = 0;

	*v = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (++digits > 18 || (digits == 2 && *v == 0))
			return -1;
		*v = *v * 10 + (*c->p++ - '0');
	}
	if (digits == 0 ||
	    (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')))
		return -1;
	return 0;
}

/* true or false. */
static int
boolean(struct cur *c, int *v)
{
	size_t left = (size_t)(c->end - c->p);

	if (left >= 4 && memcmp(c->p, "true", 4) == 0) {
		c->p += 4;
		*v = 1;
		return 0;
	}
	if (left >= 5 && memcmp(c->p, "false", 5) == 0) {
		c->p += 5;
		*v = 0;
		return 0;
	}
	return -1;
}

/* The value of key k into out; -1 when it is not the expected kind. */
static int
value(struct cur *c, int k, struct wire_check *out)
{
	const char *s;
	size_t len;

	if (k == 3) {
		out->has_id = 1;
		return integer(c, &out->id);
	}
	if (k == 4)
		return boolean(c, &out->wait);
	if (c->p >= c->end || *c->p++ != '"' || string(c, &s, &len) == -1)
		return -1;
	if (k == 0)
		return len == 5 && memcmp(s, "check", 5) == 0 ? 0 : -1;
	if (k == 1)
		out->url = s, out->url_len = len;
	else
		out->agent = s, out->agent_len = len;
	return 0;
}

/* Decode a check line; see wire_fast.h. */
int
wire_fast_check(
    const char *line, size_t len, char *scratch, struct wire_check *out)
{
	struct cur c = { (const unsigned char *)line,
		(const unsigned char *)line + len, scratch };
	unsigned seen = 0;
	int k;

	memset(out, 0, sizeof(*out));
	out->wait = 1;
	ws(&c);
	if (c.p >= c.end || *c.p++ != '{')
		return 0;
	for (;;) {
		ws(&c);
		if ((k = key(&c)) < 0 || (seen & 1u << k) ||
		    value(&c, k, out) == -1)
			return 0;
		seen |= 1u << k;
		ws(&c);
		if (c.p < c.end && *c.p == ',') {
			c.p++;
			continue;
		}
		if (c.p >= c.end || *c.p++ != '}')
			return 0;
		break;
	}
	ws(&c);
	return c.p == c.end && (seen & 7u) == 7u;
}
