/*
 * fuzz_wire_fast.c: libFuzzer target for the check fast path, checked
 * against the full decoder. Whenever wire_fast_check_page() accepts a
 * line, proto_decode() must decode the same line to the same check: same
 * URL (or the same batch of URLs, in order) and agent bytes, same wait and
 * usage, no tokens (a check with tokens is left to the full decoder),
 * same id, and a page with the pairs, bytes for bytes and in order, of
 * proto_decode()'s (or no page when it has none). A URL said to be plain
 * must be its own JSON text.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire/jsonw.h"
#include "wire/proto.h"
#include "wire/wire_fast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Do two strings hold the same bytes? */
static int
same_str(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* Do the two decodings name the same URLs? */
static int
same_urls(const struct wire_check *w, const struct request *r)
{
	const json_t *u;
	size_t i;

	if (w->urls == NULL)
		return r->urls == NULL && r->url != NULL &&
		       same_str(r->url, r->url_len, w->url, w->url_len);
	if (r->url != NULL || r->urls == NULL ||
	    json_array_size(r->urls) != w->nurls)
		return 0;
	for (i = 0; i < w->nurls; i++) {
		u = json_array_get(r->urls, i);
		if (!same_str(json_string_value(u), json_string_length(u),
		        w->urls[i].p, w->urls[i].len) ||
		    (w->urls[i].plain &&
		        jw_plain_len((const unsigned char *)w->urls[i].p,
		            w->urls[i].len) != w->urls[i].len))
			return 0;
	}
	return 1;
}

/* Are the pairs of JSON array a (or no array) the n pairs at p? */
static int
same_pairs(const json_t *a, const struct wire_pair *p, size_t n)
{
	const json_t *name, *value;
	size_t i;

	if (json_array_size(a) != n)
		return 0;
	for (i = 0; i < n; i++) {
		name = json_array_get(json_array_get(a, i), 0);
		value = json_array_get(json_array_get(a, i), 1);
		if (!same_str(json_string_value(name), json_string_length(name),
		        p[i].name.p, p[i].name.len) ||
		    !same_str(json_string_value(value),
		        json_string_length(value), p[i].value.p,
		        p[i].value.len))
			return 0;
	}
	return 1;
}

/* Is pg (NULL: no page taken) the page of r? */
static int
same_page(const struct wire_page *pg, const struct request *r)
{
	if (pg == NULL || !pg->present)
		return r->page == NULL;
	return r->page != NULL &&
	       same_pairs(json_object_get(r->page, "headers"), pg->headers,
	           pg->nheaders) &&
	       same_pairs(
	           json_object_get(r->page, "meta"), pg->meta, pg->nmeta);
}

/* Do the two decodings say the same? */
static int
same(const struct wire_check *w, const struct wire_page *pg,
    const struct request *r)
{
	if (r->op != OP_CHECK || r->agent == NULL || r->wait != w->wait ||
	    r->usage != w->usage || r->tdm != w->tdm || r->tokens != NULL ||
	    w->page != (pg != NULL && pg->present ? pg : NULL) ||
	    !same_page(pg, r) || !same_urls(w, r) ||
	    !same_str(r->agent, r->agent_len, w->agent, w->agent_len))
		return 0;
	if (!w->has_id)
		return r->id == NULL;
	return json_is_integer(r->id) && json_integer_value(r->id) == w->id;
}

/* An accepted line: proto_decode() must give it the same contents. */
static void
compare(const char *s, size_t size, const struct wire_check *w,
    const struct wire_page *pg)
{
	struct request req;
	enum proto_err err;
	const char *msg;

	if (proto_decode(s, size, 0, &req, &err, &msg) == -1 ||
	    !same(w, pg, &req))
		abort();
	proto_request_clear(&req);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wire_str urls[PROTO_MAX_URLS];
	static struct wire_pair pairs[8]; /* small: the limit is fuzzed */
	const char *s = (const char *)data;
	struct wire_check w;
	struct wire_page pg;
	char *scratch =
	    malloc(size > 0 ? size : 1); /* exact: ASan sees overruns */

	if (scratch == NULL)
		return 0;
	if (wire_fast_check_page(s, size, scratch, urls, PROTO_MAX_URLS, pairs,
	        sizeof(pairs) / sizeof(pairs[0]), &w, &pg))
		compare(s, size, &w, &pg);
	free(scratch);
	return 0;
}
