/*
 * version.c: the error classes of version ids (version.h).
 */
#include <config.h>

#include "cache/version.h"

/* See version.h. */
const char *
version_error_class(enum fetch_error e)
{
	switch (e) {
	case FETCH_TIMEOUT:
		return "timeout";
	case FETCH_REDIRECTS:
		return "too_many_redirects";
	case FETCH_PRIVATE_ADDR:
		return "private_address";
	case FETCH_LOCAL: /* never an origin's state (cache.c) */
		return "local";
	case FETCH_OK:
	case FETCH_NETWORK:
		break;
	}
	return "network";
}

/* See version.h. */
void
version_of_error(enum fetch_error e, char *out)
{
	version_of_error_class(version_error_class(e), out);
}
