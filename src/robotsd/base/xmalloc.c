/*
 * xmalloc.c: die-on-exhaustion allocation wrappers (OpenBSD/tmux style).
 */
#include <config.h>

#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"

/* malloc() that never fails. */
void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		fatalx("out of memory allocating %zu bytes", size);
	return p;
}

/* calloc() that never fails. */
void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = calloc(nmemb, size)) == NULL)
		fatalx("out of memory allocating %zu * %zu bytes", nmemb, size);
	return p;
}

/* realloc() of an array, checking the multiplication; never fails. */
void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		fatalx("allocating %zu * %zu bytes overflows", nmemb, size);
	if ((p = realloc(ptr, nmemb * size == 0 ? 1 : nmemb * size)) == NULL)
		fatalx("out of memory allocating %zu * %zu "
		       "bytes",
		    nmemb, size);
	return p;
}

/* strdup() that never fails. */
char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* Copy at most n bytes of s and terminate the copy; never fails. */
char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* asprintf() that never fails; returns the length. */
int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0 || *ret == NULL)
		fatalx("out of memory formatting a string");
	return n;
}

size_t
xheld(const void *p)
{
	return p != NULL ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}
