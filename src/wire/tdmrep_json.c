/*
 * tdmrep_json.c: tdmrep.json read with jansson (tdmrep_json.h): the size
 * and depth checked and what jansson would refuse the whole file for
 * defused before jansson sees it, then each array member checked for the
 * types section 3.1 gives and handed to librobots as a rule, or skipped
 * with a warning.
 */
#include <config.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots/tdmrep.h"
#include "wire/tdmrep_json.h"

/* Why member m cannot be a rule, or -1 when it can. */
static int
tdmrep_json_check(json_t *m)
{
	json_t *res = json_object_get(m, "tdm-reservation");
	json_t *pol = json_object_get(m, "tdm-policy");
	double v;

	if (!json_is_object(m))
		return TDMREP_W_NOT_OBJECT;
	if (!json_is_string(json_object_get(m, "location")))
		return TDMREP_W_LOCATION;
	if (!json_is_number(res))
		return TDMREP_W_RESERVATION;
	v = json_number_value(res);
	if (v != 0.0 && v != 1.0)
		return TDMREP_W_RESERVATION;
	if (pol != NULL && !json_is_string(pol))
		return TDMREP_W_POLICY;
	return -1;
}

/* Every member of array a into t; -1 without memory. */
static int
tdmrep_json_read(struct tdmrep *t, json_t *a, size_t n)
{
	json_t *m, *loc, *pol;
	size_t i;
	int why;

	for (i = 0; i < n; i++) {
		m = json_array_get(a, i);
		if ((why = tdmrep_json_check(m)) >= 0) {
			robots_tdmrep_warn(
			    t, (uint32_t)i, (enum tdmrep_wcode)why);
			continue;
		}
		loc = json_object_get(m, "location");
		pol = json_object_get(m, "tdm-policy");
		if (robots_tdmrep_add(t, (uint32_t)i, json_string_value(loc),
		        json_string_length(loc),
		        json_number_value(
		            json_object_get(m, "tdm-reservation")) == 1.0,
		        pol != NULL ? json_string_value(pol) : NULL,
		        pol != NULL ? json_string_length(pol) : 0) != 0)
			return -1;
	}
	return 0;
}

/*
 * body as jansson's tree, or NULL with jerr set (*nomem when memory ran
 * out instead): a copy defused first (robots_tdmrep_defuse(): a number
 * not exactly 0 or 1, which jansson may not hold, becomes 2; a \u0000 in
 * a key, which it refuses, \u0001), \u0000 kept in string values,
 * numbers read as reals (TDMRep knows one number type), so that one bad
 * member is that member's warning, not the whole file's.
 */
static json_t *
tdmrep_json_load(const char *body, size_t len, json_error_t *jerr, int *nomem)
{
	json_t *root;
	char *copy;

	if ((*nomem = (copy = malloc(len > 0 ? len : 1)) == NULL))
		return NULL;
	memcpy(copy, body, len);
	(void)robots_tdmrep_defuse(copy, len);
	root = json_loadb(
	    copy, len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, jerr);
	free(copy);
	return root;
}

static struct tdmrep *
tdmrep_json_fail(
    enum tdmrep_error *err, enum tdmrep_error e, json_t *root, struct tdmrep *t)
{
	*err = e;
	json_decref(root);
	robots_tdmrep_free(t);
	return NULL;
}

struct tdmrep *
tdmrep_json_parse(
    const char *body, size_t len, enum tdmrep_error *err, char *why)
{
	struct tdmrep *t;
	json_error_t jerr;
	json_t *root;
	size_t n;
	int nomem;

	if (why != NULL)
		why[0] = '\0';
	if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
		body += 3, len -= 3;
	if (len > TDMREP_MAX_BODY)
		return tdmrep_json_fail(err, TDMREP_E_TOO_BIG, NULL, NULL);
	if (!robots_tdmrep_depth_ok(body, len))
		return tdmrep_json_fail(err, TDMREP_E_DEPTH, NULL, NULL);
	if ((root = tdmrep_json_load(body, len, &jerr, &nomem)) == NULL) {
		if (nomem)
			return tdmrep_json_fail(
			    err, TDMREP_E_NOMEM, NULL, NULL);
		if (why != NULL)
			memcpy(why, jerr.text, sizeof(jerr.text));
		return tdmrep_json_fail(err, TDMREP_E_JSON, NULL, NULL);
	}
	if (!json_is_array(root))
		return tdmrep_json_fail(err, TDMREP_E_NOT_ARRAY, root, NULL);
	n = json_array_size(root);
	if ((t = robots_tdmrep_new(n)) == NULL)
		return tdmrep_json_fail(err, TDMREP_E_NOMEM, root, NULL);
	if (n > TDMREP_MAX_RULES) {
		robots_tdmrep_warn(t, TDMREP_MAX_RULES, TDMREP_W_TOO_MANY);
		n = TDMREP_MAX_RULES;
	}
	if (tdmrep_json_read(t, root, n) != 0)
		return tdmrep_json_fail(err, TDMREP_E_NOMEM, root, t);
	json_decref(root);
	*err = TDMREP_OK;
	return t;
}

int
tdmrep_file_read(struct tdmrep_file *f, const char *body, size_t len)
{
	const struct tdmrep_warning *w;
	uint32_t *at;
	size_t i, kept, total, n = 0;

	memset(f, 0, sizeof(*f));
	f->rules = tdmrep_json_parse(body, len, &f->error, f->why);
	if (f->rules == NULL)
		return f->error == TDMREP_E_NOMEM ? -1 : 0;
	w = robots_tdmrep_warnings(f->rules, &kept, &total);
	for (i = 0; i < kept; i++)
		if (w[i].member + 1 > n)
			n = w[i].member + 1;
	if ((at = calloc(n > 0 ? n : 1, sizeof(at[0]))) == NULL) {
		tdmrep_file_clear(f);
		return -1;
	}
	robots_tdmrep_member_lines(body, len, at, n);
	f->lines = at;
	f->nlines = n;
	return 0;
}

void
tdmrep_file_clear(struct tdmrep_file *f)
{
	robots_tdmrep_free(f->rules);
	free(f->lines);
	memset(f, 0, sizeof(*f));
}

/* Why the file f as a whole is invalid, into out. */
static void
tdmrep_file_invalid(const struct tdmrep_file *f, char *out, size_t n)
{
	switch (f->error) {
	case TDMREP_E_TOO_BIG:
		snprintf(out, n, "the file is over %d bytes: invalid",
		    TDMREP_MAX_BODY);
		break;
	case TDMREP_E_DEPTH:
		snprintf(out, n,
		    "arrays and objects nest over %d deep: invalid",
		    TDMREP_MAX_DEPTH);
		break;
	case TDMREP_E_JSON:
		snprintf(out, n, "not JSON (%s): invalid", f->why);
		break;
	default:
		snprintf(out, n, "not a JSON array of rules: invalid");
		break;
	}
}

/* The text of member warning w into out. */
static void
tdmrep_member_text(const struct tdmrep_warning *w, char *out, size_t n)
{
	static const char *const what[] = { "is not an object",
		"has no location that is a string starting with '/' or '*'",
		"has a location over 2048 bytes",
		"has no tdm-reservation that is the number 0 or 1",
		"has a tdm-policy that is not a string",
		"has a tdm-policy over 2048 bytes: kept without it", NULL, NULL,
		"has a location with a NUL character (\\u0000)",
		"has a tdm-policy with a NUL character (\\u0000): kept "
		"without it" };
	int kept = w->code == TDMREP_W_POLICY_LONG;

	kept |= w->code == TDMREP_W_POLICY_NUL;

	if (w->code == TDMREP_W_SHADOWED)
		snprintf(out, n,
		    "member %u can never decide: the location of member %u, "
		    "earlier, is a prefix of its own",
		    w->member, w->by);
	else if (w->code == TDMREP_W_TOO_MANY)
		snprintf(out, n, "members from %u on are ignored (at most %d)",
		    w->member, TDMREP_MAX_RULES);
	else if ((size_t)w->code < sizeof(what) / sizeof(what[0]) &&
	         what[w->code] != NULL)
		snprintf(out, n, "member %u %s%s", w->member, what[w->code],
		    kept ? "" : ": skipped");
	else
		snprintf(out, n, "member %u", w->member);
}

int
tdmrep_file_warning(const struct tdmrep_file *f, size_t i, const char **code,
    uint32_t *line, char *out, size_t n)
{
	const struct tdmrep_warning *w;
	size_t kept, total;

	*line = 0;
	if (f->rules == NULL) {
		if (i > 0)
			return -1;
		*code = "tdmrep_invalid";
		tdmrep_file_invalid(f, out, n);
		return 0;
	}
	w = robots_tdmrep_warnings(f->rules, &kept, &total);
	if (i == kept && total > kept) {
		*code = "tdmrep_warnings_dropped";
		snprintf(out, n,
		    "%zu more warnings not listed (the first %d "
		    "are)",
		    total - kept, TDMREP_MAX_WARNINGS);
		return 0;
	}
	if (i >= kept)
		return -1;
	*code = robots_tdmrep_wcode_name(w[i].code);
	if (w[i].member < f->nlines)
		*line = f->lines[w[i].member];
	tdmrep_member_text(&w[i], out, n);
	return 0;
}
