/*
 * check_robots_tag.c: the page's robots rules (src/robots/robots_tag*.c)
 * against draft-illyes-repext (section 3.1.1, the Robots-Tag List, its
 * union rule and its parsing limit; 3.1.2, the meta element) and the
 * contract ("Every signal, not only robots.txt": X-Robots-Tag in Google's
 * syntax, the known rules, the most restrictive value of a valued rule),
 * the unavailable_after dates (RFC 1123 / RFC 850 as in RFC 9110 5.6.7,
 * RFC 822 5.1, ISO 8601), and, as a differential, the HTTP working
 * group's List vectors (tests/data/structured-field-tests): a Robots-Tag
 * field parses exactly when the vectors say the List does, and gives the
 * parameters of the members naming the agent that the expected List has.
 */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "robots_tag.h"
#include "test_main.h"

#define VECTORS TESTDATADIR "/structured-field-tests/"

#define B(r) (1u << RT_##r)
#define NONE_BITS (B(NONE) | B(NOINDEX) | B(NOFOLLOW))

/* The unknown names of set, comma-joined, into buf. */
static const char *
unknown_list(const struct robots_tag_set *set, char *buf, size_t size)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < set->nunknown; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s",
		    i > 0 ? "," : "", set->unknown[i]);
	return buf;
}

struct field_case {
	const char *field, *agent;
	enum robots_tag_status st;
	uint32_t rules;
	const char *unknown;
};

static const struct field_case field_cases[] = {
	/* 3.1.1's example: '*' for all, ExampleBot's own added. */
	{ "*;nosnippet, ExampleBot;noindex", "ExampleBot", RT_OK,
	    B(NOINDEX) | B(NOSNIPPET), "" },
	{ "*;nosnippet, ExampleBot;noindex", "OtherBot", RT_OK, B(NOSNIPPET),
	    "" },
	/* a product token several times: the union */
	{ "ExampleBot;noindex, ExampleBot;nosnippet", "ExampleBot", RT_OK,
	    B(NOINDEX) | B(NOSNIPPET), "" },
	/* RFC 9309 2.2.1: product tokens compare case-insensitively; the
	 * check's agent is reduced to its product token */
	{ "ExampleBot;noindex", "examplebot", RT_OK, B(NOINDEX), "" },
	{ "examplebot;noindex", "ExampleBot/2.1 (+https://e.example)", RT_OK,
	    B(NOINDEX), "" },
	{ "ExampleBot;noindex", "ExampleBotNews", RT_OK, 0, "" },
	{ "\"ExampleBot\";noindex", "ExampleBot", RT_OK, B(NOINDEX), "" },
	{ "(ExampleBot);noindex", "ExampleBot", RT_OK, 0, "" },
	{ "1;noindex", "ExampleBot", RT_OK, 0, "" },
	{ "*;noindex=?0", "ExampleBot", RT_OK, 0, "" },
	{ "*;noindex=?1;nofollow=1", "ExampleBot", RT_OK,
	    B(NOINDEX) | B(NOFOLLOW), "" },
	{ "*;none", "ExampleBot", RT_OK, NONE_BITS, "" },
	{ "*;noai;noimageai;noarchive;noimageindex;notranslate;"
	  "indexifembedded",
	    "ExampleBot", RT_OK,
	    B(NOAI) | B(NOIMAGEAI) | B(NOARCHIVE) | B(NOIMAGEINDEX) |
	        B(NOTRANSLATE) | B(INDEXIFEMBEDDED),
	    "" },
	/* other rules kept as unknown, once */
	{ "*;foo;bar=1, *;foo", "ExampleBot", RT_OK, 0, "foo,bar" },
	/* a List that does not parse is ignored as a whole */
	{ "ExampleBot;noindex,", "ExampleBot", RT_INVALID, 0, "" },
	{ "ExampleBot;NoIndex", "ExampleBot", RT_INVALID, 0, "" },
	{ "*;noindex, ExampleBot;", "ExampleBot", RT_INVALID, 0, "" },
	{ "", "ExampleBot", RT_OK, 0, "" },
};

START_TEST(test_field_table)
{
	const struct field_case *c = &field_cases[_i];
	struct robots_tag_set set;
	char buf[512];

	robots_tag_set_init(&set);
	ck_assert_int_eq(robots_tag_parse_field(c->field, strlen(c->field),
	                     c->agent, strlen(c->agent), &set),
	    c->st);
	ck_assert_msg(
	    set.rules == c->rules, "%s: rules %#x", c->field, set.rules);
	ck_assert_str_eq(unknown_list(&set, buf, sizeof(buf)), c->unknown);
}
END_TEST

START_TEST(test_field_values)
{
	static const char f[] =
	    "*;max-snippet=20;max-image-preview=large, "
	    "ExampleBot;max-snippet=5;max-video-preview=-1, "
	    "*;unavailable_after=\"25 Jun 2010 15:00:00 PST\", "
	    "*;unavailable_after=@1277478000";
	static const char bad[] = "*;max-snippet=abc;max-image-preview=huge;"
	                          "max-video-preview=-2;unavailable_after=5";
	struct robots_tag_set set;

	robots_tag_set_init(&set);
	ck_assert_int_eq(
	    robots_tag_parse_field(f, sizeof(f) - 1, "ExampleBot", 10, &set),
	    RT_OK);
	ck_assert_uint_eq(set.valued,
	    RT_HAS_MAX_SNIPPET | RT_HAS_MAX_IMAGE_PREVIEW |
	        RT_HAS_MAX_VIDEO_PREVIEW | RT_HAS_UNAVAILABLE_AFTER);
	ck_assert_int_eq(set.max_snippet, 5); /* the smallest */
	ck_assert_int_eq(set.max_image_preview, RT_PREVIEW_LARGE);
	ck_assert_int_eq(set.max_video_preview, -1);
	/* the earliest: 15:00 GMT before 15:00 PST (23:00 GMT) */
	ck_assert_int_eq(set.unavailable_after, 1277478000);
	/* unreadable values are ignored, as if absent */
	robots_tag_set_init(&set);
	robots_tag_parse_field(bad, sizeof(bad) - 1, "x", 1, &set);
	ck_assert_uint_eq(set.valued, 0);
	ck_assert_uint_eq(set.nunknown, 0);
}
END_TEST

/* A field of exactly total bytes: "*;noindex", filler, then tail. */
static char *
long_field(size_t total, const char *tail)
{
	size_t tl = strlen(tail), i = 9;
	char *s = malloc(total + 1);

	ck_assert_ptr_nonnull(s);
	memcpy(s, "*;noindex", 9);
	while (i + 4 + tl <= total) {
		memcpy(s + i, ", *;", 4); /* a '*' member without rules */
		i += 4;
		if (i + tl < total)
			s[i - 1] = ' '; /* "*" alone; keeps the List valid */
	}
	while (i + tl < total)
		s[i++] = ' ';
	memcpy(s + i, tail, tl);
	s[total] = '\0';
	return s;
}

START_TEST(test_field_limit)
{
	/* 3.1.1: complete members before the limit are honoured, the one
	 * the limit cuts and everything after it ignored. */
	static const char tail[] = ", *;nosnippet";
	struct robots_tag_set set;
	char *s;
	size_t n;

	/* the tail ends exactly at the limit, then ", *;noai" */
	s = malloc(ROBOTS_TAG_LIMIT + 32);
	memcpy(s, "*;noindex", 9);
	n = 9;
	while (n < ROBOTS_TAG_LIMIT - (sizeof(tail) - 1))
		s[n++] = ' ';
	memcpy(s + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	memcpy(s + n, ", *;noai", 9);
	ck_assert_uint_eq(n, ROBOTS_TAG_LIMIT);
	robots_tag_set_init(&set);
	ck_assert_int_eq(
	    robots_tag_parse_field(s, n + 8, "x", 1, &set), RT_CUT);
	ck_assert_uint_eq(set.rules, B(NOINDEX) | B(NOSNIPPET));
	/* one byte less room: nosnippet is cut ("nosnippe") */
	robots_tag_set_init(&set);
	memmove(s + 1, s, n + 9);
	s[0] = ' ';
	ck_assert_int_eq(
	    robots_tag_parse_field(s + 0, n + 9, "x", 1, &set), RT_CUT);
	ck_assert_uint_eq(set.rules, B(NOINDEX));
	/* a syntax error after the limit does not count */
	memcpy(s + n + 1, ", ;;;", 5);
	robots_tag_set_init(&set);
	ck_assert_int_eq(
	    robots_tag_parse_field(s, n + 6, "x", 1, &set), RT_CUT);
	ck_assert_uint_eq(set.rules, B(NOINDEX));
	/* one before it does */
	s[20] = ';';
	robots_tag_set_init(&set);
	ck_assert_int_eq(
	    robots_tag_parse_field(s, n + 6, "x", 1, &set), RT_INVALID);
	ck_assert_uint_eq(set.rules, 0);
	free(s);
	/* many members: still a field of the limit's size */
	s = long_field(ROBOTS_TAG_LIMIT + 100, ", *;noai");
	robots_tag_set_init(&set);
	ck_assert_int_eq(
	    robots_tag_parse_field(s, strlen(s), "x", 1, &set), RT_CUT);
	ck_assert_uint_eq(set.rules, B(NOINDEX));
	free(s);
}
END_TEST

struct xrt_case {
	const char *line, *agent;
	int applies;
	uint32_t rules;
	const char *unknown;
	int64_t unavailable_after; /* -1: none */
};

static const struct xrt_case xrt_cases[] = {
	/* Google's examples of the X-Robots-Tag header */
	{ "noindex, nofollow", "googlebot", 1, B(NOINDEX) | B(NOFOLLOW), "",
	    -1 },
	{ "googlebot: noindex, nofollow", "Googlebot", 1,
	    B(NOINDEX) | B(NOFOLLOW), "", -1 },
	{ "googlebot: noindex, nofollow", "otherbot", 0, 0, "", -1 },
	{ "otherbot: noindex, nofollow", "googlebot", 0, 0, "", -1 },
	{ "googlebot-news: nosnippet", "googlebot", 0, 0, "", -1 },
	{ "googlebot-news: nosnippet", "Googlebot-News", 1, B(NOSNIPPET), "",
	    -1 },
	{ "Googlebot: noindex", "Googlebot/2.1 (+http://g.example/bot)", 1,
	    B(NOINDEX), "", -1 },
	{ "unavailable_after: 25 Jun 2010 15:00:00 PST", "googlebot", 1, 0, "",
	    1277506800 },
	{ "googlebot: unavailable_after: 25 Jun 2010 15:00:00 PST", "googlebot",
	    1, 0, "", 1277506800 },
	/* an RFC 850 date keeps its comma */
	{ "unavailable_after: Friday, 25-Jun-10 15:00:00 GMT, noindex", "g", 1,
	    B(NOINDEX), "", 1277478000 },
	{ "noindex, unavailable_after: Fri, 25 Jun 2010 15:00:00 GMT", "g", 1,
	    B(NOINDEX), "", 1277478000 },
	{ "unavailable_after: yesterday", "g", 1, 0, "", -1 },
	{ "NOINDEX , NoFollow", "g", 1, B(NOINDEX) | B(NOFOLLOW), "", -1 },
	{ "noindex,,nofollow,", "g", 1, B(NOINDEX) | B(NOFOLLOW), "", -1 },
	{ "none", "g", 1, NONE_BITS, "", -1 },
	{ "noai, noimageai", "g", 1, B(NOAI) | B(NOIMAGEAI), "", -1 },
	{ "foo, Bar, foo", "g", 1, 0, "foo,bar", -1 },
	{ "", "g", 1, 0, "", -1 },
	/* a name with a space is no agent: an unknown rule "a b" */
	{ "a b: noindex", "g", 1, 0, "a b", -1 },
	/* unknown names that are not printable ASCII are counted only */
	{ "caf\xC3\xA9, x\x01y, ok", "g", 1, 0, "ok", -1 },
};

START_TEST(test_xrt_table)
{
	const struct xrt_case *c = &xrt_cases[_i];
	struct robots_tag_set set;
	char buf[512];

	robots_tag_set_init(&set);
	ck_assert_int_eq(robots_tag_parse_xrt(c->line, strlen(c->line),
	                     c->agent, strlen(c->agent), &set),
	    c->applies);
	ck_assert_msg(
	    set.rules == c->rules, "%s: rules %#x", c->line, set.rules);
	ck_assert_str_eq(unknown_list(&set, buf, sizeof(buf)), c->unknown);
	if (c->unavailable_after < 0)
		ck_assert_uint_eq(set.valued & RT_HAS_UNAVAILABLE_AFTER, 0);
	else {
		ck_assert_uint_ne(set.valued & RT_HAS_UNAVAILABLE_AFTER, 0);
		ck_assert_int_eq(set.unavailable_after, c->unavailable_after);
	}
}
END_TEST

START_TEST(test_xrt_values)
{
	static const char l[] = "max-snippet: 20, max-snippet:0, "
	                        "max-image-preview: standard, "
	                        "max-image-preview:large, max-video-preview:-1";
	struct robots_tag_set set;
	char *s;

	robots_tag_set_init(&set);
	robots_tag_parse_xrt(l, sizeof(l) - 1, "g", 1, &set);
	ck_assert_int_eq(set.max_snippet, 0);
	ck_assert_int_eq(set.max_image_preview, RT_PREVIEW_STANDARD);
	ck_assert_int_eq(set.max_video_preview, -1);
	/* the limit: a rule it cuts is dropped */
	s = malloc(ROBOTS_TAG_LIMIT + 16);
	memset(s, ' ', ROBOTS_TAG_LIMIT + 16);
	memcpy(s, "noindex,", 8);
	memcpy(s + ROBOTS_TAG_LIMIT - 4, "nofollow", 8);
	robots_tag_set_init(&set);
	robots_tag_parse_xrt(s, ROBOTS_TAG_LIMIT + 16, "g", 1, &set);
	ck_assert_uint_eq(set.rules, B(NOINDEX));
	memcpy(s + ROBOTS_TAG_LIMIT - 8, "nofollow,", 9);
	robots_tag_set_init(&set);
	robots_tag_parse_xrt(s, ROBOTS_TAG_LIMIT + 16, "g", 1, &set);
	ck_assert_uint_eq(set.rules, B(NOINDEX) | B(NOFOLLOW));
	free(s);
}
END_TEST

/* 3.1.2: <meta name="robots"> for all, name=AGENT for that agent. */
START_TEST(test_meta)
{
	static const struct {
		const char *name, *content, *agent;
		int applies;
		uint32_t rules;
	} m[] = {
		{ "robots", "noindex", "examplebot", 1, B(NOINDEX) },
		{ "ROBOTS", "noindex, nofollow", "x", 1,
		    B(NOINDEX) | B(NOFOLLOW) },
		{ "examplebot", "nosnippet", "ExampleBot", 1, B(NOSNIPPET) },
		{ "examplebot", "nosnippet", "OtherBot", 0, 0 },
		{ "tdm-reservation", "1", "x", 0, 0 },
		{ "robots", "max-snippet:-1, noai", "x", 1, B(NOAI) },
	};
	struct robots_tag_set set, all;
	size_t i;

	robots_tag_set_init(&all);
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		robots_tag_set_init(&set);
		ck_assert_int_eq(
		    robots_tag_parse_meta(m[i].name, strlen(m[i].name),
		        m[i].content, strlen(m[i].content), m[i].agent,
		        strlen(m[i].agent), &set),
		    m[i].applies);
		ck_assert_uint_eq(set.rules, m[i].rules);
		robots_tag_set_union(&all, &set);
	}
	/* the union of every element */
	ck_assert_uint_eq(
	    all.rules, B(NOINDEX) | B(NOFOLLOW) | B(NOSNIPPET) | B(NOAI));
	ck_assert_int_eq(all.max_snippet, -1);
}
END_TEST

START_TEST(test_union)
{
	struct robots_tag_set a, b;
	static const char la[] = "noindex, max-snippet:20, "
	                         "max-image-preview:large, foo, "
	                         "unavailable_after: 2020-09-21";
	static const char lb[] = "nofollow, max-snippet:-1, "
	                         "max-image-preview:none, foo, bar, "
	                         "unavailable_after: 2010-06-25";

	robots_tag_set_init(&a);
	robots_tag_set_init(&b);
	robots_tag_parse_rules(la, sizeof(la) - 1, &a);
	robots_tag_parse_rules(lb, sizeof(lb) - 1, &b);
	robots_tag_set_union(&a, &b);
	ck_assert_uint_eq(a.rules, B(NOINDEX) | B(NOFOLLOW));
	ck_assert_int_eq(a.max_snippet, 20); /* -1 is the largest */
	ck_assert_int_eq(a.max_image_preview, RT_PREVIEW_NONE);
	ck_assert_int_eq(a.unavailable_after, 1277424000); /* 2010-06-25 */
	ck_assert_uint_eq(a.nunknown, 2);
	ck_assert_str_eq(a.unknown[1], "bar");
}
END_TEST

static const struct {
	const char *s;
	int64_t t; /* -1: not a date */
} dates[] = {
	/* RFC 9110 5.6.7's example, IMF-fixdate and RFC 850 */
	{ "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 },
	{ "Sunday, 06-Nov-94 08:49:37 GMT", 784111777 },
	/* RFC 822 5.1: no weekday, 1-digit day, no seconds, zones */
	{ "6 Nov 1994 08:49:37 GMT", 784111777 },
	{ "Sun, 06 Nov 1994 08:49 GMT", 784111740 },
	{ "25 Jun 2010 15:00:00 PST", 1277506800 },
	{ "25 Jun 2010 15:00:00 EDT", 1277492400 },
	{ "25 Jun 2010 15:00:00 +0100", 1277474400 },
	{ "25 Jun 2010 15:00:00 UT", 1277478000 },
	{ "6 Nov 1994 08:49 +0100", 784108140 },
	{ "25 Jun 2010 15:00:00 -07:00", 1277503200 },
	{ "25 Jun 2010 15:00:00", 1277478000 },
	{ "  fri, 25 jun 2010 15:00:00 gmt\t", 1277478000 },
	{ "01 Jan 69 00:00:00 GMT", 3124224000 },
	{ "31 Dec 99 23:59:59 GMT", 946684799 },
	/* ISO 8601 */
	{ "2020-09-21", 1600646400 },
	{ "2020-09-21T15:00:00+02:00", 1600693200 },
	{ "2020-09-21T13:00:00Z", 1600693200 },
	{ "2020-09-21T13:00Z", 1600693200 },
	{ "2020-09-21 13:00:00.25Z", 1600693200 },
	{ "2020-09-21T15:00+0200", 1600693200 },
	{ "2020-09-21T10:00-03", 1600693200 },
	{ "2000-02-29", 951782400 },
	{ "1970-01-01T00:00:00Z", 0 },
	/* not dates */
	{ "2001-02-29", -1 },
	{ "1900-02-29", -1 },
	{ "2020-13-01", -1 },
	{ "2020-09-21T24:00:00Z", -1 },
	{ "2020-9-21", -1 },
	{ "2020-09-21Z", -1 },
	{ "0999-01-01", -1 },
	{ "2020-09-21T13:00:00+24:00", -1 },
	{ "Fri 25 Jun 2010 15:00:00 GMT", -1 },
	{ "Xyz, 25 Jun 2010 15:00:00 GMT", -1 },
	{ "25 Foo 2010 15:00:00 GMT", -1 },
	{ "25 Jun 2010 15:00:00 XYZ", -1 },
	{ "25 Jun 210 15:00:00 GMT", -1 },
	{ "25 Jun 2010", -1 },
	{ "25-Jun 2010 15:00:00 GMT", -1 },
	{ "32 Jun 2010 15:00:00 GMT", -1 },
	{ "", -1 },
	{ "yesterday", -1 },
	{ "@1277478000", -1 },
};

START_TEST(test_dates)
{
	size_t i;
	int64_t t;

	for (i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
		int rc =
		    robots_tag_parse_date(dates[i].s, strlen(dates[i].s), &t);

		if (dates[i].t == -1)
			ck_assert_msg(rc == -1, "%s: a date", dates[i].s);
		else {
			ck_assert_msg(rc == 0, "%s: not a date", dates[i].s);
			ck_assert_msg(t == dates[i].t, "%s: %lld", dates[i].s,
			    (long long)t);
		}
	}
}
END_TEST

/* Whether key is a rule robots_tag.h knows (not an unknown one). */
static int
known_rule(const char *key)
{
	static const char *const valued[] = { "max-snippet",
		"max-image-preview", "max-video-preview", "unavailable_after" };
	size_t i;

	for (i = 0; i < RT_NRULES; i++)
		if (strcmp(key,
		        robots_tag_rule_name((enum robots_tag_rule)i)) == 0)
			return 1;
	for (i = 0; i < 4; i++)
		if (strcmp(key, valued[i]) == 0)
			return 1;
	return 0;
}

#define TOKEN_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"

/* Whether the vectors' member item names agent: '*', or its product
 * token (the [A-Za-z_-] run, RFC 9309 2.2.1) equals agent's, ignoring
 * case. */
static int
names(json_t *item, const char *agent)
{
	const char *v;
	size_t n;

	if (json_is_object(item)) {
		if (strcmp(json_string_value(json_object_get(item, "__type")),
		        "token") != 0)
			return 0;
		item = json_object_get(item, "value");
	}
	if (!json_is_string(item))
		return 0;
	v = json_string_value(item);
	if (strcmp(v, "*") == 0)
		return 1;
	n = strspn(v, TOKEN_CHARS);
	return n > 0 && n == strspn(agent, TOKEN_CHARS) &&
	       strncasecmp(v, agent, n) == 0;
}

/*
 * What the Robots-Tag parse must give for the vectors' expected List,
 * for agent: the keys of the parameters not Boolean false, of the
 * members naming the agent, once each, comma-joined. 0 when the case
 * cannot be compared (a known rule, or more names than a set keeps).
 */
static int
expected_unknown(json_t *list, const char *agent, char *buf, size_t size)
{
	const char *seen[ROBOTS_TAG_MAX_UNKNOWN];
	size_t i, j, k, off = 0, count = 0;
	json_t *m, *p;

	buf[0] = '\0';
	json_array_foreach(list, i, m)
	{
		if (!names(json_array_get(m, 0), agent))
			continue;
		json_array_foreach(json_array_get(m, 1), j, p)
		{
			const char *key =
			    json_string_value(json_array_get(p, 0));

			if (json_is_false(json_array_get(p, 1)))
				continue;
			if (known_rule(key) ||
			    strlen(key) > ROBOTS_TAG_UNKNOWN_LEN)
				return 0;
			for (k = 0; k < count && strcmp(seen[k], key) != 0; k++)
				;
			if (k < count)
				continue;
			if (count == ROBOTS_TAG_MAX_UNKNOWN)
				return 0;
			seen[count++] = key;
			off += (size_t)snprintf(buf + off, size - off, "%s%s",
			    off > 0 ? "," : "", key);
		}
	}
	return 1;
}

struct vtally {
	int run, parsed, compared;
};

/* One List case of the vectors, for the agent its first member names. */
static void
vector_case(json_t *c, const char *file, struct vtally *t)
{
	static char field[ROBOTS_TAG_LIMIT + 1], want[8192], got[8192];
	json_t *raw = json_object_get(c, "raw"), *e, *first;
	const char *agent = "nobot";
	struct robots_tag_set set;
	enum robots_tag_status st;
	size_t i, off = 0, len;

	json_array_foreach(raw, i, e)
	{
		len = json_string_length(e);
		if (off + len + 2 > ROBOTS_TAG_LIMIT)
			return; /* the limit's cut is tested on its own */
		if (i > 0)
			memcpy(field + off, ", ", 2), off += 2;
		memcpy(field + off, json_string_value(e), len);
		off += len;
	}
	if (json_is_true(json_object_get(c, "can_fail")))
		return;
	first = json_array_get(
	    json_array_get(json_object_get(c, "expected"), 0), 0);
	if (json_is_object(first) &&
	    json_is_string(json_object_get(first, "value")))
		agent = json_string_value(json_object_get(first, "value"));
	robots_tag_set_init(&set);
	st = robots_tag_parse_field(field, off, agent, strlen(agent), &set);
	t->run++;
	if (json_is_true(json_object_get(c, "must_fail"))) {
		ck_assert_msg(st == RT_INVALID, "%s: %s: parsed", file,
		    json_string_value(json_object_get(c, "name")));
		return;
	}
	ck_assert_msg(st == RT_OK, "%s: %s: not parsed", file,
	    json_string_value(json_object_get(c, "name")));
	t->parsed++;
	if (!expected_unknown(
	        json_object_get(c, "expected"), agent, want, sizeof(want)))
		return;
	ck_assert_msg(strcmp(unknown_list(&set, got, sizeof(got)), want) == 0,
	    "%s: %s: got %s, want %s", file,
	    json_string_value(json_object_get(c, "name")), got, want);
	t->compared++;
}

/* The names answers use for max-image-preview (the repext draft's). */
START_TEST(test_preview_names)
{
	ck_assert_str_eq(robots_tag_preview_name(RT_PREVIEW_NONE), "none");
	ck_assert_str_eq(
	    robots_tag_preview_name(RT_PREVIEW_STANDARD), "standard");
	ck_assert_str_eq(robots_tag_preview_name(RT_PREVIEW_LARGE), "large");
	ck_assert_str_eq(
	    robots_tag_preview_name((enum robots_tag_preview)3), "unknown");
}
END_TEST

START_TEST(test_list_vectors)
{
	static const char *files[] = { "list.json", "param-list.json",
		"listlist.json", "param-listlist.json", "examples.json",
		"token.json", "token-generated.json", "string.json",
		"key-generated.json", "large-generated.json" };
	struct vtally t = { 0, 0, 0 };
	json_error_t err;
	json_t *cases, *c;
	size_t f, i;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[512];

		snprintf(path, sizeof(path), "%s%s", VECTORS, files[f]);
		cases = json_load_file(path, JSON_ALLOW_NUL, &err);
		ck_assert_msg(cases != NULL, "%s: %s", path, err.text);
		json_array_foreach(cases, i, c)
		{
			const char *type = json_string_value(
			    json_object_get(c, "header_type"));

			if (type != NULL && strcmp(type, "list") == 0)
				vector_case(c, files[f], &t);
		}
		json_decref(cases);
	}
	printf("robots-tag vs sfv List vectors: %d run, %d parsed, %d "
	       "compared\n",
	    t.run, t.parsed, t.compared);
	fflush(stdout);
	ck_assert_int_gt(t.compared, 100);
}
END_TEST

static Suite *
robots_tag_suite(void)
{
	Suite *s = suite_create("robots_tag");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_field_table, 0,
	    sizeof(field_cases) / sizeof(field_cases[0]));
	tcase_add_test(tc, test_field_values);
	tcase_add_test(tc, test_field_limit);
	tcase_add_loop_test(
	    tc, test_xrt_table, 0, sizeof(xrt_cases) / sizeof(xrt_cases[0]));
	tcase_add_test(tc, test_xrt_values);
	tcase_add_test(tc, test_meta);
	tcase_add_test(tc, test_union);
	tcase_add_test(tc, test_dates);
	tcase_add_test(tc, test_list_vectors);
	tcase_add_test(tc, test_preview_names);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(robots_tag_suite, NULL, NULL);
