/*
 * robotsctl.h: what the parts of robotsctl share: the options, the exit
 * statuses, the exchange with the daemon (ctl_conn.c), error reporting and
 * the text rendering of answers (ctl_print.c), the offline test
 * (ctl_offline.c), the live view (ctl_top.c), the change feed (ctl_feed.c),
 * the archive reader (ctl_archive.c) and its line diff (ctl_diff.c).
 */
#ifndef ROBOTSD_ROBOTSCTL_H
#define ROBOTSD_ROBOTSCTL_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_DISALLOWED = 1,
	CTL_EXIT_ERROR = 2,
};

#define CTL_MAX_AGENTS 16 /* watch --agent, at most (the daemon's limit) */
/* --token may be given this many times (the daemon's limit). */
#define CTL_MAX_TOKENS 16
#define CTL_MAX_WARC 64 /* recheck --warc, at most (operands: any) */
/* test --header and --meta, at most, each. */
#define CTL_MAX_PAGE 256

struct ctl {
	const char *socket;
	const char *admin_socket; /* purge's, or NULL (robotsctl.c) */
	int json;                 /* print JSON lines instead of text */
	int timeout;              /* seconds for the whole exchange; 0 = none */
	int purge_all;            /* purge --all */
	double interval;          /* top: seconds between lines */
	long count; /* top: lines to print; 0 = until interrupted */
	const char *agents[CTL_MAX_AGENTS]; /* watch --agent */
	int nagents;
	int usage; /* --usage: answer the usage preferences too */
	const char *tokens[CTL_MAX_TOKENS]; /* --token T, in order */
	int ntokens;
	const char *archive_dir; /* show, diff: robotsd's --archive-dir */
	const char *config; /* --config: robotsd's file, or NULL: default */
	const char *warc[CTL_MAX_WARC]; /* recheck --warc FILE, in order */
	int nwarc;
	const char *as_of;  /* recheck --as-of TIME|now, or NULL */
	int changed;        /* recheck --changed */
	int ping;           /* ping: an error config is config-error mode */
	const char *tdmrep; /* test --tdmrep FILE, or NULL */
	int tdm;            /* check --tdm: answer TDMRep too */
	const char *page_headers[CTL_MAX_PAGE]; /* test --header 'N: V' */
	int npage_headers;
	const char *page_meta[CTL_MAX_PAGE]; /* test --meta 'N=C' */
	int npage_meta;
};

/* Print "robotsctl: MESSAGE" on stderr, control characters escaped. */
void ctl_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));

/*
 * Send req to the daemon (an "id" is added; the reference is taken) and
 * return its answer (the caller's), printing the raw line with --json.
 * An ok:false answer is reported ("CODE: MESSAGE") and gives NULL, as does
 * any failure (reported). A NULL req is reported as bad arguments.
 */
json_t *ctl_call(const struct ctl *, json_t *req);

/* The value of a JSON string, or def when v is not one. */
const char *ctl_str_or(const json_t *v, const char *def);
/* req with "resource":"tdmrep" when --tdm was given (NULL stays NULL). */
json_t *ctl_resource(const struct ctl *, json_t *req);
/* A scalar as a person reads it (null is "-"), on stdout. */
void ctl_print_scalar(const json_t *);
void ctl_put_text(const char *, size_t); /* control characters escaped */
/* A JSON line from the daemon, the same JSON without terminal controls. */
void ctl_put_json(const char *line);
/* An object as "a.b[0].c: value" lines, "id" and "ok" left out. */
void ctl_print_flat(const json_t *);
/* An inspect answer: flat, then its extra lines and warnings readably. */
void ctl_print_inspect(json_t *);
/* A check-shaped answer as "allowed URL (DETAIL)". */
void ctl_print_check(const char *url, const json_t *);
/*
 * The usage and tokens members of a check-shaped answer, if present, as
 * indented lines ("  usage: train-ai=disallowed ...", "    line 4:
 * content-usage / train-ai=n", "  token google-extended: disallowed ...").
 */
void ctl_print_usage(const json_t *);
/*
 * The page's and TDMRep's members of a check-shaped answer, if present,
 * as indented lines ("  tdm: reservation=1 policy=P location=/a/ from=
 * header (rules, version V)", "  robots_tag: noindex max-snippet=0",
 * "    header x-robots-tag: noindex", "  evidence: robots=V tdmrep=V
 * page=H").
 */
void ctl_print_signals(const json_t *);

/* top: a line of rates and gauges every interval (ctl_top.c). */
int ctl_cmd_top(const struct ctl *, int argc, char **argv);

/*
 * Send req like ctl_call; once it is answered ok, hand each later line to
 * each (raw text and parsed object) until each returns nonzero (that is
 * the result) or the daemon closes the connection (-1, reported). Only the
 * first answer is bounded by the timeout.
 */
typedef int (*ctl_line_fn)(const char *raw, const json_t *, void *arg);
int ctl_stream(const struct ctl *, json_t *req, ctl_line_fn each, void *arg);

/* watch [ORIGIN...]: the change feed, a line per event (ctl_feed.c). */
int ctl_cmd_watch(const struct ctl *, int argc, char **argv);

/* test FILE AGENT URL...: exit 0 all allowed, 1 any disallowed, 2 error. */
int ctl_cmd_test(const struct ctl *, int argc, char **argv);

/*
 * show ORIGIN [VERSION] and diff ORIGIN V1 V2: read robotsd's WARC archive
 * (--archive-dir or $ROBOTSD_ARCHIVE_DIR; ctl_archive.c).
 */
/*
 * recheck [WARC...]: URL [TIME] lines on stdin against the versions in
 * force then (ctl_recheck.c): exit 0 every URL had a version, 1 not, 2
 * error.
 */
int ctl_cmd_recheck(const struct ctl *, int argc, char **argv);

int ctl_cmd_show(const struct ctl *, int argc, char **argv);
int ctl_cmd_diff(const struct ctl *, int argc, char **argv);
/* 1 when v is a version id: 16 lower-case hex digits. */
int ctl_is_version(const char *v);
/* The archive directory for cmd, or NULL (reported). */
const char *ctl_archive_dir(const struct ctl *, const char *cmd);
/* robotsd's config file, where --archive-dir is looked up last. */
#define CTL_DEFAULT_CONFIG SYSCONFDIR "/robotsd.conf"
/* 1 for robotsd's archive file names (robotsd-*.warc.gz). */
struct dirent;
int ctl_archive_is_file(const struct dirent *);
/*
 * A unified diff (diff -u, three lines of context) of the lines of a and b
 * under the labels la and lb, on out: 0 the same (nothing printed), 1 they
 * differ (ctl_diff.c).
 */
int ctl_diff(FILE *out, const char *la, const char *a, size_t alen,
    const char *lb, const char *b, size_t blen);

#endif /* ROBOTSD_ROBOTSCTL_H */
