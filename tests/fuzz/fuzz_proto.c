/*
 * fuzz_proto.c: libFuzzer target for the wire codec. Every input is a
 * request line: decoding must never crash or leak, whatever it holds. The
 * same bytes then go through the answer writer's JSON strings, which must
 * be exactly what jansson writes for them.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire/buf.h"
#include "wire/jsonw.h"
#include "wire/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * jw_str and jansson must agree on s: for bytes jansson takes as UTF-8 the
 * text must be jansson's, and whatever the bytes, the text must be one
 * JSON string that jansson reads back.
 */
static void
check_string(const char *s, size_t len)
{
	struct buf b = BUF_INIT(0);
	json_t *j = json_stringn(s, len), *back;
	char *want = NULL;

	jw_str(&b, s, len);
	if (b.state != BUF_OK)
		goto out; /* out of memory */
	if (j != NULL &&
	    (want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL &&
	    (b.len != strlen(want) || memcmp(b.p, want, b.len) != 0))
		abort();
	back = json_loadb(b.p, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (back == NULL || !json_is_string(back))
		abort();
	json_decref(back);
out:
	free(want);
	json_decref(j);
	buf_clear(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct buf b = BUF_INIT(0);
	struct request req;
	enum proto_err err;
	const char *msg;
	json_t *ans;

	if (proto_decode(s, size, 1, &req, &err, &msg) == -1) {
		if (err == PE_NONE || msg == NULL)
			abort();
		proto_error(&b, req.id, err, msg);
		if (b.state == BUF_OK) {
			/* One line that is one JSON object. */
			if (b.len == 0 || b.p[b.len - 1] != '\n' ||
			    memchr(b.p, '\n', b.len - 1) != NULL ||
			    (ans = json_loadb(b.p, b.len, 0, NULL)) == NULL)
				abort();
			json_decref(ans);
		}
	} else if (req.op == OP_CHECK && req.agent == NULL)
		abort();
	buf_clear(&b);
	proto_request_clear(&req);
	check_string(s, size);
	return 0;
}
