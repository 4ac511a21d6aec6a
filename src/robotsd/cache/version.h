/*
 * version.h: the version id of an origin's robots.txt state, computed once
 * per fetch outcome (or shared-tier read): the first 16 hex digits of the
 * SHA-256 of the body bytes used (after the 500 KiB cut) for a ruleset, or
 * of the text "status:NNN" (an allow-all or disallow-all state from an HTTP
 * status) or "error:CLASS" (no HTTP answer). The same content gives the
 * same id on every host and after every restart.
 */
#ifndef ROBOTSD_VERSION_H
#define ROBOTSD_VERSION_H

#include <stddef.h>

#include "iface/outcome.h"

#define VERSION_HEX 16 /* hex digits of an id; the buffer holds one more */

/* The id of a ruleset's body bytes into out (VERSION_HEX + 1 bytes). */
void version_of_body(const char *body, size_t len, char *out);
/* The id of a state without rules from HTTP status status. */
void version_of_status(int status, char *out);
/* The id of a state without an HTTP answer: "error:" version_error_class(). */
void version_of_error(enum fetch_error, char *out);
/*
 * The CLASS of a fetch error in "error:CLASS": network, timeout,
 * too_many_redirects, private_address. The one place that names them.
 */
const char *version_error_class(enum fetch_error);

#endif /* ROBOTSD_VERSION_H */
