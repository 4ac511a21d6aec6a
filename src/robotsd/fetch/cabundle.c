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

#define CABUNDLE_FNV_OFFSET 0xcbf29ce484222325ULL
#define CABUNDLE_FNV_PRIME 0x100000001b3ULL

/*
 * Above every fd number a bundle has had: libcurl keys its cached store on
 * the CAINFO path, so a new bundle must never get an old one's number
 * (memfd_create() would reuse the lowest free one).
 */
static int cabundle_next_fd;

/* Write all of buf to b, counted in its size and hash; -1 on error. */
static int
cabundle_write(struct cabundle *b, const char *buf, size_t len)
{
	size_t i;
	ssize_t n;

	for (i = 0; i < len; i++)
		b->hash =
		    (b->hash ^ (unsigned char)buf[i]) * CABUNDLE_FNV_PRIME;
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
	b->hash = CABUNDLE_FNV_OFFSET;
	if ((fd = memfd_create("robotsd-ca", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	b->fd = fcntl(fd, F_DUPFD_CLOEXEC, cabundle_next_fd);
	close(fd);
	if (b->fd == -1) {
		snprintf(err, errlen, "a new descriptor for the bundle: %s",
		    strerror(errno));
		return -1;
	}
	cabundle_next_fd = b->fd + 1;
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
	snprintf(b->path, sizeof(b->path), "/proc/self/fd/%d", b->fd);
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
