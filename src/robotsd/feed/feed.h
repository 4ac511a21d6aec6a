/*
 * feed.h: the change feed (docs/protocol.md, "watch"). Clients that sent
 * the watch op are watchers; when an origin's version is replaced by a
 * different one, each watcher of that origin gets one "changed" event line
 * with, per agent it named, the patterns newly disallowed and allowed
 * (ruldiff.h). The line is made once per agent set, not per watcher.
 *
 * A watcher whose unread output would pass --max-output gets a last line
 * {"event":"dropped","reason":"output_budget"} instead and is closed once
 * that is written: the feed never holds more for a client that does not
 * read, and never waits for one.
 *
 * The fleet (--redis): a change fetched here is also handed to the
 * publisher as a message; a message from another instance is delivered to
 * the watchers here. Each message names the instance that sent it (ours
 * are ignored) and a short memory of recent changes delivers each change
 * once. Owns its watchers' subscriptions; borrows their struct reply.
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
/* A fleet message longer than this is not sent, and dropped when read. */
#define FEED_MSG_MAX 65536
/* Product tokens whose difference a fleet message carries, at most. */
#define FEED_MSG_TOKENS 64
#define FEED_ID_LEN 16 /* hex digits of an instance id */

struct feed_change {
	const char *origin;
	const char *old_version; /* NULL: none known here */
	const char *new_version;
	double at;         /* Unix seconds */
	const char *state; /* the new state's name: rules, unavailable... */
	int fetched;       /* fetched here (not read from the shared tier) */
	struct ruldiff_side old, new;
};

/* The fleet's publisher: send msg (len bytes) about origin. */
typedef void (*feed_publish_fn)(
    void *arg, const char *origin, const char *msg, size_t len);

struct feed_stats {
	uint64_t watchers; /* now */
	uint64_t events;   /* event lines queued */
	uint64_t dropped;  /* watchers dropped at the output budget */
	uint64_t published, received, refused; /* fleet messages */
};

struct feed *feed_new(void);
void feed_free(struct feed *); /* watchers must be gone; NULL is fine */
/* The output cap of a client (--max-output). */
void feed_configure(struct feed *, size_t max_output);
/* Publish changes fetched here with pub (NULL: no fleet). */
void feed_set_fleet(struct feed *, feed_publish_fn pub, void *arg);
const char *feed_instance(const struct feed *);
const struct feed_stats *feed_stats(const struct feed *);

/*
 * A watcher of origins (normalized, n of them, copied) or of all origins,
 * for agents (copied; none: "*"); its events go to out. Never fails.
 */
struct feed_watcher *feed_watch(struct feed *, struct reply *out,
    const char *const *origins, size_t n, int all, const char *const *agents,
    size_t nagents);
void feed_unwatch(struct feed_watcher *); /* NULL is fine */
/* 0 once w got its last line (dropped at its output cap). */
int feed_watcher_active(const struct feed_watcher *);

/*
 * An origin's version changed here. Events go to the watchers here when it
 * was fetched here, or when there is no fleet (a shared-tier read with a
 * fleet: the fetching instance's message told them already).
 */
void feed_changed(struct feed *, const struct feed_change *);
/* A fleet message (untrusted bytes): checked, then delivered once. */
void feed_message(struct feed *, const char *msg, size_t len);

#endif /* ROBOTSD_FEED_H */
