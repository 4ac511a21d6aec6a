/*
 * feed_int.h: the change feed's private parts, shared by feed.c (the
 * watchers and delivery), feed_event.c (a change's event lines, within
 * their bounds) and feed_msg.c (the fleet's messages). Nothing else
 * includes it.
 */
#ifndef ROBOTSD_FEED_INT_H
#define ROBOTSD_FEED_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "feed/feed.h"
#include "feed/ruldiff.h"
#include "iface/reply.h"

struct buf;

/* Room kept for the last line of a watcher dropped at its output cap. */
#define FEED_RESERVE 128

/* An event line, made once and shared by every watcher of its agents. */
struct feed_line {
	struct reply_line rl; /* first: release() gets it */
	char *bytes;
};
void feed_line_unref(struct feed_line *); /* NULL is fine */

/* One agent's difference, computed once per change and key. */
struct feed_frag {
	char key[RULDIFF_TOKEN_MAX + 1];
	char *json; /* {"newly_disallowed":..}, or NULL: null */
	size_t len;
};

/*
 * A change's event lines being made: the differences found so far, and
 * what the change may still spend (feed.h: the work of its differences,
 * the bytes of differences its lines hold).
 */
struct feed_event {
	const struct feed_change *ch;
	size_t line_max; /* a line's bytes, at most */
	size_t bytes;    /* bytes of differences it may still make: kept
	                    once, and copied into each line */
	size_t work;     /* ruleset lines its differences may still walk */
	struct ruldiff_names *names; /* made for the first line */
	int names_failed;
	struct feed_frag *frags;
	uint32_t *slots; /* open addressing over frags: index + 1, 0 empty */
	size_t nfrags, nslots;
	struct feed_stats *stats; /* lines and diffs counted here */
};

void feed_event_init(struct feed_event *, const struct feed_change *,
    size_t line_max, size_t bytes, struct feed_stats *);
/*
 * The event line for agents (none: "*"), with one reference; NULL when it
 * does not fit line_max or memory runs out.
 */
struct feed_line *feed_event_line(
    struct feed_event *, char *const *agents, size_t nagents);
void feed_event_done(struct feed_event *);

/* A fleet message, as feed_msg_open() found it (strings borrowed). */
struct feed_notice {
	const char *from; /* the sender's instance id */
	const char *origin, *version;
	double at;         /* clock seconds: the version first fetched */
	unsigned resource; /* FEED_*; 0: one this build does not know */
};

/*
 * The message of a change fetched here into b: its text (FEED_MSG_MAX
 * bytes at most) and, with a key (the feed's, derived), its tag; -1 when
 * it does not fit.
 */
int feed_msg_encode(struct buf *, const char *id, uint64_t seq,
    const struct feed_change *, const unsigned char *key);
/*
 * Check a message (untrusted bytes): 0 with *n filled (its strings live
 * in *tree, which the caller frees with json_decref), or -1 with *why a
 * short reason (static text) and nothing to free. With key (the feed's,
 * derived), only a message whose tag is right under it is taken.
 */
int feed_msg_open(const unsigned char *key, const char *msg, size_t len,
    json_t **tree, struct feed_notice *n, const char **why);

#endif /* ROBOTSD_FEED_INT_H */
