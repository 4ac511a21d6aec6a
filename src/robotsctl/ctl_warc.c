/*
 * ctl_warc.c: the WARC record reader (ctl_warc.h). A header is read line
 * by line up to its blank line, keeping the fields robotsctl uses; the
 * block is then read whole or skipped by its Content-Length.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include <zlib.h>

#include "wire/buf.h"
#include "ctl_warc.h"

/* Copy a header's value (after "Name:", blanks and CRLF trimmed). */
static void
field(const char *line, size_t nlen, char *out, size_t outsz)
{
	const char *v = line + nlen + 1;
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strcspn(v, "\r\n");
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, v, n);
	out[n] = '\0';
}

/* Keep line's value when it is one of the fields of r robotsctl reads. */
static void
keep_field(const char *line, struct ctl_warc_rec *r)
{
	static const struct {
		const char *name;
		size_t off, size;
	} keep[] = {
		{ "WARC-Type", offsetof(struct ctl_warc_rec, type),
		    sizeof(r->type) },
		{ "WARC-Robotsd-Origin", offsetof(struct ctl_warc_rec, origin),
		    sizeof(r->origin) },
		{ "WARC-Robotsd-Version",
		    offsetof(struct ctl_warc_rec, version),
		    sizeof(r->version) },
		{ "WARC-Robotsd-Resource",
		    offsetof(struct ctl_warc_rec, resource),
		    sizeof(r->resource) },
		{ "WARC-Target-URI", offsetof(struct ctl_warc_rec, target),
		    sizeof(r->target) },
		{ "WARC-Date", offsetof(struct ctl_warc_rec, date),
		    sizeof(r->date) },
	};
	size_t i, n;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		n = strlen(keep[i].name);
		if (strncasecmp(line, keep[i].name, n) == 0 && line[n] == ':')
			field(line, n, (char *)r + keep[i].off, keep[i].size);
	}
	if (strncasecmp(line, "Content-Length:", 15) == 0)
		r->length = strtoull(line + 15, NULL, 10);
}

/* See ctl_warc.h. */
int
ctl_warc_header(gzFile g, struct ctl_warc_rec *r)
{
	char line[8192];

	memset(r, 0, sizeof(*r));
	do { /* the blank lines that end the record before */
		if (gzgets(g, line, sizeof(line)) == NULL)
			return 0;
	} while (strcmp(line, "\r\n") == 0 || strcmp(line, "\n") == 0);
	if (strncmp(line, "WARC/1.", 7) != 0)
		return -1;
	while (gzgets(g, line, sizeof(line)) != NULL &&
	       strcmp(line, "\r\n") != 0 && strcmp(line, "\n") != 0)
		keep_field(line, r);
	if (r->target[0] == '<') { /* WARC 1.0's <URI> form */
		size_t n = strlen(r->target);

		memmove(r->target, r->target + 1, n);
		if (n >= 2 && r->target[n - 2] == '>')
			r->target[n - 2] = '\0';
	}
	return 1;
}

/* See ctl_warc.h. */
int
ctl_warc_is_resource(const struct ctl_warc_rec *r, const char *resource)
{
	const char *got = r->resource[0] != '\0' ? r->resource : "robots.txt";

	return strcmp(got, resource != NULL ? resource : "robots.txt") == 0;
}

/* See ctl_warc.h. */
int
ctl_warc_block(gzFile g, unsigned long long len, struct buf *keep)
{
	char chunk[65536];
	int n;

	while (len > 0) {
		n = gzread(g, chunk,
		    len < sizeof(chunk) ? (unsigned)len : sizeof(chunk));
		if (n <= 0)
			return -1;
		if (keep != NULL)
			buf_add(keep, chunk, (size_t)n);
		len -= (unsigned long long)n;
	}
	return 0;
}
