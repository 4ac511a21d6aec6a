/*
 * replay.c: a main() for the libFuzzer targets so that make check runs
 * every seed of a corpus directory through a target in any build (the
 * sanitizer build included) without libFuzzer. Arguments, or CORPUSDIR
 * when there are none, name directories or files to replay.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run one file through the target; -1 when it cannot be read. */
static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return -1;
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((buf = realloc(buf, cap)) == NULL)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

/* Replay a file, or every regular file in a directory; returns the count. */
static long
replay_path(const char *path)
{
	char sub[4096];
	struct dirent *de;
	struct stat st;
	long n = 0;
	DIR *d;

	if (stat(path, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) == 0 ? 1 : -1;
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
		        de->d_name) >= sizeof(sub) ||
		    stat(sub, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(sub) == -1)
			return -1;
		n++;
	}
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	const char *def[] = { CORPUSDIR };
	const char *const *paths =
	    argc > 1 ? (const char *const *)argv + 1 : def;
	int i, npaths = argc > 1 ? argc - 1 : 1;
	long n, total = 0;

	for (i = 0; i < npaths; i++) {
		if ((n = replay_path(paths[i])) <= 0) {
			fprintf(
			    stderr, "replay: %s: no input read\n", paths[i]);
			return EXIT_FAILURE;
		}
		total += n;
	}
	printf("replay: %ld passed, 0 failed\n", total);
	return EXIT_SUCCESS;
}
