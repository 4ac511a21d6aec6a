/*
 * check_page.c: a check's "page" member (src/wire/page.c) against the
 * contract ("Every signal, not only robots.txt", After the fetch): its
 * validation by proto_decode() (bad_request), the most restrictive combination
 * of the Content-Usage / Content-Signal headers with robots.txt per purpose
 * (AIPREF: any disallow wins), the robots rules for an agent, and the evidence
 * id (the first 16 hex digits of the SHA-256 of the header lines robotsd reads,
 * names lowercased, in order, then "meta name: content" per meta pair).
 */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <string.h>

#include "wire/page.h"
#include "wire/proto.h"
#include "test_main.h"

#define U ROBOTS_PREF_UNKNOWN
#define A ROBOTS_PREF_ALLOWED
#define D ROBOTS_PREF_DISALLOWED

struct combine_case {
	enum robots_pref robots[ROBOTS_PURPOSES]; /* from robots.txt */
	const char *headers;                      /* the page's headers */
	enum robots_pref want[ROBOTS_PURPOSES];   /* train-ai search ai-input
	                                             ai-use */
};

static const struct combine_case combine_cases[] = {
	/* no preference header: robots.txt's answer stands */
	{ { A, U, U, U }, "[[\"X-Robots-Tag\",\"noai\"]]", { A, U, U, U } },
	/* a header disallow beats a robots.txt allow, and not the reverse */
	{ { A, U, U, U }, "[[\"Content-Usage\",\"train-ai=n\"]]",
	    { D, U, U, U } },
	{ { D, U, U, U }, "[[\"content-usage\",\"train-ai=y\"]]",
	    { D, U, U, U } },
	/* an allow beats unknown */
	{ { U, U, U, U }, "[[\"CONTENT-USAGE\",\"train-ai=y\"]]",
	    { A, U, U, U } },
	/* Content-Signal's ai-train is train-ai, ai-input its own */
	{ { A, A, U, U },
	    "[[\"Content-Signal\",\"ai-train=no, ai-input=yes\"]]",
	    { D, A, A, U } },
	/* the two headers together: any disallow wins */
	{ { U, U, U, U },
	    "[[\"Content-Usage\",\"train-ai=y\"],"
	    "[\"Content-Signal\",\"ai-train=no\"]]",
	    { D, U, U, U } },
	/* two lines of one name are one field, joined with ", " */
	{ { U, U, U, U },
	    "[[\"Content-Usage\",\"train-ai=n\"],"
	    "[\"Content-Usage\",\"search=y\"]]",
	    { D, A, U, U } },
	/* vocab-08's ai-use, from Content-Usage only */
	{ { U, U, U, U }, "[[\"Content-Usage\",\"ai-use=n\"]]",
	    { U, U, U, D } },
	/* a Content-Usage that does not parse says nothing */
	{ { A, U, U, U }, "[[\"Content-Usage\",\"train-ai=\"]]",
	    { A, U, U, U } },
};

/* The decoded pairs of a test's JSON page (page_from_json_clear() after). */
static struct wire_page pairs;

static const struct wire_page *
pairs_of(const json_t *page)
{
	ck_assert_int_eq(page_from_json(page, &pairs), 0);
	return &pairs;
}

START_TEST(test_combine_table)
{
	const struct combine_case *c = &combine_cases[_i];
	char text[512];
	struct robots_usage us;
	struct page_prefs pp;
	json_t *page;
	size_t i;

	snprintf(text, sizeof(text), "{\"headers\":%s}", c->headers);
	page = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(page);
	memset(&us, 0, sizeof(us));
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		us.pref[i] = c->robots[i];
	ck_assert_int_eq(page_prefs(pairs_of(page), &pp), 0);
	page_prefs_combine(&pp, &us);
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		ck_assert_msg(us.pref[i] == c->want[i], "%s: purpose %zu: %d",
		    c->headers, i, us.pref[i]);
	page_prefs_clear(&pp);
	page_from_json_clear(&pairs);
	json_decref(page);
}
END_TEST

START_TEST(test_pref_values_joined)
{
	json_t *page = json_loads("{\"headers\":[[\"Content-Signal\",\"a=b\"],"
	                          "[\"Date\",\"x\"],"
	                          "[\"content-signal\",\"search=no\"]]}",
	    0, NULL);
	struct page_prefs pp;

	ck_assert_int_eq(page_prefs(pairs_of(page), &pp), 0);
	ck_assert_int_eq(pp.usage.present, 0);
	ck_assert_int_eq(pp.signal.present, 1);
	ck_assert_str_eq(pp.signal.value, "a=b, search=no");
	page_prefs_clear(&pp);
	page_from_json_clear(&pairs);
	json_decref(page);
}
END_TEST

struct evidence_case {
	const char *page, *want;
};

/*
 * Each expected id is SHA-256 of the input the contract defines, written
 * out beside it.
 */
static const struct evidence_case evidence_cases[] = {
	/* nothing read: SHA-256 of "" */
	{ "{}", "e3b0c44298fc1c14" },
	{ "{\"headers\":[],\"meta\":[]}", "e3b0c44298fc1c14" },
	/* headers robotsd does not read do not enter */
	{ "{\"headers\":[[\"Content-Type\",\"text/html\"]]}",
	    "e3b0c44298fc1c14" },
	/* "x-robots-tag: noindex\n" */
	{ "{\"headers\":[[\"X-Robots-Tag\",\"noindex\"],[\"Server\",\"x\"]]}",
	    "8458323c3623a5a8" },
	/* "content-usage: train-ai=n\nlink: <https://e.test/p>;
	 * rel=\"tdm-policy\"\nmeta robots: noai\nmeta tdm-reservation: 1\n":
	 * every meta pair, whatever its name */
	{ "{\"meta\":[[\"ROBOTS\",\"noai\"],[\"tdm-reservation\",\"1\"]],"
	  "\"headers\":[[\"Content-Usage\",\"train-ai=n\"],"
	  "[\"Link\",\"<https://e.test/p>; rel=\\\"tdm-policy\\\"\"]]}",
	    "dc7906781a043152" },
	/* values as received, untrimmed, every line:
	 * "tdm-reservation: 1\ntdm-reservation:  0 \n" */
	{ "{\"headers\":[[\"TDM-Reservation\",\"1\"],"
	  "[\"tdm-reservation\",\" 0 \"]]}",
	    "5f05aa2abc54b65c" },
	/* in order received, not grouped by name:
	 * "robots-tag: a\nx-robots-tag: b\nrobots-tag: c\n" */
	{ "{\"headers\":[[\"Robots-Tag\",\"a\"],[\"X-Robots-Tag\",\"b\"],"
	  "[\"Robots-Tag\",\"c\"]]}",
	    "24e9c5ae2c9b507b" },
};

START_TEST(test_evidence_table)
{
	const struct evidence_case *c = &evidence_cases[_i];
	json_t *page = json_loads(c->page, 0, NULL);
	char hex[VERSION_HEX + 1];

	ck_assert_ptr_nonnull(page);
	ck_assert_int_eq(page_evidence(pairs_of(page), hex), 0);
	ck_assert_str_eq(hex, c->want);
	page_from_json_clear(&pairs);
	json_decref(page);
}
END_TEST

struct valid_case {
	const char *page;
	int ok;
};

static const struct valid_case valid_cases[] = {
	{ "{}", 1 },
	{ "{\"headers\":[[\"a\",\"\"]],\"meta\":[[\"robots\",\"x\"]]}", 1 },
	{ "{\"other\":1}", 1 }, /* other members are ignored */
	{ "[]", 0 },
	{ "{\"headers\":{}}", 0 },
	{ "{\"headers\":[[\"a\"]]}", 0 },
	{ "{\"headers\":[[\"a\",\"b\",\"c\"]]}", 0 },
	{ "{\"headers\":[[\"a\",1]]}", 0 },
	{ "{\"headers\":[[\"\",\"b\"]]}", 0 },
	{ "{\"headers\":[\"a: b\"]}", 0 },
	{ "{\"meta\":[[null,\"b\"]]}", 0 },
	{ "{\"meta\":\"robots\"}", 0 },
};

START_TEST(test_validate_table)
{
	const struct valid_case *c = &valid_cases[_i];
	char line[512];
	struct request req;
	enum proto_err err;
	const char *msg = NULL;
	int rc;

	snprintf(line, sizeof(line),
	    "{\"op\":\"check\",\"url\":\"http://a.test/\","
	    "\"agent\":\"T\",\"page\":%s}",
	    c->page);
	rc = proto_decode(line, strlen(line), 0, &req, &err, &msg);
	ck_assert_int_eq(rc == 0, c->ok);
	if (c->ok)
		ck_assert_ptr_nonnull(req.page);
	else {
		ck_assert_int_eq(err, PE_BAD_REQUEST);
		ck_assert_ptr_nonnull(msg);
	}
	proto_request_clear(&req);
}
END_TEST

/* The sources of robots_tag: what applies, in order, and the union. */
START_TEST(test_tags)
{
	json_t *page = json_loads(
	    "{\"headers\":[[\"X-Robots-Tag\",\"otherbot: noindex\"],"
	    "[\"Robots-Tag\",\"*;max-snippet=50\"],"
	    "[\"X-Robots-Tag\",\"max-snippet: 10, nofollow\"],"
	    "[\"ROBOTS-TAG\",\"TestBot;noai\"],"
	    "[\"Robots-Tag\",\"bad;;\"]],"
	    "\"meta\":[[\"testbot\",\"none\"],[\"description\",\"x\"]]}",
	    0, NULL);
	struct page_tags t;

	ck_assert_int_eq(page_tags(pairs_of(page), "TestBot/2", 9, &t), 0);
	/* the Robots-Tag field (three lines joined) has a syntax error: it
	 * is ignored as a whole */
	ck_assert_uint_eq(
	    t.set.rules, 1u << RT_NOFOLLOW | 1u << RT_NONE | 1u << RT_NOINDEX);
	ck_assert_uint_eq(t.set.valued, RT_HAS_MAX_SNIPPET);
	ck_assert_int_eq(t.set.max_snippet, 10);
	ck_assert_uint_eq(t.nfrom, 2);
	ck_assert_int_eq(t.from[0].meta, 0);
	ck_assert_int_eq(
	    strncmp(t.from[0].value, "max-snippet: 10, nofollow", 25), 0);
	ck_assert_int_eq(t.from[1].meta, 1);
	ck_assert_int_eq(strncmp(t.from[1].field, "testbot", 7), 0);
	page_tags_clear(&t);
	page_from_json_clear(&pairs);
	json_decref(page);
}
END_TEST

/*
 * The TDMRep statements: headers and meta apart, the last valid line of
 * a name (not joined), names case-insensitive, other fields unread.
 */
START_TEST(test_tdm)
{
	json_t *page = json_loads(
	    "{\"headers\":[[\"TDM-Reservation\",\"1\"],"
	    "[\"tdm-policy\",\"https://p.example/p\"],"
	    "[\"TDM-RESERVATION\",\"0\"],[\"TDM-Reservation\",\"2\"],"
	    "[\"Content-Usage\",\"train-ai=n\"]],"
	    "\"meta\":[[\"tdm-reservation\",\" 1 \"],[\"tdm-policy\",\"a "
	    "b\"]]}",
	    0, NULL);
	struct tdm_page t;

	page_tdm(pairs_of(page), &t);
	ck_assert_int_eq(t.header.reservation, 0);
	ck_assert_uint_eq(t.header.policy_len, 19);
	ck_assert_int_eq(
	    strncmp(t.header.policy, "https://p.example/p", 19), 0);
	ck_assert_int_eq(t.meta.reservation, 1);
	ck_assert_ptr_null(t.meta.policy);
	page_from_json_clear(&pairs);
	json_decref(page);
}
END_TEST

static Suite *
page_suite(void)
{
	Suite *s = suite_create("page");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_combine_table, 0,
	    sizeof(combine_cases) / sizeof(combine_cases[0]));
	tcase_add_test(tc, test_pref_values_joined);
	tcase_add_loop_test(tc, test_evidence_table, 0,
	    sizeof(evidence_cases) / sizeof(evidence_cases[0]));
	tcase_add_loop_test(tc, test_validate_table, 0,
	    sizeof(valid_cases) / sizeof(valid_cases[0]));
	tcase_add_test(tc, test_tags);
	tcase_add_test(tc, test_tdm);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(page_suite, NULL, NULL);
