/*
 * ctl_test.c: "robotsctl test FILE AGENT URL...": evaluates a local
 * robots.txt offline with librobots, the library the daemon uses, and
 * prints one check-shaped verdict per URL, as text or as a JSON line.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "robotsctl.h"
#include "proto.h"

#define CTL_MAX_FILE (64 << 20) /* bytes of a robots.txt read */

/* Read up to CTL_MAX_FILE bytes of f (allocated); NULL on a read error. */
static char *
read_file(FILE *f, size_t *len)
{
	size_t cap = 0, n;
	char *buf = NULL, *p;

	*len = 0;
	for (;;) {
		if (*len == cap) {
			if (cap >= CTL_MAX_FILE)
				break;
			cap = cap == 0 ? 65536 : cap * 2;
			if ((p = realloc(buf, cap)) == NULL) {
				errno = ENOMEM;
				goto fail;
			}
			buf = p;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0 && ferror(f))
			goto fail;
		if (n == 0)
			break;
	}
	return buf != NULL ? buf : strdup("");
fail:
	free(buf);
	return NULL;
}

/* Parse FILE ("-": stdin) into a ruleset; NULL (reported) on failure. */
static struct robots *
load_robots(const char *file)
{
	struct robots *r;
	FILE *f;
	char *body;
	size_t len;

	f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	if (f == stdin)
		file = "stdin";
	if (f == NULL || (body = read_file(f, &len)) == NULL) {
		ctl_warnx("%s: %s", file, strerror(errno));
		if (f != NULL && f != stdin)
			fclose(f);
		return NULL;
	}
	if (f != stdin)
		fclose(f);
	if (len > ROBOTS_MAX_BODY)
		ctl_warnx("%s: only the first %d bytes are used (as robotsd "
		          "does)",
		    file, ROBOTS_MAX_BODY);
	if ((r = robots_parse(body, len)) == NULL)
		ctl_warnx("out of memory");
	free(body);
	return r;
}

/* The verdict's rule as {"directive","pattern","line"}, or null. */
static json_t *
verdict_rule(const struct robots_verdict *v)
{
	if (v->reason != ROBOTS_REASON_RULE)
		return json_null();
	return json_pack("{s:s, s:o, s:I}", "directive",
	    robots_directive_name(v->rule.directive), "pattern",
	    proto_string(v->rule.pattern, v->rule.pattern_len), "line",
	    (json_int_t)v->rule.line);
}

/* A check-shaped result for one URL; *allowed is -1 on a bad URL. */
static json_t *
test_url(
    const struct robots *r, const char *agent, const char *url, int *allowed)
{
	struct robots_verdict v;
	struct url u;
	enum url_err e;
	json_t *res;

	*allowed = -1;
	e = url_parse(url, strlen(url), &u);
	if (e != URL_OK) {
		ctl_warnx("%s: %s", url, url_err_message(e));
		return json_pack("{s:o, s:b, s:{s:s, s:s}}", "url",
		    proto_string(url, strlen(url)), "ok", 0, "error", "code",
		    e == URL_UNSUPPORTED_SCHEME ? "unsupported_scheme"
		                                : "bad_url",
		    "message", url_err_message(e));
	}
	robots_check(r, agent, strlen(agent), u.path, u.path_len, &v);
	url_clear(&u);
	*allowed = v.allowed != 0;
	res = json_pack("{s:o, s:b, s:b, s:s, s:o, s:o}", "url",
	    proto_string(url, strlen(url)), "ok", 1, "allowed", *allowed,
	    "reason", robots_reason_name(v.reason), "rule", verdict_rule(&v),
	    "crawl_delay",
	    v.crawl_delay < 0 ? json_null() : json_real(v.crawl_delay));
	return res;
}

/* Print one test result as a JSON line or as text. */
static void
test_print(const struct ctl *ctl, const char *url, const json_t *res)
{
	char *s;

	if (ctl->json) {
		if ((s = json_dumps(res, JSON_COMPACT)) != NULL)
			puts(s);
		free(s);
	} else if (json_is_true(json_object_get(res, "ok")))
		ctl_print_check(url, res);
}

/* test FILE AGENT URL...: see robotsctl.h. */
int
ctl_cmd_test(const struct ctl *ctl, int argc, char **argv)
{
	struct robots *r;
	json_t *res;
	int allowed, i, status = CTL_EXIT_OK;

	if ((r = load_robots(argv[0])) == NULL)
		return CTL_EXIT_ERROR;
	for (i = 2; i < argc; i++) {
		if ((res = test_url(r, argv[1], argv[i], &allowed)) == NULL) {
			ctl_warnx("out of memory");
			status = CTL_EXIT_ERROR;
			continue;
		}
		test_print(ctl, argv[i], res);
		json_decref(res);
		if (allowed == -1)
			status = CTL_EXIT_ERROR;
		else if (allowed == 0 && status == CTL_EXIT_OK)
			status = CTL_EXIT_DISALLOWED;
	}
	robots_unref(r);
	return status;
}
