/*
 * ctl_offline.c: "robotsctl test FILE AGENT URL...": evaluates a local
 * robots.txt offline with librobots, the library the daemon uses, and
 * prints one check-shaped verdict per URL, as text or as a JSON line;
 * with --usage the URL's usage preferences and with --token T the verdict
 * for each control token, written as robotsd writes them (usagew.h). The
 * file's warnings, for its author: with --json in every URL's object
 * ("warnings", as inspect's), else on stderr, one line each, before the
 * verdicts.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/proto.h"
#include "robotsctl.h"
#include "wire/usagew.h"

#define CTL_MAX_FILE (64 << 20) /* bytes of a robots.txt read */

/* Read up to CTL_MAX_FILE bytes of f (allocated); NULL on a read error. */
static char *
read_file(FILE *f, size_t *len)
{
	struct buf b = BUF_INIT(CTL_MAX_FILE);
	char chunk[65536];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add_some(&b, chunk, n) < n)
			break; /* the rest is past the cap */
	if (ferror(f) || b.state == BUF_NOMEM || buf_terminate(&b) == -1) {
		if (b.state == BUF_NOMEM)
			errno = ENOMEM;
		buf_clear(&b);
		return NULL;
	}
	return buf_take(&b, len);
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

/* "tokens":{...}: each token's verdict, a repeated token once. */
static void
test_tokens(struct jw *w, const struct ctl *ctl, const struct robots *r,
    const struct url *u)
{
	struct robots_verdict v;
	int i, k;

	jw_kobj(w, "tokens");
	for (i = 0; i < ctl->ntokens; i++) {
		for (k = 0; k < i; k++)
			if (strcasecmp(ctl->tokens[k], ctl->tokens[i]) == 0)
				break;
		if (k < i)
			continue;
		robots_check(r, ctl->tokens[i], strlen(ctl->tokens[i]), u->path,
		    u->path_len, &v);
		jw_token(w, ctl->tokens[i], strlen(ctl->tokens[i]), &v);
	}
	jw_end(w);
}

/* "warnings":[...] of r, and the close of the result. */
static void
test_end(struct jw *w, const struct robots *r)
{
	jw_kwarnings(w, r);
	jw_end(w);
}

/* The members of a verdict for u, "ok":true first; whether u is allowed. */
static int
test_verdict(struct jw *w, const struct ctl *ctl, const struct robots *r,
    const char *agent, const struct url *u)
{
	const char *reason;
	struct robots_verdict v;
	struct robots_usage us;

	robots_check(r, agent, strlen(agent), u->path, u->path_len, &v);
	if (ctl->usage && v.allowed)
		robots_usage(
		    r, agent, strlen(agent), u->path, u->path_len, &us);
	reason = robots_reason_name(v.reason);
	if (v.allowed)
		jw_kvlit2(w, "ok", "true", "allowed", "true");
	else
		jw_kvlit2(w, "ok", "true", "allowed", "false");
	jw_kplain(w, "reason", reason, strlen(reason)); /* a name of ours */
	jw_krule(w, &v);
	if (v.crawl_delay < 0)
		jw_knull(w, "crawl_delay");
	else
		jw_kreal(w, "crawl_delay", v.crawl_delay);
	if (ctl->usage)
		jw_usage(w, v.allowed ? &us : NULL);
	if (ctl->ntokens > 0)
		test_tokens(w, ctl, r, u);
	return v.allowed != 0;
}

/*
 * A check-shaped result line for one URL, as JSON text (the daemon's own
 * writer); *allowed is -1 on a bad URL.
 */
static void
test_url(struct buf *b, const struct ctl *ctl, const struct robots *r,
    const char *agent, const char *url, int *allowed)
{
	struct jw w;
	struct url u;
	enum url_err e;

	*allowed = -1;
	jw_init(&w, b);
	jw_obj_key(&w, "url");
	jw_vstr(&w, url, strlen(url));
	if ((e = robots_url_parse(url, strlen(url), &u)) != URL_OK) {
		ctl_warnx("%s: %s", url, robots_url_err_message(e));
		jw_kbool(&w, "ok", 0);
		proto_error_member(
		    &w, proto_url_err(e), robots_url_err_message(e));
		test_end(&w, r);
		return;
	}
	*allowed = test_verdict(&w, ctl, r, agent, &u);
	robots_url_clear(&u);
	test_end(&w, r);
}

/* Print one test result as a JSON line or as text; -1 out of memory. */
static int
test_print(const struct ctl *ctl, const char *url, struct buf *b)
{
	json_t *res;

	if (b->state != BUF_OK)
		return -1;
	if (ctl->json) {
		printf("%.*s\n", (int)b->len, b->p);
		return 0;
	}
	if ((res = json_loadb(b->p, b->len, 0, NULL)) == NULL)
		return -1;
	if (json_is_true(json_object_get(res, "ok"))) {
		ctl_print_check(url, res);
		ctl_print_usage(res);
	}
	json_decref(res);
	return 0;
}

/* The file's warnings on stderr: "FILE:LINE: CODE: MESSAGE". */
static void
test_warnings(const char *file, const struct robots *r)
{
	struct robots_warning w;
	size_t i;

	if (strcmp(file, "-") == 0)
		file = "stdin";
	for (i = 0; i < robots_warning_count(r); i++) {
		robots_warning(r, i, &w);
		fprintf(
		    stderr, "%s:%u: %s: %s\n", file, w.line, w.code, w.message);
	}
}

/* test FILE AGENT URL...: see robotsctl.h. */
int
ctl_cmd_test(const struct ctl *ctl, int argc, char **argv)
{
	struct buf b = BUF_INIT(0);
	struct robots *r;
	int allowed, i, status = CTL_EXIT_OK;

	if ((r = load_robots(argv[0])) == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json)
		test_warnings(argv[0], r);
	for (i = 2; i < argc; i++) {
		buf_reset(&b);
		test_url(&b, ctl, r, argv[1], argv[i], &allowed);
		if (test_print(ctl, argv[i], &b) == -1) {
			ctl_warnx("out of memory");
			status = CTL_EXIT_ERROR;
			continue;
		}
		if (allowed == -1)
			status = CTL_EXIT_ERROR;
		else if (allowed == 0 && status == CTL_EXIT_OK)
			status = CTL_EXIT_DISALLOWED;
	}
	buf_clear(&b);
	robots_unref(r);
	return status;
}
