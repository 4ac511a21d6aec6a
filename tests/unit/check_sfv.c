/*
 * check_sfv.c: the RFC 9651 Structured Fields parser (src/robots/sfv.c).
 * Table tests of our own, then the HTTP working group's shared test
 * vectors (tests/data/structured-field-tests, SOURCE.md): every case of
 * every file is parsed as its header_type says and the parse, written as
 * the vectors' JSON form, must equal "expected"; a must_fail case must
 * fail; a can_fail case may do either.
 */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfv.h"
#include "test_main.h"

#define VECTORS TESTDATADIR "/structured-field-tests/"
#define MAXNODES 4096

static struct sfv_node nodes[MAXNODES];

/* Parse s as a Dictionary into nodes; the count, or -1. */
static long
dict(const char *s)
{
	size_t n;

	if (robots_sfv_parse_dict(s, strlen(s), nodes, MAXNODES, &n) != 0)
		return -1;
	return (long)n;
}

START_TEST(test_dict_members)
{
	ck_assert_int_eq(dict("train-ai=y, search=n"), 2);
	ck_assert_int_eq(nodes[0].type, SFV_TOKEN);
	ck_assert_int_eq(nodes[0].key_len, 8);
	ck_assert(memcmp(nodes[0].key, "train-ai", 8) == 0);
	ck_assert_int_eq(nodes[0].len, 1);
	ck_assert_int_eq(nodes[0].s[0], 'y');
	ck_assert_int_eq(nodes[1].s[0], 'n');
	/* A bare key is the Boolean true. */
	ck_assert_int_eq(dict("train-ai"), 1);
	ck_assert_int_eq(nodes[0].type, SFV_BOOLEAN);
	ck_assert_int_eq(nodes[0].i, 1);
	/* Parameters follow their member. */
	ck_assert_int_eq(dict("train-ai=n;until=2030;why=\"x\", search"), 4);
	ck_assert_int_eq(nodes[0].nparams, 2);
	ck_assert_int_eq(nodes[1].role, SFV_PARAM);
	ck_assert_int_eq(nodes[1].type, SFV_INTEGER);
	ck_assert_int_eq(nodes[1].i, 2030);
	ck_assert_int_eq(nodes[2].type, SFV_STRING);
	ck_assert_int_eq(nodes[3].role, SFV_MEMBER);
	/* An inner list: its items, their parameters, then its own. */
	ck_assert_int_eq(dict("a=(1 2;x);y=?0"), 5);
	ck_assert_int_eq(nodes[0].type, SFV_INNER_LIST);
	ck_assert_int_eq(nodes[0].i, 2);
	ck_assert_int_eq(nodes[0].nparams, 1);
	ck_assert_int_eq(nodes[2].nparams, 1);
	ck_assert_int_eq(nodes[3].role, SFV_PARAM);
	ck_assert_int_eq(nodes[4].type, SFV_BOOLEAN);
	ck_assert_int_eq(nodes[4].i, 0);
	/* Every bare item type, Date and Display String included. */
	ck_assert_int_eq(
	    dict("a=-1.5, b=:AQ==:, c=@1700000000, d=%\"%c3%bc\""), 4);
	ck_assert_int_eq(nodes[0].i, -1500);
	ck_assert_int_eq(nodes[1].type, SFV_BINARY);
	ck_assert_int_eq(nodes[2].type, SFV_DATE);
	ck_assert_int_eq(nodes[2].i, 1700000000);
	ck_assert_int_eq(nodes[3].type, SFV_DISPLAY);
}
END_TEST

START_TEST(test_dict_failures)
{
	/* Any failure fails the whole Dictionary. */
	static const char *bad[] = {
		"Train-AI=n",            /* uppercase key */
		"train-ai=y search=n",   /* missing comma */
		"train-ai=y,",           /* trailing comma */
		"train-ai=y,,search=n",  /* empty member */
		"train-ai=\"n",          /* open string */
		"train-ai=y, search=n;", /* empty parameter */
		"train-ai=[y]",          /* bad character */
		"1a=y",                  /* key starts with a digit */
		"a=1.2345",              /* four fraction digits */
		"a=1234567890123456",    /* sixteen digits */
		"a=(1 2",                /* open inner list */
		"a=@1.5",                /* a Date is an Integer */
		"a=%\"%C3%BC\"",         /* upper-case escape */
		"a=%\"%c3\"",            /* not UTF-8 */
		"\ta=1",                 /* only SP is skipped at the start */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(dict(bad[i]) < 0, "%s parsed", bad[i]);
	ck_assert_int_eq(dict(""), 0);
	ck_assert_int_eq(dict("  a=1 ,\tb=2  "), 2);
}
END_TEST

START_TEST(test_bounded_output)
{
	size_t n;

	/* Fewer nodes than the field has: the count still comes back. */
	ck_assert_int_eq(
	    robots_sfv_parse_dict("a, b, c;x;y", 11, nodes, 1, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(robots_sfv_parse_dict("a, b", 4, NULL, 0, &n), 0);
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(test_decode)
{
	char out[64];

	ck_assert_int_eq(
	    dict("a=\"x\\\"y\\\\\", b=:aGVsbG8=:, c=%\"a%25b\""), 3);
	ck_assert_uint_eq(robots_sfv_decode(&nodes[0], out), 4);
	ck_assert(memcmp(out, "x\"y\\", 4) == 0);
	ck_assert_uint_eq(robots_sfv_decode(&nodes[1], out), 5);
	ck_assert(memcmp(out, "hello", 5) == 0);
	ck_assert_uint_eq(robots_sfv_decode(&nodes[2], out), 3);
	ck_assert(memcmp(out, "a%b", 3) == 0);
}
END_TEST

/* RFC 4648 base32 of n bytes, as the vectors write Byte Sequences. */
static json_t *
base32(const unsigned char *s, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	char *out = malloc(n * 2 + 16);
	size_t i, o = 0;
	unsigned long long acc = 0;
	int bits = 0;
	json_t *j;

	ck_assert_ptr_nonnull(out);
	for (i = 0; i < n; i++) {
		acc = acc << 8 | s[i];
		for (bits += 8; bits >= 5; bits -= 5)
			out[o++] = al[(acc >> (bits - 5)) & 31];
	}
	if (bits > 0)
		out[o++] = al[(acc << (5 - bits)) & 31];
	while (o % 8 != 0)
		out[o++] = '=';
	j = json_stringn(out, o);
	free(out);
	return j;
}

static json_t *
typed(const char *type, json_t *value)
{
	return json_pack("{s:s,s:o}", "__type", type, "value", value);
}

/* A bare item as the vectors write it. */
static json_t *
bare(const struct sfv_node *v)
{
	char *out = malloc(v->len + 1);
	size_t n;
	json_t *j = NULL;

	ck_assert_ptr_nonnull(out);
	n = robots_sfv_decode(v, out);
	switch (v->type) {
	case SFV_INTEGER:
		j = json_integer(v->i);
		break;
	case SFV_DECIMAL:
		j = json_real((double)v->i / 1000.0);
		break;
	case SFV_STRING:
		j = json_stringn(out, n);
		break;
	case SFV_TOKEN:
		j = typed("token", json_stringn(v->s, v->len));
		break;
	case SFV_BINARY:
		j = typed("binary", base32((unsigned char *)out, n));
		break;
	case SFV_BOOLEAN:
		j = json_boolean(v->i);
		break;
	case SFV_DATE:
		j = typed("date", json_integer(v->i));
		break;
	case SFV_DISPLAY:
		j = typed("displaystring", json_stringn(out, n));
		break;
	case SFV_INNER_LIST:
		break;
	}
	free(out);
	return j != NULL ? j : json_null();
}

/* Append [key, value] to a, or replace the value of key (RFC 9651). */
static void
put_keyed(json_t *a, const char *key, size_t len, json_t *value)
{
	size_t i;
	json_t *e;

	json_array_foreach(a, i, e)
	{
		json_t *k = json_array_get(e, 0);

		if (json_string_length(k) == len &&
		    memcmp(json_string_value(k), key, len) == 0) {
			json_array_set_new(e, 1, value);
			return;
		}
	}
	json_array_append_new(a, json_pack("[s%,o]", key, len, value));
}

/* n parameters from nodes[*i]. */
static json_t *
params(size_t *i, size_t n)
{
	json_t *a = json_array();

	while (n-- > 0) {
		put_keyed(
		    a, nodes[*i].key, nodes[*i].key_len, bare(&nodes[*i]));
		(*i)++;
	}
	return a;
}

/* The member at nodes[*i]: an item or an inner list. */
static json_t *
member(size_t *i)
{
	const struct sfv_node *m = &nodes[(*i)++];
	json_t *items, *item;
	int64_t k;

	if (m->type != SFV_INNER_LIST) {
		item = bare(m);
		return json_pack("[o,o]", item, params(i, m->nparams));
	}
	items = json_array();
	for (k = 0; k < m->i; k++) {
		const struct sfv_node *it = &nodes[(*i)++];

		item = bare(it);
		json_array_append_new(
		    items, json_pack("[o,o]", item, params(i, it->nparams)));
	}
	return json_pack("[o,o]", items, params(i, m->nparams));
}

/* The parse of nodes[0..n) in the vectors' form. */
static json_t *
as_json(const char *type, size_t n)
{
	json_t *a;
	size_t i = 0;

	if (strcmp(type, "item") == 0)
		return member(&i);
	a = json_array();
	while (i < n) {
		const struct sfv_node *m = &nodes[i];

		if (strcmp(type, "dictionary") == 0)
			put_keyed(a, m->key, m->key_len, member(&i));
		else
			json_array_append_new(a, member(&i));
	}
	return a;
}

struct tally {
	int run, passed, dict_run, dict_passed;
};

/* One case; 1 if it passes. */
static int
run_case(json_t *c, const char *file, struct tally *t)
{
	const char *type = json_string_value(json_object_get(c, "header_type"));
	json_t *raw = json_object_get(c, "raw"), *e, *got;
	int must_fail = json_is_true(json_object_get(c, "must_fail"));
	int can_fail = json_is_true(json_object_get(c, "can_fail"));
	static char field[1 << 17];
	size_t i, off = 0, len, n;
	int rc, ok;

	json_array_foreach(raw, i, e)
	{
		len = json_string_length(e);
		if (off + len + 2 >= sizeof(field))
			return 0;
		if (i > 0) /* field lines are combined with ", " */
			memcpy(field + off, ", ", 2), off += 2;
		memcpy(field + off, json_string_value(e), len);
		off += len;
	}
	if (strcmp(type, "dictionary") == 0)
		rc = robots_sfv_parse_dict(field, off, nodes, MAXNODES, &n);
	else if (strcmp(type, "list") == 0)
		rc = robots_sfv_parse_list(field, off, nodes, MAXNODES, &n);
	else
		rc = robots_sfv_parse_item(field, off, nodes, MAXNODES, &n);
	if (rc == 0 && n > MAXNODES)
		rc = -2;
	if (rc != 0)
		ok = must_fail || can_fail;
	else if (must_fail)
		ok = 0;
	else {
		got = as_json(type, n);
		ok =
		    json_equal(got, json_object_get(c, "expected")) || can_fail;
		json_decref(got);
	}
	t->run++;
	t->passed += ok;
	if (strcmp(type, "dictionary") == 0) {
		t->dict_run++;
		t->dict_passed += ok;
	}
	if (!ok)
		fprintf(stderr, "%s: %s: failed\n", file,
		    json_string_value(json_object_get(c, "name")));
	return ok;
}

START_TEST(test_shared_vectors)
{
	/* Every file of the vectors: the item types a member may hold and
	 * the List files too (a List member is a Dictionary member's
	 * value without its key). */
	static const char *files[] = { "binary.json", "boolean.json",
		"date.json", "dictionary.json", "display-string.json",
		"examples.json", "item.json", "key-generated.json",
		"large-generated.json", "list.json", "listlist.json",
		"number-generated.json", "number.json", "param-dict.json",
		"param-list.json", "param-listlist.json",
		"string-generated.json", "string.json", "token-generated.json",
		"token.json" };
	struct tally all = { 0, 0, 0, 0 }, t;
	json_error_t err;
	json_t *cases, *c;
	size_t f, i;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[512];

		snprintf(path, sizeof(path), "%s%s", VECTORS, files[f]);
		cases = json_load_file(path, JSON_ALLOW_NUL, &err);
		ck_assert_msg(cases != NULL, "%s: %s", path, err.text);
		memset(&t, 0, sizeof(t));
		json_array_foreach(cases, i, c) run_case(c, files[f], &t);
		printf("sfv vectors: %s: %d/%d passed (%d/%d dictionary)\n",
		    files[f], t.passed, t.run, t.dict_passed, t.dict_run);
		fflush(stdout);
		all.run += t.run;
		all.passed += t.passed;
		all.dict_run += t.dict_run;
		all.dict_passed += t.dict_passed;
		json_decref(cases);
	}
	printf("sfv vectors: %d/%d passed, %d/%d dictionary cases\n",
	    all.passed, all.run, all.dict_passed, all.dict_run);
	fflush(stdout);
	ck_assert_int_eq(all.run, 1591);
	ck_assert_int_eq(all.dict_run, 432);
	ck_assert_int_eq(all.passed, all.run);
}
END_TEST

static Suite *
sfv_suite(void)
{
	Suite *s = suite_create("sfv");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_dict_members);
	tcase_add_test(tc, test_dict_failures);
	tcase_add_test(tc, test_bounded_output);
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_shared_vectors);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(sfv_suite, NULL, NULL);
