/*
 * feed.h: the change feed (docs/protocol.md, "watch"). Clients that sent
 * the watch op are watchers; when this instance's version of an origin is
 * replaced by a different one, each watcher of that origin gets one
 * "changed" event line with, per agent it named, the patterns newly
 * disallowed and allowed (ruldiff.h). A watcher is told only what this
 * instance answers: events come from its cache's changes alone, after the
 * cache holds the new version.
 *
 * An event's cost does not grow with the watchers that share an agent
 * set: each distinct agent set's line is made once and queued to all of
 * them by reference (reply.h's share), each agent's difference is
 * computed once per change and key (ruldiff_key), and what one change may
 * make is bounded: the work of its differences (FEED_WORK_MAX lines of
 * the rulesets walked) and the bytes of the differences put in its lines
 * (--max-output-total); an agent whose difference is past a bound, or
 * would not fit its line under --max-output, gets null.
 *
 * A watcher whose unread output would pass --max-output gets a last line
 * {"event":"dropped","reason":"output_budget"} instead and is closed once
 * that is written: the feed never holds more for a client that does not
 * read, and never waits for one.
 *
 * The fleet (--redis): a change fetched here is also published as a
 * message naming the origin, the new version and when it was first
 * fetched, tagged with the fleet's key when it has one (feed_msg.c). An
 * instance that receives one from another, and has a watcher of that
 * origin, loads the origin anew (from the shared tier when its copy is
 * that recent, else by fetching): its watchers hear of the change from its
 * own cache once it holds it. Owns its watchers' subscriptions; borrows
 * their struct reply.
 */
#ifndef ROBOTSD_FEED_H
#define ROBOTSD_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "feed/ruldiff.h"

struct reply;
struct feed;
struct feed_watcher;

/* An agent's bytes, at most (the watch op's limit, proto.h). */
#define FEED_MAX_AGENT_LEN 128
/* A fleet message's text longer than this is not sent. */
#define FEED_MSG_MAX 4096
/* ... and one longer than this refused when read (robotsd 0.1's bound). */
#define FEED_MSG_READ_MAX 65536
#define FEED_ID_LEN 16 /* hex digits of an instance id */
/*
 * Lines of the rulesets one change's differences may walk, at most: a
 * tenth of a second or so, the differences of five keys of the biggest
 * robots.txt robotsd keeps (500 KiB), of thousands of a common one.
 */
#define FEED_WORK_MAX 262144

/* The resources a change is of, and a watcher hears of (bits). */
#define FEED_ROBOTS 1u /* robots.txt */
#define FEED_TDMREP 2u /* /.well-known/tdmrep.json */

struct feed_change {
	const char *origin;
	const char *old_version; /* NULL: none known here */
	const char *new_version;
	double at;         /* clock seconds: the new version first fetched */
	const char *state; /* the new state's name: rules, unavailable... */
	int fetched;       /* fetched here (not read from the shared tier) */
	unsigned resource; /* FEED_ROBOTS (or 0) or FEED_TDMREP */
	/* robots.txt: the sides of its rules' difference */
	struct ruldiff_side old, new;
	/* tdmrep.json: the old version's state ("rules", ...), NULL: none */
	const char *old_state;
};

/* What the feed asks of the fleet (feed_wire.c). */
struct feed_fleet {
	/* Send msg (len bytes) about origin to every instance. */
	void (*publish)(
	    void *arg, const char *origin, const char *msg, size_t len);
	/*
	 * Another instance told that origin's resource (FEED_ROBOTS or
	 * FEED_TDMREP) went to version, first fetched at (clock seconds):
	 * load it here. 1: a load started; 0: none needed or one runs; -1:
	 * none could start.
	 */
	int (*load)(void *arg, const char *origin, unsigned resource,
	    const char *version, double at);
	void *arg;
	/* The fleet's key (TIER_KEY_LEN bytes, copied), or NULL: no tags. */
	const unsigned char *key;
};

struct feed_stats {
	uint64_t watchers; /* now */
	uint64_t events;   /* event lines queued */
	uint64_t dropped;  /* watchers dropped at the output budget */
	uint64_t lines;    /* event lines made (one per agent set and change) */
	uint64_t diffs;    /* agent differences computed */
	uint64_t published, received, refused; /* fleet messages */
	uint64_t loads; /* loads started for a change received */
};

struct feed *feed_new(void);
void feed_free(struct feed *); /* watchers must be gone; NULL is fine */
/* A client's output cap (--max-output) and all clients' (-total). */
void feed_configure(struct feed *, size_t max_output, size_t max_total);
/* Join the fleet (NULL: no fleet). */
void feed_set_fleet(struct feed *, const struct feed_fleet *);
const struct feed_stats *feed_stats(const struct feed *);

/*
 * A watcher of origins (normalized, n of them, copied) or of all origins,
 * for agents (copied; none: "*"), of the changes of resources (FEED_*
 * bits; 0: robots.txt's); its events go to out. Never fails.
 */
struct feed_watcher *feed_watch(struct feed *, struct reply *out,
    const char *const *origins, size_t n, int all, const char *const *agents,
    size_t nagents, unsigned resources);
void feed_unwatch(struct feed_watcher *); /* NULL is fine */
/* 0 once w got its last line (dropped at its output cap). */
int feed_watcher_active(const struct feed_watcher *);

/*
 * This instance's version of an origin changed: an event to its watchers;
 * published to the fleet as well when fetched here.
 */
void feed_changed(struct feed *, const struct feed_change *);
/* A fleet message (untrusted bytes): checked, then loaded if watched. */
void feed_message(struct feed *, const char *msg, size_t len);

#endif /* ROBOTSD_FEED_H */
