/*
 * strv.c: NULL-terminated string vectors (strv.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "base/strv.h"

void
strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

char **
strv_dup(char *const *v)
{
	size_t i, n = 0;
	char **out;

	while (v != NULL && v[n] != NULL)
		n++;
	if ((out = calloc(n + 1, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((out[i] = strdup(v[i])) == NULL) {
			strv_free(out);
			return NULL;
		}
	}
	return out;
}
