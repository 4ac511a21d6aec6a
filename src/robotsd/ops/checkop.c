/*
 * checkop.c: the check op. One URL or a batch of them for one agent, from
 * either decoder in one shape (struct wire_check, its strings borrowed).
 * Each URL is split once (robots_url_split(), on the stack) and looked
 * up; the rows of URLs whose origin is settled in the cache are written
 * straight into one reused answer buffer. At the first URL that is not,
 * the answer so far becomes the head of a parked check, which copies the
 * strings it still needs once and takes the rest of the URLs one by one
 * (the first with the split it was looked up with): each either settles
 * at once or waits on its origin's fetch, keeping its split's origin and
 * path for the answer, and the whole line is sent once the last one is
 * known or the check's deadline passes.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "ops/checkop_int.h"
#include "base/log.h"
#include "wire/page.h"
#include "wire/proto.h"
#include "iface/reply.h"
#include "ops/session.h"
#include "ops/tdmres.h"
#include "wire/wire_fast.h"
#include "base/xmalloc.h"

/*
 * Answers this long are handed to the connection instead of copied into
 * its output (the copy of a 100-URL batch's 24 KB was 7% of the batch
 * row's CPU); a new block for the next costs less from here on.
 */
#define CHECK_GIVE_MIN 4096
/* URLs one client may have waiting on fetches at once. */
#define CHECK_SESSION_MAX_WAITING 1024

/* A URL of a parked check. */
struct check_item {
	struct check_waiting *p;
	struct wire_str url;   /* a copy; echoed in a batch's row */
	int done;              /* row is the item's answer */
	int tdm_wait;          /* w waits on tdmrep.json's fetch */
	int plain;             /* as robots_url's, for split.origin */
	struct url_view split; /* while waiting: url split, in kept */
	char *kept;            /* split's origin and path */
	struct buf row;        /* its whole row (or object, one URL) */
	struct cache_waiter w; /* while waiting on a fetch */
};

/* A check parked until the fetches its URLs wait on end. */
struct check_waiting {
	TAILQ_ENTRY(check_waiting) link;
	struct check_run run;  /* run.req is req */
	struct wire_check req; /* strings in copies; URLs in items[] */
	json_t *id;            /* the full decoder's id, held */
	struct wire_page page; /* its "page": pairs and strings in page_copy */
	void *page_copy;
	char *copies; /* the agent and tokens, the URLs of items[] */
	struct wire_str tokens[PROTO_MAX_TOKENS];
	struct buf head; /* the answer up to the rows of items[] */
	struct jw hw;    /* the writer at the end of head (its b rebound) */
	size_t n, left;
	struct event *timer;
	struct check_item items[];
};

/*
 * The entry the last row was answered from: URLs of one site come in
 * runs, and the rows of a run skip the origin's lookup (hashing: a tenth
 * of a cached batch's CPU) through cache_check_again(). Kept only while
 * nothing can remove an entry: no fetch started since (cache_check()).
 */
struct check_memo {
	const struct cache_entry *e; /* NULL: none to reuse */
};

enum check_row {
	ROW_DONE,     /* the row is written */
	ROW_MISS,     /* not settled in the cache; nothing written or counted */
	ROW_WAIT,     /* the waiter is queued on the origin's fetch */
	ROW_WAIT_TDM, /* the waiter is queued on its tdmrep.json's fetch */
};

/*
 * Look origin up: settled in the cache (with the memo's entry when it is
 * that origin's), or else, with a waiter, the way cache_check() answers.
 */
static enum cache_status
check_lookup(const struct check_run *r, const char *origin,
    struct check_memo *m, struct cache_waiter *w, const struct cache_entry **e)
{
	struct cache *cache = r->env->cache;
	enum cache_status st;

	*e = NULL;
	if (m->e != NULL && strcmp(m->e->origin, origin) == 0)
		st = cache_check_again(cache, m->e, e);
	else
		st = cache_check_cached(cache, origin, e);
	m->e = *e; /* NULL on a miss: cache_check() may start a fetch,
	            * and an entry make room for its origin */
	if (st != CACHE_MISS || w == NULL)
		return st;
	return cache_check(cache, origin, r->req->wait, w, e);
}

/*
 * Split url of check r into *u: 1 when that answered it (a bad URL or
 * /robots.txt: its row written as the next value of jw, nothing held in
 * *u), else 0 with *u to look up.
 */
static int
check_split(struct jw *jw, const struct check_run *r,
    const struct wire_str *url, struct robots_url *u)
{
	enum url_err ue;

	if ((ue = robots_url_split(url->p, url->len, u)) != URL_OK) {
		check_error_object(
		    jw, r, url, proto_url_err(ue), robots_url_err_message(ue));
		return 1;
	}
	if (strcmp(u->v.path, "/robots.txt") != 0)
		return 0;
	check_begin(jw, r, url, 1);
	check_robots_txt_fields(jw, r, u);
	jw_end(jw);
	robots_url_split_clear(u);
	return 1;
}

/*
 * The source of a row answered from a settled entry e: the cache, unless
 * the check waited on tdmrep.json's fetch (then it waited on a fetch).
 */
static enum check_source
check_hit_source(const struct check_run *r, const struct cache_entry *e)
{
	if (!r->waited)
		return CHECK_CACHE;
	return e->shared ? CHECK_SHARED : CHECK_FETCHED;
}

/*
 * The TDMRep step of URL u of check r (tdmres.h): ROW_DONE to go on to
 * its robots.txt, else ROW_MISS or ROW_WAIT_TDM (u kept, as for
 * ROW_MISS and ROW_WAIT).
 */
static enum check_row
check_tdm_step(const struct check_run *r, const struct robots_url *u,
    struct check_memo *m, struct cache_waiter *w)
{
	const struct check_env *env = r->env;
	struct tdm_step t = { env->tdm, env->cache, env->tdm_mode, r->req->tdm,
		r->req->wait, 0 };
	enum tdm_gate g;

	if (!r->req->tdm && env->tdm_mode != TDM_ALWAYS)
		return ROW_DONE;
	g = tdm_gate(&t, u->v.origin, w);
	/*
	 * The gate may have made an entry (robots.txt's fetch alongside, or
	 * tdmrep.json's, whose cache shares the byte cap), which can evict
	 * the idle one the memo holds, whatever it answers (an overloaded
	 * tdmrep.json answers TDM_GO).
	 */
	if (t.evicted)
		m->e = NULL;
	if (g == TDM_GO)
		return ROW_DONE;
	return g == TDM_MISS ? ROW_MISS : ROW_WAIT_TDM;
}

/*
 * The one way a URL of check r, split into u (check_split()), is
 * answered: its row (or whole object) as the next value of jw when its
 * origin is settled in the cache or, with a waiter, whatever
 * cache_check() says but "wait". u is cleared, but on ROW_MISS and
 * ROW_WAIT, when the caller keeps the split for the URL's answer.
 */
static enum check_row
check_row(struct jw *jw, const struct check_run *r, const struct wire_str *url,
    struct robots_url *u, struct check_memo *m, struct cache_waiter *w)
{
	const struct cache_entry *e;
	enum check_row done = ROW_DONE;

	if ((done = check_tdm_step(r, u, m, w)) != ROW_DONE)
		return done; /* u kept */
	switch (check_lookup(r, u->v.origin, m, w, &e)) {
	case CACHE_HIT:
		check_open(jw, r, url);
		check_verdict(
		    jw, r, &u->v, u->plain, e, check_hit_source(r, e));
		jw_end(jw);
		break;
	case CACHE_STALE:
		check_open(jw, r, url);
		check_verdict(jw, r, &u->v, u->plain, e, CHECK_STALE);
		jw_end(jw);
		break;
	case CACHE_MISS:
		done = w == NULL ? ROW_MISS : ROW_DONE;
		if (w != NULL) /* cache_check() never answers it */
			check_error_object(
			    jw, r, url, PE_INTERNAL, "out of memory");
		break;
	case CACHE_WAIT:
		done = ROW_WAIT;
		break;
	case CACHE_PENDING:
		check_begin(jw, r, url, 1);
		check_pending_fields(jw, u);
		jw_end(jw);
		break;
	case CACHE_OVERLOADED:
		log_event(LOG_WARNING, "overloaded", "why=max_waiting");
		check_error_object(jw, r, url, PE_OVERLOADED,
		    "too many checks are waiting on fetches");
		break;
	case CACHE_NOMEM:
		check_error_object(jw, r, url, PE_INTERNAL, "out of memory");
		break;
	}
	if (done == ROW_DONE)
		robots_url_split_clear(u);
	return done;
}

/*
 * Send the answer line in b of check r, stamped as its kind: copied, or
 * when long handed over in a block of its own size (the output budget
 * counts its bytes); reuse: b is kept for the next answer, which gets a
 * block of that size to start from. An answer that ran out of memory is
 * "internal" instead.
 */
static void
check_send(
    const struct check_run *r, enum reply_kind kind, struct buf *b, int reuse)
{
	const struct reply_stamp st = { r->t0, (unsigned char)kind };
	struct reply *out = r->s->out;
	struct buf err = BUF_INIT(0);
	size_t len;
	char *line, *fit;

	if (b->state != BUF_OK) {
		check_error_line(&err, r->req, PE_INTERNAL, "out of memory");
		b = &err;
	}
	if (b->len < CHECK_GIVE_MIN || out->ops->give == NULL)
		out->ops->send(out, &st, b->p, b->len);
	else {
		line = buf_take(b, &len);
		if ((fit = realloc(line, len)) != NULL)
			line = fit;
		out->ops->give(out, &st, line, len);
		if (reuse)
			(void)buf_reserve(b, len);
	}
	buf_clear(&err);
}

/* Release a parked check and everything its items hold. */
static void
check_free(struct check_waiting *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		cache_waiter_cancel(&p->items[i].w);
		buf_clear(&p->items[i].row);
		free(p->items[i].kept);
	}
	if (p->timer != NULL)
		event_free(p->timer);
	json_decref(p->id);
	free(p->page_copy);
	free(p->copies);
	buf_clear(&p->head);
	free(p);
}

/* Assemble and send the whole answer line of p; frees p. */
static void
check_finish(struct check_waiting *p)
{
	struct session *s = p->run.s;
	struct buf b = BUF_INIT(0);
	struct jw w = p->hw;
	int waited = p->timer != NULL;
	size_t i;

	if (p->head.state != BUF_OK)
		b.state = p->head.state;
	buf_add(&b, p->head.p, p->head.len);
	w.b = &b;
	for (i = 0; i < p->n; i++) {
		if (p->items[i].row.state != BUF_OK && b.state == BUF_OK)
			b.state = p->items[i].row.state; /* refused, not cut */
		jw_vraw(&w, p->items[i].row.p, p->items[i].row.len);
	}
	if (p->run.batch) {
		jw_end(&w); /* "results" */
		jw_end(&w);
	}
	buf_lit(&b, "\n");
	if (waited)
		TAILQ_REMOVE(&s->waiting, p, link);
	/* the latency is this check's, from its own line */
	check_send(
	    &p->run, waited ? REPLY_CHECK_WAITED : REPLY_CHECK_CACHED, &b, 0);
	if (waited)
		s->out->ops->settled(s->out);
	buf_clear(&b);
	check_free(p);
}

/* The row of item it of p: an error object. */
static void
check_item_error(struct check_waiting *p, struct check_item *it,
    enum proto_err err, const char *msg)
{
	struct jw rw;

	jw_init(&rw, &it->row);
	check_error_object(&rw, &p->run, &it->url, err, msg);
}

static void check_item(struct check_waiting *, struct check_item *,
    struct check_memo *, struct robots_url *, const struct check_run *);

/*
 * The tdmrep.json fetch item it waited on ended: on to its robots.txt,
 * the TDMRep step done (it is not taken again, whatever that fetch gave).
 */
static void
check_item_again(struct check_waiting *p, struct check_item *it)
{
	struct check_run r = p->run;
	struct wire_check req = p->req;
	struct check_memo m = { NULL };
	size_t left = p->left;

	req.tdm = 0;
	r.req = &req;
	r.waited = 1; /* this check waited on a fetch */
	it->tdm_wait = 0;
	free(it->kept); /* split again */
	it->kept = NULL;
	p->left--;
	p->run.s->nwaiting--;
	check_item(p, it, &m, NULL, &r);
	p->run.s->nwaiting += p->left - (left - 1);
	if (p->left == 0)
		check_finish(p);
}

/*
 * A fetch an item waited on ended: answer it from the fresh entry, with
 * the split its URL was looked up with.
 */
static void
check_wait_cb(struct cache_waiter *w, const struct cache_entry *e)
{
	struct check_item *it = w->arg;
	struct check_waiting *p = it->p;
	struct jw rw;

	if (it->tdm_wait) {
		check_item_again(p, it);
		return;
	}
	if (w->error != NULL)
		check_item_error(p, it, PE_INTERNAL, w->error);
	else {
		jw_init(&rw, &it->row);
		check_open(&rw, &p->run, &it->url);
		check_verdict(&rw, &p->run, &it->split, it->plain, e,
		    e->shared ? CHECK_SHARED : CHECK_FETCHED);
		jw_end(&rw);
	}
	it->done = 1;
	p->run.s->nwaiting--;
	if (--p->left == 0)
		check_finish(p);
}

/* A parked check ran out of time: the items still waiting time out. */
static void
check_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct check_waiting *p = arg;
	struct check_item *it;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < p->n; i++) {
		it = &p->items[i];
		if (it->done)
			continue;
		cache_waiter_cancel(&it->w);
		check_item_error(p, it, PE_TIMEOUT,
		    it->tdm_wait ? "the tdmrep.json fetch did not end in time"
		                 : "the robots.txt fetch did not end in time");
		it->done = 1;
	}
	p->run.s->nwaiting -= p->left;
	p->left = 0;
	check_finish(p);
}

/* Keep split u of item it while it waits: origin and path copied. */
static void
check_item_keep(struct check_item *it, const struct robots_url *u)
{
	size_t o = u->v.origin_len, n = u->v.path_len;
	char *k = it->kept = xmalloc(o + n + 2);

	memcpy(k, u->v.origin, o);
	k[o] = '\0';
	memcpy(k + o + 1, u->v.path, n);
	k[o + 1 + n] = '\0';
	it->split = (struct url_view){ k, o, k + o + 1, n };
	it->plain = u->plain;
}

/*
 * Answer item it of p, or leave it waiting on its origin's fetch; its
 * URL split in first when the caller has split it already (taken), else
 * split here; as r when given (p's run past its TDMRep step), else as
 * p's run.
 */
static void
check_item(struct check_waiting *p, struct check_item *it, struct check_memo *m,
    struct robots_url *first, const struct check_run *r)
{
	struct session *s = p->run.s;
	struct robots_url own, *u = first != NULL ? first : &own;
	enum check_row row;
	struct jw rw;

	it->p = p;
	it->w.cb = check_wait_cb;
	it->w.arg = it;
	it->done = 1;
	r = r != NULL ? r : &p->run;
	jw_init(&rw, &it->row);
	if (first == NULL && check_split(&rw, r, &it->url, u))
		return;
	row = check_row(&rw, r, &it->url, u, m, &it->w);
	it->tdm_wait = row == ROW_WAIT_TDM;
	if (row != ROW_WAIT && row != ROW_WAIT_TDM)
		return;
	if (s->nwaiting + p->left >= CHECK_SESSION_MAX_WAITING) {
		log_event(LOG_WARNING, "overloaded",
		    "why=connection_max_waiting max=%d",
		    CHECK_SESSION_MAX_WAITING);
		cache_waiter_cancel(&it->w);
		check_item_error(p, it, PE_OVERLOADED,
		    "too many checks of this connection are waiting on "
		    "fetches");
	} else {
		check_item_keep(it, u);
		it->done = 0;
		p->left++;
	}
	robots_url_split_clear(u);
}

/* Copy len bytes to *c, moving it on; the copy. */
static const char *
check_copy(char **c, const char *s, size_t len)
{
	const char *start = *c;

	memcpy(*c, s, len);
	*c += len;
	return start;
}

/* Pair i of page: its headers, then its meta. */
static const struct wire_pair *
check_page_pair(const struct wire_page *page, size_t i)
{
	return i < page->nheaders ? &page->headers[i]
	                          : &page->meta[i - page->nheaders];
}

/* page into *pg with its own copy: one block, returned (free() it). */
static void *
check_page_copy(const struct wire_page *page, struct wire_page *pg)
{
	size_t i, n = page->nheaders + page->nmeta;
	size_t bytes = n * sizeof(struct wire_pair) + 1;
	const struct wire_pair *from;
	struct wire_pair *to;
	char *c;

	for (i = 0; i < n; i++) {
		from = check_page_pair(page, i);
		bytes += from->name.len + from->value.len;
	}
	to = xmalloc(bytes);
	c = (char *)(to + n);
	for (i = 0; i < n; i++) {
		from = check_page_pair(page, i);
		to[i] = *from;
		to[i].name.p = check_copy(&c, from->name.p, from->name.len);
		to[i].value.p = check_copy(&c, from->value.p, from->value.len);
	}
	*pg = (struct wire_page){ 1, to, page->nheaders, to + page->nheaders,
		page->nmeta };
	return to;
}

/*
 * The check r from its URL urls[0] on (n of them; the answer so far in
 * head, written by hw): made to outlive its line, with its own copies of
 * the strings it still needs (one block) and of its page's pairs.
 */
static struct check_waiting *
check_keep(const struct check_run *r, const struct buf *head,
    const struct jw *hw, const struct wire_str *urls, size_t n)
{
	const struct wire_check *req = r->req;
	struct check_waiting *p;
	size_t i, bytes = req->agent_len + 1;
	char *c;

	for (i = 0; i < req->ntokens; i++)
		bytes += req->tokens[i].len;
	for (i = 0; i < n; i++)
		bytes += urls[i].len;
	p = xcalloc(1, sizeof(*p) + n * sizeof(p->items[0]));
	c = p->copies = xmalloc(bytes);
	p->req = *req;
	p->req.url = NULL;
	p->req.urls = NULL; /* in items[] */
	p->req.agent = check_copy(&c, req->agent, req->agent_len);
	for (i = 0; i < req->ntokens; i++) {
		p->tokens[i] = req->tokens[i];
		p->tokens[i].p =
		    check_copy(&c, req->tokens[i].p, req->tokens[i].len);
	}
	if (req->tokens != NULL)
		p->req.tokens = p->tokens;
	for (i = 0; i < n; i++) {
		p->items[i].url = urls[i];
		p->items[i].url.p = check_copy(&c, urls[i].p, urls[i].len);
	}
	if (req->json_id != NULL)
		p->req.json_id = p->id = json_incref((json_t *)req->json_id);
	if (req->page != NULL) {
		p->page_copy = check_page_copy(req->page, &p->page);
		p->req.page = &p->page;
	}
	p->run = *r;
	p->run.req = &p->req;
	p->run.ask = (struct check_ask){ p->req.agent, p->req.agent_len,
		p->req.usage, p->req.ntokens, p->req.tokens, p->req.page,
		p->req.tdm, r->env->tdm };
	if (head->state != BUF_OK)
		p->head.state = head->state;
	buf_add(&p->head, head->p, head->len);
	p->hw = *hw;
	p->hw.b = NULL; /* rebound to the whole answer when it is sent */
	p->n = n;
	return p;
}

/* Park p on its session until its fetches end or its deadline. */
static void
check_park(struct check_waiting *p)
{
	double t = p->run.env->wait_timeout;
	struct timeval tv = { .tv_sec = (time_t)t,
		.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6) };

	p->timer = evtimer_new(p->run.env->base, check_timeout_cb, p);
	if (p->timer == NULL)
		fatalx("out of memory parking a check");
	evtimer_add(p->timer, &tv);
	TAILQ_INSERT_TAIL(&p->run.s->waiting, p, link);
	p->run.s->nwaiting += p->left;
}

/*
 * The URLs of r from the first one not settled in the cache, split in
 * *first (taken): each is answered or left waiting; the answer is sent
 * when none waits, else once the last fetch ends.
 */
static void
check_rest(const struct check_run *r, const struct buf *head,
    const struct jw *hw, const struct wire_str *urls, size_t n,
    struct robots_url *first)
{
	struct check_waiting *p = check_keep(r, head, hw, urls, n);
	struct check_memo m = { NULL };
	size_t i;

	for (i = 0; i < n; i++)
		check_item(p, &p->items[i], &m, i == 0 ? first : NULL, NULL);
	if (p->left == 0)
		check_finish(p);
	else
		check_park(p);
}

/* See checkop.h. */
void
check_op(const struct check_env *env, struct session *s, double t0,
    const struct wire_check *c)
{
	struct buf own = BUF_INIT(0), *b = env->answer ? env->answer : &own;
	const struct check_run r = { env, s, c,
		{ c->agent, c->agent_len, c->usage, c->ntokens, c->tokens,
		    c->page, c->tdm, env->tdm },
		c->urls != NULL, t0, 0 };
	const struct wire_str one = { c->url, c->url_len, 0 };
	const struct wire_str *urls = r.batch ? c->urls : &one;
	size_t i, n = r.batch ? c->nurls : 1;
	struct check_memo m = { NULL };
	struct robots_url u;
	struct jw w;

	buf_reset(b);
	jw_init(&w, b);
	if (r.batch)
		check_results_begin(&w, c);
	for (i = 0; i < n; i++) {
		if (check_split(&w, &r, &urls[i], &u))
			continue;
		if (check_row(&w, &r, &urls[i], &u, &m, NULL) == ROW_MISS) {
			/* nothing written; the split goes with the URL */
			check_rest(&r, b, &w, urls + i, n - i, &u);
			buf_clear(&own);
			return;
		}
	}
	if (r.batch) {
		jw_end(&w); /* "results" */
		jw_end(&w);
	}
	buf_lit(b, "\n");
	check_send(&r, REPLY_CHECK_CACHED, b, b == env->answer);
	buf_clear(&own);
}

/* The strings of a JSON array into out; their count. */
static size_t
check_strings(const json_t *a, struct wire_str *out)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) out[i] =
	    (struct wire_str){ json_string_value(v), json_string_length(v), 0 };
	return json_array_size(a);
}

/* See checkop.h: the full decoder's request in the one shape. */
void
check_request(const struct check_env *env, struct session *s, double t0,
    const struct request *req)
{
	struct wire_str urls[PROTO_MAX_URLS], tokens[PROTO_MAX_TOKENS];
	struct wire_check c = { .json_id = req->id,
		.url = req->url,
		.url_len = req->url_len,
		.agent = req->agent,
		.agent_len = req->agent_len,
		.wait = req->wait,
		.usage = req->usage,
		.tdm = req->tdm };
	struct wire_page page;

	if (req->urls != NULL) {
		c.urls = urls;
		c.nurls = check_strings(req->urls, urls);
	}
	if (req->tokens != NULL) {
		c.tokens = tokens;
		c.ntokens = check_strings(req->tokens, tokens);
	}
	if (req->page != NULL) {
		if (page_from_json(req->page, &page) == -1)
			fatalx("out of memory reading a page");
		c.page = &page;
	}
	check_op(env, s, t0, &c);
	if (req->page != NULL)
		page_from_json_clear(&page);
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
