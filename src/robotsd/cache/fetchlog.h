/*
 * fetchlog.h: what the operator sees of each robots.txt fetch: one
 * "event=fetch" log line with its outcome, "event=backoff_start" and
 * "event=backoff_end" when an origin starts or stops failing, and the
 * fetch metrics (duration histogram, fetches by outcome class). The cache
 * calls fetchlog_note() once per fetch result it applies.
 */
#ifndef ROBOTSD_FETCHLOG_H
#define ROBOTSD_FETCHLOG_H

#include <stdint.h>

#include "base/histo.h"
#include "iface/outcome.h"

/* The outcome classes of a fetch, the "class" label of its counter. */
enum fetch_class {
	FC_2XX,
	FC_3XX, /* a redirect without a usable Location, 1xx: other */
	FC_4XX,
	FC_429,
	FC_5XX,
	FC_REDIRECTS, /* too many redirects or a loop */
	FC_NETWORK,   /* DNS, connect, TLS, protocol */
	FC_TIMEOUT,
	FC_REFUSED, /* a non-public address, refused */
	FC_LOCAL,   /* robotsd's own resources ran out */
	FC_COUNT
};

struct fetch_stats {
	struct histo seconds; /* transfer durations */
	uint64_t by_class[FC_COUNT];
};

/* One applied fetch result, as the cache left the origin's entry. */
struct fetch_note {
	const char *origin;
	const struct fetch_result *r;
	const char *outcome;  /* "rules", "allow_all", "unreachable" */
	unsigned prev_streak; /* failures in a row before this fetch */
	unsigned streak;      /* ... after it (0: it succeeded) */
	double retry_in;      /* seconds to the next try, when failing */
	double failed_for;    /* seconds failing before, when it recovered */
	int stale;            /* failing, the last good copy still served */
	const char *error;    /* why it failed, or NULL */
	const char *resource; /* "tdmrep", or NULL for robots.txt */
};

enum fetch_class fetch_class_of(const struct fetch_result *);
const char *fetch_class_name(enum fetch_class);
/* Count the fetch and log its lines (see above). */
void fetchlog_note(struct fetch_stats *, const struct fetch_note *);
/* Count and log a fetch robotsd's own resources failed (FETCH_LOCAL). */
void fetchlog_local(
    struct fetch_stats *, const char *origin, const char *error);

#endif /* ROBOTSD_FETCHLOG_H */
