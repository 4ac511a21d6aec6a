/*
 * session.h: one client as the dispatcher sees it: where its answers go
 * and the checks it has waiting on fetches (and history ops on the tier).
 * Shared by dispatch_session.c, which owns sessions, and checkop.c, which parks
 * and answers checks on them.
 */
#ifndef ROBOTSD_SESSION_H
#define ROBOTSD_SESSION_H

#include <sys/queue.h>

#include <stddef.h>

struct reply;
struct dispatch;
struct check_waiting;
struct feed_watcher;

TAILQ_HEAD(check_list, check_waiting);
struct history_wait;
TAILQ_HEAD(history_list, history_wait);

struct session {
	TAILQ_ENTRY(session) link; /* in the dispatcher's list */
	struct dispatch *d;
	struct reply *out;
	struct check_list waiting; /* owned by checkop.c */
	size_t nwaiting;           /* URLs of those still waiting */
	/* history ops reading the shared tier (dispatch_ops.c) */
	struct history_list histories;
	struct feed_watcher *watch; /* after a watch op: its subscription */
	int admin;                  /* may run admin ops (purge) */
};

#endif /* ROBOTSD_SESSION_H */
