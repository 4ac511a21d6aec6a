/*
 * cabundle.c: CA files copied into one anonymous in-memory file (see
 * cabundle.h for why).
 */
#include <config.h>

#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "fetch/cabundle.h"
#include "fnv.h"

/*
 * How many bundles this process has made: each gets a path of its own
 * from it (cabundle_path()), since libcurl keys its cached store on the
 * CAINFO path and a new bundle must never be taken for an old one. The
 * descriptor itself is the lowest free one, so reloads use no more
 * descriptors, nor higher numbers, however many there are.
 */
static uint64_t cabundle_made;

/*
 * "/proc/self/fd/" + one component per bit of gen, lowest first ("./" for
 * 0, ".//" for 1, stopping after the highest 1) + fd: the kernel resolves
 * every one to the descriptor, and no two generations give the same text,
 * whatever numbers their descriptors had. The first bundle's path is the
 * plain "/proc/self/fd/N".
 */
static void
cabundle_path(char *out, size_t len, uint64_t gen, int fd)
{
	size_t n = (size_t)snprintf(out, len, "/proc/self/fd/");

	for (; gen != 0 && n < len; gen >>= 1)
		n += (size_t)snprintf(
		    out + n, len - n, "%s", gen & 1 ? ".//" : "./");
	if (n < len)
		snprintf(out + n, len - n, "%d", fd);
}

/* Write all of buf to b, counted in its size and hash; -1 on error. */
static int
cabundle_write(struct cabundle *b, const char *buf, size_t len)
{
	ssize_t n;

	b->hash = fnv1a64(b->hash, buf, len);
	b->size += len;

	while (len > 0) {
		if ((n = write(b->fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Append the file at path to b; -1 with errno set on error. */
static int
cabundle_append(struct cabundle *b, const char *path)
{
	char chunk[16384];
	ssize_t n;
	int fd, rc = 0, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (rc == 0 && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n == -1) {
			rc = errno == EINTR ? 0 : -1;
			continue;
		}
		rc = cabundle_write(b, chunk, (size_t)n);
	}
	/* PEM blocks of the next file start on a line of their own. */
	if (rc == 0)
		rc = cabundle_write(b, "\n", 1);
	if (rc == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	return 0;
}

int
cabundle_make(struct cabundle *b, const char *const *paths, size_t n, char *err,
    size_t errlen)
{
	size_t i;
	int fd;

	*b = (struct cabundle)CABUNDLE_NONE;
	b->hash = FNV1A64_INIT;
	if ((b->fd = memfd_create("robotsd-ca", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (paths[i] == NULL)
			continue;
		if (cabundle_append(b, paths[i]) == -1) {
			snprintf(
			    err, errlen, "%s: %s", paths[i], strerror(errno));
			cabundle_close(b);
			return -1;
		}
	}
	cabundle_path(b->path, sizeof(b->path), cabundle_made++, b->fd);
	/* What curl will open (no /proc: better read per connection). */
	if ((fd = open(b->path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", b->path, strerror(errno));
		cabundle_close(b);
		return -1;
	}
	close(fd);
	return 0;
}

int
cabundle_same(const struct cabundle *a, const struct cabundle *b)
{
	return a->fd != -1 && b->fd != -1 && a->size == b->size &&
	       a->hash == b->hash;
}

void
cabundle_close(struct cabundle *b)
{
	if (b->fd != -1)
		close(b->fd);
	*b = (struct cabundle)CABUNDLE_NONE;
}

int
cabundles_make(struct cabundle *nb, const char *extra, char *err, size_t errlen)
{
	const char *paths[2] = { NULL, extra };
	CURL *e;
	int rc = -1;

	*nb = (struct cabundle)CABUNDLE_NONE;
	snprintf(err, errlen, "libcurl names no CA file");
	if ((e = curl_easy_init()) != NULL &&
	    curl_easy_getinfo(e, CURLINFO_CAINFO, &paths[0]) == CURLE_OK &&
	    paths[0] != NULL)
		rc = cabundle_make(nb, paths, 2, err, errlen);
	curl_easy_cleanup(e); /* paths[0] was its copy: used by now */
	return rc;
}

void
cabundles_install(struct cabundles *cb, struct cabundle *nb)
{
	if (cabundle_same(nb, &cb->cur))
		cabundle_close(nb);
	else {
		cabundle_close(&cb->prev);
		cb->prev = cb->cur;
		cb->cur = *nb;
		*nb = (struct cabundle)CABUNDLE_NONE;
	}
}

void
cabundles_free(struct cabundles *cb)
{
	cabundle_close(&cb->cur);
	cabundle_close(&cb->prev);
}
