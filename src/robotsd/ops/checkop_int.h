/*
 * checkop_int.h: what checkop.c (which URL is answered how, waiting,
 * parking) and checkop_text.c (the answer's text) share. Nothing else
 * includes it.
 */
#ifndef ROBOTSD_CHECKOP_INT_H
#define ROBOTSD_CHECKOP_INT_H

#include <stddef.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "wire/proto.h"
#include "wire/wire_fast.h"

/*
 * What a check asks about each URL: the agent's verdict, and with
 * "usage":true its usage preferences, with "tokens" the verdict for each
 * control token.
 */
struct check_ask {
	const char *agent;
	size_t agent_len;
	int usage;
	size_t ntokens;
	const struct wire_str *tokens;
	const struct wire_page *page; /* the page's own signals, or NULL */
	int tdm;                      /* "tdm":true */
	struct cache *tdm_cache;      /* tdmrep.json's; NULL: --tdmrep off */
};

/* A check being answered: its request, what it asks, its shape. */
struct check_run {
	const struct check_env *env;
	struct session *s;
	const struct wire_check *req;
	struct check_ask ask;
	int batch;  /* answered "results":[rows] */
	double t0;  /* when its line was read, for the latency (reply.h) */
	int waited; /* waited on tdmrep.json's fetch: a hit is "fetched" */
};

/*
 * The start of url's answer object for check r: {"url":URL,"ok":B, (a
 * batch's row) or {"id":ID,"ok":B, (the whole answer to one URL).
 */
void check_begin(
    struct jw *, const struct check_run *r, const struct wire_str *url, int ok);
/* The same up to "ok" (check_verdict() writes "ok":true itself). */
void check_open(
    struct jw *, const struct check_run *r, const struct wire_str *url);
/* {"id":ID,"ok":true,"results":[ the start of a batch's answer, left open. */
void check_results_begin(struct jw *, const struct wire_check *);
/* A whole object for url that is an error. */
void check_error_object(struct jw *, const struct check_run *,
    const struct wire_str *url, enum proto_err, const char *msg);
/* A whole answer line that is an error (a batch's too). */
void check_error_line(
    struct buf *, const struct wire_check *, enum proto_err, const char *msg);
/*
 * The members of a verdict for a split URL (its origin plain or not) from
 * entry e, "ok":true first, into the object check_open() opened.
 */
void check_verdict(struct jw *, const struct check_run *,
    const struct url_view *, int plain, const struct cache_entry *,
    enum check_source);
/* The members for the URL /robots.txt itself. */
void check_robots_txt_fields(
    struct jw *, const struct check_run *, const struct robots_url *);
/* The members of a "wait":false miss, whose fetch runs in the background. */
void check_pending_fields(struct jw *, const struct robots_url *);

#endif /* ROBOTSD_CHECKOP_INT_H */
