/*
 * feed.c: the change feed's watchers and the delivery of its events (see
 * feed.h and docs/protocol.md, "watch"); the lines are feed_event.c's,
 * the fleet's messages feed_msg.c's.
 *
 * A change is rare (an origin's robots.txt changes a few times a year), a
 * watcher list is short, so the feed keeps its watchers in one list and
 * walks it per change; each watcher's origins are sorted for a binary
 * search. Watchers that name the same agents (in the same order) share
 * one agent set: a change makes its line once per set, the first time a
 * watcher of the set is due one, and every watcher of the set is queued
 * that one line by reference.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/random.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fnv.h"
#include "wire/buf.h"
#include "feed/feed.h"
#include "feed/feed_int.h"
#include "base/log.h"
#include "iface/reply.h"
#include "policy/tier_tag.h"
#include "base/xmalloc.h"

/* What a fleet message's tag is made with (feed_msg.c). */
#define FEED_KEY_LABEL "robotsd feed v2"

static const char dropped_line[] =
    "{\"event\":\"dropped\",\"reason\":\"output_budget\"}\n";

/* Agents as a watcher named them, shared by the watchers naming them so. */
struct agent_set {
	LIST_ENTRY(agent_set) link;
	size_t refs; /* watchers */
	char **agents;
	size_t n;
	char *key; /* the agents joined by '\n' */
	uint64_t hash;
	/* The line of the change being delivered (made at serial). */
	uint64_t serial;
	struct feed_line *line;
};

struct feed_watcher {
	TAILQ_ENTRY(feed_watcher) link;
	struct feed *f;
	struct reply *out;
	char **origins; /* sorted */
	size_t norigins;
	int all;
	unsigned resources; /* FEED_* */
	int dropped;        /* got its last line; gets nothing more */
	struct agent_set *set;
};

TAILQ_HEAD(watcher_list, feed_watcher);

struct feed {
	struct watcher_list watchers;
	LIST_HEAD(, agent_set) sets;
	size_t max_output, max_total;
	struct feed_fleet fleet;
	int in_fleet;
	unsigned char key[TIER_KEY_LEN]; /* derived for the feed */
	int keyed;
	char id[FEED_ID_LEN + 1];
	uint64_t seq;    /* messages published */
	uint64_t serial; /* changes delivered */
	struct feed_stats stats;
};

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
random_id(char *out)
{
	unsigned char raw[FEED_ID_LEN / 2];
	size_t i;
	int fd;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1 ||
		    read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw))
			abort(); /* our own echoes could not be told apart */
		close(fd);
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

struct feed *
feed_new(void)
{
	struct feed *f = xcalloc(1, sizeof(*f));

	TAILQ_INIT(&f->watchers);
	LIST_INIT(&f->sets);
	f->max_output = 8 << 20;
	f->max_total = 64 << 20;
	random_id(f->id);
	return f;
}

void
feed_free(struct feed *f)
{
	free(f);
}

void
feed_configure(struct feed *f, size_t max_output, size_t max_total)
{
	f->max_output = max_output;
	f->max_total = max_total;
}

void
feed_set_fleet(struct feed *f, const struct feed_fleet *fl)
{
	f->in_fleet = fl != NULL;
	f->keyed = 0;
	if (fl == NULL)
		return;
	f->fleet = *fl;
	f->fleet.key = NULL;
	if (fl->key != NULL) {
		if (tier_key_derive(fl->key, FEED_KEY_LABEL, f->key) == -1)
			fatalx("cannot derive the change feed's key");
		f->keyed = 1;
	}
}

const struct feed_stats *
feed_stats(const struct feed *f)
{
	return &f->stats;
}

/* A copy of n strings. */
static char **
copy_strs(const char *const *v, size_t n)
{
	char **c = xcalloc(n + 1, sizeof(*c));
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void
free_strs(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

/* The agent set of agents: the one there is, or a new one. */
static struct agent_set *
set_get(struct feed *f, const char *const *agents, size_t n)
{
	struct buf b = BUF_INIT(0);
	struct agent_set *s;
	uint64_t h;
	char *key;
	size_t i;

	for (i = 0; i < n; i++) {
		buf_add(&b, agents[i], strlen(agents[i]));
		buf_lit(&b, "\n");
	}
	if (buf_terminate(&b) == -1)
		fatalx("out of memory adding a watcher");
	key = buf_take(&b, NULL);
	h = fnv1a64_str(FNV1A64_INIT, key);
	LIST_FOREACH(s, &f->sets, link)
		if (s->hash == h && strcmp(s->key, key) == 0) {
			free(key);
			s->refs++;
			return s;
		}
	s = xcalloc(1, sizeof(*s));
	s->refs = 1;
	s->agents = copy_strs(agents, n);
	s->n = n;
	s->key = key;
	s->hash = h;
	LIST_INSERT_HEAD(&f->sets, s, link);
	return s;
}

static void
set_put(struct agent_set *s)
{
	if (--s->refs > 0)
		return;
	LIST_REMOVE(s, link);
	feed_line_unref(s->line); /* gone while a change was delivered */
	free_strs(s->agents, s->n);
	free(s->key);
	free(s);
}

struct feed_watcher *
feed_watch(struct feed *f, struct reply *out, const char *const *origins,
    size_t n, int all, const char *const *agents, size_t nagents,
    unsigned resources)
{
	struct feed_watcher *w = xcalloc(1, sizeof(*w));

	w->f = f;
	w->out = out;
	w->all = all;
	w->resources = resources != 0 ? resources : FEED_ROBOTS;
	w->origins = copy_strs(origins, all ? 0 : n);
	w->norigins = all ? 0 : n;
	qsort(w->origins, w->norigins, sizeof(char *), str_cmp);
	w->set = set_get(f, agents, nagents);
	TAILQ_INSERT_TAIL(&f->watchers, w, link);
	f->stats.watchers++;
	return w;
}

void
feed_unwatch(struct feed_watcher *w)
{
	if (w == NULL)
		return;
	TAILQ_REMOVE(&w->f->watchers, w, link);
	w->f->stats.watchers--;
	free_strs(w->origins, w->norigins);
	set_put(w->set);
	free(w);
}

int
feed_watcher_active(const struct feed_watcher *w)
{
	return w != NULL && !w->dropped;
}

/* Does w watch origin's resource (FEED_*)? */
static int
watches(const struct feed_watcher *w, const char *origin, unsigned resource)
{
	if ((w->resources & (resource != 0 ? resource : FEED_ROBOTS)) == 0)
		return 0;
	return w->all || bsearch(&origin, w->origins, w->norigins,
	                     sizeof(char *), str_cmp) != NULL;
}

/* --- delivery ------------------------------------------------------------- */

/* Give w its last line, and have its client closed once it is written. */
static void
watcher_drop(struct feed_watcher *w)
{
	struct reply *r = w->out;

	w->dropped = 1;
	w->f->stats.dropped++;
	r->ops->send(r, NULL, dropped_line, sizeof(dropped_line) - 1);
	r->ops->finish(r); /* may close the client, and unwatch w */
}

/*
 * Queue l on w, by reference where the client takes one; its last line
 * instead when l would pass its cap, or there is no line (too long for
 * any watcher, or memory ran out).
 */
static void
watcher_send(struct feed_watcher *w, struct feed_line *l)
{
	struct reply *r = w->out;

	if (l == NULL || l->rl.len + FEED_RESERVE > r->ops->room(r)) {
		watcher_drop(w);
		return;
	}
	w->f->stats.events++;
	if (r->ops->share != NULL)
		r->ops->share(r, &l->rl);
	else
		r->ops->send(r, NULL, l->rl.p, l->rl.len);
}

/* The line of ch for set s: made once per change (ev), kept on s. */
static struct feed_line *
set_line(struct feed *f, struct agent_set *s, struct feed_event *ev)
{
	if (s->serial != f->serial) {
		s->serial = f->serial;
		s->line = feed_event_line(ev, s->agents, s->n);
	}
	return s->line;
}

/* Give ch's event to every watcher of its origin. */
static void
deliver(struct feed *f, const struct feed_change *ch)
{
	struct feed_watcher *w, *next;
	struct feed_event ev;
	struct agent_set *s;
	size_t line_max =
	    f->max_output > FEED_RESERVE ? f->max_output - FEED_RESERVE : 0;

	f->serial++;
	feed_event_init(&ev, ch, line_max, f->max_total, &f->stats);
	for (w = TAILQ_FIRST(&f->watchers); w != NULL; w = next) {
		next = TAILQ_NEXT(w, link);
		if (!w->dropped && watches(w, ch->origin, ch->resource))
			watcher_send(w, set_line(f, w->set, &ev));
	}
	/* the lines are the watchers' now */
	LIST_FOREACH(s, &f->sets, link)
		if (s->serial == f->serial) {
			feed_line_unref(s->line);
			s->line = NULL;
		}
	feed_event_done(&ev);
}

/* --- the fleet ------------------------------------------------------------ */

/* Tell the fleet of a change fetched here. */
static void
publish(struct feed *f, const struct feed_change *ch)
{
	struct buf b = BUF_INIT(FEED_MSG_MAX + TIER_TAG_LEN);

	if (feed_msg_encode(&b, f->id, f->seq, ch, f->keyed ? f->key : NULL) ==
	    0) {
		f->seq++;
		f->fleet.publish(f->fleet.arg, ch->origin, b.p, b.len);
		f->stats.published++;
	}
	buf_clear(&b);
}

void
feed_changed(struct feed *f, const struct feed_change *ch)
{
	if (ch->new_version == NULL)
		return;
	if (f->in_fleet && ch->fetched)
		publish(f, ch);
	deliver(f, ch);
}

/* Does any watcher here watch origin's resource? */
static int
watched(const struct feed *f, const char *origin, unsigned resource)
{
	const struct feed_watcher *w;

	TAILQ_FOREACH(w, &f->watchers, link)
		if (!w->dropped && watches(w, origin, resource))
			return 1;
	return 0;
}

/* A message refused: counted, and said (log_event bounds the lines). */
static void
refused(struct feed *f, const char *why)
{
	f->stats.refused++;
	log_event(LOG_WARNING, "feed_refused",
	    "why=\"%s\" note=\"a change feed message that is not the "
	    "fleet's\" refused=%llu",
	    why, (unsigned long long)f->stats.refused);
}

void
feed_message(struct feed *f, const char *msg, size_t len)
{
	struct feed_notice n;
	const char *why;
	json_t *m;

	if (feed_msg_open(f->keyed ? f->key : NULL, msg, len, &m, &n, &why) ==
	    -1) {
		refused(f, why);
		return;
	}
	if (strcmp(n.from, f->id) != 0) { /* else our own, back from Redis */
		f->stats.received++;
		/* a resource this build does not know (0) is no one's */
		if (f->in_fleet && n.resource != 0 &&
		    watched(f, n.origin, n.resource) &&
		    f->fleet.load(f->fleet.arg, n.origin, n.resource, n.version,
		        n.at) == 1)
			f->stats.loads++;
	}
	json_decref(m);
}
