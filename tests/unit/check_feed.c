/*
 * check_feed.c: the change feed (feed.h) through fake clients: the exact
 * line of a change for given agents, who gets it, a revert reported as
 * any change, the last line of a watcher past its output cap; what one
 * change costs (one line per agent set, shared by reference; one
 * difference per key; nulls past the work and byte bounds); and the fleet
 * message: its text and tag, what a receiver makes of it (a load of the
 * origin when watched, never an event of its own), our own echo, and
 * every message refused (untagged or forged under a key, malformed).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "robots.h"
#include "feed/feed.h"
#include "feed/feed_int.h"
#include "iface/reply.h"
#include "policy/tier_tag.h"
#include "test_main.h"

#define MAX_LINES 16

struct fake_client {
	struct reply reply; /* first: the ops get it */
	char *lines[MAX_LINES];
	size_t nlines, room, queued;
	struct reply_line *shared[MAX_LINES]; /* references taken */
	size_t nshared;
	int finished;
};

static void
client_send(
    struct reply *r, const struct reply_stamp *st, const char *line, size_t len)
{
	struct fake_client *c = (struct fake_client *)r;

	ck_assert_ptr_null(st); /* an event answers no request: not timed */
	ck_assert_uint_lt(c->nlines, MAX_LINES);
	c->lines[c->nlines++] = strndup(line, len);
	c->queued += len;
}

/* The share op: a reference kept (its text is the line's, not copied). */
static void
client_share(struct reply *r, struct reply_line *l)
{
	struct fake_client *c = (struct fake_client *)r;

	ck_assert_uint_lt(c->nshared, MAX_LINES);
	ck_assert_uint_lt(c->nlines, MAX_LINES);
	l->refs++;
	c->shared[c->nshared++] = l;
	c->lines[c->nlines++] = NULL;
	c->queued += l->len;
}

static size_t
client_room(struct reply *r)
{
	struct fake_client *c = (struct fake_client *)r;

	return c->room > c->queued ? c->room - c->queued : 0;
}

static void
client_finish(struct reply *r)
{
	((struct fake_client *)r)->finished++;
}

static const struct reply_ops copy_ops = { client_send, NULL, NULL, client_room,
	client_finish, NULL };
static const struct reply_ops share_ops = { client_send, NULL, NULL,
	client_room, client_finish, client_share };

static void
client_init(struct fake_client *c, size_t room)
{
	memset(c, 0, sizeof(*c));
	c->reply.ops = &copy_ops;
	c->room = room;
}

static void
client_clear(struct fake_client *c)
{
	size_t i;

	for (i = 0; i < c->nlines; i++)
		free(c->lines[i]);
	c->nlines = 0;
	for (i = 0; i < c->nshared; i++)
		if (--c->shared[i]->refs == 0)
			c->shared[i]->release(c->shared[i]);
	c->nshared = 0;
}

static const char old_body[] = "User-agent: *\nDisallow: /a\n\n"
                               "User-agent: foobot\nDisallow: /f\n";
static const char new_body[] = "User-agent: *\nDisallow: /a\nDisallow: /b\n\n"
                               "User-agent: foobot\nAllow: /\n";

/* A change of https://a.test from old_body to new_body. */
static struct feed_change
change(struct robots **o, struct robots **n, int fetched)
{
	*o = robots_parse(old_body, strlen(old_body));
	*n = robots_parse(new_body, strlen(new_body));
	return (struct feed_change){ .origin = "https://a.test",
		.old_version = "00000000000000a1",
		.new_version = "00000000000000b2",
		.at = 1700000000.25,
		.state = "rules",
		.fetched = fetched,
		.old = { RULDIFF_RULES, *o },
		.new = { RULDIFF_RULES, *n } };
}

/* The same change the other way round: the revert. */
static struct feed_change
reverted(const struct feed_change *ch)
{
	struct feed_change r = *ch;

	r.old_version = ch->new_version;
	r.new_version = ch->old_version;
	r.old = ch->new;
	r.new = ch->old;
	return r;
}

static const char *origins[] = { "https://a.test", "https://z.test" };
static const char *two_agents[] = { "FooBot/1.2", "barbot" };

static const char expect_two[] =
    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
    "\"old\":\"00000000000000a1\",\"new\":\"00000000000000b2\","
    "\"at\":1700000000.25,\"state\":\"rules\",\"agents\":{"
    "\"FooBot/1.2\":{\"newly_disallowed\":[],\"newly_allowed\":[\"/\","
    "\"/f\"],\"usage_changed\":false},"
    "\"barbot\":{\"newly_disallowed\":[\"/b\"],\"newly_allowed\":[],"
    "\"usage_changed\":false}}}\n";

START_TEST(test_event_line_for_each_watcher_of_the_origin)
{
	struct feed *f = feed_new();
	struct fake_client a, b, other, star;
	struct feed_watcher *wa, *wb, *wo, *ws;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);

	client_init(&a, 1 << 20);
	client_init(&b, 1 << 20);
	client_init(&other, 1 << 20);
	client_init(&star, 1 << 20);
	wa = feed_watch(f, &a.reply, origins, 2, 0, two_agents, 2, 0);
	wb = feed_watch(f, &b.reply, NULL, 0, 1, two_agents, 2, 0);
	wo = feed_watch(f, &other.reply, origins + 1, 1, 0, two_agents, 2, 0);
	ws = feed_watch(f, &star.reply, origins, 1, 0, NULL, 0, 0);
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 1);
	ck_assert_str_eq(a.lines[0], expect_two);
	ck_assert_uint_eq(b.nlines, 1);
	ck_assert_str_eq(b.lines[0], expect_two);
	ck_assert_uint_eq(other.nlines, 0);
	ck_assert_uint_eq(star.nlines, 1);
	ck_assert_str_eq(star.lines[0],
	    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
	    "\"old\":\"00000000000000a1\",\"new\":\"00000000000000b2\","
	    "\"at\":1700000000.25,\"state\":\"rules\",\"agents\":{"
	    "\"*\":{\"newly_disallowed\":[\"/b\"],\"newly_allowed\":[],"
	    "\"usage_changed\":false}}}\n");
	ck_assert_uint_eq(feed_stats(f)->events, 3);
	ck_assert_uint_eq(feed_stats(f)->watchers, 4);
	/* a and b share their agents: two lines for three watchers */
	ck_assert_uint_eq(feed_stats(f)->lines, 2);
	feed_unwatch(wa);
	feed_unwatch(wb);
	feed_unwatch(wo);
	feed_unwatch(ws);
	ck_assert_uint_eq(feed_stats(f)->watchers, 0);
	client_clear(&a), client_clear(&b), client_clear(&star);
	robots_unref(o);
	robots_unref(n);
	feed_free(f);
}
END_TEST

/* A -> B -> A at once: the revert is a change like any (issue 29). */
START_TEST(test_revert_is_reported)
{
	struct feed *f = feed_new();
	struct fake_client a;
	struct feed_watcher *w;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1), back = reverted(&ch);

	client_init(&a, 1 << 20);
	w = feed_watch(f, &a.reply, origins, 1, 0, two_agents, 2, 0);
	feed_changed(f, &ch);
	feed_changed(f, &back);
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 3);
	ck_assert_str_eq(a.lines[0], expect_two);
	ck_assert_str_eq(a.lines[1],
	    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
	    "\"old\":\"00000000000000b2\",\"new\":\"00000000000000a1\","
	    "\"at\":1700000000.25,\"state\":\"rules\",\"agents\":{"
	    "\"FooBot/1.2\":{\"newly_disallowed\":[\"/\",\"/f\"],"
	    "\"newly_allowed\":[],\"usage_changed\":false},"
	    "\"barbot\":{\"newly_disallowed\":[],\"newly_allowed\":[\"/b\"],"
	    "\"usage_changed\":false}}}\n");
	ck_assert_str_eq(a.lines[2], expect_two);
	feed_unwatch(w);
	client_clear(&a);
	robots_unref(o);
	robots_unref(n);
	feed_free(f);
}
END_TEST

START_TEST(test_first_version_and_states)
{
	struct feed *f = feed_new();
	struct fake_client a;
	struct feed_watcher *w;
	struct feed_change ch = { .origin = "https://a.test",
		.old_version = NULL,
		.new_version = "00000000000000c3",
		.at = 5,
		.state = "unreachable",
		.fetched = 1,
		.old = { RULDIFF_NONE, NULL },
		.new = { RULDIFF_DISALLOW_ALL, NULL } };

	client_init(&a, 1 << 20);
	w = feed_watch(f, &a.reply, origins, 1, 0, NULL, 0, 0);
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 1);
	ck_assert_str_eq(a.lines[0],
	    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
	    "\"old\":null,\"new\":\"00000000000000c3\",\"at\":5.0,"
	    "\"state\":\"unreachable\",\"agents\":{\"*\":{"
	    "\"newly_disallowed\":[\"/\"],\"newly_allowed\":[],"
	    "\"usage_changed\":false}}}\n");
	feed_unwatch(w);
	client_clear(&a);
	feed_free(f);
}
END_TEST

START_TEST(test_watcher_past_its_cap_gets_its_last_line)
{
	struct feed *f = feed_new();
	struct fake_client small;
	struct feed_watcher *w;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);

	/* room for one event and the reserve, not for two */
	client_init(&small, strlen(expect_two) + 128 + 10);
	w = feed_watch(f, &small.reply, origins, 1, 0, two_agents, 2, 0);
	feed_changed(f, &ch);
	ck_assert_uint_eq(small.nlines, 1);
	ch.old_version = "00000000000000b2";
	ch.new_version = "00000000000000d4";
	feed_changed(f, &ch);
	ck_assert_uint_eq(small.nlines, 2);
	ck_assert_str_eq(small.lines[1],
	    "{\"event\":\"dropped\",\"reason\":\"output_budget\"}\n");
	ck_assert_int_eq(small.finished, 1);
	ck_assert_int_eq(feed_watcher_active(w), 0);
	ck_assert_uint_eq(feed_stats(f)->dropped, 1);
	/* nothing more once dropped */
	ch.new_version = "00000000000000e5";
	feed_changed(f, &ch);
	ck_assert_uint_eq(small.nlines, 2);
	feed_unwatch(w);
	client_clear(&small);
	robots_unref(o);
	robots_unref(n);
	feed_free(f);
}
END_TEST

/* --- what one change costs ------------------------------------------------ */

#define CROWD 400

/* A big robots.txt: n Disallow lines under *, n under foobot. */
static struct robots *
big_rules(const char *tag, int n)
{
	struct robots *r;
	char *body = NULL, line[64];
	size_t len = 0;
	FILE *m = open_memstream(&body, &len);
	int i;

	fputs("User-agent: *\n", m);
	for (i = 0; i < n; i++)
		fprintf(m, "Disallow: /%s/star/%05d\n", tag, i);
	fputs("\nUser-agent: foobot\n", m);
	for (i = 0; i < n; i++) {
		snprintf(
		    line, sizeof(line), "Disallow: /%s/foo/%05d\n", tag, i);
		fputs(line, m);
	}
	fclose(m);
	r = robots_parse(body, len);
	free(body);
	return r;
}

/* Unwatch and clear n watchers, and free the change's rulesets. */
static void
crowd_free(struct feed_watcher **w, struct fake_client *c, size_t n,
    struct robots *o, struct robots *nr)
{
	size_t i;

	for (i = 0; i < n; i++) {
		feed_unwatch(w[i]);
		client_clear(&c[i]);
	}
	robots_unref(o);
	robots_unref(nr);
}

/*
 * 400 watchers naming the same 16 agents (issue 29: 1.7 GB): one line,
 * queued to each by reference, and two differences (foobot's, and "*"
 * for the 15 agents no group names).
 */
START_TEST(test_one_line_per_agent_set_shared)
{
	struct feed *f = feed_new();
	static struct fake_client c[CROWD];
	struct feed_watcher *w[CROWD];
	const char *agents[16];
	char names[16][16];
	struct robots *o = big_rules("old", 2000), *n = big_rules("new", 2000);
	struct feed_change ch = { .origin = "https://a.test",
		.old_version = "00000000000000a1",
		.new_version = "00000000000000b2",
		.at = 1,
		.state = "rules",
		.fetched = 1,
		.old = { RULDIFF_RULES, o },
		.new = { RULDIFF_RULES, n } };
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]),
		    i == 0 ? "FooBot/%d" : "agent%c/1", i == 0 ? 3 : 'a' + i);
		agents[i] = names[i];
	}
	for (i = 0; i < CROWD; i++) {
		client_init(&c[i], 64 << 20);
		c[i].reply.ops = &share_ops;
		w[i] = feed_watch(f, &c[i].reply, origins, 1, 0, agents, 16, 0);
	}
	feed_changed(f, &ch);
	ck_assert_uint_eq(feed_stats(f)->lines, 1);
	ck_assert_uint_eq(feed_stats(f)->diffs, 2);
	ck_assert_uint_eq(feed_stats(f)->events, CROWD);
	for (i = 0; i < CROWD; i++) {
		ck_assert_uint_eq(c[i].nshared, 1);
		ck_assert_ptr_eq(c[i].shared[0], c[0].shared[0]);
	}
	/* the feed let go of its own reference: the watchers hold it */
	ck_assert_uint_eq(c[0].shared[0]->refs, CROWD);
	ck_assert_uint_eq(c[0].nlines, 1);
	ck_assert_ptr_nonnull(memmem(
	    c[0].shared[0]->p, c[0].shared[0]->len, "/old/foo/01999", 14));
	ck_assert_ptr_nonnull(memmem(
	    c[0].shared[0]->p, c[0].shared[0]->len, "/new/star/01999", 15));
	crowd_free(w, c, CROWD, o, n);
	feed_free(f);
}
END_TEST

/*
 * 100 watchers each naming 16 agents of their own, none a group names: a
 * line per set, but one difference for all 1,600 agents.
 */
START_TEST(test_one_difference_per_key)
{
	struct feed *f = feed_new();
	static struct fake_client c[100];
	struct feed_watcher *w[100];
	static char names[100][16][24];
	const char *agents[16];
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);
	int i, j;

	for (i = 0; i < 100; i++) {
		for (j = 0; j < 16; j++) {
			snprintf(names[i][j], sizeof(names[i][j]), "bot%c%c/%d",
			    'a' + i % 26, 'a' + j, i);
			agents[j] = names[i][j];
		}
		client_init(&c[i], 1 << 20);
		w[i] = feed_watch(f, &c[i].reply, origins, 1, 0, agents, 16, 0);
	}
	feed_changed(f, &ch);
	ck_assert_uint_eq(feed_stats(f)->lines, 100);
	ck_assert_uint_eq(feed_stats(f)->diffs, 1);
	ck_assert_ptr_nonnull(strstr(
	    c[99].lines[0], "\"botvp/99\":{\"newly_disallowed\":[\"/b\"]"));
	crowd_free(w, c, 100, o, n);
	feed_free(f);
}
END_TEST

/* The lines of one change, made directly with the bounds given. */
static struct feed_line *
bounded_line(const struct feed_change *ch, size_t line_max, size_t bytes,
    size_t work, struct feed_stats *st)
{
	struct feed_event ev;
	struct feed_line *l;

	feed_event_init(&ev, ch, line_max, bytes, st);
	ev.work = work;
	l = feed_event_line(&ev, (char *const *)two_agents, 2);
	feed_event_done(&ev);
	return l;
}

/* l holds exactly the text want (a line is not NUL-terminated). */
static void
line_is(const struct feed_line *l, const char *want)
{
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->rl.len, strlen(want));
	ck_assert_mem_eq(l->rl.p, want, l->rl.len);
}

START_TEST(test_bounds_give_null)
{
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);
	struct feed_stats st = { 0 };
	struct feed_line *l;
	static const char head[] =
	    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
	    "\"old\":\"00000000000000a1\",\"new\":\"00000000000000b2\","
	    "\"at\":1700000000.25,\"state\":\"rules\",\"agents\":{";
	char want[1024];

	/* no work left: both null, none computed */
	l = bounded_line(&ch, 1 << 20, 1 << 20, 0, &st);
	snprintf(want, sizeof(want),
	    "%s\"FooBot/1.2\":null,\"barbot\":null}}\n", head);
	line_is(l, want);
	ck_assert_uint_eq(st.diffs, 0);
	feed_line_unref(l);
	/* bytes for the first difference only (it is 72 bytes, kept and
	 * put in the line), not the second */
	l = bounded_line(&ch, 1 << 20, 2 * 72 + 10, 1 << 20, &st);
	snprintf(want, sizeof(want),
	    "%s\"FooBot/1.2\":{\"newly_disallowed\":[],\"newly_allowed\":"
	    "[\"/\",\"/f\"],\"usage_changed\":false},\"barbot\":null}}\n",
	    head);
	line_is(l, want);
	feed_line_unref(l);
	/*
	 * A line cap that holds the frame (the line with both null: the head
	 * and 34 bytes) and FooBot's difference in place of its null (72
	 * bytes, 68 more), but not barbot's as well (68 bytes, 64 more)
	 */
	l = bounded_line(
	    &ch, strlen(head) + 34 + 68 + 63, 1 << 20, 1 << 20, &st);
	line_is(l, want);
	feed_line_unref(l);
	/* one byte less for FooBot's: barbot's still fits, after it */
	l = bounded_line(&ch, strlen(head) + 34 + 67, 1 << 20, 1 << 20, &st);
	snprintf(want, sizeof(want),
	    "%s\"FooBot/1.2\":null,\"barbot\":{\"newly_disallowed\":[\"/b\"],"
	    "\"newly_allowed\":[],\"usage_changed\":false}}}\n",
	    head);
	line_is(l, want);
	feed_line_unref(l);
	/* a cap that does not even hold the frame: no line */
	ck_assert_ptr_null(bounded_line(&ch, 100, 1 << 20, 1 << 20, &st));
	robots_unref(o);
	robots_unref(n);
}
END_TEST

/* --- the fleet ------------------------------------------------------------ */

static char *msgs[MAX_LINES];
static size_t msg_len[MAX_LINES], nmsgs;
static char loaded[MAX_LINES][128];
static size_t nloads;

static void
capture(void *arg, const char *origin, const char *msg, size_t len)
{
	(void)arg;
	ck_assert_str_eq(origin, "https://a.test");
	ck_assert_uint_lt(nmsgs, MAX_LINES);
	msgs[nmsgs] = malloc(len);
	memcpy(msgs[nmsgs], msg, len);
	msg_len[nmsgs++] = len;
}

static int
load(void *arg, const char *origin, unsigned resource, const char *version,
    double at)
{
	(void)arg;
	ck_assert_uint_lt(nloads, MAX_LINES);
	snprintf(loaded[nloads++], sizeof(loaded[0]), "%s%s %s %.3f", origin,
	    resource == FEED_TDMREP ? " tdmrep" : "", version, at);
	return 1;
}

static void
fleet_clear(void)
{
	while (nmsgs > 0)
		free(msgs[--nmsgs]);
	nloads = 0;
}

static const unsigned char fleet_key[TIER_KEY_LEN] = { 1, 2, 3, 4, 5 };

static void
join(struct feed *f, const unsigned char *key)
{
	struct feed_fleet fl = { capture, load, NULL, key };

	feed_set_fleet(f, &fl);
}

/* The sender id in a message's text. */
static void
sender_of(const char *msg, size_t len, char *id)
{
	json_t *m = json_loadb(msg, len, 0, NULL);

	ck_assert_ptr_nonnull(m);
	snprintf(id, FEED_ID_LEN + 1, "%s",
	    json_string_value(json_object_get(m, "from")));
	json_decref(m);
}

START_TEST(test_message_makes_the_receiver_load)
{
	struct feed *here = feed_new(), *there = feed_new();
	struct fake_client a, b;
	struct feed_watcher *wa, *wb;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);
	char id[FEED_ID_LEN + 1], want[256];

	join(here, NULL);
	join(there, NULL);
	client_init(&a, 1 << 20);
	client_init(&b, 1 << 20);
	wa = feed_watch(here, &a.reply, origins, 1, 0, two_agents, 2, 0);
	feed_changed(here, &ch);
	ck_assert_uint_eq(a.nlines, 1);
	ck_assert_uint_eq(nmsgs, 1);
	sender_of(msgs[0], msg_len[0], id);
	snprintf(want, sizeof(want),
	    "{\"v\":2,\"from\":\"%s\",\"seq\":0,\"origin\":\"https://a.test\","
	    "\"version\":\"00000000000000b2\",\"at\":1700000000250}",
	    id);
	ck_assert_uint_eq(msg_len[0], strlen(want));
	ck_assert_mem_eq(msgs[0], want, msg_len[0]);
	/* our own echo: nothing */
	feed_message(here, msgs[0], msg_len[0]);
	ck_assert_uint_eq(a.nlines, 1);
	ck_assert_uint_eq(nloads, 0);
	ck_assert_uint_eq(feed_stats(here)->received, 0);
	/* there, nobody watches a.test: nothing to load */
	feed_message(there, msgs[0], msg_len[0]);
	ck_assert_uint_eq(nloads, 0);
	ck_assert_uint_eq(feed_stats(there)->received, 1);
	/* a watcher there: the origin is loaded, no line from the message */
	wb = feed_watch(there, &b.reply, origins, 1, 0, two_agents, 2, 0);
	feed_message(there, msgs[0], msg_len[0]);
	ck_assert_uint_eq(nloads, 1);
	ck_assert_str_eq(loaded[0], "https://a.test 00000000000000b2 "
	                            "1700000000.250");
	ck_assert_uint_eq(b.nlines, 0);
	ck_assert_uint_eq(feed_stats(there)->loads, 1);
	/* the load read the tier there: the event, and no message */
	ch.fetched = 0;
	feed_changed(there, &ch);
	ck_assert_uint_eq(b.nlines, 1);
	ck_assert_str_eq(b.lines[0], a.lines[0]);
	ck_assert_uint_eq(nmsgs, 1);
	/* the next message there counts on */
	ch.fetched = 1;
	feed_changed(here, &ch);
	ck_assert_uint_eq(nmsgs, 2);
	ck_assert_ptr_nonnull(strstr(msgs[1], "\"seq\":1,"));
	feed_unwatch(wa);
	feed_unwatch(wb);
	client_clear(&a), client_clear(&b);
	fleet_clear();
	robots_unref(o);
	robots_unref(n);
	feed_free(here);
	feed_free(there);
}
END_TEST

/* With a key: tagged; untagged, forged or tier-tagged messages refused. */
START_TEST(test_keyed_fleet_refuses_untagged)
{
	struct feed *here = feed_new(), *there = feed_new(),
	            *keyless = feed_new();
	struct fake_client b;
	struct feed_watcher *wb, *wk;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);
	unsigned char bad[FEED_MSG_MAX + TIER_TAG_LEN];
	size_t text;

	join(here, fleet_key);
	join(there, fleet_key);
	join(keyless, NULL);
	client_init(&b, 1 << 20);
	wb = feed_watch(there, &b.reply, origins, 1, 0, NULL, 0, 0);
	wk = feed_watch(keyless, &b.reply, origins, 1, 0, NULL, 0, 0);
	feed_changed(here, &ch);
	ck_assert_uint_eq(nmsgs, 1);
	text = msg_len[0] - TIER_TAG_LEN;
	ck_assert_mem_eq(msgs[0] + text, "RBTH", 4);
	feed_message(there, msgs[0], msg_len[0]);
	ck_assert_uint_eq(nloads, 1);
	/* the text alone, untagged */
	feed_message(there, msgs[0], text);
	/* one byte of the text changed, the tag kept */
	memcpy(bad, msgs[0], msg_len[0]);
	bad[text - 3] ^= 1;
	feed_message(there, (char *)bad, msg_len[0]);
	/* tagged as a tier value is, under the fleet's key itself */
	tier_tag_make(fleet_key, msgs[0], text, bad + text);
	memcpy(bad, msgs[0], text);
	feed_message(there, (char *)bad, msg_len[0]);
	ck_assert_uint_eq(nloads, 1);
	ck_assert_uint_eq(feed_stats(there)->refused, 3);
	ck_assert_uint_eq(feed_stats(there)->received, 1);
	/* a fleet without a key drops the tag unchecked */
	feed_message(keyless, msgs[0], msg_len[0]);
	feed_message(keyless, msgs[0], text);
	ck_assert_uint_eq(nloads, 3);
	feed_unwatch(wb);
	feed_unwatch(wk);
	client_clear(&b);
	fleet_clear();
	robots_unref(o);
	robots_unref(n);
	feed_free(here);
	feed_free(there);
	feed_free(keyless);
}
END_TEST

/* robotsd 0.1's messages, read as the notice they hold without a key. */
static const char v1_msg[] =
    "{\"v\":1,\"from\":\"00000000000000aa\",\"origin\":\"https://a.test\","
    "\"old\":null,\"new\":\"fedcba9876543210\",\"at\":1700000000.5,"
    "\"state\":\"rules\",\"tokens\":null}";

START_TEST(test_hostile_messages_refused)
{
	static const char *const bad[] = {
		"not json",
		"[]",
		"{\"v\":3,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"ab\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000a\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"ab\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":-1,\"origin\":"
		"\"https://a.test\",\"version\":\"ab\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://A.test\",\"version\":\"ab\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test/x\",\"version\":\"ab\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"AB\",\"at\":1}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"ab\",\"at\":1.5}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"ab\",\"at\":1,\"at\":2}",
		"{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
		"\"https://a.test\",\"version\":\"\",\"at\":1}",
	};
	struct feed *f = feed_new(), *keyed = feed_new();
	struct fake_client c;
	struct feed_watcher *w, *wk;
	char *huge = calloc(1, FEED_MSG_READ_MAX + 2);
	size_t i;

	join(f, NULL);
	join(keyed, fleet_key);
	client_init(&c, 1 << 20);
	w = feed_watch(f, &c.reply, NULL, 0, 1, NULL, 0, 0);
	wk = feed_watch(keyed, &c.reply, NULL, 0, 1, NULL, 0, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		feed_message(f, bad[i], strlen(bad[i]));
	memset(huge, ' ', FEED_MSG_READ_MAX + 1);
	huge[0] = '{';
	huge[FEED_MSG_READ_MAX] = '}';
	feed_message(f, huge, FEED_MSG_READ_MAX + 1);
	ck_assert_uint_eq(
	    feed_stats(f)->refused, sizeof(bad) / sizeof(bad[0]) + 1);
	ck_assert_uint_eq(nloads, 0);
	/* an old instance's message: a notice without a key only */
	feed_message(f, v1_msg, strlen(v1_msg));
	ck_assert_uint_eq(nloads, 1);
	ck_assert_str_eq(loaded[0], "https://a.test fedcba9876543210 "
	                            "1700000000.500");
	feed_message(keyed, v1_msg, strlen(v1_msg));
	ck_assert_uint_eq(nloads, 1);
	ck_assert_uint_eq(feed_stats(keyed)->refused, 1);
	ck_assert_uint_eq(c.nlines, 0);
	feed_unwatch(w);
	feed_unwatch(wk);
	fleet_clear();
	free(huge);
	feed_free(f);
	feed_free(keyed);
}
END_TEST

/* A change of https://a.test's tdmrep.json, from rules to invalid. */
static struct feed_change
tdm_change(int fetched)
{
	return (struct feed_change){ .origin = "https://a.test",
		.old_version = "00000000000000a1",
		.new_version = "00000000000000b2",
		.at = 1700000000.25,
		.state = "invalid",
		.fetched = fetched,
		.resource = FEED_TDMREP,
		.old_state = "rules" };
}

static const char expect_tdm[] =
    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
    "\"resource\":\"tdmrep\",\"old\":\"00000000000000a1\","
    "\"new\":\"00000000000000b2\",\"at\":1700000000.25,"
    "\"state\":\"invalid\",\"old_state\":\"rules\"}\n";

/*
 * A tdmrep.json change goes to the watchers of its origin that asked for
 * tdmrep.json's changes, one line whatever their agents (no rules'
 * difference); a watcher of robots.txt's alone (the default) gets none,
 * and one of tdmrep.json's alone no robots.txt change.
 */
START_TEST(test_tdm_event_to_its_watchers)
{
	struct feed *f = feed_new();
	struct fake_client plain, both, tdm_only, other;
	struct feed_watcher *wp, *wb, *wt, *wo;
	struct feed_change ch = tdm_change(1);
	struct robots *o, *n;
	struct feed_change rch = change(&o, &n, 1);

	client_init(&plain, 1 << 20);
	client_init(&both, 1 << 20);
	client_init(&tdm_only, 1 << 20);
	client_init(&other, 1 << 20);
	wp = feed_watch(f, &plain.reply, origins, 1, 0, two_agents, 2, 0);
	wb = feed_watch(f, &both.reply, origins, 1, 0, two_agents, 2,
	    FEED_ROBOTS | FEED_TDMREP);
	wt = feed_watch(f, &tdm_only.reply, NULL, 0, 1, NULL, 0, FEED_TDMREP);
	wo = feed_watch(
	    f, &other.reply, origins + 1, 1, 0, NULL, 0, FEED_TDMREP);
	feed_changed(f, &ch);
	ck_assert_uint_eq(plain.nlines, 0);
	ck_assert_uint_eq(both.nlines, 1);
	ck_assert_str_eq(both.lines[0], expect_tdm);
	ck_assert_uint_eq(tdm_only.nlines, 1);
	ck_assert_str_eq(tdm_only.lines[0], expect_tdm);
	ck_assert_uint_eq(other.nlines, 0);
	/* the first version: no old one, no old state */
	ch.old_version = NULL;
	ch.old_state = NULL;
	feed_changed(f, &ch);
	ck_assert_uint_eq(both.nlines, 2);
	ck_assert_str_eq(both.lines[1],
	    "{\"event\":\"changed\",\"origin\":\"https://a.test\","
	    "\"resource\":\"tdmrep\",\"old\":null,"
	    "\"new\":\"00000000000000b2\",\"at\":1700000000.25,"
	    "\"state\":\"invalid\",\"old_state\":null}\n");
	/* robots.txt's change: as ever, not to the tdmrep.json-only one */
	feed_changed(f, &rch);
	ck_assert_uint_eq(plain.nlines, 1);
	ck_assert_str_eq(plain.lines[0], expect_two);
	ck_assert_uint_eq(both.nlines, 3);
	ck_assert_str_eq(both.lines[2], expect_two);
	ck_assert_uint_eq(tdm_only.nlines, 2);
	feed_unwatch(wp);
	feed_unwatch(wb);
	feed_unwatch(wt);
	feed_unwatch(wo);
	client_clear(&plain), client_clear(&both);
	client_clear(&tdm_only), client_clear(&other);
	robots_unref(o);
	robots_unref(n);
	feed_free(f);
}
END_TEST

/*
 * A tdmrep.json change fetched here is published naming its resource; a
 * receiver loads that resource, when a watcher there watches the
 * origin's tdmrep.json. A resource this build does not know is no one's
 * (received, not loaded, not refused); one that is not a string is
 * malformed.
 */
START_TEST(test_tdm_message_loads_the_tdm_file)
{
	static const char later[] =
	    "{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
	    "\"https://a.test\",\"resource\":\"ai.txt\",\"version\":\"ab\","
	    "\"at\":1}";
	static const char bad[] =
	    "{\"v\":2,\"from\":\"00000000000000aa\",\"seq\":0,\"origin\":"
	    "\"https://a.test\",\"resource\":1,\"version\":\"ab\",\"at\":1}";
	struct feed *here = feed_new(), *there = feed_new();
	struct fake_client b;
	struct feed_watcher *wr, *wt;
	struct feed_change ch = tdm_change(1);
	char id[FEED_ID_LEN + 1], want[256];

	join(here, NULL);
	join(there, NULL);
	client_init(&b, 1 << 20);
	feed_changed(here, &ch);
	ck_assert_uint_eq(nmsgs, 1);
	sender_of(msgs[0], msg_len[0], id);
	snprintf(want, sizeof(want),
	    "{\"v\":2,\"from\":\"%s\",\"seq\":0,\"origin\":\"https://a.test\","
	    "\"resource\":\"tdmrep\",\"version\":\"00000000000000b2\","
	    "\"at\":1700000000250}",
	    id);
	ck_assert_uint_eq(msg_len[0], strlen(want));
	ck_assert_mem_eq(msgs[0], want, msg_len[0]);
	/* a watcher of robots.txt's changes only: nothing to load */
	wr = feed_watch(there, &b.reply, origins, 1, 0, NULL, 0, 0);
	feed_message(there, msgs[0], msg_len[0]);
	ck_assert_uint_eq(nloads, 0);
	wt = feed_watch(there, &b.reply, origins, 1, 0, NULL, 0, FEED_TDMREP);
	feed_message(there, msgs[0], msg_len[0]);
	ck_assert_uint_eq(nloads, 1);
	ck_assert_str_eq(loaded[0], "https://a.test tdmrep 00000000000000b2 "
	                            "1700000000.250");
	ck_assert_uint_eq(b.nlines, 0);
	feed_unwatch(wt);
	wt = feed_watch(
	    there, &b.reply, NULL, 0, 1, NULL, 0, FEED_ROBOTS | FEED_TDMREP);
	feed_message(there, later, strlen(later));
	ck_assert_uint_eq(nloads, 1);
	ck_assert_uint_eq(feed_stats(there)->received, 3);
	ck_assert_uint_eq(feed_stats(there)->refused, 0);
	feed_message(there, bad, strlen(bad));
	ck_assert_uint_eq(feed_stats(there)->refused, 1);
	ck_assert_uint_eq(nloads, 1);
	feed_unwatch(wr);
	feed_unwatch(wt);
	client_clear(&b);
	fleet_clear();
	feed_free(here);
	feed_free(there);
}
END_TEST

static Suite *
feed_suite(void)
{
	Suite *s = suite_create("feed");
	TCase *tc = tcase_create("events");
	TCase *cost = tcase_create("cost");
	TCase *fleet = tcase_create("fleet");

	tcase_add_test(tc, test_event_line_for_each_watcher_of_the_origin);
	tcase_add_test(tc, test_revert_is_reported);
	tcase_add_test(tc, test_first_version_and_states);
	tcase_add_test(tc, test_watcher_past_its_cap_gets_its_last_line);
	tcase_add_test(tc, test_tdm_event_to_its_watchers);
	suite_add_tcase(s, tc);
	tcase_add_test(cost, test_one_line_per_agent_set_shared);
	tcase_add_test(cost, test_one_difference_per_key);
	tcase_add_test(cost, test_bounds_give_null);
	suite_add_tcase(s, cost);
	tcase_add_test(fleet, test_message_makes_the_receiver_load);
	tcase_add_test(fleet, test_keyed_fleet_refuses_untagged);
	tcase_add_test(fleet, test_hostile_messages_refused);
	tcase_add_test(fleet, test_tdm_message_loads_the_tdm_file);
	suite_add_tcase(s, fleet);
	return s;
}

TEST_PROGRAM(feed_suite, NULL, NULL);
