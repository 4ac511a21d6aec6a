/*
 * jsonw.c: JSON text written straight into a buffer, the one encoder of
 * every answer robotsd and robotsctl write. Strings, integers and reals
 * come out byte for byte as jansson's json_dumps(JSON_COMPACT,
 * JSON_REAL_PRECISION(15)) writes them (tests/fuzz/fuzz_proto.c checks it
 * on every input), so a client cannot tell the two apart.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire/buf.h"
#include "wire/jsonw.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
size_t
jw_utf8_len(const unsigned char *s, size_t n)
{
	size_t want, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (want > n)
		return 0;
	for (i = 1; i < want; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((want == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (want == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return want;
}

/* Does any byte of x hold a value below n (n <= 128)? */
#define JW_ONES 0x0101010101010101u
static inline uint64_t
jw_any_below(uint64_t x, uint64_t n)
{
	return (x - JW_ONES * n) & ~x & JW_ONES * 0x80;
}

/*
 * The bytes of x that do not stand for themselves: a set high bit in each
 * such byte, and maybe in bytes after the first (the borrows of
 * jw_any_below()), never before it.
 */
static inline uint64_t
jw_special(uint64_t x)
{
	return (x & JW_ONES * 0x80) | jw_any_below(x, 0x20) |
	       jw_any_below(x ^ JW_ONES * '"', 1) |
	       jw_any_below(x ^ JW_ONES * '\\', 1);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The offset of the first special byte of the 8 at s (m: their mask). */
#define JW_FIRST(m) ((size_t)__builtin_ctzll(m) >> 3)
#endif

/*
 * The number of bytes at s (at most n) that stand for themselves in a JSON
 * string: printable ASCII but '"' and backslash. Eight bytes at a time, for
 * URLs and origins are long runs of them; on a little-endian machine the
 * last few bytes too (the last eight again, or the few padded), and the
 * first special byte of a word found by its mask, not byte by byte.
 */
size_t
jw_plain_len(const unsigned char *s, size_t n)
{
	uint64_t x, m;
	size_t i = 0;

	while (n - i >= 8) {
		memcpy(&x, s + i, 8);
#ifdef JW_FIRST
		if ((m = jw_special(x)) != 0)
			return i + JW_FIRST(m);
#else
		if ((m = jw_special(x)) != 0)
			break;
#endif
		i += 8;
	}
#ifdef JW_FIRST
	if (i == n)
		return n;
	if (n >= 8) {
		i = n - 8; /* the bytes before it are plain: seen */
		memcpy(&x, s + i, 8);
	} else {
		x = JW_ONES * 'a'; /* plain padding past the n bytes */
		memcpy(&x, s, n);
	}
	m = jw_special(x);
	return m == 0 ? n : i + JW_FIRST(m);
#else
	while (
	    i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
#endif
}

/* Append one byte escaped the way jansson escapes it in a string. */
static void
jw_escape(struct buf *b, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };

	switch (c) {
	case '"':
		buf_lit(b, "\\\"");
		return;
	case '\\':
		buf_lit(b, "\\\\");
		return;
	case '\b':
		buf_lit(b, "\\b");
		return;
	case '\f':
		buf_lit(b, "\\f");
		return;
	case '\n':
		buf_lit(b, "\\n");
		return;
	case '\r':
		buf_lit(b, "\\r");
		return;
	case '\t':
		buf_lit(b, "\\t");
		return;
	}
	buf_add(b, e, sizeof(e));
}

/*
 * The inside of a JSON string. strict: the bytes must be UTF-8 (-1 when
 * they are not); NUL is then escaped as jansson escapes it. Not strict:
 * each byte outside a valid sequence, NUL included, is written as %XX.
 */
static int
jw_str_body(struct buf *b, const char *s, size_t len, int strict)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	char pct[3] = { '%' };
	size_t i = 0, n, run = 0;

	while (i < len) {
		if ((n = jw_plain_len(u + i, len - i)) > 0) {
			run += n, i += n; /* the common case: plain ASCII */
			continue;
		}
		n = u[i] < 0x80 ? 1 : jw_utf8_len(u + i, len - i);
		if (n > 1) {
			run += n, i += n;
			continue;
		}
		if (n == 0 && strict)
			return -1;
		buf_add(b, s + i - run, run);
		run = 0;
		if (n == 1 && (u[i] != 0 || strict))
			jw_escape(b, u[i]);
		else {
			pct[1] = hex[u[i] >> 4];
			pct[2] = hex[u[i] & 0xf];
			buf_add(b, pct, sizeof(pct));
		}
		i++;
	}
	buf_add(b, s + i - run, run);
	return 0;
}

/*
 * A JSON string of bytes: valid UTF-8 as
 * is (controls, quote and backslash escaped), otherwise with each byte
 * that is not part of a valid sequence as %XX.
 */
void
jw_str(struct buf *b, const char *s, size_t len)
{
	size_t start = b->len;

	buf_lit(b, "\"");
	if (jw_str_body(b, s, len, 1) == -1) {
		b->len = start + 1;
		jw_str_body(b, s, len, 0);
	}
	buf_lit(b, "\"");
}

/* A decimal integer. */
void
jw_int(struct buf *b, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u =
	    v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	buf_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* See jsonw.h: an HTTP status, or null when there was none. */
void
jw_int_or_null(struct buf *b, long long v)
{
	if (v > 0)
		jw_int(b, v);
	else
		buf_lit(b, "null");
}

/*
 * A real with 15 significant digits, written as jansson writes it: no '+'
 * and no leading zeros in the exponent, ".0" when it looks integral. A
 * whole number of fewer than 16 digits (a Crawl-delay, mostly) is that
 * number and ".0", without snprintf().
 */
void
jw_real(struct buf *b, double v)
{
	char buf[40], *e, *digits;
	int n;

	if (!signbit(v) && v < 1e15 && v == floor(v)) {
		jw_int(b, (long long)v);
		buf_lit(b, ".0");
		return;
	}
	n = snprintf(buf, sizeof(buf), "%.15g", v);

	if ((e = strchr(buf, 'e')) != NULL) {
		e++;
		digits = e + (*e == '-');
		e += *e == '-' || *e == '+' ? 1 : 0;
		while (*e == '0' && e[1] != '\0')
			e++;
		memmove(digits, e, strlen(e) + 1);
		n = (int)strlen(buf);
	} else if (strchr(buf, '.') == NULL && n + 2 < (int)sizeof(buf)) {
		buf[n++] = '.';
		buf[n++] = '0';
	}
	buf_add(b, buf, (size_t)n);
}

/* Any JSON value: ids and URLs directly, anything else through jansson. */
void
jw_json(struct buf *b, const json_t *v)
{
	char *s;

	if (v == NULL || json_is_null(v)) {
		buf_lit(b, "null");
		return;
	}
	if (json_is_integer(v)) {
		jw_int(b, json_integer_value(v));
		return;
	}
	if (json_is_string(v)) {
		jw_str(b, json_string_value(v), json_string_length(v));
		return;
	}
	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
	                           JSON_REAL_PRECISION(15))) == NULL) {
		b->state = BUF_NOMEM;
		return;
	}
	buf_add(b, s, strlen(s));
	free(s);
}

/* See jsonw.h: a caller's bug, kept from reaching a client as bad JSON. */
void
jw_misuse(struct jw *w)
{
	w->s = JW_BAD;
	if (w->b->state == BUF_OK)
		w->b->state = BUF_FULL;
}

/* See jsonw.h: a key of any bytes. */
void
jw_key_str(struct jw *w, const char *s, size_t len)
{
	if (!jw_member_pre(w, JW_KEYED))
		return;
	jw_str(w->b, s, len);
	buf_lit(w->b, ":");
}

/* See jsonw.h: jw_vplain() as an element, or when the room is not there. */
void
jw_vplain_slow(struct jw *w, const char *s, size_t len)
{
	jw_pre(w);
	buf_add(w->b, "\"", 1);
	buf_add(w->b, s, len);
	buf_add(w->b, "\"", 1);
}

/* See jsonw.h: jw_member_plain() when the room is not simply there. */
void
jw_member_plain_slow(
    struct jw *w, const char *lit, size_t n, const char *s, size_t len)
{
	jw_member_lit(w, lit, n, JW_MORE);
	buf_add(w->b, s, len);
	buf_add(w->b, "\"", 1);
}
