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
 * empty: saved state is an optimization, never a reason not to start. The
 * file is read as a stream into a staging list and handed to the cache only
 * once every record and the checksum are good: all or nothing. It must be
 * a regular file (not a symbolic link, a FIFO or a device) no larger than
 * state_max_size(). A save writes a new file made with mkostemp() beside
 * it, fsyncs it, renames it over the old one and fsyncs the directory:
 * nothing already at any path is opened for writing.
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
#include "clock.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

#define STATE_MAGIC "robotsd-state\n"
#define STATE_FORMAT 1
#define STATE_NOSTR UINT32_MAX
#define STATE_FNV_INIT 0xcbf29ce484222325ULL
#define STATE_SLACK (1024 * 1024)   /* header, end and rounding */
#define STATE_MAX_STR (1024 * 1024) /* no saved string is that long */

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
	double deadline; /* clock_monotonic() */
	int late;        /* past the deadline: stop writing */
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
	if (len > 0 && !o->late && fwrite(p, 1, len, o->f) == len)
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

	if (o->late ||
	    (o->count % 64 == 0 && clock_monotonic() > o->deadline)) {
		o->late = 1;
		return;
	}
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

/* The largest state file a cache of cache_max_bytes can have written. */
unsigned long long
state_max_size(unsigned long long cache_max_bytes)
{
	return 2 * cache_max_bytes + STATE_SLACK;
}

/* fsync the directory holding path, so the rename is durable. */
static int
state_sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, rc;

	if (slash == NULL)
		dir = xstrdup(".");
	else
		dir =
		    xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Create the temporary file of a save; see state.h. */
int
state_tmp_open(const char *path, char **tmp, char **cause)
{
	int fd;

	xasprintf(tmp, "%s.tmp-XXXXXX", path);
	/* mkostemp: O_CREAT|O_EXCL, mode 0600: nothing in the way is used. */
	if ((fd = mkostemp(*tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "%s: %s", *tmp, strerror(errno));
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

/* Write, fsync and close fd; an errno value, or 0. */
static int
state_write_fd(const struct cache *c, int fd, double timeout)
{
	struct state_out o = { .sum = STATE_FNV_INIT };
	struct state_head h = state_head();
	uint8_t end = 0;
	int saved = 0;

	o.deadline = clock_monotonic() + timeout;
	if ((o.f = fdopen(fd, "wb")) == NULL) {
		saved = errno;
		close(fd);
		return saved;
	}
	state_put(&o, STATE_MAGIC, strlen(STATE_MAGIC));
	state_put(&o, &h, sizeof(h));
	cache_foreach(c, state_put_entry, &o);
	state_put(&o, &end, 1);
	fwrite(&o.sum, sizeof(o.sum), 1, o.f);
	errno = EIO; /* what ferror() means when nothing else says */
	if (o.late)
		saved = ETIMEDOUT;
	else if (ferror(o.f) || fflush(o.f) == EOF || fsync(fileno(o.f)) == -1)
		saved = errno;
	if (fclose(o.f) == EOF && saved == 0)
		saved = errno;
	return saved != 0 ? saved : -(int)o.count - 1;
}

/* Fill the temporary file and rename it over path; see state.h. */
long
state_write(const struct cache *c, int fd, const char *tmp, const char *path,
    double timeout, char **cause)
{
	char kv[LOG_KV_BUF], kv2[LOG_KV_BUF];
	int rc = state_write_fd(c, fd, timeout);

	if (rc < 0 && rename(tmp, path) == -1)
		rc = errno;
	if (rc >= 0) {
		xasprintf(cause, "%s: %s", tmp,
		    rc == ETIMEDOUT ? "took longer than the deadline, abandoned"
		                    : strerror(rc));
		unlink(tmp);
		return -1;
	}
	if (state_sync_dir(path) == -1)
		log_event(LOG_WARNING, "state_fsync_failed", "file=%s error=%s",
		    log_kvs(path, kv, sizeof(kv)),
		    log_kvs(strerror(errno), kv2, sizeof(kv2)));
	return -(long)rc - 1;
}

/* Save the cache; see state.h. */
long
state_save(
    const struct cache *c, const char *path, double timeout, char **cause)
{
	char *tmp;
	long n;
	int fd;

	if ((fd = state_tmp_open(path, &tmp, cause)) == -1)
		return -1;
	n = state_write(c, fd, tmp, path, timeout, cause);
	free(tmp);
	return n;
}

/* A file being read as a stream, with its running checksum. */
struct state_in {
	FILE *f;
	uint64_t sum;
	unsigned long long pos, size; /* bytes read; the file's size */
	unsigned long long max_image;
	const char *why; /* what was wrong, for the log */
};

/* Entries read so far, handed to the cache only when all are good. */
struct state_stage {
	struct cache_entry *e;
	int *good;
	size_t n, cap;
};

/* Read and checksum len bytes; -1 (why set) when the file ends first. */
static int
state_get(struct state_in *in, void *p, size_t len)
{
	if (len > in->size - in->pos || fread(p, 1, len, in->f) != len) {
		in->why = "cut short";
		return -1;
	}
	in->sum = state_fnv(in->sum, p, len);
	in->pos += len;
	return 0;
}

/* An optional string of a record as a new C string; -1 when bad. */
static int
state_get_str(struct state_in *in, uint32_t len, char **s)
{
	*s = NULL;
	if (len == STATE_NOSTR)
		return 0;
	if (len > STATE_MAX_STR || len > in->size - in->pos) {
		in->why = "a string longer than the file allows";
		return -1;
	}
	*s = xmalloc((size_t)len + 1);
	if (state_get(in, *s, len) == -1)
		return -1;
	(*s)[len] = '\0';
	if (strlen(*s) != len) {
		in->why = "a string holds a NUL byte";
		return -1;
	}
	return 0;
}

/* The ruleset image of a record, compiled; -1 when bad. */
static int
state_get_image(struct state_in *in, uint64_t len, struct robots **r)
{
	void *image;

	*r = NULL;
	if (len == 0)
		return 0;
	if (len > in->size - in->pos || len > in->max_image) {
		in->why = "a ruleset image longer than the file or the cache "
		          "allows";
		return -1;
	}
	image = xmalloc((size_t)len);
	if (state_get(in, image, (size_t)len) == 0 &&
	    (*r = robots_from_image(image, (size_t)len)) == NULL)
		in->why = "a ruleset image this build cannot load";
	free(image);
	return *r != NULL ? 0 : -1;
}

/* Fill e from a record's fixed part. */
static void
state_fill_entry(struct cache_entry *e, const struct state_rec *r)
{
	e->policy = (enum cache_policy)r->policy;
	e->http_status = r->http_status;
	e->fetched_at = r->fetched_at;
	e->expires_at = r->expires_at;
	e->body_bytes = r->body_bytes;
	e->truncated = r->truncated;
	e->fail_streak = r->fail_streak;
	e->fail_since = r->fail_since;
	e->next_retry = r->next_retry;
	e->stale = r->stale;
}

/* Free the strings and ruleset of an entry read from the file. */
static void
state_entry_clear(struct cache_entry *e)
{
	robots_unref(e->robots);
	free(e->origin);
	free(e->final_url);
	free(e->last_error);
}

/* Read one record into e; -1 (in->why set, e cleared) when bad. */
static int
state_get_entry(struct state_in *in, struct cache_entry *e, int *good)
{
	struct state_rec r;

	memset(e, 0, sizeof(*e));
	if (state_get(in, &r, sizeof(r)) == -1)
		return -1;
	if (r.policy <= CACHE_NONE || r.policy > CACHE_DISALLOW_ALL)
		in->why = "a policy out of range";
	else if (r.origin_len == STATE_NOSTR)
		in->why = "no origin";
	else if ((r.policy == CACHE_RULES) != (r.image_len > 0))
		in->why = "a policy and a ruleset image that disagree";
	if (in->why != NULL ||
	    state_get_str(in, r.origin_len, &e->origin) == -1 ||
	    state_get_str(in, r.final_url_len, &e->final_url) == -1 ||
	    state_get_str(in, r.last_error_len, &e->last_error) == -1 ||
	    state_get_image(in, r.image_len, &e->robots) == -1) {
		state_entry_clear(e);
		return -1;
	}
	state_fill_entry(e, &r);
	*good = r.good;
	return 0;
}

/* Free every staged entry. */
static void
state_stage_free(struct state_stage *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		state_entry_clear(&st->e[i]);
	free(st->e);
	free(st->good);
}

/* Read the header; -1 (why set) when it is not this build's. */
static int
state_get_head(struct state_in *in)
{
	struct state_head want = state_head(), got;
	char magic[sizeof(STATE_MAGIC) - 1];

	if (state_get(in, magic, sizeof(magic)) == -1 ||
	    memcmp(magic, STATE_MAGIC, sizeof(magic)) != 0) {
		in->why = "not a robotsd state file";
		return -1;
	}
	if (state_get(in, &got, sizeof(got)) == -1 ||
	    memcmp(&got, &want, sizeof(got)) != 0) {
		in->why = "written by another robotsd build or machine";
		return -1;
	}
	return 0;
}

/* Read every record and the end; -1 (why set) on the first bad one. */
static int
state_get_all(struct state_in *in, struct state_stage *st)
{
	uint64_t sum;
	uint8_t tag;

	for (;;) {
		if (state_get(in, &tag, 1) == -1)
			return -1;
		if (tag == 0)
			break;
		if (tag != 1) {
			in->why = "an unknown record tag";
			return -1;
		}
		if (st->n == st->cap) {
			st->cap = st->cap != 0 ? 2 * st->cap : 64;
			st->e = xreallocarray(st->e, st->cap, sizeof(*st->e));
			st->good =
			    xreallocarray(st->good, st->cap, sizeof(*st->good));
		}
		if (state_get_entry(in, &st->e[st->n], &st->good[st->n]) == -1)
			return -1;
		st->n++;
	}
	sum = in->sum;
	if (fread(&in->sum, sizeof(in->sum), 1, in->f) != 1)
		in->why = "cut short";
	else if (in->sum != sum)
		in->why = "a checksum that does not match";
	else if (fgetc(in->f) != EOF)
		in->why = "bytes after the end";
	return in->why != NULL ? -1 : 0;
}

/* Open path for reading: a regular file within the cap, or -1 (*cause). */
static FILE *
state_open(const char *path, unsigned long long max_size,
    unsigned long long *size, char **cause)
{
	struct stat st;
	FILE *f;
	int fd;

	/* O_NONBLOCK: a FIFO put here must not block the start. */
	fd = open(
	    path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd == -1) {
		if (errno != ENOENT)
			xasprintf(cause, "%s: %s", path,
			    errno == ELOOP
			        ? "a symbolic link, not a regular file"
			        : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1)
		xasprintf(cause, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		xasprintf(cause, "%s: not a regular file", path);
	else if ((unsigned long long)st.st_size > max_size)
		xasprintf(cause,
		    "%s: %lld bytes, more than the %llu bytes that "
		    "--cache-max-bytes allows a state file",
		    path, (long long)st.st_size, max_size);
	if (*cause != NULL) {
		close(fd);
		return NULL;
	}
	if ((f = fdopen(fd, "rb")) == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		close(fd);
	}
	*size = (unsigned long long)st.st_size;
	return f;
}

/* Load a saved cache; see state.h. */
long
state_load(struct cache *c, const char *path,
    unsigned long long cache_max_bytes, char **cause)
{
	struct state_in in = { .sum = STATE_FNV_INIT };
	struct state_stage st = { 0 };
	size_t i;

	*cause = NULL;
	in.max_image = cache_max_bytes;
	if ((in.f = state_open(path, state_max_size(cache_max_bytes), &in.size,
	         cause)) == NULL)
		return *cause != NULL ? -1 : 0;
	if (state_get_head(&in) == -1 || state_get_all(&in, &st) == -1) {
		if (in.pos <= strlen(STATE_MAGIC) + sizeof(struct state_head))
			xasprintf(cause, "%s: %s", path, in.why);
		else
			xasprintf(cause, "%s: record %zu (at byte %llu): %s",
			    path, st.n + 1, in.pos, in.why);
		fclose(in.f);
		state_stage_free(&st);
		return -1;
	}
	fclose(in.f);
	for (i = 0; i < st.n; i++)
		if (cache_restore(c, &st.e[i], st.good[i]) == 0)
			st.e[i].robots = NULL; /* the cache took it */
	state_stage_free(&st);
	return (long)st.n;
}
