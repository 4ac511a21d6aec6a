/*
 * buf.c: the capped growing buffer (buf.h). Capacity doubles from 256
 * bytes, so appending n bytes one at a time costs O(n) copies.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/buf.h"

#define BUF_MIN 256

/* Make room for len more bytes within the cap; 0 or -1 (state set). */
static int
buf_grow(struct buf *b, size_t len)
{
	size_t cap = b->cap != 0 ? b->cap : BUF_MIN;
	char *p;

	if (b->state != BUF_OK)
		return -1;
	if (len > SIZE_MAX / 2 - b->len ||
	    (b->max != 0 && b->len + len > b->max)) {
		b->state = BUF_FULL;
		return -1;
	}
	if (b->len + len <= b->cap)
		return 0;
	while (cap < b->len + len)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->state = BUF_NOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

int
buf_add_grow(struct buf *b, const void *s, size_t len)
{
	if (len == 0)
		return b->state == BUF_OK ? 0 : -1;
	if (buf_grow(b, len) == -1)
		return -1;
	memcpy(b->p + b->len, s, len);
	b->len += len;
	return 0;
}

size_t
buf_add_some(struct buf *b, const void *s, size_t len)
{
	size_t room = len;

	if (b->state != BUF_OK)
		return 0;
	if (b->max != 0 && len > b->max - b->len)
		room = b->max - b->len;
	if (room > 0 && buf_add(b, s, room) == -1)
		return 0;
	if (room < len)
		b->state = BUF_FULL;
	return room;
}

size_t
buf_reserve(struct buf *b, size_t want)
{
	if (b->state == BUF_OK && b->max != 0 && want > b->max - b->len)
		want = b->max - b->len;
	if (want == 0) {
		if (b->state == BUF_OK)
			b->state = BUF_FULL;
		return 0;
	}
	if (buf_grow(b, want) == -1)
		return 0;
	return b->cap - b->len;
}

int
buf_terminate(struct buf *b)
{
	if (b->state == BUF_NOMEM)
		return -1;
	if (b->len + 1 > b->cap) {
		size_t max = b->max;
		enum buf_state st = b->state;

		/* The NUL is not content: it may sit past the cap. */
		b->max = 0;
		b->state = BUF_OK;
		if (buf_grow(b, 1) == -1) {
			b->max = max;
			return -1;
		}
		b->max = max;
		b->state = st;
	}
	b->p[b->len] = '\0';
	return 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->state = BUF_OK;
}

void
buf_clear(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->state = BUF_OK;
}

char *
buf_take(struct buf *b, size_t *len)
{
	char *p = b->p;

	if (len != NULL)
		*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	b->state = BUF_OK;
	return p;
}
