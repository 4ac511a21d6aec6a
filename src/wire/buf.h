/*
 * buf.h: the one growing byte buffer, with a cap. Every buffer that grows
 * with untrusted input (answers, fetched bodies and headers, lines read by
 * the client) is a struct buf with its own limit: an append that would pass
 * the limit, or that finds no memory, stores nothing and marks the buffer,
 * so a writer can append freely and check once at the end.
 */
#ifndef ROBOTS_BUF_H
#define ROBOTS_BUF_H

#include <stddef.h>
#include <string.h>

enum buf_state {
	BUF_OK,
	BUF_FULL,  /* an append would have passed max */
	BUF_NOMEM, /* malloc failed */
};

struct buf {
	char *p;
	size_t len, cap;
	size_t max; /* bytes it may hold; 0 means no limit */
	enum buf_state state;
};

/* An empty buffer that may hold max bytes (0: no limit). */
#define BUF_INIT(m) ((struct buf){ .max = (m) })

/* buf_add() when the bytes do not simply fit in the room there is. */
int buf_add_grow(struct buf *, const void *, size_t);

/*
 * Append len bytes; 0, or -1 when they would pass the cap or memory ran out
 * (nothing is appended then, and every later append fails too). Inline:
 * answers are written a few bytes at a time into room already there.
 */
static inline int
buf_add(struct buf *b, const void *s, size_t len)
{
	if (len > 0 && len <= b->cap - b->len && b->state == BUF_OK &&
	    (b->max == 0 || len <= b->max - b->len)) {
		memcpy(b->p + b->len, s, len);
		b->len += len;
		return 0;
	}
	return buf_add_grow(b, s, len);
}
/* A literal, e.g. buf_lit(b, "\r\n"). */
#define buf_lit(b, s) buf_add((b), "" s, sizeof(s) - 1) /* literals only */
/*
 * Append as much of len bytes as fits under the cap; the count appended.
 * Passing the cap marks the buffer BUF_FULL. For bodies cut at a limit.
 */
size_t buf_add_some(struct buf *, const void *, size_t);
/*
 * Room for at least want more bytes (within the cap: less near it) at
 * b->p + b->len, for a read() straight into the buffer, which then adds
 * what it read to b->len. The room's size, or 0 when the buffer is full or
 * memory ran out (state set).
 */
size_t buf_reserve(struct buf *, size_t want);
/* Make the buffer a NUL-terminated string (the NUL is not counted). */
int buf_terminate(struct buf *);
/* Forget the contents and the error, keep the memory and the cap. */
void buf_reset(struct buf *);
/* Free the memory; the cap stays. */
void buf_clear(struct buf *);
/* Hand the bytes over (caller frees), leaving the buffer empty. */
char *buf_take(struct buf *, size_t *len);

#endif /* ROBOTS_BUF_H */
