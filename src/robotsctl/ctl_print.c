/*
 * ctl_print.c: robotsctl's text rendering of the daemon's JSON answers:
 * scalars, check verdicts ("disallowed URL (line 3: disallow /a/)") and
 * nested objects flattened into "key: value" lines (inspect); and its own
 * error messages, which every part of robotsctl reports through.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "robotsctl.h"

/*
 * Write text that came from a robots.txt or the daemon to out: its control
 * characters (C0, DEL, and C1 as UTF-8 encodes them) and backslash as
 * escapes (\x1b, \u009b, \\), so nothing reaches the terminal as a
 * command. Other bytes, UTF-8 included, go out as they are.
 */
static void
put_escaped(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\\')
			fputs("\\\\", out);
		else if (p[i] < 0x20 || p[i] == 0x7f)
			fprintf(out, "\\x%02x", p[i]);
		else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 &&
		         p[i + 1] <= 0x9f)
			fprintf(out, "\\u%04x", p[++i]);
		else
			putc(p[i], out);
	}
}

/*
 * Print "robotsctl: MESSAGE" on stderr, escaped as put_escaped() does:
 * messages carry what the daemon or a file said.
 */
void
ctl_warnx(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	fputs("robotsctl: ", stderr);
	put_escaped(
	    stderr, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	if ((size_t)n >= sizeof(msg))
		fputs("...", stderr);
	fputc('\n', stderr);
}

/* The value of a JSON string, or def when v is not one. */
const char *
ctl_str_or(const json_t *v, const char *def)
{
	return json_is_string(v) ? json_string_value(v) : def;
}

/* Print text from a peer on stdout, escaped (put_escaped()). */
void
ctl_put_text(const char *s, size_t n)
{
	put_escaped(stdout, s, n);
}

/*
 * Print a JSON line from the daemon as it came, but for what a terminal
 * would take as a command: valid JSON has control bytes only as
 * whitespace between tokens, printed as a space, and DEL and the C1
 * controls only inside strings, printed as \u escapes: the same JSON.
 */
void
ctl_put_json(const char *line)
{
	const unsigned char *p = (const unsigned char *)line;

	for (; *p != '\0'; p++) {
		if (*p < 0x20)
			putchar(' ');
		else if (*p == 0x7f)
			fputs("\\u007f", stdout);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			printf("\\u%04x", *++p);
		else
			putchar(*p);
	}
	putchar('\n');
}

/* Print a scalar the way a person reads it; null is "-". */
void
ctl_print_scalar(const json_t *v)
{
	char *s;

	if (json_is_string(v))
		ctl_put_text(json_string_value(v), json_string_length(v));
	else if (json_is_integer(v))
		printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		printf("%.15g", json_real_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "true" : "false", stdout);
	else if (json_is_null(v) || v == NULL)
		fputs("-", stdout);
	else if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL) {
		fputs(s, stdout);
		free(s);
	}
}

/* Whether key names a point in time (unix seconds) in an inspect answer. */
static int
is_time_key(const char *key)
{
	static const char *const keys[] = { "fetched_at", "expires_at",
		"failing_since", "next_retry", "validated_at",
		"last_fetch_at" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

/* Print one "key: value" line; times also as UTC dates. */
static void
print_pair(const char *path, const char *key, const json_t *v)
{
	char date[64];
	struct tm tm;
	time_t t;

	ctl_put_text(path, strlen(path));
	fputs(": ", stdout);
	ctl_print_scalar(v);
	if (json_is_number(v) && is_time_key(key)) {
		t = (time_t)json_number_value(v);
		if (gmtime_r(&t, &tm) != NULL &&
		    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm) >
		        0)
			printf(" (%s)", date);
	}
	putchar('\n');
}

/* Whether every element of an array is a scalar. */
static int
array_is_flat(const json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		if (json_is_object(v) || json_is_array(v))
			return 0;
	}
	return 1;
}

static void flat_value(const char *, const char *, const json_t *);

/* Print an array: scalars joined on one line, objects one by one as [i]. */
static void
print_flat_array(const char *path, const char *key, const json_t *a)
{
	char *sub;
	size_t i;
	json_t *v;

	if (array_is_flat(a)) {
		ctl_put_text(path, strlen(path));
		printf(":%s", json_array_size(a) == 0 ? " (none)" : "");
		json_array_foreach(a, i, v)
		{
			fputs(i == 0 ? " " : ", ", stdout);
			ctl_print_scalar(v);
		}
		putchar('\n');
		return;
	}
	json_array_foreach(a, i, v)
	{
		if (asprintf(&sub, "%s[%zu]", path, i) == -1)
			return;
		flat_value(sub, key, v);
		free(sub);
	}
}

/* Print v as "a.b[0].c: value" lines under path (NULL at the top). */
static void
flat_value(const char *path, const char *key, const json_t *v)
{
	const char *k;
	char *sub;
	json_t *m;

	if (json_is_array(v)) {
		print_flat_array(path, key, v);
		return;
	}
	if (!json_is_object(v)) {
		print_pair(path, key, v);
		return;
	}
	json_object_foreach((json_t *)v, k, m)
	{
		if (path == NULL &&
		    (strcmp(k, "id") == 0 || strcmp(k, "ok") == 0))
			continue;
		if (path == NULL)
			sub = strdup(k);
		else if (asprintf(&sub, "%s.%s", path, k) == -1)
			sub = NULL;
		if (sub == NULL)
			return;
		flat_value(sub, k, m);
		free(sub);
	}
}

/* An object as "a.b[0].c: value" lines, "id" and "ok" left out. */
void
ctl_print_flat(const json_t *v)
{
	flat_value(NULL, NULL, v);
}

/*
 * An inspect answer: "key: value" lines, then one line per extra directive
 * line and per warning:
 *   extra line 2 (before the groups): content-signal: search=yes
 *   warning line 7 pref_parse_failed: ...
 */
void
ctl_print_inspect(json_t *ans)
{
	json_t *extra = json_incref(json_object_get(ans, "extra_lines"));
	json_t *warnings = json_incref(json_object_get(ans, "warnings"));
	json_t *v, *g;
	size_t i;

	json_object_del(ans, "extra_lines");
	json_object_del(ans, "warnings");
	ctl_print_flat(ans);
	json_array_foreach(extra, i, v)
	{
		printf("extra line %" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(v, "line")));
		if (json_is_integer(g = json_object_get(v, "group")))
			printf(" (group %" JSON_INTEGER_FORMAT "): ",
			    json_integer_value(g));
		else
			fputs(" (before the groups): ", stdout);
		ctl_print_scalar(json_object_get(v, "directive"));
		fputs(": ", stdout);
		ctl_print_scalar(json_object_get(v, "value"));
		putchar('\n');
	}
	json_array_foreach(warnings, i, v)
	{
		printf("warning line %" JSON_INTEGER_FORMAT " ",
		    json_integer_value(json_object_get(v, "line")));
		ctl_print_scalar(json_object_get(v, "code"));
		fputs(": ", stdout);
		ctl_print_scalar(json_object_get(v, "message"));
		putchar('\n');
	}
	json_decref(extra);
	json_decref(warnings);
}

/*
 * Print a check-shaped answer: "allowed URL (DETAIL)" where DETAIL is the
 * deciding rule ("line 3: disallow /a/"), else the reason, with the HTTP
 * status for unavailable/unreachable, the cause of an unreachable one
 * ("; cause dns: TEXT"), the crawl delay (", crawl delay 2.5 s") and
 * ", stale" for a stale copy.
 */
void
ctl_print_check(const char *url, const json_t *ans)
{
	const char *reason =
	    ctl_str_or(json_object_get(ans, "reason"), "unknown");
	const char *source = ctl_str_or(json_object_get(ans, "source"), "");
	const json_t *rule = json_object_get(ans, "rule");
	const json_t *status = json_object_get(ans, "http_status");
	const json_t *cause = json_object_get(ans, "cause");
	const json_t *delay = json_object_get(ans, "crawl_delay");

	printf("%s ", json_is_true(json_object_get(ans, "allowed"))
	                  ? "allowed"
	                  : "disallowed");
	ctl_put_text(url, strlen(url));
	fputs(" (", stdout);
	if (json_is_object(rule)) {
		printf("line %" JSON_INTEGER_FORMAT ": ",
		    json_integer_value(json_object_get(rule, "line")));
		ctl_print_scalar(json_object_get(rule, "directive"));
		putchar(' ');
		ctl_print_scalar(json_object_get(rule, "pattern"));
	} else {
		ctl_put_text(reason, strlen(reason));
		if (json_is_integer(status) &&
		    (strcmp(reason, "unavailable") == 0 ||
		        strcmp(reason, "unreachable") == 0))
			printf(": HTTP %" JSON_INTEGER_FORMAT,
			    json_integer_value(status));
		if (json_is_object(cause)) {
			printf("; cause %s: %s",
			    ctl_str_or(json_object_get(cause, "code"), "?"),
			    ctl_str_or(json_object_get(cause, "message"), ""));
		}
	}
	if (json_is_number(delay))
		printf(", crawl delay %g s", json_number_value(delay));
	if (strcmp(source, "stale") == 0)
		fputs(", stale", stdout);
	fputs(")\n", stdout);
}

/* "line N: DIRECTIVE PATTERN" of a rule object, or REASON. */
static void
print_rule(const json_t *rule, const char *none)
{
	if (!json_is_object(rule)) {
		fputs(none, stdout);
		return;
	}
	printf("line %" JSON_INTEGER_FORMAT ": ",
	    json_integer_value(json_object_get(rule, "line")));
	ctl_print_scalar(json_object_get(rule, "directive"));
	putchar(' ');
	ctl_print_scalar(json_object_get(rule, "pattern"));
}

void
ctl_print_usage(const json_t *ans)
{
	const json_t *usage = json_object_get(ans, "usage");
	const json_t *tokens = json_object_get(ans, "tokens"), *v, *s;
	const char *k;
	size_t i;

	if (json_is_null(usage))
		puts("  usage: none (a disallowed URL has no preferences)");
	else if (json_is_object(usage)) {
		fputs("  usage:", stdout);
		json_object_foreach((json_t *)usage, k, v)
		    printf(" %s=%s", k, ctl_str_or(v, "?"));
		putchar('\n');
	}
	json_array_foreach(json_object_get(ans, "usage_from"), i, s)
	{
		if (json_is_integer(json_object_get(s, "line")))
			printf("    line %" JSON_INTEGER_FORMAT ": %s",
			    json_integer_value(json_object_get(s, "line")),
			    ctl_str_or(json_object_get(s, "directive"), "?"));
		else
			printf("    %s: %s",
			    ctl_str_or(json_object_get(s, "source"), "?"),
			    ctl_str_or(json_object_get(s, "directive"), "?"));
		if (json_is_string(json_object_get(s, "scope")))
			printf(" (%s)",
			    ctl_str_or(json_object_get(s, "scope"), ""));
		putchar(' ');
		ctl_print_scalar(json_object_get(s, "pattern"));
		putchar(' ');
		ctl_print_scalar(json_object_get(s, "value"));
		putchar('\n');
	}
	json_object_foreach((json_t *)tokens, k, v)
	{
		printf("  token %s: %s (", k,
		    json_is_true(json_object_get(v, "allowed")) ? "allowed"
		                                                : "disallowed");
		print_rule(json_object_get(v, "rule"), "no_rule");
		fputs(")\n", stdout);
	}
}

/* For each of n pairs {TEXT, KEY}: TEXT, then o's member KEY. */
static void
print_fields(const json_t *o, const char *const f[][2], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fputs(f[i][0], stdout);
		ctl_print_scalar(json_object_get(o, f[i][1]));
	}
}

/* "  tdm: ..." of a tdm member (null: a disallowed URL). */
static void
print_tdm(const json_t *tdm)
{
	static const char *const head[][2] = { { " policy=", "policy" },
		{ " location=", "location" } };
	static const char *const from[][2] = { { " from=", "from" } };
	static const char *const tail[][2] = { { " (", "state" },
		{ ", version ", "version" } };
	const json_t *res = json_object_get(tdm, "reservation");

	if (json_is_null(tdm)) {
		puts("  tdm: none (a disallowed URL)");
		return;
	}
	fputs("  tdm: reservation=", stdout);
	if (json_is_integer(res))
		printf("%" JSON_INTEGER_FORMAT, json_integer_value(res));
	else
		fputs("none", stdout);
	print_fields(tdm, head, 2);
	if (json_is_string(json_object_get(tdm, "from")))
		print_fields(tdm, from, 1);
	print_fields(tdm, tail, 2);
	fputs(")\n", stdout);
}

/* "  robots_tag: RULE... NAME=VALUE..." and a line per source. */
static void
print_robots_tag(const json_t *t)
{
	const json_t *v, *s;
	const char *k;
	size_t i;

	if (json_is_null(t)) {
		puts("  robots_tag: none (a disallowed URL)");
		return;
	}
	fputs("  robots_tag:", stdout);
	json_array_foreach(json_object_get(t, "rules"), i, v)
	{
		putchar(' ');
		ctl_print_scalar(v);
	}
	json_object_foreach(json_object_get(t, "values"), k, v)
	{
		printf(" %s=", k);
		ctl_print_scalar(v);
	}
	putchar('\n');
	json_array_foreach(json_object_get(t, "from"), i, s)
	{
		fputs("    ", stdout);
		ctl_print_scalar(json_object_get(s, "source"));
		putchar(' ');
		ctl_print_scalar(json_object_get(s, "field"));
		fputs(": ", stdout);
		ctl_print_scalar(json_object_get(s, "value"));
		putchar('\n');
	}
}

void
ctl_print_signals(const json_t *ans)
{
	static const char *const evidence[][2] = { { "  evidence: robots=",
		                                       "robots" },
		{ " tdmrep=", "tdmrep" }, { " page=", "page" } };
	const json_t *ev = json_object_get(ans, "evidence");
	const json_t *v;

	if ((v = json_object_get(ans, "tdm")) != NULL)
		print_tdm(v);
	if ((v = json_object_get(ans, "robots_tag")) != NULL)
		print_robots_tag(v);
	if (json_is_object(ev)) {
		print_fields(ev, evidence, 3);
		putchar('\n');
	}
}
