/*
 * jsonw.h: a JSON text writer on struct buf, the one answer encoder.
 * Appends never fail loudly: a full or failed buffer is seen once, at the
 * end, in its state.
 */
#ifndef ROBOTS_JSONW_H
#define ROBOTS_JSONW_H

#include <stddef.h>

#include <jansson.h>

struct buf;

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

#endif /* ROBOTS_JSONW_H */
