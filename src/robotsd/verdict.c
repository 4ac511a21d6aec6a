/*
 * verdict.c: the check op. One URL or a batch of them for one agent; each
 * item is parsed, looked up and either answered at once or left waiting on
 * its origin's fetch. An item's answer is kept as a JSON fragment (the
 * fields after "ok"), and the whole answer line is assembled once every
 * item is known.
 */
#include <config.h>

#include <sys/queue.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "robots.h"
#include "cache.h"
#include "verdict.h"
#include "config.h"
#include "log.h"
#include "proto.h"
#include "robotsd.h"
#include "server.h"
#include "xmalloc.h"

/* Checks one connection may have waiting on fetches at once. */
#define VERDICT_CONN_MAX_WAITING 1024
/* A waiting check gives up after this many fetch timeouts (plus slack). */
#define VERDICT_WAIT_TIMEOUTS 2
#define VERDICT_WAIT_SLACK 5

struct verdict_item {
	struct verdict_pending *p;
	struct url u;
	int parsed; /* u holds a URL */
	int done;   /* frag and ok are the item's answer */
	int ok;
	struct pbuf frag;      /* the answer's fields after "ok" */
	struct cache_waiter w; /* while waiting on a fetch */
};

struct verdict_pending {
	TAILQ_ENTRY(verdict_pending) link;
	struct robotsd *rd;
	struct conn *conn;
	json_t *id;
	json_t *root; /* the request: agent and urls point into it */
	json_t *urls; /* a batch's URLs, for echoing; NULL for one URL */
	const char *agent;
	size_t agent_len;
	size_t n, left;
	struct event *timer;
	struct verdict_item items[];
};

/* ,"name":"value" for a plain ASCII value. */
static void
verdict_field(struct pbuf *b, const char *name, const char *value)
{
	pbuf_lit(b, ",\"");
	pbuf_add(b, name, strlen(name));
	pbuf_lit(b, "\":\"");
	pbuf_add(b, value, strlen(value));
	pbuf_lit(b, "\"");
}

/* The verdict for u from entry e, as the fields after "ok". */
static void
verdict_answer(struct verdict_pending *p, struct verdict_item *it,
    const struct cache_entry *e, const char *source)
{
	struct robots_verdict v = { .allowed = 1, .crawl_delay = -1 };
	struct pbuf *b = &it->frag;
	const char *reason = "unavailable";
	double expires = cache_expires_in(p->rd->cache, e);

	if (e->policy == CACHE_RULES) {
		robots_check(e->robots, p->agent, p->agent_len, it->u.path,
		    it->u.path_len, &v);
		reason = robots_reason_name(v.reason);
	} else if (e->policy == CACHE_DISALLOW_ALL) {
		v.allowed = 0;
		reason = "unreachable";
	}
	if (v.allowed)
		pbuf_lit(b, "\"allowed\":true,\"origin\":");
	else
		pbuf_lit(b, "\"allowed\":false,\"origin\":");
	pbuf_str(b, it->u.origin, strlen(it->u.origin));
	verdict_field(b, "source", source);
	verdict_field(b, "reason", reason);
	pbuf_lit(b, ",\"http_status\":");
	if (e->http_status > 0)
		pbuf_int(b, e->http_status);
	else
		pbuf_lit(b, "null");
	pbuf_lit(b, ",\"rule\":");
	if (e->policy == CACHE_RULES && v.reason == ROBOTS_REASON_RULE) {
		pbuf_lit(b, "{\"directive\":\"");
		pbuf_add(b, robots_directive_name(v.rule.directive),
		    strlen(robots_directive_name(v.rule.directive)));
		pbuf_lit(b, "\",\"pattern\":");
		pbuf_str(b, v.rule.pattern, v.rule.pattern_len);
		pbuf_lit(b, ",\"line\":");
		pbuf_int(b, v.rule.line);
		pbuf_lit(b, "}");
	} else
		pbuf_lit(b, "null");
	pbuf_lit(b, ",\"crawl_delay\":");
	if (v.crawl_delay >= 0)
		pbuf_real(b, v.crawl_delay);
	else
		pbuf_lit(b, "null");
	pbuf_lit(b, ",\"expires_in\":");
	pbuf_int(b, llround(expires));
}

/* Settle an item with the fields written into its frag. */
static void
verdict_settle(struct verdict_item *it, int ok)
{
	it->ok = ok;
	it->done = 1;
}

/* Settle an item with an error. */
static void
verdict_error(struct verdict_item *it, enum proto_err err, const char *msg)
{
	struct pbuf *b = &it->frag;

	b->len = 0;
	pbuf_lit(b, "\"error\":{\"code\":\"");
	pbuf_add(b, proto_err_code(err), strlen(proto_err_code(err)));
	pbuf_lit(b, "\",\"message\":");
	pbuf_str(b, msg, strlen(msg));
	pbuf_lit(b, "}");
	verdict_settle(it, 0);
}

/* The URL /robots.txt itself: always allowed, nothing fetched. */
static void
verdict_robots_txt(struct verdict_item *it)
{
	struct pbuf *b = &it->frag;

	pbuf_lit(b, "\"allowed\":true,\"origin\":");
	pbuf_str(b, it->u.origin, strlen(it->u.origin));
	pbuf_lit(b, ",\"source\":\"cache\",\"reason\":\"robots_txt\","
	            "\"http_status\":null,\"rule\":null,\"crawl_delay\":null,"
	            "\"expires_in\":null");
	verdict_settle(it, 1);
}

/* A miss with "wait":false: the fetch runs in the background. */
static void
verdict_pending_answer(struct verdict_item *it)
{
	pbuf_lit(&it->frag, "\"pending\":true,\"origin\":");
	pbuf_str(&it->frag, it->u.origin, strlen(it->u.origin));
	verdict_settle(it, 1);
}

/* {"ok":B,FRAG} into b, led by the batch row's url or the reply's id. */
static void
verdict_object(struct pbuf *b, const char *key, const json_t *v,
    const struct verdict_item *it)
{
	pbuf_lit(b, "{\"");
	pbuf_add(b, key, strlen(key));
	pbuf_lit(b, "\":");
	pbuf_json(b, v);
	if (it->ok)
		pbuf_lit(b, ",\"ok\":true,");
	else
		pbuf_lit(b, ",\"ok\":false,");
	pbuf_add(b, it->frag.p, it->frag.len);
	pbuf_lit(b, "}");
}

/* Release a pending check and everything its items hold. */
static void
verdict_free(struct verdict_pending *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		cache_waiter_cancel(&p->items[i].w);
		if (p->items[i].parsed)
			url_clear(&p->items[i].u);
		pbuf_clear(&p->items[i].frag);
	}
	if (p->timer != NULL)
		event_free(p->timer);
	json_decref(p->id);
	json_decref(p->root);
	free(p);
}

/* Assemble and send the whole answer line; frees p. */
static void
verdict_finish(struct verdict_pending *p)
{
	struct conn *c = p->conn;
	struct pbuf b = { 0 };
	size_t i;

	if (p->urls == NULL)
		verdict_object(&b, "id", p->id, &p->items[0]);
	else {
		pbuf_lit(&b, "{\"id\":");
		pbuf_json(&b, p->id);
		pbuf_lit(&b, ",\"ok\":true,\"results\":[");
		for (i = 0; i < p->n; i++) {
			if (i > 0)
				pbuf_lit(&b, ",");
			verdict_object(&b, "url", json_array_get(p->urls, i),
			    &p->items[i]);
		}
		pbuf_lit(&b, "]}");
	}
	pbuf_lit(&b, "\n");
	if (p->timer != NULL)
		TAILQ_REMOVE(conn_pending(c), p, link);
	if (b.nomem)
		conn_reply(c, proto_error(p->id, PE_INTERNAL, "out of memory"));
	else
		conn_send(c, b.p, b.len);
	if (p->timer != NULL)
		conn_pending_done(c);
	pbuf_clear(&b);
	verdict_free(p);
}

/* A fetch an item waited on ended: answer it from the fresh entry. */
static void
verdict_wait_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct verdict_item *it = w->arg;
	struct verdict_pending *p = it->p;

	verdict_answer(p, it, e, "fetched");
	verdict_settle(it, 1);
	if (--p->left == 0)
		verdict_finish(p);
}

/* A waiting check ran out of time: the items still waiting time out. */
static void
verdict_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct verdict_pending *p = arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < p->n; i++) {
		if (p->items[i].done)
			continue;
		cache_waiter_cancel(&p->items[i].w);
		verdict_error(&p->items[i], PE_TIMEOUT,
		    "the robots.txt fetch did not end in time");
	}
	p->left = 0;
	verdict_finish(p);
}

/* Items of a connection's parked checks still waiting on fetches. */
static size_t
verdict_waiting(const struct verdict_list *list)
{
	const struct verdict_pending *p;
	size_t n = 0;

	TAILQ_FOREACH(p, list, link)
	{
		n += p->left;
		if (n >= VERDICT_CONN_MAX_WAITING)
			break;
	}
	return n;
}

/* Look one item up; settles it unless it must wait on a fetch. */
static void
verdict_item(
    struct verdict_pending *p, size_t i, const char *url, size_t len, int wait)
{
	struct verdict_item *it = &p->items[i];
	const struct cache_entry *e;
	enum url_err ue;

	it->p = p;
	if ((ue = url_parse(url, len, &it->u)) != URL_OK) {
		verdict_error(it, proto_url_err(ue), url_err_message(ue));
		return;
	}
	it->parsed = 1;
	if (strcmp(it->u.path, "/robots.txt") == 0) {
		verdict_robots_txt(it);
		return;
	}
	it->w.cb = verdict_wait_cb;
	it->w.arg = it;
	switch (cache_check(p->rd->cache, it->u.origin, wait, &it->w, &e)) {
	case CACHE_HIT:
		verdict_answer(p, it, e, "cache");
		verdict_settle(it, 1);
		break;
	case CACHE_STALE:
		verdict_answer(p, it, e, "stale");
		verdict_settle(it, 1);
		break;
	case CACHE_WAIT:
		if (verdict_waiting(conn_pending(p->conn)) + p->left >=
		    VERDICT_CONN_MAX_WAITING) {
			cache_waiter_cancel(&it->w);
			verdict_error(it, PE_OVERLOADED,
			    "too many checks of this connection are waiting "
			    "on fetches");
		} else
			p->left++;
		break;
	case CACHE_PENDING:
		verdict_pending_answer(it);
		break;
	case CACHE_OVERLOADED:
		verdict_error(it, PE_OVERLOADED,
		    "too many checks are waiting on fetches");
		break;
	case CACHE_NOMEM:
		verdict_error(it, PE_INTERNAL, "out of memory");
		break;
	}
}

/* Park p on its connection until its fetches end or its deadline. */
static void
verdict_park(struct verdict_pending *p)
{
	struct timeval tv = { .tv_sec = VERDICT_WAIT_TIMEOUTS *
		                            p->rd->conf->fetch_timeout +
		                        VERDICT_WAIT_SLACK };

	p->timer = evtimer_new(p->rd->base, verdict_timeout_cb, p);
	if (p->timer == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	evtimer_add(p->timer, &tv);
	TAILQ_INSERT_TAIL(conn_pending(p->conn), p, link);
}

/* check: one URL or a batch for one agent. */
void
verdict_op(struct robotsd *rd, struct conn *c, struct request *req)
{
	size_t n = req->urls != NULL ? json_array_size(req->urls) : 1, i;
	struct verdict_pending *p;
	json_t *u;

	p = xcalloc(1, sizeof(*p) + n * sizeof(p->items[0]));
	p->rd = rd;
	p->conn = c;
	p->id = req->id != NULL ? json_incref(req->id) : NULL;
	p->root = json_incref(req->root); /* keeps agent and urls alive */
	p->urls = req->urls;
	p->agent = req->agent;
	p->agent_len = req->agent_len;
	p->n = n;
	for (i = 0; i < n; i++) {
		if (req->urls == NULL) {
			verdict_item(p, i, req->url, req->url_len, req->wait);
			continue;
		}
		u = json_array_get(req->urls, i);
		verdict_item(p, i, json_string_value(u), json_string_length(u),
		    req->wait);
	}
	if (p->left == 0)
		verdict_finish(p);
	else
		verdict_park(p);
}

/* Answer a connection's waiting checks now with "timeout". */
void
verdict_expire_all(struct verdict_list *list)
{
	struct verdict_pending *p;

	while ((p = TAILQ_FIRST(list)) != NULL)
		verdict_timeout_cb(-1, 0, p); /* unlinks and frees p */
}

/* Drop a closing connection's waiting checks; none is answered. */
void
verdict_cancel_all(struct verdict_list *list)
{
	struct verdict_pending *p;

	while ((p = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, p, link);
		verdict_free(p);
	}
}
