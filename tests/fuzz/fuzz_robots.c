/*
 * fuzz_robots.c: libFuzzer target for the robots.txt parser and matcher.
 * The input is split at the first 0xFF byte: before it, the robots.txt body;
 * after it, a path and an agent separated by a newline. Without a separator
 * the body is checked against a few fixed paths.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = { "/", "/a/b?c=d", "/index.html",
	"/robots.txt", "/%2A$", "/x/y/z/very/long/path/with/many/segments" };

/* Check one path against r, then cross-check the verdict's invariants. */
static void
check_one(const struct robots *r, const char *agent, size_t agent_len,
    const char *path, size_t path_len)
{
	struct robots_verdict v;
	char *norm;
	size_t norm_len;

	if ((norm = robots_path_normalize(path, path_len, &norm_len)) == NULL)
		return;
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
	struct robots *r;
	size_t i, g;

	if ((r = robots_parse(s, body_len)) == NULL)
		return 0;
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

		check_one(r, agent, agent_len, rest, path_len);
	} else {
		for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			check_one(
			    r, "FooBot/1.0", 10, paths[i], strlen(paths[i]));
	}
	robots_unref(r);
	return 0;
}
