/*
 * accept.h: the one accept policy of every listener (the line socket, the
 * admin socket, config-error mode's socket, the metrics port). When
 * accept() fails for a reason libevent does not retry, above all EMFILE
 * or ENFILE (no descriptor left), the listening socket stays readable and
 * retrying at once would spin: accepting pauses ACCEPT_PAUSE_MIN seconds,
 * doubling each time in a row up to ACCEPT_PAUSE_MAX, until an accept
 * works again. One log line says so, then none for ACCEPT_LOG_EVERY
 * seconds; the next counts the pauses in between.
 */
#ifndef ROBOTSD_ACCEPT_H
#define ROBOTSD_ACCEPT_H

#include <stddef.h>

#define ACCEPT_PAUSE_MIN 0.1  /* seconds, the first pause in a row */
#define ACCEPT_PAUSE_MAX 2.0  /* seconds, the longest */
#define ACCEPT_LOG_EVERY 60.0 /* seconds between two lines of pauses */

struct event;
struct evconnlistener;

/* A listener's (or a pair's) pauses; zeroed: none yet. */
struct accept_pause {
	double backoff;       /* the last pause, seconds; 0: accept works */
	double logged;        /* clock of the last line; 0: none yet */
	unsigned long pauses; /* pauses since that line (this one included) */
	int paused; /* set by a pause; metrics.c reads and clears it */
};

/*
 * Pure: accept() failed at now (seconds, any monotonic clock). Returns
 * the pause in seconds; *log is 1 when a line is due (the caller then
 * calls accept_pause_logged).
 */
double accept_pause_next(struct accept_pause *, double now, int *log);
/* A line was written at now: the count starts again. */
void accept_pause_logged(struct accept_pause *, double now);
/* An accept worked: the next failure pauses ACCEPT_PAUSE_MIN again. */
void accept_pause_ok(struct accept_pause *);

/*
 * accept() on lev failed with err: disable lev (and other, if not NULL),
 * start resume for the pause, log event (with open connections) when due.
 * resume's callback re-enables the listeners (and clears ap->paused if
 * its owner reads it).
 */
void accept_pause_start(struct accept_pause *, struct evconnlistener *lev,
    struct evconnlistener *other, struct event *resume, const char *event,
    int err, size_t open);

#endif /* ROBOTSD_ACCEPT_H */
