/*
 * ctl_print.c: robotsctl's text rendering of the daemon's JSON answers:
 * scalars, check verdicts ("disallowed URL (line 3: disallow /a/)") and
 * nested objects flattened into "key: value" lines (inspect).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "robotsctl.h"

/* The value of a JSON string, or def when v is not one. */
const char *
ctl_str_or(const json_t *v, const char *def)
{
	return json_is_string(v) ? json_string_value(v) : def;
}

/* Print a scalar the way a person reads it; null is "-". */
void
ctl_print_scalar(const json_t *v)
{
	char *s;

	if (json_is_string(v))
		fwrite(json_string_value(v), 1, json_string_length(v), stdout);
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
		"failing_since", "next_retry" };
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

	printf("%s: ", path);
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
		printf("%s:%s", path, json_array_size(a) == 0 ? " (none)" : "");
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

	printf("%s %s (",
	    json_is_true(json_object_get(ans, "allowed")) ? "allowed"
	                                                  : "disallowed",
	    url);
	if (json_is_object(rule)) {
		printf("line %" JSON_INTEGER_FORMAT ": ",
		    json_integer_value(json_object_get(rule, "line")));
		ctl_print_scalar(json_object_get(rule, "directive"));
		putchar(' ');
		ctl_print_scalar(json_object_get(rule, "pattern"));
	} else {
		fputs(reason, stdout);
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
