/*
 * robots.h: librobots, the pure robots.txt library of robotsd.
 *
 * Parses a robots.txt body into an immutable, refcounted compiled ruleset
 * (RFC 9309, with Google's reference behaviour where the RFC is silent) and
 * answers "may AGENT fetch PATH?" against it; normalizes URLs into an origin
 * key and a match path. No I/O, no globals, no allocation on the match path;
 * a compiled ruleset may be shared between threads.
 *
 * Errors: functions that can fail return NULL or an enum; they never exit
 * and never log.
 */
#ifndef ROBOTS_H
#define ROBOTS_H

#include <stddef.h>

/* Only this many bytes of a body are parsed (Google: 500 KiB). */
#define ROBOTS_MAX_BODY 512000
/* A line longer than this is cut there (Google's reference parser). */
#define ROBOTS_MAX_LINE 16664

struct robots;

enum robots_directive {
	ROBOTS_DISALLOW,
	ROBOTS_ALLOW,
};

enum robots_reason {
	ROBOTS_REASON_RULE,       /* a rule decided */
	ROBOTS_REASON_NO_RULE,    /* no rule matched: allowed */
	ROBOTS_REASON_ROBOTS_TXT, /* the path is /robots.txt: always allowed */
};

/* A rule as written in the file; pattern points into the ruleset. */
struct robots_rule {
	enum robots_directive directive;
	const char *pattern; /* trimmed value as written, not NUL-terminated */
	size_t pattern_len;
	unsigned line; /* 1-based line number in the body */
};

struct robots_verdict {
	int allowed;
	enum robots_reason reason;
	struct robots_rule rule; /* valid when reason == ROBOTS_REASON_RULE */
	double crawl_delay;      /* chosen group's Crawl-delay; < 0 if none */
};

/*
 * Compile a body. Only the first ROBOTS_MAX_BODY bytes are read; any bytes
 * (NUL, invalid UTF-8, HTML) are accepted. Returns a ruleset with one
 * reference, or NULL when memory runs out.
 */
struct robots *robots_parse(const char *body, size_t len);
struct robots *robots_ref(struct robots *);
void robots_unref(struct robots *); /* NULL is fine */

/* Bytes of memory the compiled ruleset holds. */
size_t robots_memsize(const struct robots *);

/*
 * A ruleset's bytes, to save it (the daemon's state file), and a ruleset
 * made from such bytes again (one reference; NULL when the bytes are not an
 * image or memory runs out). Images are only valid for the same build:
 * store ROBOTS_IMAGE_VERSION beside them.
 */
#define ROBOTS_IMAGE_VERSION 5
const void *robots_image(const struct robots *, size_t *len);
struct robots *robots_from_image(const void *, size_t len);
/*
 * robots_from_image() without a copy: buf (len bytes from malloc()) becomes
 * the ruleset, or is freed when it is not an image.
 */
struct robots *robots_adopt_image(void *buf, size_t len);
/*
 * The same for an image stored with an older ROBOTS_IMAGE_VERSION: version
 * 3 (before usage preferences) and version 4 (before the purpose ai-use
 * and the author warnings of version 5) are read too, as a ruleset without
 * preference data (robots_has_prefs() 0: robots_usage() answers all
 * unknown, no extra lines or warnings); the access verdicts are the same.
 * Such a ruleset's own image is one of this version without preference
 * data, and reads back as it. Any other version gives NULL (the adopt
 * form frees buf).
 */
struct robots *robots_from_image_version(
    const void *, size_t len, unsigned version);
struct robots *robots_adopt_image_version(
    void *buf, size_t len, unsigned version);
/*
 * 1 if the ruleset was compiled with preference data (robots_parse() of
 * this build), 0 if it came from an older image: parse its body again to
 * answer preferences.
 */
int robots_has_prefs(const struct robots *);

/*
 * The verdict for agent (a full User-Agent string or a product token; it is
 * reduced to its product token) on path, which must be a match path from
 * robots_url_parse() or robots_path_normalize(): percent-encoding normalized,
 * path plus query, starting with '/'. Never allocates.
 */
void robots_check(const struct robots *, const char *agent, size_t agent_len,
    const char *path, size_t path_len, struct robots_verdict *);

/*
 * What the fetch of a robots.txt means (RFC 9309 section 2.3.1, the
 * contract's status table): answered says whether an HTTP status came back
 * (else a network error or timeout), redirects whether it ended on too
 * many redirects (an allow-all whatever the status). robotsd's cache and
 * robotsctl recheck (judging captures robotsd did not make) both use it.
 */
enum robots_status_class {
	/* 2xx: the body's rules */
	ROBOTS_STATUS_RULES,
	/* 3xx left unfollowed, 4xx but 429, too many redirects */
	ROBOTS_STATUS_ALLOW_ALL,
	/* 5xx, 429, network error, timeout: disallow all */
	ROBOTS_STATUS_FAILED,
	/* 503 and 429: failed, retried sooner */
	ROBOTS_STATUS_FAILED_SOON,
};
enum robots_status_class robots_status_class(
    int answered, int redirects, int status);

/* Lines as in an "Allow all" / "Disallow all" answer, for callers' reports. */
const char *robots_directive_name(enum robots_directive);
const char *robots_reason_name(enum robots_reason);

/* Introspection for reports (inspect). Indexes run from 0 to count - 1. */
size_t robots_rule_count(const struct robots *);
size_t robots_group_count(const struct robots *);
size_t robots_group_agent_count(const struct robots *, size_t group);
/* An agent of a group, reduced to its product token ("*" for the fallback). */
const char *robots_group_agent(
    const struct robots *, size_t group, size_t agent, size_t *len);
size_t robots_group_rule_count(const struct robots *, size_t group);
double robots_group_crawl_delay(const struct robots *, size_t group);
/*
 * The rules that apply to agent (reduced to its product token) as RFC 9309
 * section 2.2.1 selects them: those of every group naming its token,
 * merged, else those of the '*' groups, else none. cb gets each rule as
 * written, possibly more than once (an Allow rule for an index.html path
 * also stands for the directory); the order is not the file's.
 */
typedef void (*robots_rule_cb)(const struct robots_rule *, void *arg);
void robots_agent_rules(const struct robots *, const char *agent,
    size_t agent_len, robots_rule_cb, void *arg);
size_t robots_sitemap_count(const struct robots *);
const char *robots_sitemap(const struct robots *, size_t i, size_t *len);

/*
 * Usage preferences: Content-Usage (IETF AIPREF) and Content-Signal
 * (Content Signals Policy) lines, compiled with the ruleset. Per purpose a
 * tri-state: unknown (nobody said), allowed, disallowed.
 */
enum robots_pref {
	ROBOTS_PREF_UNKNOWN = 0,
	ROBOTS_PREF_ALLOWED,
	ROBOTS_PREF_DISALLOWED,
};
enum robots_purpose {
	ROBOTS_PURPOSE_TRAIN_AI, /* Content-Usage train-ai, Signal ai-train */
	ROBOTS_PURPOSE_SEARCH,   /* Content-Usage search, Signal search */
	ROBOTS_PURPOSE_AI_INPUT, /* Signal ai-input */
	ROBOTS_PURPOSE_AI_USE,   /* Content-Usage ai-use (AIPREF vocab-08) */
	ROBOTS_PURPOSES,
};
/* "train-ai", "search", "ai-input", "ai-use" */
const char *robots_purpose_name(enum robots_purpose);
/* "unknown", "allowed", "disallowed" */
const char *robots_pref_name(enum robots_pref);

enum robots_pref_kind {
	ROBOTS_CONTENT_USAGE,
	ROBOTS_CONTENT_SIGNAL,
};
/* "content-usage", "content-signal" */
const char *robots_pref_kind_name(enum robots_pref_kind);

/* A preference statement as written; strings point into the ruleset. */
struct robots_pref_stmt {
	enum robots_pref_kind kind;
	const char *pattern; /* PATH as written, "/" when absent */
	size_t pattern_len;
	const char *value; /* PREFS as written, trimmed (may be empty) */
	size_t value_len;
	unsigned line;  /* 1-based */
	int file_scope; /* 1: a Content-Signal before the first group */
};

#define ROBOTS_USAGE_FROM_MAX 16
struct robots_usage {
	enum robots_pref pref[ROBOTS_PURPOSES];
	size_t nfrom; /* deciding statements, file order, at most _MAX */
	struct robots_pref_stmt from[ROBOTS_USAGE_FROM_MAX];
};

/*
 * The preferences for agent on path (a match path, as for robots_check()):
 * the same agent reduction and group selection as robots_check() (own
 * groups merged, else '*', else none), file-scope Content-Signal lines for
 * every agent; per directive the longest matching PATH decides, ties and
 * the two directives combined most restrictively per purpose (disallowed,
 * else allowed, else unknown). Answers the preferences only: the caller
 * decides what a disallowed URL or an unavailable robots.txt gives. Never
 * allocates.
 */
void robots_usage(const struct robots *, const char *agent, size_t agent_len,
    const char *path, size_t path_len, struct robots_usage *);

/*
 * For reports (inspect): every Content-Usage, Content-Signal, License and
 * other unknown directive line, in file order.
 */
struct robots_extra {
	const char *name; /* directive as written */
	size_t name_len;
	const char *value;
	size_t value_len;
	unsigned line;
	long group; /* index as robots_group_*(), -1 before the first group */
};
size_t robots_extra_count(const struct robots *);
void robots_extra(const struct robots *, size_t i, struct robots_extra *);

/* A remark about the file; code and message static or in the ruleset. */
struct robots_warning {
	unsigned line;
	const char *code; /* "pref_parse_failed", "usage_outside_group", ... */
	const char *message;
};
size_t robots_warning_count(const struct robots *);
void robots_warning(const struct robots *, size_t i, struct robots_warning *);

/*
 * Percent-encoding normalization shared by patterns and URL paths
 * (RFC 9309 section 2.2.2): octets >= 0x80 and controls are percent-encoded,
 * hex digits of escapes are upper-cased, escapes of unreserved characters
 * are decoded; '%2F' stays distinct from '/'. With is_pattern, '*' and '$'
 * are kept as wildcards; in a path a literal '*' or '$' becomes %2A / %24 so
 * that a pattern's %2A / %24 matches it. out must hold 3 * len bytes; returns
 * the length written (no NUL is added).
 */
size_t robots_pct_normalize(
    const char *in, size_t len, char *out, int is_pattern);

/* The value of the hex digit c, either case, or -1 for any other octet. */
int robots_hexval(unsigned char c);

/*
 * URLs.
 */
enum url_err {
	URL_OK,
	URL_BAD,                /* cannot be parsed, or no host */
	URL_UNSUPPORTED_SCHEME, /* not http, https or ftp */
	URL_NOMEM,
};

struct url {
	char
	    *origin; /* "https://example.com", "http://[::1]:8080": cache key */
	char *scheme; /* "http", "https" or "ftp" */
	char *host;   /* lowercase, punycode; IPv6 in brackets */
	int port;     /* explicit non-default port, or 0 */
	char *path;   /* match path: normalized path + query, starts with '/' */
	size_t path_len;
};

/* A URL longer than this many bytes is URL_BAD (the default request line). */
#define URL_MAX_LEN 65536

/*
 * Parse and normalize an absolute URL (len bytes, need not be NUL-terminated)
 * into u, which robots_url_clear() releases. On error u holds nothing to
 * release. "scheme://" and a host are required; no surrounding whitespace is
 * trimmed. The query is kept when present, even empty ("/x?"), as Google does;
 * raw spaces and non-ASCII octets are accepted and percent-encoded; controls,
 * port 0 and IPv6 zone ids are URL_BAD.
 */
enum url_err robots_url_parse(const char *s, size_t len, struct url *u);
void robots_url_clear(struct url *);
/* A static English message for an error. */
const char *robots_url_err_message(enum url_err);

/*
 * A URL split without allocating: origin and match path as robots_url_parse()
 * gives them, both NUL-terminated in the caller's buffer.
 */
struct url_view {
	const char *origin; /* "https://example.com": the cache key */
	size_t origin_len;
	const char *path; /* match path, starts with '/' */
	size_t path_len;
};

/*
 * Split the common URL shape into buf (bufsz >= len + 3 bytes; nothing is
 * allocated) and return 1, with exactly robots_url_parse()'s origin and path in
 * v; or return 0 ("not mine": call robots_url_parse()) for anything outside a
 * narrow grammar: "http://" or "https://" (any case); a host of ASCII letters,
 * digits, '-' and inner dots, not IPv4-like (last label starting with a
 * digit), no "xn--" label, no empty, over-long or '-'-edged label; an
 * optional port 1..65535 without leading zero; then nothing, or a path
 * from '/' with an optional query, of printable ASCII without '%', '*',
 * '$', '#' or a backslash, and without "." or ".." path segments.
 */
int robots_url_fast(
    const char *s, size_t len, char *buf, size_t bufsz, struct url_view *v);

/* URLs up to this long are split in a struct robots_url without allocating. */
#define ROBOTS_URL_STACK 4096

/*
 * A URL split for a check, typically on the caller's stack: v is the
 * origin and match path exactly as robots_url_parse() gives them, split by
 * robots_url_fast() into buf for the common shape or else by robots_url_parse()
 * into u (then parsed is 1 and robots_url_split_clear() frees it).
 */
struct robots_url {
	struct url_view v;
	int plain; /* v.origin is printable ASCII without '"' or '\\' */
	int parsed;
	struct url u;
	char buf[ROBOTS_URL_STACK + 3];
};

/*
 * Split s (len bytes) into *out: robots_url_fast() when it takes the URL, else
 * robots_url_parse(), whose error is returned (out then holds nothing to free).
 */
enum url_err robots_url_split(const char *s, size_t len, struct robots_url *);
void robots_url_split_clear(struct robots_url *); /* after URL_OK */

/*
 * The origin key of an origin or URL as a user writes it
 * ("Example.COM", "https://example.com:443/x"); a bare host means https.
 * Returns an allocated string the caller frees, or NULL with *err set.
 */
char *robots_url_origin(const char *s, size_t len, enum url_err *err);

/* The robots.txt URL of an origin key: origin + "/robots.txt" (allocated). */
char *robots_url_robots_txt(const char *origin);

/*
 * Normalize a raw path (+ query, no fragment) the way robots_url_parse() does:
 * dot segments resolved, percent-encoding normalized, empty path is "/"; a
 * missing leading '/' is added and a '#' ends the input. Returns an
 * allocated NUL-terminated string, or NULL when memory runs out.
 */
char *robots_path_normalize(const char *path, size_t len, size_t *out_len);

#endif /* ROBOTS_H */
