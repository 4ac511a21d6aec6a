/*
 * looplag.c: the event loop's lateness, measured by a timer that knows
 * when it should have fired (see looplag.h). The clock is the monotonic
 * one read at the moment of the callback, not libevent's cached time,
 * which is the start of the turn.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "base/histo.h"
#include "base/log.h"
#include "base/looplag.h"
#include "base/xmalloc.h"

#define LOOPLAG_TICK_US 10000
#define LOOPLAG_WINDOW 1000

struct looplag {
	struct event *timer;
	uint64_t due_us;                 /* when the timer should fire */
	uint64_t cpu_us;                 /* the thread's CPU time when armed */
	uint32_t window[LOOPLAG_WINDOW]; /* lateness of the last samples, us */
	uint32_t work[LOOPLAG_WINDOW];   /* of it, the loop working, us */
	uint64_t samples;
	uint64_t late;
	struct histo histo; /* every sample since start, in seconds */
};

/* Microseconds on the monotonic clock. */
uint64_t
looplag_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* CPU time of the calling thread (the loop's), microseconds. */
static uint64_t
looplag_cpu_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == -1)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Arm the timer for one tick from now. */
static void
looplag_arm(struct looplag *l)
{
	struct timeval tv = { 0, LOOPLAG_TICK_US };

	l->due_us = looplag_now_us() + LOOPLAG_TICK_US;
	l->cpu_us = looplag_cpu_us();
	evtimer_add(l->timer, &tv);
}

/* The timer fired: record how late, arm it again. */
static void
looplag_cb(evutil_socket_t fd, short what, void *arg)
{
	struct looplag *l = arg;
	uint64_t now = looplag_now_us();
	uint64_t lag = now > l->due_us ? now - l->due_us : 0;
	uint64_t cpu_now = looplag_cpu_us();
	uint64_t cpu = cpu_now > l->cpu_us ? cpu_now - l->cpu_us : 0;
	uint64_t work = cpu > LOOPLAG_TICK_US ? cpu - LOOPLAG_TICK_US : 0;

	(void)fd;
	(void)what;
	histo_observe(&l->histo, (double)lag / 1e6);
	if (lag > UINT32_MAX)
		lag = UINT32_MAX;
	if (work > lag)
		work = lag;
	l->window[l->samples % LOOPLAG_WINDOW] = (uint32_t)lag;
	l->work[l->samples % LOOPLAG_WINDOW] = (uint32_t)work;
	l->samples++;
	if (lag > LOOPLAG_TICK_US)
		l->late++;
	looplag_arm(l);
}

/* Start measuring on base. */
struct looplag *
looplag_new(struct event_base *base)
{
	struct looplag *l = xcalloc(1, sizeof(*l));

	if ((l->timer = evtimer_new(base, looplag_cb, l)) == NULL)
		fatalx("libevent could not set up the loop lag timer");
	looplag_arm(l);
	return l;
}

void
looplag_free(struct looplag *l)
{
	if (l == NULL)
		return;
	event_free(l->timer);
	free(l);
}

/* qsort: ascending uint32_t. */
static int
looplag_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The p99 and maximum of the window, and the totals. */
struct looplag_stats
looplag_stats(const struct looplag *l)
{
	struct looplag_stats s = { .late = l->late, .samples = l->samples };
	uint32_t sorted[LOOPLAG_WINDOW];
	size_t n =
	    l->samples < LOOPLAG_WINDOW ? (size_t)l->samples : LOOPLAG_WINDOW;

	if (n == 0)
		return s;
	memcpy(sorted, l->work, n * sizeof(sorted[0]));
	qsort(sorted, n, sizeof(sorted[0]), looplag_cmp);
	s.work_p99_us = sorted[(n * 99 - 1) / 100];
	s.work_max_us = sorted[n - 1];
	memcpy(sorted, l->window, n * sizeof(sorted[0]));
	qsort(sorted, n, sizeof(sorted[0]), looplag_cmp);
	s.p99_us = sorted[(n * 99 - 1) / 100];
	s.max_us = sorted[n - 1];
	return s;
}

/* Every sample since start, as a histogram (histo.h). */
const struct histo *
looplag_histo(const struct looplag *l)
{
	return &l->histo;
}
