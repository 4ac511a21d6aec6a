/*
 * fuzz_wire_fast.c: libFuzzer target for the check fast path, checked
 * against the full decoder. Whenever wire_fast_check() accepts a line,
 * proto_decode() must decode the same line to the same check: same URL
 * and agent bytes, same wait, same id, no batch.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto.h"
#include "wire_fast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Do the two decodings say the same? */
static int
same(const struct wire_check *w, const struct request *r)
{
	if (r->op != OP_CHECK || r->urls != NULL || r->url == NULL ||
	    r->agent == NULL || r->wait != w->wait)
		return 0;
	if (r->url_len != w->url_len ||
	    memcmp(r->url, w->url, w->url_len) != 0 ||
	    r->agent_len != w->agent_len ||
	    memcmp(r->agent, w->agent, w->agent_len) != 0)
		return 0;
	if (!w->has_id)
		return r->id == NULL;
	return json_is_integer(r->id) && json_integer_value(r->id) == w->id;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct wire_check w;
	struct request req;
	enum proto_err err;
	const char *msg;
	char *scratch = malloc(size + 1);

	if (scratch == NULL)
		return 0;
	if (wire_fast_check(s, size, scratch, &w)) {
		if (proto_decode(s, size, 0, &req, &err, &msg) == -1 ||
		    !same(&w, &req))
			abort();
		proto_request_clear(&req);
	}
	free(scratch);
	return 0;
}
