/*
 * dispatch_fixture.h: what the dispatcher's test programs (check_dispatch.c
 * and check_answer_lines.c) share beside scripted_fetch.h: a client that
 * keeps every line it is sent, the stats table the dispatcher is handed,
 * and their fixture, a dispatcher over the scripted cache with one admin
 * session.
 */
#ifndef TESTS_DISPATCH_FIXTURE_H
#define TESTS_DISPATCH_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "iface/metric.h"
#include "iface/reply.h"
#include "ops/dispatch.h"
#include "scripted_fetch.h"

#define MAX_LINES 256

/* What the client received. */
struct fake_client {
	struct reply reply;
	char *lines[MAX_LINES];
	double t0[MAX_LINES];          /* the stamp each line was sent with */
	unsigned char kind[MAX_LINES]; /* (reply.h) */
	size_t nlines, settled;
};

static struct event_base *base;
static struct dispatch *d;
static struct fake_client client;
static struct session *s;
static size_t stat_rows; /* of fake_stats(), as the fixture was set up */

static inline void
client_send(
    struct reply *r, const struct reply_stamp *st, const char *line, size_t len)
{
	struct fake_client *c = (struct fake_client *)r;

	ck_assert_uint_lt(c->nlines, MAX_LINES);
	ck_assert_ptr_nonnull(st); /* every line answers a request */
	c->t0[c->nlines] = st->t0;
	c->kind[c->nlines] = st->kind;
	c->lines[c->nlines++] = strndup(line, len);
}

static inline void
client_give(
    struct reply *r, const struct reply_stamp *st, char *line, size_t len)
{
	client_send(r, st, line, len);
	free(line);
}

static inline void
client_settled(struct reply *r)
{
	((struct fake_client *)r)->settled++;
}

static const struct reply_ops client_ops = { client_send, client_give,
	client_settled, NULL, NULL, NULL };

/*
 * The stats table the dispatcher is handed: two fixed rows around one only
 * for /metrics (no stats name), which the stats op leaves out; the last,
 * a gauge, only when the fixture was set up with it.
 */
static inline size_t
fake_stats(void *arg, struct metric *out)
{
	(void)arg;
	out[0] = (struct metric){ .name = "hits",
		.prom = "robotsd_hits_total",
		.help = "h",
		.type = METRIC_COUNTER,
		.value = 7 };
	out[1] = (struct metric){ .prom = "robotsd_answers_total",
		.help = "a",
		.type = METRIC_COUNTER,
		.value = 3,
		.label = "source=\"cache\"" };
	out[2] = (struct metric){ .name = "waiting",
		.prom = "robotsd_waiting",
		.help = "w",
		.type = METRIC_GAUGE };
	return stat_rows;
}

/*
 * A dispatcher over the scripted cache (the hidden clock op if test_clock),
 * its stats the first 2 or all 3 rows of fake_stats(), and session s of
 * client, an admin.
 */
static inline void
dispatch_fixture_setup(int test_clock, size_t rows)
{
	struct dispatch_settings ds = { .test_clock = test_clock,
		.wait_timeout = 65 };

	memset(&client, 0, sizeof(client));
	client.reply.ops = &client_ops;
	stat_rows = rows;
	cache_setup();
	ck_assert_ptr_nonnull(base = event_base_new());
	d = dispatch_new(base, cache, &clk, fake_stats, NULL);
	dispatch_configure(d, &ds);
	s = session_new(d, &client.reply);
	session_set_admin(s, 1);
}

static inline void
dispatch_fixture_teardown(void)
{
	size_t i;

	session_free(s);
	dispatch_free(d);
	cache_teardown();
	event_base_free(base);
	for (i = 0; i < client.nlines; i++)
		free(client.lines[i]);
}

#endif /* TESTS_DISPATCH_FIXTURE_H */
