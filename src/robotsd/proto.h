/*
 * proto.h: the wire codec. One JSON request line -> struct request, and
 * answer objects -> one JSON line. No sockets and no cache here: ops.c
 * decides what an answer says, server.c moves the bytes.
 */
#ifndef ROBOTSD_PROTO_H
#define ROBOTSD_PROTO_H

#include <stddef.h>

#include <jansson.h>

#include "robots.h"

/* URLs in one batch check, at most. */
#define PROTO_MAX_URLS 1000

enum proto_op {
	OP_CHECK,
	OP_INSPECT,
	OP_PURGE,
	OP_STATS,
	OP_PING,
	OP_CLOCK, /* tests only, under --test-clock */
};

/* The contract's error codes; proto_err_code() names each. */
enum proto_err {
	PE_NONE,
	PE_BAD_JSON,
	PE_BAD_REQUEST,
	PE_UNKNOWN_OP,
	PE_BAD_URL,
	PE_UNSUPPORTED_SCHEME,
	PE_LINE_TOO_LONG,
	PE_OVERLOADED,
	PE_TIMEOUT,
	PE_NOT_CACHED,
	PE_INTERNAL,
};

/*
 * A decoded request. Strings and arrays are borrowed from root, which the
 * request owns; id is a new reference (JSON null when absent).
 */
struct request {
	json_t *root;
	json_t *id;
	enum proto_op op;
	const char *url; /* check: one URL, or NULL */
	size_t url_len;
	json_t *urls;      /* check: array of strings, or NULL */
	const char *agent; /* check */
	size_t agent_len;
	int wait;           /* check: default 1 */
	const char *origin; /* inspect, purge */
	size_t origin_len;
	int all;        /* purge */
	double advance; /* clock */
};

/*
 * Decode one line (without its '\n'). On error returns -1 with *err and a
 * static *msg set; req->id is still set when the line was a JSON object
 * so the error answer can carry it. proto_request_clear() in both cases.
 */
int proto_decode(const char *line, size_t len, int test_clock,
    struct request *req, enum proto_err *err, const char **msg);
void proto_request_clear(struct request *);

const char *proto_err_code(enum proto_err);
/* bad_url, unsupported_scheme or internal for a librobots URL error. */
enum proto_err proto_url_err(enum url_err);

/* A new answer object {"id":id,"ok":true}; id may be NULL (null). */
json_t *proto_ok(json_t *id);
/* A new error answer {"id":..,"ok":false,"error":{"code":..,"message":..}}. */
json_t *proto_error(json_t *id, enum proto_err, const char *msg);
/* A JSON string of arbitrary bytes: invalid UTF-8 is percent-encoded. */
json_t *proto_string(const char *s, size_t len);
/*
 * A growing buffer that the hot path (check answers) writes JSON text into
 * directly, without building jansson objects. Its output is byte for byte
 * what proto_encode() makes of the same values. When memory runs out,
 * nomem is set and further writes are dropped; check it at the end.
 */
struct pbuf {
	char *p;
	size_t len, cap;
	int nomem;
};

void pbuf_add(struct pbuf *, const char *s, size_t len);
/* A literal, e.g. pbuf_lit(b, "\"ok\":true"). */
#define pbuf_lit(b, s) pbuf_add((b), (s), sizeof(s) - 1)
/* A JSON string of bytes, as proto_string() would encode them. */
void pbuf_str(struct pbuf *, const char *s, size_t len);
void pbuf_int(struct pbuf *, long long);
/* A JSON number as proto_real() would encode it. */
void pbuf_real(struct pbuf *, double);
/* Any JSON value (NULL is null), as jansson writes it. */
void pbuf_json(struct pbuf *, const json_t *);
void pbuf_clear(struct pbuf *);

/* A real number (crawl delays, times) with 15 significant digits. */
json_t *proto_real(double);

/*
 * Serialize o as one compact line ending in '\n'; steals the reference.
 * Returns an allocated buffer (*len bytes) or NULL when memory runs out.
 */
char *proto_encode(json_t *o, size_t *len);

#endif /* ROBOTSD_PROTO_H */
