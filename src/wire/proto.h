/*
 * proto.h: the wire codec, shared by robotsd and robotsctl. One JSON
 * request line -> struct request, and the framing of answer lines. No
 * sockets and no cache here: the dispatcher decides what an answer says,
 * the connection layer moves the bytes.
 */
#ifndef ROBOTS_PROTO_H
#define ROBOTS_PROTO_H

#include <stddef.h>

#include <jansson.h>

#include "robots.h"

/* URLs in one batch check, at most. */
#define PROTO_MAX_URLS 1000
/* Control tokens in one check ("tokens"), at most. */
#define PROTO_MAX_TOKENS 16
/* Characters of a control token's product token, at most (the answer's key). */
#define PROTO_MAX_TOKEN_LEN 256

enum proto_op {
	OP_CHECK,
	OP_INSPECT,
	OP_PURGE,
	OP_STATS,
	OP_PING,
	OP_CLOCK, /* tests only, under --test-clock */
	OP_HISTORY,
	OP_WATCH,
};

/* A watch: origins, agents and an agent's bytes, at most. */
#define PROTO_MAX_WATCH_ORIGINS 1000
#define PROTO_MAX_WATCH_AGENTS 16
/* The resources a watch names ("resources"). */
#define PROTO_RES_ROBOTS 1u
#define PROTO_RES_TDMREP 2u
#define PROTO_MAX_AGENT_LEN 128

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
	PE_FORBIDDEN, /* an admin op from a peer without the right */
	PE_CONFIG,    /* robotsd's config file does not load */
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
	int usage;          /* check: "usage":true */
	int tdm;            /* check: "tdm":true */
	json_t *tokens;     /* check: array of <= 16 distinct tokens, or NULL */
	json_t *page;       /* check of one URL: its valid "page", or NULL */
	const char *origin; /* inspect, purge */
	size_t origin_len;
	int tdmrep;      /* inspect, history: "resource":"tdmrep" (1, else 0) */
	int all;         /* purge, watch */
	json_t *origins; /* watch: array of strings, or NULL */
	json_t *agents;  /* watch: array of strings, or NULL */
	unsigned resources; /* watch: PROTO_RES_* bits; 0: robots.txt's */
	double advance;     /* clock */
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
/*
 * The length of the product token that s starts with (its leading run of
 * letters, '-' and '_', as librobots reduces an agent); 0 when none.
 */
size_t proto_token_len(const char *s, size_t len);
/* bad_url, unsupported_scheme or internal for a librobots URL error. */
enum proto_err proto_url_err(enum url_err);

struct buf;
struct jw;
/*
 * Answers are written as JSON text by the structural writer (jsonw.h) into
 * a struct buf: proto_begin() starts w on b and writes {"id":ID,"ok":true
 * (or false), the op adds members through w, proto_end() closes the
 * object and the line with "}\n". id may be NULL (null).
 */
void proto_begin(struct jw *, struct buf *, const json_t *id, int ok);
void proto_end(struct jw *);
/* The member "error":{"code":..,"message":..} in the open object of w. */
void proto_error_member(struct jw *, enum proto_err, const char *msg);
/* A whole error answer line. */
void proto_error(
    struct buf *, const json_t *id, enum proto_err, const char *msg);

#endif /* ROBOTS_PROTO_H */
