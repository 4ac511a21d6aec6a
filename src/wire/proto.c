/*
 * proto.c: newline-delimited JSON requests and answers (docs/protocol.md).
 * Requests are decoded with jansson, and every field a request carries is
 * validated so that the dispatcher only sees well-typed requests; answers
 * are framed here and written as JSON text by jsonw.c.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/proto.h"

static const struct {
	const char *name;
	enum proto_op op;
} proto_ops[] = {
	{ "check", OP_CHECK },
	{ "inspect", OP_INSPECT },
	{ "purge", OP_PURGE },
	{ "stats", OP_STATS },
	{ "ping", OP_PING },
	{ "clock", OP_CLOCK },
	{ "history", OP_HISTORY },
	{ "watch", OP_WATCH },
};

static const char *const proto_codes[] = {
	[PE_NONE] = "none",
	[PE_BAD_JSON] = "bad_json",
	[PE_BAD_REQUEST] = "bad_request",
	[PE_UNKNOWN_OP] = "unknown_op",
	[PE_BAD_URL] = "bad_url",
	[PE_UNSUPPORTED_SCHEME] = "unsupported_scheme",
	[PE_LINE_TOO_LONG] = "line_too_long",
	[PE_OVERLOADED] = "overloaded",
	[PE_TIMEOUT] = "timeout",
	[PE_NOT_CACHED] = "not_cached",
	[PE_INTERNAL] = "internal",
	[PE_FORBIDDEN] = "forbidden",
	[PE_CONFIG] = "config",
};

/* The protocol error for a URL or origin that librobots refused. */
enum proto_err
proto_url_err(enum url_err e)
{
	switch (e) {
	case URL_OK:
		return PE_NONE;
	case URL_BAD:
		return PE_BAD_URL;
	case URL_UNSUPPORTED_SCHEME:
		return PE_UNSUPPORTED_SCHEME;
	case URL_NOMEM:
		break;
	}
	return PE_INTERNAL;
}

/* The contract's name of an error code. */
const char *
proto_err_code(enum proto_err e)
{
	if ((size_t)e >= sizeof(proto_codes) / sizeof(proto_codes[0]))
		return "internal";
	return proto_codes[e];
}

/*
 * Fetch an optional string field: 0 when absent, 1 when a string (*s, *len
 * set), -1 when present with another type.
 */
static int
proto_get_string(json_t *o, const char *key, const char **s, size_t *len)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return -1;
	*s = json_string_value(v);
	*len = json_string_length(v);
	return 1;
}

/* Optional boolean field into *b (left alone when absent); -1 if mistyped. */
static int
proto_get_bool(json_t *o, const char *key, int *b)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return -1;
	*b = json_is_true(v);
	return 1;
}

/* See proto.h. */
size_t
proto_token_len(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
	                      s[i] == '-' || s[i] == '_'))
		i++;
	return i;
}

/*
 * The control tokens of a check: an array of at most PROTO_MAX_TOKENS
 * strings, each starting with a product token, no two reducing to the same
 * product token (the answer is keyed by it).
 */
static const char *
proto_decode_tokens(json_t *o, struct request *req)
{
	json_t *tokens = json_object_get(o, "tokens"), *t, *u;
	size_t i, j, n;

	if (tokens == NULL)
		return NULL;
	if (!json_is_array(tokens))
		return "'tokens' must be an array of strings";
	if (json_array_size(tokens) > PROTO_MAX_TOKENS)
		return "'tokens' holds at most 16 tokens";
	json_array_foreach(tokens, i, t)
	{
		if (!json_is_string(t))
			return "'tokens' must be an array of strings";
		n = proto_token_len(
		    json_string_value(t), json_string_length(t));
		if (n == 0)
			return "each of 'tokens' must start with a product "
			       "token (letters, '-', '_')";
		if (n > PROTO_MAX_TOKEN_LEN)
			return "a product token in 'tokens' is at most 256 "
			       "characters";
		for (j = 0; j < i; j++) {
			u = json_array_get(tokens, j);
			if (proto_token_len(json_string_value(u),
			        json_string_length(u)) == n &&
			    strncasecmp(json_string_value(u),
			        json_string_value(t), n) == 0)
				return "'tokens' names a product token twice";
		}
	}
	req->tokens = tokens;
	return NULL;
}

/* An array of [string, string] pairs whose names are not empty. */
static int
proto_pairs_ok(const json_t *a)
{
	const json_t *pair;
	size_t i;

	if (!json_is_array(a))
		return 0;
	json_array_foreach(a, i, pair)
	{
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_string(json_array_get(pair, 0)) ||
		    !json_is_string(json_array_get(pair, 1)) ||
		    json_string_length(json_array_get(pair, 0)) == 0)
			return 0;
	}
	return 1;
}

/*
 * A check's "page" (wire/page.h reads it): an object whose optional
 * "headers" and "meta" are arrays of [name, value] string pairs.
 */
static const char *
proto_decode_page(const json_t *page)
{
	const json_t *v;

	if (!json_is_object(page))
		return "'page' must be an object";
	if ((v = json_object_get(page, "headers")) != NULL &&
	    !proto_pairs_ok(v))
		return "'page.headers' must be an array of [name, value] "
		       "string pairs, names not empty";
	if ((v = json_object_get(page, "meta")) != NULL && !proto_pairs_ok(v))
		return "'page.meta' must be an array of [name, content] "
		       "string pairs, names not empty";
	return NULL;
}

/* The fields of a check: url xor urls, agent, optional wait. */
static const char *
proto_decode_check(json_t *o, struct request *req)
{
	json_t *urls = json_object_get(o, "urls");
	const char *msg;
	int has_url;
	size_t i;

	if ((has_url = proto_get_string(o, "url", &req->url, &req->url_len)) ==
	    -1)
		return "'url' must be a string";
	if (urls != NULL) {
		if (!json_is_array(urls))
			return "'urls' must be an array of strings";
		for (i = 0; i < json_array_size(urls); i++)
			if (!json_is_string(json_array_get(urls, i)))
				return "'urls' must be an array of strings";
		if (json_array_size(urls) > PROTO_MAX_URLS)
			return "'urls' holds at most 1000 URLs";
		req->urls = urls;
	}
	if (has_url == (urls != NULL))
		return "a check needs exactly one of 'url' and 'urls'";
	if (proto_get_string(o, "agent", &req->agent, &req->agent_len) != 1)
		return "a check needs 'agent', a string";
	if (proto_get_bool(o, "wait", &req->wait) == -1)
		return "'wait' must be true or false";
	if (proto_get_bool(o, "usage", &req->usage) == -1)
		return "'usage' must be true or false";
	if (proto_get_bool(o, "tdm", &req->tdm) == -1)
		return "'tdm' must be true or false";
	if ((req->page = json_object_get(o, "page")) != NULL) {
		if (urls != NULL)
			return "'page' goes with one 'url', not 'urls'";
		if ((msg = proto_decode_page(req->page)) != NULL)
			return msg;
	}
	return proto_decode_tokens(o, req);
}

/* The origin of inspect and purge (purge may say "all":true instead). */
static const char *
proto_decode_origin(json_t *o, struct request *req)
{
	int has = proto_get_string(o, "origin", &req->origin, &req->origin_len);

	if (has == -1)
		return "'origin' must be a string";
	if (req->op == OP_PURGE) {
		if (proto_get_bool(o, "all", &req->all) == -1)
			return "'all' must be true or false";
		if (has == (req->all != 0))
			return "purge needs 'origin' or \"all\":true";
		return NULL;
	}
	return has ? NULL : "inspect needs 'origin', a string";
}

/* An array of 1 to max strings, or -1; each non-empty, printable, at most
 * len bytes when len > 0. */
static int
proto_strings(json_t *a, size_t max, size_t len)
{
	const char *s;
	size_t i, j, n;

	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > max)
		return -1;
	for (i = 0; i < json_array_size(a); i++) {
		s = json_string_value(json_array_get(a, i));
		n = json_string_length(json_array_get(a, i));
		if (s == NULL || n == 0 || (len > 0 && n > len))
			return -1;
		for (j = 0; len > 0 && j < n; j++)
			if ((unsigned char)s[j] < 0x20 || s[j] == 0x7f)
				return -1;
	}
	return 0;
}

static int proto_resource(const json_t *);

/*
 * A watch's "resources": a non-empty array of "robots.txt" and "tdmrep"
 * as PROTO_RES_* bits into *bits; -1 when it is not.
 */
static int
proto_resources(const json_t *a, unsigned *bits)
{
	size_t i, n = json_array_size(a);
	int r;

	if (!json_is_array(a) || n == 0 || n > 2)
		return -1;
	*bits = 0;
	for (i = 0; i < n; i++) {
		if ((r = proto_resource(json_array_get(a, i))) == -1)
			return -1;
		*bits |= r ? PROTO_RES_TDMREP : PROTO_RES_ROBOTS;
	}
	return 0;
}

/* The fields of a watch: origins xor all, optional agents and resources. */
static const char *
proto_decode_watch(json_t *o, struct request *req)
{
	json_t *v;

	if (proto_get_bool(o, "all", &req->all) == -1)
		return "'all' must be true or false";
	if ((v = json_object_get(o, "origins")) != NULL) {
		if (proto_strings(v, PROTO_MAX_WATCH_ORIGINS, 0) == -1)
			return "'origins' must be an array of 1 to 1000 "
			       "strings";
		req->origins = v;
	}
	if ((req->origins != NULL) == (req->all != 0))
		return "watch needs 'origins' or \"all\":true";
	if ((v = json_object_get(o, "agents")) != NULL) {
		if (proto_strings(
		        v, PROTO_MAX_WATCH_AGENTS, PROTO_MAX_AGENT_LEN) == -1)
			return "'agents' must be an array of 1 to 16 "
			       "printable strings of at most 128 bytes";
		req->agents = v;
	}
	if ((v = json_object_get(o, "resources")) != NULL &&
	    proto_resources(v, &req->resources) == -1)
		return "'resources' must be an array of \"robots.txt\" and "
		       "\"tdmrep\"";
	return NULL;
}

/* A "resource": 0 for "robots.txt", 1 for "tdmrep", else -1. */
static int
proto_resource(const json_t *v)
{
	const char *s = json_string_value(v);

	if (s != NULL && strcmp(s, "robots.txt") == 0)
		return 0;
	return s != NULL && strcmp(s, "tdmrep") == 0 ? 1 : -1;
}

/* Validate the fields an op needs; a static message on error. */
static const char *
proto_decode_fields(json_t *o, struct request *req)
{
	json_t *v;

	switch (req->op) {
	case OP_CHECK:
		return proto_decode_check(o, req);
	case OP_INSPECT:
	case OP_HISTORY:
		if ((v = json_object_get(o, "resource")) != NULL &&
		    (req->tdmrep = proto_resource(v)) == -1)
			return "'resource' must be \"robots.txt\" or "
			       "\"tdmrep\"";
		return proto_decode_origin(o, req);
	case OP_PURGE:
		return proto_decode_origin(o, req);
	case OP_CLOCK:
		v = json_object_get(o, "advance");
		if (!json_is_number(v))
			return "clock needs 'advance', a number of seconds";
		req->advance = json_number_value(v);
		return NULL;
	case OP_WATCH:
		return proto_decode_watch(o, req);
	case OP_STATS:
	case OP_PING:
		break;
	}
	return NULL;
}

/* Decode a request line; see proto.h. */
int
proto_decode(const char *line, size_t len, int test_clock, struct request *req,
    enum proto_err *err, const char **msg)
{
	json_error_t jerr;
	const char *op;
	size_t i;

	memset(req, 0, sizeof(*req));
	req->wait = 1;
	*err = PE_BAD_JSON;
	*msg = "the request is not valid JSON";
	if ((req->root = json_loadb(
	         line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr)) == NULL)
		return -1;
	*err = PE_BAD_REQUEST;
	*msg = "a request is a JSON object";
	if (!json_is_object(req->root))
		return -1;
	if ((req->id = json_object_get(req->root, "id")) != NULL)
		json_incref(req->id);
	*msg = "a request needs 'op', a string";
	if ((op = json_string_value(json_object_get(req->root, "op"))) == NULL)
		return -1;
	*err = PE_UNKNOWN_OP;
	*msg = "unknown op";
	for (i = 0; i < sizeof(proto_ops) / sizeof(proto_ops[0]); i++)
		if (strcmp(op, proto_ops[i].name) == 0 &&
		    json_string_length(json_object_get(req->root, "op")) ==
		        strlen(op))
			break;
	if (i == sizeof(proto_ops) / sizeof(proto_ops[0]) ||
	    (proto_ops[i].op == OP_CLOCK && !test_clock))
		return -1;
	req->op = proto_ops[i].op;
	*err = PE_BAD_REQUEST;
	if ((*msg = proto_decode_fields(req->root, req)) != NULL)
		return -1;
	*err = PE_NONE;
	return 0;
}

/* Release what a decoded request holds. */
void
proto_request_clear(struct request *req)
{
	json_decref(req->id);
	json_decref(req->root);
	memset(req, 0, sizeof(*req));
}

/*
 * {"id":ID,"ok":true|false: the start of every answer line, with w a
 * writer on b inside the answer's object.
 */
void
proto_begin(struct jw *w, struct buf *b, const json_t *id, int ok)
{
	jw_init(w, b);
	jw_obj(w);
	jw_kjson(w, "id", id);
	jw_kbool(w, "ok", ok);
}

/* The end of an answer line: closes the answer's object of w. */
void
proto_end(struct jw *w)
{
	jw_end(w);
	buf_lit(w->b, "\n");
}

/* The member "error":{"code":..,"message":..} in the open object of w. */
void
proto_error_member(struct jw *w, enum proto_err e, const char *msg)
{
	const char *code = proto_err_code(e);

	jw_key(w, "error");
	jw_obj(w);
	jw_kstr(w, "code", code, strlen(code));
	jw_kstr(w, "message", msg, strlen(msg));
	jw_end(w);
}

/* A whole error answer line. */
void
proto_error(struct buf *b, const json_t *id, enum proto_err e, const char *msg)
{
	struct jw w;

	proto_begin(&w, b, id, 0);
	proto_error_member(&w, e, msg);
	proto_end(&w);
}
