/*
 * robots_url.c: the robots.txt URL of an origin. Apart from url.c (which
 * parses URLs with curl's URL API) so that code needing only this, like
 * the cache, does not link libcurl.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "robots.h"

/* origin + "/robots.txt". */
char *
robots_url_robots_txt(const char *origin)
{
	static const char suffix[] = "/robots.txt";
	size_t n;
	char *o;

	if (origin == NULL)
		return NULL;
	n = strlen(origin);
	if ((o = malloc(n + sizeof(suffix))) == NULL)
		return NULL;
	memcpy(o, origin, n);
	memcpy(o + n, suffix, sizeof(suffix));
	return o;
}
