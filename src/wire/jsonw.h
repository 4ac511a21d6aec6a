/*
 * jsonw.h: a JSON text writer on struct buf, the one answer encoder.
 * Appends never fail loudly: a full or failed buffer is seen once, at the
 * end, in its state.
 */
#ifndef ROBOTS_JSONW_H
#define ROBOTS_JSONW_H

#include <stddef.h>

#include <jansson.h>

#include "wire/buf.h"

/*
 * A JSON string of arbitrary bytes: valid UTF-8 as is (controls, quote and
 * backslash escaped as jansson escapes them); if the bytes are not valid
 * UTF-8, each byte outside a valid sequence (and NUL) is written as %XX.
 */
void jw_str(struct buf *, const char *s, size_t len);
void jw_int(struct buf *, long long);
/* v when it is above 0, else null: 0 and below stand for "none". */
void jw_int_or_null(struct buf *, long long v);
/* A real with 15 significant digits, as jansson writes it. */
void jw_real(struct buf *, double);
/* Any JSON value (NULL is null), as jansson writes it. */
void jw_json(struct buf *, const json_t *);
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
size_t jw_utf8_len(const unsigned char *s, size_t n);
/* Bytes at s (at most n) that a JSON string holds as they are, in ASCII. */
size_t jw_plain_len(const unsigned char *s, size_t n);

/*
 * The structural writer: objects, arrays and keys, with the commas and the
 * closers placed by construction. A site says what it writes (a key, a
 * value, a container) and never writes ',', '}' or ']' itself:
 *
 *	struct jw w;
 *	jw_init(&w, b);
 *	jw_obj(&w);
 *	jw_kint(&w, "id", 7);
 *	jw_key(&w, "usage");
 *	jw_obj(&w);
 *	...
 *	jw_end(&w);		(closes usage with '}')
 *	jw_end(&w);		(closes the answer)
 *
 * A value after jw_key() is that key's value; any other value is the next
 * element of the open array (or the top-level value). Nesting past
 * JW_DEPTH, or an end with nothing open, is a bug of the caller: it marks
 * the buffer BUF_FULL, so the answer is refused as too large rather than
 * sent malformed, and jw_ok() tells tests.
 */
#define JW_DEPTH 31

struct jw {
	struct buf *b;
	unsigned depth;     /* containers open; 0 at the top level */
	unsigned keyed;     /* a key was written: the next value is its value */
	unsigned long more; /* bit d: the container at depth d has a member */
	unsigned long arr;  /* bit d: the container at depth d is an array;
	                       bit 0 is set: the top level takes no key */
	unsigned bad;       /* misuse seen (also marks b) */
};

/* A writer at the top level of b. */
static inline void
jw_init(struct jw *w, struct buf *b)
{
	*w = (struct jw){ .b = b, .arr = 1 };
}

void jw_misuse(struct jw *);

/* Before a value: its comma, unless it is a key's value or the first. */
static inline void
jw_pre(struct jw *w)
{
	unsigned long bit = 1ul << w->depth;

	if (w->keyed) {
		w->keyed = 0;
		return;
	}
	if (!(w->arr & bit)) {
		jw_misuse(w); /* an object's member needs a key */
		return;
	}
	if (w->more & bit)
		buf_add(w->b, ",", 1);
	w->more |= bit;
}

/* A key in the open object, from a literal: jw_key(w, "allowed"). */
#define jw_key(w, k) jw_key_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1)

/*
 * lit is ,"key":value, a whole member (or ,"key": when jw_key_lit() goes
 * on to the value): the comma is written only after a member. Each branch
 * adds a length the compiler knows from the literal, so the copy is a few
 * moves rather than a call.
 */
static inline void
jw_member_lit(struct jw *w, const char *lit, size_t n)
{
	unsigned long bit = 1ul << w->depth;

	if (((w->arr & bit) | w->keyed) != 0) {
		jw_misuse(w);
		return;
	}
	if (w->more & bit)
		buf_add(w->b, lit, n);
	else
		buf_add(w->b, lit + 1, n - 1);
	w->more |= bit;
}

/* lit is ,"key": and the next value is that key's. */
static inline void
jw_key_lit(struct jw *w, const char *lit, size_t n)
{
	jw_member_lit(w, lit, n);
	w->keyed = !w->bad;
}

/*
 * A whole member from a literal ,"key":value in one copy (the comma only
 * after a member): jw_kvlit(w, "ok", "true"). The value must be one
 * whole JSON value.
 */
#define jw_kvlit(w, k, v)                                                      \
	jw_member_lit((w), ",\"" k "\":" v, sizeof(",\"" k "\":" v) - 1)

/* A key of any bytes (escaped as jw_str() escapes them). */
void jw_key_str(struct jw *, const char *s, size_t len);

/*
 * Before a member of the open object given as text: its comma after a
 * member; 0 (and misuse) when no object is open or a key waits.
 */
static inline int
jw_member_pre(struct jw *w)
{
	unsigned long bit = 1ul << w->depth;

	if (((w->arr & bit) | w->keyed) != 0) {
		jw_misuse(w);
		return 0;
	}
	if (w->more & bit)
		buf_add(w->b, ",", 1);
	w->more |= bit;
	return 1;
}

/*
 * A key that is a name of the program's own (a purpose, a directive): bytes
 * that need no escaping, written as they are, without jw_str()'s scan.
 */
static inline void
jw_key_name(struct jw *w, const char *s, size_t len)
{
	if (!jw_member_pre(w))
		return;
	w->keyed = 1;
	buf_add(w->b, "\"", 1);
	buf_add(w->b, s, len);
	buf_add(w->b, "\":", 2);
}

/* Open an object or an array as the next value. */
static inline void
jw_open(struct jw *w, char c, int arr)
{
	jw_pre(w);
	if (w->depth + 1 >= JW_DEPTH) {
		jw_misuse(w);
		return;
	}
	buf_add(w->b, &c, 1);
	w->depth++;
	w->more &= ~(1ul << w->depth);
	if (arr)
		w->arr |= 1ul << w->depth;
	else
		w->arr &= ~(1ul << w->depth);
}
#define jw_obj(w) jw_open((w), '{', 0)
#define jw_arr(w) jw_open((w), '[', 1)

/* Close the innermost open object or array. */
static inline void
jw_end(struct jw *w)
{
	if (w->depth == 0 || w->keyed) {
		jw_misuse(w);
		return;
	}
	buf_add(w->b, (w->arr >> w->depth & 1) ? "]" : "}", 1);
	w->depth--;
}

/* Values: the next element, or the value of the key just written. */
static inline void
jw_vstr(struct jw *w, const char *s, size_t len)
{
	jw_pre(w);
	jw_str(w->b, s, len);
}
static inline void
jw_vint(struct jw *w, long long v)
{
	jw_pre(w);
	jw_int(w->b, v);
}
static inline void
jw_vint_or_null(struct jw *w, long long v)
{
	jw_pre(w);
	jw_int_or_null(w->b, v);
}
static inline void
jw_vreal(struct jw *w, double v)
{
	jw_pre(w);
	jw_real(w->b, v);
}
static inline void
jw_vbool(struct jw *w, int v)
{
	jw_pre(w);
	if (v)
		buf_add(w->b, "true", 4);
	else
		buf_add(w->b, "false", 5);
}
static inline void
jw_vnull(struct jw *w)
{
	jw_pre(w);
	buf_add(w->b, "null", 4);
}
static inline void
jw_vjson(struct jw *w, const json_t *v)
{
	jw_pre(w);
	jw_json(w->b, v);
}
/* A value already encoded as JSON text (one whole value). */
static inline void
jw_vraw(struct jw *w, const char *s, size_t len)
{
	jw_pre(w);
	buf_add(w->b, s, len);
}
/* A value from a literal: jw_vlit(w, "[]"). */
#define jw_vlit(w, s) jw_vraw((w), "" s, sizeof(s) - 1)

/*
 * A string known to need no escaping (an origin the URL splitter found
 * plain, a name of the program's own from a table), copied as it is.
 */
static inline void
jw_vplain(struct jw *w, const char *s, size_t len)
{
	struct buf *b = w->b;

	jw_pre(w);
	if (len + 2 <= b->cap - b->len && b->state == BUF_OK &&
	    (b->max == 0 || len + 2 <= b->max - b->len)) {
		b->p[b->len] = '"'; /* in one go: the room is there */
		memcpy(b->p + b->len + 1, s, len);
		b->p[b->len + len + 1] = '"';
		b->len += len + 2;
		return;
	}
	buf_add(b, "\"", 1);
	buf_add(b, s, len);
	buf_add(b, "\"", 1);
}

/* Key and value at once. */
#define jw_kstr(w, k, s, n) (jw_key(w, k), jw_vstr((w), (s), (n)))
#define jw_kint(w, k, v) (jw_key(w, k), jw_vint((w), (v)))
#define jw_kint_or_null(w, k, v) (jw_key(w, k), jw_vint_or_null((w), (v)))
#define jw_kreal(w, k, v) (jw_key(w, k), jw_vreal((w), (v)))
#define jw_kbool(w, k, v)                                                      \
	((v) ? jw_kvlit(w, k, "true") : jw_kvlit(w, k, "false"))
#define jw_knull(w, k) jw_kvlit(w, k, "null")
#define jw_kjson(w, k, v) (jw_key(w, k), jw_vjson((w), (v)))
#define jw_klit(w, k, s) (jw_key(w, k), jw_vlit((w), s))
#define jw_kplain(w, k, s, n) (jw_key(w, k), jw_vplain((w), (s), (n)))

/* Everything opened was closed and nothing was misused. */
static inline int
jw_ok(const struct jw *w)
{
	return !w->bad && w->depth == 0 && !w->keyed;
}

#endif /* ROBOTS_JSONW_H */
