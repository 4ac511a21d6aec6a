/*
 * url_split.c: one way to split a URL for a check. The common shape is
 * split by robots_url_fast() in the caller's buffer, without allocating; any
 * other URL by robots_url_parse(). Both give the same origin and match path.
 */
#include <config.h>

#include <string.h>

#include "robots.h"

/* See robots.h. */
enum url_err
robots_url_split(const char *s, size_t len, struct robots_url *out)
{
	enum url_err ue;

	out->parsed = 0;
	if (len <= ROBOTS_URL_STACK &&
	    robots_url_fast(s, len, out->buf, sizeof(out->buf), &out->v)) {
		out->plain = 1; /* scheme, host and port: no escapes */
		return URL_OK;
	}
	if ((ue = robots_url_parse(s, len, &out->u)) != URL_OK)
		return ue;
	out->parsed = 1;
	out->plain = 0;
	out->v.origin = out->u.origin;
	out->v.origin_len = strlen(out->u.origin);
	out->v.path = out->u.path;
	out->v.path_len = out->u.path_len;
	return URL_OK;
}

void
robots_url_split_clear(struct robots_url *r)
{
	if (r->parsed)
		robots_url_clear(&r->u);
	r->parsed = 0;
}
