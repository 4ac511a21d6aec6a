/*
 * check_feed.c: the change feed's event lines (feed.h) through fake
 * clients: the exact line of a change for given agents, who gets it, the
 * last line of a watcher past its output cap, and the fleet message: what
 * another instance makes of it is the line this one made, our own echo
 * and a repeat deliver nothing, a shared-tier read with a fleet neither.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "robots.h"
#include "feed/feed.h"
#include "iface/reply.h"
#include "test_main.h"

#define MAX_LINES 16

struct fake_client {
	struct reply reply; /* first: the ops get it */
	char *lines[MAX_LINES];
	size_t nlines, room, queued;
	int finished;
};

static void
client_send(struct reply *r, const char *line, size_t len)
{
	struct fake_client *c = (struct fake_client *)r;

	ck_assert_uint_lt(c->nlines, MAX_LINES);
	c->lines[c->nlines++] = strndup(line, len);
	c->queued += len;
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

static const struct reply_ops client_ops = { client_send, NULL, NULL,
	client_room, client_finish };

static void
client_init(struct fake_client *c, size_t room)
{
	memset(c, 0, sizeof(*c));
	c->reply.ops = &client_ops;
	c->room = room;
}

static void
client_clear(struct fake_client *c)
{
	size_t i;

	for (i = 0; i < c->nlines; i++)
		free(c->lines[i]);
	c->nlines = 0;
}

/* The published messages. */
static char *msgs[MAX_LINES];
static size_t nmsgs;

static void
capture(void *arg, const char *origin, const char *msg, size_t len)
{
	(void)arg;
	ck_assert_str_eq(origin, "https://a.test");
	ck_assert_uint_lt(nmsgs, MAX_LINES);
	msgs[nmsgs++] = strndup(msg, len);
}

static void
msgs_clear(void)
{
	while (nmsgs > 0)
		free(msgs[--nmsgs]);
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
	wa = feed_watch(f, &a.reply, origins, 2, 0, two_agents, 2);
	wb = feed_watch(f, &b.reply, NULL, 0, 1, two_agents, 2);
	wo = feed_watch(f, &other.reply, origins + 1, 1, 0, two_agents, 2);
	ws = feed_watch(f, &star.reply, origins, 1, 0, NULL, 0);
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
	/* the same change again: nothing */
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 1);
	/* the same change ten minutes on: the origin went back and forth */
	ch.at += 601;
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 2);
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
	w = feed_watch(f, &a.reply, origins, 1, 0, NULL, 0);
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
	w = feed_watch(f, &small.reply, origins, 1, 0, two_agents, 2);
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

START_TEST(test_fleet_message_makes_the_same_line_elsewhere)
{
	struct feed *here = feed_new(), *there = feed_new();
	struct fake_client a, b;
	struct feed_watcher *wa, *wb;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 1);
	static const char *agents[] = { "FooBot/1.2", "barbot", "*", "FOOBOT" };

	feed_set_fleet(here, capture, NULL);
	feed_set_fleet(there, capture, NULL);
	client_init(&a, 1 << 20);
	client_init(&b, 1 << 20);
	wa = feed_watch(here, &a.reply, origins, 1, 0, agents, 4);
	wb = feed_watch(there, &b.reply, origins, 1, 0, agents, 4);
	feed_changed(here, &ch);
	ck_assert_uint_eq(nmsgs, 1);
	ck_assert_uint_eq(feed_stats(here)->published, 1);
	/* our own echo: nothing */
	feed_message(here, msgs[0], strlen(msgs[0]));
	ck_assert_uint_eq(a.nlines, 1);
	feed_message(there, msgs[0], strlen(msgs[0]));
	ck_assert_uint_eq(b.nlines, 1);
	ck_assert_str_eq(b.lines[0], a.lines[0]);
	ck_assert_uint_eq(feed_stats(there)->received, 1);
	/* a repeat, and the same change read from the tier there: nothing */
	feed_message(there, msgs[0], strlen(msgs[0]));
	ch.fetched = 0;
	feed_changed(there, &ch);
	ck_assert_uint_eq(b.nlines, 1);
	ck_assert_uint_eq(nmsgs, 1);
	feed_message(there, "{\"v\":1}", 7);
	ck_assert_uint_eq(feed_stats(there)->refused, 1);
	feed_unwatch(wa);
	feed_unwatch(wb);
	client_clear(&a), client_clear(&b);
	msgs_clear();
	robots_unref(o);
	robots_unref(n);
	feed_free(here);
	feed_free(there);
}
END_TEST

START_TEST(test_tier_read_without_fleet_is_delivered)
{
	struct feed *f = feed_new();
	struct fake_client a;
	struct feed_watcher *w;
	struct robots *o, *n;
	struct feed_change ch = change(&o, &n, 0);

	client_init(&a, 1 << 20);
	w = feed_watch(f, &a.reply, origins, 1, 0, NULL, 0);
	feed_changed(f, &ch);
	ck_assert_uint_eq(a.nlines, 1);
	feed_unwatch(w);
	client_clear(&a);
	robots_unref(o);
	robots_unref(n);
	feed_free(f);
}
END_TEST

static Suite *
feed_suite(void)
{
	Suite *s = suite_create("feed");
	TCase *tc = tcase_create("events");

	tcase_add_test(tc, test_event_line_for_each_watcher_of_the_origin);
	tcase_add_test(tc, test_first_version_and_states);
	tcase_add_test(tc, test_watcher_past_its_cap_gets_its_last_line);
	tcase_add_test(tc, test_fleet_message_makes_the_same_line_elsewhere);
	tcase_add_test(tc, test_tier_read_without_fleet_is_delivered);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(feed_suite, NULL, NULL);
