/*
 * tier_reply.c: the answers to the tier's calls. Each reply hiredis hands
 * back (already bounded by tier_conn.c) is checked against what its
 * command can answer, and ends the call with its result; a call that has
 * ended (its caller's deadline passed) only has its late answer undone
 * where it matters (a lock granted late is released).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "tier/tier_int.h"
#include "tier/tier_value.h"
#include "base/xmalloc.h"

/*
 * The purge record's reply, after a value: its time in purged_at (0: none,
 * or one that is not the origin's, or without a valid tag: a record only
 * ever makes a reader refuse more).
 */
static void
got_purge_record(struct tier_call *c, const redisReply *r)
{
	int64_t ms;
	long n;

	if (r->type != REDIS_REPLY_NIL && r->type != REDIS_REPLY_STRING) {
		tier_call_finish(c, TIER_ERROR, "unexpected reply to GET");
		return;
	}
	if (r->type == REDIS_REPLY_STRING &&
	    (n = tier_tag_open(
	         c->t->keyed ? c->t->key : NULL, r->str, r->len)) != -1 &&
	    tier_purge_decode(r->str, (size_t)n, c->origin, &ms) == 0)
		c->reply.purged_at = ms;
	tier_call_finish(c, TIER_OK, NULL);
}

/* GET of the value, then GET of its purge record. */
static void
got_get(struct tier_call *c, const redisReply *r)
{
	struct tier_value *v;
	enum tier_value_err e;
	long n;

	if (c->nreplies == 2) {
		got_purge_record(c, r);
		return;
	}
	if (r->type == REDIS_REPLY_NIL) {
		tier_call_finish(c, TIER_MISS, NULL);
		return;
	}
	if (r->type != REDIS_REPLY_STRING) {
		tier_call_finish(c, TIER_ERROR, "unexpected reply to GET");
		return;
	}
	if ((n = tier_tag_open(
	         c->t->keyed ? c->t->key : NULL, r->str, r->len)) == -1) {
		c->t->stats.untagged++;
		tier_call_finish(
		    c, TIER_CORRUPT, "no valid tag (--redis-key-file)");
		return;
	}
	v = xcalloc(1, sizeof(*v));
	if ((e = tier_value_decode(r->str, (size_t)n, c->origin, v)) != TV_OK) {
		free(v);
		tier_call_finish(c, TIER_CORRUPT, tier_value_strerror(e));
		return;
	}
	c->reply.value = v; /* the call ends at the record's reply */
}

/* Replies to SET, the optional unlock, then PUBLISH. */
static void
got_publish(struct tier_call *c, const redisReply *r)
{
	if (c->nreplies == 1 &&
	    (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)) {
		tier_call_finish(c, TIER_ERROR, "unexpected reply to SET");
		return;
	}
	if (c->owed == 0)
		tier_call_finish(c, TIER_OK, NULL);
}

static void
got_lock(struct tier_call *c, const redisReply *r)
{
	if (r->type == REDIS_REPLY_NIL) {
		tier_call_finish(c, TIER_BUSY, NULL);
	} else if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
		c->reply.token = c->token;
		tier_hold(c->t, c->origin, c->token);
		tier_call_finish(c, TIER_OK, NULL);
	} else
		tier_call_finish(c, TIER_ERROR, "unexpected reply to SET NX");
}

/* PURGE: SET of the purge record, then DEL of the value. */
static void
got_purge(struct tier_call *c, const redisReply *r)
{
	if (c->nreplies == 1) {
		if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
			tier_call_finish(
			    c, TIER_ERROR, "unexpected reply to SET");
		return;
	}
	if (r->type != REDIS_REPLY_INTEGER)
		tier_call_finish(c, TIER_ERROR, "unexpected reply to DEL");
	else
		tier_call_finish(c, r->integer > 0 ? TIER_OK : TIER_MISS, NULL);
}

/* UNLOCK, RENEW and FEED: an integer, how many keys it touched. */
static void
got_count(struct tier_call *c, const redisReply *r)
{
	if (r->type != REDIS_REPLY_INTEGER)
		tier_call_finish(c, TIER_ERROR, "unexpected reply");
	else
		tier_call_finish(c, r->integer > 0 ? TIER_OK : TIER_MISS, NULL);
}

/*
 * A wait's poll: the lock's PTTL. Gone (-2): released or expired; one no
 * robotsd set (no expiry, -1, or longer than any robotsd lock): nobody
 * would release it, so the wait ends too and the caller takes it over.
 * Else its holder lives (it renews the lock): wait on, and read it again
 * at once when a notice came while this poll was out.
 */
static void
got_poll(struct tier_call *c, const redisReply *r)
{
	struct timeval tv;

	c->polling = 0;
	evtimer_del(&c->poll);
	if (r->type != REDIS_REPLY_INTEGER) {
		tier_call_finish(c, TIER_ERROR, "unexpected reply to PTTL");
	} else if (r->integer == -2 || r->integer == -1 ||
	           r->integer > c->t->cf.lock_ms) {
		tier_call_finish(
		    c, c->noticed ? TIER_NOTIFIED : TIER_UNLOCKED, NULL);
	} else if (c->repoll) {
		c->repoll = 0;
		tier_wait_poll(c);
	} else {
		tier_ms_to_tv(c->t->cf.poll_ms, &tv);
		evtimer_add(&c->poll, &tv);
	}
}

void
tier_on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	static void (*const got[])(struct tier_call *, const redisReply *) = {
		[CALL_GET] = got_get,
		[CALL_PUBLISH] = got_publish,
		[CALL_LOCK] = got_lock,
		[CALL_UNLOCK] = got_count,
		[CALL_RENEW] = got_count,
		[CALL_WAIT] = got_poll,
		[CALL_PURGE] = got_purge,
		[CALL_FEED] = got_count,
	};
	struct tier_call *c = priv;
	struct tier_server *srv = c->srv;
	struct tier_conn *conn = &srv->cmd;
	redisReply *r = reply;

	c->owed--;
	c->nreplies++;
	if (conn->ac == ac && conn->sent > 0)
		conn->sent--;
	/*
	 * An answer: the connection works. Not before: a peer that passes the
	 * handshake and garbles every call keeps its backoff growing.
	 */
	if (r != NULL && conn->ac == ac)
		conn->backoff_ms = c->t->cf.reconnect_min_ms;
	if (c->stage == CALL_DONE) {
		if (c->kind == CALL_LOCK && r != NULL && !c->t->freeing &&
		    r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0)
			/* granted after its caller gave up: nobody fetches */
			tier_unlock(c->t, c->origin, c->token, NULL, NULL);
		tier_call_free_if_idle(c);
	} else if (r == NULL && conn->drop_why != NULL) {
		tier_call_finish(c, conn->drop_result, conn->drop_why);
	} else if (r == NULL) {
		tier_call_finish(c, TIER_ERROR,
		    ac->errstr[0] != '\0' ? ac->errstr : "connection lost");
	} else if (r->type == REDIS_REPLY_ERROR) {
		snprintf(c->why, sizeof(c->why), "Redis: %.150s", r->str);
		tier_call_finish(c, TIER_ERROR, c->why);
	} else
		got[c->kind](c, r);
	tier_queue_pump(srv);
}
