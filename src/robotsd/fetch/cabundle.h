/*
 * cabundle.h: the CA certificates https fetches trust, gathered into one
 * in-memory file that libcurl can parse once.
 *
 * libcurl (7.87 and later, OpenSSL) keeps the store it parsed from its CA
 * file in the multi handle and shares it among connections, but only when
 * no CA directory is set; Debian's libcurl sets /etc/ssl/certs as one, so
 * every new connection parsed the whole system bundle again: about 20 ms
 * of CPU for its 144 certificates with OpenSSL 3, ten times the rest of a
 * TLS handshake. robotsd therefore hands curl a single file and no
 * directory: the system bundle followed by --ca-file's certificates,
 * copied at start and at each reload into an anonymous file (memfd) named
 * by its /proc/self/fd path.
 */
#ifndef ROBOTSD_CABUNDLE_H
#define ROBOTSD_CABUNDLE_H

#include <stddef.h>
#include <stdint.h>

struct cabundle {
	int fd;        /* -1: none */
	size_t size;   /* bytes in it */
	uint64_t hash; /* of those bytes, to see that a reload changed none */
	/*
	 * What CURLOPT_CAINFO gets: "/proc/self/fd/N", with "./" and ".//"
	 * components before N that make it unlike any other bundle's of the
	 * process (libcurl's cached store is keyed on it), while N is the
	 * lowest free descriptor (reloads do not use up numbers).
	 */
	char path[256];
};

/* (clang-format 14 and 19 lay out a braced macro apart) */
/* clang-format off */
#define CABUNDLE_NONE { -1, 0, 0, "" }
/* clang-format on */

/*
 * Copy the files of paths[0..n) (NULL entries skipped) one after the other,
 * each ending in a newline, into a new bundle; -1 with a reason in err
 * when one cannot be read, or no in-memory file can be made or opened
 * through its path (no /proc).
 */
int cabundle_make(struct cabundle *, const char *const *paths, size_t n,
    char *err, size_t errlen);
/* Whether two bundles hold the same bytes. */
int cabundle_same(const struct cabundle *, const struct cabundle *);
void cabundle_close(struct cabundle *); /* back to CABUNDLE_NONE */

/*
 * What the fetcher holds: the bundle new transfers use, and the previous
 * config's, kept open for transfers started under it that may still
 * connect (redirects) with its path.
 */
struct cabundles {
	struct cabundle cur;
	struct cabundle prev;
};

/* clang-format off */
#define CABUNDLES_NONE { CABUNDLE_NONE, CABUNDLE_NONE }
/* clang-format on */

/*
 * Make the bundle of libcurl's own CA file followed by extra (NULL: none)
 * into *nb. -1 with a reason in err when libcurl names no CA file or the
 * bundle cannot be made.
 */
int cabundles_make(
    struct cabundle *nb, const char *extra, char *err, size_t errlen);
/*
 * Make *nb the current bundle (it is taken: *nb becomes CABUNDLE_NONE). An
 * unchanged bundle stays as it is, and the new copy is closed.
 */
void cabundles_install(struct cabundles *, struct cabundle *nb);
void cabundles_free(struct cabundles *);

#endif /* ROBOTSD_CABUNDLE_H */
