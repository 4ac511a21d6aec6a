/*
 * check_wire_fast.c: the check request fast path. Well-formed checks, of
 * one URL or a batch, decode to the fields proto_decode() gives them;
 * every line it is not sure about (the table below) is left to
 * proto_decode().
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "wire/proto.h"
#include "wire/wire_fast.h"
#include "test_main.h"

static char scratch[4096];
static struct wire_str urls[4];
static struct wire_pair pairs[4];

/* Fast-decode s into *w (batches of up to 4 URLs); 1 when accepted. */
static int
fast(const char *s, struct wire_check *w)
{
	static struct wire_page pg;

	return wire_fast_check_page(
	    s, strlen(s), scratch, urls, 4, pairs, 4, w, &pg);
}

/* The URLs proto_decode() found in r are w's. */
static void
assert_same_urls(const struct request *r, const struct wire_check *w)
{
	const json_t *u;
	size_t i;

	if (w->urls == NULL) {
		ck_assert_ptr_null(r->urls);
		ck_assert_uint_eq(r->url_len, w->url_len);
		ck_assert_mem_eq(r->url, w->url, w->url_len);
		return;
	}
	ck_assert_ptr_null(w->url);
	ck_assert_ptr_null(r->url);
	ck_assert_uint_eq(json_array_size(r->urls), w->nurls);
	for (i = 0; i < w->nurls; i++) {
		u = json_array_get(r->urls, i);
		ck_assert_uint_eq(json_string_length(u), w->urls[i].len);
		ck_assert_mem_eq(
		    json_string_value(u), w->urls[i].p, w->urls[i].len);
	}
}

/* w must be what proto_decode() makes of s. */
static void
assert_same_as_jansson(const char *s, const struct wire_check *w)
{
	struct request r;
	enum proto_err err;
	const char *msg;

	ck_assert_int_eq(proto_decode(s, strlen(s), 0, &r, &err, &msg), 0);
	ck_assert_int_eq(r.op, OP_CHECK);
	assert_same_urls(&r, w);
	ck_assert_uint_eq(r.agent_len, w->agent_len);
	ck_assert_mem_eq(r.agent, w->agent, w->agent_len);
	ck_assert_int_eq(r.wait, w->wait);
	ck_assert_int_eq(r.usage, w->usage);
	ck_assert_int_eq(r.tdm, w->tdm);
	ck_assert_ptr_null(r.tokens);
	if (w->has_id)
		ck_assert_int_eq(json_integer_value(r.id), w->id);
	else
		ck_assert_ptr_null(r.id);
	proto_request_clear(&r);
}

START_TEST(test_plain_check_borrows_from_the_line)
{
	const char *s = "{\"op\":\"check\",\"url\":\"https://e.com/a?b\","
	                "\"agent\":\"Googlebot\",\"id\":17}";
	struct wire_check w;

	ck_assert_int_eq(fast(s, &w), 1);
	ck_assert_uint_eq(w.url_len, 17);
	ck_assert_mem_eq(w.url, "https://e.com/a?b", 17);
	ck_assert_ptr_eq(w.url, strstr(s, "https://"));
	ck_assert_uint_eq(w.agent_len, 9);
	ck_assert_int_eq(w.has_id, 1);
	ck_assert_int_eq(w.id, 17);
	ck_assert_int_eq(w.wait, 1);
	ck_assert_int_eq(w.usage, 0);
	assert_same_as_jansson(s, &w);
}
END_TEST

/* Lines the fast path accepts, each checked against proto_decode(). */
static const char *const accepted[] = {
	("{\"id\":42,\"agent\":\"a "
	 "b\",\"url\":\"http://e.com/\",\"op\":\"check\"}"),
	("{\"op\":\"check\",\"url\":\"http://e.com/\",\"agent\":\"a\","
	 "\"wait\":false}"),
	("{\"op\":\"check\",\"url\":\"http://e.com/\",\"agent\":\"a\","
	 "\"wait\":true,\"id\":0}"),
	(" { \"op\" : \"check\" ,\t\"url\":\"http://e.com/\\u0041\\/\\\"\","
	 "\"agent\":\"x\\ty\\\\\" , \"id\" : 999999999999999999 }\r"),
	("{\"op\":\"ch\\u0065ck\",\"url\":\"http://e.com/\\u0000\","
	 "\"agent\":\"a\"}"),
	"{\"op\":\"check\",\"url\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
	"\"agent\":\"a\"}",
	("{\"op\":\"check\",\"url\":\"\\u00e9\\u20AC\\ud83d\\ude00\","
	 "\"agent\":\"\\u2028\"}"),
	"{\"op\":\"check\",\"urls\":[\"http://e.com/\"],\"agent\":\"a\"}",
	("{\"urls\" : [ \"http://e.com/a\" , \"\" ,\"h\\u0026\\/\xc3\xa9\" ] ,"
	 "\"agent\":\"a\",\"op\":\"check\",\"wait\":false,\"id\":3}"),
	"{\"op\":\"check\",\"urls\":[],\"agent\":\"a\",\"id\":0}",
	"{\"op\":\"check\",\"urls\":[ ],\"agent\":\"a\"}",
	("{\"op\":\"check\",\"urls\":[\"1\",\"2\",\"3\",\"4\"],"
	 "\"agent\":\"a\"}"),
	("{\"op\":\"check\",\"url\":\"http://e.com/\",\"agent\":\"a\","
	 "\"usage\":true}"),
	("{\"usage\" : false,\"op\":\"check\",\"urls\":[\"http://e.com/\"],"
	 "\"agent\":\"a\",\"id\":2}"),
	("{\"op\":\"check\",\"url\":\"http://e.com/\",\"agent\":\"a\","
	 "\"tdm\":true,\"usage\":true}"),
	("{\"tdm\" : false,\"op\":\"check\",\"urls\":[\"http://e.com/\"],"
	 "\"agent\":\"a\",\"id\":2}"),
	("{\"op\":\"check\",\"urls\":[\"http://e.com/\",\"http://f.com/\"],"
	 "\"agent\":\"a\",\"tdm\":true}"),
};

START_TEST(test_tdm_is_decoded)
{
	struct wire_check w;

	ck_assert_int_eq(fast(accepted[14], &w), 1);
	ck_assert_int_eq(w.tdm, 1);
	ck_assert_int_eq(w.usage, 1);
	ck_assert_int_eq(fast(accepted[15], &w), 1);
	ck_assert_int_eq(w.tdm, 0);
	ck_assert_int_eq(fast(accepted[16], &w), 1);
	ck_assert_int_eq(w.tdm, 1);
	ck_assert_uint_eq(w.nurls, 2);
	ck_assert_int_eq(fast(accepted[0], &w), 1);
	ck_assert_int_eq(w.tdm, 0);
}
END_TEST

START_TEST(test_usage_is_decoded)
{
	struct wire_check w;

	ck_assert_int_eq(fast(accepted[12], &w), 1);
	ck_assert_int_eq(w.usage, 1);
	ck_assert_int_eq(fast(accepted[13], &w), 1);
	ck_assert_int_eq(w.usage, 0);
}
END_TEST

START_TEST(test_accepted_lines_decode_as_jansson_does)
{
	struct wire_check w;

	ck_assert_int_eq(fast(accepted[_i], &w), 1);
	assert_same_as_jansson(accepted[_i], &w);
}
END_TEST

/*
 * Escaped strings of accepted lines, unescaped into the scratch space:
 * \u escapes above U+007F and surrogate pairs become UTF-8.
 */
static const struct {
	size_t line;
	const char *url, *agent;
	size_t url_len, agent_len;
} unescaped[] = {
	{ 3, "http://e.com/A/\"", "x\ty\\", 16, 4 },
	{ 6, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x80\xa8", 9, 3 },
};

START_TEST(test_escapes_are_decoded_into_scratch)
{
	struct wire_check w;

	ck_assert_int_eq(fast(accepted[unescaped[_i].line], &w), 1);
	ck_assert_uint_eq(w.url_len, unescaped[_i].url_len);
	ck_assert_mem_eq(w.url, unescaped[_i].url, w.url_len);
	ck_assert_ptr_eq(w.url, scratch);
	ck_assert_uint_eq(w.agent_len, unescaped[_i].agent_len);
	ck_assert_mem_eq(w.agent, unescaped[_i].agent, w.agent_len);
	ck_assert_ptr_eq(w.agent, scratch + w.url_len);
}
END_TEST

/*
 * A batch's URLs are borrowed from the line unless escaped; only printable
 * ASCII without '"' or backslash is marked plain (its own JSON text).
 */
START_TEST(test_batch_urls_borrow_from_the_line)
{
	static const int plain[] = { 1, 0, 0, 1 };
	const char *s =
	    "{\"op\":\"check\",\"urls\":[\"http://e.com/a\","
	    "\"http://f.com/\\/b\",\"\xc3\xa9\",\"\"],\"agent\":\"G\","
	    "\"id\":5}";
	struct wire_check w;
	size_t i;

	ck_assert_int_eq(fast(s, &w), 1);
	ck_assert_ptr_null(w.url);
	ck_assert_ptr_eq(w.urls, urls);
	ck_assert_uint_eq(w.nurls, 4);
	ck_assert_ptr_eq(w.urls[0].p, strstr(s, "http://e.com/a"));
	ck_assert_uint_eq(w.urls[0].len, 14);
	ck_assert_ptr_eq(w.urls[1].p, scratch);
	ck_assert_uint_eq(w.urls[1].len, 15);
	ck_assert_mem_eq(w.urls[1].p, "http://f.com//b", 15);
	ck_assert_ptr_eq(w.urls[2].p, strstr(s, "\xc3\xa9"));
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(w.urls[i].plain, plain[i]);
	ck_assert_int_eq(w.id, 5);
}
END_TEST

/* Lines left to proto_decode(), valid or not. */
static const char *const fallback[] = {
	"",
	"[]",
	"{}",
	"{\"op\":\"stats\",\"id\":1}",
	"{\"op\":\"check\",\"url\":\"http://e.com/\"}",
	"{\"op\":\"check\",\"agent\":\"a\"}",
	"{\"url\":\"http://e.com/\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":1,\"id\":2}",
	"{\"op\":\"check\",\"url\":\"u\",\"url\":\"v\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"x\":1}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":-1}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":01}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":1.5}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":1e3}",
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"id\":1234567890123456789}"),
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":\"s\"}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"id\":null}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"wait\":1}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"tdm\":1}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"tdm\":null}",
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"tdm\":true,"
	 "\"tdm\":true}"),
	"{\"op\":\"check\",\"url\":\"\xc3\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\xc0\xaf\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\xed\xa0\x80\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\xf4\x90\x80\x80\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\xff\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\\ud800\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\\ud800x\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\\ud800\\u0041\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\\udc00\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"\\u12\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\"],\"url\":\"u\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\"],\"urls\":[],\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\",1],\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\",],\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[,\"u\"],\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\" \"v\"],\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[\"u\",\"v\"}",
	"{\"op\":\"check\",\"urls\":\"u\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"urls\":[[\"u\"]],\"agent\":\"a\"}",
	("{\"op\":\"check\",\"urls\":[\"1\",\"2\",\"3\",\"4\",\"5\"],"
	 "\"agent\":\"a\"}"),
	"{\"op\":\"check\",\"urls\":[\"u\"]}",
	"{\"op\":\"check\",\"url\":\"\\x\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"a\tb\",\"agent\":\"a\"}",
	"{\"o\\u0070\":\"check\",\"url\":\"u\",\"agent\":\"a\"}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\"} x",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\"",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\"}}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"wait\":tru}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"usage\":1}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"usage\":null}",
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"usage\":true,"
	 "\"usage\":false}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"tokens\":[\"Google-Extended\"]}"),
};

START_TEST(test_unusual_lines_fall_back)
{
	struct wire_check w;

	ck_assert_msg(
	    fast(fallback[_i], &w) == 0, "accepted: %s", fallback[_i]);
}
END_TEST

/* Fast-decode s with its page (up to 4 pairs); 1 when accepted. */
static int
fast_page(const char *s, struct wire_check *w, struct wire_page *pg)
{
	return wire_fast_check_page(
	    s, strlen(s), scratch, urls, 4, pairs, 4, w, pg);
}

/* The n pairs at p are JSON array a's (a NULL: none). */
static void
assert_same_pairs(const json_t *a, const struct wire_pair *p, size_t n)
{
	const struct wire_str *f;
	const json_t *v;
	size_t i, j;

	ck_assert_uint_eq(json_array_size(a), n);
	for (i = 0; i < n; i++)
		for (j = 0; j < 2; j++) {
			f = j == 0 ? &p[i].name : &p[i].value;
			v = json_array_get(json_array_get(a, i), j);
			ck_assert_uint_eq(json_string_length(v), f->len);
			ck_assert_mem_eq(json_string_value(v), f->p, f->len);
		}
}

/*
 * Page lines the fast path takes: decoded as by proto_decode(), and the
 * number of header and meta pairs.
 */
static const struct {
	const char *line;
	size_t nheaders, nmeta;
} page_accepted[] = {
	{ "{\"op\":\"check\",\"url\":\"https://e.com/\",\"agent\":\"GPTBot\","
	  "\"id\":7,\"page\":{\"headers\":[[\"Content-Type\",\"text/html\"],"
	  "[\"X-Robots-Tag\",\"noindex\"],[\"Content-Usage\",\"train-ai=n\"],"
	  "[\"Cache-Control\",\"max-age=60\"]],\"meta\":[]}}",
	    4, 0 },
	{ "{\"page\":{\"meta\":[[\"robots\",\"noai\"]]},\"agent\":\"a\","
	  "\"op\":\"check\",\"url\":\"u\"}",
	    0, 1 },
	{ "{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"page\":{}}", 0,
	    0 },
	{ "{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"page\" : { "
	  "\"headers\" : [ [ \"caf\\u00e9\" , \"\\\"q\\\"\" ] , [ \"b\" , \"\" "
	  "] ] , \"meta\" : [ [\"robots\",\"\\ud83d\\ude00\"] ] } }",
	    2, 1 },
	{ "{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\"}", 0, 0 },
};

START_TEST(test_page_decodes_as_jansson_does)
{
	struct wire_check w;
	struct wire_page pg;
	struct request r;
	enum proto_err err;
	const char *msg, *s = page_accepted[_i].line;

	ck_assert_int_eq(fast_page(s, &w, &pg), 1);
	assert_same_as_jansson(s, &w);
	ck_assert_ptr_eq(w.page, pg.present ? &pg : NULL);
	ck_assert_uint_eq(pg.nheaders, page_accepted[_i].nheaders);
	ck_assert_uint_eq(pg.nmeta, page_accepted[_i].nmeta);
	ck_assert_int_eq(proto_decode(s, strlen(s), 0, &r, &err, &msg), 0);
	ck_assert_int_eq(pg.present, r.page != NULL);
	assert_same_pairs(
	    json_object_get(r.page, "headers"), pg.headers, pg.nheaders);
	assert_same_pairs(json_object_get(r.page, "meta"), pg.meta, pg.nmeta);
	proto_request_clear(&r);
}
END_TEST

/* Page lines left to proto_decode(), valid or not. */
static const char *const page_fallback[] = {
	"{\"op\":\"check\",\"urls\":[\"u\"],\"agent\":\"a\",\"page\":{}}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"page\":[]}",
	"{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\",\"page\":null}",
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{},\"page\":{}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[],\"headers\":[]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[],\"x\":1}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"h\\u0065aders\":[]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"\",\"v\"]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"n\"]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"n\",\"v\",\"w\"]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"n\",1]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[\"n\"]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"n\",\"v\"],]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"meta\":{}}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"n\",\"\\ud800\"]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[[\"1\",\"\"],[\"2\",\"\"],[\"3\",\"\"]],"
	 "\"meta\":[[\"4\",\"\"],[\"5\",\"\"]]}}"),
	("{\"op\":\"check\",\"url\":\"u\",\"agent\":\"a\","
	 "\"page\":{\"headers\":[]}"),
};

START_TEST(test_unusual_pages_fall_back)
{
	struct wire_check w;
	struct wire_page pg;

	ck_assert_msg(fast_page(page_fallback[_i], &w, &pg) == 0,
	    "accepted: %s", page_fallback[_i]);
}
END_TEST

static Suite *
wire_fast_suite(void)
{
	Suite *s = suite_create("wire_fast");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, test_plain_check_borrows_from_the_line);
	tcase_add_loop_test(tc, test_accepted_lines_decode_as_jansson_does, 0,
	    sizeof(accepted) / sizeof(accepted[0]));
	tcase_add_loop_test(tc, test_escapes_are_decoded_into_scratch, 0,
	    sizeof(unescaped) / sizeof(unescaped[0]));
	tcase_add_test(tc, test_batch_urls_borrow_from_the_line);
	tcase_add_test(tc, test_usage_is_decoded);
	tcase_add_test(tc, test_tdm_is_decoded);
	tcase_add_loop_test(tc, test_unusual_lines_fall_back, 0,
	    sizeof(fallback) / sizeof(fallback[0]));
	tcase_add_loop_test(tc, test_page_decodes_as_jansson_does, 0,
	    sizeof(page_accepted) / sizeof(page_accepted[0]));
	tcase_add_loop_test(tc, test_unusual_pages_fall_back, 0,
	    sizeof(page_fallback) / sizeof(page_fallback[0]));
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(wire_fast_suite, NULL, NULL);
