/*
 * fetchlog.c: a fetch's log lines and metrics (fetchlog.h). Values from
 * the network (origin, error text) go through log_kv(); every line kind is
 * rate-limited by log_event().
 */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include "cache/fetchlog.h"
#include "base/log.h"

/* The class of a fetch result. */
enum fetch_class
fetch_class_of(const struct fetch_result *r)
{
	switch (r->error) {
	case FETCH_OK:
		break;
	case FETCH_TIMEOUT:
		return FC_TIMEOUT;
	case FETCH_REDIRECTS:
		return FC_REDIRECTS;
	case FETCH_PRIVATE_ADDR:
		return FC_REFUSED;
	case FETCH_LOCAL:
		return FC_LOCAL;
	case FETCH_NETWORK:
	default:
		return FC_NETWORK;
	}
	if (r->http_status == 429)
		return FC_429;
	if (r->http_status >= 500)
		return FC_5XX;
	if (r->http_status >= 400)
		return FC_4XX;
	if (r->http_status >= 200 && r->http_status < 300)
		return FC_2XX;
	return FC_3XX;
}

/* The "class" label of a class. */
const char *
fetch_class_name(enum fetch_class fc)
{
	static const char *const names[FC_COUNT] = { "2xx", "3xx", "4xx", "429",
		"5xx", "redirects", "network", "timeout", "refused", "local" };

	return fc < FC_COUNT ? names[fc] : "?";
}

/* The event=fetch line. */
/* " resource=NAME" after the origin, for a resource other than robots.txt. */
#define RESOURCE_KV(n)                                                         \
	(n)->resource != NULL ? " resource=" : "",                             \
	    (n)->resource != NULL ? (n)->resource : ""

static void
fetchlog_fetch(const struct fetch_note *n, enum fetch_class fc)
{
	char o[LOG_KV_BUF], err[LOG_KV_BUF], tail[LOG_KV_BUF + 96];
	const struct fetch_result *r = n->r;

	tail[0] = '\0';
	if (n->streak > 0)
		snprintf(tail, sizeof(tail),
		    " stale=%d failures=%u next_retry_s=%.0f error=%s",
		    n->stale, n->streak, ceil(n->retry_in),
		    log_kvs(n->error, err, sizeof(err)));
	log_event(LOG_INFO, "fetch",
	    "origin=%s%s%s status=%d bytes=%zu ms=%.0f redirects=%u class=%s "
	    "outcome=%s%s",
	    log_kvs(n->origin, o, sizeof(o)), RESOURCE_KV(n), r->http_status,
	    r->body_len, r->seconds * 1000, r->redirects, fetch_class_name(fc),
	    n->outcome, tail);
}

/* Count the fetch, log it, and log a change into or out of backoff. */
void
fetchlog_note(struct fetch_stats *st, const struct fetch_note *n)
{
	enum fetch_class fc = fetch_class_of(n->r);
	char o[LOG_KV_BUF], err[LOG_KV_BUF];

	histo_observe(&st->seconds, n->r->seconds);
	st->by_class[fc]++;
	fetchlog_fetch(n, fc);
	if (n->prev_streak == 0 && n->streak > 0)
		log_event(LOG_WARNING, "backoff_start",
		    "origin=%s%s%s stale=%d next_retry_s=%.0f error=%s",
		    log_kvs(n->origin, o, sizeof(o)), RESOURCE_KV(n), n->stale,
		    ceil(n->retry_in), log_kvs(n->error, err, sizeof(err)));
	else if (n->prev_streak > 0 && n->streak == 0)
		log_event(LOG_INFO, "backoff_end",
		    "origin=%s%s%s failures=%u failed_for_s=%.0f",
		    log_kvs(n->origin, o, sizeof(o)), RESOURCE_KV(n),
		    n->prev_streak, n->failed_for);
}

/* A fetch robotsd's own shortage failed; see fetchlog.h. */
void
fetchlog_local(struct fetch_stats *st, const char *origin, const char *error)
{
	char okv[LOG_KV_BUF], ekv[LOG_KV_BUF];

	st->by_class[FC_LOCAL]++;
	log_event(LOG_WARNING, "fetch_local_error",
	    "origin=%s error=%s note=\"robotsd's own resources, not the "
	    "origin's: nothing cached or shared\"",
	    log_kvs(origin, okv, sizeof(okv)),
	    log_kvs(error != NULL ? error : "", ekv, sizeof(ekv)));
}
