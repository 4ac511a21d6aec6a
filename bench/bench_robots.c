/*
 * bench_robots.c: librobots over the real-world corpus. Prints parse
 * throughput, matches per second on compiled rulesets and the memory of the
 * compiled rulesets against the raw bytes, as a Markdown table.
 *
 * usage: bench_robots CORPUS_DIR [ROUNDS]
 * CORPUS_DIR holds robots/HOST.txt files and urls.txt (https://HOST/PATH).
 * Timing is CPU time of this process (one core), best of ROUNDS rounds.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "robots.h"

struct body {
	char *host;
	char *data;
	size_t len;
	struct robots *robots;
};

struct query {
	const struct robots *robots;
	char *path;
	size_t path_len;
	const char *agent;
};

static const char *agents[] = { "Googlebot", "bingbot", "GPTBot",
	"FooBot/2.1 (+https://foo.example)" };

/* CPU seconds used by this process. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read a whole file; returns NULL on error. */
static char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

static int
body_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct body *)a)->host, ((const struct body *)b)->host);
}

/* Load every robots/HOST.txt, sorted by host. */
static struct body *
load_bodies(const char *dir, size_t *n, size_t *bytes)
{
	char path[4096];
	struct body *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/robots", dir);
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	*n = *bytes = 0;
	while ((de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);

		if (nl < 5 || strcmp(de->d_name + nl - 4, ".txt") != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		snprintf(path, sizeof(path), "%s/robots/%s", dir, de->d_name);
		v[*n].data = read_file(path, &v[*n].len);
		if (v[*n].data == NULL)
			continue;
		v[*n].host = strndup(de->d_name, nl - 4);
		v[*n].robots = NULL;
		*bytes += v[*n].len;
		(*n)++;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), body_cmp);
	return v;
}

/* The ruleset of host, or NULL. */
static const struct robots *
find_robots(struct body *v, size_t n, const char *host)
{
	struct body key = { .host = (char *)host };
	struct body *b = bsearch(&key, v, n, sizeof(*v), body_cmp);

	return b ? b->robots : NULL;
}

/* Turn urls.txt into queries against the compiled rulesets. */
static struct query *
load_queries(const char *dir, struct body *v, size_t nv, size_t *n)
{
	char path[4096], line[16384];
	struct query *q = NULL;
	size_t cap = 0;
	struct url u;
	FILE *f;

	snprintf(path, sizeof(path), "%s/urls.txt", dir);
	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	*n = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\r\n");
		const struct robots *r;
		const char *host;

		if (robots_url_parse(line, len, &u) != URL_OK)
			continue;
		host = strstr(u.origin, "://") + 3;
		if ((r = find_robots(v, nv, host)) != NULL) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 1024;
				q = realloc(q, cap * sizeof(*q));
			}
			q[*n].robots = r;
			q[*n].path = strdup(u.path);
			q[*n].path_len = u.path_len;
			q[*n].agent = agents[*n % 4];
			(*n)++;
		}
		robots_url_clear(&u);
	}
	fclose(f);
	return q;
}

/* Best-of-rounds parse of every body; leaves the last round's rulesets. */
static double
bench_parse(struct body *v, size_t n, int rounds)
{
	double best = 1e9;
	int r;
	size_t i;

	for (r = 0; r < rounds; r++) {
		double t0 = cpu_now(), t;

		for (i = 0; i < n; i++) {
			robots_unref(v[i].robots);
			v[i].robots = robots_parse(v[i].data, v[i].len);
			if (v[i].robots == NULL) {
				fprintf(stderr, "bench: out of memory\n");
				exit(2);
			}
		}
		if ((t = cpu_now() - t0) < best)
			best = t;
	}
	return best;
}

/* Best-of-rounds time for `reps` passes over all queries. */
static double
bench_match(struct query *q, size_t n, int rounds, int reps, uint64_t *allowed)
{
	struct robots_verdict vd;
	double best = 1e9;
	int r, k;
	size_t i;

	for (r = 0; r < rounds; r++) {
		double t0 = cpu_now(), t;

		*allowed = 0;
		for (k = 0; k < reps; k++)
			for (i = 0; i < n; i++) {
				robots_check(q[i].robots, q[i].agent,
				    strlen(q[i].agent), q[i].path,
				    q[i].path_len, &vd);
				*allowed += (uint64_t)vd.allowed;
			}
		if ((t = cpu_now() - t0) < best)
			best = t;
	}
	return best;
}

int
main(int argc, char **argv)
{
	size_t nb, bytes, nq, i, mem = 0, rules = 0, capped = 0;
	int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	const int reps = 20;
	struct body *v;
	struct query *q;
	double tp, tm;
	uint64_t allowed;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_robots CORPUS_DIR [ROUNDS]\n");
		return 2;
	}
	if (rounds < 1)
		rounds = 1;
	v = load_bodies(argv[1], &nb, &bytes);
	tp = bench_parse(v, nb, rounds);
	for (i = 0; i < nb; i++) {
		mem += robots_memsize(v[i].robots);
		rules += robots_rule_count(v[i].robots);
		capped +=
		    v[i].len > ROBOTS_MAX_BODY ? ROBOTS_MAX_BODY : v[i].len;
	}
	q = load_queries(argv[1], v, nb, &nq);
	tm = bench_match(q, nq, rounds, reps, &allowed);

	printf("| measure | value |\n|---|---|\n");
	printf("| files | %zu (%.1f MiB) |\n", nb, bytes / 1048576.0);
	printf("| parse throughput | %.0f MB/s (%.3f s CPU for all files) |\n",
	    bytes / 1e6 / tp, tp);
	printf("| queries | %zu URLs x %d passes, %.1f%% allowed |\n", nq, reps,
	    100.0 * (double)allowed / (double)(nq * (size_t)reps));
	printf("| match rate | %.2f million/s (%.0f ns each) |\n",
	    (double)nq * reps / tm / 1e6, tm / ((double)nq * reps) * 1e9);
	printf("| rules | %zu |\n", rules);
	printf("| compiled memory | %.1f MiB |\n", mem / 1048576.0);
	printf("| raw bytes parsed (500 KiB cap) | %.1f MiB |\n",
	    capped / 1048576.0);
	printf("| budget: raw + 64 B/rule | %.1f MiB (%s) |\n",
	    (capped + 64.0 * rules) / 1048576.0,
	    mem <= capped + 64 * rules ? "met" : "MISSED");

	for (i = 0; i < nq; i++)
		free(q[i].path);
	free(q);
	for (i = 0; i < nb; i++) {
		robots_unref(v[i].robots);
		free(v[i].data);
		free(v[i].host);
	}
	free(v);
	return 0;
}
