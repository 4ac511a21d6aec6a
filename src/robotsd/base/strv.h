/*
 * strv.h: NULL-terminated vectors of strings, copied for modules that must
 * keep a list past a reload of the config it came from.
 */
#ifndef ROBOTSD_STRV_H
#define ROBOTSD_STRV_H

/* A copy of v (NULL in: an empty vector out); NULL when memory runs out. */
char **strv_dup(char *const *v);
void strv_free(char **v); /* NULL is fine */

#endif /* ROBOTSD_STRV_H */
