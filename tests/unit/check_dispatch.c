/*
 * check_dispatch.c: the dispatcher and the check path (dispatch.c,
 * checkop.c) between a session's request lines and its struct reply, over
 * a real cache whose fetches are scripted and whose clock is frozen, so
 * every answer line is compared byte for byte with docs/protocol.md.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "robots.h"
#include "wire/buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "base/clock.h"
#include "wire/proto.h"
#include "dispatch_fixture.h"
#include "wire/wire_fast.h"
#include "ops/tdmres.h"
#include "test_main.h"

enum url_err __real_robots_url_split(const char *, size_t, struct robots_url *);
enum url_err __wrap_robots_url_split(const char *, size_t, struct robots_url *);

static size_t splits; /* robots_url_split() calls */

/* robots_url_split(), counted (the test program is linked with --wrap). */
enum url_err
__wrap_robots_url_split(const char *p, size_t len, struct robots_url *u)
{
	splits++;
	return __real_robots_url_split(p, len, u);
}

/* The fixture, with the gauge row in the stats table. */
static void
setup(void)
{
	dispatch_fixture_setup(0, 3);
}

/* Send one request line. */
static void
send_line(const char *line)
{
	session_line(s, line, strlen(line));
}

/* The client got exactly n lines so far, the last being want. */
static void
assert_last(size_t n, const char *want)
{
	ck_assert_uint_eq(client.nlines, n);
	ck_assert_str_eq(client.lines[n - 1], want);
}

/* End the fetch of origin with an HTTP answer. */
static void
finish(const char *origin, int status, const char *body)
{
	struct fetch_result r = script_result(FETCH_OK, status);

	r.body = body;
	r.body_len = strlen(body);
	script_fill(&sc, origin, &r);
}

static const char rules[] = "User-agent: *\nDisallow: /a\nAllow: /a/ok\n";
/* The versions (sha256sum, first 16 hex digits) of rules and "status:404". */
#define V_RULES "8f4203e6b2e0bf7b"
#define V_404 "c4a3b17cef32e92b"

#define CHECK_A                                                                \
	"{\"op\":\"check\",\"url\":\"HTTPS://A.test/a/b\",\"agent\":"          \
	"\"FooBot/2.1\",\"id\":7}"
#define VERDICT_A(source)                                                      \
	"{\"id\":7,\"ok\":true,\"allowed\":false,\"origin\":"                  \
	"\"https://a.test\",\"source\":\"" source "\",\"reason\":\"rule\","    \
	"\"http_status\":200,\"rule\":{\"directive\":\"disallow\","            \
	"\"pattern\":\"/a\",\"line\":2},\"crawl_delay\":null,"                 \
	"\"expires_in\":86400,\"version\":\"" V_RULES "\"}\n"

/* purge needs the admin right; the other ops do not. */
START_TEST(test_purge_without_the_admin_right_is_forbidden)
{
	session_set_admin(s, 0);
	send_line("{\"op\":\"purge\",\"all\":true,\"id\":1}");
	ck_assert_uint_eq(client.nlines, 1);
	ck_assert_str_eq(client.lines[0],
	    "{\"id\":1,\"ok\":false,\"error\":{\"code\":\"forbidden\","
	    "\"message\":\"purge needs the admin right: use robotsd's admin "
	    "socket, or run it as root, as robotsd's user or as a member of "
	    "its admin-group\"}}\n");
	send_line("{\"op\":\"ping\",\"id\":2}");
	ck_assert_uint_eq(client.nlines, 2);
	ck_assert_str_eq(client.lines[1],
	    "{\"id\":2,\"ok\":true,\"version\":\"" PACKAGE_VERSION "\"}\n");
	session_set_admin(s, 1);
	send_line("{\"op\":\"purge\",\"all\":true,\"id\":3}");
	ck_assert_str_eq(
	    client.lines[2], "{\"id\":3,\"ok\":true,\"purged\":0}\n");
}
END_TEST

/* The end of line, after its expires_in (jittered: not compared). */
static void
assert_tail(const char *line, const char *head, const char *tail)
{
	size_t n = strlen(line), t = strlen(tail);

	ck_assert_msg(strncmp(line, head, strlen(head)) == 0, "%s", line);
	ck_assert_msg(n >= t && strcmp(line + n - t, tail) == 0, "%s", line);
}

/*
 * An unreachable answer, single or a batch's row, and inspect name the
 * cause: its stable code and the failure's text; other answers have none.
 */
START_TEST(test_unreachable_answers_name_the_cause)
{
	struct fetch_result r = script_result(FETCH_NETWORK, 0);

	send_line("{\"op\":\"check\",\"url\":\"http://e.test/x\","
	          "\"agent\":\"B\",\"id\":1}");
	finish("http://e.test", 503, "");
	ck_assert_uint_eq(client.nlines, 1);
	assert_tail(client.lines[0],
	    "{\"id\":1,\"ok\":true,\"allowed\":false,\"origin\":"
	    "\"http://e.test\",\"source\":\"fetched\",\"reason\":"
	    "\"unreachable\",\"http_status\":503,\"rule\":null,"
	    "\"crawl_delay\":null,\"expires_in\":",
	    ",\"cause\":{\"code\":\"http_503\",\"message\":\"HTTP status "
	    "503\"}}\n");
	send_line("{\"op\":\"check\",\"urls\":[\"http://f.test/x\"],"
	          "\"agent\":\"B\",\"id\":2}");
	r.cause = CAUSE_DNS;
	r.error_message = "Could not resolve host: f.test";
	script_fill(&sc, "http://f.test", &r);
	ck_assert_uint_eq(client.nlines, 2);
	assert_tail(client.lines[1],
	    "{\"id\":2,\"ok\":true,\"results\":[{\"url\":\"http://f.test/"
	    "x\",\"ok\":true,\"allowed\":false,\"origin\":\"http://f.test\","
	    "\"source\":\"fetched\",\"reason\":\"unreachable\","
	    "\"http_status\":null,",
	    ",\"cause\":{\"code\":\"dns\",\"message\":\"Could not resolve "
	    "host: f.test\"}}]}\n");
	send_line("{\"op\":\"inspect\",\"origin\":\"http://f.test\","
	          "\"id\":3}");
	ck_assert_uint_eq(client.nlines, 3);
	ck_assert_ptr_nonnull(strstr(client.lines[2],
	    "\"last_error\":\"Could not resolve host: f.test\",\"cause\":"
	    "{\"code\":\"dns\",\"message\":\"Could not resolve host: "
	    "f.test\"}},"));
}
END_TEST

START_TEST(test_miss_waits_for_the_one_fetch_then_hits)
{
	send_line(CHECK_A);
	ck_assert_uint_eq(client.nlines, 0);
	ck_assert_uint_eq(sc.n, 1);
	ck_assert_str_eq(sc.f[0].url, "https://a.test/robots.txt");
	ck_assert_int_eq(session_waiting(s), 1);
	finish("https://a.test", 200, rules);
	assert_last(1, VERDICT_A("fetched"));
	ck_assert_uint_eq(client.settled, 1);
	ck_assert_int_eq(session_waiting(s), 0);
	send_line(CHECK_A);
	assert_last(2, VERDICT_A("cache"));
	ck_assert_uint_eq(sc.n, 1);
	ck_assert_uint_eq(client.settled, 1); /* answered at once */
	ck_assert_uint_eq(dispatch_requests(d), 2);
}
END_TEST

/*
 * A check that waited is stamped with the latency start of its own line,
 * not of the line being read when its fetch ended, and as waited; the
 * server's t0 is left as the server set it.
 */
START_TEST(test_waited_check_keeps_its_own_latency_start)
{
	client.reply.t0 = 10.5;
	send_line(CHECK_A);
	client.reply.t0 = 20.25;
	finish("https://a.test", 200, rules);
	ck_assert_uint_eq(client.nlines, 1);
	ck_assert_double_eq(client.t0[0], 10.5);
	ck_assert_uint_eq(client.kind[0], REPLY_CHECK_WAITED);
	ck_assert_double_eq(client.reply.t0, 20.25);
	send_line(CHECK_A);
	ck_assert_double_eq(client.t0[1], 20.25);
	ck_assert_uint_eq(client.kind[1], REPLY_CHECK_CACHED);
}
END_TEST

/*
 * Each answer is stamped with its line's start and the kind of its op,
 * from both decoders; lines refused before their op (bad JSON, too long,
 * a watching connection's) are "other".
 */
START_TEST(test_answers_are_stamped_with_their_op)
{
	static const struct {
		const char *line;
		unsigned char kind;
	} t[] = {
		{ "{\"op\":\"ping\",\"id\":1}", REPLY_PING },
		{ "{\"op\":\"stats\",\"id\":2}", REPLY_STATS },
		{ "{\"op\":\"purge\",\"all\":true,\"id\":3}", REPLY_PURGE },
		{ "{\"op\":\"inspect\",\"origin\":\"https://a.test\",\"id\":4}",
		    REPLY_INSPECT },
		{ "{\"op\":\"inspect\",\"origin\":\"gopher://a\",\"id\":5}",
		    REPLY_INSPECT },
		{ "{\"op\":\"history\",\"origin\":\"https://a.test\",\"id\":6}",
		    REPLY_HISTORY },
		{ "{\"op\":\"check\",\"url\":\"https://a.test/robots.txt\","
		  "\"agent\":\"B\",\"id\":7}",
		    REPLY_CHECK_CACHED },
		{ "{\"op\":\"check\",\"url\":\"https://a.test/robots.txt\","
		  "\"agent\":\"B\",\"id\":\"s\"}",
		    REPLY_CHECK_CACHED },
		{ "not json", REPLY_OTHER },
		{ "{\"op\":\"nope\",\"id\":9}", REPLY_OTHER },
	};
	size_t i, n = sizeof(t) / sizeof(t[0]);

	for (i = 0; i < n; i++) {
		client.reply.t0 = (double)i + 0.5;
		send_line(t[i].line);
		ck_assert_uint_eq(client.nlines, i + 1);
		ck_assert_double_eq(client.t0[i], (double)i + 0.5);
		ck_assert_msg(client.kind[i] == t[i].kind, "%s: kind %u",
		    t[i].line, client.kind[i]);
	}
	client.reply.t0 = 99;
	session_too_long(s, 10);
	ck_assert_double_eq(client.t0[n], 99);
	ck_assert_uint_eq(client.kind[n], REPLY_OTHER);
}
END_TEST

/*
 * A cached check's answer does not depend on how its URL was split:
 * robots_url_fast()'s shape, URLs it leaves to robots_url_parse() (escapes, dot
 * segments, a URL past the fast path's stack buffer) and the full path all
 * answer the same line.
 */
START_TEST(test_cached_check_same_line_for_every_url_shape)
{
	static const char *const urls[] = { "https://a.test/a/b",
		"HTTPS://A.test:443/a/b", "https://a.test/%61/b",
		"https://a.test/x/../a/./b", "https://user@a.test/a/b#f" };
	char line[6000];
	size_t i, n = 0;

	send_line(CHECK_A);
	finish("https://a.test", 200, rules);
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		snprintf(line, sizeof(line),
		    "{\"op\":\"check\",\"url\":\"%s\",\"agent\":"
		    "\"FooBot/2.1\",\"id\":7}",
		    urls[i]);
		send_line(line);
		assert_last(i + 2, VERDICT_A("cache"));
	}
	n = (size_t)snprintf(line, sizeof(line),
	    "{\"op\":\"check\",\"url\":\"https://a.test/a/b?");
	memset(line + n, 'q', 5000);
	n += 5000;
	snprintf(line + n, sizeof(line) - n, "\",\"agent\":\"B\",\"id\":8}");
	send_line(line);
	ck_assert_uint_eq(client.nlines, i + 2);
	ck_assert_ptr_nonnull(strstr(client.lines[i + 1],
	    "{\"id\":8,\"ok\":true,\"allowed\":false,\"origin\":"
	    "\"https://a.test\",\"source\":\"cache\""));
}
END_TEST

START_TEST(test_batch_answers_in_order_and_shares_fetches)
{
	send_line(
	    "{\"op\":\"check\",\"agent\":\"B\",\"id\":\"x\",\"urls\":["
	    "\"https://a.test/a/ok\",\"gopher://a.test/\",\"https://a.test/"
	    "robots.txt\",\"https://a.test/z\"]}");
	ck_assert_uint_eq(sc.n, 1);
	finish("https://a.test", 404, "");
	assert_last(1,
	    "{\"id\":\"x\",\"ok\":true,\"results\":[{\"url\":\"https://a.test/"
	    "a/ok\",\"ok\":true,\"allowed\":true,\"origin\":\"https://"
	    "a.test\",\"source\":\"fetched\",\"reason\":\"unavailable\","
	    "\"http_status\":404,\"rule\":null,\"crawl_delay\":null,"
	    "\"expires_in\":86400,\"version\":\"" V_404 "\"},{\"url\":"
	    "\"gopher://a.test/\",\"ok\":false,"
	    "\"error\":{\"code\":\"unsupported_scheme\",\"message\":"
	    "\"unsupported scheme: only http, https and "
	    "ftp\"}},{\"url\":\"https://a.test/"
	    "robots.txt\",\"ok\":true,\"allowed\":true,\"origin\":\"https://"
	    "a.test\",\"source\":\"cache\",\"reason\":\"robots_txt\","
	    "\"http_status\":null,\"rule\":null,\"crawl_delay\":null,"
	    "\"expires_in\":null,\"version\":null},{\"url\":\"https://"
	    "a.test/z\",\"ok\":true,"
	    "\"allowed\":true,\"origin\":\"https://a.test\",\"source\":"
	    "\"fetched\",\"reason\":\"unavailable\",\"http_status\":404,"
	    "\"rule\":null,\"crawl_delay\":null,\"expires_in\":86400,"
	    "\"version\":\"" V_404 "\"}]}\n");
}
END_TEST

/*
 * Each URL of a check is split once: the first not settled in the cache
 * keeps the split it was looked up with when its check parks, and every
 * URL that waits is answered from its own when its fetch ends. One
 * origin is left to robots_url_parse() (an escape), the others take the
 * fast shape.
 */
START_TEST(test_parked_urls_are_split_once)
{
	splits = 0;
	send_line("{\"op\":\"check\",\"agent\":\"B\",\"id\":1,\"urls\":["
	          "\"https://a.test/a/b\",\"https://b.test/%7Ex\","
	          "\"https://a.test/robots.txt\",\"https://a.test/z\"]}");
	ck_assert_uint_eq(splits, 4);
	ck_assert_uint_eq(sc.n, 2);
	finish("https://a.test", 200, rules);
	finish("https://b.test", 404, "");
	ck_assert_uint_eq(splits, 4);
	ck_assert_uint_eq(client.nlines, 1);
	ck_assert_ptr_nonnull(strstr(client.lines[0],
	    "{\"url\":\"https://b.test/%7Ex\",\"ok\":true,\"allowed\":"
	    "true,\"origin\":\"https://b.test\",\"source\":\"fetched\","
	    "\"reason\":\"unavailable\""));
	ck_assert_ptr_nonnull(strstr(client.lines[0],
	    "{\"url\":\"https://a.test/a/b\",\"ok\":true,\"allowed\":"
	    "false,\"origin\":\"https://a.test\",\"source\":\"fetched\","
	    "\"reason\":\"rule\""));
	ck_assert_ptr_nonnull(strstr(client.lines[0],
	    "{\"url\":\"https://a.test/z\",\"ok\":true,\"allowed\":true,"
	    "\"origin\":\"https://a.test\",\"source\":\"fetched\","
	    "\"reason\":\"no_rule\""));
	send_line(CHECK_A);
	ck_assert_uint_eq(splits, 5); /* answered at once */
}
END_TEST

START_TEST(test_cached_batch_items_answer_as_the_full_path_does)
{
	send_line(CHECK_A);
	finish("https://a.test", 200, rules);
	/* The first URL takes the cached shortcut, the second (an escape)
	 * robots_url_parse(): both must read as the protocol says. */
	send_line("{\"op\":\"check\",\"agent\":\"B\",\"id\":3,\"urls\":["
	          "\"https://a.test/a/b\",\"https://A.test/a/%6Bk\"]}");
	assert_last(2,
	    "{\"id\":3,\"ok\":true,\"results\":[{\"url\":\"https://a.test/"
	    "a/b\",\"ok\":true,\"allowed\":false,\"origin\":\"https://"
	    "a.test\",\"source\":\"cache\",\"reason\":\"rule\","
	    "\"http_status\":200,\"rule\":{\"directive\":\"disallow\","
	    "\"pattern\":\"/a\",\"line\":2},\"crawl_delay\":null,"
	    "\"expires_in\":86400,\"version\":\"" V_RULES "\"},{\"url\":"
	    "\"https://A.test/a/%6Bk\","
	    "\"ok\":true,\"allowed\":false,\"origin\":\"https://a.test\","
	    "\"source\":\"cache\",\"reason\":\"rule\",\"http_status\":"
	    "200,\"rule\":{\"directive\":\"disallow\",\"pattern\":\"/a\","
	    "\"line\":2},\"crawl_delay\":null,\"expires_in\":86400,"
	    "\"version\":\"" V_RULES "\"}]}\n");
	ck_assert_uint_eq(sc.n, 1);
}
END_TEST

/*
 * The two decoders of a check line, side by side on two clients of one
 * cache: wire_fast_check_page() (which must take the line) and proto_decode()
 * with check_request(); both hand check_op() the same shape.
 */
static struct fake_client full_client;
static struct session *full_s;
static struct buf fast_answer;
static struct check_env fast_env, full_env;

/* Send line through the fast decoder, which must take it. */
static void
send_fast(const char *line)
{
	static struct wire_str urls[PROTO_MAX_URLS];
	static struct wire_pair pairs[4];
	char scratch[4096];
	struct wire_check wc;
	struct wire_page pg;

	ck_assert_uint_lt(strlen(line), sizeof(scratch));
	ck_assert_msg(wire_fast_check_page(line, strlen(line), scratch, urls,
	                  PROTO_MAX_URLS, pairs, 4, &wc, &pg),
	    "not decoded: %s", line);
	check_op(&fast_env, s, 0, &wc);
}

/* Send line through the full decoder. */
static void
send_full(const char *line)
{
	struct request req;
	enum proto_err err;
	const char *msg;

	ck_assert_int_eq(
	    proto_decode(line, strlen(line), 0, &req, &err, &msg), 0);
	check_request(&full_env, full_s, 0, &req);
	proto_request_clear(&req);
}

#define RULES_D "User-agent: b\nCrawl-delay: 1.5\nDisallow: /x\n"

/*
 * Batches of every kind the fast path takes; a.test, c.test and d.test are
 * cached, b.test and e.test are not.
 */
static const char *const fast_batches[] = {
	("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\",\"http://c.test/"
	 "z\",\"https://a.test/a/ok\",\"http://d.test/x?q\",\"HTTP://D.TEST:80/"
	 "y\"],\"agent\":\"B\",\"id\":1}"),
	("{\"id\":2, \"agent\" : \"B\\tx\\\"\\u0041\" ,\"urls\":[ "
	 "\"https:\\/\\/a.test\\/\\u0061\\/b\" , \"http://c.test/e\\\"q\\\\\","
	 "\"https://a.test/a/ok?\\u0026x=\\u003c\\n\"],\"op\":\"check\"}"),
	("{\"op\":\"check\",\"urls\":[\"https://a.test/\\u00e9t\\u00e9\","
	 "\"https://a.test/caf\xc3\xa9\",\"https://a.test/a/\\ud83d\\ude00\","
	 "\"http://\xc3\xa9.d.test/\",\"https://a.test/a\\u2028\"],\"agent\":"
	 "\"B\xc3\xa9/1\",\"id\":3}"),
	("{\"op\":\"check\",\"urls\":[\"gopher://a.test/\",\"http://\",\"\","
	 "\"https://a.test/robots.txt\",\"not a url\",\"https://a.test/a/ok\","
	 "\"http://[::1/\",\"http://d.test/robots.txt?x\",\"http://a.test:0/\","
	 "\"https://A.test/%7e/../a/./b\",\"http://z.test/robots.txt\"],"
	 "\"agent\":\"B\",\"id\":4}"),
	("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\",\"http://b.test/"
	 "1\",\"https://a.test/z\",\"http://b.test/robots.txt\",\"http://"
	 "b.test/"
	 "2\",\"gopher://x/\"],\"agent\":\"B\",\"id\":5}"),
	("{\"op\":\"check\",\"urls\":[\"http://b.test/3\",\"https://a.test/a/"
	 "b\"],\"agent\":\"B\"}"),
	("{\"op\":\"check\",\"wait\":false,\"urls\":[\"https://a.test/a\","
	 "\"http://e.test/\",\"https://a.test/z\"],\"agent\":\"B\",\"id\":7}"),
	"{\"op\":\"check\",\"urls\":[],\"agent\":\"B\",\"id\":0}",
	"{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\"],\"agent\":\"\"}",
};

/* Lines the fast path leaves to the full path. */
static const char *const full_batches[] = {
	("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\",\"http://c.test/"
	 "\"],\"agent\":\"X\",\"agent\":\"B\",\"id\":8}"),
	("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\"],\"agent\":\"B\","
	 "\"x\":{\"y\":[1,\"]\"]},\"id\":9}"),
	("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\"],\"agent\":\"B\","
	 "\"id\":\"s\\u00e9\"}"),
};

/*
 * Both paths give every batch the same answer line, byte for byte, and
 * wait on the same fetches; lines the fast path leaves alone still answer
 * as the full path does.
 */
START_TEST(test_fast_batches_answer_as_the_full_path_does)
{
	size_t i, n = sizeof(fast_batches) / sizeof(fast_batches[0]);

	memset(&full_client, 0, sizeof(full_client));
	full_client.reply.ops = &client_ops;
	full_s = session_new(d, &full_client.reply);
	fast_env = (struct check_env){ .base = base,
		.cache = cache,
		.wait_timeout = 65,
		.answer = &fast_answer };
	full_env = fast_env;
	full_env.answer = NULL;
	send_line(CHECK_A);
	finish("https://a.test", 200, rules);
	send_line("{\"op\":\"check\",\"urls\":[\"http://c.test/\","
	          "\"http://d.test/\"],\"agent\":\"B\",\"wait\":false}");
	finish("http://c.test", 404, "");
	finish("http://d.test", 200, RULES_D);
	for (i = 0; i < client.nlines; i++)
		free(client.lines[i]);
	client.nlines = 0;
	for (i = 0; i < n; i++) {
		send_fast(fast_batches[i]);
		send_full(fast_batches[i]);
	}
	for (i = 0; i < sizeof(full_batches) / sizeof(full_batches[0]); i++) {
		send_line(full_batches[i]);
		send_full(full_batches[i]);
	}
	/* and b.test, e.test, xn--9ca.d.test */
	ck_assert_uint_eq(sc.n, 6);
	finish("http://b.test", 200, RULES_D);
	finish("http://e.test", 503, "");
	finish("http://xn--9ca.d.test", 404, "");
	ck_assert_uint_eq(client.nlines, full_client.nlines);
	ck_assert_uint_eq(client.nlines, n + i);
	for (i = 0; i < client.nlines; i++)
		ck_assert_str_eq(client.lines[i], full_client.lines[i]);
	session_free(full_s);
	for (i = 0; i < full_client.nlines; i++)
		free(full_client.lines[i]);
	buf_clear(&fast_answer);
}
END_TEST

/*
 * Rows of one origin in a fast batch look it up once (check_memo) yet each
 * counts the hit it is, as the full path counts them; the origin spelled
 * another way (case, default port) is the same origin.
 */
START_TEST(test_fast_batch_rows_of_one_origin_each_count_a_hit)
{
	uint64_t hits;

	fast_env = (struct check_env){ .base = base,
		.cache = cache,
		.wait_timeout = 65,
		.answer = &fast_answer };
	send_line(CHECK_A);
	finish("https://a.test", 200, rules);
	hits = cache_stats(cache)->hits;
	send_fast("{\"op\":\"check\",\"urls\":[\"https://a.test/a/b\","
	          "\"https://A.TEST/x\",\"https://a.test:443/a/ok\","
	          "\"https://a.test/y\"],\"agent\":\"B\",\"id\":1}");
	ck_assert_uint_eq(cache_stats(cache)->hits - hits, 4);
}
END_TEST

START_TEST(test_wait_false_answers_pending_and_fetches_in_background)
{
	send_line("{\"op\":\"check\",\"url\":\"http://b.test/\",\"agent\":"
	          "\"B\",\"wait\":false}");
	assert_last(1, "{\"id\":null,\"ok\":true,\"pending\":true,\"origin\":"
	               "\"http://b.test\"}\n");
	ck_assert_uint_eq(sc.n, 1);
	ck_assert_int_eq(session_waiting(s), 0);
	finish("http://b.test", 500, "");
	ck_assert_uint_eq(client.nlines, 1);
}
END_TEST

START_TEST(test_bad_lines_get_errors_and_blank_lines_nothing)
{
	static const struct {
		const char *line, *want;
	} rows[] = {
		{ "{nope", "{\"id\":null,\"ok\":false,\"error\":{\"code\":"
		           "\"bad_json\",\"message\":\"the request is not "
		           "valid JSON\"}}\n" },
		{ "{\"op\":\"fly\",\"id\":[1]}\r",
		    "{\"id\":[1],\"ok\":false,\"error\":{\"code\":\"unknown_"
		    "op\",\"message\":\"unknown op\"}}\n" },
		{ "{\"op\":\"clock\",\"advance\":5}",
		    "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"unknown_"
		    "op\",\"message\":\"unknown op\"}}\n" },
		{ "{\"op\":\"check\",\"url\":\"http://\",\"agent\":\"B\","
		  "\"id\":1}",
		    NULL }, /* bad_url: checked by code below */
	};
	size_t i;

	send_line("");
	send_line(" \t\r");
	ck_assert_uint_eq(client.nlines, 0);
	ck_assert_uint_eq(dispatch_requests(d), 0);
	for (i = 0; i < 3; i++) {
		send_line(rows[i].line);
		assert_last(i + 1, rows[i].want);
	}
	send_line(rows[3].line);
	ck_assert_ptr_nonnull(strstr(client.lines[3], "\"code\":\"bad_url\""));
	session_too_long(s, 65536);
	assert_last(5, "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"line_"
	               "too_long\",\"message\":\"request line longer than "
	               "65536 bytes\"}}\n");
}
END_TEST

START_TEST(test_closed_session_drops_its_checks_but_not_the_fetch)
{
	const struct cache_entry *e;

	send_line(CHECK_A);
	session_close(s);
	ck_assert_int_eq(session_waiting(s), 0);
	ck_assert_int_eq(sc.f[0].cancelled, 0);
	finish("https://a.test", 200, rules);
	ck_assert_uint_eq(client.nlines, 0);
	ck_assert_uint_eq(client.settled, 0);
	ck_assert_ptr_nonnull(e = cache_find(cache, "https://a.test"));
	ck_assert_int_eq(e->policy, CACHE_RULES);
}
END_TEST

START_TEST(test_expire_answers_waiting_checks_timeout)
{
	send_line(CHECK_A);
	dispatch_expire_waiting(d);
	assert_last(1, "{\"id\":7,\"ok\":false,\"error\":{\"code\":\"timeout\","
	               "\"message\":\"the robots.txt fetch did not end in "
	               "time\"}}\n");
	ck_assert_uint_eq(client.settled, 1);
	finish(
	    "https://a.test", 200, rules); /* the fetch still fills the cache */
	ck_assert_uint_eq(client.nlines, 1);
}
END_TEST

START_TEST(test_parked_check_times_out_on_the_loop)
{
	struct dispatch_settings ds = { .wait_timeout = 0.01 };

	dispatch_configure(d, &ds);
	send_line(CHECK_A);
	/* The loop runs until the check's timer has fired: nothing else. */
	ck_assert_int_ne(event_base_dispatch(base), -1);
	ck_assert_uint_eq(client.nlines, 1);
	ck_assert_ptr_nonnull(strstr(client.lines[0], "\"code\":\"timeout\""));
}
END_TEST

START_TEST(test_one_session_may_wait_on_1024_urls)
{
	char line[128];
	size_t i;

	for (i = 0; i < 1025; i++) {
		snprintf(line, sizeof(line),
		    "{\"op\":\"check\",\"url\":\"http://h%zu.test/\",\"agent\":"
		    "\"B\",\"id\":%zu}",
		    i, i);
		send_line(line);
	}
	ck_assert_uint_eq(client.nlines, 1); /* only the 1025th answered */
	ck_assert_ptr_nonnull(strstr(client.lines[0], "\"id\":1024,"));
	ck_assert_ptr_nonnull(strstr(client.lines[0], "\"overloaded\""));
	finish("http://h0.test", 404, "");
	ck_assert_uint_eq(client.nlines, 2);
	send_line("{\"op\":\"check\",\"url\":\"http://h0.test/x\",\"agent\":"
	          "\"B\",\"id\":0}");
	ck_assert_ptr_nonnull(strstr(client.lines[2], "\"source\":\"cache\""));
}
END_TEST

START_TEST(test_stats_ping_purge_and_inspect_lines)
{
	send_line("{\"op\":\"stats\",\"id\":1}");
	assert_last(1, "{\"id\":1,\"ok\":true,\"stats\":{\"hits\":7,"
	               "\"waiting\":0}}\n");
	send_line("{\"op\":\"ping\",\"id\":2}");
	assert_last(
	    2, "{\"id\":2,\"ok\":true,\"version\":\"" PACKAGE_VERSION "\"}\n");
	send_line(
	    "{\"op\":\"inspect\",\"origin\":\"https://a.test\",\"id\":3}");
	assert_last(3, "{\"id\":3,\"ok\":false,\"error\":{\"code\":\"not_"
	               "cached\",\"message\":\"the origin https://a.test is "
	               "not in the cache\"}}\n");
	send_line(CHECK_A);
	finish("https://a.test", 200,
	    "User-agent: x\nCrawl-delay: 2.5\nSitemap: /s.xml\n");
	send_line(
	    "{\"op\":\"inspect\",\"origin\":\"https://a.test\",\"id\":4}");
	assert_last(5,
	    "{\"id\":4,\"ok\":true,\"origin\":\"https://a.test\",\"state\":"
	    "\"rules\",\"source\":\"fetched\",\"http_status\":200,"
	    "\"fetched_at\":1795420800.0,\"validated_at\":1795420800.0,"
	    "\"last_fetch_at\":1795420800.0,"
	    /* sha256sum of the body below */
	    "\"version\":\"7443b21712be2dba\","
	    "\"expires_at\":1795507200.0,\"expires_in\":86400,\"body_bytes\":"
	    "47,\"truncated\":false,\"final_url\":null,\"groups\":[{\"agents\":"
	    "[\"x\"],\"rules\":0,\"crawl_delay\":2.5}],\"sitemaps\":[\"/"
	    "s.xml\"],"
	    "\"retry\":{\"fail_streak\":0,\"failing_since\":null,\"next_"
	    "retry\":"
	    "null,\"last_error\":null,\"cause\":null},\"extra_lines\":[],"
	    "\"warnings\":[],\"fetching\":false,\"stale\":false}\n");
	send_line("{\"op\":\"purge\",\"origin\":\"https://a.test\",\"id\":5}");
	assert_last(6, "{\"id\":5,\"ok\":true,\"purged\":1}\n");
	send_line("{\"op\":\"purge\",\"all\":true,\"id\":6}");
	assert_last(7, "{\"id\":6,\"ok\":true,\"purged\":0}\n");
}
END_TEST

START_TEST(test_clock_op_under_test_clock_moves_the_cache_clock)
{
	struct dispatch_settings ds = { .test_clock = 1, .wait_timeout = 65 };

	dispatch_configure(d, &ds);
	send_line("{\"op\":\"clock\",\"advance\":90000,\"id\":1}");
	assert_last(1, "{\"id\":1,\"ok\":true,\"now\":1795510800.0}\n");
}
END_TEST

/* The tier's read for the history op, as the test drives it. */
static struct {
	cache_peek_cb cb;
	void *arg;
	char origin[64];
	int calls, refuse;
} peeked;

static int
fake_peek(void *impl, const char *origin, cache_peek_cb cb, void *arg)
{
	(void)impl;
	if (peeked.refuse)
		return -1;
	snprintf(peeked.origin, sizeof(peeked.origin), "%s", origin);
	peeked.cb = cb;
	peeked.arg = arg;
	peeked.calls++;
	return 0;
}

static const struct cache_fetch_ops peek_ops = {
	.start = script_start,
	.start_cond = script_start_cond,
	.cancel = script_cancel,
	.queued = script_queued,
	.peek = fake_peek,
};

/* The fixture over a cache whose fetcher reads a (fake) shared tier. */
static void
setup_peek(void)
{
	struct dispatch_settings ds = { .wait_timeout = 65 };

	dispatch_fixture_setup(0, 3);
	session_free(s);
	dispatch_free(d);
	cache_free(cache);
	ck_assert_ptr_nonnull(cache = cache_new(&set, &peek_ops, &sc, &clk));
	d = dispatch_new(base, cache, &clk, fake_stats, NULL);
	dispatch_configure(d, &ds);
	s = session_new(d, &client.reply);
	memset(&peeked, 0, sizeof(peeked));
}

#define HISTORY_A "{\"op\":\"history\",\"origin\":\"https://a.test\",\"id\":7}"
#define NOT_CACHED_A                                                           \
	"{\"id\":7,\"ok\":false,\"error\":{\"code\":\"not_cached\","           \
	"\"message\":\"the origin is not in the cache\"}}\n"

static const struct cache_version fleet_v = { "0123456789abcdef", 1795500000,
	1795586400, 200, CACHE_RULES, 0 };

/*
 * history of an origin not cached waits for the tier's read, answers its
 * versions as the op does (counted as a history answer, its latency from
 * its own line), makes no entry and fetches nothing.
 */
START_TEST(test_history_unasked_answers_the_tiers_versions)
{
	send_line(HISTORY_A);
	ck_assert_int_eq(peeked.calls, 1);
	ck_assert_str_eq(peeked.origin, "https://a.test");
	ck_assert_uint_eq(client.nlines, 0);
	ck_assert_int_eq(session_waiting(s), 1);
	client.reply.t0 = 99; /* a later line's */
	peeked.cb(&fleet_v, 1, peeked.arg);
	assert_last(1, "{\"id\":7,\"ok\":true,\"origin\":\"https://a.test\","
	               "\"versions\":[{\"version\":\"0123456789abcdef\","
	               "\"first_seen\":1795500000,\"last_seen\":1795586400,"
	               "\"http_status\":200,\"state\":\"rules\"}]}\n");
	ck_assert_int_eq(client.kind[0], REPLY_HISTORY);
	ck_assert_double_eq(client.t0[0], 0);
	ck_assert_double_eq(client.reply.t0, 99);
	ck_assert_uint_eq(client.settled, 1);
	ck_assert_int_eq(session_waiting(s), 0);
	ck_assert_ptr_null(cache_find(cache, "https://a.test"));
	ck_assert_uint_eq(script_count(&sc, "https://a.test"), 0);
}
END_TEST

/* No versions from the tier, or no tier read at all: not_cached. */
START_TEST(test_history_unasked_without_versions_is_not_cached)
{
	send_line(HISTORY_A);
	peeked.cb(NULL, 0, peeked.arg);
	assert_last(1, NOT_CACHED_A);
	peeked.refuse = 1;
	send_line(HISTORY_A);
	assert_last(2, NOT_CACHED_A);
	ck_assert_int_eq(session_waiting(s), 0);
}
END_TEST

/* A session closed while the read runs gets nothing when it ends. */
START_TEST(test_history_unasked_dropped_with_its_session)
{
	send_line(HISTORY_A);
	session_close(s);
	ck_assert_int_eq(session_waiting(s), 0);
	peeked.cb(&fleet_v, 1, peeked.arg);
	ck_assert_uint_eq(client.nlines, 0);
	ck_assert_uint_eq(client.settled, 0);
}
END_TEST

/* A tdmrep.json cache on the same (fake) tier, for the tdm setup. */
static struct cache *tdm_cache;

static void
setup_peek_tdm(void)
{
	setup_peek();
	ck_assert_ptr_nonnull(
	    tdm_cache = cache_new(&set, &peek_ops, &sc, &clk));
	cache_set_kind(tdm_cache, &tdm_kind);
	dispatch_set_tdm(d, tdm_cache, TDM_ON_DEMAND);
}

static void
teardown_peek_tdm(void)
{
	dispatch_fixture_teardown();
	cache_free(tdm_cache);
}

#define HISTORY_TDM_A                                                          \
	"{\"op\":\"history\",\"origin\":\"https://a.test\","                   \
	"\"resource\":\"tdmrep\",\"id\":7}"

/*
 * history of tdmrep.json reads that file's shared value (its URL is its
 * key) and names the resource; each version's state is tdmrep.json's
 * (an invalid file is no "rules", a 404 is "none").
 */
START_TEST(test_history_of_tdmrep_names_it_and_its_states)
{
	static const struct cache_version v[3] = {
		{ "0123456789abcdef", 1795500000, 1795586400, 200, CACHE_RULES,
		    CACHE_VERSION_INVALID },
		{ "00000000000000aa", 1795400000, 1795400000, 404,
		    CACHE_ALLOW_ALL, 0 },
		{ "00000000000000bb", 1795300000, 1795300000, 200, CACHE_RULES,
		    0 },
	};

	send_line(HISTORY_TDM_A);
	ck_assert_int_eq(peeked.calls, 1);
	ck_assert_str_eq(
	    peeked.origin, "https://a.test/.well-known/tdmrep.json");
	peeked.cb(v, 3, peeked.arg);
	assert_last(1, "{\"id\":7,\"ok\":true,\"origin\":\"https://a.test\","
	               "\"resource\":\"tdmrep\",\"versions\":["
	               "{\"version\":\"0123456789abcdef\","
	               "\"first_seen\":1795500000,\"last_seen\":1795586400,"
	               "\"http_status\":200,\"state\":\"invalid\"},"
	               "{\"version\":\"00000000000000aa\","
	               "\"first_seen\":1795400000,\"last_seen\":1795400000,"
	               "\"http_status\":404,\"state\":\"none\"},"
	               "{\"version\":\"00000000000000bb\","
	               "\"first_seen\":1795300000,\"last_seen\":1795300000,"
	               "\"http_status\":200,\"state\":\"rules\"}]}\n");
	ck_assert_ptr_null(cache_find(tdm_cache, "https://a.test"));
	/* none there: the file's own not_cached */
	send_line(HISTORY_TDM_A);
	peeked.cb(NULL, 0, peeked.arg);
	assert_last(2, "{\"id\":7,\"ok\":false,\"error\":{\"code\":"
	               "\"not_cached\",\"message\":\"the origin's tdmrep.json "
	               "is not in the cache\"}}\n");
	/* robots.txt's history is as ever */
	send_line(HISTORY_A);
	ck_assert_str_eq(peeked.origin, "https://a.test");
	peeked.cb(&fleet_v, 1, peeked.arg);
	assert_last(3, "{\"id\":7,\"ok\":true,\"origin\":\"https://a.test\","
	               "\"versions\":[{\"version\":\"0123456789abcdef\","
	               "\"first_seen\":1795500000,\"last_seen\":1795586400,"
	               "\"http_status\":200,\"state\":\"rules\"}]}\n");
}
END_TEST

/*
 * Without a tdmrep.json cache (--tdmrep off), history and watch of it are
 * errors that say so, as inspect's; a resource robotsd does not know is a
 * bad request.
 */
START_TEST(test_tdmrep_ops_with_tdmrep_off)
{
	static const char off[] =
	    "{\"id\":7,\"ok\":false,\"error\":{\"code\":\"not_cached\","
	    "\"message\":\"tdmrep.json is never fetched (--tdmrep off)\"}}\n";

	send_line(HISTORY_TDM_A);
	assert_last(1, off);
	ck_assert_int_eq(peeked.calls, 0);
	send_line("{\"op\":\"history\",\"origin\":\"https://a.test\","
	          "\"resource\":\"ai.txt\",\"id\":7}");
	assert_last(2, "{\"id\":7,\"ok\":false,\"error\":{\"code\":"
	               "\"bad_request\",\"message\":\"'resource' must be "
	               "\\\"robots.txt\\\" or \\\"tdmrep\\\"\"}}\n");
	send_line("{\"op\":\"watch\",\"all\":true,\"resources\":[],\"id\":7}");
	assert_last(3, "{\"id\":7,\"ok\":false,\"error\":{\"code\":"
	               "\"bad_request\",\"message\":\"'resources' must be an "
	               "array of \\\"robots.txt\\\" and \\\"tdmrep\\\"\"}}\n");
}
END_TEST

static Suite *
dispatch_suite(void)
{
	Suite *su = suite_create("dispatch");
	TCase *tc = tcase_create("dispatch");

	tcase_add_checked_fixture(tc, setup, dispatch_fixture_teardown);
	tcase_add_test(tc, test_miss_waits_for_the_one_fetch_then_hits);
	tcase_add_test(tc, test_unreachable_answers_name_the_cause);
	tcase_add_test(tc, test_waited_check_keeps_its_own_latency_start);
	tcase_add_test(tc, test_answers_are_stamped_with_their_op);
	tcase_add_test(tc, test_purge_without_the_admin_right_is_forbidden);
	tcase_add_test(tc, test_batch_answers_in_order_and_shares_fetches);
	tcase_add_test(tc, test_parked_urls_are_split_once);
	tcase_add_test(tc, test_cached_check_same_line_for_every_url_shape);
	tcase_add_test(
	    tc, test_cached_batch_items_answer_as_the_full_path_does);
	tcase_add_test(tc, test_fast_batches_answer_as_the_full_path_does);
	tcase_add_test(tc, test_fast_batch_rows_of_one_origin_each_count_a_hit);
	tcase_add_test(
	    tc, test_wait_false_answers_pending_and_fetches_in_background);
	tcase_add_test(tc, test_bad_lines_get_errors_and_blank_lines_nothing);
	tcase_add_test(
	    tc, test_closed_session_drops_its_checks_but_not_the_fetch);
	tcase_add_test(tc, test_expire_answers_waiting_checks_timeout);
	tcase_add_test(tc, test_parked_check_times_out_on_the_loop);
	tcase_add_test(tc, test_one_session_may_wait_on_1024_urls);
	tcase_add_test(tc, test_stats_ping_purge_and_inspect_lines);
	tcase_add_test(
	    tc, test_clock_op_under_test_clock_moves_the_cache_clock);
	suite_add_tcase(su, tc);
	tc = tcase_create("history_tier");
	tcase_add_checked_fixture(tc, setup_peek, dispatch_fixture_teardown);
	tcase_add_test(tc, test_history_unasked_answers_the_tiers_versions);
	tcase_add_test(tc, test_history_unasked_without_versions_is_not_cached);
	tcase_add_test(tc, test_history_unasked_dropped_with_its_session);
	suite_add_tcase(su, tc);
	tcase_add_test(tc, test_tdmrep_ops_with_tdmrep_off);
	tc = tcase_create("history_tdmrep");
	tcase_add_checked_fixture(tc, setup_peek_tdm, teardown_peek_tdm);
	tcase_add_test(tc, test_history_of_tdmrep_names_it_and_its_states);
	suite_add_tcase(su, tc);
	return su;
}

TEST_PROGRAM(dispatch_suite, NULL, NULL);
