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
 * sent malformed, and jw_ok() tells tests. The checks stay in every build:
 * each step costs one load and one compare of a single state word.
 */
#define JW_DEPTH 31

/*
 * The state of the innermost open container (the top level counts as an
 * array). JW_BAD, once misuse set it, fails every later step.
 */
enum {
	JW_MORE = 1,  /* it has a member: the next one takes a comma */
	JW_ARR = 2,   /* it is an array */
	JW_KEYED = 4, /* an object whose key was written: its value comes */
	JW_BAD = 8,   /* misused */
};

struct jw {
	struct buf *b;
	unsigned s;       /* JW_* of the innermost open container */
	unsigned long up; /* bit i: the container i levels out is an array;
	                     the highest bit set stands for the top level */
};

/* A writer at the top level of b. */
static inline void
jw_init(struct jw *w, struct buf *b)
{
	*w = (struct jw){ .b = b, .s = JW_ARR, .up = 1 };
}

void jw_misuse(struct jw *);

/* Before a value: its comma, unless it is a key's value or the first. */
static inline void
jw_pre(struct jw *w)
{
	unsigned s = w->s;

	if (s == JW_KEYED) {
		w->s = JW_MORE;
		return;
	}
	if ((s | JW_MORE) != (JW_ARR | JW_MORE)) {
		jw_misuse(w); /* an object's member needs a key */
		return;
	}
	w->s = JW_ARR | JW_MORE;
	if (s & JW_MORE)
		buf_add(w->b, ",", 1);
}

/* A key in the open object, from a literal: jw_key(w, "allowed"). */
#define jw_key(w, k) jw_key_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1)

/*
 * lit is ,"key":value, a whole member (or ,"key": when next is JW_KEYED
 * and a value follows, or when the caller writes the value at once): the
 * comma is written only after a member. Each branch adds a length the
 * compiler knows from the literal, so the copy is a few moves rather than
 * a call. 0 on misuse.
 */
static inline int
jw_member_lit(struct jw *w, const char *lit, size_t n, unsigned next)
{
	unsigned s = w->s;

	if (s > JW_MORE) {
		jw_misuse(w); /* an array, a key's value, or misused */
		return 0;
	}
	w->s = next;
	if (s != 0)
		buf_add(w->b, lit, n);
	else
		buf_add(w->b, lit + 1, n - 1);
	return 1;
}
/* The key k, its value then written by a function of struct buf. */
#define JW_KVAL(w, k)                                                          \
	jw_member_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1, JW_MORE)

/* lit is ,"key": and the next value is that key's. */
static inline void
jw_key_lit(struct jw *w, const char *lit, size_t n)
{
	(void)jw_member_lit(w, lit, n, JW_KEYED);
}

/*
 * A whole member from a literal ,"key":value in one copy (the comma only
 * after a member): jw_kvlit(w, "ok", "true"). The value must be one
 * whole JSON value.
 */
#define jw_kvlit(w, k, v)                                                      \
	jw_member_lit(                                                         \
	    (w), ",\"" k "\":" v, sizeof(",\"" k "\":" v) - 1, JW_MORE)

/* Two whole members from literals in one copy: "k1":v1,"k2":v2. */
#define jw_kvlit2(w, k1, v1, k2, v2)                                           \
	jw_member_lit((w), ",\"" k1 "\":" v1 ",\"" k2 "\":" v2,                \
	    sizeof(",\"" k1 "\":" v1 ",\"" k2 "\":" v2) - 1, JW_MORE)

/* A key of any bytes (escaped as jw_str() escapes them). */
void jw_key_str(struct jw *, const char *s, size_t len);

/*
 * Before a member of the open object written as text: its comma after a
 * member; the state is next then. 0 (and misuse) when no object is open
 * or a key waits.
 */
static inline int
jw_member_pre(struct jw *w, unsigned next)
{
	unsigned s = w->s;

	if (s > JW_MORE) {
		jw_misuse(w);
		return 0;
	}
	w->s = next;
	if (s != 0)
		buf_add(w->b, ",", 1);
	return 1;
}

/*
 * A key that is a name of the program's own (a purpose, a directive): bytes
 * that need no escaping, written as they are, without jw_str()'s scan.
 */
static inline void
jw_key_name(struct jw *w, const char *s, size_t len)
{
	if (!jw_member_pre(w, JW_KEYED))
		return;
	buf_add(w->b, "\"", 1);
	buf_add(w->b, s, len);
	buf_add(w->b, "\":", 2);
}

/*
 * The container just begun becomes the innermost, in state inner; 0 (and
 * misuse) when the writer was misused or JW_DEPTH containers are open.
 */
static inline int
jw_push(struct jw *w, unsigned inner)
{
	if ((w->s & JW_BAD) != 0 || (w->up >> (JW_DEPTH - 1)) != 0) {
		jw_misuse(w);
		return 0;
	}
	w->up = w->up << 1 | (w->s & JW_ARR) >> 1;
	w->s = inner;
	return 1;
}

/*
 * Open an object or an array as the next value: lit is its opener and
 * what follows it at once (a first key, or a first member), which leaves
 * it in state inner.
 */
static inline void
jw_open(struct jw *w, const char *lit, size_t n, unsigned inner)
{
	jw_pre(w);
	if (jw_push(w, inner))
		buf_add(w->b, lit, n);
}
#define jw_obj(w) jw_open((w), "{", 1, 0)
#define jw_arr(w) jw_open((w), "[", 1, JW_ARR)
/* An object whose first key is k: jw_obj() and jw_key() in one copy. */
#define jw_obj_key(w, k)                                                       \
	jw_open((w), "{\"" k "\":", sizeof("{\"" k "\":") - 1, JW_KEYED)
/* An object whose first member is k and the literal v, in one copy. */
#define jw_obj_kvlit(w, k, v)                                                  \
	jw_open((w), "{\"" k "\":" v, sizeof("{\"" k "\":" v) - 1, JW_MORE)

/*
 * A member of the open object whose value is a container opened here: lit
 * is ,"key": and the opener; the container is then in state inner.
 */
static inline void
jw_member_open(struct jw *w, const char *lit, size_t n, unsigned inner)
{
	unsigned s = w->s;

	if (s > JW_MORE) {
		jw_misuse(w);
		return;
	}
	w->s = JW_MORE;
	if (!jw_push(w, inner))
		return;
	if (s != 0)
		buf_add(w->b, lit, n);
	else
		buf_add(w->b, lit + 1, n - 1);
}
/* jw_key(w, k) and jw_obj(w), or jw_arr(w), in one copy. */
#define jw_kobj(w, k)                                                          \
	jw_member_open((w), ",\"" k "\":{", sizeof(",\"" k "\":{") - 1, 0)
/* jw_kobj(w, k) and jw_key(w, k2) in one copy. */
#define jw_kobj_key(w, k, k2)                                                  \
	jw_member_open((w),                                                    \
	    ",\"" k "\":{\"" k2 "\":", sizeof(",\"" k "\":{\"" k2 "\":") - 1,  \
	    JW_KEYED)
#define jw_karr(w, k)                                                          \
	jw_member_open((w), ",\"" k "\":[", sizeof(",\"" k "\":[") - 1, JW_ARR)

/* Close the innermost open object or array. */
static inline void
jw_end(struct jw *w)
{
	unsigned s = w->s;

	if (s > (JW_ARR | JW_MORE) || w->up == 1) {
		jw_misuse(w); /* a key waits, misused, or nothing is open */
		return;
	}
	w->s = JW_MORE | (unsigned)(w->up & 1) << 1;
	w->up >>= 1;
	buf_add(w->b, (s & JW_ARR) ? "]" : "}", 1);
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
/* A C string, or null when s is NULL. */
static inline void
jw_vcstr_or_null(struct jw *w, const char *s)
{
	if (s != NULL)
		jw_vstr(w, s, strlen(s));
	else
		jw_vnull(w);
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
void jw_vplain_slow(struct jw *, const char *s, size_t len);
static inline void
jw_vplain(struct jw *w, const char *s, size_t len)
{
	struct buf *b = w->b;

	if (w->s != JW_KEYED || len + 2 > b->cap - b->len ||
	    b->state != BUF_OK || (b->max != 0 && len + 2 > b->max - b->len)) {
		jw_vplain_slow(w, s, len); /* an element, or no room */
		return;
	}
	w->s = JW_MORE;
	b->p[b->len] = '"'; /* in one go: the room is there */
	memcpy(b->p + b->len + 1, s, len);
	b->p[b->len + len + 1] = '"';
	b->len += len + 2;
}

void jw_member_plain_slow(
    struct jw *, const char *lit, size_t n, const char *s, size_t len);
/*
 * A member: lit is ,"key":" (the comma written only after a member), then
 * the plain string s and its closing quote. With one check of the room
 * when it is there, as for jw_vplain().
 */
static inline void
jw_member_plain(
    struct jw *w, const char *lit, size_t n, const char *s, size_t len)
{
	struct buf *b = w->b;
	unsigned st = w->s;
	char *p;

	if (st > JW_MORE || n + len + 1 > b->cap - b->len ||
	    b->state != BUF_OK ||
	    (b->max != 0 && n + len + 1 > b->max - b->len)) {
		jw_member_plain_slow(w, lit, n, s, len);
		return;
	}
	w->s = JW_MORE;
	p = b->p + b->len;
	if (st != 0) {
		memcpy(p, lit, n);
		p += n;
	} else {
		memcpy(p, lit + 1, n - 1);
		p += n - 1;
	}
	memcpy(p, s, len);
	p[len] = '"';
	b->len = (size_t)(p - b->p) + len + 1;
}

/* Key and value at once (the value written straight after the key). */
#define jw_kstr(w, k, s, n) (JW_KVAL(w, k) ? jw_str((w)->b, (s), (n)) : (void)0)
#define jw_kint(w, k, v) (JW_KVAL(w, k) ? jw_int((w)->b, (v)) : (void)0)
#define jw_kint_or_null(w, k, v)                                               \
	(JW_KVAL(w, k) ? jw_int_or_null((w)->b, (v)) : (void)0)
#define jw_kreal(w, k, v) (JW_KVAL(w, k) ? jw_real((w)->b, (v)) : (void)0)
#define jw_kbool(w, k, v)                                                      \
	((v) ? jw_kvlit(w, k, "true") : jw_kvlit(w, k, "false"))
#define jw_knull(w, k) jw_kvlit(w, k, "null")
#define jw_kjson(w, k, v) (JW_KVAL(w, k) ? jw_json((w)->b, (v)) : (void)0)
#define jw_klit(w, k, s) (jw_key(w, k), jw_vlit((w), s))
#define jw_kplain(w, k, s, n)                                                  \
	jw_member_plain(                                                       \
	    (w), ",\"" k "\":\"", sizeof(",\"" k "\":\"") - 1, (s), (n))

/* Everything opened was closed and nothing was misused. */
static inline int
jw_ok(const struct jw *w)
{
	return w->up == 1 && (w->s | JW_MORE) == (JW_ARR | JW_MORE);
}

#endif /* ROBOTS_JSONW_H */
