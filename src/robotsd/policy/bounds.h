/*
 * bounds.h: the caps that keep memory use fixed whatever a peer sends: a
 * client's request line (--max-line; an over-long line is answered once and
 * dropped as it arrives, never buffered whole) and an origin's response
 * header values (BOUNDS_HEADER_MAX). Pure: decisions only; the callers own
 * the buffers.
 */
#ifndef ROBOTSD_BOUNDS_H
#define ROBOTSD_BOUNDS_H

#include <stddef.h>

/* A longer response header value (or a longer one to add to) is ignored. */
#define BOUNDS_HEADER_MAX 4096

/*
 * Append len bytes of v to the NUL-terminated value *slot (NULL: none yet),
 * joining repeats with ", ". 1 when stored, 0 when ignored because v or
 * the value so far is over BOUNDS_HEADER_MAX bytes, -1 when out of memory
 * (*slot unchanged).
 */
int bounds_header_join(char **slot, const char *v, size_t len);

/* What a connection does next with the input it holds. */
enum bounds_line {
	BOUNDS_WAIT,     /* wait for more input */
	BOUNDS_OVERFLOW, /* no '\n' and over the cap: drop all the input */
	BOUNDS_LINE,     /* a line of *len bytes: bounds_line_fits() decides */
	BOUNDS_TOO_LONG, /* a line of *len bytes over the cap: answer, drop */
	BOUNDS_SKIP,     /* the end of a dropped line: drop *len + 1 bytes */
};

/*
 * For n bytes of input whose first '\n' is at eol (-1: none yet), after
 * EOF or not, while dropping the rest of an over-long line or not, with
 * lines of at most max bytes (plus a '\r' before the '\n'). *len is set
 * for BOUNDS_LINE, BOUNDS_TOO_LONG and BOUNDS_SKIP; after handling it the
 * caller drops *len + 1 bytes. On BOUNDS_OVERFLOW it answers once (unless
 * dropping already), drops all n bytes and drops until the next '\n'.
 */
enum bounds_line bounds_request_line(
    size_t n, long eol, int eof, int dropping, size_t max, size_t *len);
/* 1 when a line of len bytes fits max: within it, or one '\r' over. */
int bounds_line_fits(const char *line, size_t len, size_t max);

#endif /* ROBOTSD_BOUNDS_H */
