/*
 * robots_prefs.h: the readers of preference values, pure functions of a
 * line's PREFS (robots_prefs.c): Content-Usage (an RFC 9651 Dictionary,
 * the vocabulary of draft-ietf-aipref-vocab) and Content-Signal (the
 * Content Signals Policy's comma-separated KEY=VALUE list). Not part of
 * the API.
 */
#ifndef ROBOTS_PREFS_H
#define ROBOTS_PREFS_H

#include <stddef.h>
#include <stdint.h>

#include "robots.h"

/* What a reader found to warn about (bits of pref_read.warn). */
#define PREF_W_PARSE 1u       /* pref_parse_failed */
#define PREF_W_NONSTANDARD 2u /* pref_value_nonstandard */
#define PREF_W_LABEL 4u       /* pref_label_unknown */

struct pref_read {
	uint8_t pref[ROBOTS_PURPOSES]; /* enum robots_pref */
	unsigned warn;
};

/*
 * Content-Usage PREFS: train-ai, search and ai-use (AIPREF vocab-08) are
 * allowed for the Token y, disallowed for the Token n (parameters
 * ignored), else unknown; a later duplicate wins; a Dictionary that does
 * not parse, or empty PREFS, makes all unknown (PREF_W_PARSE). ai-input
 * is always unknown here.
 */
void robots_pref_read_usage(const char *v, size_t n, struct pref_read *out);
/*
 * Content-Signal PREFS: members KEY=VALUE split at commas, keys search,
 * ai-input, ai-train and values yes / no case-insensitive; the key use
 * (Cloudflare's use=reference) is known and answers no purpose, whatever
 * its value; a member of another shape is skipped (PREF_W_PARSE); a later
 * duplicate wins. ai-use is always unknown here.
 */
void robots_pref_read_signal(const char *v, size_t n, struct pref_read *out);

#endif /* ROBOTS_PREFS_H */
