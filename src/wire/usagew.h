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
/* The member "warnings": jw_key(w, "warnings") and jw_warnings(). */
void jw_kwarnings(struct jw *, const struct robots *r);

#endif /* ROBOTS_USAGEW_H */
