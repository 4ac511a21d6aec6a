/*
 * wire_fast.c: the check request fast path (see wire_fast.h). A cursor
 * walks the line once; every "not sure" is a plain return 0. Strings are
 * checked as jansson checks them (UTF-8, no raw controls, \u escapes with
 * their surrogate pairs), so that a string taken here is the string
 * jansson would have decoded.
 */
#include "wire/wire_fast.h"

#include <string.h>

#include "wire/jsonw.h"
#include "robots.h"

struct cur {
	const unsigned char *p, *end;
	char *scratch; /* where the next unescaped string goes */
	struct wire_str *urls;
	size_t max_urls;
	struct wire_page *page; /* NULL: a "page" is not taken */
	struct wire_pair *pairs;
	size_t max_pairs, npairs;
};

enum key { K_OP, K_URL, K_URLS, K_AGENT, K_ID, K_WAIT, K_USAGE, K_TDM, K_PAGE };

/* A key's name. */
struct key_name {
	const char *name;
	size_t len;
};

/* Skip JSON whitespace, as jansson does. */
static void
ws(struct cur *c)
{
	/* one compare for the common case: no blank, a byte above ' ' */
	while (
	    c->p < c->end && *c->p <= ' ' &&
	    (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

/* The code unit of "uXXXX" at c->p, or -1. */
static long
hex4(struct cur *c)
{
	long v = 0;
	int i, h;

	if (c->end - c->p < 5 || *c->p != 'u')
		return -1;
	for (i = 1; i <= 4; i++) {
		if ((h = robots_hexval(c->p[i])) < 0)
			return -1;
		v = v << 4 | h;
	}
	c->p += 5;
	return v;
}

/* Code point cp as UTF-8 into the scratch space. */
static void
utf8(struct cur *c, long cp)
{
	unsigned char *o = (unsigned char *)c->scratch;

	if (cp < 0x80)
		*o++ = (unsigned char)cp;
	else if (cp < 0x800) {
		*o++ = (unsigned char)(0xc0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xe0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	c->scratch = (char *)o;
}

/*
 * One escape after the backslash at c->p[-1], its bytes into the scratch
 * space (never more than the escape's own); 0, or -1 where jansson would
 * refuse it: an unknown escape, a lone or unpaired surrogate.
 */
static int
unescape(struct cur *c)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	long cp, lo;

	if (c->p >= c->end)
		return -1;
	if (*c->p != 'u') {
		if (*c->p == '\0' || (e = strchr(from, *c->p)) == NULL)
			return -1;
		c->p++;
		*c->scratch++ = to[e - from];
		return 0;
	}
	if ((cp = hex4(c)) < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
		return -1;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (c->p >= c->end || *c->p++ != '\\' ||
		    (lo = hex4(c)) < 0xdc00 || lo > 0xdfff)
			return -1;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	utf8(c, cp);
	return 0;
}

/* Skip text that stands for itself: printable ASCII and valid UTF-8. */
static void
plain(struct cur *c)
{
	size_t n;

	for (;;) {
		c->p += jw_plain_len(c->p, (size_t)(c->end - c->p));
		if (c->p >= c->end || *c->p < 0x80 ||
		    (n = jw_utf8_len(c->p, (size_t)(c->end - c->p))) == 0)
			return;
		c->p += n;
	}
}

/* Copy the text [from, c->p) to the scratch space. */
static void
copy(struct cur *c, const unsigned char *from)
{
	memcpy(c->scratch, from, (size_t)(c->p - from));
	c->scratch += c->p - from;
}

/*
 * A string at c->p (just past its opening quote) into *s: borrowed from
 * the line when it has no escapes, else unescaped into the scratch space.
 * 0 on success, -1 otherwise.
 */
static int
string(struct cur *c, struct wire_str *s)
{
	const unsigned char *start = c->p, *run;
	char *out = NULL;

	c->p += jw_plain_len(c->p, (size_t)(c->end - c->p));
	s->plain = c->p < c->end && *c->p == '"';
	if (s->plain) { /* the common string */
		s->p = (const char *)start;
		s->len = (size_t)(c->p++ - start);
		return 0;
	}
	for (run = start;;) {
		plain(c);
		if (c->p >= c->end)
			return -1;
		if (*c->p == '"')
			break;
		if (*c->p != '\\')
			return -1; /* a control character or bad UTF-8 */
		if (out == NULL)
			out = c->scratch;
		copy(c, run);
		c->p++;
		if (unescape(c) == -1)
			return -1;
		run = c->p;
	}
	if (out == NULL) {
		s->p = (const char *)start;
		s->len = (size_t)(c->p - start);
	} else {
		copy(c, run);
		s->p = out;
		s->len = (size_t)(c->scratch - out);
	}
	c->p++;
	return 0;
}

/* A string value, with its opening quote. */
static int
string_value(struct cur *c, struct wire_str *s)
{
	if (c->p >= c->end || *c->p++ != '"')
		return -1;
	return string(c, s);
}

/*
 * A key: a plain string (no escapes) followed by ':'. Its index in
 * keys[n], or -1.
 */
static int
key_of(struct cur *c, const struct key_name *keys, size_t n)
{
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
	for (i = 0; i < n; i++) /* the first byte first: no call per key */
		if (keys[i].len == len && keys[i].name[0] == (char)start[0] &&
		    memcmp(keys[i].name, start, len) == 0)
			return (int)i;
	return -1;
}

/* A key of a check. */
static int
key(struct cur *c)
{
	static const struct key_name keys[] = { [K_OP] = { "op", 2 },
		[K_URL] = { "url", 3 },
		[K_URLS] = { "urls", 4 },
		[K_AGENT] = { "agent", 5 },
		[K_ID] = { "id", 2 },
		[K_WAIT] = { "wait", 4 },
		[K_USAGE] = { "usage", 5 },
		[K_TDM] = { "tdm", 3 },
		[K_PAGE] = { "page", 4 } };

	return key_of(c, keys, sizeof(keys) / sizeof(keys[0]));
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

/*
 * The step after a member or an element: 1 past the closer close, 0 past
 * a comma and the blanks after it, -1 at anything else.
 */
static int
next_item(struct cur *c, unsigned char close)
{
	ws(c);
	if (c->p >= c->end)
		return -1;
	if (*c->p == close) {
		c->p++;
		return 1;
	}
	if (*c->p++ != ',')
		return -1;
	ws(c);
	return 0;
}

/*
 * A JSON array at c->p, each element read by one(c, arg): 0, or -1 when
 * one fails or the array is not well formed.
 */
static int
elements(struct cur *c, int (*one)(struct cur *, void *), void *arg)
{
	int r;

	if (c->p >= c->end || *c->p++ != '[')
		return -1;
	ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		if (one(c, arg) == -1 || (r = next_item(c, ']')) == -1)
			return -1;
		if (r == 1)
			return 0;
	}
}

/* One URL of a batch, at most c->max_urls of them. */
static int
url_element(struct cur *c, void *arg)
{
	struct wire_check *out = arg;

	if (out->nurls == c->max_urls)
		return -1;
	return string_value(c, &out->urls[out->nurls++]);
}

/* A batch's array of URL strings. */
static int
array(struct cur *c, struct wire_check *out)
{
	out->urls = c->urls;
	return elements(c, url_element, out);
}

/* One [name, value] pair of strings, the name not empty, into *p. */
static int
pair(struct cur *c, struct wire_pair *p)
{
	if (c->p >= c->end || *c->p++ != '[')
		return -1;
	ws(c);
	if (string_value(c, &p->name) == -1 || p->name.len == 0)
		return -1;
	ws(c);
	if (c->p >= c->end || *c->p++ != ',')
		return -1;
	ws(c);
	if (string_value(c, &p->value) == -1)
		return -1;
	p->field = 0;
	ws(c);
	return c->p < c->end && *c->p++ == ']' ? 0 : -1;
}

/* One pair of an array, at most c->max_pairs in all; counted in *arg. */
static int
pair_element(struct cur *c, void *arg)
{
	if (c->npairs == c->max_pairs || pair(c, &c->pairs[c->npairs]) == -1)
		return -1;
	c->npairs++;
	(*(size_t *)arg)++;
	return 0;
}

/* An array of pairs, into the next of c->pairs: *first, *n of them. */
static int
pairs(struct cur *c, struct wire_pair **first, size_t *n)
{
	*first = c->pairs + c->npairs;
	*n = 0;
	return elements(c, pair_element, n);
}

/* The "page" object: "headers" and "meta" at most once each, no other. */
static int
page(struct cur *c)
{
	static const struct key_name keys[] = { { "headers", 7 },
		{ "meta", 4 } };
	struct wire_page *pg = c->page;
	int k, r, seen[2] = { 0, 0 };

	if (c->p >= c->end || *c->p++ != '{')
		return -1;
	pg->present = 1;
	ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		if ((k = key_of(c, keys, 2)) < 0 || seen[k]++ ||
		    (k == 0 ? pairs(c, &pg->headers, &pg->nheaders)
		            : pairs(c, &pg->meta, &pg->nmeta)) == -1 ||
		    (r = next_item(c, '}')) == -1)
			return -1;
		if (r == 1)
			return 0;
	}
}

/* The value of key k into out; -1 when it is not the expected kind. */
static int
value(struct cur *c, enum key k, struct wire_check *out)
{
	struct wire_str s;

	switch (k) {
	case K_ID:
		out->has_id = 1;
		return integer(c, &out->id);
	case K_WAIT:
		return boolean(c, &out->wait);
	case K_USAGE:
		return boolean(c, &out->usage);
	case K_TDM:
		return boolean(c, &out->tdm);
	case K_PAGE:
		return page(c);
	case K_URLS:
		return array(c, out);
	case K_OP:
		if (string_value(c, &s) == -1)
			return -1;
		return s.len == 5 && memcmp(s.p, "check", 5) == 0 ? 0 : -1;
	case K_URL:
		if (string_value(c, &s) == -1)
			return -1;
		out->url = s.p, out->url_len = s.len;
		return 0;
	case K_AGENT:
		if (string_value(c, &s) == -1)
			return -1;
		out->agent = s.p, out->agent_len = s.len;
		return 0;
	}
	return -1;
}

/* Decode the check line of c into out; see wire_fast.h. */
static int
check(struct cur *c, struct wire_check *out)
{
	const unsigned need = 1u << K_OP | 1u << K_AGENT;
	const unsigned one = 1u << K_URL | 1u << K_URLS;
	unsigned seen = 0;
	int k, r;

	memset(out, 0, sizeof(*out));
	out->wait = 1;
	ws(c);
	if (c->p >= c->end || *c->p++ != '{')
		return 0;
	for (;;) {
		ws(c);
		if ((k = key(c)) < 0 || (seen & 1u << k) ||
		    value(c, (enum key)k, out) == -1)
			return 0;
		seen |= 1u << k;
		if ((r = next_item(c, '}')) == -1)
			return 0;
		if (r == 1)
			break;
	}
	ws(c);
	/* url xor urls: both or neither is proto_decode()'s bad_request */
	if (c->p != c->end || (seen & need) != need ||
	    ((seen & one) != 1u << K_URL && (seen & one) != 1u << K_URLS))
		return 0;
	/* a batch with a page is proto_decode()'s bad_request */
	return !((seen & 1u << K_PAGE) && (seen & 1u << K_URLS));
}

/* Decode a check line that may have a page; see wire_fast.h. */
int
wire_fast_check_page(const char *line, size_t len, char *scratch,
    struct wire_str *urls, size_t max_urls, struct wire_pair *pairs,
    size_t max_pairs, struct wire_check *out, struct wire_page *page)
{
	struct cur c = { (const unsigned char *)line,
		(const unsigned char *)line + len, scratch, urls, max_urls,
		page, pairs, max_pairs, 0 };

	memset(page, 0, sizeof(*page));
	if (!check(&c, out))
		return 0;
	out->page = page->present ? page : NULL;
	return 1;
}
