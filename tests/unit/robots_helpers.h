/*
 * robots_helpers.h: the helpers of the librobots tests (check_robots.c,
 * check_match.c, check_usage.c, check_golden.c): compile a body, check a
 * path, expect a deciding rule.
 */
#ifndef TESTS_ROBOTS_HELPERS_H
#define TESTS_ROBOTS_HELPERS_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

/* Compile a NUL-terminated body; never NULL in a test. */
static inline struct robots *
parse(const char *body)
{
	struct robots *r = robots_parse(body, strlen(body));

	ck_assert_ptr_nonnull(r);
	return r;
}

/* The verdict for agent on a raw path, normalized as a match path. */
static inline struct robots_verdict
check(const struct robots *r, const char *agent, const char *path)
{
	struct robots_verdict v;
	size_t len = strlen(path);
	char *norm = malloc(3 * len + 1);
	size_t n;

	ck_assert_ptr_nonnull(norm);
	n = robots_pct_normalize(path, len, norm, 0);
	robots_check(r, agent, strlen(agent), norm, n, &v);
	free(norm);
	return v;
}

/* Assert that a rule decided: allowed or not, by pattern on line. */
static inline void
expect_rule(const struct robots *r, const char *agent, const char *path,
    int allowed, const char *pattern, unsigned line)
{
	struct robots_verdict v = check(r, agent, path);

	ck_assert_msg(v.reason == ROBOTS_REASON_RULE,
	    "%s %s: expected a rule to decide, got %s", agent, path,
	    robots_reason_name(v.reason));
	ck_assert_msg(v.allowed == allowed, "%s %s: expected %s by %s", agent,
	    path, allowed ? "allowed" : "disallowed", pattern);
	ck_assert_int_eq(
	    v.rule.directive, allowed ? ROBOTS_ALLOW : ROBOTS_DISALLOW);
	ck_assert_msg(
	    v.rule.pattern_len == strlen(pattern) &&
	        memcmp(v.rule.pattern, pattern, v.rule.pattern_len) == 0,
	    "%s %s: expected pattern '%s', got '%.*s'", agent, path, pattern,
	    (int)v.rule.pattern_len, v.rule.pattern);
	ck_assert_uint_eq(v.rule.line, line);
}

/* Assert that no rule matched: allowed with reason no_rule. */
static inline void
expect_no_rule(const struct robots *r, const char *agent, const char *path)
{
	struct robots_verdict v = check(r, agent, path);

	ck_assert_msg(v.allowed && v.reason == ROBOTS_REASON_NO_RULE,
	    "%s %s: expected no rule, got %s %s line %u", agent, path,
	    v.allowed ? "allowed" : "disallowed", robots_reason_name(v.reason),
	    v.rule.line);
}

/* Whether sitemap i of r is exactly s. */
static inline int
sitemap_is(const struct robots *r, size_t i, const char *s)
{
	size_t len;
	const char *p = robots_sitemap(r, i, &len);

	return p != NULL && len == strlen(s) && memcmp(p, s, len) == 0;
}

/* The whole of the file at path, NUL-terminated; its length in *len. */
static inline char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	ck_assert_msg(f != NULL, "%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(b = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = '\0';
	*len = (size_t)n;
	return b;
}

#endif /* TESTS_ROBOTS_HELPERS_H */
