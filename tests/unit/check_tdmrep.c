/*
 * check_tdmrep.c: the TDMRep parsers (src/robots/robots_tdmrep.c and its
 * JSON reader src/wire/tdmrep_json.c) against the W3C TDMRep CG final
 * report (2024) and the contract ("Every signal, not only robots.txt",
 * TDMRep): what a tdmrep.json file gives (section
 * 3.1, the rules and the warnings for members that cannot be rules), how
 * a match path is matched (section 3.1: first in sequence, case
 * sensitive, percent-decoding of unreserved characters; 3.1.1: '*' and
 * '$'), the header and meta values (sections 2.1, 3.2 and 3.3) and the
 * limits of tdmrep.h.
 */
#include <config.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots/tdmrep.h"
#include "wire/tdmrep_json.h"
#include "test_main.h"

/* clang-format 14 and 19 lay a braced macro out apart: left as is */
/* clang-format off */
#define W(m, c) { m, TDMREP_W_##c }
/* clang-format on */

struct parse_case {
	const char *json;
	enum tdmrep_error err;
	size_t nrules;
	int reservation; /* of the first rule, when there is one */
	struct {
		int member;
		enum tdmrep_wcode code;
	} warn[3]; /* member -1 ends */
};

static struct tdmrep *
parse(const char *json, enum tdmrep_error *err)
{
	return tdmrep_json_parse(json, strlen(json), err, NULL);
}

static const struct parse_case parse_cases[] = {
	/* 3.1 Examples: the whole site reserved, no policy. */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1}]", TDMREP_OK, 1, 1,
	    { { -1, 0 } } },
	{ "[]", TDMREP_OK, 0, -1, { { -1, 0 } } },
	/* "a JSON array ... mandatory even if you express only one rule" */
	{ "{\"location\": \"/\", \"tdm-reservation\": 1}", TDMREP_E_NOT_ARRAY,
	    0, -1, { { -1, 0 } } },
	{ "", TDMREP_E_JSON, 0, -1, { { -1, 0 } } },
	{ "[] x", TDMREP_E_JSON, 0, -1, { { -1, 0 } } },
	{ "[{\"location\": \"/\",", TDMREP_E_JSON, 0, -1, { { -1, 0 } } },
	{ "\"[]\"", TDMREP_E_JSON, 0, -1, { { -1, 0 } } },
	{ "\xEF\xBB\xBF[]", TDMREP_OK, 0, -1, { { -1, 0 } } },
	/* Members that are not rules are skipped, the rest kept. */
	{ "[1, \"/\", {\"location\": \"/\", \"tdm-reservation\": 0}]",
	    TDMREP_OK, 1, 0,
	    { W(0, NOT_OBJECT), W(1, NOT_OBJECT), { -1, 0 } } },
	/* 3.1: location and tdm-reservation are mandatory. */
	{ "[{\"tdm-reservation\": 1}]", TDMREP_OK, 0, -1,
	    { W(0, LOCATION), { -1, 0 } } },
	{ "[{\"location\": \"/\"}]", TDMREP_OK, 0, -1,
	    { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": 5, \"tdm-reservation\": 1}]", TDMREP_OK, 0, -1,
	    { W(0, LOCATION), { -1, 0 } } },
	/* The contract: a location starts with '/' or '*'. */
	{ "[{\"location\": \"\", \"tdm-reservation\": 1}]", TDMREP_OK, 0, -1,
	    { W(0, LOCATION), { -1, 0 } } },
	{ "[{\"location\": \"https://a.example/\", \"tdm-reservation\": 1}]",
	    TDMREP_OK, 0, -1, { W(0, LOCATION), { -1, 0 } } },
	{ "[{\"location\": \"*.pdf\", \"tdm-reservation\": 1}]", TDMREP_OK, 1,
	    1, { { -1, 0 } } },
	/* 2.1: "Other values are considered protocol errors"; the contract:
	 * the number 0 or 1 in any notation. */
	{ "[{\"location\": \"/\", \"tdm-reservation\": \"1\"}]", TDMREP_OK, 0,
	    -1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": true}]", TDMREP_OK, 0,
	    -1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 2}]", TDMREP_OK, 0, -1,
	    { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0.5}]", TDMREP_OK, 0, -1,
	    { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1.0}]", TDMREP_OK, 1, 1,
	    { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1e0}]", TDMREP_OK, 1, 1,
	    { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": -0}]", TDMREP_OK, 1, 0,
	    { { -1, 0 } } },
	/* tdm-policy is a URL: present and not a string skips the member. */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1, \"tdm-policy\": 5}]",
	    TDMREP_OK, 0, -1, { W(0, POLICY), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1, "
	  "\"tdm-policy\": null}]",
	    TDMREP_OK, 0, -1, { W(0, POLICY), { -1, 0 } } },
	/* A duplicate key: the last counts (jansson's rule). */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0, "
	  "\"tdm-reservation\": 1}]",
	    TDMREP_OK, 1, 1, { { -1, 0 } } },
	/* Unknown properties are no error. */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0, \"x\": [{}]}]",
	    TDMREP_OK, 1, 0, { { -1, 0 } } },
	/* 3.1: first in sequence, so /a/b/ can never decide. */
	{ "[{\"location\": \"/a/\", \"tdm-reservation\": 1}, "
	  "{\"location\": \"/a/b/\", \"tdm-reservation\": 0}, "
	  "{\"location\": \"/a$\", \"tdm-reservation\": 0}, "
	  "{\"location\": \"/a\", \"tdm-reservation\": 0}]",
	    TDMREP_OK, 4, 1, { W(1, SHADOWED), { -1, 0 } } },
	/* The contract: "the JSON number 0 or 1 in any notation", and a bad
	 * member is skipped alone: a number jansson cannot hold (1e400, an
	 * integer past int64) or that a double rounds to 0 or 1 is neither,
	 * that member's warning, not the file's. */
	{ "[{\"location\": \"/a\", \"tdm-reservation\": 1e400}, "
	  "{\"location\": \"/\", \"tdm-reservation\": 1}]",
	    TDMREP_OK, 1, 1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/a\", \"tdm-reservation\": -1E+400}, "
	  "{\"location\": \"/\", \"tdm-reservation\": 0}]",
	    TDMREP_OK, 1, 0, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/a\", \"tdm-reservation\": 9223372036854775808}, "
	  "{\"location\": \"/\", \"tdm-reservation\": 1}]",
	    TDMREP_OK, 1, 1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", "
	  "\"tdm-reservation\": -123456789012345678901234567890}]",
	    TDMREP_OK, 0, -1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1e-400}]", TDMREP_OK, 0,
	    -1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1.0000000000000000001}]",
	    TDMREP_OK, 0, -1, { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": -1}]", TDMREP_OK, 0, -1,
	    { W(0, RESERVATION), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 10e-1}]", TDMREP_OK, 1,
	    1, { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0.1E1}]", TDMREP_OK, 1,
	    1, { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0e400}]", TDMREP_OK, 1,
	    0, { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1, \"size\": 1e999}]",
	    TDMREP_OK, 1, 1, { { -1, 0 } } },
	/* What is no JSON number still makes the file no JSON. */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 01}]", TDMREP_E_JSON, 0,
	    -1, { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 01e400}]", TDMREP_E_JSON,
	    0, -1, { { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1.}]", TDMREP_E_JSON, 0,
	    -1, { { -1, 0 } } },
	{ "[1e400x]", TDMREP_E_JSON, 0, -1, { { -1, 0 } } },
	/* \u0000: a location with it is skipped, a policy dropped; in a key
	 * (which jansson refuses) it names no field; elsewhere nothing. */
	{ "[{\"location\": \"/a\\u0000b\", \"tdm-reservation\": 1}, "
	  "{\"location\": \"/\", \"tdm-reservation\": 0}]",
	    TDMREP_OK, 1, 0, { W(0, LOCATION_NUL), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1, "
	  "\"tdm-policy\": \"https://p.example/\\u0000\"}]",
	    TDMREP_OK, 1, 1, { W(0, POLICY_NUL), { -1, 0 } } },
	{ "[{\"location\": \"/\", \"tdm-reservation\": 1, "
	  "\"x\\u0000\": \"\\u0000\"}, \"\\u0000\"]",
	    TDMREP_OK, 1, 1, { W(1, NOT_OBJECT), { -1, 0 } } },
	{ "[{\"location\\u0000\": \"/\", \"tdm-reservation\": 1}]", TDMREP_OK,
	    0, -1, { W(0, LOCATION), { -1, 0 } } },
	/* Brackets in strings are no nesting. */
	{ "[{\"location\": \"/[[[[[[[[[[[[[[[[[[[[\", \"tdm-reservation\": 1}]",
	    TDMREP_OK, 1, 1, { { -1, 0 } } },
};

START_TEST(test_parse_table)
{
	const struct parse_case *c = &parse_cases[_i];
	enum tdmrep_error err;
	struct tdmrep *t = parse(c->json, &err);
	const struct tdmrep_warning *w;
	size_t kept, total, i;

	ck_assert_msg(err == c->err, "%s: error %s", c->json,
	    robots_tdmrep_error_name(err));
	if (c->err != TDMREP_OK) {
		ck_assert_ptr_null(t);
		return;
	}
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(robots_tdmrep_count(t), c->nrules);
	if (c->nrules > 0)
		ck_assert_int_eq(
		    robots_tdmrep_rule(t, 0)->reservation, c->reservation);
	w = robots_tdmrep_warnings(t, &kept, &total);
	for (i = 0; i < 3 && c->warn[i].member >= 0; i++) {
		ck_assert_uint_gt(kept, i);
		ck_assert_uint_eq(w[i].member, (unsigned)c->warn[i].member);
		ck_assert_str_eq(robots_tdmrep_wcode_name(w[i].code),
		    robots_tdmrep_wcode_name(c->warn[i].code));
	}
	ck_assert_uint_eq(kept, i);
	ck_assert_uint_eq(total, i);
	robots_tdmrep_free(t);
}
END_TEST

/*
 * robots_tdmrep_defuse(): what it rewrites (a number not exactly 0 or 1,
 * a \u0000 in a key), byte for byte in place, and what it leaves.
 */
START_TEST(test_defuse)
{
	static const struct {
		const char *in, *out;
		size_t n;
	} rows[] = {
		{ "[1e400]", "[2    ]", 1 },
		{ "[-1e400, 1, 0, 1.0, -0, 2, 1E0]",
		    "[2     , 1, 0, 1.0, -0, 2, 1E0]", 1 },
		{ "[10e-1, 0.1E1, 0e9, 3, 1.5, 100e-2]",
		    "[10e-1, 0.1E1, 0e9, 2, 2  , 100e-2]", 2 },
		{ "[-1, -0, -10e-1]", "[2 , -0, 2     ]", 2 },
		{ "[18446744073709551616,\n-1e-400]",
		    "[2                   ,\n2      ]", 2 },
		{ "[\"1e400\", {\"k\\u0000\": \"v\\u0000\"}]",
		    "[\"1e400\", {\"k\\u0001\": \"v\\u0000\"}]", 1 },
		{ "{\"\\u0000\\u0000\"\n :\"x\"}",
		    "{\"\\u0001\\u0001\"\n :\"x\"}", 2 },
		{ "{\"a\\\\u0000\" : 1}", "{\"a\\\\u0000\" : 1}", 0 },
		{ "[01, 1., -, 1e, 1e400x, 1e400",
		    "[01, 1., -, 1e, 2    x, 2    ", 2 },
	};
	char b[128];
	size_t i, n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = strlen(rows[i].in);
		memcpy(b, rows[i].in, n + 1);
		ck_assert_uint_eq(robots_tdmrep_defuse(b, n), rows[i].n);
		ck_assert_str_eq(b, rows[i].out);
		ck_assert_uint_eq(robots_tdmrep_defuse(b, n), 0);
	}
}
END_TEST

/* The report's second example (section 3.1, Examples). */
static const char example[] =
    "[\n"
    "  {\"location\": \"/directory-a/\", \"tdm-reservation\": 1},\n"
    "  {\"location\": \"/directory-b/html/\", \"tdm-reservation\": 1,\n"
    "   \"tdm-policy\":\"https://provider.com/policies/policy.json\"},\n"
    "  {\"location\": \"/directory-b/images/*.jpg\", \"tdm-reservation\": 0}\n"
    "]\n";

struct match_case {
	const char *file;     /* NULL: example */
	const char *url_path; /* as in a URL, normalized by the test */
	int member;           /* -1: no match, reservation unset */
	int reservation;
	const char *policy;
};

static const struct match_case match_cases[] = {
	{ NULL, "/directory-a/paper.pdf", 0, 1, NULL },
	{ NULL, "/directory-a", -1, 0, NULL },
	{ NULL, "/directory-b/html/index.html", 1, 1,
	    "https://provider.com/policies/policy.json" },
	{ NULL, "/directory-b/images/cat.jpg", 2, 0, NULL },
	{ NULL, "/directory-b/images/2024/cat.jpg", 2, 0, NULL },
	{ NULL, "/directory-b/images/cat.png", -1, 0, NULL },
	/* no '$': the pattern matches the start of the path */
	{ NULL, "/directory-b/images/cat.jpg.html", 2, 0, NULL },
	/* "The matching SHOULD be case sensitive." */
	{ NULL, "/Directory-a/paper.pdf", -1, 0, NULL },
	{ NULL, "/", -1, 0, NULL },
	/* "The most specific match is the first in sequence." */
	{ "[{\"location\": \"/a/\", \"tdm-reservation\": 1},"
	  " {\"location\": \"/a/b/\", \"tdm-reservation\": 0}]",
	    "/a/b/c", 0, 1, NULL },
	{ "[{\"location\": \"/a/b/\", \"tdm-reservation\": 0},"
	  " {\"location\": \"/a/\", \"tdm-reservation\": 1}]",
	    "/a/b/c", 0, 0, NULL },
	{ "[{\"location\": \"/a/b/\", \"tdm-reservation\": 0},"
	  " {\"location\": \"/a/\", \"tdm-reservation\": 1}]",
	    "/a/c", 1, 1, NULL },
	/* 3.1.1: '$' ends the pattern, '*' any run of characters. */
	{ "[{\"location\": \"/this/path/exactly$\", \"tdm-reservation\": 1}]",
	    "/this/path/exactly", 0, 1, NULL },
	{ "[{\"location\": \"/this/path/exactly$\", \"tdm-reservation\": 1}]",
	    "/this/path/exactly/not", -1, 0, NULL },
	{ "[{\"location\": \"/this/*/then\", \"tdm-reservation\": 1}]",
	    "/this/a/b/then", 0, 1, NULL },
	{ "[{\"location\": \"/this/*/then\", \"tdm-reservation\": 1}]",
	    "/this/then", -1, 0, NULL },
	/* 3.1.1: a literal '$' in the URI is %24 in the pattern. */
	{ "[{\"location\": \"/path/foo-%24\", \"tdm-reservation\": 1}]",
	    "/path/foo-$", 0, 1, NULL },
	/* 3.1: an escaped unreserved character is decoded, a reserved one
	 * is not. */
	{ "[{\"location\": \"/~joe/\", \"tdm-reservation\": 1}]", "/%7Ejoe/cv",
	    0, 1, NULL },
	{ "[{\"location\": \"/a%2Fb\", \"tdm-reservation\": 1}]", "/a/b", -1, 0,
	    NULL },
	/* the contract: path and query */
	{ "[{\"location\": \"/search?q=\", \"tdm-reservation\": 1}]",
	    "/search?q=cats", 0, 1, NULL },
	{ "[{\"location\": \"*.pdf$\", \"tdm-reservation\": 1}]", "/docs/a.pdf",
	    0, 1, NULL },
	/* 2.2: a policy beside reservation 0 is no error (kept as stated) */
	{ "[{\"location\": \"/\", \"tdm-reservation\": 0,"
	  " \"tdm-policy\": \"https://p.example/p.json\"}]",
	    "/x", 0, 0, "https://p.example/p.json" },
};

START_TEST(test_match_table)
{
	const struct match_case *c = &match_cases[_i];
	const char *file = c->file != NULL ? c->file : example;
	char path[256];
	enum tdmrep_error err;
	struct tdmrep *t = parse(file, &err);
	const struct tdmrep_rule *r;
	size_t n =
	    robots_pct_normalize(c->url_path, strlen(c->url_path), path, 0);

	ck_assert_ptr_nonnull(t);
	r = robots_tdmrep_match(t, path, n);
	if (c->member < 0) {
		ck_assert_msg(r == NULL, "%s matched member %u", c->url_path,
		    r != NULL ? r->member : 0);
	} else {
		ck_assert_msg(r != NULL, "%s: no match", c->url_path);
		ck_assert_uint_eq(r->member, (unsigned)c->member);
		ck_assert_int_eq(r->reservation, c->reservation);
		if (c->policy == NULL)
			ck_assert_ptr_null(r->policy);
		else
			ck_assert_str_eq(r->policy, c->policy);
	}
	robots_tdmrep_free(t);
}
END_TEST

/* A body of n bytes: "[", then members (or spaces), then "]". */
static char *
big_file(size_t members, const char *member, size_t pad)
{
	size_t ml = strlen(member), n = members * (ml + 1) + pad + 3, i;
	char *b = malloc(n), *p = b;

	ck_assert_ptr_nonnull(b);
	*p++ = '[';
	for (i = 0; i < members; i++) {
		memcpy(p, member, ml);
		p += ml;
		*p++ = i + 1 < members ? ',' : ' ';
	}
	memset(p, ' ', pad);
	p += pad;
	*p++ = ']';
	*p = '\0';
	return b;
}

START_TEST(test_limits)
{
	static const char m[] = "{\"location\":\"/\",\"tdm-reservation\":1}";
	const struct tdmrep_warning *w;
	enum tdmrep_error err;
	char deep[64], *b;
	struct tdmrep *t;
	size_t kept, total, i;

	/* TDMREP_MAX_DEPTH: 16 nested arrays parse, 17 do not. */
	for (i = 0; i < 16; i++)
		deep[i] = '[', deep[32 + i] = ']';
	memcpy(deep + 16, deep + 32, 16);
	deep[32] = '\0';
	t = tdmrep_json_parse(deep, 32, &err, NULL);
	ck_assert_int_eq(err, TDMREP_OK);
	robots_tdmrep_free(t);
	memmove(deep + 1, deep, 33);
	deep[0] = '[';
	memcpy(deep + 33, "]", 2);
	ck_assert_ptr_null(tdmrep_json_parse(deep, 34, &err, NULL));
	ck_assert_int_eq(err, TDMREP_E_DEPTH);
	/* TDMREP_MAX_BODY, whitespace included. */
	b = big_file(1, m, TDMREP_MAX_BODY - strlen(m) - 3);
	t = tdmrep_json_parse(b, strlen(b), &err, NULL);
	ck_assert_uint_eq(strlen(b), TDMREP_MAX_BODY);
	ck_assert_int_eq(err, TDMREP_OK);
	robots_tdmrep_free(t);
	free(b);
	b = big_file(1, m, TDMREP_MAX_BODY - strlen(m) - 2);
	ck_assert_ptr_null(tdmrep_json_parse(b, strlen(b), &err, NULL));
	ck_assert_int_eq(err, TDMREP_E_TOO_BIG);
	free(b);
	/* TDMREP_MAX_RULES members read, the rest one warning. */
	b = big_file(TDMREP_MAX_RULES + 5, m, 0);
	t = tdmrep_json_parse(b, strlen(b), &err, NULL);
	ck_assert_uint_eq(robots_tdmrep_count(t), TDMREP_MAX_RULES);
	w = robots_tdmrep_warnings(t, &kept, &total);
	ck_assert_int_eq(w[0].code, TDMREP_W_TOO_MANY);
	ck_assert_uint_eq(w[0].member, TDMREP_MAX_RULES);
	/* each later "/" is shadowed by the first; 64 warnings kept */
	ck_assert_uint_eq(total, TDMREP_MAX_RULES);
	ck_assert_uint_eq(kept, TDMREP_MAX_WARNINGS);
	ck_assert_int_eq(w[1].code, TDMREP_W_SHADOWED);
	ck_assert_uint_eq(w[1].by, 0);
	robots_tdmrep_free(t);
	free(b);
}
END_TEST

/* A location or policy of n bytes: kept or not. */
static struct tdmrep *
long_member(size_t loc, size_t pol, enum tdmrep_error *err)
{
	static const char a[] = "[{\"location\":\"/",
	                  m[] = "\",\"tdm-reservation\":1,\"tdm-policy\":\"",
	                  z[] = "\"}]";
	char *b = malloc(loc + pol + 128), *p = b;
	struct tdmrep *t;

	memcpy(p, a, sizeof(a) - 1), p += sizeof(a) - 1;
	memset(p, 'a', loc - 1), p += loc - 1;
	memcpy(p, m, sizeof(m) - 1), p += sizeof(m) - 1;
	memset(p, 'p', pol), p += pol;
	memcpy(p, z, sizeof(z));
	t = tdmrep_json_parse(b, strlen(b), err, NULL);
	free(b);
	return t;
}

START_TEST(test_long_strings)
{
	const struct tdmrep_warning *w;
	enum tdmrep_error err;
	struct tdmrep *t;
	size_t kept, total;

	t = long_member(TDMREP_MAX_LOCATION, TDMREP_MAX_POLICY, &err);
	ck_assert_uint_eq(robots_tdmrep_count(t), 1);
	ck_assert_uint_eq(
	    robots_tdmrep_rule(t, 0)->location_len, TDMREP_MAX_LOCATION);
	ck_assert_uint_eq(
	    robots_tdmrep_rule(t, 0)->policy_len, TDMREP_MAX_POLICY);
	robots_tdmrep_free(t);
	t = long_member(TDMREP_MAX_LOCATION + 1, 1, &err);
	ck_assert_uint_eq(robots_tdmrep_count(t), 0);
	w = robots_tdmrep_warnings(t, &kept, &total);
	ck_assert_int_eq(w[0].code, TDMREP_W_LOCATION_LONG);
	robots_tdmrep_free(t);
	/* kept without its policy */
	t = long_member(10, TDMREP_MAX_POLICY + 1, &err);
	ck_assert_uint_eq(robots_tdmrep_count(t), 1);
	ck_assert_ptr_null(robots_tdmrep_rule(t, 0)->policy);
	w = robots_tdmrep_warnings(t, &kept, &total);
	ck_assert_int_eq(w[0].code, TDMREP_W_POLICY_LONG);
	robots_tdmrep_free(t);
}
END_TEST

/* Sections 2.1 and 3.2: the header and meta values. */
START_TEST(test_values)
{
	static const struct {
		const char *v;
		int want;
	} res[] = { { "1", 1 }, { "0", 0 }, { " 1\t", 1 }, { "01", -1 },
		{ "2", -1 }, { "true", -1 }, { "", -1 }, { "1;x", -1 },
		{ "1 0", -1 }, { "-1", -1 } };
	static const struct {
		const char *v, *want;
	} pol[] = { { "https://provider.com/policies/policy.json",
		        "https://provider.com/policies/policy.json" },
		{ " \thttps://p.example/a?b=c\t ", "https://p.example/a?b=c" },
		{ "", NULL }, { "   ", NULL }, { "https://a b", NULL },
		{ "https://a\x01", NULL }, { "https://\xC3\xA9", NULL } };
	const char *out;
	char big[TDMREP_MAX_POLICY + 2];
	size_t i, n;

	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		ck_assert_int_eq(
		    robots_tdm_reservation_value(res[i].v, strlen(res[i].v)),
		    res[i].want);
	for (i = 0; i < sizeof(pol) / sizeof(pol[0]); i++) {
		out = NULL;
		n = robots_tdm_policy_value(pol[i].v, strlen(pol[i].v), &out);
		if (pol[i].want == NULL) {
			ck_assert_uint_eq(n, 0);
			continue;
		}
		ck_assert_uint_eq(n, strlen(pol[i].want));
		ck_assert_int_eq(memcmp(out, pol[i].want, n), 0);
	}
	memset(big, 'a', sizeof(big));
	ck_assert_uint_eq(robots_tdm_policy_value(big, TDMREP_MAX_POLICY, &out),
	    TDMREP_MAX_POLICY);
	ck_assert_uint_eq(
	    robots_tdm_policy_value(big, TDMREP_MAX_POLICY + 1, &out), 0);
}
END_TEST

static Suite *
tdmrep_suite(void)
{
	Suite *s = suite_create("tdmrep");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_parse_table, 0,
	    sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_loop_test(tc, test_match_table, 0,
	    sizeof(match_cases) / sizeof(match_cases[0]));
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_long_strings);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_defuse);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(tdmrep_suite, NULL, NULL);
