/*
 * wire_fast.h: a decoder for the common request line only,
 *   {"op":"check","url":"...","agent":"...","id":N,"wait":B}
 * in any key order ("id" and "wait" optional), without building a JSON
 * tree. It accepts a line only when it can tell exactly what the full
 * decoder (proto_decode(), jansson) would make of it; on anything else it
 * answers "not mine" and the caller decodes the line the slow way.
 */
#ifndef ROBOTSD_WIRE_FAST_H
#define ROBOTSD_WIRE_FAST_H

#include <stddef.h>

/* A single-URL check, as proto_decode() would have decoded it. */
struct wire_check {
	long long id; /* when has_id */
	int has_id;   /* 0: no "id" key (the answer's id is null) */
	const char *url;
	size_t url_len;
	const char *agent;
	size_t agent_len;
	int wait; /* 1 unless "wait":false */
};

/*
 * Decode line (len bytes, without its '\n'). Returns 1 and fills *out
 * when the line is a well-formed single-URL check; the strings point into
 * line, or into scratch (at least len bytes) when they held escapes.
 * Returns 0 for anything else (other ops, batches, errors, duplicate or
 * unknown keys, non-ASCII text, escapes above U+007F, ids that are not
 * small non-negative integers): decode that line with proto_decode().
 */
int wire_fast_check(
    const char *line, size_t len, char *scratch, struct wire_check *out);

#endif /* ROBOTSD_WIRE_FAST_H */
