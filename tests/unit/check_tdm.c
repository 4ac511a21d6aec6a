/*
 * check_tdm.c: the TDMRep answer (robots_tdm_decide(), src/robots/
 * robots_tdm.c) and its writer (jw_tdm(), src/wire/usagew.c) against the
 * contract ("Every signal, not only robots.txt": TDMRep, the page's TDMRep
 * overrides and "Details that settle the corner cases"): tdmrep.json's
 * first matching member, a TDM-Reservation / TDM-Policy header over it, a
 * tdm-reservation / tdm-policy <meta> over the header, an absent field
 * resetting nothing, the last valid of several lines, "from", and the
 * usage purpose "tdm".
 */
#include <config.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots/tdmrep.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/tdmrep_json.h"
#include "wire/usagew.h"
#include "test_main.h"

#define P "https://p.example/policy.json"
#define Q "https://q.example/q.json"

/* Two members: /a/ reserved with policy P, then /a/open/ (shadowed). */
static const char file[] =
    "[{\"location\": \"/a/*\", \"tdm-reservation\": 1, \"tdm-policy\": \"" P
    "\"}, {\"location\": \"/a/open/\", \"tdm-reservation\": 0},"
    " {\"location\": \"/free/\", \"tdm-reservation\": 0}]";

#define MAXP 4

struct pair {
	const char *name, *value;
};

struct decide_case {
	enum tdm_state state;
	const char *path;
	int page;                              /* 0: a check without "page" */
	struct pair headers[MAXP], meta[MAXP]; /* NULL name ends */
	int reservation;
	const char *policy, *location;
	enum tdm_from from;
};

#define RULES TDM_STATE_RULES
#define NOPAGE                                                                 \
	0, { { NULL, NULL } },                                                 \
	{                                                                      \
		{                                                              \
			NULL, NULL                                             \
		}                                                              \
	}
#define EMPTY                                                                  \
	1, { { NULL, NULL } },                                                 \
	{                                                                      \
		{                                                              \
			NULL, NULL                                             \
		}                                                              \
	}
#define H(...)                                                                 \
	1,                                                                     \
	{                                                                      \
		__VA_ARGS__,                                                   \
		{                                                              \
			NULL, NULL                                             \
		}                                                              \
	}
#define NOMETA                                                                 \
	{                                                                      \
		{                                                              \
			NULL, NULL                                             \
		}                                                              \
	}
#define RES "TDM-Reservation"
#define POL "TDM-Policy"

static const struct decide_case decide_cases[] = {
	/* tdmrep.json alone: the first member in file order decides;
	 * no "from" without a page. */
	{ RULES, "/a/x", NOPAGE, 1, P, "/a/*", TDM_FROM_ABSENT },
	{ RULES, "/a/open/x", NOPAGE, 1, P, "/a/*", TDM_FROM_ABSENT },
	{ RULES, "/free/x", NOPAGE, 0, NULL, "/free/", TDM_FROM_ABSENT },
	{ RULES, "/b", NOPAGE, -1, NULL, NULL, TDM_FROM_ABSENT },
	/* A page that says nothing: from the file, or absent. */
	{ RULES, "/a/x", EMPTY, 1, P, "/a/*", TDM_FROM_FILE },
	{ RULES, "/b", EMPTY, -1, NULL, NULL, TDM_FROM_ABSENT },
	/* Not "rules": nothing from the file. */
	{ TDM_STATE_NONE, "/a/x", NOPAGE, -1, NULL, NULL, TDM_FROM_ABSENT },
	{ TDM_STATE_INVALID, "/a/x", EMPTY, -1, NULL, NULL, TDM_FROM_ABSENT },
	{ TDM_STATE_UNREACHABLE, "/a/x", EMPTY, -1, NULL, NULL,
	    TDM_FROM_ABSENT },
	/* The header overrides the reservation; the absent policy resets
	 * nothing; location stays the member's. */
	{ RULES, "/a/x", H({ RES, "0" }), NOMETA, 0, P, "/a/*",
	    TDM_FROM_HEADER },
	/* A header policy alone: the reservation still the file's. */
	{ RULES, "/a/x", H({ POL, Q }), NOMETA, 1, Q, "/a/*", TDM_FROM_FILE },
	/* No member matches: from names the policy's source. */
	{ RULES, "/b", H({ POL, Q }), NOMETA, -1, Q, NULL, TDM_FROM_HEADER },
	{ TDM_STATE_NONE, "/b", H({ RES, "1" }), NOMETA, 1, NULL, NULL,
	    TDM_FROM_HEADER },
	/* meta overrides the header, field by field. */
	{ RULES, "/a/x", 1, { { RES, "0" }, { NULL, NULL } },
	    { { "tdm-reservation", "1" }, { NULL, NULL } }, 1, P, "/a/*",
	    TDM_FROM_META },
	{ RULES, "/free/x", 1, { { RES, "1" }, { POL, Q }, { NULL, NULL } },
	    { { "tdm-policy", P }, { NULL, NULL } }, 1, P, "/free/",
	    TDM_FROM_HEADER },
	{ TDM_STATE_UNREACHABLE, "/b", 1, { { POL, Q }, { NULL, NULL } },
	    { { "tdm-policy", P }, { NULL, NULL } }, -1, P, NULL,
	    TDM_FROM_META },
	/* A value other than 0 / 1 once trimmed is ignored, as if absent. */
	{ RULES, "/a/x", H({ RES, "2" }), NOMETA, 1, P, "/a/*", TDM_FROM_FILE },
	{ RULES, "/a/x", H({ RES, "yes" }), NOMETA, 1, P, "/a/*",
	    TDM_FROM_FILE },
	{ RULES, "/a/x", H({ RES, "" }), NOMETA, 1, P, "/a/*", TDM_FROM_FILE },
	{ RULES, "/a/x", H({ RES, " \t0 " }), NOMETA, 0, P, "/a/*",
	    TDM_FROM_HEADER },
	{ RULES, "/a/x", 1, { { NULL, NULL } },
	    { { "tdm-reservation", "0, 1" }, { NULL, NULL } }, 1, P, "/a/*",
	    TDM_FROM_FILE },
	/* An invalid policy is ignored. */
	{ RULES, "/a/x", H({ POL, "https://a b" }), NOMETA, 1, P, "/a/*",
	    TDM_FROM_FILE },
	{ RULES, "/b", H({ POL, " " }), NOMETA, -1, NULL, NULL,
	    TDM_FROM_ABSENT },
	/* Several lines of one name, not joined: the last valid one. */
	{ RULES, "/b", H({ RES, "1" }, { RES, "0" }), NOMETA, 0, NULL, NULL,
	    TDM_FROM_HEADER },
	{ RULES, "/b", H({ RES, "0" }, { RES, "x" }, { RES, "" }), NOMETA, 0,
	    NULL, NULL, TDM_FROM_HEADER },
	{ RULES, "/b", H({ POL, P }, { POL, Q }, { POL, "a b" }), NOMETA, -1, Q,
	    NULL, TDM_FROM_HEADER },
	{ RULES, "/b", 1, { { NULL, NULL } },
	    { { "tdm-reservation", "0" }, { "tdm-reservation", "1" },
	        { "tdm-reservation", "no" }, { NULL, NULL } },
	    1, NULL, NULL, TDM_FROM_META },
	/* Names case-insensitive; other names read nothing. */
	{ RULES, "/b", H({ "tdm-RESERVATION", "1" }), NOMETA, 1, NULL, NULL,
	    TDM_FROM_HEADER },
	{ RULES, "/b", 1,
	    { { "TDM-Reservations", "1" }, { "X-TDM", "1" },
	        { "Content-Usage", "train-ai=n" }, { NULL, NULL } },
	    { { "robots", "noai" }, { "TDM-Policy", Q }, { NULL, NULL } }, -1,
	    Q, NULL, TDM_FROM_META },
	/* Not fetched yet: the page's statements alone, no member. */
	{ TDM_STATE_PENDING, "/a/x", H({ RES, "1" }), NOMETA, 1, NULL, NULL,
	    TDM_FROM_HEADER },
	{ TDM_STATE_PENDING, "/a/x", 1, { { RES, "1" }, { POL, Q } },
	    { { "tdm-reservation", "0" }, { NULL, NULL } }, 0, Q, NULL,
	    TDM_FROM_META },
	{ TDM_STATE_PENDING, "/a/x", EMPTY, -1, NULL, NULL, TDM_FROM_ABSENT },
	/* policy reported as stated, whatever the reservation */
	{ RULES, "/a/x", 1, { { RES, "0" }, { NULL, NULL } },
	    { { "tdm-policy", Q }, { NULL, NULL } }, 0, Q, "/a/*",
	    TDM_FROM_HEADER },
};

/* The pairs of a case (name NULL ends) into page. */
static void
add_pairs(struct tdm_page *page, int meta, const struct pair *p)
{
	size_t i;

	for (i = 0; i < MAXP && p[i].name != NULL; i++)
		robots_tdm_page_add(page, meta, p[i].name, strlen(p[i].name),
		    p[i].value, strlen(p[i].value));
}

/* n bytes at s are the string want (NULL: s is NULL). */
static void
assert_bytes(const char *s, size_t n, const char *want, const char *what)
{
	if (want == NULL) {
		ck_assert_msg(s == NULL, "%s: %.*s", what, (int)n, s);
		return;
	}
	ck_assert_msg(s != NULL, "%s: null, want %s", what, want);
	ck_assert_msg(n == strlen(want) && memcmp(s, want, n) == 0,
	    "%s: %.*s, want %s", what, (int)n, s, want);
}

START_TEST(test_decide_table)
{
	const struct decide_case *c = &decide_cases[_i];
	enum tdmrep_error err;
	struct tdmrep *t = tdmrep_json_parse(file, strlen(file), &err, NULL);
	struct tdm_page page;
	struct tdm_answer a;

	ck_assert_ptr_nonnull(t);
	robots_tdm_page_init(&page);
	add_pairs(&page, 0, c->headers);
	add_pairs(&page, 1, c->meta);
	robots_tdm_decide(c->state == RULES ? t : NULL, c->state, c->path,
	    strlen(c->path), c->page ? &page : NULL, &a);
	ck_assert_int_eq(a.state, c->state);
	ck_assert_int_eq(a.reservation, c->reservation);
	assert_bytes(a.policy, a.policy_len, c->policy, "policy");
	assert_bytes(a.location, a.location_len, c->location, "location");
	ck_assert_int_eq(a.from, c->from);
	robots_tdmrep_free(t);
}
END_TEST

/* The rules state without rules (a caller's slip) answers no member. */
START_TEST(test_decide_no_rules)
{
	struct tdm_answer a;

	robots_tdm_decide(NULL, RULES, "/a/x", 4, NULL, &a);
	ck_assert_int_eq(a.reservation, -1);
	ck_assert_ptr_null(a.location);
	ck_assert_ptr_null(a.policy);
}
END_TEST

/* jw_tdm() of a inside {}, compared with want. */
static void
assert_written(
    const struct tdm_answer *a, const char *version, const char *want)
{
	struct buf b = BUF_INIT(0);
	struct jw w;

	jw_init(&w, &b);
	jw_obj(&w);
	jw_tdm(&w, a, version);
	jw_end(&w);
	ck_assert(jw_ok(&w));
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_msg(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
	    "%.*s\nwant %s", (int)b.len, b.p, want);
	buf_clear(&b);
}

START_TEST(test_write)
{
	struct tdm_answer a = { RULES, 1, P, strlen(P), "/a/*", 4,
		TDM_FROM_ABSENT };
	struct tdm_answer q = { TDM_STATE_NONE, -1, "\"x\"", 3, NULL, 0,
		TDM_FROM_META };

	assert_written(&a, "0123456789abcdef",
	    "{\"tdm\":{\"state\":\"rules\",\"reservation\":1,\"policy\":\"" P
	    "\",\"location\":\"/a/*\",\"version\":\"0123456789abcdef\"}}");
	a.from = TDM_FROM_FILE;
	a.reservation = 0;
	assert_written(&a, "0123456789abcdef",
	    "{\"tdm\":{\"state\":\"rules\",\"reservation\":0,\"policy\":\"" P
	    "\",\"location\":\"/a/*\",\"version\":\"0123456789abcdef\","
	    "\"from\":\"tdmrep.json\"}}");
	a.from = TDM_FROM_HEADER;
	a.policy = NULL;
	a.location = NULL;
	assert_written(&a, "",
	    "{\"tdm\":{\"state\":\"rules\","
	    "\"reservation\":0,\"policy\":null,\"location\":null,"
	    "\"version\":null,\"from\":\"header\"}}");
	assert_written(&q, "00000000000000ff",
	    "{\"tdm\":{\"state\":\"none\",\"reservation\":null,"
	    "\"policy\":\"\\\"x\\\"\",\"location\":null,"
	    "\"version\":\"00000000000000ff\",\"from\":\"meta\"}}");
	q.state = TDM_STATE_INVALID;
	q.from = TDM_FROM_ABSENT;
	q.policy = NULL;
	assert_written(&q, NULL,
	    "{\"tdm\":{\"state\":\"invalid\","
	    "\"reservation\":null,\"policy\":null,\"location\":null,"
	    "\"version\":null}}");
	q.state = TDM_STATE_UNREACHABLE;
	assert_written(&q, NULL,
	    "{\"tdm\":{\"state\":\"unreachable\","
	    "\"reservation\":null,\"policy\":null,\"location\":null,"
	    "\"version\":null}}");
	q.state = TDM_STATE_PENDING;
	q.reservation = 1;
	q.from = TDM_FROM_HEADER;
	assert_written(&q, NULL,
	    "{\"tdm\":{\"state\":\"pending\","
	    "\"reservation\":1,\"policy\":null,\"location\":null,"
	    "\"version\":null,\"from\":\"header\"}}");
	assert_written(NULL, "0123456789abcdef", "{\"tdm\":null}");
}
END_TEST

/* The purpose "tdm": reservation 1 disallowed, 0 allowed, none unknown. */
START_TEST(test_purpose)
{
	static const struct {
		int reservation;
		const char *want;
	} rows[] = { { 1, "disallowed" }, { 0, "allowed" }, { -1, "unknown" } };
	struct robots_usage us;
	struct tdm_answer a = { .state = RULES };
	struct buf b = BUF_INIT(0);
	struct jw w;
	char want[256];
	size_t i;

	memset(&us, 0, sizeof(us));
	us.pref[ROBOTS_PURPOSE_TRAIN_AI] = ROBOTS_PREF_DISALLOWED;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_str_eq(
		    robots_pref_name(robots_tdm_pref(rows[i].reservation)),
		    rows[i].want);
		a.reservation = rows[i].reservation;
		buf_reset(&b);
		jw_init(&w, &b);
		jw_obj(&w);
		jw_usage_tdm(&w, &us, NULL, &a);
		jw_end(&w);
		snprintf(want, sizeof(want),
		    "{\"usage\":{\"train-ai\":\"disallowed\",\"search\":"
		    "\"unknown\",\"ai-input\":\"unknown\",\"ai-use\":"
		    "\"unknown\",\"tdm\":\"%s\"},\"usage_from\":[]}",
		    rows[i].want);
		ck_assert_int_eq(b.state, BUF_OK);
		ck_assert_msg(
		    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
		    "%.*s", (int)b.len, b.p);
	}
	buf_clear(&b);
}
END_TEST

/* evidence.tdmrep: the tdmrep.json version, or null. */
START_TEST(test_evidence)
{
	struct buf b = BUF_INIT(0);
	struct jw w;
	const char *want = "{\"evidence\":{\"robots\":\"aaaaaaaaaaaaaaaa\","
	                   "\"tdmrep\":\"bbbbbbbbbbbbbbbb\",\"page\":"
	                   "\"cccccccccccccccc\"}}";

	jw_init(&w, &b);
	jw_obj(&w);
	jw_evidence_tdm(
	    &w, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc");
	jw_end(&w);
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_msg(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
	    "%.*s", (int)b.len, b.p);
	buf_clear(&b);
}
END_TEST

/* Where members start: brackets, commas and newlines in strings aside. */
static const struct {
	const char *json;
	uint32_t want[4];
} line_cases[] = {
	{ "[{}, {}]", { 1, 1, 0, 0 } },
	{ "[\n{},\n\n{}\n]", { 2, 4, 0, 0 } },
	{ "[\n {\"a\": [1,\n 2]},\n \"x,\\\"[\",\n 3\n]", { 2, 4, 5, 0 } },
	{ "[]", { 0, 0, 0, 0 } },
	{ "  \n[\n\t1\r\n,2,\n{\"l\":{\"m\":[\n]}}]", { 3, 4, 5, 0 } },
	{ "{\"a\": 1}", { 0, 0, 0, 0 } },
};

START_TEST(test_member_lines)
{
	uint32_t got[4];
	size_t i;

	robots_tdmrep_member_lines(
	    line_cases[_i].json, strlen(line_cases[_i].json), got, 3);
	got[3] = 0;
	for (i = 0; i < 4; i++)
		ck_assert_msg(got[i] == line_cases[_i].want[i],
		    "%s: member %zu on line %u", line_cases[_i].json, i,
		    got[i]);
}
END_TEST

/* Warning i of f: its code, line and text. */
static void
assert_warning(const struct tdmrep_file *f, size_t i, const char *want_code,
    uint32_t want_line, const char *want_text)
{
	const char *code;
	uint32_t line;
	char text[256];

	ck_assert_int_eq(
	    tdmrep_file_warning(f, i, &code, &line, text, sizeof(text)), 0);
	ck_assert_str_eq(code, want_code);
	ck_assert_uint_eq(line, want_line);
	ck_assert_str_eq(text, want_text);
}

/* A file's warnings as robotsctl test and inspect list them. */
START_TEST(test_file_warnings)
{
	static const char json[] = "[\n{\"location\": \"/\", "
	                           "\"tdm-reservation\": 1},\n"
	                           "7,\n{\"location\": \"/a\", "
	                           "\"tdm-reservation\": 0}]";
	struct tdmrep_file f;
	const char *code;
	uint32_t line;
	char text[256];

	ck_assert_int_eq(tdmrep_file_read(&f, json, strlen(json)), 0);
	assert_warning(&f, 0, "tdmrep_not_object", 3,
	    "member 1 is not an object: skipped");
	assert_warning(&f, 1, "tdmrep_shadowed", 4,
	    "member 2 can never decide: the location of member 0, earlier, is "
	    "a prefix of its own");
	ck_assert_int_eq(
	    tdmrep_file_warning(&f, 2, &code, &line, text, sizeof(text)), -1);
	tdmrep_file_clear(&f);
	ck_assert_int_eq(tdmrep_file_read(&f, "[1,", 3), 0);
	ck_assert_ptr_null(f.rules);
	ck_assert_int_eq(
	    tdmrep_file_warning(&f, 0, &code, &line, text, sizeof(text)), 0);
	ck_assert_str_eq(code, "tdmrep_invalid");
	ck_assert_uint_eq(line, 0);
	ck_assert_int_eq(strncmp(text, "not JSON (", 10), 0);
	ck_assert_int_eq(
	    tdmrep_file_warning(&f, 1, &code, &line, text, sizeof(text)), -1);
	tdmrep_file_clear(&f);
}
END_TEST

/*
 * A \u0000 (kept in string values) in a location skips the member, in a
 * policy drops the policy: the warnings say so.
 */
START_TEST(test_nul_warnings)
{
	static const char json[] =
	    "[\n{\"location\": \"/a\\u0000\", \"tdm-reservation\": 1},\n"
	    "{\"location\": \"/\", \"tdm-reservation\": 1, "
	    "\"tdm-policy\": \"\\u0000\"}]";
	struct tdmrep_file f;

	ck_assert_int_eq(tdmrep_file_read(&f, json, strlen(json)), 0);
	ck_assert_ptr_nonnull(f.rules);
	assert_warning(&f, 0, "tdmrep_location_nul", 2,
	    "member 0 has a location with a NUL character (\\u0000): skipped");
	assert_warning(&f, 1, "tdmrep_policy_nul", 3,
	    "member 1 has a tdm-policy with a NUL character (\\u0000): kept "
	    "without it");
	ck_assert_uint_eq(robots_tdmrep_count(f.rules), 1);
	ck_assert_ptr_null(robots_tdmrep_rule(f.rules, 0)->policy);
	tdmrep_file_clear(&f);
}
END_TEST

/* Past TDMREP_MAX_WARNINGS, one warning counts the rest. */
START_TEST(test_file_warnings_dropped)
{
	struct buf b = BUF_INIT(0);
	struct tdmrep_file f;
	const char *code;
	uint32_t line;
	char text[256];
	size_t i;

	buf_lit(&b, "[");
	for (i = 0; i < TDMREP_MAX_WARNINGS + 6; i++)
		buf_lit(&b, "1,\n");
	buf_lit(&b, "2]");
	ck_assert_int_eq(b.state, BUF_OK);
	ck_assert_int_eq(tdmrep_file_read(&f, b.p, b.len), 0);
	for (i = 0; i < TDMREP_MAX_WARNINGS; i++) {
		ck_assert_int_eq(tdmrep_file_warning(
		                     &f, i, &code, &line, text, sizeof(text)),
		    0);
		ck_assert_str_eq(code, "tdmrep_not_object");
		ck_assert_uint_eq(line, i + 1);
	}
	ck_assert_int_eq(
	    tdmrep_file_warning(&f, i, &code, &line, text, sizeof(text)), 0);
	ck_assert_str_eq(code, "tdmrep_warnings_dropped");
	ck_assert_uint_eq(line, 0);
	ck_assert_str_eq(text, "7 more warnings not listed (the first 64 are)");
	ck_assert_int_eq(
	    tdmrep_file_warning(&f, i + 1, &code, &line, text, sizeof(text)),
	    -1);
	tdmrep_file_clear(&f);
	buf_clear(&b);
}
END_TEST

static Suite *
tdm_suite(void)
{
	Suite *s = suite_create("tdm");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_decide_table, 0,
	    sizeof(decide_cases) / sizeof(decide_cases[0]));
	tcase_add_test(tc, test_decide_no_rules);
	tcase_add_test(tc, test_write);
	tcase_add_test(tc, test_purpose);
	tcase_add_test(tc, test_evidence);
	tcase_add_loop_test(tc, test_member_lines, 0,
	    sizeof(line_cases) / sizeof(line_cases[0]));
	tcase_add_test(tc, test_file_warnings);
	tcase_add_test(tc, test_nul_warnings);
	tcase_add_test(tc, test_file_warnings_dropped);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tdm_suite, NULL, NULL);
