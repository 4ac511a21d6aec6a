/*
 * ctl_recheck.c: "robotsctl recheck --agent AGENT [--token T]... [--usage]
 * [--archive DIR | --warc FILE...] [--as-of TIME|now] [--changed]": reads
 * "URL [TIME]" lines on stdin and writes one JSON line per URL, the
 * verdict under the version of its origin's robots.txt in force at TIME
 * (the moment the URL was fetched; a line without one means now), or at
 * --as-of. The versions come from the sources (ctl_sources.c), each
 * compiled once, so a URL costs a split, a table look-up, a binary search
 * and a match. --as-of now asks the running daemon instead, a thousand
 * URLs per batch check (fetching as it must), and takes first_seen from
 * its inspect answer. --changed prints only the URLs whose verdict under
 * their own TIME differs from the one at --as-of. A summary goes to
 * stderr. Exit 0 every URL had a version, 1 some had none, 2 an error.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/usagew.h"
#include "ctl_recheck_int.h"

#define RC_BATCH 1000         /* URLs of one check to the daemon (its cap) */
#define RC_FLUSH (256u << 10) /* bytes of output held before a write */

/* A verdict from the sources: the version in force and what it says. */
struct rc_verdict {
	const struct rc_version *v; /* NULL: none in force */
	double first_seen;
	struct robots_verdict rv;
	const char *reason;
};

/* One URL waiting for the daemon's batch answer (--as-of now). */
struct rc_pending {
	char *url;
	double own; /* its own TIME */
};

struct rc_run {
	const struct ctl *ctl;
	const char *agent;
	size_t agent_len;
	struct rc_sources src;
	int have_src;   /* the sources are read (not with --as-of now alone) */
	int as_of_now;  /* --as-of now: the daemon answers */
	int as_of_set;  /* --as-of TIME */
	double as_of;   /* that TIME */
	double now;     /* the time a line without TIME stands for */
	struct buf out; /* lines not yet written */
	struct rc_pending batch[RC_BATCH];
	size_t nbatch;
	json_t *seen; /* --as-of now: origin -> its inspect answer */
	unsigned long urls, allowed, disallowed, none, shown;
	int error;
};

/* The wall clock, Unix seconds. */
static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A time as w's next value: whole seconds as an integer. */
static void
rc_vtime(struct jw *w, double t)
{
	if (t == floor(t) && fabs(t) < 9e15)
		jw_vint(w, (long long)t);
	else
		jw_vreal(w, t);
}

/* The verdict for path (len bytes) of origin o at t from the sources. */
static void
rc_eval(const struct rc_run *run, const struct rc_origin *o, const char *path,
    size_t len, double t, struct rc_verdict *out)
{
	long i = o != NULL ? ctl_timeline_at(o->caps, o->n, t) : -1;
	struct robots_verdict *rv = &out->rv;

	memset(out, 0, sizeof(*out));
	rv->crawl_delay = -1;
	out->reason = "no_version";
	if (i < 0)
		return;
	out->v = &run->src.vers[o->caps[i].ver];
	out->first_seen = o->caps[i].at;
	if (out->v->state == RC_RULES) {
		robots_check(
		    out->v->r, run->agent, run->agent_len, path, len, rv);
		out->reason = robots_reason_name(rv->reason);
		return;
	}
	rv->reason = ROBOTS_REASON_NO_RULE;
	rv->allowed = out->v->state == RC_ALLOW_ALL;
	out->reason = rv->allowed ? "unavailable" : "unreachable";
	if (len == 11 && memcmp(path, "/robots.txt", 11) == 0) {
		rv->reason = ROBOTS_REASON_ROBOTS_TXT; /* as robotsd answers */
		rv->allowed = 1;
		out->reason = robots_reason_name(rv->reason);
	}
}

/* "usage":..,"tokens":.. of a verdict from the sources, when asked. */
static void
rc_more(struct jw *w, struct rc_run *run, const struct rc_verdict *d,
    const char *path, size_t len)
{
	struct robots_usage us;
	struct robots_verdict tv;
	int i;

	if (run->ctl->usage) {
		memset(&us, 0, sizeof(us)); /* every purpose unknown */
		if (d->v != NULL && d->v->state == RC_RULES && d->rv.allowed)
			robots_usage(d->v->r, run->agent, run->agent_len, path,
			    len, &us);
		jw_usage(w, d->v != NULL && d->rv.allowed ? &us : NULL);
	}
	if (run->ctl->ntokens == 0)
		return;
	jw_key(w, "tokens");
	if (d->v == NULL) {
		jw_vnull(w);
		return;
	}
	jw_obj(w);
	for (i = 0; i < run->ctl->ntokens; i++) {
		const char *t = run->ctl->tokens[i];

		memset(&tv, 0, sizeof(tv));
		tv.allowed = d->v->state != RC_DISALLOW_ALL;
		tv.reason = ROBOTS_REASON_NO_RULE;
		if (d->v->state == RC_RULES)
			robots_check(d->v->r, t, strlen(t), path, len, &tv);
		jw_token(w, t, strlen(t), &tv);
	}
	jw_end(w);
}

/* The JSON line of a verdict from the sources for url at at. */
static void
rc_line(struct rc_run *run, const char *url, size_t ulen,
    const struct rc_verdict *d, double at, const struct url_view *uv)
{
	struct jw w;

	jw_init(&w, &run->out);
	jw_obj(&w);
	jw_kstr(&w, "url", url, ulen);
	if (d->v == NULL) {
		jw_knull(&w, "allowed");
		jw_knull(&w, "version");
		jw_knull(&w, "first_seen");
		jw_knull(&w, "rule");
	} else {
		jw_kbool(&w, "allowed", d->rv.allowed);
		jw_kstr(&w, "version", d->v->id, strlen(d->v->id));
		jw_key(&w, "first_seen");
		rc_vtime(&w, d->first_seen);
		jw_key(&w, "rule");
		jw_rule(&w, &d->rv);
	}
	jw_kstr(&w, "reason", d->reason, strlen(d->reason));
	jw_key(&w, "at");
	rc_vtime(&w, at);
	rc_more(&w, run, d, uv->path, uv->path_len);
	jw_end(&w);
	buf_lit(&run->out, "\n");
}

/* Count the verdict of a URL (v: it had a version; allowed). */
static void
rc_count(struct rc_run *run, int v, int allowed)
{
	run->urls++;
	if (!v)
		run->none++;
	else if (allowed)
		run->allowed++;
	else
		run->disallowed++;
}

/* Write what is held (all of it when force); a failed write is an error. */
static void
rc_flush(struct rc_run *run, int force)
{
	if (run->out.state != BUF_OK) {
		ctl_warnx("out of memory");
		run->error = 1;
		buf_reset(&run->out);
		return;
	}
	if (run->out.len == 0 || (!force && run->out.len < RC_FLUSH))
		return;
	if (fwrite(run->out.p, 1, run->out.len, stdout) != run->out.len)
		run->error = 1;
	buf_reset(&run->out);
}

/* 1 when two verdicts differ: one has a version the other lacks, or not
 * the same allowed. */
static int
rc_differ(int va, int aa, int vb, int ab)
{
	return va != vb || (va && aa != ab);
}

/* One URL against the sources: its line, unless --changed hides it. */
static void
rc_url_sources(struct rc_run *run, const char *url, size_t ulen, double own,
    const struct url_view *uv)
{
	const struct rc_origin *o =
	    rc_sources_origin(&run->src, uv->origin, uv->origin_len);
	double at = run->as_of_set ? run->as_of : own;
	struct rc_verdict d, then;

	rc_eval(run, o, uv->path, uv->path_len, at, &d);
	rc_count(run, d.v != NULL, d.rv.allowed);
	if (run->ctl->changed) {
		rc_eval(run, o, uv->path, uv->path_len, own, &then);
		if (!rc_differ(d.v != NULL, d.rv.allowed, then.v != NULL,
		        then.rv.allowed))
			return;
	}
	run->shown++;
	rc_line(run, url, ulen, &d, at, uv);
	rc_flush(run, 0);
}

/* The inspect answer of origin (asked once), or NULL. */
static const json_t *
rc_inspect(struct rc_run *run, const char *origin)
{
	struct ctl quiet = *run->ctl;
	json_t *ans;

	if ((ans = json_object_get(run->seen, origin)) != NULL)
		return ans;
	quiet.json = 0;
	ans = ctl_call(
	    &quiet, json_pack("{s:s, s:s}", "op", "inspect", "origin", origin));
	if (ans == NULL)
		ans = json_null(); /* reported; not asked again */
	json_object_set_new(run->seen, origin, ans);
	return ans;
}

/* first_seen of the daemon's answer row: inspect's fetched_at, if the
 * version it names is the row's. */
static void
rc_first_seen(struct jw *w, struct rc_run *run, const json_t *row)
{
	const char *o = ctl_str_or(json_object_get(row, "origin"), NULL);
	const char *v = ctl_str_or(json_object_get(row, "version"), NULL);
	const json_t *in = o != NULL ? rc_inspect(run, o) : NULL;
	const json_t *at = json_object_get(in, "fetched_at");

	if (v != NULL && json_is_number(at) &&
	    strcmp(ctl_str_or(json_object_get(in, "version"), ""), v) == 0)
		rc_vtime(w, json_number_value(at));
	else
		jw_vnull(w);
}

/* The line of the daemon's answer row for url (--as-of now). */
static void
rc_line_daemon(struct rc_run *run, const json_t *row, double at)
{
	static const char *const more[] = { "usage", "usage_from", "tokens" };
	struct jw w;
	size_t i;

	jw_init(&w, &run->out);
	jw_obj(&w);
	jw_kjson(&w, "url", json_object_get(row, "url"));
	jw_kjson(&w, "allowed", json_object_get(row, "allowed"));
	jw_kjson(&w, "version", json_object_get(row, "version"));
	jw_key(&w, "first_seen");
	rc_first_seen(&w, run, row);
	jw_kjson(&w, "rule", json_object_get(row, "rule"));
	jw_kjson(&w, "reason", json_object_get(row, "reason"));
	jw_key(&w, "at");
	rc_vtime(&w, at);
	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (json_object_get(row, more[i]) != NULL) {
			jw_key_str(&w, more[i], strlen(more[i]));
			jw_vjson(&w, json_object_get(row, more[i]));
		}
	jw_end(&w);
	buf_lit(&run->out, "\n");
}

/* One row of the daemon's batch answer, for the URL p. */
static void
rc_row(struct rc_run *run, const json_t *row, const struct rc_pending *p)
{
	const json_t *err = json_object_get(row, "error");
	int allowed = json_is_true(json_object_get(row, "allowed"));
	struct rc_verdict then;
	struct robots_url ru;

	if (!json_is_true(json_object_get(row, "ok")) ||
	    !json_is_boolean(json_object_get(row, "allowed"))) {
		ctl_warnx("recheck: %s: %s", p->url,
		    ctl_str_or(json_object_get(err, "message"), "no verdict"));
		run->error = 1;
		return;
	}
	rc_count(run, 1, allowed);
	if (run->ctl->changed &&
	    robots_url_split(p->url, strlen(p->url), &ru) == URL_OK) {
		rc_eval(run,
		    rc_sources_origin(&run->src, ru.v.origin, ru.v.origin_len),
		    ru.v.path, ru.v.path_len, p->own, &then);
		robots_url_split_clear(&ru);
		if (!rc_differ(1, allowed, then.v != NULL, then.rv.allowed))
			return;
	}
	run->shown++;
	rc_line_daemon(run, row, run->now);
	rc_flush(run, 0);
}

/* The batch check request of the URLs waiting; NULL out of memory. */
static json_t *
rc_batch_request(const struct rc_run *run)
{
	json_t *req = json_pack(
	    "{s:s, s:s, s:[]}", "op", "check", "agent", run->agent, "urls");
	json_t *urls = json_object_get(req, "urls"), *tokens;
	size_t i;
	int k;

	for (i = 0; urls != NULL && i < run->nbatch; i++)
		json_array_append_new(urls, json_string(run->batch[i].url));
	if (req != NULL && run->ctl->usage)
		json_object_set_new(req, "usage", json_true());
	if (req != NULL && run->ctl->ntokens > 0) {
		tokens = json_array();
		for (k = 0; k < run->ctl->ntokens; k++)
			json_array_append_new(
			    tokens, json_string(run->ctl->tokens[k]));
		json_object_set_new(req, "tokens", tokens);
	}
	return req;
}

/* Ask the daemon about the URLs waiting (--as-of now). */
static void
rc_batch_flush(struct rc_run *run)
{
	struct ctl quiet = *run->ctl;
	const json_t *results;
	json_t *ans;
	size_t i;

	if (run->nbatch == 0)
		return;
	quiet.json = 0;
	ans = ctl_call(&quiet, rc_batch_request(run));
	results = json_object_get(ans, "results");
	if (ans == NULL || json_array_size(results) != run->nbatch)
		run->error = 1; /* reported by ctl_call, or a short answer */
	for (i = 0; i < run->nbatch; i++) {
		if (i < json_array_size(results))
			rc_row(run, json_array_get(results, i), &run->batch[i]);
		free(run->batch[i].url);
	}
	json_decref(ans);
	run->nbatch = 0;
}

/*
 * Split an input line into URL and TIME (*own: now without one); 0, or
 * -1 when it is not "URL [TIME]" (reported).
 */
static int
rc_split(const struct rc_run *run, char *line, unsigned long n, size_t *ulen,
    double *own)
{
	size_t tlen, tpos;

	*ulen = strcspn(line, " \t");
	tpos = *ulen + strspn(line + *ulen, " \t");
	tlen = strcspn(line + tpos, " \t");
	*own = run->now;
	if (line[tpos + tlen + strspn(line + tpos + tlen, " \t")] != '\0') {
		ctl_warnx("recheck: line %lu: not URL [TIME]", n);
		return -1;
	}
	if (tlen > 0 && ctl_parse_time(line + tpos, tlen, own) == -1) {
		ctl_warnx("recheck: line %lu: %.*s: not an RFC 3339 time or "
		          "Unix seconds",
		    n, (int)tlen, line + tpos);
		return -1;
	}
	line[*ulen] = '\0';
	return 0;
}

/* One input line (line break removed), the n-th. */
static void
rc_input(struct rc_run *run, char *line, unsigned long n)
{
	struct robots_url ru;
	enum url_err e;
	size_t ulen;
	double own;

	line += strspn(line, " \t");
	if (*line == '\0')
		return;
	if (rc_split(run, line, n, &ulen, &own) == -1) {
		run->error = 1;
		return;
	}
	if (run->as_of_now) {
		struct rc_pending *p = &run->batch[run->nbatch];

		if ((p->url = strdup(line)) == NULL) {
			ctl_warnx("out of memory");
			run->error = 1;
			return;
		}
		p->own = own;
		if (++run->nbatch == RC_BATCH)
			rc_batch_flush(run);
		return;
	}
	if ((e = robots_url_split(line, ulen, &ru)) != URL_OK) {
		ctl_warnx("recheck: line %lu: %s: %s", n, line,
		    robots_url_err_message(e));
		run->error = 1;
		return;
	}
	rc_url_sources(run, line, ulen, own, &ru.v);
	robots_url_split_clear(&ru);
}

/* The options of recheck into run; 0, or -1 (reported). */
static int
rc_setup(struct rc_run *run, const struct ctl *ctl, int nfiles)
{
	run->ctl = ctl;
	run->now = wall_now();
	run->out = BUF_INIT(0);
	if (ctl->nagents != 1) {
		ctl_warnx("recheck: give one --agent AGENT");
		return -1;
	}
	run->agent = ctl->agents[0];
	run->agent_len = strlen(run->agent);
	if (nfiles > 0 && ctl->nwarc == 0) {
		ctl_warnx("recheck: WARC files come after --warc");
		return -1;
	}
	if (ctl->as_of != NULL && strcmp(ctl->as_of, "now") == 0)
		run->as_of_now = 1;
	else if (ctl->as_of != NULL &&
	         ctl_parse_time(ctl->as_of, strlen(ctl->as_of), &run->as_of) ==
	             -1) {
		ctl_warnx("recheck: --as-of %s: not now, an RFC 3339 time or "
		          "Unix seconds",
		    ctl->as_of);
		return -1;
	}
	run->as_of_set = ctl->as_of != NULL && !run->as_of_now;
	if (ctl->changed && ctl->as_of == NULL) {
		ctl_warnx("recheck: --changed compares with --as-of: give it");
		return -1;
	}
	run->have_src = !run->as_of_now || ctl->changed;
	if (run->as_of_now && (run->seen = json_object()) == NULL) {
		ctl_warnx("out of memory");
		return -1;
	}
	return 0;
}

/* The summary line on stderr. */
static void
rc_summary(const struct rc_run *run)
{
	const struct rc_sources *s = &run->src;
	char others[64] = "";

	if (s->others > 0)
		snprintf(others, sizeof(others),
		    "; %lu records of another resource passed over", s->others);
	if (run->have_src)
		ctl_warnx("recheck: %lu URLs: %lu allowed, %lu disallowed, %lu "
		          "without a version; %lu printed; %zu versions of %zu "
		          "origins from %lu records in %lu files (%lu "
		          "redirects, %lu unresolved%s)",
		    run->urls, run->allowed, run->disallowed, run->none,
		    run->shown, s->nvers, s->norigins, s->records, s->files,
		    s->redirects, s->unresolved, others);
	else
		ctl_warnx("recheck: %lu URLs: %lu allowed, %lu disallowed, %lu "
		          "without a version; %lu printed (robotsd now)",
		    run->urls, run->allowed, run->disallowed, run->none,
		    run->shown);
}

/* Read stdin's lines into run. */
static void
rc_read(struct rc_run *run)
{
	unsigned long n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) != -1) {
		while (
		    len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		rc_input(run, line, ++n);
	}
	if (ferror(stdin)) {
		ctl_warnx("recheck: stdin: read error");
		run->error = 1;
	}
	free(line);
	rc_batch_flush(run);
}

/* See robotsctl.h. */
int
ctl_cmd_recheck(const struct ctl *ctl, int argc, char **argv)
{
	struct rc_run *run = calloc(1, sizeof(*run));
	int status = CTL_EXIT_ERROR;

	if (run == NULL) {
		ctl_warnx("out of memory");
		return CTL_EXIT_ERROR;
	}
	if (rc_setup(run, ctl, argc) == 0 &&
	    (!run->have_src ||
	        rc_sources_load(&run->src, ctl, argv, argc) == 0)) {
		rc_read(run);
		rc_flush(run, 1);
		if (fflush(stdout) != 0) {
			ctl_warnx("recheck: stdout: write error");
			run->error = 1;
		}
		rc_summary(run);
		status = run->error      ? CTL_EXIT_ERROR
		         : run->none > 0 ? CTL_EXIT_DISALLOWED
		                         : CTL_EXIT_OK;
	}
	rc_sources_free(&run->src);
	buf_clear(&run->out);
	json_decref(run->seen);
	free(run);
	return status;
}
