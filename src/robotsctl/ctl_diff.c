/*
 * ctl_diff.c: a unified line diff of two robots.txt bodies for "robotsctl
 * diff": the common first and last lines are set aside, the lines between
 * are matched by a longest common subsequence (a table of at most
 * CTL_DIFF_CELLS cells; past that the middle is shown as all removed then
 * all added), and changes are printed as "@@ -a,n +b,m @@" hunks with three
 * lines of context, as diff -u does.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robotsctl.h"

#define CTL_DIFF_CELLS (4u << 20) /* LCS table cells: 8 MiB */
#define CTL_DIFF_CONTEXT 3

struct line {
	const char *p;
	size_t len; /* without the '\n' */
};

/* One line of the edit: ' ' both, '-' only in a, '+' only in b. */
struct op {
	char c;
	size_t a, b; /* lines of a and of b before this one */
};

/* The lines of s (allocated); a last line without '\n' counts. */
static struct line *
split(const char *s, size_t n, size_t *count)
{
	struct line *l = malloc(64 * sizeof(*l));
	size_t k = 0, cap = 64;
	const char *end = n > 0 ? s + n : s, *nl;

	if (l == NULL) {
		ctl_warnx("out of memory");
		exit(CTL_EXIT_ERROR);
	}
	while (s < end) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		if (k == cap) {
			cap *= 2;
			if ((l = realloc(l, cap * sizeof(*l))) == NULL) {
				ctl_warnx("out of memory");
				exit(CTL_EXIT_ERROR);
			}
		}
		l[k].p = s;
		l[k++].len = (size_t)(nl - s);
		s = nl + 1;
	}
	*count = k;
	return l;
}

static int
same(const struct line *x, const struct line *y)
{
	return x->len == y->len && memcmp(x->p, y->p, x->len) == 0;
}

/* Append one op to ops (room for na + nb). */
static void
push(struct op *ops, size_t *n, char c, size_t *ai, size_t *bi)
{
	ops[*n] = (struct op){ c, *ai, *bi };
	(*n)++;
	if (c != '+')
		(*ai)++;
	if (c != '-')
		(*bi)++;
}

/* The middle a[0..n) against b[0..m) by LCS, or all out then all in. */
static void
middle(const struct line *a, size_t n, const struct line *b, size_t m,
    struct op *ops, size_t *nops, size_t *ai, size_t *bi)
{
	uint16_t *t = NULL;
	size_t i = 0, j = 0, w = m + 1;

	if (n > 0 && m > 0 && n < 65535 && m < 65535 &&
	    (n + 1) * (m + 1) <= CTL_DIFF_CELLS)
		t = calloc((n + 1) * (m + 1), sizeof(*t));
	if (t != NULL) {
		/* t[i][j]: the LCS of a[i..] and b[j..] */
		for (i = n; i-- > 0;)
			for (j = m; j-- > 0;)
				t[i * w + j] =
				    same(&a[i], &b[j])
				        ? (uint16_t)(t[(i + 1) * w + j + 1] + 1)
				        : (t[(i + 1) * w + j] >=
				                      t[i * w + j + 1]
				                  ? t[(i + 1) * w + j]
				                  : t[i * w + j + 1]);
		i = j = 0;
		while (i < n && j < m) {
			if (same(&a[i], &b[j])) {
				push(ops, nops, ' ', ai, bi);
				i++, j++;
			} else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) {
				push(ops, nops, '-', ai, bi);
				i++;
			} else {
				push(ops, nops, '+', ai, bi);
				j++;
			}
		}
		free(t);
	}
	for (; i < n; i++)
		push(ops, nops, '-', ai, bi);
	for (; j < m; j++)
		push(ops, nops, '+', ai, bi);
}

/* Print ops[from..to) as one hunk. */
static void
hunk(FILE *out, const struct op *ops, size_t from, size_t to,
    const struct line *a, const struct line *b)
{
	size_t i, na = 0, nb = 0;

	for (i = from; i < to; i++) {
		na += ops[i].c != '+';
		nb += ops[i].c != '-';
	}
	fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ops[from].a + (na > 0), na,
	    ops[from].b + (nb > 0), nb);
	for (i = from; i < to; i++) {
		const struct line *l =
		    ops[i].c == '+' ? &b[ops[i].b] : &a[ops[i].a];

		fputc(ops[i].c, out);
		fwrite(l->p, 1, l->len, out);
		fputc('\n', out);
	}
}

/* Print the hunks of ops: changes with their context, close ones joined. */
static void
hunks(FILE *out, const struct op *ops, size_t n, const struct line *a,
    const struct line *b)
{
	size_t i = 0, from, end, gap;

	while (i < n) {
		if (ops[i].c == ' ') {
			i++;
			continue;
		}
		from = i > CTL_DIFF_CONTEXT ? i - CTL_DIFF_CONTEXT : 0;
		end = i;
		for (;;) {
			while (end < n && ops[end].c != ' ')
				end++;
			for (gap = 0; end + gap < n && ops[end + gap].c == ' ';)
				gap++;
			if (end + gap < n && gap <= 2 * CTL_DIFF_CONTEXT) {
				end += gap;
				continue;
			}
			end += gap < CTL_DIFF_CONTEXT ? gap : CTL_DIFF_CONTEXT;
			break;
		}
		hunk(out, ops, from, end, a, b);
		i = end;
	}
}

int
ctl_diff(FILE *out, const char *la, const char *a, size_t alen, const char *lb,
    const char *b, size_t blen)
{
	size_t na, nb, p = 0, s = 0, nops = 0, ai = 0, bi = 0, i;
	struct line *x = split(a, alen, &na), *y = split(b, blen, &nb);
	struct op *ops = malloc((na + nb + 1) * sizeof(*ops));
	int differ;

	if (ops == NULL) {
		ctl_warnx("out of memory");
		exit(CTL_EXIT_ERROR);
	}
	while (p < na && p < nb && same(&x[p], &y[p]))
		p++;
	while (s < na - p && s < nb - p && same(&x[na - 1 - s], &y[nb - 1 - s]))
		s++;
	for (i = 0; i < p; i++)
		push(ops, &nops, ' ', &ai, &bi);
	middle(x + p, na - p - s, y + p, nb - p - s, ops, &nops, &ai, &bi);
	for (i = 0; i < s; i++)
		push(ops, &nops, ' ', &ai, &bi);
	differ = p + s != na || na != nb;
	if (differ) {
		fprintf(out, "--- %s\n+++ %s\n", la, lb);
		hunks(out, ops, nops, x, y);
	}
	free(ops);
	free(x);
	free(y);
	return differ;
}
