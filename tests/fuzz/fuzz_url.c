/*
 * fuzz_url.c: libFuzzer target for URL normalization (src/robots/url.c).
 * The input is tried as a URL (url_parse, url_origin) and as a raw path
 * (robots_path_normalize); the results must keep their invariants: an
 * origin starts with its scheme and is its own origin, a match path starts
 * with '/' and normalizes to itself, and origin + path parses back to the
 * same origin and path. Whenever robots_url_fast() takes the input,
 * robots_url_parse() must succeed with exactly its origin and path;
 * robots_url_split() must give robots_url_parse()'s error or origin and path,
 * whichever it picked.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A match path: '/'-led, no NUL inside, and a fixed point of normalizing. */
static void
check_path(const char *path, size_t len)
{
	char *again;
	size_t again_len;

	if (len == 0 || path[0] != '/' || path[len] != '\0' ||
	    strlen(path) != len)
		abort();
	if ((again = robots_path_normalize(path, len, &again_len)) == NULL)
		return;
	if (again_len != len || memcmp(again, path, len) != 0)
		abort();
	free(again);
}

/* An origin key is its own origin. */
static void
check_origin(const char *origin, const char *scheme)
{
	size_t n = strlen(scheme);
	enum url_err err;
	char *again;

	if (strncmp(origin, scheme, n) != 0 || strncmp(origin + n, "://", 3))
		abort();
	again = robots_url_origin(origin, strlen(origin), &err);
	if (again == NULL) {
		if (err != URL_NOMEM)
			abort();
		return;
	}
	if (strcmp(again, origin) != 0)
		abort();
	free(again);
}

/* origin + path parses back to the same origin and path. */
static void
check_reparse(const struct url *u)
{
	size_t lo = strlen(u->origin);
	char *s = malloc(lo + u->path_len);
	struct url v;

	if (s == NULL)
		return;
	memcpy(s, u->origin, lo);
	memcpy(s + lo, u->path, u->path_len);
	if (robots_url_parse(s, lo + u->path_len, &v) == URL_OK) {
		if (strcmp(v.origin, u->origin) != 0 ||
		    v.path_len != u->path_len ||
		    memcmp(v.path, u->path, u->path_len) != 0)
			abort();
		robots_url_clear(&v);
	} else if (lo + u->path_len <= URL_MAX_LEN)
		abort();
	free(s);
}

/* robots_url_fast() agrees with robots_url_parse() (err, u) on every input it
 * takes. */
static void
check_fast(const char *s, size_t len, enum url_err err, const struct url *u)
{
	struct url_view v;
	char *buf = malloc(len + 3);

	if (buf == NULL)
		return;
	if (robots_url_fast(s, len, buf, len + 3, &v)) {
		if (err != URL_OK || strcmp(v.origin, u->origin) != 0 ||
		    v.origin_len != strlen(u->origin) ||
		    v.path_len != u->path_len ||
		    memcmp(v.path, u->path, u->path_len) != 0 ||
		    v.path[v.path_len] != '\0')
			abort();
	}
	if (len > 0 &&
	    robots_url_fast(s, len, buf, len + 2, &v)) /* too small */
		abort();
	free(buf);
}

/*
 * robots_url_split() gives robots_url_parse()'s error, or its origin and path,
 * whichever splitter it picked.
 */
static void
check_split(const char *s, size_t len, enum url_err err, const struct url *u)
{
	static struct robots_url r;

	if (robots_url_split(s, len, &r) != err)
		abort();
	if (err != URL_OK)
		return;
	if (strcmp(r.v.origin, u->origin) != 0 ||
	    r.v.origin_len != strlen(u->origin) ||
	    r.v.path_len != u->path_len ||
	    memcmp(r.v.path, u->path, u->path_len) != 0 ||
	    r.v.path[r.v.path_len] != '\0')
		abort();
	robots_url_split_clear(&r);
}

/* The scheme an origin key starts with. */
static const char *
origin_scheme(const char *origin)
{
	if (strncmp(origin, "ftp:", 4) == 0)
		return "ftp";
	return strncmp(origin, "https:", 6) == 0 ? "https" : "http";
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct url u;
	enum url_err err, oerr;
	char *origin, *path;
	size_t len;

	err = robots_url_parse(s, size, &u);
	if (robots_url_err_message(err) == NULL)
		abort();
	origin = robots_url_origin(s, size, &oerr);
	check_fast(s, size, err, &u);
	check_split(s, size, err, &u);
	if (err == URL_OK) {
		check_origin(u.origin, u.scheme);
		check_path(u.path, u.path_len);
		check_reparse(&u);
		if (origin != NULL && strcmp(origin, u.origin) != 0)
			abort();
		robots_url_clear(&u);
	}
	if (origin != NULL) {
		check_origin(origin, origin_scheme(origin));
		free(origin);
	}
	if ((path = robots_path_normalize(s, size, &len)) != NULL) {
		check_path(path, len);
		free(path);
	}
	return 0;
}
