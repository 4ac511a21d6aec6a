/*
 * tier_int.h: what tier.c (calls) and tier_conn.c (connections) share
 * inside the tier client. Not for the rest of robotsd: use tier.h.
 */
#ifndef ROBOTSD_TIER_INT_H
#define ROBOTSD_TIER_INT_H

#include <sys/queue.h>
#include <time.h>

#include <event2/event_struct.h>
#include <hiredis/async.h>

#include "tier/tier.h"
#include "tier/tier_tag.h"
#include "tier/tier_url.h"

struct tier_server;
struct evdns_base;
struct evdns_getaddrinfo_request;

/* One hiredis connection: commands, or the subscriber. */
struct tier_conn {
	struct tier_server *srv;
	int is_sub;
	redisAsyncContext *ac; /* NULL while down */
	enum tier_state state;
	long backoff_ms;        /* before the next attempt after a failure;
	                           back to the least once the connection works */
	struct event retry;     /* next connection attempt */
	struct event handshake; /* deadline of connect + AUTH/SELECT/PING */
	struct evdns_getaddrinfo_request *dns; /* a lookup under way */
	int resolving;                         /* set until on_resolved runs */
	/* While tier_conn_drop frees ac: what its pending calls end with. */
	enum tier_result drop_result;
	const char *drop_why; /* NULL: not dropping */
	/* hiredis's event hooks (tier_conn.c's own libevent adapter). */
	struct event rev, wev;
	/* The reply being read: its objects and bytes so far (bounded). */
	size_t reply_items, reply_bytes;
	const char *proto_why; /* the peer broke the protocol: why */
};

struct tier_server {
	struct tier *t;
	size_t idx;
	struct tier_url url;
	struct tier_conn cmd, sub;
	struct tier_server_stats st;
	time_t log_at;     /* last warning logged, for rate limiting */
	unsigned log_held; /* warnings not logged since */
};

#define TIER_WAIT_BUCKETS 256

struct tier_call;
TAILQ_HEAD(tier_calls, tier_call);

struct tier {
	struct event_base *base;
	struct tier_config cf;
	struct tier_server *servers;
	size_t nservers;
	struct tier_ring *ring;
	struct evdns_base *dns; /* NULL: hiredis resolves (blocking) */
	int lookups;            /* host name lookups under way */
	struct tier_stats stats;
	struct tier_calls waits[TIER_WAIT_BUCKETS]; /* tier_wait calls */
	struct tier_calls calls;                    /* all live calls */
	uint64_t seq;         /* notices seen; a wait hears only later ones */
	tier_feed_cb feed_cb; /* change feed messages, or NULL */
	void *feed_arg;
	int freeing;
	int keyed; /* values are tagged with key (--redis-key-file) */
	unsigned char key[TIER_KEY_LEN];
};

/* tier_conn.c */
void tier_conn_init(struct tier_server *, struct tier_conn *, int is_sub);
void tier_conn_start(struct tier_conn *);
void tier_conn_stop(struct tier_conn *);
/* Drop the connection (if any), its calls ending with result; retry later. */
void tier_conn_drop(
    struct tier_conn *, enum tier_result result, const char *why);
void tier_server_warn(struct tier_server *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* tier.c: free what tier_free left for the last lookup to end. */
void tier_destroy(struct tier *);
/* tier.c: srv's command connection is lost: end its waits (TIER_DOWN). */
void tier_server_lost(struct tier_server *);
/* tier.c: a publish of origin was announced on srv's channel. */
void tier_notified(struct tier_server *, const char *origin, size_t len);

#endif /* ROBOTSD_TIER_INT_H */
