/*
 * proto.c: newline-delimited JSON requests and answers (docs/protocol.md),
 * with jansson. Validates every field a request carries so that ops.c only
 * sees well-typed requests; owns nothing beyond the objects it returns.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "proto.h"

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

/* The fields of a check: url xor urls, agent, optional wait. */
static const char *
proto_decode_check(json_t *o, struct request *req)
{
	json_t *urls = json_object_get(o, "urls");
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
	return NULL;
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

/* Validate the fields an op needs; a static message on error. */
static const char *
proto_decode_fields(json_t *o, struct request *req)
{
	json_t *v;

	switch (req->op) {
	case OP_CHECK:
		return proto_decode_check(o, req);
	case OP_INSPECT:
	case OP_PURGE:
		return proto_decode_origin(o, req);
	case OP_CLOCK:
		v = json_object_get(o, "advance");
		if (!json_is_number(v))
			return "clock needs 'advance', a number of seconds";
		req->advance = json_number_value(v);
		return NULL;
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

/* A new answer object carrying id (null when NULL) and "ok". */
static json_t *
proto_answer(json_t *id, int ok)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_object_set(o, "id", id != NULL ? id : json_null());
	json_object_set_new(o, "ok", json_boolean(ok));
	return o;
}

/* {"id":id,"ok":true}, to be filled in by the op. */
json_t *
proto_ok(json_t *id)
{
	return proto_answer(id, 1);
}

/* {"id":..,"ok":false,"error":{"code":..,"message":..}}. */
json_t *
proto_error(json_t *id, enum proto_err e, const char *msg)
{
	json_t *o = proto_answer(id, 0);

	if (o != NULL)
		json_object_set_new(o, "error",
		    json_pack("{s:s, s:o}", "code", proto_err_code(e),
		        "message", proto_string(msg, strlen(msg))));
	return o;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t
proto_utf8_len(const unsigned char *s, size_t n)
{
	size_t want, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (want > n)
		return 0;
	for (i = 1; i < want; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((want == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (want == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return want;
}

/* Make room for len more bytes; 0, or -1 (nomem set) when it cannot. */
static int
pbuf_grow(struct pbuf *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (b->nomem)
		return -1;
	if (b->len + len <= b->cap)
		return 0;
	while (cap < b->len + len)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->nomem = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Append bytes as they are. */
void
pbuf_add(struct pbuf *b, const char *s, size_t len)
{
	if (len > 0 && pbuf_grow(b, len) == 0) {
		memcpy(b->p + b->len, s, len);
		b->len += len;
	}
}

/* Append one byte escaped the way jansson escapes it in a string. */
static void
pbuf_escape(struct pbuf *b, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };

	switch (c) {
	case '"':
		pbuf_lit(b, "\\\"");
		return;
	case '\\':
		pbuf_lit(b, "\\\\");
		return;
	case '\b':
		pbuf_lit(b, "\\b");
		return;
	case '\f':
		pbuf_lit(b, "\\f");
		return;
	case '\n':
		pbuf_lit(b, "\\n");
		return;
	case '\r':
		pbuf_lit(b, "\\r");
		return;
	case '\t':
		pbuf_lit(b, "\\t");
		return;
	}
	pbuf_add(b, e, sizeof(e));
}

/*
 * The inside of a JSON string. strict: the bytes must be UTF-8 (-1 when
 * they are not); NUL is then escaped as jansson escapes it. Not strict:
 * each byte outside a valid sequence, NUL included, is written as %XX.
 */
static int
pbuf_str_body(struct pbuf *b, const char *s, size_t len, int strict)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	char pct[3] = { '%' };
	size_t i = 0, n, run = 0;

	while (i < len) {
		if (u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' &&
		    u[i] != '\\') {
			run++, i++; /* the common case: plain ASCII */
			continue;
		}
		n = u[i] < 0x80 ? 1 : proto_utf8_len(u + i, len - i);
		if (n > 1) {
			run += n, i += n;
			continue;
		}
		if (n == 0 && strict)
			return -1;
		pbuf_add(b, s + i - run, run);
		run = 0;
		if (n == 1 && (u[i] != 0 || strict))
			pbuf_escape(b, u[i]);
		else {
			pct[1] = hex[u[i] >> 4];
			pct[2] = hex[u[i] & 0xf];
			pbuf_add(b, pct, sizeof(pct));
		}
		i++;
	}
	pbuf_add(b, s + i - run, run);
	return 0;
}

/*
 * A JSON string of bytes, as proto_string() encodes them: valid UTF-8 as
 * is (controls, quote and backslash escaped), otherwise with each byte
 * that is not part of a valid sequence as %XX.
 */
void
pbuf_str(struct pbuf *b, const char *s, size_t len)
{
	size_t start = b->len;

	pbuf_lit(b, "\"");
	if (pbuf_str_body(b, s, len, 1) == -1) {
		b->len = start + 1;
		pbuf_str_body(b, s, len, 0);
	}
	pbuf_lit(b, "\"");
}

/* A decimal integer. */
void
pbuf_int(struct pbuf *b, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u =
	    v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	pbuf_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

/*
 * A real with 15 significant digits, written as jansson writes it: no '+'
 * and no leading zeros in the exponent, ".0" when it looks integral.
 */
void
pbuf_real(struct pbuf *b, double v)
{
	char buf[40], *e, *digits;
	int n = snprintf(buf, sizeof(buf), "%.15g", v);

	if ((e = strchr(buf, 'e')) != NULL) {
		e++;
		digits = e + (*e == '-');
		e += *e == '-' || *e == '+' ? 1 : 0;
		while (*e == '0' && e[1] != '\0')
			e++;
		memmove(digits, e, strlen(e) + 1);
		n = (int)strlen(buf);
	} else if (strchr(buf, '.') == NULL && n + 2 < (int)sizeof(buf)) {
		buf[n++] = '.';
		buf[n++] = '0';
	}
	pbuf_add(b, buf, (size_t)n);
}

/* Any JSON value: ids and URLs directly, anything else through jansson. */
void
pbuf_json(struct pbuf *b, const json_t *v)
{
	char *s;

	if (v == NULL || json_is_null(v)) {
		pbuf_lit(b, "null");
		return;
	}
	if (json_is_integer(v)) {
		pbuf_int(b, json_integer_value(v));
		return;
	}
	if (json_is_string(v)) {
		pbuf_str(b, json_string_value(v), json_string_length(v));
		return;
	}
	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
	                           JSON_REAL_PRECISION(15))) == NULL) {
		b->nomem = 1;
		return;
	}
	pbuf_add(b, s, strlen(s));
	free(s);
}

/* Free the buffer's bytes. */
void
pbuf_clear(struct pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* A JSON string of bytes; bytes that are not UTF-8 become %XX. */
json_t *
proto_string(const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	struct pbuf b = { 0 };
	char pct[3] = { '%' };
	size_t i, n;
	json_t *j;

	if ((j = json_stringn(s, len)) != NULL)
		return j;
	for (i = 0; i < len; i += n) {
		if (u[i] != 0 && (n = proto_utf8_len(u + i, len - i)) > 0) {
			pbuf_add(&b, s + i, n);
			continue;
		}
		pct[1] = hex[u[i] >> 4];
		pct[2] = hex[u[i] & 0xf];
		pbuf_add(&b, pct, sizeof(pct));
		n = 1;
	}
	j = b.nomem ? NULL : json_stringn(b.p, b.len);
	pbuf_clear(&b);
	return j;
}

/* A real as pbuf_real() writes it. */
json_t *
proto_real(double v)
{
	return json_real(v);
}

/* One compact JSON line with its '\n'; takes the reference to o. */
char *
proto_encode(json_t *o, size_t *len)
{
	char *s, *line;
	size_t n;

	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (s == NULL)
		return NULL;
	n = strlen(s);
	if ((line = realloc(s, n + 2)) == NULL) {
		free(s);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}
