/*
 * robots_tag.h: the page's robots rules. The Robots-Tag response header
 * (draft-illyes-repext: an RFC 9651 List, each member a product token or
 * '*', its parameters the rules), the legacy X-Robots-Tag header in
 * Google's syntax ("googlebot: noindex, nofollow", "unavailable_after:
 * DATE"), and the content of <meta name="robots"|AGENT>, all read into
 * one rule set for one agent, so that every source can be unioned (all
 * rules are restrictive). Pure: no I/O, no globals; only the Robots-Tag
 * parse allocates (its node array), and frees before it returns.
 */
#ifndef ROBOTS_TAG_H
#define ROBOTS_TAG_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of one field (Robots-Tag) or line (X-Robots-Tag) parsed. */
#define ROBOTS_TAG_LIMIT 8192
/*
 * Unknown rules kept per set (lowercased, deduplicated, printable ASCII:
 * others are only counted), and their size.
 */
#define ROBOTS_TAG_MAX_UNKNOWN 32
#define ROBOTS_TAG_UNKNOWN_LEN 64

/* The flag rules, one bit each (1u << rule). */
enum robots_tag_rule {
	RT_NOINDEX,
	RT_NOFOLLOW,
	RT_NONE, /* also sets RT_NOINDEX and RT_NOFOLLOW */
	RT_NOSNIPPET,
	RT_NOARCHIVE,
	RT_NOIMAGEINDEX,
	RT_NOTRANSLATE,
	RT_INDEXIFEMBEDDED,
	RT_NOAI,
	RT_NOIMAGEAI,
	RT_NRULES
};

/* max-image-preview, least to most permissive. */
enum robots_tag_preview {
	RT_PREVIEW_NONE,
	RT_PREVIEW_STANDARD,
	RT_PREVIEW_LARGE
};

/* The valued rules present (bits of robots_tag_set.valued). */
#define RT_HAS_MAX_SNIPPET 1u
#define RT_HAS_MAX_IMAGE_PREVIEW 2u
#define RT_HAS_MAX_VIDEO_PREVIEW 4u
#define RT_HAS_UNAVAILABLE_AFTER 8u

struct robots_tag_set {
	uint32_t rules;            /* 1u << enum robots_tag_rule */
	uint32_t valued;           /* RT_HAS_* */
	int64_t max_snippet;       /* >= -1; -1 is no limit */
	int64_t max_video_preview; /* >= -1; -1 is no limit */
	enum robots_tag_preview max_image_preview;
	int64_t unavailable_after; /* seconds since the epoch, UTC */
	size_t nunknown;           /* names kept in unknown[] */
	size_t unknown_dropped;    /* distinct names beyond the limit */
	char unknown[ROBOTS_TAG_MAX_UNKNOWN][ROBOTS_TAG_UNKNOWN_LEN + 1];
};

/* An empty set: no rule. */
void robots_tag_set_init(struct robots_tag_set *);
/*
 * dst gets every rule of src; a valued rule in both keeps the most
 * restrictive value: the smallest max-snippet / max-video-preview (-1
 * the largest), the smaller max-image-preview, the earliest
 * unavailable_after.
 */
void robots_tag_set_union(
    struct robots_tag_set *dst, const struct robots_tag_set *src);

/* Outcome of a Robots-Tag field. */
enum robots_tag_status {
	RT_OK,      /* parsed whole */
	RT_CUT,     /* over the limit: the members ended before it read */
	RT_INVALID, /* not a List (before the limit): ignored as a whole */
	RT_NOMEM,   /* ignored as a whole */
};

/*
 * Robots-Tag field s (len bytes; several lines joined with ", " by the
 * caller, RFC 9110) for agent (a User-Agent or product token, reduced to
 * its product token, compared case-insensitively): the rules of every
 * member naming the agent or '*' are added to set. A member that is not
 * a Token or String, or is an inner list, names no agent. A parameter
 * whose value is Boolean false is no rule.
 */
enum robots_tag_status robots_tag_parse_field(const char *s, size_t len,
    const char *agent, size_t agent_len, struct robots_tag_set *set);

/*
 * One X-Robots-Tag line in Google's syntax: comma-separated rules,
 * optionally after "AGENT:" covering this line only (an AGENT that is a
 * known valued rule's name is that rule). The line's rules are added to
 * set when there is no AGENT or it names agent. The first
 * ROBOTS_TAG_LIMIT bytes are read; a rule cut by the limit is dropped.
 * Returns 1 if the line applied to agent, else 0.
 */
int robots_tag_parse_xrt(const char *s, size_t len, const char *agent,
    size_t agent_len, struct robots_tag_set *set);

/*
 * The content of <meta name=NAME content=...>: the comma-separated rules,
 * added to set when NAME is "robots" (any case) or names agent. Returns 1
 * if the element applied, else 0 (another name: tdm-reservation, ...).
 */
int robots_tag_parse_meta(const char *name, size_t name_len,
    const char *content, size_t len, const char *agent, size_t agent_len,
    struct robots_tag_set *set);

/* Comma-separated rules (a meta content, a line without its AGENT:). */
void robots_tag_parse_rules(
    const char *s, size_t len, struct robots_tag_set *set);

/*
 * An unavailable_after date, trimmed of SP and HTAB: RFC 1123 ("Fri, 25
 * Jun 2010 15:00:00 GMT"), RFC 850 ("Friday, 25-Jun-10 15:00:00 GMT") and
 * RFC 822 forms (weekday optional, day 1 or 2 digits, year 2 or 4 digits,
 * a 2-digit year 70-99 being 19xx and 00-69 20xx, seconds optional, zone
 * GMT, UT, UTC, Z, EST, EDT, CST, CDT, MST, MDT, PST, PDT or +hhmm/-hhmm,
 * absent meaning GMT), and ISO 8601 ("2010-06-25", "2010-06-25T15:00",
 * "2010-06-25T15:00:00.5+01:00": date, or date 'T' or ' ' time with
 * optional seconds and fraction, zone Z or +hh:mm / +hhmm / +hh, absent
 * meaning UTC). Years 1000-9999. Returns 0 with *t the seconds since the
 * epoch, or -1.
 */
int robots_tag_parse_date(const char *s, size_t len, int64_t *t);

/* The name of a flag rule ("noindex", ...). */
const char *robots_tag_rule_name(enum robots_tag_rule);
/* The name of a max-image-preview value ("none", "standard", "large"). */
const char *robots_tag_preview_name(enum robots_tag_preview);

#endif /* ROBOTS_TAG_H */
