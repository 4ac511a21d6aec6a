/*
 * feed_msg.c: the fleet's change feed messages (see feed_int.h and
 * docs/scaling.md). A message is the JSON text
 *
 *   {"v":2,"from":ID,"seq":N,"origin":O,"version":V,"at":MS}
 *
 * (ID the sender's random instance id, N its count of messages, MS when
 * the version was first fetched, in epoch milliseconds as the tier's
 * values hold times; "resource":"tdmrep" after the origin for a change of
 * its tdmrep.json, none for robots.txt's, whose messages are as they
 * were), and with the fleet's key a trailer of TIER_TAG_LEN
 * bytes: "RBTH" and the HMAC-SHA256 of the text under a key derived from
 * the fleet's for this use alone (tier_key_derive, "robotsd feed v2"), so
 * neither a value's tag nor a message's passes for the other's. A fleet
 * with a key takes only messages whose tag is right; one without drops a
 * trailer unchecked. A message of the first format ("v":1, from robotsd
 * 0.1, no tag) is read as the notice it holds (from, origin, new, at)
 * only by a fleet without a key.
 *
 * A message says only that a version exists and since when: the receiver
 * loads it from the tier (or the origin) itself, and what it tells its
 * watchers is what its own cache then holds, so a message replayed or
 * made up at most costs it that load.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robots.h"
#include "wire/buf.h"
#include "wire/jsonw.h"
#include "feed/feed_int.h"
#include "policy/tier_tag.h"

#define TAG_MAGIC "RBTH"

int
feed_msg_encode(struct buf *b, const char *id, uint64_t seq,
    const struct feed_change *ch, const unsigned char *key)
{
	unsigned char tag[TIER_TAG_LEN];
	struct jw w;

	jw_init(&w, b);
	jw_obj(&w);
	jw_kint(&w, "v", 2);
	jw_kstr(&w, "from", id, strlen(id));
	jw_kint(&w, "seq", (long long)(seq & INT64_MAX));
	jw_kstr(&w, "origin", ch->origin, strlen(ch->origin));
	if (ch->resource == FEED_TDMREP)
		jw_kstr(&w, "resource", "tdmrep", 6);
	jw_kstr(&w, "version", ch->new_version, strlen(ch->new_version));
	jw_kint(&w, "at", (long long)(ch->at * 1000.0));
	jw_end(&w);
	if (b->state != BUF_OK || b->len > FEED_MSG_MAX)
		return -1;
	if (key != NULL) {
		tier_tag_make(key, b->p, b->len, tag);
		buf_add(b, tag, sizeof(tag));
	}
	return b->state == BUF_OK ? 0 : -1;
}

/* A version id: 1 to 64 lower-case hex digits. */
static int
good_version(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;

	if (s == NULL || n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* An origin as robotsd writes one (normalized, and short enough). */
static int
good_origin(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;
	enum url_err ue;
	char *o;
	int ok;

	if (s == NULL || n == 0 || n > FEED_MSG_READ_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	if ((o = robots_url_origin(s, n, &ue)) == NULL)
		return 0;
	ok = strcmp(o, s) == 0;
	free(o);
	return ok;
}

/* A sender's id: FEED_ID_LEN lower-case hex digits (any, for v1). */
static int
good_id(const json_t *v, int exact)
{
	size_t n = json_string_length(v);

	return json_is_string(v) && n > 0 && n <= FEED_ID_LEN &&
	       (!exact || (n == FEED_ID_LEN && good_version(v)));
}

/*
 * A message's "resource": FEED_ROBOTS when absent, FEED_TDMREP, 0 for a
 * name this build does not know (a later one's: not loaded), or -1 when
 * it is not a string.
 */
static int
msg_resource(const json_t *v)
{
	const char *s = json_string_value(v);

	if (v == NULL)
		return FEED_ROBOTS;
	if (s == NULL)
		return -1;
	if (strcmp(s, "robots.txt") == 0)
		return FEED_ROBOTS;
	return strcmp(s, "tdmrep") == 0 ? FEED_TDMREP : 0;
}

/* The fields of a message of version 2, or of 1; why not, else NULL. */
static const char *
msg_fields(json_t *m, int keyed, struct feed_notice *n)
{
	json_int_t v = json_integer_value(json_object_get(m, "v"));
	const json_t *from = json_object_get(m, "from"), *at, *ver, *seq;
	int res = msg_resource(json_object_get(m, "resource"));

	if (!json_is_object(m) || (v != 1 && v != 2))
		return "unknown format";
	if (v == 1 && keyed)
		return "untagged";
	ver = json_object_get(m, v == 2 ? "version" : "new");
	at = json_object_get(m, "at");
	seq = json_object_get(m, "seq");
	if (!good_id(from, v == 2) ||
	    !good_origin(json_object_get(m, "origin")) || !good_version(ver) ||
	    (v == 2 ? !json_is_integer(at) || json_integer_value(at) < 0 ||
	                  !json_is_integer(seq) || json_integer_value(seq) < 0
	            : !json_is_number(at)) ||
	    res == -1)
		return "malformed";
	n->resource = (unsigned)res;
	n->from = json_string_value(from);
	n->origin = json_string_value(json_object_get(m, "origin"));
	n->version = json_string_value(ver);
	n->at = v == 2 ? (double)json_integer_value(at) / 1000.0
	               : json_number_value(at);
	return NULL;
}

int
feed_msg_open(const unsigned char *key, const char *msg, size_t len,
    json_t **tree, struct feed_notice *n, const char **why)
{
	unsigned char want[TIER_TAG_LEN];
	int tagged = len > TIER_TAG_LEN &&
	             memcmp(msg + len - TIER_TAG_LEN, TAG_MAGIC, 4) == 0;
	size_t text = tagged ? len - TIER_TAG_LEN : len;
	json_t *m;

	*tree = NULL;
	if (text > FEED_MSG_READ_MAX) {
		*why = "too long";
		return -1;
	}
	if (key != NULL) {
		if (!tagged) {
			*why = "untagged";
			return -1;
		}
		tier_tag_make(key, msg, text, want);
		if (!tier_tag_equal(want, (const unsigned char *)msg + text)) {
			*why = "bad tag";
			return -1;
		}
	}
	if ((m = json_loadb(msg, text, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
		*why = "not JSON";
		return -1;
	}
	if ((*why = msg_fields(m, key != NULL, n)) != NULL) {
		json_decref(m);
		return -1;
	}
	*tree = m;
	return 0;
}
