/*
 * ctl_feed.c: "robotsctl watch [ORIGIN...]", the change feed: a watch
 * request for the origins named (all when none), then a line per event
 * until robotsd closes the connection or the user interrupts:
 *
 *   TIME ORIGIN OLD -> NEW STATE [AGENT: -PATTERN... +PATTERN...]...
 *
 * "-" marks a pattern newly disallowed, "+" one newly allowed, "usage
 * changed" a change of its usage preference statements; an agent with
 * none of these prints "no change". With --tdm the origins' tdmrep.json
 * changes too, each as
 *
 *   TIME ORIGIN tdmrep OLD -> NEW STATE (was OLD_STATE)
 *
 * ("(was none)" for a first version). With --json each line as received.
 * Every byte from the daemon is a peer's (a pattern is a crawled site's):
 * strings are printed escaped (ctl_put_text), JSON lines without terminal
 * controls (ctl_put_json).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "robotsctl.h"

/* A string from the daemon, escaped; def when v is not one. */
static void
feed_str(const json_t *v, const char *def)
{
	if (json_is_string(v))
		ctl_put_text(json_string_value(v), json_string_length(v));
	else
		fputs(def, stdout);
}

/* Print a list of patterns, each after mark. */
static void
feed_pats(const json_t *a, char mark)
{
	size_t i;

	for (i = 0; i < json_array_size(a); i++) {
		printf(" %c", mark);
		feed_str(json_array_get(a, i), "?");
	}
}

/* One agent's difference. */
static void
feed_agent(const char *agent, const json_t *d)
{
	const json_t *dis = json_object_get(d, "newly_disallowed");
	const json_t *allow = json_object_get(d, "newly_allowed");
	int usage = json_is_true(json_object_get(d, "usage_changed"));

	fputs(" [", stdout);
	ctl_put_text(agent, strlen(agent));
	putchar(':');
	if (!json_is_object(d))
		fputs(" unknown", stdout);
	else if (json_array_size(dis) + json_array_size(allow) == 0 && !usage)
		fputs(" no change", stdout);
	feed_pats(dis, '-');
	feed_pats(allow, '+');
	if (usage)
		fputs(" usage changed", stdout);
	putchar(']');
}

/* A "changed" event as one line of text, every string escaped. */
static void
feed_changed(const json_t *ev)
{
	double at = json_number_value(json_object_get(ev, "at"));
	time_t t = (time_t)at;
	struct tm tm;
	char when[32] = "-";
	const char *agent;
	json_t *d;
	int tdm = strcmp(ctl_str_or(json_object_get(ev, "resource"), ""),
	              "tdmrep") == 0;

	if (gmtime_r(&t, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s ", when);
	feed_str(json_object_get(ev, "origin"), "?");
	putchar(' ');
	if (tdm)
		fputs("tdmrep ", stdout);
	feed_str(json_object_get(ev, "old"), "none");
	fputs(" -> ", stdout);
	feed_str(json_object_get(ev, "new"), "?");
	putchar(' ');
	feed_str(json_object_get(ev, "state"), "?");
	if (tdm) {
		fputs(" (was ", stdout);
		feed_str(json_object_get(ev, "old_state"), "none");
		putchar(')');
	}
	json_object_foreach(json_object_get(ev, "agents"), agent, d)
	    feed_agent(agent, d);
	putchar('\n');
}

/* ctl_stream's callback: print one line; the end at "dropped". */
static int
feed_line(const char *raw, const json_t *v, void *arg)
{
	const struct ctl *ctl = arg;
	const char *event = ctl_str_or(json_object_get(v, "event"), "");

	if (ctl->json)
		ctl_put_json(raw);
	else if (strcmp(event, "changed") == 0)
		feed_changed(v);
	fflush(stdout);
	if (strcmp(event, "dropped") == 0) {
		ctl_warnx("dropped by robotsd: %s",
		    ctl_str_or(json_object_get(v, "reason"), "no reason"));
		return -1;
	}
	return 0;
}

/* watch [ORIGIN...] [--agent A]... [--tdm]: exit 2 when the feed ends. */
int
ctl_cmd_watch(const struct ctl *ctl, int argc, char **argv)
{
	json_t *req = json_pack("{s:s}", "op", "watch"), *v;
	int i;

	if (argc == 0)
		json_object_set_new(req, "all", json_true());
	else {
		v = json_array();
		for (i = 0; i < argc; i++)
			json_array_append_new(v, json_string(argv[i]));
		json_object_set_new(req, "origins", v);
	}
	if (ctl->nagents > 0) {
		v = json_array();
		for (i = 0; i < ctl->nagents; i++)
			json_array_append_new(v, json_string(ctl->agents[i]));
		json_object_set_new(req, "agents", v);
	}
	if (ctl->tdm) /* robots.txt's changes, and tdmrep.json's */
		json_object_set_new(req, "resources",
		    json_pack("[s, s]", "robots.txt", "tdmrep"));
	ctl_stream(ctl, req, feed_line, (void *)ctl);
	return CTL_EXIT_ERROR;
}
