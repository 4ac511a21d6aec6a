/*
 * tdmres.h: TDMRep's /.well-known/tdmrep.json as a second resource per
 * origin (W3C TDM Reservation Protocol, CG final report 2024), held by a
 * cache of its own kind: how its body is compiled, the name of each of
 * its states, the --tdmrep modes, and the step of a check that asks
 * "tdm":true, which waits for the file as it waits for robots.txt.
 */
#ifndef ROBOTSD_TDMRES_H
#define ROBOTSD_TDMRES_H

#include "cache/cache.h"
#include "robots/tdmrep.h"
#include "wire/tdmrep_json.h"

/*
 * --tdmrep (parse_tdmrep()'s values): fetch the file when a check asks,
 * with every check, never.
 */
enum tdm_mode { TDM_ON_DEMAND, TDM_ALWAYS, TDM_OFF };

/*
 * A 2xx body compiled (wire/tdmrep_json.h): its rules, or none with the
 * reason the file is invalid, and its warnings' lines; and the body
 * itself (after the 500 KiB cut), in the same block, which the state file
 * keeps and compiles again when it is loaded (struct cache_kind's
 * source()). Shared by reference (struct cache_kind).
 */
struct tdm_doc {
	unsigned refs;
	struct tdmrep_file f; /* f.rules NULL: the file is invalid */
	size_t body_len;
	char body[]; /* body_len bytes and a NUL */
};
extern const struct cache_kind tdm_kind;

/*
 * The TDMRep state an entry of tdm_kind answers: "pending" (never
 * fetched), "rules", "invalid", "none" (the site does not implement
 * TDMRep: a 4xx) or "unreachable" (5xx, 429, network error: no good
 * copy to serve).
 */
const char *tdm_state_name(const struct cache_entry *);
/*
 * The same state for a version of the file (the history op, the change
 * feed): its policy and flags (CACHE_VERSION_INVALID: a 2xx that is not
 * a JSON array).
 */
const char *tdm_version_state(int policy, unsigned flags);

struct jw;
struct url_view;
struct wire_page;
struct tdm_answer;
/*
 * The TDMRep answer for URL u of an allowed check with "tdm":true into
 * *out (robots_tdm_decide(): its path and query against the file tdm holds
 * for u's origin, the page's TDM-Reservation / TDM-Policy headers and
 * metas over it), *version the file's version (NULL when none); tdm NULL
 * (--tdmrep off) answers a site without TDMRep ("none"). When the file
 * is not settled yet (a check that did not wait, or whose fetch was
 * refused as overloaded): the state "pending" with the page's own
 * statements, or NULL without a page ("tdm":null).
 */
const struct tdm_answer *tdm_answer_of(struct cache *tdm,
    const struct url_view *u, const struct wire_page *page,
    struct tdm_answer *out, const char **version);
/*
 * The members of an inspect answer for entry e of tdm_kind that only it
 * has: "rules":[{"member":N,"location":L,"tdm-reservation":R,
 * "tdm-policy":P|null},...] (null when it holds no file) and the file's
 * "warnings" as robotsctl test shows them (jw_warnings_tdm(): an invalid
 * file's reason tdmrep_invalid, skipped members, tdmrep_shadowed).
 */
void tdm_inspect_members(struct jw *, const struct cache_entry *e);

/* A check's URL at its TDMRep step. */
struct tdm_step {
	struct cache *tdm;    /* tdmrep.json's; NULL: --tdmrep off */
	struct cache *robots; /* robots.txt's */
	int mode;             /* enum tdm_mode */
	int asked;            /* the check's "tdm":true */
	int wait;             /* the check's "wait" */
	/*
	 * Set by tdm_gate(): it made an entry in a cache, so an idle entry
	 * of either (one byte cap: cache_share_budget()) may be evicted.
	 */
	int evicted;
};
enum tdm_gate {
	TDM_GO,   /* go on to robots.txt: the file is settled or not asked */
	TDM_MISS, /* not settled and no waiter given: nothing done */
	TDM_WAIT, /* w waits on the file's fetch (robots.txt's started too) */
};
/*
 * The TDMRep step of a check's URL of origin, before robots.txt's: asked
 * and the file not settled, w (or TDM_MISS without one) waits on its
 * fetch (without "wait" it is fetched in the background and the check
 * goes on). --tdmrep always starts a fetch (in the background) for a URL
 * that does not ask.
 */
enum tdm_gate tdm_gate(
    struct tdm_step *, const char *origin, struct cache_waiter *w);

#endif /* ROBOTSD_TDMRES_H */
