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

#include "dispatch_fixture.h"
#include "test_main.h"

#define SCRIPT_FILE TESTDATADIR "/answer-lines.txt"
#define LINE_MAX_BYTES 70000

static size_t seen; /* received lines already compared */
static int record;

/* The fixture, its stats op showing "hits" only (2 rows). */
static void
setup(void)
{
	dispatch_fixture_setup(1, 2);
	seen = 0;
	record = getenv("ANSWER_LINES_RECORD") != NULL;
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

	tcase_add_checked_fixture(tc, setup, dispatch_fixture_teardown);
	tcase_add_test(tc, test_every_answer_line_as_pinned);
	suite_add_tcase(su, tc);
	return su;
}

TEST_PROGRAM(answer_lines_suite, NULL, NULL);
