/*
 * usagew.h: the answer members of usage preferences and control tokens,
 * and a ruleset's warnings (docs/protocol.md), written the same by robotsd
 * and robotsctl.
 */
#ifndef ROBOTS_USAGEW_H
#define ROBOTS_USAGEW_H

#include <stddef.h>

#include "robots.h"

struct jw;
struct page_prefs;
struct page_tags;
struct tdm_answer;
struct tdmrep_file;

/*
 * The members "usage":{"train-ai":..,"search":..,"ai-input":..} and
 * "usage_from":[...] of u, into the open object of w (a check answer's);
 * NULL (a disallowed URL) writes "usage":null,"usage_from":[].
 */
void jw_usage(struct jw *, const struct robots_usage *u);
/*
 * The same for a check with "page": u already combined with the page's
 * headers, every robots.txt statement with "source":"robots.txt" and each
 * header statement after them, {"directive":D,"pattern":null,"line":null,
 * "value":V,"source":"header"}; page NULL is jw_usage().
 */
void jw_usage_page(
    struct jw *, const struct robots_usage *u, const struct page_prefs *page);
/*
 * jw_usage_page() with the purpose "tdm" last in "usage" when tdm is not
 * NULL (a check with "tdm":true): robots_tdm_pref() of its reservation.
 */
void jw_usage_tdm(struct jw *, const struct robots_usage *u,
    const struct page_prefs *page, const struct tdm_answer *tdm);
/*
 * The member "tdm":{"state":S,"reservation":0|1|null,"policy":P|null,
 * "location":L|null,"version":V} of a, plus "from":F when a names a
 * source (a check with "page"), into the open object of w; version ""
 * or NULL writes null; a NULL (a disallowed URL) writes "tdm":null.
 */
void jw_tdm(struct jw *, const struct tdm_answer *a, const char *version);
/*
 * The member "robots_tag":{"rules":[..],"values":{..},"from":[..]} of t,
 * into the open object of w (a check answer's); NULL (a disallowed URL)
 * writes "robots_tag":null.
 */
void jw_robots_tag(struct jw *, const struct page_tags *t);
/*
 * The member "evidence":{"robots":V|null,"tdmrep":null,"page":HEX16} into
 * the open object of w: robots the robots.txt version ("" or NULL: null),
 * page the page's evidence id.
 */
void jw_evidence(struct jw *, const char *robots, const char *page);
/* The same with tdmrep the tdmrep.json version used ("" or NULL: null). */
void jw_evidence_tdm(
    struct jw *, const char *robots, const char *tdmrep, const char *page);
/*
 * The "rule" member's value for a verdict, the next value of w (after
 * jw_key(w, "rule")): {"directive":..,"pattern":..,"line":..} when a rule
 * decided, else null.
 */
void jw_rule(struct jw *, const struct robots_verdict *v);
/* The member "rule" of a verdict: jw_key(w, "rule") and jw_rule(). */
void jw_krule(struct jw *, const struct robots_verdict *v);
/*
 * One member of the "tokens" object, into the open object of w (the
 * caller opens and closes "tokens"): "token":{"allowed":..,"rule":..},
 * the key the token's product token in lower case (as robots_check()
 * reduces it).
 */
void jw_token(
    struct jw *, const char *token, size_t len, const struct robots_verdict *v);

/*
 * The remarks librobots made about a ruleset (inspect's and robotsctl
 * test's "warnings"), the next value of w (after jw_key(w, "warnings")):
 * [{"line":N,"code":C,"message":T},...]; r NULL: [].
 */
void jw_warnings(struct jw *, const struct robots *r);
/*
 * The same, then the warnings of a tdmrep.json (t NULL: none), each
 * {"line":N|null,"code":C,"message":T,"resource":"tdmrep"} (line null for
 * the file as a whole, tdmrep_invalid).
 */
void jw_warnings_tdm(
    struct jw *, const struct robots *r, const struct tdmrep_file *t);
/* The member "warnings": jw_key(w, "warnings") and jw_warnings(). */
void jw_kwarnings(struct jw *, const struct robots *r);

#endif /* ROBOTS_USAGEW_H */
