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

#include "base/xmalloc.h"
#include "ops/tdmres.h"
#include "robots.h"
#include "wire/jsonw.h"
#include "wire/page.h"
#include "wire/tdmrep_json.h"
#include "wire/usagew.h"

/*
 * tdm_kind's compile(): the rules, or an invalid file and why, and the
 * body in the same block, for the state file.
 */
static void *
tdm_compile(const char *body, size_t len)
{
	struct tdm_doc *d;

	if ((d = calloc(1, sizeof(*d) + len + 1)) == NULL)
		return NULL;
	d->refs = 1;
	if (tdmrep_file_read(&d->f, body, len) == -1) {
		free(d);
		return NULL;
	}
	if (len > 0)
		memcpy(d->body, body, len);
	d->body_len = len;
	return d;
}

/* tdm_kind's source(): the body compiled. */
static const void *
tdm_source(const void *doc, size_t *len)
{
	const struct tdm_doc *d = doc;

	*len = d->body_len;
	return d->body;
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
	tdmrep_file_clear(&d->f);
	free(d);
}

/* tdm_kind's flags(): a file without rules is invalid. */
static unsigned
tdm_flags(const void *doc)
{
	const struct tdm_doc *d = doc;

	return d != NULL && d->f.rules != NULL ? 0 : CACHE_VERSION_INVALID;
}

/* See tdmres.h. */
const char *
tdm_version_state(int policy, unsigned flags)
{
	switch ((enum cache_policy)policy) {
	case CACHE_RULES:
		return flags & CACHE_VERSION_INVALID ? "invalid" : "rules";
	case CACHE_ALLOW_ALL:
		return "none";
	case CACHE_DISALLOW_ALL:
		return "unreachable";
	case CACHE_NONE:
		break;
	}
	return "pending";
}

/* See tdmres.h. */
const char *
tdm_state_name(const struct cache_entry *e)
{
	return tdm_version_state(
	    e->policy, e->policy == CACHE_RULES ? tdm_flags(e->doc) : 0);
}

/* tdm_kind's bytes(): the doc and body, its rules, its warnings' lines. */
static size_t
tdm_bytes(const void *doc)
{
	const struct tdm_doc *d = doc;

	return xheld(d) + robots_tdmrep_bytes(d->f.rules) + xheld(d->f.lines);
}

const struct cache_kind tdm_kind = { "tdmrep", "/.well-known/tdmrep.json",
	tdm_compile, tdm_ref, tdm_unref, tdm_state_name, tdm_bytes, 1,
	tdm_source, tdm_flags, tdm_version_state };

/*
 * --tdmrep always: keep origin's file at hand for the checks that will
 * ask, fetched in the background when it is not settled or is due; a
 * first fetch makes an entry, which t->evicted notes.
 */
static void
tdm_prefetch(struct tdm_step *t, const char *origin)
{
	const struct cache_entry *e;

	if (cache_check_cached(t->tdm, origin, &e) == CACHE_MISS) {
		t->evicted = 1;
		(void)cache_check(t->tdm, origin, 0, NULL, &e);
	}
}

/* See tdmres.h. */
enum tdm_gate
tdm_gate(struct tdm_step *t, const char *origin, struct cache_waiter *w)
{
	const struct cache_entry *e;

	t->evicted = 0;
	if (t->tdm == NULL)
		return TDM_GO;
	if (!t->asked) {
		if (t->mode == TDM_ALWAYS)
			tdm_prefetch(t, origin);
		return TDM_GO;
	}
	if (cache_check_cached(t->tdm, origin, &e) != CACHE_MISS)
		return TDM_GO;
	if (w == NULL)
		return TDM_MISS;
	if (!t->wait)
		return tdm_prefetch(t, origin), TDM_GO;
	/* robots.txt's fetch alongside, which the check then waits for */
	t->evicted = 1;
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

/* See tdmres.h. */
void
tdm_inspect_members(struct jw *w, const struct cache_entry *e)
{
	const struct tdm_doc *d = e->policy == CACHE_RULES ? e->doc : NULL;

	tdm_inspect_rules(w, d != NULL ? d->f.rules : NULL);
	jw_key(w, "warnings");
	jw_warnings_tdm(w, NULL, d != NULL ? &d->f : NULL);
}

/* The state robots_tdm_decide() takes for a settled entry of tdm_kind. */
static enum tdm_state
tdm_state_of(const struct cache_entry *e)
{
	const struct tdm_doc *d = e->doc;

	switch ((enum cache_policy)e->policy) {
	case CACHE_RULES:
		return d != NULL && d->f.rules != NULL ? TDM_STATE_RULES
		                                       : TDM_STATE_INVALID;
	case CACHE_DISALLOW_ALL:
		return TDM_STATE_UNREACHABLE;
	default:
		return TDM_STATE_NONE;
	}
}

/* See tdmres.h. */
const struct tdm_answer *
tdm_answer_of(struct cache *tdm, const struct url_view *u,
    const struct wire_page *page, struct tdm_answer *out, const char **version)
{
	const struct cache_entry *e = NULL;
	const struct tdm_doc *d = NULL;
	enum tdm_state st = TDM_STATE_NONE;
	struct tdm_page tp;

	*version = NULL;
	if (tdm != NULL)
		e = cache_find(tdm, u->origin);
	if (tdm != NULL && (e == NULL || e->policy == CACHE_NONE)) {
		/* not settled: only a page has something to say */
		if (page == NULL)
			return NULL;
		st = TDM_STATE_PENDING;
	} else if (tdm != NULL) {
		st = tdm_state_of(e);
		d = e->policy == CACHE_RULES ? e->doc : NULL;
		*version = e->version[0] != '\0' ? e->version : NULL;
	}
	if (page != NULL)
		page_tdm(page, &tp);
	robots_tdm_decide(d != NULL ? d->f.rules : NULL, st, u->path,
	    u->path_len, page != NULL ? &tp : NULL, out);
	return out;
}
