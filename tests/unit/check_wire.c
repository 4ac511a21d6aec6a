/*
 * check_wire.c: the wire layer (src/wire). Each request shape of
 * docs/protocol.md decodes to the fields the dispatcher relies on; each
 * malformed one maps to the contract's error code; answers are one compact
 * line, written byte for byte as jansson would; the capped buffer keeps its
 * cap.
 */
#include <config.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/proto.h"
#include "test_main.h"

/*
 * The reference for a JSON string of arbitrary bytes: jansson's own string
 * when jansson takes the bytes as UTF-8, else the bytes with each one that
 * is not part of a valid sequence (and NUL) written as %XX.
 */
static json_t *
ref_string(const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc(3 * len + 1);
	size_t i, n, o = 0;
	json_t *j;

	if ((j = json_stringn(s, len)) != NULL) {
		free(out);
		return j;
	}
	for (i = 0; i < len; i += n) {
		if (u[i] != 0 && (n = jw_utf8_len(u + i, len - i)) > 0) {
			memcpy(out + o, s + i, n);
			o += n;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 0xf];
		n = 1;
	}
	j = json_stringn(out, o);
	free(out);
	return j;
}

/* Decode s; returns the error code (PE_NONE on success). */
static enum proto_err
decode(const char *s, struct request *req, int test_clock)
{
	enum proto_err err;
	const char *msg;

	proto_decode(s, strlen(s), test_clock, req, &err, &msg);
	return err;
}

/* The error a line decodes to, with the request released. */
static enum proto_err
decode_err(const char *s)
{
	struct request req;
	enum proto_err err = decode(s, &req, 0);

	proto_request_clear(&req);
	return err;
}

/* The buffer holds exactly the expected line; frees it. */
static void
assert_line(struct buf *b, const char *want)
{
	ck_assert_int_eq(b->state, BUF_OK);
	ck_assert_uint_eq(b->len, strlen(want));
	ck_assert_msg(memcmp(b->p, want, b->len) == 0, "wrote %.*s, want %s",
	    (int)b->len, b->p, want);
	buf_clear(b);
}

START_TEST(test_check_single_url_fields)
{
	struct request req;

	ck_assert_int_eq(
	    decode("{\"op\":\"check\",\"url\":\"https://a.test/x\","
	           "\"agent\":\"FooBot/2.1\",\"id\":7}",
	        &req, 0),
	    PE_NONE);
	ck_assert_int_eq(req.op, OP_CHECK);
	ck_assert_str_eq(req.url, "https://a.test/x");
	ck_assert_uint_eq(req.url_len, 16);
	ck_assert_str_eq(req.agent, "FooBot/2.1");
	ck_assert_ptr_null(req.urls);
	ck_assert_int_eq(req.wait, 1);
	ck_assert_int_eq(json_integer_value(req.id), 7);
	proto_request_clear(&req);
}
END_TEST

START_TEST(test_check_batch_and_wait_false)
{
	struct request req;

	ck_assert_int_eq(
	    decode("{\"op\":\"check\",\"urls\":[\"http://a.test/\","
	           "\"http://b.test/\"],\"agent\":\"x\","
	           "\"wait\":false}",
	        &req, 0),
	    PE_NONE);
	ck_assert_ptr_null(req.url);
	ck_assert_uint_eq(json_array_size(req.urls), 2);
	ck_assert_int_eq(req.wait, 0);
	ck_assert_ptr_null(req.id);
	proto_request_clear(&req);
}
END_TEST

START_TEST(test_check_usage_and_tokens)
{
	struct request req;

	ck_assert_int_eq(decode("{\"op\":\"check\",\"url\":\"http://a.test/\","
	                        "\"agent\":\"x\",\"usage\":true,\"tokens\":"
	                        "[\"Google-Extended\",\"CCBot/2.0\"]}",
	                     &req, 0),
	    PE_NONE);
	ck_assert_int_eq(req.usage, 1);
	ck_assert_uint_eq(json_array_size(req.tokens), 2);
	proto_request_clear(&req);
	ck_assert_int_eq(decode("{\"op\":\"check\",\"url\":\"http://a.test/\","
	                        "\"agent\":\"x\",\"usage\":false,"
	                        "\"tokens\":[]}",
	                     &req, 0),
	    PE_NONE);
	ck_assert_int_eq(req.usage, 0);
	ck_assert_uint_eq(json_array_size(req.tokens), 0);
	proto_request_clear(&req);
	ck_assert_int_eq(decode("{\"op\":\"check\",\"url\":\"http://a.test/\","
	                        "\"agent\":\"x\"}",
	                     &req, 0),
	    PE_NONE);
	ck_assert_int_eq(req.usage, 0);
	ck_assert_ptr_null(req.tokens);
	proto_request_clear(&req);
}
END_TEST

/* The product token a control token is keyed by. */
/* A product token of 256 characters is taken, one of 257 is not. */
START_TEST(test_token_length_limit)
{
	char line[400], tok[258];
	struct request req;

	memset(tok, 'a', 257);
	tok[256] = '\0';
	snprintf(line, sizeof(line),
	    "{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"x\","
	    "\"tokens\":[\"%s/1.0\"]}",
	    tok);
	ck_assert_int_eq(decode(line, &req, 0), PE_NONE);
	proto_request_clear(&req);
	tok[256] = 'a';
	tok[257] = '\0';
	snprintf(line, sizeof(line),
	    "{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"x\","
	    "\"tokens\":[\"%s\"]}",
	    tok);
	ck_assert_int_eq(decode_err(line), PE_BAD_REQUEST);
}
END_TEST

START_TEST(test_token_len_is_the_product_token)
{
	ck_assert_uint_eq(proto_token_len("Google-Extended", 15), 15);
	ck_assert_uint_eq(proto_token_len("CCBot/2.0", 9), 5);
	ck_assert_uint_eq(proto_token_len("my_bot 1", 8), 6);
	ck_assert_uint_eq(proto_token_len("MJ12bot", 7), 2);
	ck_assert_uint_eq(proto_token_len("*", 1), 0);
	ck_assert_uint_eq(proto_token_len("", 0), 0);
}
END_TEST

START_TEST(test_not_json_is_bad_json)
{
	ck_assert_int_eq(decode_err("nope"), PE_BAD_JSON);
	ck_assert_int_eq(decode_err("{\"op\":\"ping\""), PE_BAD_JSON);
	ck_assert_int_eq(decode_err("{\"op\":\"ping\"} trailing"), PE_BAD_JSON);
	ck_assert_int_eq(decode_err(""), PE_BAD_JSON);
}
END_TEST

START_TEST(test_json_that_is_not_an_object_is_bad_request)
{
	ck_assert_int_eq(decode_err("[1,2]"), PE_BAD_REQUEST);
	ck_assert_int_eq(decode_err("\"ping\""), PE_BAD_REQUEST);
	ck_assert_int_eq(decode_err("42"), PE_BAD_REQUEST);
}
END_TEST

START_TEST(test_missing_or_mistyped_fields_are_bad_request)
{
	static const char *const bad[] = {
		"{}",
		"{\"op\":7}",
		"{\"op\":\"check\",\"agent\":\"a\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\"}",
		"{\"op\":\"check\",\"url\":5,\"agent\":\"a\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":1}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"urls\":[],"
		"\"agent\":\"a\"}",
		"{\"op\":\"check\",\"urls\":\"http://a.test/"
		"\",\"agent\":\"a\"}",
		"{\"op\":\"check\",\"urls\":[1],\"agent\":\"a\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"wait\":\"no\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"usage\":1}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"usage\":\"true\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"usage\":null}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":\"Google-Extended\"}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":[\"a\",1]}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":[\"\"]}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":[\"*\"]}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":[\"GPTBot\",\"gptbot/1.1\"]}",
		"{\"op\":\"check\",\"url\":\"http://a.test/\",\"agent\":\"a\","
		"\"tokens\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\","
		"\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]}",
		"{\"op\":\"inspect\"}",
		"{\"op\":\"inspect\",\"origin\":[]}",
		"{\"op\":\"purge\"}",
		"{\"op\":\"purge\",\"all\":1}",
		"{\"op\":\"purge\",\"all\":false}",
		"{\"op\":\"purge\",\"origin\":\"a.test\",\"all\":true}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(decode_err(bad[i]) == PE_BAD_REQUEST,
		    "%s is not bad_request", bad[i]);
}
END_TEST

START_TEST(test_unknown_op)
{
	ck_assert_int_eq(decode_err("{\"op\":\"fetch\"}"), PE_UNKNOWN_OP);
	ck_assert_int_eq(decode_err("{\"op\":\"PING\"}"), PE_UNKNOWN_OP);
}
END_TEST

START_TEST(test_clock_op_only_under_test_clock)
{
	struct request req;

	ck_assert_int_eq(
	    decode_err("{\"op\":\"clock\",\"advance\":60}"), PE_UNKNOWN_OP);
	ck_assert_int_eq(
	    decode("{\"op\":\"clock\",\"advance\":60}", &req, 1), PE_NONE);
	ck_assert_int_eq(req.op, OP_CLOCK);
	ck_assert_double_eq(req.advance, 60);
	proto_request_clear(&req);
	ck_assert_int_eq(decode("{\"op\":\"clock\"}", &req, 1), PE_BAD_REQUEST);
	proto_request_clear(&req);
}
END_TEST

START_TEST(test_error_keeps_the_request_id)
{
	struct request req;

	ck_assert_int_eq(
	    decode("{\"op\":\"nope\",\"id\":\"abc\"}", &req, 0), PE_UNKNOWN_OP);
	struct buf b = BUF_INIT(0);

	proto_error(&b, req.id, PE_UNKNOWN_OP, "unknown op");
	assert_line(&b,
	    "{\"id\":\"abc\",\"ok\":false,\"error\":{\"code\":\"unknown_op\","
	    "\"message\":\"unknown op\"}}\n");
	proto_request_clear(&req);
}
END_TEST

START_TEST(test_every_error_code_has_the_contract_name)
{
	ck_assert_str_eq(proto_err_code(PE_BAD_JSON), "bad_json");
	ck_assert_str_eq(proto_err_code(PE_BAD_REQUEST), "bad_request");
	ck_assert_str_eq(proto_err_code(PE_UNKNOWN_OP), "unknown_op");
	ck_assert_str_eq(proto_err_code(PE_BAD_URL), "bad_url");
	ck_assert_str_eq(
	    proto_err_code(PE_UNSUPPORTED_SCHEME), "unsupported_scheme");
	ck_assert_str_eq(proto_err_code(PE_LINE_TOO_LONG), "line_too_long");
	ck_assert_str_eq(proto_err_code(PE_OVERLOADED), "overloaded");
	ck_assert_str_eq(proto_err_code(PE_TIMEOUT), "timeout");
	ck_assert_str_eq(proto_err_code(PE_NOT_CACHED), "not_cached");
	ck_assert_str_eq(proto_err_code(PE_INTERNAL), "internal");
	ck_assert_str_eq(proto_err_code(PE_FORBIDDEN), "forbidden");
	ck_assert_str_eq(proto_err_code(PE_CONFIG), "config");
}
END_TEST

START_TEST(test_answer_without_id_has_null_id)
{
	struct buf b = BUF_INIT(0);
	struct jw w;

	proto_begin(&w, &b, NULL, 1);
	jw_klit(&w, "version", "\"0.1.0\"");
	proto_end(&w);
	ck_assert(jw_ok(&w));
	assert_line(&b, "{\"id\":null,\"ok\":true,\"version\":\"0.1.0\"}\n");
}
END_TEST

/* jw_str(s) is exactly want. */
static void
assert_jw_str(const char *s, size_t len, const char *want)
{
	struct buf b = BUF_INIT(0);

	jw_str(&b, s, len);
	assert_line(&b, want);
}

START_TEST(test_invalid_utf8_is_percent_encoded)
{
	assert_jw_str("/a\xff\xc3(b\xc3\xa9", 8, "\"/a%FF%C3(b\xc3\xa9\"");
	assert_jw_str("/ok\xe2\x82\xac", 6, "\"/ok\xe2\x82\xac\"");
	/* An encoded surrogate (ED A0 80) is not valid UTF-8. */
	assert_jw_str("\xed\xa0\x80", 3, "\"%ED%A0%80\"");
	/* NUL in valid UTF-8 is escaped; in invalid bytes it is %00. */
	assert_jw_str("a\0b", 3, "\"a\\u0000b\"");
	assert_jw_str("a\0\xff", 3, "\"a%00%FF\"");
}
END_TEST

/* One row of the capped buffer's table. */
struct buf_case {
	size_t max;           /* the cap (0: none) */
	const char *adds[4];  /* appended in order with buf_add */
	const char *want;     /* the contents after */
	enum buf_state state; /* the state after */
};

START_TEST(test_buf_keeps_its_cap)
{
	static const struct buf_case cases[] = {
		{ 0, { "abc", "def" }, "abcdef", BUF_OK },
		{ 6, { "abc", "def" }, "abcdef", BUF_OK },
		/* One byte over: nothing of that append is kept. */
		{ 5, { "abc", "def" }, "abc", BUF_FULL },
		/* After a failure every later append fails too. */
		{ 5, { "abc", "def", "g" }, "abc", BUF_FULL },
		{ 1, { "", "x" }, "x", BUF_OK },
		{ 1, { "xy" }, "", BUF_FULL },
	};
	struct buf b;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b = BUF_INIT(cases[i].max);
		for (j = 0; j < 4 && cases[i].adds[j] != NULL; j++)
			buf_add(&b, cases[i].adds[j], strlen(cases[i].adds[j]));
		ck_assert_msg(b.state == cases[i].state, "row %zu: state %d", i,
		    (int)b.state);
		ck_assert_uint_eq(b.len, strlen(cases[i].want));
		ck_assert(b.len == 0 || memcmp(b.p, cases[i].want, b.len) == 0);
		buf_clear(&b);
	}
}
END_TEST

START_TEST(test_buf_add_some_cuts_at_the_cap)
{
	struct buf b = BUF_INIT(5);
	char *p;
	size_t len;

	ck_assert_uint_eq(buf_add_some(&b, "abc", 3), 3);
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_uint_eq(buf_add_some(&b, "defg", 4), 2);
	ck_assert_int_eq(b.state, BUF_FULL);
	ck_assert_uint_eq(buf_add_some(&b, "h", 1), 0);
	/* The terminating NUL may sit past the cap: it is not content. */
	ck_assert_int_eq(buf_terminate(&b), 0);
	p = buf_take(&b, &len);
	ck_assert_uint_eq(len, 5);
	ck_assert_str_eq(p, "abcde");
	free(p);
	ck_assert_ptr_null(b.p);
}
END_TEST

START_TEST(test_buf_reserve_stops_at_the_cap)
{
	struct buf b = BUF_INIT(10000);

	ck_assert_uint_ge(buf_reserve(&b, 4096), 4096);
	b.len = 9000;
	/* Near the cap only what is left is offered ... */
	ck_assert_uint_ge(buf_reserve(&b, 4096), 1000);
	b.len = 10000;
	/* ... and at it, nothing: the buffer is full. */
	ck_assert_uint_eq(buf_reserve(&b, 4096), 0);
	ck_assert_int_eq(b.state, BUF_FULL);
	buf_reset(&b);
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_uint_eq(b.len, 0);
	buf_clear(&b);
}
END_TEST

/* What jansson writes for v (any value), for comparison. */
static char *
jansson_text(json_t *v)
{
	char *s = json_dumps(
	    v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));

	json_decref(v);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* jw_str(s) must equal jansson's text of the reference string. */
static void
assert_same_string(const char *s, size_t len)
{
	struct buf b = BUF_INIT(0);
	char *want = jansson_text(ref_string(s, len));

	jw_str(&b, s, len);
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_msg(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
	    "jw_str wrote %.*s, jansson %s", (int)b.len, b.p, want);
	free(want);
	buf_clear(&b);
}

START_TEST(test_jw_strings_are_what_jansson_writes)
{
	static const char *const cases[] = { "", "/a/b?c=d", "quote\"back\\",
		"\b\f\n\r\t\x01\x1f\x7f",
		"/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80", "/bad\xff/\xc3(",
		"\xed\xa0\x80", "/x\xe2\x82", "/slash/", "mixed \"\xff\" \n" };
	char bytes[64];
	unsigned seed = 1;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_same_string(cases[i], strlen(cases[i]));
	assert_same_string("nul\0inside", 10);
	assert_same_string("nul\0and\xff", 8);
	for (i = 0; i < 2000; i++) { /* random bytes, mostly invalid */
		for (j = 0; j < sizeof(bytes); j++) {
			seed = seed * 1103515245 + 12345;
			bytes[j] = (char)(seed >> 16);
		}
		assert_same_string(bytes, i % sizeof(bytes));
	}
}
END_TEST

/*
 * jw_plain_len() by its definition, a byte at a time: the length of the
 * run of printable ASCII other than '"' and backslash.
 */
static size_t
plain_len_bytewise(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (
	    i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
}

/*
 * Every length up to 40 with one special byte of each kind at every
 * place (and none, and two), from an offset into a larger buffer: the
 * word-at-a-time scan agrees with the definition.
 */
START_TEST(test_jw_plain_len_is_the_plain_run)
{
	static const unsigned char special[] = { '"', '\\', 0x00, 0x1f, 0x80,
		0xc3, 0xff };
	unsigned char buf[64];
	size_t n, at, k, off;

	for (off = 0; off < 3; off++)
		for (n = 0; n <= 40; n++)
			for (k = 0; k < sizeof(special); k++)
				for (at = 0; at <= n; at++) {
					memset(buf, 'x', sizeof(buf));
					buf[off + n] = '"'; /* past the end */
					if (n > 1)
						buf[off + 1] = 0x7f; /* plain */
					if (at < n)
						buf[off + at] = special[k];
					if (at + 5 < n)
						buf[off + at + 5] = special[0];
					ck_assert_uint_eq(
					    jw_plain_len(buf + off, n),
					    plain_len_bytewise(buf + off, n));
				}
}
END_TEST

START_TEST(test_jw_numbers_are_what_jansson_writes)
{
	static const double reals[] = { 0, 1, 2, 0.5, 0.1, 10, 1e21, 1.5e-7,
		86400, 123456789.125, -3, -0.0, 999999999999999.0, 1e15, 1e16,
		4.5, -1e15 };
	struct buf b = BUF_INIT(0);
	char *want;
	size_t i;

	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		b.len = 0;
		jw_real(&b, reals[i]);
		want = jansson_text(json_real(reals[i]));
		ck_assert_msg(
		    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
		    "jw_real wrote %.*s, jansson %s", (int)b.len, b.p, want);
		free(want);
	}
	b.len = 0;
	jw_int(&b, -9007199254740993LL);
	buf_lit(&b, ",");
	jw_json(&b, NULL);
	ck_assert_int_eq(b.len, strlen("-9007199254740993,null"));
	ck_assert_int_eq(memcmp(b.p, "-9007199254740993,null", b.len), 0);
	buf_clear(&b);
}
END_TEST

/*
 * An int or null (docs/protocol.md "http_status": the status of the last
 * fetch, null when there was no HTTP answer): 0 and below are null.
 */
START_TEST(test_jw_int_or_null_is_null_for_none)
{
	static const struct {
		long long v;
		const char *want;
	} cases[] = { { 200, "200" }, { 404, "404" }, { 599, "599" },
		{ 1, "1" }, { 0, "null" }, { -1, "null" },
		{ LLONG_MIN, "null" } };
	struct buf b = BUF_INIT(0);
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b.len = 0;
		jw_int_or_null(&b, cases[i].v);
		ck_assert_msg(b.len == strlen(cases[i].want) &&
		                  memcmp(b.p, cases[i].want, b.len) == 0,
		    "%lld: wrote %.*s, want %s", cases[i].v, (int)b.len, b.p,
		    cases[i].want);
	}
	buf_clear(&b);
}
END_TEST

START_TEST(test_jw_json_values_are_what_jansson_writes)
{
	static const char *const values[] = { "7", "-9223372036854775808",
		"\"id-\u00e9\\n\\\"\"", "null", "true", "false", "3.25",
		"[1,\"x\",{\"k\":null}]", "{\"a\":[true]}", "\"\"" };
	struct buf b = BUF_INIT(0);
	json_error_t jerr;
	size_t i;
	json_t *v;
	char *want;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		v = json_loads(values[i], JSON_DECODE_ANY, &jerr);
		ck_assert_msg(v != NULL, "%s: %s", values[i], jerr.text);
		b.len = 0;
		jw_json(&b, v);
		want = jansson_text(v);
		ck_assert_msg(
		    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
		    "jw_json wrote %.*s, jansson %s", (int)b.len, b.p, want);
		free(want);
	}
	buf_clear(&b);
}
END_TEST

/* Each structural sequence writes the JSON text written beside it. */
static void
jw_nested(struct jw *w)
{
	jw_obj(w);
	jw_kint(w, "id", 7);
	jw_key(w, "usage");
	jw_obj(w);
	jw_kbool(w, "train-ai", 0);
	jw_knull(w, "search");
	jw_end(w);
	jw_key(w, "from");
	jw_arr(w);
	jw_vstr(w, "a\"b", 3);
	jw_obj(w);
	jw_end(w);
	jw_arr(w);
	jw_end(w);
	jw_vint_or_null(w, 0);
	jw_end(w);
	jw_end(w);
}
static void
jw_members_and_keys(struct jw *w)
{
	jw_obj(w);
	jw_key_str(w, "x\ny", 3);
	jw_vreal(w, 0.5);
	jw_klit(w, "d", "[]");
	jw_end(w);
}
static void
jw_names(struct jw *w)
{
	jw_obj(w);
	jw_key_name(w, "train-ai", 8);
	jw_vplain(w, "allowed", 7);
	jw_key_name(w, "rules", 5);
	jw_arr(w);
	jw_vplain(w, "noindex", 7);
	jw_vplain(w, "", 0);
	jw_end(w);
	jw_end(w);
}
static void
jw_member_at_top(struct jw *w)
{
	jw_kvlit(w, "k", "1");
}
static void
jw_plain_and_literals(struct jw *w)
{
	jw_obj(w);
	jw_kvlit(w, "e", "{}");
	jw_kplain(w, "o", "http://a", 8);
	jw_kvlit(w, "n", "null");
	jw_kbool(w, "f", 0);
	jw_end(w);
}
static void
jw_fused(struct jw *w)
{
	jw_obj_key(w, "url");
	jw_vplain(w, "u", 1);
	jw_kvlit2(w, "ok", "true", "allowed", "false");
	jw_kobj(w, "usage");
	jw_kvlit2(w, "a", "1", "b", "2");
	jw_end(w);
	jw_karr(w, "from");
	jw_obj_kvlit(w, "allowed", "true");
	jw_end(w);
	jw_obj_key(w, "k");
	jw_obj(w);
	jw_end(w);
	jw_end(w);
	jw_end(w);
	jw_karr(w, "e");
	jw_end(w);
	jw_kobj(w, "o");
	jw_karr(w, "x");
	jw_end(w);
	jw_end(w);
	jw_kobj_key(w, "r", "d");
	jw_vint(w, 1);
	jw_end(w);
	jw_end(w);
}
static void
jw_cstrs(struct jw *w)
{
	jw_arr(w);
	jw_vcstr_or_null(w, "a\"b");
	jw_vcstr_or_null(w, NULL);
	jw_vcstr_or_null(w, "");
	jw_end(w);
}
static void
jw_top_array(struct jw *w)
{
	jw_arr(w);
	jw_vbool(w, 1);
	jw_vlit(w, "{\"k\":1}");
	jw_vnull(w);
	jw_end(w);
}

START_TEST(test_jw_structure_places_commas_and_closers)
{
	static const struct {
		void (*write)(struct jw *);
		const char *want;
	} t[] = {
		{ jw_nested,
		    "{\"id\":7,\"usage\":{\"train-ai\":false,\"search\":null},"
		    "\"from\":[\"a\\\"b\",{},[],null]}" },
		{ jw_members_and_keys, "{\"x\\ny\":0.5,\"d\":[]}" },
		{ jw_names,
		    "{\"train-ai\":\"allowed\",\"rules\":[\"noindex\",\"\"]}" },
		{ jw_plain_and_literals,
		    "{\"e\":{},\"o\":\"http://a\",\"n\":null,\"f\":false}" },
		{ jw_fused,
		    "{\"url\":\"u\",\"ok\":true,\"allowed\":false,\"usage\":{"
		    "\"a\":1,\"b\":2},\"from\":[{\"allowed\":true},{\"k\":{}}],"
		    "\"e\":[],\"o\":{\"x\":[]},\"r\":{\"d\":1}}" },
		{ jw_cstrs, "[\"a\\\"b\",null,\"\"]" },
		{ jw_top_array, "[true,{\"k\":1},null]" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct buf b = BUF_INIT(0);
		struct jw w;

		jw_init(&w, &b);
		t[i].write(&w);
		ck_assert_msg(jw_ok(&w), "case %zu", i);
		ck_assert_int_eq(b.state, BUF_OK);
		ck_assert_int_eq(buf_terminate(&b), 0);
		ck_assert_str_eq(b.p, t[i].want);
		buf_clear(&b);
	}
}
END_TEST

/* Misuse never reaches a client as malformed JSON: the buffer is failed. */
static void
jw_value_without_key(struct jw *w)
{
	jw_obj(w);
	jw_vint(w, 1);
	jw_end(w);
}
static void
jw_key_in_array(struct jw *w)
{
	jw_arr(w);
	jw_key(w, "k");
	jw_vint(w, 1);
	jw_end(w);
}
static void
jw_name_key_in_array(struct jw *w)
{
	jw_arr(w);
	jw_key_name(w, "k", 1);
	jw_vplain(w, "v", 1);
	jw_end(w);
}
static void
jw_name_key_at_top(struct jw *w)
{
	jw_key_name(w, "k", 1);
}
static void
jw_key_at_top(struct jw *w)
{
	jw_key(w, "k");
}
static void
jw_end_after_key(struct jw *w)
{
	jw_obj(w);
	jw_key(w, "k");
	jw_end(w);
}
static void
jw_end_too_often(struct jw *w)
{
	jw_obj(w);
	jw_end(w);
	jw_end(w);
}
static void
jw_member_open_in_array(struct jw *w)
{
	jw_arr(w);
	jw_kobj(w, "k");
}
static void
jw_end_after_opened_key(struct jw *w)
{
	jw_obj(w);
	jw_kobj_key(w, "r", "d");
	jw_end(w);
}
static void
jw_member_open_after_key(struct jw *w)
{
	jw_obj(w);
	jw_key(w, "k");
	jw_karr(w, "a");
}
static void
jw_members_at_top(struct jw *w)
{
	jw_kvlit2(w, "a", "1", "b", "2");
}
static void
jw_keyed_open_in_object(struct jw *w)
{
	jw_obj(w);
	jw_obj_key(w, "k");
}
static void
jw_use_after_misuse(struct jw *w)
{
	jw_end(w);
	jw_obj(w);
	jw_end(w);
}
static void
jw_too_deep_by_member(struct jw *w)
{
	jw_obj(w);
	for (int i = 0; i < JW_DEPTH; i++)
		jw_kobj(w, "k");
}
static void
jw_too_deep(struct jw *w)
{
	for (int i = 0; i < JW_DEPTH + 1; i++)
		jw_arr(w);
}

START_TEST(test_jw_misuse_fails_the_buffer)
{
	static void (*const t[])(struct jw *) = {
		jw_value_without_key,
		jw_key_in_array,
		jw_name_key_in_array,
		jw_name_key_at_top,
		jw_key_at_top,
		jw_end_after_key,
		jw_end_too_often,
		jw_too_deep,
		jw_member_at_top,
		jw_member_open_in_array,
		jw_member_open_after_key,
		jw_end_after_opened_key,
		jw_members_at_top,
		jw_keyed_open_in_object,
		jw_use_after_misuse,
		jw_too_deep_by_member,
	};
	struct buf b = BUF_INIT(0);
	struct jw w;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		buf_reset(&b);
		jw_init(&w, &b);
		t[i](&w);
		ck_assert_msg(!jw_ok(&w), "case %zu", i);
		ck_assert_int_eq(b.state, BUF_FULL);
	}
	buf_reset(&b); /* left open: no misuse yet, but not a whole value */
	jw_init(&w, &b);
	jw_obj(&w);
	jw_key(&w, "k");
	jw_arr(&w);
	ck_assert(!jw_ok(&w));
	ck_assert_int_eq(b.state, BUF_OK);
	buf_clear(&b);
}
END_TEST

/* The codec suite. */
static Suite *
proto_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_check_single_url_fields);
	tcase_add_test(tc, test_jw_plain_len_is_the_plain_run);
	tcase_add_test(tc, test_check_batch_and_wait_false);
	tcase_add_test(tc, test_check_usage_and_tokens);
	tcase_add_test(tc, test_token_len_is_the_product_token);
	tcase_add_test(tc, test_token_length_limit);
	tcase_add_test(tc, test_not_json_is_bad_json);
	tcase_add_test(tc, test_json_that_is_not_an_object_is_bad_request);
	tcase_add_test(tc, test_missing_or_mistyped_fields_are_bad_request);
	tcase_add_test(tc, test_unknown_op);
	tcase_add_test(tc, test_clock_op_only_under_test_clock);
	tcase_add_test(tc, test_error_keeps_the_request_id);
	tcase_add_test(tc, test_every_error_code_has_the_contract_name);
	tcase_add_test(tc, test_answer_without_id_has_null_id);
	tcase_add_test(tc, test_invalid_utf8_is_percent_encoded);
	tcase_add_test(tc, test_buf_keeps_its_cap);
	tcase_add_test(tc, test_buf_add_some_cuts_at_the_cap);
	tcase_add_test(tc, test_buf_reserve_stops_at_the_cap);
	tcase_add_test(tc, test_jw_strings_are_what_jansson_writes);
	tcase_add_test(tc, test_jw_numbers_are_what_jansson_writes);
	tcase_add_test(tc, test_jw_json_values_are_what_jansson_writes);
	tcase_add_test(tc, test_jw_int_or_null_is_null_for_none);
	tcase_add_test(tc, test_jw_structure_places_commas_and_closers);
	tcase_add_test(tc, test_jw_misuse_fails_the_buffer);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(proto_suite, NULL, NULL);
