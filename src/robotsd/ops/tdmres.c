/*
 * tdmres.c: tdmrep.json as a cache kind (its body compiled by
 * wire/tdmrep_json.c into librobots' TDMRep rules, or kept as invalid
 * with the reason), the names of its states, and the step of a check
 * with "tdm":true that waits for the file before robots.txt is looked
 * at, robots.txt's fetch started meanwhile so the two run side by side.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/tdmres.h"
#include "wire/jsonw.h"
#include "wire/tdmrep_json.h"

/* The warning that says why a whole file is invalid, into d->why. */
static void
tdm_doc_why(struct tdm_doc *d, const char *detail)
{
	const char *name = robots_tdmrep_error_name(d->error);

	switch (d->error) {
	case TDMREP_E_NOT_ARRAY:
		snprintf(d->why, sizeof(d->why),
		    "%s: tdmrep.json is not a JSON array", name);
		break;
	case TDMREP_E_JSON:
		snprintf(d->why, sizeof(d->why), "%s: %s", name, detail);
		break;
	default:
		snprintf(d->why, sizeof(d->why), "%s", name);
	}
}

/* tdm_kind's compile(): the rules, or an invalid file and why. */
static void *
tdm_compile(const char *body, size_t len)
{
	struct tdm_doc *d;
	char detail[192] = "";

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->refs = 1;
	d->rules = tdmrep_json_parse(body, len, &d->error, detail);
	if (d->rules == NULL && d->error == TDMREP_E_NOMEM) {
		free(d);
		return NULL;
	}
	if (d->rules == NULL)
		tdm_doc_why(d, detail);
	return d;
}

/* tdm_kind's ref(). */
static void *
tdm_ref(void *doc)
{
	((struct tdm_doc *)doc)->refs++;
	return doc;
}

/* tdm_kind's unref(). */
static void
tdm_unref(void *doc)
{
	struct tdm_doc *d = doc;

	if (d == NULL || --d->refs > 0)
		return;
	robots_tdmrep_free(d->rules);
	free(d);
}

const struct cache_kind tdm_kind = { "tdmrep", "/.well-known/tdmrep.json",
	tdm_compile, tdm_ref, tdm_unref };

/* See tdmres.h. */
const char *
tdm_state_name(const struct cache_entry *e)
{
	const struct tdm_doc *d = e->doc;

	switch ((enum cache_policy)e->policy) {
	case CACHE_RULES:
		return d != NULL && d->rules != NULL ? "rules" : "invalid";
	case CACHE_ALLOW_ALL:
		return "none";
	case CACHE_DISALLOW_ALL:
		return "unreachable";
	case CACHE_NONE:
		break;
	}
	return "pending";
}

/*
 * --tdmrep always: keep origin's file at hand for the checks that will
 * ask, fetched in the background when it is not settled or is due.
 */
static void
tdm_prefetch(struct cache *tdm, const char *origin)
{
	const struct cache_entry *e;

	if (cache_check_cached(tdm, origin, &e) == CACHE_MISS)
		(void)cache_check(tdm, origin, 0, NULL, &e);
}

/* See tdmres.h. */
enum tdm_gate
tdm_gate(const struct tdm_step *t, const char *origin, struct cache_waiter *w)
{
	const struct cache_entry *e;

	if (t->tdm == NULL)
		return TDM_GO;
	if (!t->asked) {
		if (t->mode == TDM_ALWAYS)
			tdm_prefetch(t->tdm, origin);
		return TDM_GO;
	}
	if (cache_check_cached(t->tdm, origin, &e) != CACHE_MISS)
		return TDM_GO;
	if (w == NULL)
		return TDM_MISS;
	if (!t->wait)
		return tdm_prefetch(t->tdm, origin), TDM_GO;
	/* robots.txt's fetch alongside, which the check then waits for */
	if (cache_find(t->robots, origin) == NULL)
		(void)cache_refresh(t->robots, origin, 0, 1);
	if (cache_check(t->tdm, origin, 1, w, &e) == CACHE_WAIT)
		return TDM_WAIT;
	return TDM_GO; /* settled, or overloaded: the answer says so */
}

/* "rules" of an inspect answer: the members kept, in file order. */
static void
tdm_inspect_rules(struct jw *w, const struct tdmrep *t)
{
	const struct tdmrep_rule *r;
	size_t i;

	jw_key(w, "rules");
	if (t == NULL) {
		jw_vnull(w);
		return;
	}
	jw_arr(w);
	for (i = 0; i < robots_tdmrep_count(t); i++) {
		r = robots_tdmrep_rule(t, i);
		jw_obj(w);
		jw_kint(w, "member", r->member);
		jw_kstr(w, "location", r->location, r->location_len);
		jw_kint(w, "tdm-reservation", r->reservation);
		jw_key(w, "tdm-policy");
		if (r->policy != NULL)
			jw_vstr(w, r->policy, r->policy_len);
		else
			jw_vnull(w);
		jw_end(w);
	}
	jw_end(w);
}

/* One warning of an inspect answer (member -1: the whole file). */
static void
tdm_inspect_warning(
    struct jw *w, long long member, const char *code, const char *msg)
{
	jw_obj(w);
	jw_key(w, "member");
	if (member >= 0)
		jw_vint(w, member);
	else
		jw_vnull(w);
	jw_kstr(w, "code", code, strlen(code));
	jw_kstr(w, "message", msg, strlen(msg));
	jw_end(w);
}

/* See tdmres.h. */
void
tdm_inspect_members(struct jw *w, const struct cache_entry *e)
{
	const struct tdm_doc *d = e->policy == CACHE_RULES ? e->doc : NULL;
	const struct tdmrep_warning *tw = NULL;
	size_t i, kept = 0, total = 0;
	char msg[96];

	tdm_inspect_rules(w, d != NULL ? d->rules : NULL);
	jw_key(w, "warnings");
	jw_arr(w);
	if (d != NULL && d->rules == NULL)
		tdm_inspect_warning(w, -1, "tdmrep_invalid", d->why);
	if (d != NULL && d->rules != NULL)
		tw = robots_tdmrep_warnings(d->rules, &kept, &total);
	for (i = 0; i < kept; i++) {
		if (tw[i].code == TDMREP_W_SHADOWED)
			snprintf(msg, sizeof(msg),
			    "member %u can never decide: member %u's "
			    "location is a prefix of its own",
			    (unsigned)tw[i].member, (unsigned)tw[i].by);
		else
			snprintf(msg, sizeof(msg), "member %u skipped",
			    (unsigned)tw[i].member);
		tdm_inspect_warning(
		    w, tw[i].member, robots_tdmrep_wcode_name(tw[i].code), msg);
	}
	jw_end(w);
}
