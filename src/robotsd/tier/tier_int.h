/*
 * tier_int.h: what tier.c and tier_setup.c (calls; the tier), tier_reply.c
 * (answers) and tier_conn.c (connections) share inside the tier client.
 * Not for the rest of robotsd: use tier.h.
 */
#ifndef ROBOTSD_TIER_INT_H
#define ROBOTSD_TIER_INT_H

#include <sys/queue.h>

#include <stdint.h>
#include <time.h>

#include <event2/event_struct.h>
#include <hiredis/async.h>

#include "tier/tier.h"
#include "policy/tier_tag.h"
#include "policy/tier_url.h"

struct tier_server;
struct tier_call;
TAILQ_HEAD(tier_calls, tier_call);
struct evdns_base;
struct evdns_getaddrinfo_request;

/* One hiredis connection: commands, or the subscriber. */
struct tier_conn {
	struct tier_server *srv;
	int is_sub;
	redisAsyncContext *ac; /* NULL while down */
	void *tls;             /* rediss://: ac's TLS session (tier_tls.h) */
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
	size_t sent;           /* commands sent on ac and not answered yet */
	uint64_t written;      /* bytes hiredis wrote to ac's socket */
	/* Calls handed to hiredis whose bytes are not all written yet. */
	struct tier_calls unwritten;
};

struct tier_server {
	struct tier *t;
	size_t idx;
	struct tier_url url;
	struct tier_conn cmd, sub;
	struct tier_calls queue; /* calls waiting for a free slot on cmd */
	size_t nqueued;
	struct tier_server_stats st;
	time_t log_at;     /* last warning logged, for rate limiting */
	unsigned log_held; /* warnings not logged since */
};

#define TIER_WAIT_BUCKETS 256

/*
 * A lock this tier took for its caller and the caller still holds (no
 * tier_unlock, no tier_publish with its token yet): its expiry is pushed
 * back to --redis-lock-time every half of it (tier.c), so that it lasts
 * while its holder lives, however long the fetch waits for its turn.
 */
struct tier_hold {
	struct tier *t;
	char *origin;
	char token[TIER_TOKEN_LEN + 1];
	struct event timer; /* the next renewal */
	TAILQ_ENTRY(tier_hold) link;
};
TAILQ_HEAD(tier_holds, tier_hold);

/*
 * What tier_conn.c tells the layer above it (tier.c, tier_setup.c), which
 * it reaches only through these; tier_new sets them.
 */
struct tier_conn_hooks {
	/* conn wrote more: arm the deadlines of the calls now written. */
	void (*written)(struct tier_conn *);
	/* srv's command connection is lost: end its waits (TIER_DOWN). */
	void (*lost)(struct tier_server *);
	/* a publish of origin was announced on srv's channel. */
	void (*notified)(struct tier_server *, const char *origin, size_t len);
	/* free what tier_free left: at its end, or when the last lookup
	 * ends after it (tier.c calls tier_setup.c only through this). */
	void (*destroy)(struct tier *);
};

struct tier {
	struct event_base *base;
	struct tier_conn_hooks hooks;
	struct tier_config cf;
	struct tier_server *servers;
	size_t nservers;
	struct tier_ring *ring;
	struct tier_tls *tls;   /* with a rediss:// URL; else NULL */
	struct evdns_base *dns; /* NULL: hiredis resolves (blocking) */
	int lookups;            /* host name lookups under way */
	struct tier_stats stats;
	struct tier_calls waits[TIER_WAIT_BUCKETS]; /* tier_wait calls */
	struct tier_calls calls;                    /* all live calls */
	struct tier_holds holds;                    /* locks held, renewed */
	uint64_t seq;         /* notices seen; a wait hears only later ones */
	tier_feed_cb feed_cb; /* change feed messages, or NULL */
	void *feed_arg;
	int freeing;
	int keyed; /* values are tagged with key (--redis-key-file) */
	unsigned char key[TIER_KEY_LEN];
};

static inline void
tier_ms_to_tv(long ms, struct timeval *tv)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

/* tier_conn.c */
void tier_conn_init(struct tier_server *, struct tier_conn *, int is_sub);
void tier_conn_start(struct tier_conn *);
void tier_conn_stop(struct tier_conn *);
/* Drop the connection (if any), its calls ending with result; retry later. */
void tier_conn_drop(
    struct tier_conn *, enum tier_result result, const char *why);
void tier_server_warn(struct tier_server *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Read what the peer has already sent (a deadline is due: robotsd may only
 * have been busy); returns at once when nothing waits.
 */
void tier_conn_drain(struct tier_conn *);
/* Bytes of commands hiredis holds, not written to the socket yet. */
size_t tier_conn_unsent(const struct tier_conn *);
/* tier.c: hooks.written (tier_conn_hooks). */
void tier_calls_written(struct tier_conn *);
/*
 * tier_setup.c: free what tier_free left (hooks.destroy: tier_free's own end,
 * or the last lookup's after it).
 */
void tier_destroy(struct tier *);
/* tier.c: hooks.lost. */
void tier_server_lost(struct tier_server *);
/* tier.c: the caller holds origin's lock with token: keep it alive. */
void tier_hold(struct tier *, const char *origin, const char *token);
/* tier.c: hooks.notified. */
void tier_notified(struct tier_server *, const char *origin, size_t len);

/* One call of the tier client (tier.c; its answers: tier_reply.c). */
enum call_kind {
	CALL_GET,
	CALL_PUBLISH,
	CALL_LOCK,
	CALL_UNLOCK,
	CALL_RENEW,
	CALL_WAIT,
	CALL_PURGE,
	CALL_FEED
};

#define CALL_MAX_CMDS 3 /* a publish: SET, the unlock, PUBLISH */

/*
 * Where a call is; tier.c moves it with call_stage_set only, which refuses
 * (and logs) a move tier_stage_legal does not allow. A wait is in t->waits
 * in every stage but CALL_DONE.
 */
enum call_stage {
	CALL_NEW,       /* commands formatted (or none yet), in no list */
	CALL_QUEUED,    /* in srv->queue: not handed to hiredis yet */
	CALL_UNWRITTEN, /* in cmd.unwritten: handed, not all written */
	CALL_SENT,      /* written, its deadline armed; a wait: or idle */
	CALL_DEFERRED,  /* its result decided: the timer delivers it */
	CALL_DONE       /* the callback ran; hiredis may still owe replies */
};
#define CALL_NSTAGES (CALL_DONE + 1)

/* tier.c: 1 when a call (is_wait: a wait) may move from one to another. */
int tier_stage_legal(int is_wait, enum call_stage from, enum call_stage to);
/* tier.c: the stage's name, for logs and tests ("?" out of range). */
const char *tier_stage_name(enum call_stage);

struct tier_call {
	struct tier *t;
	struct tier_server *srv;
	enum call_kind kind;
	tier_cb cb;
	void *arg;
	char *origin;
	struct event timer; /* deadline, or the moment to deliver reply */
	long limit_ms;      /* the caller's deadline, once the call is sent */
	struct event poll;  /* wait: next poll, or a poll's deadline */
	enum call_stage stage;
	int owed;         /* replies hiredis still owes */
	int nreplies;     /* replies seen */
	int polling;      /* wait: a poll is out */
	int noticed;      /* wait: a notice of its origin came */
	int repoll;       /* wait: it came while a poll was out */
	int flags;        /* lock: TIER_LOCK_* */
	int pinned;       /* on_timer reads replies: c must stay */
	uint64_t until;   /* unwritten: written once conn's bytes reach it */
	double queued_at; /* clock_monotonic() when it was to be sent */
	char *cmd[CALL_MAX_CMDS]; /* formatted, not sent yet */
	size_t cmdlen[CALL_MAX_CMDS];
	int ncmds;
	struct tier_reply reply;
	char token[TIER_TOKEN_LEN + 1];
	char why[200];
	uint64_t seq;                 /* wait: t->seq when it began */
	TAILQ_ENTRY(tier_call) link;  /* in t->waits */
	TAILQ_ENTRY(tier_call) all;   /* in t->calls */
	TAILQ_ENTRY(tier_call) qlink; /* in srv->queue or cmd.unwritten */
};

/* tier.c: run a call's callback, once (why is copied), free c if idle. */
void tier_call_finish(struct tier_call *, enum tier_result, const char *why);
/* tier.c: free c once its callback ran and hiredis owes it nothing. */
void tier_call_free_if_idle(struct tier_call *);
/* tier.c: send queued calls while srv's connection has room. */
void tier_queue_pump(struct tier_server *);
/* tier.c: send a wait's poll of its lock (PTTL) now. */
void tier_wait_poll(struct tier_call *);
/* tier_reply.c: hiredis's callback of every command of a call. */
void tier_on_reply(redisAsyncContext *, void *reply, void *priv);

#endif /* ROBOTSD_TIER_INT_H */
