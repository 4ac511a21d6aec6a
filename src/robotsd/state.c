/*
 * state.c: the state file. Layout (host byte order; the header names the
 * build's layout, so a file from another build or machine is refused):
 *
 *   header  "robotsd-state\n", then struct state_head
 *   records tag 1, struct state_rec, origin, final_url, last_error,
 *           ruleset image (robots_image())
 *   end     tag 0, FNV-1a 64 of every byte before it
 *
 * A file that fails any check is refused whole and the daemon starts
 * empty: saved state is an optimization, never a reason not to start.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "robots.h"
#include "cache.h"
#include "state.h"
#include "xmalloc.h"

#define STATE_MAGIC "robotsd-state\n"
#define STATE_FORMAT 1
#define STATE_NOSTR UINT32_MAX

struct state_head {
	uint32_t format, image_version, byte_order, rec_size;
};

struct state_rec {
	double fetched_at, expires_at, fail_since, next_retry;
	uint64_t body_bytes, image_len;
	int32_t policy, http_status;
	uint32_t fail_streak, origin_len, final_url_len, last_error_len;
	uint8_t truncated, stale, good, pad;
};

/* A file being written, with its running checksum. */
struct state_out {
	FILE *f;
	uint64_t sum;
	long count;
};

/* FNV-1a 64 over len more bytes. */
static uint64_t
state_fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The header this build writes and accepts. */
static struct state_head
state_head(void)
{
	return (struct state_head){ STATE_FORMAT, ROBOTS_IMAGE_VERSION,
		0x01020304, sizeof(struct state_rec) };
}

/* Write and checksum len bytes. */
static void
state_put(struct state_out *o, const void *p, size_t len)
{
	if (len > 0 && fwrite(p, 1, len, o->f) == len)
		o->sum = state_fnv(o->sum, p, len);
}

/* Length field of an optional string. */
static uint32_t
state_strlen(const char *s)
{
	return s != NULL ? (uint32_t)strlen(s) : STATE_NOSTR;
}

/* Write one entry (cache_foreach callback). */
static void
state_put_entry(const struct cache_entry *e, int good, void *arg)
{
	struct state_out *o = arg;
	struct state_rec r = { 0 };
	const void *image = NULL;
	uint8_t tag = 1;
	size_t ilen = 0;

	if (e->robots != NULL)
		image = robots_image(e->robots, &ilen);
	r.fetched_at = e->fetched_at;
	r.expires_at = e->expires_at;
	r.fail_since = e->fail_since;
	r.next_retry = e->next_retry;
	r.body_bytes = e->body_bytes;
	r.image_len = ilen;
	r.policy = (int32_t)e->policy;
	r.http_status = e->http_status;
	r.fail_streak = e->fail_streak;
	r.origin_len = state_strlen(e->origin);
	r.final_url_len = state_strlen(e->final_url);
	r.last_error_len = state_strlen(e->last_error);
	r.truncated = (uint8_t)e->truncated;
	r.stale = (uint8_t)e->stale;
	r.good = (uint8_t)good;
	state_put(o, &tag, 1);
	state_put(o, &r, sizeof(r));
	state_put(o, e->origin, r.origin_len);
	if (e->final_url != NULL)
		state_put(o, e->final_url, r.final_url_len);
	if (e->last_error != NULL)
		state_put(o, e->last_error, r.last_error_len);
	state_put(o, image, ilen);
	o->count++;
}

/* Save the cache; see state.h. */
long
state_save(const struct cache *c, const char *path, char **cause)
{
	struct state_out o = { .sum = 0xcbf29ce484222325ULL };
	struct state_head h = state_head();
	uint8_t end = 0;
	int fd, bad, saved = 0;
	char *tmp;

	xasprintf(&tmp, "%s.tmp", path);
	if ((fd = open(tmp,
	         O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	         0600)) == -1 ||
	    (o.f = fdopen(fd, "wb")) == NULL) {
		xasprintf(cause, "%s: %s", tmp, strerror(errno));
		if (fd != -1)
			close(fd);
		free(tmp);
		return -1;
	}
	state_put(&o, STATE_MAGIC, strlen(STATE_MAGIC));
	state_put(&o, &h, sizeof(h));
	cache_foreach(c, state_put_entry, &o);
	state_put(&o, &end, 1);
	fwrite(&o.sum, sizeof(o.sum), 1, o.f);
	errno = EIO; /* what ferror() means when nothing else says */
	bad = ferror(o.f) || fflush(o.f) == EOF || fsync(fileno(o.f)) == -1;
	if (bad)
		saved = errno;
	if (fclose(o.f) == EOF && !bad) {
		bad = 1;
		saved = errno;
	}
	if (!bad && rename(tmp, path) == -1) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		xasprintf(cause, "%s: %s", tmp, strerror(saved));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return o.count;
}

/* A file being read: the bytes left. */
struct state_in {
	const unsigned char *p;
	size_t left;
};

/* Take len bytes; NULL when the file is shorter. */
static const void *
state_take(struct state_in *in, size_t len)
{
	const void *p = in->p;

	if (len > in->left)
		return NULL;
	in->p += len;
	in->left -= len;
	return p;
}

/* An optional string of a record as a new C string; -1 when cut short. */
static int
state_take_str(struct state_in *in, uint32_t len, char **s)
{
	const char *p;

	*s = NULL;
	if (len == STATE_NOSTR)
		return 0;
	if ((p = state_take(in, len)) == NULL || memchr(p, '\0', len) != NULL)
		return -1;
	*s = xstrndup(p, len);
	return 0;
}

/* Restore one record; -1 when it is malformed. */
static int
state_take_entry(struct cache *c, struct state_in *in)
{
	struct cache_entry e = { 0 };
	struct state_rec r;
	const void *p, *image;
	int rc = -1;

	if ((p = state_take(in, sizeof(r))) == NULL)
		return -1;
	memcpy(&r, p, sizeof(r));
	if (r.policy <= CACHE_NONE || r.policy > CACHE_DISALLOW_ALL ||
	    r.origin_len == STATE_NOSTR ||
	    state_take_str(in, r.origin_len, &e.origin) == -1 ||
	    state_take_str(in, r.final_url_len, &e.final_url) == -1 ||
	    state_take_str(in, r.last_error_len, &e.last_error) == -1 ||
	    (image = state_take(in, r.image_len)) == NULL)
		goto out;
	if ((r.policy == CACHE_RULES) != (r.image_len > 0) ||
	    (r.image_len > 0 &&
	        (e.robots = robots_from_image(image, r.image_len)) == NULL))
		goto out;
	e.policy = (enum cache_policy)r.policy;
	e.http_status = r.http_status;
	e.fetched_at = r.fetched_at;
	e.expires_at = r.expires_at;
	e.body_bytes = r.body_bytes;
	e.truncated = r.truncated;
	e.fail_streak = r.fail_streak;
	e.fail_since = r.fail_since;
	e.next_retry = r.next_retry;
	e.stale = r.stale;
	if (cache_restore(c, &e, r.good) == 0)
		e.robots = NULL; /* the cache took it */
	rc = 0;
out:
	robots_unref(e.robots);
	free(e.origin);
	free(e.final_url);
	free(e.last_error);
	return rc;
}

/* Read a whole file; NULL with errno set. */
static unsigned char *
state_read(const char *path, size_t *len)
{
	unsigned char *buf;
	struct stat st;
	FILE *f;

	if ((f = fopen(path, "rbe")) == NULL)
		return NULL;
	if (fstat(fileno(f), &st) == -1 || st.st_size < 0) {
		fclose(f);
		return NULL;
	}
	*len = (size_t)st.st_size;
	buf = xmalloc(*len + 1);
	if (fread(buf, 1, *len, f) != *len) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	return buf;
}

/* Check the magic, the header and the checksum; the records, or -1. */
static int
state_verify(unsigned char *buf, size_t len, struct state_in *in)
{
	struct state_head want = state_head(), got;
	size_t ml = strlen(STATE_MAGIC), hl = sizeof(got);
	uint64_t sum;

	if (len < ml + hl + 1 + sizeof(sum) || memcmp(buf, STATE_MAGIC, ml))
		return -1;
	memcpy(&got, buf + ml, hl);
	memcpy(&sum, buf + len - sizeof(sum), sizeof(sum));
	if (memcmp(&got, &want, hl) != 0 || buf[len - sizeof(sum) - 1] != 0 ||
	    state_fnv(0xcbf29ce484222325ULL, buf, len - sizeof(sum)) != sum)
		return -1;
	in->p = buf + ml + hl;
	in->left = len - ml - hl - 1 - sizeof(sum);
	return 0;
}

/* Load a saved cache; see state.h. */
long
state_load(struct cache *c, const char *path, char **cause)
{
	struct state_in in;
	const uint8_t *tag;
	unsigned char *buf;
	long n = 0;
	size_t len;

	if ((buf = state_read(path, &len)) == NULL) {
		if (errno == ENOENT)
			return 0;
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (state_verify(buf, len, &in) == -1) {
		xasprintf(cause,
		    "%s: not a state file of this robotsd build, "
		    "or damaged",
		    path);
		free(buf);
		return -1;
	}
	while ((tag = state_take(&in, 1)) != NULL && *tag == 1 &&
	       state_take_entry(c, &in) == 0)
		n++;
	free(buf);
	if (tag != NULL || in.left != 0) {
		xasprintf(cause, "%s: a malformed record after %ld", path, n);
		return -1;
	}
	return n;
}
