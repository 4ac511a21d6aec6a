/*
 * check_golden.c: the golden pairs of tests/data/robots/: each NAME.txt is
 * a robots.txt compiled by librobots, each NAME.expect says what the
 * compiled ruleset answers, one line per case (the format is in
 * tests/data/robots/README.md). Every pair is one test, named in the
 * failure messages by file and line; a parser bug fixed adds a pair.
 */
#include <config.h>

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots_helpers.h"
#include "test_main.h"

#define GOLDEN_DIR TESTDATADIR "/robots"
#define GOLDEN_MAX 256       /* pairs */
#define FIELD_MAX 16         /* fields of an expect line */
#define GOLDEN_LINE_MAX 4096 /* bytes of an expect line */

static char *names[GOLDEN_MAX]; /* NAME of each pair, sorted */
static int nnames;

/* An expect line cut into fields, escapes undone. */
struct fields {
	char buf[GOLDEN_LINE_MAX];
	char *f[FIELD_MAX];
	int n;
	const char *where; /* "NAME.expect:LINE" */
};

/*
 * Cut line into fields: runs of non-blanks, or "..." with blanks inside;
 * \xHH is that byte, \\ and \" are themselves. A '#' starting a field
 * starts a comment.
 */
static void
split(const char *line, struct fields *fs)
{
	const char *p = line;
	char *o = fs->buf;
	int quoted;

	fs->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n' || *p == '#')
			return;
		ck_assert_msg(
		    fs->n < FIELD_MAX, "%s: too many fields", fs->where);
		fs->f[fs->n++] = o;
		quoted = *p == '"';
		p += quoted;
		while (*p != '\0' && *p != '\n' &&
		       (quoted ? *p != '"' : *p != ' ' && *p != '\t')) {
			if (p[0] == '\\' && p[1] == 'x' &&
			    isxdigit((unsigned char)p[2]) &&
			    isxdigit((unsigned char)p[3])) {
				char hex[3] = { p[2], p[3], '\0' };

				*o++ = (char)strtoul(hex, NULL, 16);
				p += 4;
			} else if (p[0] == '\\' &&
			           (p[1] == '\\' || p[1] == '"')) {
				*o++ = p[1];
				p += 2;
			} else {
				ck_assert_msg(
				    *p != '\\', "%s: bad escape", fs->where);
				*o++ = *p++;
			}
		}
		if (quoted) {
			ck_assert_msg(
			    *p == '"', "%s: unclosed quote", fs->where);
			p++;
		}
		*o++ = '\0';
	}
}

/* Field i as an unsigned number. */
static unsigned long
num(const struct fields *fs, int i)
{
	char *end;
	unsigned long v;

	ck_assert_msg(i < fs->n, "%s: missing field %d", fs->where, i + 1);
	v = strtoul(fs->f[i], &end, 10);
	ck_assert_msg(*end == '\0' && end != fs->f[i], "%s: '%s' is no number",
	    fs->where, fs->f[i]);
	return v;
}

/* Field i as a crawl delay: a number, or "none" for no delay (< 0). */
static void
expect_delay(const struct fields *fs, int i, double got)
{
	char *end;
	double want;

	ck_assert_msg(i + 1 == fs->n, "%s: one delay expected", fs->where);
	if (strcmp(fs->f[i], "none") == 0) {
		ck_assert_msg(
		    got < 0, "%s: delay %g, want none", fs->where, got);
		return;
	}
	want = strtod(fs->f[i], &end);
	ck_assert_msg(*end == '\0', "%s: bad delay", fs->where);
	ck_assert_msg(
	    got == want, "%s: delay %g, want %g", fs->where, got, want);
}

/* AGENT PATH VERDICT [LINE PATTERN]. */
static void
expect_verdict(const struct robots *r, const struct fields *fs)
{
	const char *agent = fs->f[0], *path = fs->f[1], *verdict = fs->f[2];
	struct robots_verdict v = check(r, agent, path);
	int allowed;

	ck_assert_msg(fs->n >= 3, "%s: AGENT PATH VERDICT", fs->where);
	if (strcmp(verdict, "allowed") == 0 ||
	    strcmp(verdict, "disallowed") == 0) {
		ck_assert_msg(fs->n == 3, "%s: extra fields", fs->where);
		ck_assert_msg(v.allowed == (verdict[0] == 'a'), "%s: %s %s: %s",
		    fs->where, agent, path,
		    v.allowed ? "allowed" : "disallowed");
		return;
	}
	if (strcmp(verdict, "no_rule") == 0 ||
	    strcmp(verdict, "robots_txt") == 0) {
		ck_assert_msg(fs->n == 3, "%s: extra fields", fs->where);
		ck_assert_msg(v.allowed && strcmp(robots_reason_name(v.reason),
		                               verdict) == 0,
		    "%s: %s %s: got %s %s line %u", fs->where, agent, path,
		    v.allowed ? "allowed" : "disallowed",
		    robots_reason_name(v.reason), v.rule.line);
		return;
	}
	ck_assert_msg(
	    strcmp(verdict, "allow") == 0 || strcmp(verdict, "disallow") == 0,
	    "%s: unknown verdict '%s'", fs->where, verdict);
	ck_assert_msg(fs->n == 5, "%s: %s LINE PATTERN", fs->where, verdict);
	allowed = verdict[0] == 'a';
	ck_assert_msg(v.reason == ROBOTS_REASON_RULE,
	    "%s: %s %s: expected a rule to decide, got %s", fs->where, agent,
	    path, robots_reason_name(v.reason));
	ck_assert_msg(
	    v.allowed == allowed &&
	        v.rule.directive == (allowed ? ROBOTS_ALLOW : ROBOTS_DISALLOW),
	    "%s: %s %s: expected %s", fs->where, agent, path, verdict);
	ck_assert_msg(
	    v.rule.pattern_len == strlen(fs->f[4]) &&
	        memcmp(v.rule.pattern, fs->f[4], v.rule.pattern_len) == 0,
	    "%s: %s %s: expected pattern '%s', got '%.*s'", fs->where, agent,
	    path, fs->f[4], (int)v.rule.pattern_len, v.rule.pattern);
	ck_assert_msg(v.rule.line == num(fs, 3), "%s: %s %s: line %u, want %s",
	    fs->where, agent, path, v.rule.line, fs->f[3]);
}

/* usage: AGENT PATH TRAIN SEARCH INPUT USE [LINE ...] [...] */
#define FIRST_LINE (3 + ROBOTS_PURPOSES)
static void
expect_usage(const struct robots *r, const struct fields *fs)
{
	struct robots_usage u;
	char norm[1024];
	size_t n, k;
	int i,
	    open = fs->n > FIRST_LINE && strcmp(fs->f[fs->n - 1], "...") == 0;
	int nlines = fs->n - FIRST_LINE - open;

	ck_assert_msg(
	    fs->n >= FIRST_LINE, "%s: usage: AGENT PATH T S I U", fs->where);
	ck_assert(strlen(fs->f[2]) < sizeof(norm) / 3);
	n = robots_pct_normalize(fs->f[2], strlen(fs->f[2]), norm, 0);
	robots_usage(r, fs->f[1], strlen(fs->f[1]), norm, n, &u);
	for (i = 0; i < ROBOTS_PURPOSES; i++)
		ck_assert_msg(
		    strcmp(fs->f[3 + i], "-") == 0 ||
		        strcmp(fs->f[3 + i], robots_pref_name(u.pref[i])) == 0,
		    "%s: %s is %s, want %s", fs->where,
		    robots_purpose_name((enum robots_purpose)i),
		    robots_pref_name(u.pref[i]), fs->f[3 + i]);
	if (open)
		ck_assert_msg(u.nfrom >= (size_t)nlines,
		    "%s: %zu deciding lines, want %d or more", fs->where,
		    u.nfrom, nlines);
	else
		ck_assert_msg(u.nfrom == (size_t)nlines,
		    "%s: %zu deciding lines, want %d", fs->where, u.nfrom,
		    nlines);
	for (k = 0; k < (size_t)nlines; k++)
		ck_assert_msg(u.from[k].line == num(fs, FIRST_LINE + (int)k),
		    "%s: deciding line %zu is %u, want %s", fs->where, k,
		    u.from[k].line, fs->f[6 + k]);
}

/* One "keyword:" line. */
static void
expect_fact(const struct robots *r, const struct fields *fs)
{
	const char *key = fs->f[0];
	struct robots_warning w;
	const char *s;
	size_t len;

	if (strcmp(key, "rules:") == 0)
		ck_assert_msg(robots_rule_count(r) == num(fs, 1),
		    "%s: %zu rules", fs->where, robots_rule_count(r));
	else if (strcmp(key, "groups:") == 0)
		ck_assert_msg(robots_group_count(r) == num(fs, 1),
		    "%s: %zu groups", fs->where, robots_group_count(r));
	else if (strcmp(key, "sitemaps:") == 0)
		ck_assert_msg(robots_sitemap_count(r) == num(fs, 1),
		    "%s: %zu sitemaps", fs->where, robots_sitemap_count(r));
	else if (strcmp(key, "sitemap:") == 0) {
		ck_assert_msg(fs->n == 3, "%s: sitemap: I URL|-", fs->where);
		s = robots_sitemap(r, num(fs, 1), &len);
		if (strcmp(fs->f[2], "-") == 0)
			ck_assert_msg(s == NULL, "%s: a sitemap", fs->where);
		else
			ck_assert_msg(s != NULL && len == strlen(fs->f[2]) &&
			                  memcmp(s, fs->f[2], len) == 0,
			    "%s: sitemap '%.*s'", fs->where, (int)len,
			    s != NULL ? s : "");
	} else if (strcmp(key, "delay:") == 0) {
		ck_assert_msg(fs->n >= 3, "%s: delay: AGENT PATH D", fs->where);
		expect_delay(fs, 3, check(r, fs->f[1], fs->f[2]).crawl_delay);
	} else if (strcmp(key, "group-delay:") == 0)
		expect_delay(fs, 2, robots_group_crawl_delay(r, num(fs, 1)));
	else if (strcmp(key, "usage:") == 0)
		expect_usage(r, fs);
	else if (strcmp(key, "warnings:") == 0)
		ck_assert_msg(robots_warning_count(r) == num(fs, 1),
		    "%s: %zu warnings", fs->where, robots_warning_count(r));
	else if (strcmp(key, "warning:") == 0) {
		ck_assert_msg(
		    fs->n == 4, "%s: warning: I LINE CODE", fs->where);
		ck_assert_msg(num(fs, 1) < robots_warning_count(r),
		    "%s: no warning %s", fs->where, fs->f[1]);
		robots_warning(r, num(fs, 1), &w);
		ck_assert_msg(
		    w.line == num(fs, 2) && strcmp(w.code, fs->f[3]) == 0,
		    "%s: warning line %u %s", fs->where, w.line, w.code);
		ck_assert_msg(strlen(w.message) > 10, "%s: %s: short message",
		    fs->where, w.code);
	} else
		ck_abort_msg("%s: unknown line '%s'", fs->where, key);
}

START_TEST(test_golden_pair)
{
	const char *name = names[_i];
	char path[1024], where[1100], line[GOLDEN_LINE_MAX];
	static struct fields fs;
	struct robots *r, *parsed;
	const void *img;
	size_t len, img_len;
	char *body;
	unsigned lineno = 0, cases = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.txt", GOLDEN_DIR, name);
	body = slurp(path, &len);
	ck_assert_ptr_nonnull(parsed = robots_parse(body, len));
	/* Its image passes the state file's deep check and answers alike. */
	img = robots_image(parsed, &img_len);
	ck_assert_ptr_nonnull(r = robots_from_image(img, img_len));
	robots_unref(parsed);
	snprintf(path, sizeof(path), "%s/%s.expect", GOLDEN_DIR, name);
	ck_assert_msg((f = fopen(path, "r")) != NULL, "%s: no .expect", name);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		ck_assert_msg(strchr(line, '\n') != NULL || feof(f),
		    "%s.expect:%u: line too long", name, lineno);
		snprintf(where, sizeof(where), "%s.expect:%u", name, lineno);
		fs.where = where;
		split(line, &fs);
		if (fs.n == 0)
			continue;
		if (fs.f[0][strlen(fs.f[0]) - 1] == ':')
			expect_fact(r, &fs);
		else
			expect_verdict(r, &fs);
		cases++;
	}
	fclose(f);
	ck_assert_msg(cases > 0, "%s.expect: no case", name);
	robots_unref(r);
	free(body);
}
END_TEST

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether dir/name + ext can be read. */
static int
readable(const char *name, size_t len, const char *ext)
{
	char path[1024];
	FILE *f;

	snprintf(
	    path, sizeof(path), "%s/%.*s%s", GOLDEN_DIR, (int)len, name, ext);
	if ((f = fopen(path, "r")) == NULL) {
		fprintf(
		    stderr, "%s: a golden pair without its other half\n", path);
		return 0;
	}
	fclose(f);
	return 1;
}

/* Every NAME.txt of the directory, each with its NAME.expect. */
static int
find_pairs(void)
{
	DIR *d = opendir(GOLDEN_DIR);
	struct dirent *de;
	size_t n;

	if (d == NULL) {
		perror(GOLDEN_DIR);
		return EXIT_FAILURE;
	}
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n > 7 && strcmp(de->d_name + n - 7, ".expect") == 0 &&
		    !readable(de->d_name, n - 7, ".txt")) {
			closedir(d);
			return EXIT_FAILURE;
		}
		if (n < 5 || strcmp(de->d_name + n - 4, ".txt") != 0)
			continue;
		if (!readable(de->d_name, n - 4, ".expect")) {
			closedir(d);
			return EXIT_FAILURE;
		}
		if (nnames == GOLDEN_MAX) {
			fprintf(stderr, "more than %d pairs\n", GOLDEN_MAX);
			closedir(d);
			return EXIT_FAILURE;
		}
		names[nnames] = strndup(de->d_name, n - 4);
		if (names[nnames++] == NULL) {
			closedir(d);
			return EXIT_FAILURE;
		}
	}
	closedir(d);
	if (nnames == 0) {
		fprintf(stderr, "%s: no golden pair\n", GOLDEN_DIR);
		return EXIT_FAILURE;
	}
	qsort(names, (size_t)nnames, sizeof(names[0]), name_cmp);
	return 0;
}

static void
free_pairs(void)
{
	while (nnames > 0)
		free(names[--nnames]);
}

static Suite *
golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *tc = tcase_create("pairs");

	tcase_add_loop_test(tc, test_golden_pair, 0, nnames);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(golden_suite, find_pairs, free_pairs);
