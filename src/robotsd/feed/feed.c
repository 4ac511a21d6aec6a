/*
 * feed.c: the change feed's watchers, its event lines and its fleet
 * messages (see feed.h and docs/protocol.md, "watch").
 *
 * A change is rare (an origin's robots.txt changes a few times a year), a
 * watcher list is short, so the feed keeps its watchers in one list and
 * walks it per change; each watcher's origins are sorted for a binary
 * search. The line for one agent set is made once per change and copied
 * to each watcher with that set.
 *
 * A fleet message is JSON: {"v":1,"from":ID,"origin":..,"old":..,"new":..,
 * "at":..,"state":..,"tokens":{TOKEN:{"d":[..],"a":[..]},..}|null}. tokens
 * holds the difference for every product token either version names and
 * for "*" (any other agent), as ruldiff computes it: RFC 9309 selection
 * depends only on whether a token is named, so a receiver finds the
 * difference of any agent there. Too many tokens, or a message past
 * FEED_MSG_MAX, and tokens is null: the events then say "agents":null.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/random.h>

#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "feed/feed.h"
#include "fnv.h"
#include "wire/jsonw.h"
#include "base/log.h"
#include "iface/reply.h"
#include "base/xmalloc.h"

/*
 * Changes remembered to deliver each once (two instances fetching the same
 * change, each from its own old version): the same origin reaching the
 * same version again within the window is that change; later, it is the
 * origin going back and forth.
 */
#define FEED_SEEN 256
#define FEED_SEEN_WINDOW 600.0
/* Room kept for the last line of a watcher dropped at its output cap. */
#define FEED_RESERVE 128

static const char dropped_line[] =
    "{\"event\":\"dropped\",\"reason\":\"output_budget\"}\n";

struct feed_watcher {
	TAILQ_ENTRY(feed_watcher) link;
	struct feed *f;
	struct reply *out;
	char **origins; /* sorted */
	size_t norigins;
	int all;
	int dropped;   /* got its last line; gets nothing more */
	char **agents; /* as given; none: "*" */
	size_t nagents;
	char *akey; /* the agents joined by '\n': a line per distinct key */
};

TAILQ_HEAD(watcher_list, feed_watcher);

struct feed {
	struct watcher_list watchers;
	size_t max_output;
	feed_publish_fn pub;
	void *pub_arg;
	char id[FEED_ID_LEN + 1];
	struct {
		uint64_t h;
		double at;
	} seen[FEED_SEEN];
	size_t seen_next;
	struct feed_stats stats;
};

/* What an event line is made from: a change here, or a fleet message. */
struct feed_src {
	const char *origin, *old, *new, *state;
	double at;
	const struct feed_change *ch; /* here: the rulesets */
	json_t *tokens;               /* a message: its tokens, or NULL */
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
	f->max_output = 8 << 20;
	random_id(f->id);
	return f;
}

void
feed_free(struct feed *f)
{
	free(f);
}

void
feed_configure(struct feed *f, size_t max_output)
{
	f->max_output = max_output;
}

void
feed_set_fleet(struct feed *f, feed_publish_fn pub, void *arg)
{
	f->pub = pub;
	f->pub_arg = arg;
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

struct feed_watcher *
feed_watch(struct feed *f, struct reply *out, const char *const *origins,
    size_t n, int all, const char *const *agents, size_t nagents)
{
	struct feed_watcher *w = xcalloc(1, sizeof(*w));
	struct buf b = BUF_INIT(0);
	size_t i;

	w->f = f;
	w->out = out;
	w->all = all;
	w->origins = copy_strs(origins, all ? 0 : n);
	w->norigins = all ? 0 : n;
	qsort(w->origins, w->norigins, sizeof(char *), str_cmp);
	w->agents = copy_strs(agents, nagents);
	w->nagents = nagents;
	for (i = 0; i < nagents; i++) {
		buf_add(&b, agents[i], strlen(agents[i]));
		buf_lit(&b, "\n");
	}
	if (buf_terminate(&b) == -1)
		fatalx("out of memory adding a watcher");
	w->akey = buf_take(&b, NULL);
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
	free_strs(w->agents, w->nagents);
	free(w->akey);
	free(w);
}

int
feed_watcher_active(const struct feed_watcher *w)
{
	return w != NULL && !w->dropped;
}

/* Does w watch origin? */
static int
watches(const struct feed_watcher *w, const char *origin)
{
	return w->all || bsearch(&origin, w->origins, w->norigins,
	                     sizeof(char *), str_cmp) != NULL;
}

/* --- event lines ---------------------------------------------------------- */

/* A JSON array of strings from a token's "d" or "a" (checked on receipt). */
static void
json_pats(struct buf *b, const json_t *a)
{
	size_t i;
	const char *s;

	buf_lit(b, "[");
	for (i = 0; i < json_array_size(a); i++) {
		if (i > 0)
			buf_lit(b, ",");
		s = json_string_value(json_array_get(a, i));
		jw_str(b, s, json_string_length(json_array_get(a, i)));
	}
	buf_lit(b, "]");
}

/* The lower-case product token of agent into tok (cap bytes). */
static void
agent_token(const char *agent, char *tok, size_t cap)
{
	size_t i, n = 0;

	while (agent[n] != '\0' && (isalpha((unsigned char)agent[n]) ||
	                               agent[n] == '_' || agent[n] == '-'))
		n++;
	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++)
		tok[i] = (char)tolower((unsigned char)agent[i]);
	tok[n] = '\0';
}

/* The difference for one agent, as {"newly_disallowed":..,..} or null. */
static void
agent_diff(struct buf *b, const struct feed_src *src, const char *agent)
{
	struct ruldiff d;
	const json_t *t;
	char tok[FEED_MAX_AGENT_LEN + 1];

	if (src->ch != NULL) {
		if (ruldiff_agent(&src->ch->old, &src->ch->new, agent,
		        strlen(agent), &d) == -1) {
			buf_lit(b, "null");
			return;
		}
		ruldiff_json(b, &d);
		buf_lit(b, "}");
		ruldiff_clear(&d);
		return;
	}
	if (src->tokens == NULL) {
		buf_lit(b, "null");
		return;
	}
	agent_token(agent, tok, sizeof(tok));
	if ((t = json_object_get(src->tokens, tok)) == NULL &&
	    (t = json_object_get(src->tokens, "*")) == NULL) {
		buf_lit(b, "null");
		return;
	}
	buf_lit(b, "{\"newly_disallowed\":");
	json_pats(b, json_object_get(t, "d"));
	buf_lit(b, ",\"newly_allowed\":");
	json_pats(b, json_object_get(t, "a"));
	if (json_is_true(json_object_get(t, "u")))
		buf_lit(b, ",\"usage_changed\":true");
	else if (json_is_false(json_object_get(t, "u")))
		buf_lit(b, ",\"usage_changed\":false");
	buf_lit(b, "}");
}

static void
str_or_null(struct buf *b, const char *s)
{
	if (s != NULL)
		jw_str(b, s, strlen(s));
	else
		buf_lit(b, "null");
}

/* ,"origin":..,"old":..,"new":..,"at":..,"state":.. of a change. */
static void
change_head(struct buf *b, const char *origin, const char *old, const char *new,
    double at, const char *state)
{
	buf_lit(b, ",\"origin\":");
	str_or_null(b, origin);
	buf_lit(b, ",\"old\":");
	str_or_null(b, old);
	buf_lit(b, ",\"new\":");
	str_or_null(b, new);
	buf_lit(b, ",\"at\":");
	jw_real(b, at);
	buf_lit(b, ",\"state\":");
	str_or_null(b, state);
}

/* The event line of src for agents (none: "*"), into b. */
static void
event_line(struct buf *b, const struct feed_src *src, char *const *agents,
    size_t nagents)
{
	static char star_token[] = "*";
	static char *const star[] = { star_token };
	size_t i;

	if (nagents == 0)
		agents = star, nagents = 1;
	buf_lit(b, "{\"event\":\"changed\"");
	change_head(b, src->origin, src->old, src->new, src->at, src->state);
	buf_lit(b, ",\"agents\":{");
	for (i = 0; i < nagents; i++) {
		if (i > 0)
			buf_lit(b, ",");
		jw_str(b, agents[i], strlen(agents[i]));
		buf_lit(b, ":");
		agent_diff(b, src, agents[i]);
	}
	buf_lit(b, "}}\n");
}

/* Queue line on w, or its last line when that would pass its cap. */
static void
watcher_send(struct feed_watcher *w, const char *line, size_t len)
{
	struct reply *r = w->out;

	if (len + FEED_RESERVE > r->ops->room(r)) {
		w->dropped = 1;
		w->f->stats.dropped++;
		r->ops->send(r, dropped_line, sizeof(dropped_line) - 1);
		r->ops->finish(r); /* may close the client, and unwatch w */
		return;
	}
	w->f->stats.events++;
	r->ops->send(r, line, len);
}

/* The lines of one change, by agent set. */
struct made {
	char *akey; /* a copy: a send may close its watcher's client */
	struct buf line;
};

/* Give src's event to every watcher of its origin. */
static void
deliver(struct feed *f, const struct feed_src *src)
{
	struct feed_watcher *w, *next;
	struct made *m = NULL;
	size_t nm = 0, i;

	for (w = TAILQ_FIRST(&f->watchers); w != NULL; w = next) {
		next = TAILQ_NEXT(w, link);
		if (w->dropped || !watches(w, src->origin))
			continue;
		for (i = 0; i < nm && strcmp(m[i].akey, w->akey) != 0; i++)
			;
		if (i == nm) {
			m = xreallocarray(m, nm + 1, sizeof(*m));
			m[nm].akey = xstrdup(w->akey);
			m[nm].line = BUF_INIT(0);
			event_line(&m[nm].line, src, w->agents, w->nagents);
			nm++;
		}
		if (m[i].line.state == BUF_OK)
			watcher_send(w, m[i].line.p, m[i].line.len);
	}
	for (i = 0; i < nm; i++) {
		buf_clear(&m[i].line);
		free(m[i].akey);
	}
	free(m);
}

/* --- once only ------------------------------------------------------------ */

/* FNV-1a of s (NULL: nothing) and a 0xff that no string holds. */
static uint64_t
fnv(uint64_t h, const char *s)
{
	static const unsigned char end = 0xff;

	if (s != NULL)
		h = fnv1a64_str(h, s);
	return fnv1a64(h, &end, 1);
}

/*
 * 1 when the change was seen already: the same origin came to the same new
 * version within FEED_SEEN_WINDOW seconds of at (whatever each instance's
 * old one was); else remember it.
 */
static int
seen(struct feed *f, const char *origin, const char *new, double at)
{
	uint64_t h = fnv(fnv(FNV1A64_INIT, origin), new);
	size_t i;

	for (i = 0; i < FEED_SEEN; i++)
		if (f->seen[i].h == h &&
		    f->seen[i].at > at - FEED_SEEN_WINDOW &&
		    f->seen[i].at < at + FEED_SEEN_WINDOW)
			return 1;
	f->seen[f->seen_next].h = h;
	f->seen[f->seen_next].at = at;
	f->seen_next = (f->seen_next + 1) % FEED_SEEN;
	return 0;
}

/* --- fleet messages ------------------------------------------------------- */

/* Distinct lower-case product tokens of a change's rulesets. */
struct tokens {
	char v[FEED_MSG_TOKENS + 1][FEED_MAX_AGENT_LEN + 1];
	size_t n;
};

/* Add each group agent's token of r; -1 past FEED_MSG_TOKENS + 1. */
static int
collect_tokens(const struct robots *r, struct tokens *t)
{
	size_t g, j, len, k;
	const char *a;
	char tok[FEED_MAX_AGENT_LEN + 1];

	for (g = 0; r != NULL && g < robots_group_count(r); g++)
		for (j = 0; j < robots_group_agent_count(r, g); j++) {
			a = robots_group_agent(r, g, j, &len);
			if (len == 0 || len > FEED_MAX_AGENT_LEN)
				continue;
			for (k = 0; k < len; k++)
				tok[k] = (char)tolower((unsigned char)a[k]);
			tok[len] = '\0';
			for (k = 0; k < t->n && strcmp(t->v[k], tok) != 0; k++)
				;
			if (k < t->n)
				continue;
			if (t->n == FEED_MSG_TOKENS + 1)
				return -1;
			memcpy(t->v[t->n++], tok, len + 1);
		}
	return 0;
}

/* ,"tokens":{..} of a change; -1 (nothing written) when too many. */
static int
message_tokens(struct buf *b, const struct feed_change *ch)
{
	struct tokens *t = xcalloc(1, sizeof(*t));
	struct ruldiff d;
	size_t i;
	int rc = -1;

	memcpy(t->v[t->n++], "*", 2);
	if ((ch->old.state == RULDIFF_RULES &&
	        collect_tokens(ch->old.robots, t) == -1) ||
	    (ch->new.state ==
	        RULDIFF_RULES &&collect_tokens(ch->new.robots, t) == -1))
		goto out;
	buf_lit(b, ",\"tokens\":{");
	for (i = 0; i < t->n; i++) {
		if (ruldiff_agent(&ch->old, &ch->new, t->v[i], strlen(t->v[i]),
		        &d) == -1) {
			b->state = BUF_NOMEM;
			goto out;
		}
		if (i > 0)
			buf_lit(b, ",");
		jw_str(b, t->v[i], strlen(t->v[i]));
		buf_lit(b, ":{\"d\":");
		ruldiff_pats_json(b, d.dis, d.ndis);
		buf_lit(b, ",\"a\":");
		ruldiff_pats_json(b, d.allow, d.nallow);
		if (d.usage_changed >= 0) {
			buf_lit(b, ",\"u\":");
			buf_add(b, d.usage_changed ? "true" : "false",
			    d.usage_changed ? 4 : 5);
		}
		buf_lit(b, "}");
		ruldiff_clear(&d);
	}
	buf_lit(b, "}");
	rc = 0;
out:
	free(t);
	return rc;
}

/* The message of a change (with or without its tokens) into b. */
static void
message_encode(
    const struct feed *f, const struct feed_change *ch, int full, struct buf *b)
{
	buf_lit(b, "{\"v\":1,\"from\":");
	jw_str(b, f->id, strlen(f->id));
	change_head(
	    b, ch->origin, ch->old_version, ch->new_version, ch->at, ch->state);
	if (!full || message_tokens(b, ch) == -1)
		buf_lit(b, ",\"tokens\":null");
	buf_lit(b, "}");
}

static void
publish(struct feed *f, const struct feed_change *ch)
{
	struct buf b = BUF_INIT(FEED_MSG_MAX);

	message_encode(f, ch, 1, &b);
	if (b.state != BUF_OK) {
		buf_clear(&b);
		b = BUF_INIT(FEED_MSG_MAX);
		message_encode(f, ch, 0, &b);
	}
	if (b.state == BUF_OK) {
		f->pub(f->pub_arg, ch->origin, b.p, b.len);
		f->stats.published++;
	}
	buf_clear(&b);
}

void
feed_changed(struct feed *f, const struct feed_change *ch)
{
	struct feed_src src = { ch->origin, ch->old_version, ch->new_version,
		ch->state, ch->at, ch, NULL };

	if (ch->new_version == NULL)
		return;
	if (f->pub != NULL && !ch->fetched)
		return; /* the instance that fetched it told the fleet */
	if (seen(f, ch->origin, ch->new_version, ch->at))
		return;
	if (f->pub != NULL)
		publish(f, ch);
	deliver(f, &src);
}

/* A version id: 1 to 64 lower-case hex digits. */
static int
good_version(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;

	if (s == NULL || n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

/* A short printable string without NUL. */
static int
good_str(const json_t *v, size_t max)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;

	if (s == NULL || n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			return 0;
	return 1;
}

/* An origin as robotsd writes one (normalized). */
static int
good_origin(const json_t *v)
{
	const char *s = json_string_value(v);
	enum url_err ue;
	char *o;
	int ok;

	if (!good_str(v, URL_MAX_LEN))
		return 0;
	if ((o = robots_url_origin(s, json_string_length(v), &ue)) == NULL)
		return 0;
	ok = strcmp(o, s) == 0;
	free(o);
	return ok;
}

/* An array of pattern strings. */
static int
good_pats(const json_t *a)
{
	size_t i;

	if (!json_is_array(a))
		return 0;
	for (i = 0; i < json_array_size(a); i++)
		if (!json_is_string(json_array_get(a, i)) ||
		    json_string_length(json_array_get(a, i)) > ROBOTS_MAX_LINE)
			return 0;
	return 1;
}

static int
good_tokens(const json_t *t)
{
	const char *k;
	json_t *v;

	if (json_is_null(t))
		return 1;
	if (!json_is_object(t) || json_object_size(t) > FEED_MSG_TOKENS + 1 ||
	    json_object_get(t, "*") == NULL)
		return 0;
	json_object_foreach((json_t *)t, k, v)
	{
		if (strlen(k) > FEED_MAX_AGENT_LEN || !json_is_object(v) ||
		    !good_pats(json_object_get(v, "d")) ||
		    !good_pats(json_object_get(v, "a")) ||
		    (json_object_get(v, "u") != NULL &&
		        !json_is_boolean(json_object_get(v, "u"))))
			return 0;
	}
	return 1;
}

/* Check a message; its fields in src (borrowed from m), or -1. */
static int
message_check(const struct feed *f, json_t *m, struct feed_src *src)
{
	json_t *from = json_object_get(m, "from"), *old, *at;

	old = json_object_get(m, "old");
	at = json_object_get(m, "at");
	if (!json_is_object(m) ||
	    json_integer_value(json_object_get(m, "v")) != 1 ||
	    !good_str(from, FEED_ID_LEN) ||
	    !good_origin(json_object_get(m, "origin")) ||
	    !(json_is_null(old) || good_version(old)) ||
	    !good_version(json_object_get(m, "new")) || !json_is_number(at) ||
	    !good_str(json_object_get(m, "state"), 32) ||
	    !good_tokens(json_object_get(m, "tokens")))
		return -1;
	if (strcmp(json_string_value(from), f->id) == 0)
		return 1; /* our own, back from Redis */
	src->origin = json_string_value(json_object_get(m, "origin"));
	src->old = json_string_value(old);
	src->new = json_string_value(json_object_get(m, "new"));
	src->state = json_string_value(json_object_get(m, "state"));
	src->at = json_number_value(at);
	src->ch = NULL;
	src->tokens = json_object_get(m, "tokens");
	if (json_is_null(src->tokens))
		src->tokens = NULL;
	return 0;
}

void
feed_message(struct feed *f, const char *msg, size_t len)
{
	struct feed_src src;
	json_t *m;
	int rc;

	if (len > FEED_MSG_MAX ||
	    (m = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
		f->stats.refused++;
		return;
	}
	if ((rc = message_check(f, m, &src)) == -1)
		f->stats.refused++;
	else if (rc == 0) {
		f->stats.received++;
		if (!seen(f, src.origin, src.new, src.at))
			deliver(f, &src);
	}
	json_decref(m);
}
