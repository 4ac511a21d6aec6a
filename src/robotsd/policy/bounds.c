/*
 * bounds.c: request line and response header caps; see bounds.h.
 * server_conn.c frames client input with it, fetch_resp.c keeps origin
 * headers with it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "policy/bounds.h"
#include "wire/buf.h"

/*
 * The most a kept value holds: one of at most BOUNDS_HEADER_MAX bytes
 * joined to a value of at most as many. The rule in bounds_header_join()
 * decides what is kept; the buffer's cap is the bound that rule implies.
 */
#define BOUNDS_JOINED_MAX (2 * BOUNDS_HEADER_MAX + 2)

int
bounds_header_join(char **slot, const char *v, size_t len)
{
	size_t old = *slot != NULL ? strlen(*slot) : 0;
	struct buf b = BUF_INIT(BOUNDS_JOINED_MAX);

	if (len > BOUNDS_HEADER_MAX || old > BOUNDS_HEADER_MAX)
		return 0; /* nothing the policy needs is that long */
	buf_add(&b, *slot, old);
	if (old != 0)
		buf_lit(&b, ", ");
	buf_add(&b, v, len);
	if (buf_terminate(&b) == -1 || b.state != BUF_OK) {
		buf_clear(&b); /* out of memory: the rule keeps under the cap */
		return -1;
	}
	free(*slot);
	*slot = buf_take(&b, NULL);
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
