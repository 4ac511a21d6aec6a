/*
 * robotsctl.h: what the parts of robotsctl share: the options, the exit
 * statuses, error reporting, the exchange with the daemon (ctl_conn.c), the
 * text rendering of answers (ctl_print.c) and the offline test (ctl_test.c).
 */
#ifndef ROBOTSD_ROBOTSCTL_H
#define ROBOTSD_ROBOTSCTL_H

#include <jansson.h>

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_DISALLOWED = 1,
	CTL_EXIT_ERROR = 2,
};

struct ctl {
	const char *socket;
	int json;        /* print JSON lines instead of text */
	int timeout;     /* seconds for the whole exchange; 0 = none */
	int purge_all;   /* purge --all */
	double interval; /* watch: seconds between lines */
	long count;      /* watch: lines to print; 0 = until interrupted */
};

/* Print "robotsctl: MESSAGE" on stderr. */
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
/* A scalar as a person reads it (null is "-"), on stdout. */
void ctl_print_scalar(const json_t *);
void ctl_put_text(const char *, size_t); /* control characters escaped */
/* An object as "a.b[0].c: value" lines, "id" and "ok" left out. */
void ctl_print_flat(const json_t *);
/* A check-shaped answer as "allowed URL (DETAIL)". */
void ctl_print_check(const char *url, const json_t *);

/* watch: a line of rates and gauges every interval (ctl_watch.c). */
int ctl_cmd_watch(const struct ctl *, int argc, char **argv);

/* test FILE AGENT URL...: exit 0 all allowed, 1 any disallowed, 2 error. */
int ctl_cmd_test(const struct ctl *, int argc, char **argv);

#endif /* ROBOTSD_ROBOTSCTL_H */
