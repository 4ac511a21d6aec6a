/*
 * checkop_int.h: what checkop.c (checks: waiting, batches, the fast path)
 * and checkop_text.c (a verdict written as answer text) share. Nothing
 * else includes it.
 */
#ifndef ROBOTSD_CHECKOP_INT_H
#define ROBOTSD_CHECKOP_INT_H

#include <stddef.h>

#include "robots.h"
#include "buf.h"
#include "cache/cache.h"
#include "ops/checkop.h"
#include "wire_fast.h"

/* URLs up to this long are split on the stack by url_fast(). */
#define CHECK_FAST_URL_MAX 4096

/* A URL's origin key and match path, however it was split. */
struct check_url {
	const char *origin;
	size_t origin_len;
	int origin_plain; /* needs no escaping in JSON */
	const char *path;
	size_t path_len;
};

/*
 * The entry a batch line's last row was answered from: URLs of one site
 * come in runs, and the rows of a run skip the origin's lookup (hashing:
 * a tenth of a cached batch's CPU) through cache_check_again(). Entries
 * stay put within a line (nothing between two rows removes one).
 */
struct check_memo {
	const struct cache_entry *e; /* NULL: none to reuse */
};

/*
 * What a check asks about each URL: the agent's verdict, and with
 * "usage":true its usage preferences, with "tokens" the verdict for each
 * control token (strings borrowed from the request).
 */
struct check_ask {
	const char *agent;
	size_t agent_len;
	int usage;
	size_t ntokens;
	const struct wire_str *tokens;
};

struct check_url check_url_fast(const struct url_view *);
struct check_url check_url_parsed(const struct url *);
/* The members of a verdict from entry e after "ok", into b. */
void check_verdict(struct buf *, const struct check_env *,
    const struct check_url *, const struct check_ask *,
    const struct cache_entry *, const char *source);
/* The same from the cache when settled there (memo: a batch's rows). */
int check_cached_verdict(struct buf *, const struct check_env *,
    const struct check_url *, const struct check_ask *, struct check_memo *);
/* The members for the URL /robots.txt itself. */
void check_robots_txt_fields(struct buf *, const struct check_env *,
    const struct check_url *, const struct check_ask *);
void check_ok(struct buf *, int ok);
void check_row_begin(struct buf *, const struct wire_str *url, int ok);

#endif /* ROBOTSD_CHECKOP_INT_H */
