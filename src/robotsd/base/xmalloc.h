/*
 * xmalloc.h: allocation wrappers for the daemon's control structures; they
 * never return NULL (fatalx on exhaustion). Sizes that come from input must
 * be capped by the caller before they get here.
 */
#ifndef ROBOTSD_XMALLOC_H
#define ROBOTSD_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
int xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
/*
 * The bytes the allocator holds for the block p (NULL: 0): its usable
 * size and the size word before it, page rounding of a mapped block
 * included. What memory caps charge, so that they count what the heap
 * spends, not what was asked of it.
 */
size_t xheld(const void *p);

#endif /* ROBOTSD_XMALLOC_H */
