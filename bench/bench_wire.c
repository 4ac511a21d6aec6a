/*
 * bench_wire.c: the cost of decoding one check request line, jansson
 * (proto_decode) against the fast path (wire_fast_check_page), on the check
 * lines of a request file (one JSON line each, as loadgen sends them):
 * single checks or batches.
 *
 * usage: bench_wire REQUESTS_FILE
 * Prints ns per line for each decoder (CPU time, best of 5 passes) and
 * how many lines the fast path took.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire/proto.h"
#include "wire/wire_fast.h"

#define ROUNDS 5

/* CPU seconds of this process. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decode every line with proto_decode(); seconds; *ok counts successes. */
static double
pass_jansson(char **line, size_t *len, size_t n, size_t *ok)
{
	double t0 = cpu_now();
	struct request req;
	enum proto_err err;
	const char *msg;
	size_t i;

	for (i = 0, *ok = 0; i < n; i++) {
		*ok +=
		    proto_decode(line[i], len[i], 0, &req, &err, &msg) == 0 &&
		    req.op == OP_CHECK;
		proto_request_clear(&req);
	}
	return cpu_now() - t0;
}

/* Decode every line with wire_fast_check_page(); seconds; *ok as above. */
static double
pass_fast(char **line, size_t *len, size_t n, char *scratch, size_t *ok)
{
	static struct wire_str urls[PROTO_MAX_URLS];
	static struct wire_pair pairs[16];
	double t0 = cpu_now();
	struct wire_check w;
	struct wire_page pg;
	size_t i;

	for (i = 0, *ok = 0; i < n; i++)
		*ok += (size_t)wire_fast_check_page(line[i], len[i], scratch,
		    urls, PROTO_MAX_URLS, pairs, 16, &w, &pg);
	return cpu_now() - t0;
}

int
main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	char **line = NULL, *buf = NULL, *scratch;
	size_t n = 0, cap = 0, bcap = 0, *len = NULL, ok_j, ok_f, maxlen = 0;
	double best_j = 1e9, best_f = 1e9;
	ssize_t got;
	int r;

	if (f == NULL) {
		fprintf(stderr, "usage: bench_wire REQUESTS_FILE\n");
		return 2;
	}
	while ((got = getline(&buf, &bcap, f)) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			line = realloc(line, cap * sizeof(*line));
			len = realloc(len, cap * sizeof(*len));
			if (line == NULL || len == NULL)
				return 1;
		}
		len[n] = (size_t)got - (buf[got - 1] == '\n');
		maxlen = len[n] > maxlen ? len[n] : maxlen;
		if ((line[n] = strndup(buf, len[n])) == NULL)
			return 1;
		n++;
	}
	fclose(f);
	if (n == 0 || (scratch = malloc(maxlen + 1)) == NULL)
		return 1;
	for (r = 0; r < ROUNDS; r++) {
		double tj = pass_jansson(line, len, n, &ok_j);
		double tf = pass_fast(line, len, n, scratch, &ok_f);

		best_j = tj < best_j ? tj : best_j;
		best_f = tf < best_f ? tf : best_f;
	}
	printf("lines=%zu jansson_ns=%.0f fast_ns=%.1f fast_taken=%zu "
	       "jansson_ok=%zu\n",
	    n, best_j * 1e9 / (double)n, best_f * 1e9 / (double)n, ok_f, ok_j);
	return 0;
}
