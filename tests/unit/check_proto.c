/*
 * check_proto.c: the wire codec. Each request shape of docs/protocol.md
 * decodes to the fields ops.c relies on; each malformed one maps to the
 * contract's error code; answers encode as one compact line.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "proto.h"

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

/* Encode o and compare with the expected line. */
static void
assert_line(json_t *o, const char *want)
{
	size_t len;
	char *line = proto_encode(o, &len);

	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, want);
	ck_assert_uint_eq(len, strlen(want));
	free(line);
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
	assert_line(proto_error(req.id, PE_UNKNOWN_OP, "unknown op"),
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
}
END_TEST

START_TEST(test_answer_without_id_has_null_id)
{
	json_t *o = proto_ok(NULL);

	json_object_set_new(o, "version", json_string("0.1.0"));
	assert_line(o, "{\"id\":null,\"ok\":true,\"version\":\"0.1.0\"}\n");
}
END_TEST

START_TEST(test_invalid_utf8_is_percent_encoded)
{
	json_t *s = proto_string("/a\xff\xc3(b\xc3\xa9", 8);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(json_string_value(s), "/a%FF%C3(b\xc3\xa9");
	json_decref(s);
	s = proto_string("/ok\xe2\x82\xac", 6);
	ck_assert_str_eq(json_string_value(s), "/ok\xe2\x82\xac");
	json_decref(s);
	/* An encoded surrogate (ED A0 80) is not valid UTF-8. */
	s = proto_string("\xed\xa0\x80", 3);
	ck_assert_str_eq(json_string_value(s), "%ED%A0%80");
	json_decref(s);
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

/* pbuf_str(s) must equal jansson's text of proto_string(s). */
static void
assert_same_string(const char *s, size_t len)
{
	struct pbuf b = { 0 };
	char *want = jansson_text(proto_string(s, len));

	pbuf_str(&b, s, len);
	ck_assert_int_eq(b.nomem, 0);
	ck_assert_msg(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
	    "pbuf_str wrote %.*s, jansson %s", (int)b.len, b.p, want);
	free(want);
	pbuf_clear(&b);
}

START_TEST(test_pbuf_strings_are_what_jansson_writes)
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

START_TEST(test_pbuf_numbers_are_what_jansson_writes)
{
	static const double reals[] = { 0, 1, 2, 0.5, 0.1, 10, 1e21, 1.5e-7,
		86400, 123456789.125, -3 };
	struct pbuf b = { 0 };
	char *want;
	size_t i;

	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		b.len = 0;
		pbuf_real(&b, reals[i]);
		want = jansson_text(json_real(reals[i]));
		ck_assert_msg(
		    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
		    "pbuf_real wrote %.*s, jansson %s", (int)b.len, b.p, want);
		free(want);
	}
	b.len = 0;
	pbuf_int(&b, -9007199254740993LL);
	pbuf_lit(&b, ",");
	pbuf_json(&b, NULL);
	ck_assert_int_eq(b.len, strlen("-9007199254740993,null"));
	ck_assert_int_eq(memcmp(b.p, "-9007199254740993,null", b.len), 0);
	pbuf_clear(&b);
}
END_TEST

START_TEST(test_pbuf_json_values_are_what_jansson_writes)
{
	static const char *const values[] = { "7", "-9223372036854775808",
		"\"id-\u00e9\\n\\\"\"", "null", "true", "false", "3.25",
		"[1,\"x\",{\"k\":null}]", "{\"a\":[true]}", "\"\"" };
	struct pbuf b = { 0 };
	json_error_t jerr;
	size_t i;
	json_t *v;
	char *want;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		v = json_loads(values[i], JSON_DECODE_ANY, &jerr);
		ck_assert_msg(v != NULL, "%s: %s", values[i], jerr.text);
		b.len = 0;
		pbuf_json(&b, v);
		want = jansson_text(v);
		ck_assert_msg(
		    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
		    "pbuf_json wrote %.*s, jansson %s", (int)b.len, b.p, want);
		free(want);
	}
	pbuf_clear(&b);
}
END_TEST

/* The codec suite. */
static Suite *
proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_check_single_url_fields);
	tcase_add_test(tc, test_check_batch_and_wait_false);
	tcase_add_test(tc, test_not_json_is_bad_json);
	tcase_add_test(tc, test_json_that_is_not_an_object_is_bad_request);
	tcase_add_test(tc, test_missing_or_mistyped_fields_are_bad_request);
	tcase_add_test(tc, test_unknown_op);
	tcase_add_test(tc, test_clock_op_only_under_test_clock);
	tcase_add_test(tc, test_error_keeps_the_request_id);
	tcase_add_test(tc, test_every_error_code_has_the_contract_name);
	tcase_add_test(tc, test_answer_without_id_has_null_id);
	tcase_add_test(tc, test_invalid_utf8_is_percent_encoded);
	tcase_add_test(tc, test_pbuf_strings_are_what_jansson_writes);
	tcase_add_test(tc, test_pbuf_numbers_are_what_jansson_writes);
	tcase_add_test(tc, test_pbuf_json_values_are_what_jansson_writes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(proto_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
