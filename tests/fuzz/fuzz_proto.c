/*
 * fuzz_proto.c: libFuzzer target for the wire codec. Every input is a
 * request line: decoding must never crash or leak, whatever it holds. The
 * same bytes then go through the hot path's JSON string writer, which must
 * write exactly what jansson writes for proto_string() of them.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* pbuf_str and jansson must agree on s. */
static void
check_string(const char *s, size_t len)
{
	struct pbuf b = { 0 };
	json_t *j = proto_string(s, len);
	char *want;

	if (j == NULL)
		return; /* out of memory */
	want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	pbuf_str(&b, s, len);
	if (want != NULL && !b.nomem &&
	    (b.len != strlen(want) || memcmp(b.p, want, b.len) != 0))
		abort();
	free(want);
	pbuf_clear(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct request req;
	enum proto_err err;
	const char *msg;
	size_t len;
	char *line;

	if (proto_decode(s, size, 1, &req, &err, &msg) == -1) {
		if (err == PE_NONE || msg == NULL)
			abort();
		line = proto_encode(proto_error(req.id, err, msg), &len);
		if (line != NULL && (len == 0 || line[len - 1] != '\n'))
			abort();
		free(line);
	} else if (req.op == OP_CHECK && req.agent == NULL)
		abort();
	proto_request_clear(&req);
	check_string(s, size);
	return 0;
}
