/*
 * feed_event.c: a change's event lines (see feed.h and feed_int.h), the
 * one place that writes them.
 *
 *   {"event":"changed","origin":..,"old":..,"new":..,"at":..,"state":..,
 *    "agents":{AGENT:{"newly_disallowed":[..],"newly_allowed":[..],
 *    "usage_changed":B}|null,..}}
 *
 * An agent's difference depends only on its key (ruldiff_key): each key's
 * is computed once per change, the first time an agent of it is asked
 * for, and kept as its JSON text for every line that names an agent of
 * that key. A key whose work would pass what the change has left, or
 * whose text is longer than a line may be or than the bytes the change
 * may still make, is null; so is an agent whose text would not fit its
 * line's cap, or those bytes. So a change makes at most --max-output-total
 * bytes of differences, kept and copied into lines together, beside the
 * lines' own small frame.
 *
 * A change of an origin's tdmrep.json has no rules' difference: its line
 * is the same for every agent set,
 *
 *   {"event":"changed","origin":..,"resource":"tdmrep","old":..,"new":..,
 *    "at":..,"state":..,"old_state":..}
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "feed/feed_int.h"
#include "feed/ruldiff.h"
#include "base/xmalloc.h"

static void
line_release(struct reply_line *rl)
{
	struct feed_line *l = (struct feed_line *)(void *)rl;

	free(l->bytes);
	free(l);
}

void
feed_line_unref(struct feed_line *l)
{
	if (l != NULL && --l->rl.refs == 0)
		l->rl.release(&l->rl);
}

void
feed_event_init(struct feed_event *ev, const struct feed_change *ch,
    size_t line_max, size_t bytes, struct feed_stats *stats)
{
	memset(ev, 0, sizeof(*ev));
	ev->ch = ch;
	ev->line_max = line_max;
	ev->bytes = bytes;
	ev->work = FEED_WORK_MAX;
	ev->stats = stats;
}

void
feed_event_done(struct feed_event *ev)
{
	size_t i;

	for (i = 0; i < ev->nfrags; i++)
		free(ev->frags[i].json);
	free(ev->frags);
	free(ev->slots);
	ruldiff_names_free(ev->names);
	memset(ev, 0, sizeof(*ev));
}

/* --- differences by key --------------------------------------------------- */

/* The slot of key in the table: its frag's, or the empty one to fill. */
static uint32_t *
frag_slot(const struct feed_event *ev, const char *key)
{
	size_t mask = ev->nslots - 1, i = fnv1a64_str(FNV1A64_INIT, key) & mask;
	uint32_t *s;

	for (;; i = (i + 1) & mask) {
		s = &ev->slots[i];
		if (*s == 0 || strcmp(ev->frags[*s - 1].key, key) == 0)
			return s;
	}
}

/* Room for one more frag, the table under half full. */
static void
frags_grow(struct feed_event *ev)
{
	size_t i, n = ev->nslots ? ev->nslots * 2 : 16;

	if (ev->nfrags + 1 <= ev->nslots / 2)
		return;
	ev->frags = xreallocarray(ev->frags, n / 2, sizeof(*ev->frags));
	free(ev->slots);
	ev->slots = xcalloc(n, sizeof(*ev->slots));
	ev->nslots = n;
	for (i = 0; i < ev->nfrags; i++)
		*frag_slot(ev, ev->frags[i].key) = (uint32_t)(i + 1);
}

/* The JSON text of key's difference into f, or f->json NULL: null. */
static void
frag_make(
    struct feed_event *ev, struct feed_frag *f, const char *agent, size_t rules)
{
	const struct feed_change *ch = ev->ch;
	struct buf b = BUF_INIT(ev->line_max);
	struct ruldiff d;
	struct jw w;

	f->json = NULL;
	f->len = 0;
	if (rules > ev->work)
		return; /* past the change's work: null */
	ev->work -= rules;
	ev->stats->diffs++;
	if (ruldiff_agent(&ch->old, &ch->new, agent, strlen(agent), &d) == -1)
		return;
	jw_init(&w, &b);
	jw_obj(&w);
	ruldiff_json(&w, &d);
	jw_end(&w);
	ruldiff_clear(&d);
	if (b.state == BUF_OK && b.len > 0 && b.len <= ev->bytes) {
		ev->bytes -= b.len; /* the text kept counts once ... */
		f->len = b.len;
		f->json = buf_take(&b, NULL);
	}
	buf_clear(&b);
}

/* agent's difference: its key's, computed the first time; NULL: null. */
static const struct feed_frag *
agent_frag(struct feed_event *ev, const char *agent)
{
	char key[RULDIFF_TOKEN_MAX + 1];
	size_t rules;
	uint32_t *s;
	struct feed_frag *f;

	if (ev->names == NULL && !ev->names_failed &&
	    (ev->names = ruldiff_names_new(&ev->ch->old, &ev->ch->new)) == NULL)
		ev->names_failed = 1;
	if (ev->names == NULL)
		return NULL;
	ruldiff_key(ev->names, agent, strlen(agent), key, &rules);
	frags_grow(ev);
	if (*(s = frag_slot(ev, key)) != 0)
		return &ev->frags[*s - 1];
	f = &ev->frags[ev->nfrags];
	memcpy(f->key, key, sizeof(key));
	frag_make(ev, f, agent, rules);
	*s = (uint32_t)++ev->nfrags;
	return f;
}

/* --- lines ---------------------------------------------------------------- */

/*
 * {"event":"changed","origin":..,..,"state":.. of a change ("resource"
 * after the origin for tdmrep.json's), its object left open.
 */
static void
line_common(struct jw *w, const struct feed_change *ch)
{
	jw_obj(w);
	jw_klit(w, "event", "\"changed\"");
	jw_key(w, "origin");
	jw_vcstr_or_null(w, ch->origin);
	if (ch->resource == FEED_TDMREP)
		jw_klit(w, "resource", "\"tdmrep\"");
	jw_key(w, "old");
	jw_vcstr_or_null(w, ch->old_version);
	jw_key(w, "new");
	jw_vcstr_or_null(w, ch->new_version);
	jw_kreal(w, "at", ch->at);
	jw_key(w, "state");
	jw_vcstr_or_null(w, ch->state);
}

/* The head of a robots.txt change's line, up to its open "agents":{. */
static void
line_head(struct jw *w, const struct feed_change *ch)
{
	line_common(w, ch);
	jw_key(w, "agents");
	jw_obj(w);
}

/* The line of a tdmrep.json change into b (no agents: one for all). */
static void
line_tdm(struct buf *b, const struct feed_change *ch)
{
	struct jw w;

	jw_init(&w, b);
	line_common(&w, ch);
	jw_key(&w, "old_state");
	jw_vcstr_or_null(&w, ch->old_state);
	jw_end(&w);
	buf_lit(b, "\n");
}

/*
 * agent's member of the agents object: its difference if the line, room
 * bytes longer than it would be with every difference null, has room.
 */
static void
line_agent(struct feed_event *ev, struct jw *w, const char *agent, size_t *room)
{
	const struct feed_frag *f = NULL;

	jw_key_str(w, agent, strlen(agent));
	if (ev != NULL)
		f = agent_frag(ev, agent);
	if (f != NULL && f->json != NULL && f->len <= ev->bytes &&
	    f->len - 4 <= *room) {
		jw_vraw(w, f->json, f->len);
		ev->bytes -= f->len; /* ... and once in each line */
		*room -= f->len - 4;
	} else
		jw_vnull(w);
}

/* The line of agents into b; ev NULL: every difference null. */
static void
line_write(struct buf *b, const struct feed_change *ch, struct feed_event *ev,
    char *const *agents, size_t nagents, size_t room)
{
	struct jw w;
	size_t i;

	jw_init(&w, b);
	line_head(&w, ch);
	for (i = 0; i < nagents; i++)
		line_agent(ev, &w, agents[i], &room);
	jw_end(&w);
	jw_end(&w);
	buf_lit(b, "\n");
}

struct feed_line *
feed_event_line(struct feed_event *ev, char *const *agents, size_t nagents)
{
	static char star_token[] = "*";
	static char *const star[] = { star_token };
	struct buf b = BUF_INIT(ev->line_max);
	struct feed_line *l;
	size_t frame;

	if (nagents == 0)
		agents = star, nagents = 1;
	if (ev->ch->resource == FEED_TDMREP)
		line_tdm(&b, ev->ch);
	else /* the frame first: what the differences may add, at most */
		line_write(&b, ev->ch, NULL, agents, nagents, 0);
	frame = b.len;
	if (b.state == BUF_OK && ev->ch->resource != FEED_TDMREP) {
		buf_reset(&b);
		line_write(
		    &b, ev->ch, ev, agents, nagents, ev->line_max - frame);
	}
	if (b.state != BUF_OK) {
		buf_clear(&b);
		return NULL;
	}
	ev->stats->lines++;
	l = xcalloc(1, sizeof(*l));
	l->rl.len = b.len;
	l->bytes = buf_take(&b, NULL);
	l->rl.p = l->bytes;
	l->rl.refs = 1;
	l->rl.release = line_release;
	return l;
}
