/*
 * signals.h: the signal and timer events of robotsd (TERM, INT, HUP,
 * CHLD, the drain's poll, the periodic save, the watchdog) turned into
 * lifecycle events (lifecycle.h), and the lifecycle's ops filled from the
 * server, dispatcher, saver and config of struct robotsd.
 */
#ifndef ROBOTSD_SIGNALS_H
#define ROBOTSD_SIGNALS_H

#include "lifecycle.h"
#include "daemon.h"

/* The signal and timer events that feed the lifecycle. */
struct signals {
	struct lifecycle_ops ops; /* robotsd's, for its lifecycle */
	struct event *term, *intr, *hup, *drain;
	struct event *save;     /* --state-save-interval */
	struct event *chld;     /* a save's child process ended */
	struct event *watchdog; /* NULL unless WatchdogSec= */
};

void signals_install(struct robotsd *, struct signals *, int (*)(void *));
void signals_free(struct robotsd *, struct signals *);

#endif /* ROBOTSD_SIGNALS_H */
