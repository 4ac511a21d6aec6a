/*
 * wire_fast.h: a decoder for the common request lines only, a check of
 * one URL or of a batch,
 *   {"op":"check","url":"...","agent":"...","id":N,"wait":B,"usage":B}
 *   {"op":"check","urls":["...",...],"agent":"...","id":N,"wait":B}
 * in any key order ("id", "wait" and "usage" optional; a check with
 * "tokens" takes the full way), without building a JSON
 * tree. It accepts a line only when it can tell exactly what the full
 * decoder (proto_decode(), jansson) would make of it; on anything else it
 * answers "not mine" and the caller decodes the line the slow way.
 */
#ifndef ROBOTSD_WIRE_FAST_H
#define ROBOTSD_WIRE_FAST_H

#include <stddef.h>

/* A decoded string: in the line, or in the scratch space for escapes. */
struct wire_str {
	const char *p;
	size_t len;
	int plain; /* printable ASCII but '"' and '\\': it is its JSON text */
};

struct json_t;

/* A [name, value] pair of a page's "headers" or "meta". */
struct wire_pair {
	struct wire_str name, value;
	/*
	 * page.c's class of a header name, plus 1: 0 until a page function
	 * first reads the pair (whoever fills name sets it to 0), so that a
	 * check's passes over the page classify each name once.
	 */
	unsigned char field;
};

/*
 * A check's "page" as wire_fast_check_page() decoded it: the pairs of
 * "headers" and of "meta" in order received (a missing array: none).
 */
struct wire_page {
	int present; /* the line had a "page" */
	struct wire_pair *headers;
	size_t nheaders;
	struct wire_pair *meta;
	size_t nmeta;
};

/*
 * A check, as proto_decode() would have decoded it: the one shape the
 * check op takes from either decoder (its strings borrowed for the call).
 * wire_fast_check_page() fills the integer id and never json_id or tokens; a
 * check the full decoder made sets json_id (any JSON id) and its tokens.
 */
struct wire_check {
	long long id; /* when has_id */
	int has_id;   /* 0: no "id" key (the answer's id is null) */
	const struct json_t *json_id; /* or this id (NULL: as above) */
	const char *url;              /* one URL; NULL in a batch */
	size_t url_len;
	struct wire_str *urls; /* a batch: nurls URLs; NULL for one URL */
	size_t nurls;
	const char *agent;
	size_t agent_len;
	int wait;                      /* 1 unless "wait":false */
	int usage;                     /* "usage":true */
	int tdm;                       /* "tdm":true */
	const struct wire_str *tokens; /* "tokens": ntokens control tokens */
	size_t ntokens;
	const struct wire_page *page; /* "page", or NULL */
};

/*
 * Decode line (len bytes, without its '\n'). Returns 1 and fills *out
 * when the line is a well-formed check; the strings point into line, or
 * into scratch (at least len bytes) when they held escapes. A batch's URLs
 * go to urls, which has room for max_urls of them (a longer batch is not
 * taken). Returns 0 for anything else (other ops, errors, duplicate or
 * unknown keys, escaped keys, text that is not UTF-8, ids that are not
 * small non-negative integers): decode that line with proto_decode().
 *
 * A check of one URL may also have a "page" of the plain shape
 * {"headers":[[NAME,VALUE],...],"meta":[[NAME,CONTENT],...]} (either
 * optional, no other key, names not empty): its pairs go to pairs (room
 * for max_pairs of them, in the order received) and *page, whose present
 * says whether the line had one; out->page is page when it had, else
 * NULL. Returns 0 for anything unusual in the page as for the rest of the
 * line.
 */
int wire_fast_check_page(const char *line, size_t len, char *scratch,
    struct wire_str *urls, size_t max_urls, struct wire_pair *pairs,
    size_t max_pairs, struct wire_check *out, struct wire_page *page);

#endif /* ROBOTSD_WIRE_FAST_H */
