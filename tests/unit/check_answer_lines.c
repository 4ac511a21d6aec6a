/*
 * check_answer_lines.c: every shape of answer line robotsd writes, pinned
 * byte for byte. Reads tests/data/answer-lines.txt, a script of request
 * lines, fetch endings and clock moves, each followed by the exact lines
 * the client must have received by then (see that file's header). The
 * dispatcher and the check path run over a real cache whose fetches are
 * scripted and whose clock is frozen.
 *
 * With ANSWER_LINES_RECORD=1 in the environment it prints the script with
 * the lines it received instead of comparing them (to review a new case).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "cache/cache.h"
#include "base/clock.h"
#include "ops/dispatch.h"
#include "base/metric.h"
#include "base/reply.h"
#include "scripted_fetch.h"
#include "test_main.h"

#define SCRIPT_FILE TESTDATADIR "/answer-lines.txt"
#define MAX_LINES 256
#define LINE_MAX_BYTES 70000

struct fake_client {
	struct reply reply;
	char *lines[MAX_LINES];
	size_t nlines;
};

static struct event_base *base;
static struct dispatch *d;
static struct fake_client client;
static struct session *s;
static size_t seen; /* received lines already compared */
static int record;

static void
client_send(struct reply *r, const char *line, size_t len)
{
	struct fake_client *c = (struct fake_client *)r;

	ck_assert_uint_lt(c->nlines, MAX_LINES);
	c->lines[c->nlines++] = strndup(line, len);
}

static void
client_give(struct reply *r, char *line, size_t len)
{
	client_send(r, line, len);
	free(line);
}

static void
client_settled(struct reply *r)
{
	(void)r;
}

static const struct reply_ops client_ops = { client_send, client_give,
	client_settled, NULL, NULL };

/* A fixed stats table: one row the stats op shows, one it leaves out. */
static size_t
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
		.value = 3 };
	return 2;
}

static void
setup(void)
{
	struct dispatch_settings ds = { .test_clock = 1, .wait_timeout = 65 };

	memset(&client, 0, sizeof(client));
	client.reply.ops = &client_ops;
	cache_setup();
	ck_assert_ptr_nonnull(base = event_base_new());
	d = dispatch_new(base, cache, &clk, fake_stats, NULL);
	dispatch_configure(d, &ds);
	s = session_new(d, &client.reply);
	session_set_admin(s, 1);
	seen = 0;
	record = getenv("ANSWER_LINES_RECORD") != NULL;
}

static void
teardown(void)
{
	size_t i;

	session_free(s);
	dispatch_free(d);
	cache_teardown();
	event_base_free(base);
	for (i = 0; i < client.nlines; i++)
		free(client.lines[i]);
}

/* "\n" in a script's body is a newline; the rest is as written. */
static void
unescape(char *t)
{
	char *o = t;

	for (; *t != '\0'; t++)
		if (t[0] == '\\' && t[1] == 'n') {
			*o++ = '\n';
			t++;
		} else
			*o++ = *t;
	*o = '\0';
}

/* The word arg starts with, cut off; arg moves past it and one space. */
static char *
word(char **arg)
{
	char *w = *arg, *sp = strchr(w, ' ');

	if (sp == NULL)
		*arg = w + strlen(w);
	else {
		*sp = '\0';
		*arg = sp + 1;
	}
	return w;
}

/* ! ORIGIN STATUS BODY, or ! ORIGIN dns MESSAGE: end origin's fetch. */
static void
step_fetch(char *arg)
{
	char *origin = word(&arg), *what = word(&arg), *rest = arg;
	struct fetch_result r;

	ck_assert_str_ne(what, "");
	unescape(rest);
	if (strcmp(what, "dns") == 0) {
		r = script_result(FETCH_NETWORK, 0);
		r.cause = CAUSE_DNS;
		r.error_message = rest;
	} else {
		r = script_result(FETCH_OK, (int)strtol(what, NULL, 10));
		r.body = rest;
		r.body_len = strlen(rest);
	}
	script_fill(&sc, origin, &r);
}

/* = WORD [ARG]: the session and dispatcher calls that are no line. */
static void
step_call(const char *arg)
{
	if (strncmp(arg, "too_long ", 9) == 0)
		session_too_long(s, (size_t)strtoul(arg + 9, NULL, 10));
	else if (strcmp(arg, "expire") == 0)
		dispatch_expire_waiting(d);
	else if (strcmp(arg, "admin 0") == 0)
		session_set_admin(s, 0);
	else if (strcmp(arg, "admin 1") == 0)
		session_set_admin(s, 1);
	else
		ck_abort_msg("unknown call: %s", arg);
}

/* Every line received so far was expected (or, recording, is printed). */
static void
all_seen(int lineno)
{
	if (record) {
		for (; seen < client.nlines; seen++)
			printf("< %s", client.lines[seen]);
		return;
	}
	ck_assert_msg(client.nlines == seen, "line %d: %zu unexpected answers",
	    lineno, client.nlines - seen);
}

/* < LINE: the next answer received is LINE, byte for byte. */
static void
step_answer(const char *line, int lineno)
{
	static char want[LINE_MAX_BYTES];
	const char *v = strstr(line, "@VERSION@");

	if (record)
		return;
	if (v == NULL)
		snprintf(want, sizeof(want), "%s", line);
	else /* the release's version, as ping answers it */
		snprintf(want, sizeof(want), "%.*s%s%s", (int)(v - line), line,
		    PACKAGE_VERSION, v + 9);
	ck_assert_msg(
	    seen < client.nlines, "line %d: no answer for %s", lineno, want);
	ck_assert_msg(
	    strlen(client.lines[seen]) == strlen(want) + 1 &&
	        strncmp(client.lines[seen], want, strlen(want)) == 0 &&
	        client.lines[seen][strlen(want)] == '\n',
	    "line %d:\nwant %s\ngot  %s", lineno, want, client.lines[seen]);
	seen++;
}

START_TEST(test_every_answer_line_as_pinned)
{
	static char line[LINE_MAX_BYTES];
	FILE *f = fopen(SCRIPT_FILE, "r");
	int lineno = 0;
	size_t len;

	ck_assert_msg(f != NULL, "%s", SCRIPT_FILE);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		len = strlen(line);
		ck_assert_msg(
		    len > 0 && line[len - 1] == '\n', "line %d", lineno);
		line[--len] = '\0';
		if (line[0] == '<') {
			step_answer(line + 2, lineno);
			continue;
		}
		all_seen(lineno);
		if (record)
			printf("%s\n", line);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		ck_assert_msg(len > 2 && line[1] == ' ', "line %d", lineno);
		if (line[0] == '>')
			session_line(s, line + 2, len - 2);
		else if (line[0] == '!')
			step_fetch(line + 2);
		else if (line[0] == '+')
			clk.frozen += strtod(line + 2, NULL);
		else if (line[0] == '=')
			step_call(line + 2);
		else
			ck_abort_msg("line %d: unknown step", lineno);
	}
	all_seen(lineno + 1);
	fclose(f);
}
END_TEST

static Suite *
answer_lines_suite(void)
{
	Suite *su = suite_create("answer_lines");
	TCase *tc = tcase_create("answer_lines");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_answer_line_as_pinned);
	suite_add_tcase(su, tc);
	return su;
}

TEST_PROGRAM(answer_lines_suite, NULL, NULL);
