/*
 * lifecycle.c: the stop, drain, reload and save decisions (lifecycle.h).
 * Pure: it calls nothing but its ops.
 */
#include <config.h>

#include <stdlib.h>

#include "lifecycle.h"

struct lifecycle {
	const struct lifecycle_ops *ops;
	void *arg;
	int stopping;          /* TERM/INT seen: draining */
	int expired;           /* waiting checks were answered "timeout" */
	double drain_deadline; /* clock seconds */
};

/* A lifecycle that acts through ops, or NULL without memory. */
struct lifecycle *
lifecycle_new(const struct lifecycle_ops *ops, void *arg)
{
	struct lifecycle *lc;

	if ((lc = calloc(1, sizeof(*lc))) == NULL)
		return NULL;
	lc->ops = ops;
	lc->arg = arg;
	return lc;
}

/* Free a lifecycle (NULL is fine). */
void
lifecycle_free(struct lifecycle *lc)
{
	free(lc);
}

/* Whether a TERM/INT was seen. */
int
lifecycle_stopping(const struct lifecycle *lc)
{
	return lc->stopping;
}

/* TERM/INT: stop accepting and drain; a second one breaks the loop now. */
static void
lifecycle_term(struct lifecycle *lc, int signo)
{
	const struct lifecycle_ops *o = lc->ops;
	struct lifecycle_settings s;

	if (lc->stopping) {
		o->break_loop(lc->arg);
		return;
	}
	o->settings(lc->arg, &s);
	o->announce_stop(lc->arg, signo);
	lc->stopping = 1;
	o->stop_accepting(lc->arg);
	lc->drain_deadline = o->now(lc->arg) + (double)s.stop_timeout;
	o->drain_arm(lc->arg);
}

/*
 * Drain: exit once every client is answered. At the deadline, checks still
 * waiting are answered "timeout" and get one more second to be written.
 */
static void
lifecycle_drain(struct lifecycle *lc)
{
	const struct lifecycle_ops *o = lc->ops;

	if (!o->busy(lc->arg))
		o->exit_loop(lc->arg);
	else if (o->now(lc->arg) >= lc->drain_deadline) {
		if (lc->expired)
			o->exit_loop(lc->arg);
		o->expire_waiting(lc->arg);
		lc->expired = 1;
		lc->drain_deadline = o->now(lc->arg) + 1;
	}
}

/* (Re)arm the periodic save after start or a reload. */
void
lifecycle_schedule_save(struct lifecycle *lc)
{
	struct lifecycle_settings s;

	lc->ops->settings(lc->arg, &s);
	lc->ops->save_arm(lc->arg, s.saves ? s.save_interval : 0);
}

/* A periodic save: in a child process, so a crash loses at most that. */
static void
lifecycle_save(struct lifecycle *lc)
{
	struct lifecycle_settings s;

	lc->ops->settings(lc->arg, &s);
	if (s.saves)
		(void)lc->ops->save_start(lc->arg);
}

/*
 * The save at exit: a periodic save still running is replaced by a fresh
 * one, waited for until its deadline.
 */
void
lifecycle_save_at_exit(struct lifecycle *lc)
{
	const struct lifecycle_ops *o = lc->ops;
	struct lifecycle_settings s;

	o->settings(lc->arg, &s);
	if (!s.saves)
		return;
	o->save_cancel(lc->arg, "superseded by the save at exit");
	if (o->save_start(lc->arg) == 0)
		o->save_wait(lc->arg);
}

/* One event, from a signal or a timer; signo names TERM's signal. */
void
lifecycle_event(struct lifecycle *lc, enum lc_event ev, int signo)
{
	switch (ev) {
	case LC_TERM:
		lifecycle_term(lc, signo);
		break;
	case LC_HUP:
		if (lc->ops->reload(lc->arg) == 0)
			lifecycle_schedule_save(lc);
		break;
	case LC_DRAIN_TICK:
		lifecycle_drain(lc);
		break;
	case LC_SAVE_TICK:
		lifecycle_save(lc);
		break;
	case LC_CHLD:
		lc->ops->save_poll(lc->arg);
		break;
	}
}
