/*
 * fuzz_robots.c: libFuzzer target for the robots.txt parser and matcher.
 * The input is split at the first 0xFF byte: before it, the robots.txt body;
 * after it, a path and an agent separated by a newline. Without a separator
 * the body is checked against a few fixed paths. Each check also asks for
 * the usage preferences, of the ruleset and of a copy made from its image
 * (they must agree), and every extra line and warning is read.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = { "/", "/a/b?c=d", "/index.html",
	"/robots.txt", "/%2A$", "/x/y/z/very/long/path/with/many/segments" };

/* Sum the bytes of s so that a sanitizer sees them read. */
static unsigned
touch(const char *s, size_t n)
{
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (unsigned char)s[i];
	return sum;
}

/* The usage preferences for a path, on r and on its copy: the same. */
static void
usage_one(const struct robots *r, const struct robots *copy, const char *agent,
    size_t agent_len, const char *path, size_t path_len)
{
	struct robots_usage u, w;
	size_t i;

	robots_usage(r, agent, agent_len, path, path_len, &u);
	robots_usage(copy, agent, agent_len, path, path_len, &w);
	if (u.nfrom > ROBOTS_USAGE_FROM_MAX || u.nfrom != w.nfrom ||
	    memcmp(u.pref, w.pref, sizeof(u.pref)) != 0)
		abort();
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		if (u.pref[i] > ROBOTS_PREF_DISALLOWED)
			abort();
	for (i = 0; i < u.nfrom; i++) {
		if (u.from[i].line == 0 || u.from[i].pattern_len == 0 ||
		    u.from[i].pattern[0] != '/' ||
		    u.from[i].line != w.from[i].line ||
		    (i > 0 && u.from[i].line <= u.from[i - 1].line))
			abort();
		(void)touch(u.from[i].value, u.from[i].value_len);
	}
}

/* Every extra line and warning of r. */
static void
read_extras(const struct robots *r)
{
	struct robots_extra e;
	struct robots_warning w;
	size_t i;

	for (i = 0; i < robots_extra_count(r); i++) {
		robots_extra(r, i, &e);
		if (e.line == 0 || e.group < -1 ||
		    e.group >= (long)robots_group_count(r))
			abort();
		(void)touch(e.name, e.name_len);
		(void)touch(e.value, e.value_len);
	}
	for (i = 0; i < robots_warning_count(r); i++) {
		robots_warning(r, i, &w);
		if (w.line == 0 || w.code[0] == '\0' || w.message[0] == '\0')
			abort();
	}
}

/* Check one path against r, then cross-check the verdict's invariants. */
static void
check_one(const struct robots *r, const struct robots *copy, const char *agent,
    size_t agent_len, const char *path, size_t path_len)
{
	struct robots_verdict v;
	char *norm;
	size_t norm_len;

	if ((norm = robots_path_normalize(path, path_len, &norm_len)) == NULL)
		return;
	usage_one(r, copy, agent, agent_len, norm, norm_len);
	robots_check(r, agent, agent_len, norm, norm_len, &v);
	if (v.reason == ROBOTS_REASON_RULE) {
		if (v.allowed != (v.rule.directive == ROBOTS_ALLOW))
			abort();
		if (v.rule.line == 0)
			abort();
	} else if (!v.allowed)
		abort();
	free(norm);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const uint8_t *sep = memchr(data, 0xff, size);
	size_t body_len = sep ? (size_t)(sep - data) : size;
	struct robots *r, *copy;
	const void *img;
	size_t i, g, img_len;

	if ((r = robots_parse(s, body_len)) == NULL)
		return 0;
	img = robots_image(r, &img_len);
	/* Every ruleset compiled passes the deep check of its image. */
	if ((copy = robots_from_image_version(
	         img, img_len, ROBOTS_IMAGE_VERSION)) == NULL)
		abort();
	if (!robots_has_prefs(r) || !robots_has_prefs(copy))
		abort();
	read_extras(r);
	for (g = 0; g < robots_group_count(r); g++)
		for (i = 0; i < robots_group_agent_count(r, g); i++)
			(void)robots_group_agent(r, g, i, &body_len);
	if (sep != NULL) {
		const char *rest = (const char *)sep + 1;
		size_t rest_len = size - (size_t)(sep - data) - 1;
		const char *nl = memchr(rest, '\n', rest_len);
		size_t path_len = nl ? (size_t)(nl - rest) : rest_len;
		const char *agent = nl ? nl + 1 : "bot";
		size_t agent_len = nl ? rest_len - path_len - 1 : 3;

		check_one(r, copy, agent, agent_len, rest, path_len);
	} else {
		for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			check_one(r, copy, "FooBot/1.0", 10, paths[i],
			    strlen(paths[i]));
	}
	robots_unref(copy);
	robots_unref(r);
	return 0;
}
