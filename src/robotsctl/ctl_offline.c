/*
 * ctl_offline.c: "robotsctl test FILE AGENT URL...": evaluates a local
 * robots.txt offline with librobots, the library the daemon uses, and
 * prints one check-shaped verdict per URL, as text or as a JSON line;
 * with --usage the URL's usage preferences, with --token T the verdict
 * for each control token, with --tdmrep FILE the TDMRep answer of a local
 * tdmrep.json (as if fetched with a 200), and with --header / --meta the
 * page's own signals (robots_tag, header preferences, TDMRep overrides,
 * evidence), written as robotsd writes them (usagew.h). The files'
 * warnings, for their author: with --json in every URL's object
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
#include "robots/tdmrep.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/page.h"
#include "wire/proto.h"
#include "wire/tdmrep_json.h"
#include "wire/usagew.h"
#include "wire/version.h"
#include "robotsctl.h"

#define CTL_MAX_FILE (64 << 20)  /* bytes of a robots.txt read */
#define CTL_MAX_PAGE_BYTES 65536 /* the page given: robotsd's line limit */

/* What every URL of a test is judged with. */
struct test_env {
	const char *file; /* the robots.txt's name ("stdin" for -) */
	struct robots *r;
	char robots_ver[VERSION_HEX + 1];
	const char *tdm_file; /* --tdmrep, or NULL */
	struct tdmrep_file tdm;
	char tdm_ver[VERSION_HEX + 1];
	struct wire_page page; /* --header and --meta; present 0: none */
	struct tdm_page tdm_page;
	char page_id[VERSION_HEX + 1];
};

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

/* The bytes of file ("-": stdin; allocated); NULL (reported) on failure. */
static char *
load_file(const char *file, size_t *len)
{
	FILE *f;
	char *body;

	f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	if (f == stdin)
		file = "stdin";
	if (f == NULL || (body = read_file(f, len)) == NULL) {
		ctl_warnx("%s: %s", file, strerror(errno));
		if (f != NULL && f != stdin)
			fclose(f);
		return NULL;
	}
	if (f != stdin)
		fclose(f);
	return body;
}

/* Parse env->file into a ruleset and its version; -1 (reported). */
static int
load_robots(struct test_env *env)
{
	char *body;
	size_t len;

	if ((body = load_file(env->file, &len)) == NULL)
		return -1;
	if (len > ROBOTS_MAX_BODY) {
		ctl_warnx("%s: only the first %d bytes are used (as robotsd "
		          "does)",
		    env->file, ROBOTS_MAX_BODY);
		len = ROBOTS_MAX_BODY;
	}
	version_of_body(body, len, env->robots_ver);
	if ((env->r = robots_parse(body, len)) == NULL)
		ctl_warnx("out of memory");
	free(body);
	return env->r != NULL ? 0 : -1;
}

/*
 * Read --tdmrep's file as robotsd reads a tdmrep.json fetched with a 200
 * (an invalid one is the state "invalid", with a warning); -1 (reported)
 * when it cannot be read.
 */
static int
load_tdmrep(struct test_env *env)
{
	char *body;
	size_t len;
	int rc;

	if ((body = load_file(env->tdm_file, &len)) == NULL)
		return -1;
	version_of_body(body, len, env->tdm_ver);
	if ((rc = tdmrep_file_read(&env->tdm, body, len)) == -1)
		ctl_warnx("out of memory");
	free(body);
	return rc;
}

/* s (n bytes) without leading and trailing SP and HTAB. */
static struct wire_str
page_trimmed(const char *s, size_t n)
{
	while (n > 0 && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return (struct wire_str){ s, n, 0 };
}

/*
 * The page of --header 'NAME: VALUE' (the value trimmed, as a field
 * value) and --meta 'NAME=CONTENT' (as given) into env; -1 (reported)
 * when it is larger than robotsd takes or memory is out.
 */
static int
load_page(const struct ctl *ctl, struct test_env *env)
{
	struct wire_pair *p;
	size_t i, n = (size_t)ctl->npage_headers + (size_t)ctl->npage_meta;
	size_t bytes = 0, k;
	const char *a;

	if (n == 0)
		return 0;
	if ((p = calloc(n, sizeof(p[0]))) == NULL) {
		ctl_warnx("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		a = i < (size_t)ctl->npage_headers
		        ? ctl->page_headers[i]
		        : ctl->page_meta[i - (size_t)ctl->npage_headers];
		k = strcspn(a, i < (size_t)ctl->npage_headers ? ":" : "=");
		p[i].name = (struct wire_str){ a, k, 0 };
		p[i].value =
		    i < (size_t)ctl->npage_headers
		        ? page_trimmed(a + k + 1, strlen(a + k + 1))
		        : (struct wire_str){ a + k + 1, strlen(a + k + 1), 0 };
		bytes += strlen(a);
	}
	env->page = (struct wire_page){ 1, p, (size_t)ctl->npage_headers,
		p + ctl->npage_headers, (size_t)ctl->npage_meta };
	if (bytes > CTL_MAX_PAGE_BYTES) {
		ctl_warnx("--header and --meta: %zu bytes, over the %d robotsd "
		          "reads of a page",
		    bytes, CTL_MAX_PAGE_BYTES);
		return -1;
	}
	page_tdm(&env->page, &env->tdm_page);
	if (page_evidence(&env->page, env->page_id) == -1) {
		ctl_warnx("out of memory");
		return -1;
	}
	return 0;
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

/* "warnings":[...] of the files, and the close of the result. */
static void
test_end(struct jw *w, const struct test_env *env)
{
	jw_key(w, "warnings");
	jw_warnings_tdm(w, env->r, env->tdm_file != NULL ? &env->tdm : NULL);
	jw_end(w);
}

/* The TDMRep answer for u: tdmrep.json's, then the page's overrides. */
static void
test_tdm(const struct test_env *env, const struct url *u, struct tdm_answer *a)
{
	enum tdm_state st =
	    env->tdm.rules != NULL ? TDM_STATE_RULES : TDM_STATE_INVALID;

	robots_tdm_decide(env->tdm.rules, st, u->path, u->path_len,
	    env->page.present ? &env->tdm_page : NULL, a);
}

/*
 * "usage" and "usage_from" of an allowed URL: robots.txt's statements,
 * with the page's preference headers combined, and the purpose tdm when
 * tdm is not NULL. Returns -1 out of memory.
 */
static int
test_usage(struct jw *w, const struct test_env *env, const char *agent,
    const struct url *u, const struct tdm_answer *tdm)
{
	struct robots_usage us;
	struct page_prefs pp;

	robots_usage(env->r, agent, strlen(agent), u->path, u->path_len, &us);
	if (!env->page.present) {
		jw_usage_tdm(w, &us, NULL, tdm);
		return 0;
	}
	if (page_prefs(&env->page, &pp) == -1)
		return -1;
	page_prefs_combine(&pp, &us);
	jw_usage_tdm(w, &us, &pp, tdm);
	page_prefs_clear(&pp);
	return 0;
}

/*
 * "robots_tag" and "evidence" of a test with a page, as robotsd writes
 * them: a disallowed URL ignores the page, tdmrep.json included, so its
 * evidence names no tdmrep version (the file was not used). -1 out of
 * memory.
 */
static int
test_page(
    struct jw *w, const struct test_env *env, const char *agent, int allowed)
{
	struct page_tags t;

	if (!allowed)
		jw_robots_tag(w, NULL);
	else if (page_tags(&env->page, agent, strlen(agent), &t) == -1)
		return -1;
	else {
		jw_robots_tag(w, &t);
		page_tags_clear(&t);
	}
	jw_evidence_tdm(w, env->robots_ver,
	    env->tdm_file != NULL && allowed ? env->tdm_ver : NULL,
	    env->page_id);
	return 0;
}

/*
 * The members of what the test asks beyond the verdict of an allowed (or
 * not) URL u: usage, tokens, tdm, robots_tag, evidence. Returns -1 out of
 * memory.
 */
static int
test_more(struct jw *w, const struct ctl *ctl, const struct test_env *env,
    const char *agent, const struct url *u, int allowed)
{
	struct tdm_answer tdm;
	const struct tdm_answer *a = NULL;

	if (env->tdm_file != NULL && allowed) {
		test_tdm(env, u, &tdm);
		a = &tdm;
	}
	if (ctl->usage && !allowed)
		jw_usage(w, NULL);
	else if (ctl->usage && test_usage(w, env, agent, u, a) == -1)
		return -1;
	if (ctl->ntokens > 0)
		test_tokens(w, ctl, env->r, u);
	if (env->tdm_file != NULL)
		jw_tdm(w, a, env->tdm_ver);
	if (env->page.present && test_page(w, env, agent, allowed) == -1)
		return -1;
	return 0;
}

/*
 * The members of a verdict for u, "ok":true first; whether u is allowed,
 * or -1 out of memory.
 */
static int
test_verdict(struct jw *w, const struct ctl *ctl, const struct test_env *env,
    const char *agent, const struct url *u)
{
	const char *reason;
	struct robots_verdict v;

	robots_check(env->r, agent, strlen(agent), u->path, u->path_len, &v);
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
	if (test_more(w, ctl, env, agent, u, v.allowed != 0) == -1)
		return -1;
	return v.allowed != 0;
}

/*
 * A check-shaped result line for one URL, as JSON text (the daemon's own
 * writer); *allowed is -1 on a bad URL. Returns -1 out of memory.
 */
static int
test_url(struct buf *b, const struct ctl *ctl, const struct test_env *env,
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
		test_end(&w, env);
		return 0;
	}
	*allowed = test_verdict(&w, ctl, env, agent, &u);
	robots_url_clear(&u);
	if (*allowed == -1)
		return -1;
	test_end(&w, env);
	return 0;
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
		ctl_print_signals(res);
	}
	json_decref(res);
	return 0;
}

/*
 * The files' warnings on stderr: "FILE:LINE: CODE: MESSAGE" ("FILE: CODE:
 * MESSAGE" for a whole tdmrep.json).
 */
static void
test_warnings(const struct test_env *env)
{
	struct robots_warning w;
	const char *code;
	char text[256];
	uint32_t line;
	size_t i;

	for (i = 0; i < robots_warning_count(env->r); i++) {
		robots_warning(env->r, i, &w);
		fprintf(stderr, "%s:%u: %s: %s\n", env->file, w.line, w.code,
		    w.message);
	}
	if (env->tdm_file == NULL)
		return;
	i = 0;
	while (tdmrep_file_warning(
	           &env->tdm, i++, &code, &line, text, sizeof(text)) == 0) {
		if (line > 0)
			fprintf(stderr, "%s:%u: %s: %s\n", env->tdm_file, line,
			    code, text);
		else
			fprintf(
			    stderr, "%s: %s: %s\n", env->tdm_file, code, text);
	}
}

/* Load what the URLs are judged with into env; -1 (reported) on failure. */
static int
test_load(const struct ctl *ctl, const char *file, struct test_env *env)
{
	memset(env, 0, sizeof(*env));
	env->file = file;
	env->tdm_file = ctl->tdmrep;
	robots_tdm_page_init(&env->tdm_page);
	if (env->tdm_file != NULL && strcmp(env->tdm_file, "-") == 0 &&
	    strcmp(file, "-") == 0) {
		ctl_warnx("FILE and --tdmrep cannot both be - (stdin)");
		return -1;
	}
	if (load_robots(env) == -1 ||
	    (env->tdm_file != NULL && load_tdmrep(env) == -1) ||
	    load_page(ctl, env) == -1)
		return -1;
	if (strcmp(env->file, "-") == 0)
		env->file = "stdin";
	if (env->tdm_file != NULL && strcmp(env->tdm_file, "-") == 0)
		env->tdm_file = "stdin";
	return 0;
}

/* What test_load() made. */
static void
test_unload(struct test_env *env)
{
	robots_unref(env->r);
	tdmrep_file_clear(&env->tdm);
	free(env->page.headers);
}

/* test FILE AGENT URL...: see robotsctl.h. */
int
ctl_cmd_test(const struct ctl *ctl, int argc, char **argv)
{
	struct buf b = BUF_INIT(0);
	struct test_env env;
	int allowed, i, status = CTL_EXIT_OK;

	if (test_load(ctl, argv[0], &env) == -1) {
		test_unload(&env);
		return CTL_EXIT_ERROR;
	}
	if (!ctl->json)
		test_warnings(&env);
	for (i = 2; i < argc; i++) {
		buf_reset(&b);
		if (test_url(&b, ctl, &env, argv[1], argv[i], &allowed) == -1 ||
		    test_print(ctl, argv[i], &b) == -1) {
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
	test_unload(&env);
	return status;
}
