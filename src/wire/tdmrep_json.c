/*
 * tdmrep_json.c: tdmrep.json read with jansson (tdmrep_json.h): the size
 * and depth checked before jansson sees it, then each array member checked
 * for the types section 3.1 gives and handed to librobots as a rule, or
 * skipped with a warning.
 */
#include <config.h>

#include <jansson.h>
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

	if (why != NULL)
		why[0] = '\0';
	if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
		body += 3, len -= 3;
	if (len > TDMREP_MAX_BODY)
		return tdmrep_json_fail(err, TDMREP_E_TOO_BIG, NULL, NULL);
	if (!robots_tdmrep_depth_ok(body, len))
		return tdmrep_json_fail(err, TDMREP_E_DEPTH, NULL, NULL);
	if ((root = json_loadb(body, len, 0, &jerr)) == NULL) {
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
