/*
 * bounds.c: request line and response header caps; see bounds.h.
 * server_conn.c frames client input with it, fetch.c keeps origin headers
 * with it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "bounds.h"

int
bounds_header_join(char **slot, const char *v, size_t len)
{
	size_t old = *slot != NULL ? strlen(*slot) : 0;
	size_t sep = old != 0 ? 2 : 0;
	char *s;

	if (len > BOUNDS_HEADER_MAX || old > BOUNDS_HEADER_MAX)
		return 0; /* nothing the policy needs is that long */
	if ((s = realloc(*slot, old + sep + len + 1)) == NULL)
		return -1;
	if (sep != 0)
		memcpy(s + old, ", ", 2);
	memcpy(s + old + sep, v, len);
	s[old + sep + len] = '\0';
	*slot = s;
	return 1;
}

enum bounds_line
bounds_request_line(
    size_t n, long eol, int eof, int dropping, size_t max, size_t *len)
{
	if (eol == -1 && eof && n > 0 && !dropping)
		eol = (long)n; /* a last line without '\n' */
	else if (eol == -1)
		return n > max + 1 ? BOUNDS_OVERFLOW : BOUNDS_WAIT;
	*len = (size_t)eol;
	if (dropping)
		return BOUNDS_SKIP;
	return *len > max + 1 ? BOUNDS_TOO_LONG : BOUNDS_LINE;
}

int
bounds_line_fits(const char *line, size_t len, size_t max)
{
	return len <= max || (len == max + 1 && line[max] == '\r');
}
