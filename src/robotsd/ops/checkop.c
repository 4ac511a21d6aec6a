/*
 * checkop.c: the check op. One URL or a batch of them for one agent; each
 * item is parsed, looked up and either answered at once or left waiting on
 * its origin's fetch. An item's answer is kept as a JSON fragment (the
 * fields after "ok"), and the whole answer line is assembled once every
 * item is known. Checks that wire_fast decoded and the cache answers at
 * once are written straight into one reused answer buffer instead.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "robots.h"
#include "buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "ops/checkop_int.h"
#include "jsonw.h"
#include "base/log.h"
#include "proto.h"
#include "base/reply.h"
#include "base/session.h"
#include "wire_fast.h"
#include "base/xmalloc.h"

/*
 * Answers of the fast path this long are handed to the connection instead
 * of copied into its output (the copy of a 100-URL batch's 24 KB was 7% of
 * the batch row's CPU); a new block for the next costs less from here on.
 */
#define CHECK_GIVE_MIN 4096
/* URLs one client may have waiting on fetches at once. */
#define CHECK_SESSION_MAX_WAITING 1024

struct check_item {
	struct check_waiting *p;
	struct wire_str url; /* as sent, echoed in a batch's row */
	struct url u;
	int parsed; /* u holds a URL */
	int done;   /* frag and ok are the item's answer */
	int ok;
	struct buf frag;       /* the answer's fields after "ok" */
	struct cache_waiter w; /* while waiting on a fetch */
};

struct check_waiting {
	TAILQ_ENTRY(check_waiting) link;
	const struct check_env *env;
	struct session *s;
	json_t *id;
	json_t *root;    /* the request: agent and URLs point into it, */
	char *copies;    /* or into these copies of a fast-decoded batch's */
	int batch;       /* answered "results":[...] */
	struct buf head; /* a batch: its answer up to the rows of items[] */
	size_t rows;     /* rows already in head */
	struct check_ask ask; /* its tokens in tokens[] */
	struct wire_str tokens[PROTO_MAX_TOKENS];
	size_t n, left;
	struct event *timer;
	double t0; /* when its request was read (reply.h) */
	struct check_item items[];
};

const char *const check_source_names[CHECK_SOURCES] = { "cache", "fetched",
	"stale", "shared" };
const char *const check_reason_names[CHECK_REASONS] = { "rule", "no_rule",
	"robots_txt", "unavailable", "unreachable" };

/* An item's verdict from entry e into its frag. */
static void
check_answer(struct check_waiting *p, struct check_item *it,
    const struct cache_entry *e, const char *source)
{
	struct check_url u = check_url_parsed(&it->u);

	check_verdict(&it->frag, p->env, &u, &p->ask, e, source);
}

/* Settle an item with the fields written into its frag. */
static void
check_settle(struct check_item *it, int ok)
{
	it->ok = ok;
	it->done = 1;
}

/* Settle an item with an error. */
static void
check_error(struct check_item *it, enum proto_err err, const char *msg)
{
	buf_reset(&it->frag);
	proto_error_member(&it->frag, err, msg);
	check_settle(it, 0);
}

/* An item for the URL /robots.txt itself. */
static void
check_robots_txt(struct check_item *it)
{
	struct check_url u = check_url_parsed(&it->u);

	check_robots_txt_fields(&it->frag, it->p->env, &u, &it->p->ask);
	check_settle(it, 1);
}

/* A miss with "wait":false: the fetch runs in the background. */
static void
check_pending_answer(struct check_item *it)
{
	buf_lit(&it->frag, "\"pending\":true,\"origin\":");
	jw_str(&it->frag, it->u.origin, strlen(it->u.origin));
	check_settle(it, 1);
}

/* {"id":ID,"ok":true,"results":[ the start of a batch's answer. */
static void
check_results_begin(struct buf *b, const json_t *id)
{
	buf_lit(b, "{\"id\":");
	jw_json(b, id);
	buf_lit(b, ",\"ok\":true,\"results\":[");
}

/* An item's row of a batch, or the whole answer to one URL, into b. */
static void
check_object(
    struct buf *b, const struct check_waiting *p, const struct check_item *it)
{
	if (p->batch)
		check_row_begin(b, &it->url, it->ok);
	else {
		buf_lit(b, "{\"id\":");
		jw_json(b, p->id);
		check_ok(b, it->ok);
	}
	buf_add(b, it->frag.p, it->frag.len);
	buf_lit(b, "}");
}

/* Release a pending check and everything its items hold. */
static void
check_free(struct check_waiting *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		cache_waiter_cancel(&p->items[i].w);
		if (p->items[i].parsed)
			url_clear(&p->items[i].u);
		buf_clear(&p->items[i].frag);
	}
	if (p->timer != NULL)
		event_free(p->timer);
	json_decref(p->id);
	json_decref(p->root);
	free(p->copies);
	buf_clear(&p->head);
	free(p);
}

/* The whole answer line of p into b. */
static void
check_line(struct buf *b, const struct check_waiting *p)
{
	size_t i;

	if (!p->batch) {
		check_object(b, p, &p->items[0]);
		buf_lit(b, "\n");
		return;
	}
	if (p->head.state != BUF_OK)
		b->state = p->head.state;
	buf_add(b, p->head.p, p->head.len);
	for (i = 0; i < p->n; i++) {
		if (i > 0 || p->rows > 0)
			buf_lit(b, ",");
		check_object(b, p, &p->items[i]);
	}
	buf_lit(b, "]}\n");
}

/* Assemble and send the whole answer line; frees p. */
static void
check_finish(struct check_waiting *p)
{
	struct session *s = p->s;
	struct buf b = BUF_INIT(0);
	double t0;
	unsigned char kind = s->out->kind;

	check_line(&b, p);
	if (p->timer != NULL)
		TAILQ_REMOVE(&s->waiting, p, link);
	if (b.state != BUF_OK) {
		buf_reset(&b);
		proto_error(&b, p->id, PE_INTERNAL, "out of memory");
	}
	t0 = s->out->t0;
	if (p->timer != NULL) {
		s->out->t0 = p->t0; /* the latency is this request's */
		s->out->kind = REPLY_CHECK_WAITED;
	}
	if (b.state == BUF_OK)
		s->out->ops->send(s->out, b.p, b.len);
	s->out->t0 = t0;
	s->out->kind = kind;
	if (p->timer != NULL)
		s->out->ops->settled(s->out);
	buf_clear(&b);
	check_free(p);
}

/* A fetch an item waited on ended: answer it from the fresh entry. */
static void
check_wait_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct check_item *it = w->arg;
	struct check_waiting *p = it->p;

	if (w->error != NULL)
		check_error(it, PE_INTERNAL, w->error);
	else {
		check_answer(p, it, e, e->shared ? "shared" : "fetched");
		check_settle(it, 1);
	}
	p->s->nwaiting--;
	if (--p->left == 0)
		check_finish(p);
}

/* A waiting check ran out of time: the items still waiting time out. */
static void
check_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct check_waiting *p = arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < p->n; i++) {
		if (p->items[i].done)
			continue;
		cache_waiter_cancel(&p->items[i].w);
		check_error(&p->items[i], PE_TIMEOUT,
		    "the robots.txt fetch did not end in time");
	}
	p->s->nwaiting -= p->left;
	p->left = 0;
	check_finish(p);
}

/*
 * A batch item of the common shape whose origin is settled in the cache:
 * split by url_fast() on the stack and answered at once, without the
 * URL's allocations; 0 when the item needs the full way.
 */
static int
check_item_cached(struct check_item *it)
{
	char ubuf[CHECK_FAST_URL_MAX + 3];
	struct check_waiting *p = it->p;
	struct check_url cu;
	struct url_view v;

	if (it->url.len > CHECK_FAST_URL_MAX ||
	    !url_fast(it->url.p, it->url.len, ubuf, sizeof(ubuf), &v))
		return 0;
	cu = check_url_fast(&v);
	if (!check_cached_verdict(&it->frag, p->env, &cu, &p->ask, NULL))
		return 0;
	check_settle(it, 1);
	return 1;
}

/* Look item i up; settles it unless it must wait on a fetch. */
static void
check_item(struct check_waiting *p, size_t i, int wait)
{
	struct check_item *it = &p->items[i];
	const struct cache_entry *e;
	enum url_err ue;

	it->p = p;
	if (check_item_cached(it))
		return;
	if ((ue = url_parse(it->url.p, it->url.len, &it->u)) != URL_OK) {
		check_error(it, proto_url_err(ue), url_err_message(ue));
		return;
	}
	it->parsed = 1;
	if (strcmp(it->u.path, "/robots.txt") == 0) {
		check_robots_txt(it);
		return;
	}
	it->w.cb = check_wait_cb;
	it->w.arg = it;
	switch (cache_check(p->env->cache, it->u.origin, wait, &it->w, &e)) {
	case CACHE_HIT:
		check_answer(p, it, e, "cache");
		check_settle(it, 1);
		break;
	case CACHE_STALE:
		check_answer(p, it, e, "stale");
		check_settle(it, 1);
		break;
	case CACHE_WAIT:
		if (p->s->nwaiting + p->left >= CHECK_SESSION_MAX_WAITING) {
			log_event(LOG_WARNING, "overloaded",
			    "why=connection_max_waiting max=%d",
			    CHECK_SESSION_MAX_WAITING);
			cache_waiter_cancel(&it->w);
			check_error(it, PE_OVERLOADED,
			    "too many checks of this connection are waiting "
			    "on fetches");
		} else
			p->left++;
		break;
	case CACHE_PENDING:
		check_pending_answer(it);
		break;
	case CACHE_OVERLOADED:
		log_event(LOG_WARNING, "overloaded", "why=max_waiting");
		check_error(it, PE_OVERLOADED,
		    "too many checks are waiting on fetches");
		break;
	case CACHE_NOMEM:
	case CACHE_MISS: /* cache_check() never answers it */
		check_error(it, PE_INTERNAL, "out of memory");
		break;
	}
}

/* Park p on its session until its fetches end or its deadline. */
static void
check_park(struct check_waiting *p)
{
	double t = p->env->wait_timeout;
	struct timeval tv = { .tv_sec = (time_t)t,
		.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6) };

	p->t0 = p->s->out->t0;
	p->timer = evtimer_new(p->env->base, check_timeout_cb, p);
	if (p->timer == NULL)
		fatalx("out of memory parking a check");
	evtimer_add(p->timer, &tv);
	TAILQ_INSERT_TAIL(&p->s->waiting, p, link);
	p->s->nwaiting += p->left;
}

/* A check of n items for session s, for agent (borrowed). */
static struct check_waiting *
check_new(const struct check_env *env, struct session *s, size_t n,
    const char *agent, size_t agent_len)
{
	struct check_waiting *p;

	p = xcalloc(1, sizeof(*p) + n * sizeof(p->items[0]));
	p->env = env;
	p->s = s;
	p->n = n;
	p->ask.agent = agent;
	p->ask.agent_len = agent_len;
	return p;
}

/* Look every item of p up, then answer now or park until they are known. */
static void
check_run(struct check_waiting *p, int wait)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		check_item(p, i, wait);
	if (p->left == 0)
		check_finish(p);
	else
		check_park(p);
}

/* check: one URL or a batch for one agent. */
void
check_op(const struct check_env *env, struct session *s, struct request *req)
{
	size_t n = req->urls != NULL ? json_array_size(req->urls) : 1, i;
	struct check_waiting *p;
	json_t *u;

	p = check_new(env, s, n, req->agent, req->agent_len);
	p->id = req->id != NULL ? json_incref(req->id) : NULL;
	p->root = json_incref(req->root); /* keeps its strings alive */
	p->ask.usage = req->usage;
	if (req->tokens != NULL) {
		p->ask.tokens = p->tokens;
		json_array_foreach(req->tokens, i, u)
		{
			p->tokens[i].p = json_string_value(u);
			p->tokens[i].len = json_string_length(u);
		}
		p->ask.ntokens = json_array_size(req->tokens);
	}
	if (req->urls == NULL) {
		p->items[0].url.p = req->url;
		p->items[0].url.len = req->url_len;
	} else {
		p->batch = 1;
		check_results_begin(&p->head, p->id);
		for (i = 0; i < n; i++) {
			u = json_array_get(req->urls, i);
			p->items[i].url.p = json_string_value(u);
			p->items[i].url.len = json_string_length(u);
		}
	}
	check_run(p, req->wait);
}

/* Answer a session's waiting checks now with "timeout". */
void
check_expire_all(struct session *s)
{
	struct check_waiting *p;

	while ((p = TAILQ_FIRST(&s->waiting)) != NULL)
		check_timeout_cb(-1, 0, p); /* unlinks and frees p */
}

/* Drop a closing session's waiting checks; none is answered. */
void
check_cancel_all(struct session *s)
{
	struct check_waiting *p;

	while ((p = TAILQ_FIRST(&s->waiting)) != NULL) {
		TAILQ_REMOVE(&s->waiting, p, link);
		s->nwaiting -= p->left;
		check_free(p);
	}
}

/* {"id":ID,"ok":true, for the fast path's integer id (or none). */
static void
check_fast_begin(struct buf *b, const struct wire_check *wc)
{
	buf_lit(b, "{\"id\":");
	if (wc->has_id)
		jw_int(b, wc->id);
	else
		buf_lit(b, "null");
	buf_lit(b, ",\"ok\":true,");
}

/* Send the answer buffer; 0 when it failed (the full path answers). */
static int
check_fast_send(const struct check_env *env, struct session *s)
{
	struct buf *b = env->answer;
	size_t len;
	char *line, *fit;

	if (b->state != BUF_OK)
		return 0; /* out of memory: the full path answers "internal" */
	if (b->len < CHECK_GIVE_MIN || s->out->ops->give == NULL) {
		s->out->ops->send(s->out, b->p, b->len);
		return 1;
	}
	/*
	 * A batch's answer: handed over in a block of its own size (the
	 * output budget counts its bytes), and the next answer gets a block
	 * of that size to start from.
	 */
	line = buf_take(b, &len);
	if ((fit = realloc(line, len)) != NULL)
		line = fit;
	s->out->ops->give(s->out, line, len);
	(void)buf_reserve(b, len);
	return 1;
}

/*
 * Answer a fast-path check of URL u from a settled cache entry into the
 * reused answer buffer; 0 (nothing answered) for /robots.txt or a miss.
 */
static int
check_fast_answer(const struct check_env *env, struct session *s,
    const struct wire_check *wc, const struct check_ask *a,
    const struct check_url *u)
{
	struct buf *b = env->answer;

	buf_reset(b);
	check_fast_begin(b, wc);
	if (!check_cached_verdict(b, env, u, a, NULL))
		return 0;
	buf_lit(b, "}\n");
	return check_fast_send(env, s);
}

/*
 * A batch row for url, split as cu, into b: from a settled cache entry,
 * or at once for /robots.txt. 0 on a miss (b then holds a partial row).
 */
static int
check_row_cached(struct buf *b, const struct check_env *env,
    const struct check_ask *a, const struct wire_str *url,
    const struct check_url *cu, struct check_memo *m)
{
	check_row_begin(b, url, 1);
	if (strcmp(cu->path, "/robots.txt") == 0)
		check_robots_txt_fields(b, env, cu, a);
	else if (!check_cached_verdict(b, env, cu, a, m))
		return 0;
	buf_lit(b, "}");
	return 1;
}

/*
 * A batch row for url straight into b, as check_item() and check_object()
 * would write it: split by url_fast() on the stack when it can, a bad URL
 * answered with its error. 0 when its origin is not settled in the cache
 * (b then holds a partial row).
 */
static int
check_row_now(struct buf *b, const struct check_env *env,
    const struct check_ask *a, const struct wire_str *url, struct check_memo *m)
{
	char ubuf[CHECK_FAST_URL_MAX + 3];
	struct check_url cu;
	struct url_view v;
	struct url u;
	enum url_err ue;
	int done;

	if (url->len <= CHECK_FAST_URL_MAX &&
	    url_fast(url->p, url->len, ubuf, sizeof(ubuf), &v)) {
		cu = check_url_fast(&v);
		return check_row_cached(b, env, a, url, &cu, m);
	}
	if ((ue = url_parse(url->p, url->len, &u)) != URL_OK) {
		check_row_begin(b, url, 0);
		proto_error_member(b, proto_url_err(ue), url_err_message(ue));
		buf_lit(b, "}");
		return 1;
	}
	cu = check_url_parsed(&u);
	done = check_row_cached(b, env, a, url, &cu, m);
	url_clear(&u);
	return done;
}

/*
 * Row first of a fast-decoded batch must wait on a fetch (or start one):
 * the answer written so far becomes the head of a check that takes the
 * rest of the batch the full way, with copies of its strings, since the
 * line is gone by the time a fetch ends.
 */
static int
check_batch_rest(const struct check_env *env, struct session *s,
    const struct wire_check *wc, size_t first)
{
	struct buf *b = env->answer;
	size_t i, bytes = wc->agent_len;
	struct check_waiting *p;
	char *c;

	if (b->state != BUF_OK)
		return 0; /* out of memory: the full path answers "internal" */
	for (i = first; i < wc->nurls; i++)
		bytes += wc->urls[i].len;
	c = xmalloc(bytes + 1);
	memcpy(c, wc->agent, wc->agent_len);
	p = check_new(env, s, wc->nurls - first, c, wc->agent_len);
	p->ask.usage = wc->usage;
	p->copies = c;
	c += wc->agent_len;
	for (i = 0; i < p->n; i++) {
		p->items[i].url = wc->urls[first + i];
		memcpy(c, p->items[i].url.p, p->items[i].url.len);
		p->items[i].url.p = c;
		c += p->items[i].url.len;
	}
	if (wc->has_id && (p->id = json_integer(wc->id)) == NULL)
		fatalx("out of memory parking a check");
	p->batch = 1;
	p->rows = first;
	buf_add(&p->head, b->p, b->len);
	check_run(p, wc->wait);
	return 1;
}

/*
 * A batch that wire_fast decoded: each row written straight into the
 * answer buffer as its URL is looked up, without allocating (for the
 * common URL shape). At the first row that must wait, the rest goes the
 * full way (check_batch_rest()). 0 when nothing was done.
 */
static int
check_batch_fast(
    const struct check_env *env, struct session *s, const struct wire_check *wc)
{
	const struct check_ask a = { wc->agent, wc->agent_len, wc->usage, 0,
		NULL };
	struct buf *b = env->answer;
	struct check_memo m = { NULL };
	size_t i, mark;

	buf_reset(b);
	check_fast_begin(b, wc);
	buf_lit(b, "\"results\":[");
	for (i = 0; i < wc->nurls; i++) {
		mark = b->len;
		if (i > 0)
			buf_lit(b, ",");
		if (!check_row_now(b, env, &a, &wc->urls[i], &m)) {
			b->len = mark;
			return check_batch_rest(env, s, wc, i);
		}
	}
	buf_lit(b, "]}\n");
	return check_fast_send(env, s);
}

/*
 * The fast path: a check decoded by wire_fast. A single URL is answered
 * at once from a settled cache entry: no JSON tree, and for the common URL
 * shape (url_fast(), split on the stack) no allocation at all; other URLs
 * go through url_parse(). 0 when the check needs the full path (a miss, a
 * bad URL): nothing was answered or counted. A batch: check_batch_fast().
 */
int
check_fast(
    const struct check_env *env, struct session *s, const struct wire_check *wc)
{
	const struct check_ask a = { wc->agent, wc->agent_len, wc->usage, 0,
		NULL };
	char ubuf[CHECK_FAST_URL_MAX + 3];
	struct url_view v;
	struct check_url cu;
	struct url u;
	int done;

	if (wc->urls != NULL)
		return check_batch_fast(env, s, wc);
	if (url_fast(wc->url, wc->url_len, ubuf, sizeof(ubuf), &v)) {
		cu = check_url_fast(&v);
		return check_fast_answer(env, s, wc, &a, &cu);
	}
	if (url_parse(wc->url, wc->url_len, &u) != URL_OK)
		return 0;
	cu = check_url_parsed(&u);
	done = check_fast_answer(env, s, wc, &a, &cu);
	url_clear(&u);
	return done;
}
