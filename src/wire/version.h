/*
 * version.h: the version id of a robots.txt state, the same for robotsd
 * (which answers with it) and robotsctl (which computes it for captures
 * robotsd did not make): the first 16 hex digits of the SHA-256 of the
 * body bytes used (after the 500 KiB cut) for a ruleset, or of the text
 * "status:NNN" (an allow-all or disallow-all state from an HTTP status) or
 * "error:CLASS" (no HTTP answer, or too many redirects). The same content
 * gives the same id on every host and after every restart.
 */
#ifndef ROBOTS_WIRE_VERSION_H
#define ROBOTS_WIRE_VERSION_H

#include <stddef.h>

#define VERSION_HEX 16 /* hex digits of an id; the buffer holds one more */

/* The id of a ruleset's body bytes into out (VERSION_HEX + 1 bytes). */
void version_of_body(const char *body, size_t len, char *out);
/* The id of a state without rules from HTTP status status. */
void version_of_status(int status, char *out);
/* The id of a state without an HTTP answer, "error:" cls. */
void version_of_error_class(const char *cls, char *out);

#endif /* ROBOTS_WIRE_VERSION_H */
