/*
 * accept.c: the accept policy of every listener; see accept.h.
 */
#include <config.h>

#include <string.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "base/clock.h"
#include "base/log.h"
#include "conn/accept.h"

/* See accept.h. */
double
accept_pause_next(struct accept_pause *ap, double now, int *log)
{
	ap->backoff = ap->backoff == 0 ? ACCEPT_PAUSE_MIN : ap->backoff * 2;
	if (ap->backoff > ACCEPT_PAUSE_MAX)
		ap->backoff = ACCEPT_PAUSE_MAX;
	ap->pauses++;
	ap->paused = 1;
	*log = ap->logged == 0 || now - ap->logged >= ACCEPT_LOG_EVERY;
	return ap->backoff;
}

/* See accept.h. */
void
accept_pause_logged(struct accept_pause *ap, double now)
{
	ap->logged = now;
	ap->pauses = 0;
}

/* See accept.h. */
void
accept_pause_ok(struct accept_pause *ap)
{
	ap->backoff = 0;
}

/* See accept.h. */
void
accept_pause_start(struct accept_pause *ap, struct evconnlistener *lev,
    struct evconnlistener *other, struct event *resume, const char *event,
    int err, size_t open)
{
	double now = clock_monotonic(), pause;
	struct timeval tv;
	int log;

	pause = accept_pause_next(ap, now, &log);
	tv.tv_sec = (time_t)pause;
	tv.tv_usec = (suseconds_t)((pause - (double)tv.tv_sec) * 1e6);
	evconnlistener_disable(lev);
	if (other != NULL)
		evconnlistener_disable(other);
	evtimer_add(resume, &tv);
	if (!log)
		return;
	log_event(LOG_WARNING, event,
	    "error=\"%s\" connections=%zu pause_ms=%.0f pauses=%lu",
	    strerror(err), open, pause * 1000, ap->pauses);
	accept_pause_logged(ap, now);
}
