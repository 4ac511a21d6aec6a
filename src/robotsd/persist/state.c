/*
 * state.c: the state file. Layout (host byte order; the header names the
 * build's layout, so a file from another build or machine is refused):
 *
 *   header  "robotsd-state\n", then struct state_head
 *   records tag 1 (robots.txt's cache) or 2 (tdmrep.json's), struct
 *           state_rec, origin, final_url, last_error, etag,
 *           last_modified, the doc (tag 1: the ruleset image,
 *           robots_image(); tag 2: the body it was compiled from, struct
 *           cache_kind's source(), image_len bytes, body_bytes of them
 *           with rules and none without), the count of its versions
 *           (uint32_t), that many struct state_hist
 *   end     tag 0, the checksum of every byte before it (state_sum_end)
 *
 * Format 5 added the records of tag 2, after those of tag 1: a tdmrep.json
 * is compiled again from its body when it is loaded (its doc keeps the
 * body for that), whose version must be the record's, else that record
 * alone is left out; without a cache for them (--tdmrep off) they are
 * read, checked and passed over. A format 4 file, otherwise the same,
 * still loads; a build before format 5 refuses a file of it whole, as of
 * another build, and starts empty. Format 5's versions keep their
 * CACHE_VERSION_* flags in the byte format 4 wrote as 0 (a tdmrep.json
 * version that was invalid stays so in history).
 *
 * Format 4 added the versions (the history op's, newest first, the
 * entry's own first; none when the entry is its only version), bounded by
 * --history-depth when loaded. A format 3 file, otherwise the same, still
 * loads: each entry is then its only version.
 *
 * Format 3 added the version (its id and times) and the validators to
 * each record. The last byte of format 2's fixed part, once padding
 * written as 0, holds the cause of a failing origin (enum fetch_cause):
 * a file written before it reads as "no cause kept", which the cache
 * turns into what the HTTP status says (cache_restore()), and a build
 * before it skips the byte. A format 2 file (struct state_rec2: no version, no
 * validators; ruleset images of version 3, 4 or this build's) still loads: its
 * entries have no version ("version":null) and are due for a refresh at once,
 * so the first check of each fetches it again while answering from the loaded
 * copy.
 *
 * A file that fails any check is refused whole and the daemon starts
 * empty: saved state is an optimization, never a reason not to start.
 * Only a record whose frame is right but whose ruleset image fails its
 * deep check (robots_image_check.c) or whose times are not times is
 * left out alone, logged: the file may have been crafted, and one origin
 * is not worth the others. The
 * file is read as a stream, each record restored into the cache as it
 * comes; a bad record or checksum removes all of them again: all or
 * nothing. It must be
 * a regular file (not a symbolic link, a FIFO or a device) no larger than
 * state_max_size(). A save writes a new file made with mkostemp() beside
 * it, fsyncs it, renames it over the old one and fsyncs the directory:
 * nothing already at any path is opened for writing.
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "robots.h"
#include "wire/buf.h"
#include "cache/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "persist/state.h"
#include "base/xmalloc.h"

#define STATE_MAGIC "robotsd-state\n"
#define STATE_FORMAT 5
#define STATE_FORMAT_4 4 /* before tdmrep.json's records: still read */
#define STATE_FORMAT_3 3 /* before the history: still read */
#define STATE_FORMAT_2 2 /* before versions and validators: still read */
#define STATE_IMAGE_3 3  /* ruleset images before usage preferences */
#define STATE_IMAGE_4 4  /* before ai-use and the author warnings */
#define STATE_TAG_END 0
#define STATE_TAG_ROBOTS 1 /* a record of robots.txt's cache */
#define STATE_TAG_TDM 2    /* of tdmrep.json's (format 5) */
#define STATE_NOSTR UINT32_MAX
#define STATE_SUM_INIT 0xcbf29ce484222325ULL
#define STATE_SLACK (1024 * 1024)   /* header, end and rounding */
#define STATE_MAX_STR (1024 * 1024) /* no saved string is that long */
#define STATE_STRS 5   /* origin, final URL, last error, ETag, Last-Modified */
#define STATE_STRS_2 3 /* format 2: the first three */
#define STATE_IOBUF (1024 * 1024) /* stdio's own is a 4 KiB page */
/* The latest time a record may hold: 9999-12-31T23:59:59Z. */
#define STATE_MAX_TIME 253402300799.0

struct state_head {
	uint32_t format, image_version, byte_order, rec_size;
};

/* A record of format 2; format 3's begins with the same fields. */
struct state_rec2 {
	double fetched_at, expires_at, fail_since, next_retry;
	int32_t policy, http_status;
	uint32_t body_bytes, image_len;
	uint32_t fail_streak, origin_len, final_url_len, last_error_len;
	uint8_t truncated, stale, good;
	uint8_t cause; /* enum fetch_cause; 0 in files written before it */
};

struct state_rec {
	struct state_rec2 v2;
	double version_since, validated_at;
	char version[VERSION_HEX]; /* all zero: none */
	uint32_t etag_len, last_modified_len;
};

/*
 * One of an entry's versions (struct cache_version): times in whole clock
 * seconds, as the cache keeps them. 28 bytes, no padding.
 */
struct state_hist {
	char version[VERSION_HEX];
	uint32_t first_seen, last_seen;
	int16_t http_status;
	uint8_t policy, spare; /* enum cache_policy; CACHE_VERSION_* flags */
};
_Static_assert(sizeof(struct state_hist) == 28, "state_hist has padding");

/*
 * The checksum: the bytes as 64-bit words (host order, the last one
 * zero-padded), each mixed in by a multiply and a shift, then the length.
 * A word at a time: the byte-wise FNV-1a this replaces took most of the
 * time of a save or a load.
 */
struct state_sum {
	uint64_t h;
	unsigned long long len;
	unsigned char tail[8]; /* bytes not yet a whole word */
	size_t ntail;
};

/* A file being written, with its running checksum. */
struct state_out {
	FILE *f;
	struct cache_version hist[CACHE_MAX_HISTORY]; /* an entry's */
	char *iobuf;
	struct state_sum sum;
	uint8_t tag; /* of the cache being written */
	/* Its kind's source() (tag 2), or NULL: ruleset images (tag 1). */
	const void *(*source)(const void *doc, size_t *len);
	long count;      /* records written */
	long ntdm;       /* of them of tag 2 */
	double deadline; /* clock_monotonic() */
	int late;        /* past the deadline: stop writing */
	int err;         /* errno of the first failed write (ENOSPC...) */
};

/* Mix one word into h: a bijection of h, so any one changed word shows. */
static uint64_t
state_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* Add len more bytes to the checksum. */
static void
state_sum_add(struct state_sum *s, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;
	size_t k;

	s->len += len;
	if (s->ntail > 0) {
		k = 8 - s->ntail < len ? 8 - s->ntail : len;
		memcpy(s->tail + s->ntail, b, k);
		s->ntail += k;
		b += k;
		len -= k;
		if (s->ntail < 8)
			return;
		memcpy(&w, s->tail, 8);
		s->h = state_mix(s->h, w);
		s->ntail = 0;
	}
	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		s->h = state_mix(s->h, w);
	}
	memcpy(s->tail, b, len);
	s->ntail = len;
}

/* The checksum of every byte added. */
static uint64_t
state_sum_end(const struct state_sum *s)
{
	uint64_t w = 0;

	memcpy(&w, s->tail, s->ntail);
	return state_mix(state_mix(s->h, w), s->len);
}

/* The checksum of len bytes; see state.h. */
uint64_t
state_checksum(const void *p, size_t len)
{
	struct state_sum s = { .h = STATE_SUM_INIT };

	state_sum_add(&s, p, len);
	return state_sum_end(&s);
}

/* The header this build writes and accepts. */
static struct state_head
state_head(void)
{
	return (struct state_head){ STATE_FORMAT, ROBOTS_IMAGE_VERSION,
		0x01020304, sizeof(struct state_rec) };
}

/* Give f a large buffer (freed by the caller after fclose): fewer calls. */
static char *
state_iobuf(FILE *f)
{
	char *buf = xmalloc(STATE_IOBUF);

	setvbuf(f, buf, _IOFBF, STATE_IOBUF);
	return buf;
}

/* Write and checksum len bytes. */
static void
state_put(struct state_out *o, const void *p, size_t len)
{
	if (len == 0 || o->late)
		return;
	if (fwrite(p, 1, len, o->f) == len)
		state_sum_add(&o->sum, p, len);
	else if (o->err == 0)
		o->err = errno != 0 ? errno : EIO;
}

/* Length field of an optional string. */
static uint32_t
state_strlen(const char *s)
{
	return s != NULL ? (uint32_t)strlen(s) : STATE_NOSTR;
}

/* Clock seconds as the history keeps them (cache_history.c). */
static uint32_t
state_secs(double t)
{
	return t <= 0 ? 0 : t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

/* Write an entry's versions: none when it is its only one. */
static void
state_put_history(struct state_out *o, const struct cache_entry *e)
{
	uint32_t n = (uint32_t)cache_history(e, o->hist, CACHE_MAX_HISTORY);
	struct state_hist h;
	uint32_t i;

	if (n < 2)
		n = 0;
	state_put(o, &n, sizeof(n));
	for (i = 0; i < n; i++) {
		memcpy(h.version, o->hist[i].version, VERSION_HEX);
		h.first_seen = state_secs(o->hist[i].first_seen);
		h.last_seen = state_secs(o->hist[i].last_seen);
		h.http_status = (int16_t)o->hist[i].http_status;
		h.policy = (uint8_t)o->hist[i].policy;
		h.spare = (uint8_t)o->hist[i].flags; /* CACHE_VERSION_* */
		state_put(o, &h, sizeof(h));
	}
}

/* Write one entry (cache_foreach callback). */
static void
state_put_entry(const struct cache_entry *e, int good, void *arg)
{
	struct state_out *o = arg;
	struct state_rec r = { 0 };
	const char *etag = cache_entry_etag(e);
	const char *lm = cache_entry_last_modified(e);
	const void *image = NULL;
	size_t ilen = 0;

	if (o->late ||
	    (o->count % 64 == 0 && clock_monotonic() > o->deadline)) {
		o->late = 1;
		return;
	}
	if (e->doc != NULL)
		image = o->source != NULL ? o->source(e->doc, &ilen)
		                          : robots_image(e->robots, &ilen);
	r.v2.fetched_at = e->fetched_at;
	r.v2.expires_at = e->expires_at;
	r.v2.fail_since = e->fail_since;
	r.v2.next_retry = e->next_retry;
	r.v2.body_bytes = e->body_bytes;
	r.v2.image_len = (uint32_t)ilen;
	r.v2.policy = (int32_t)e->policy;
	r.v2.http_status = e->http_status;
	r.v2.fail_streak = e->fail_streak;
	r.v2.origin_len = state_strlen(e->origin);
	r.v2.final_url_len = state_strlen(e->final_url);
	r.v2.last_error_len = state_strlen(e->last_error);
	r.v2.truncated = (uint8_t)e->truncated;
	r.v2.stale = (uint8_t)e->stale;
	r.v2.good = (uint8_t)good;
	r.v2.cause = e->fail_streak > 0 ? e->cause : CAUSE_NONE;
	r.version_since = e->version_since;
	r.validated_at = e->validated_at;
	if (e->version[0] != '\0')
		memcpy(r.version, e->version, VERSION_HEX);
	r.etag_len = state_strlen(etag);
	r.last_modified_len = state_strlen(lm);
	state_put(o, &o->tag, 1);
	state_put(o, &r, sizeof(r));
	state_put(o, e->origin, r.v2.origin_len);
	if (e->final_url != NULL)
		state_put(o, e->final_url, r.v2.final_url_len);
	if (e->last_error != NULL)
		state_put(o, e->last_error, r.v2.last_error_len);
	if (etag != NULL)
		state_put(o, etag, r.etag_len);
	if (lm != NULL)
		state_put(o, lm, r.last_modified_len);
	state_put(o, image, ilen);
	state_put_history(o, e);
	o->count++;
	o->ntdm += o->tag == STATE_TAG_TDM;
}

/* Write the records of c, of tag; a kind without a source() has none. */
static void
state_put_cache(struct state_out *o, const struct cache *c, uint8_t tag)
{
	o->tag = tag;
	o->source = cache_kind(c)->source;
	if (tag == STATE_TAG_ROBOTS || o->source != NULL)
		cache_foreach(c, state_put_entry, o);
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

/* Whether name is one that state_tmp_open() gives base's saves. */
static int
state_is_tmp_name(const char *name, const char *base)
{
	size_t n = strlen(base), i;

	if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp-", 5) != 0)
		return 0;
	name += n + 5;
	for (i = 0; i < 6; i++) /* mkostemp's letters and digits */
		if (!isalnum((unsigned char)name[i]))
			return 0;
	return name[6] == '\0';
}

/* Remove what interrupted saves left; see state.h. */
int
state_tmp_sweep(const char *path, void (*removed)(const char *))
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *full;
	const char *base = slash != NULL ? slash + 1 : path;
	const char *where = slash != NULL ? dir : ".";
	struct dirent *de;
	struct stat sb;
	int n = 0, dfd;
	DIR *d;

	if (slash == dir)
		where = "/";
	if (slash != NULL)
		*slash = '\0';
	if ((dfd = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		free(dir);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (!state_is_tmp_name(de->d_name, base) ||
		    fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0) {
			n++;
			if (removed != NULL) {
				xasprintf(&full, "%s/%s", where, de->d_name);
				removed(full);
				free(full);
			}
		}
	}
	closedir(d);
	free(dir);
	return n;
}

/* Write, fsync and close fd; an errno value, or 0 with *n set. */
static int
state_write_fd(const struct state_caches *cs, int fd, double timeout,
    struct state_counts *n)
{
	struct state_out o = { .sum = { .h = STATE_SUM_INIT } };
	struct state_head h = state_head();
	uint64_t sum;
	uint8_t end = 0;
	int saved = 0;

	o.deadline = clock_monotonic() + timeout;
	if ((o.f = fdopen(fd, "wb")) == NULL) {
		saved = errno;
		close(fd);
		return saved;
	}
	o.iobuf = state_iobuf(o.f);
	state_put(&o, STATE_MAGIC, strlen(STATE_MAGIC));
	state_put(&o, &h, sizeof(h));
	state_put_cache(&o, cs->robots, STATE_TAG_ROBOTS);
	if (cs->tdm != NULL)
		state_put_cache(&o, cs->tdm, STATE_TAG_TDM);
	state_put(&o, &end, 1);
	sum = state_sum_end(&o.sum);
	if (fwrite(&sum, sizeof(sum), 1, o.f) != 1 && o.err == 0)
		o.err = errno;
	errno = EIO; /* what ferror() means when nothing else says */
	if (o.late)
		saved = ETIMEDOUT;
	else if (o.err != 0) /* the write's own reason: a full disk says so */
		saved = o.err;
	else if (ferror(o.f) || fflush(o.f) == EOF || fsync(fileno(o.f)) == -1)
		saved = errno;
	if (fclose(o.f) == EOF && saved == 0)
		saved = errno;
	free(o.iobuf);
	*n = (struct state_counts){ o.count - o.ntdm, o.ntdm, 0 };
	return saved;
}

/* Fill the temporary file and rename it over path; see state.h. */
long
state_write(const struct state_caches *cs, int fd, const char *tmp,
    const char *path, double timeout, struct state_counts *n, char **cause)
{
	char kv[LOG_KV_BUF], kv2[LOG_KV_BUF];
	struct state_counts got;
	int rc = state_write_fd(cs, fd, timeout, &got);

	if (rc == 0 && rename(tmp, path) == -1)
		rc = errno;
	if (rc != 0) {
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
	if (n != NULL)
		*n = got;
	return got.robots + got.tdm;
}

/* Save the caches; see state.h. */
long
state_save(const struct state_caches *cs, const char *path, double timeout,
    struct state_counts *n, char **cause)
{
	char *tmp;
	long rc;
	int fd;

	if ((fd = state_tmp_open(path, &tmp, cause)) == -1)
		return -1;
	rc = state_write(cs, fd, tmp, path, timeout, n, cause);
	free(tmp);
	return rc;
}

/* A file being read as a stream, with its running checksum. */
struct state_in {
	FILE *f;
	struct state_sum sum;
	unsigned long long pos, size; /* bytes read; the file's size */
	unsigned long long max_image;
	const char *why;  /* what was wrong, for the log */
	const char *drop; /* what was wrong with the record read: it is left */
	const char *path;
	const struct state_caches *cs;
	char *iobuf;
	struct buf str;         /* the strings of the record being read */
	size_t records;         /* good records read */
	uint32_t format;        /* of the file: STATE_FORMAT, _4, _3 or _2 */
	uint32_t image_version; /* of its ruleset images */
	uint8_t tag;            /* of the record being read */
	/* Of each tag (1, 2): entries its cache took, records kept. */
	size_t restored[2];
	long kept[2];
	/* The record's versions (format 4). */
	struct cache_version hist[CACHE_MAX_HISTORY];
	size_t nhist;
	size_t dropped; /* records left out (in->drop) */
	long skipped;   /* records of tag 2 without a cache for them */
};

/* Read and checksum len bytes; -1 (why set) when the file ends first. */
static int
state_get(struct state_in *in, void *p, size_t len)
{
	if (len > in->size - in->pos || fread(p, 1, len, in->f) != len) {
		in->why = "cut short";
		return -1;
	}
	state_sum_add(&in->sum, p, len);
	in->pos += len;
	return 0;
}

/*
 * Room in in->str for a record's strings (lens[], STATE_NOSTR: none), made
 * at once: the strings are read in place and handed out as pointers, which
 * growing the buffer string by string would move.
 */
static int
state_str_room(struct state_in *in, const uint32_t *lens, size_t n)
{
	size_t need = 0, i;

	for (i = 0; i < n; i++) {
		if (lens[i] == STATE_NOSTR)
			continue;
		if (lens[i] > STATE_MAX_STR || lens[i] > in->size - in->pos) {
			in->why = "a string longer than the file allows";
			return -1;
		}
		need += (size_t)lens[i] + 1;
	}
	buf_reset(&in->str);
	if (need > 0 && buf_reserve(&in->str, need) < need)
		fatalx("out of memory reading %zu bytes of strings", need);
	in->str.len = need; /* state_get_strs() fills it in place */
	return 0;
}

/*
 * A record's strings into in->str as C strings (*s[i] NULL for
 * STATE_NOSTR); -1 when bad. Valid until the next record.
 */
static int
state_get_strs(struct state_in *in, const uint32_t *lens, char **s[], size_t n)
{
	char *p;
	size_t i;

	if (state_str_room(in, lens, n) == -1)
		return -1;
	for (p = in->str.p, i = 0; i < n; i++) {
		*s[i] = NULL;
		if (lens[i] == STATE_NOSTR)
			continue;
		if (state_get(in, p, lens[i]) == -1)
			return -1;
		p[lens[i]] = '\0';
		if (strlen(p) != lens[i]) {
			in->why = "a string holds a NUL byte";
			return -1;
		}
		*s[i] = p;
		p += lens[i] + 1;
	}
	return 0;
}

/* A record's len bytes of doc into a new block *p (NULL: none); -1: bad. */
static int
state_get_bytes(struct state_in *in, uint32_t len, void **p)
{
	*p = NULL;
	if (len == 0)
		return 0;
	if (len > in->size - in->pos || len > in->max_image) {
		in->why =
		    in->tag == STATE_TAG_TDM
		        ? "a body longer than the file or the cache allows"
		        : "a ruleset image longer than the file or the "
		          "cache allows";
		return -1;
	}
	*p = xmalloc(len);
	if (state_get(in, *p, len) == -1) {
		free(*p);
		*p = NULL;
		return -1;
	}
	return 0;
}

/* The ruleset image of a record of tag 1, compiled; -1 when bad. */
static int
state_get_image(struct state_in *in, uint32_t len, void **doc)
{
	void *image;

	*doc = NULL;
	if (state_get_bytes(in, len, &image) == -1)
		return -1;
	if (image == NULL)
		return 0;
	/* Framed right, but not a ruleset: that origin alone is left out. */
	if ((*doc = robots_adopt_image_version(
	         image, len, in->image_version)) == NULL)
		in->drop = "a ruleset image that fails its checks";
	return 0;
}

/*
 * The body of a record of tag 2, compiled by c's kind (c NULL: read and
 * passed over; *doc NULL); -1 when bad. A body whose version is not the
 * record's is not the file that answered: that origin alone is left out.
 */
static int
state_get_body(
    struct state_in *in, struct cache *c, const struct state_rec *r, void **doc)
{
	uint32_t len = r->v2.image_len;
	char ver[VERSION_HEX + 1];
	void *body;

	*doc = NULL;
	if (state_get_bytes(in, len, &body) == -1)
		return -1;
	if (c != NULL && r->v2.policy == CACHE_RULES) {
		version_of_body(body != NULL ? body : "", len, ver);
		if (r->version[0] != '\0' &&
		    memcmp(ver, r->version, VERSION_HEX) != 0)
			in->drop = "a tdmrep.json body that is not its version";
		else if ((*doc = cache_kind(c)->compile(
		              body != NULL ? body : "", len)) == NULL)
			in->drop = "out of memory";
	}
	free(body);
	return 0;
}

/* Drop the doc of the record being read (state_get_image(), _body()). */
static void
state_unref(const struct state_in *in, void *doc)
{
	if (doc == NULL)
		return;
	if (in->tag == STATE_TAG_TDM)
		cache_kind(in->cs->tdm)->unref(doc);
	else
		robots_unref(doc);
}

/* Whether the VERSION_HEX bytes at v are a version id: lower-case hex. */
static int
state_is_version(const char *v)
{
	size_t i;

	for (i = 0; i < VERSION_HEX; i++)
		if (!((v[i] >= '0' && v[i] <= '9') ||
		        (v[i] >= 'a' && v[i] <= 'f')))
			return 0;
	return 1;
}

/* One saved version into v; -1 (why set) when bad. */
static int
state_get_version(struct state_in *in, struct cache_version *v)
{
	struct state_hist h;

	if (state_get(in, &h, sizeof(h)) == -1)
		return -1;
	if (!state_is_version(h.version))
		in->why = "a version that is not 16 hex digits";
	else if (h.policy <= CACHE_NONE || h.policy > CACHE_DISALLOW_ALL)
		in->why = "a policy out of range";
	else if (h.http_status < 0 || h.http_status > 999)
		in->why = "an HTTP status out of range";
	else if (h.last_seen < h.first_seen)
		in->why = "a version last seen before it was first seen";
	if (in->why != NULL)
		return -1;
	memcpy(v->version, h.version, VERSION_HEX);
	v->version[VERSION_HEX] = '\0';
	v->first_seen = h.first_seen;
	v->last_seen = h.last_seen;
	v->http_status = h.http_status;
	v->policy = (enum cache_policy)h.policy;
	/* CACHE_VERSION_* (0 in files before format 5); unknown ones dropped */
	v->flags = h.spare & CACHE_VERSION_INVALID;
	return 0;
}

/* A record's versions into in->hist (none before format 4); -1 when bad. */
static int
state_get_history(struct state_in *in)
{
	uint32_t n;

	in->nhist = 0;
	if (in->format < STATE_FORMAT_4)
		return 0;
	if (state_get(in, &n, sizeof(n)) == -1)
		return -1;
	if (n == 1 || n > CACHE_MAX_HISTORY) {
		in->why = "a count of versions out of range";
		return -1;
	}
	for (; in->nhist < n; in->nhist++)
		if (state_get_version(in, &in->hist[in->nhist]) == -1)
			return -1;
	return 0;
}

/* Fill e from a record's fixed part. */
static void
state_fill_entry(struct cache_entry *e, const struct state_rec2 *r)
{
	e->policy = (uint8_t)r->policy;
	e->http_status = (int16_t)r->http_status;
	e->fetched_at = r->fetched_at;
	e->expires_at = r->expires_at;
	e->body_bytes = r->body_bytes;
	e->truncated = r->truncated;
	e->fail_streak = r->fail_streak;
	e->fail_since = r->fail_since;
	e->next_retry = r->next_retry;
	e->stale = r->stale;
	/* A cause this build does not know (a later one's): as none kept. */
	e->cause = r->fail_streak > 0 && r->cause < CAUSE_COUNT ? r->cause
	                                                        : CAUSE_NONE;
}

/*
 * The version of a format 3 record into e, or none with the entry due now
 * (format 2, or a version that is not 16 hex digits); -1 when bad.
 */
static int
state_fill_version(
    struct state_in *in, struct cache_entry *e, const struct state_rec *r)
{
	if (in->format == STATE_FORMAT_2 || r->version[0] == '\0') {
		e->expires_at = 0; /* refreshed at the first check */
		return 0;
	}
	if (!state_is_version(r->version)) {
		in->why = "a version that is not 16 hex digits";
		return -1;
	}
	memcpy(e->version, r->version, VERSION_HEX);
	e->version[VERSION_HEX] = '\0';
	e->version_since = r->version_since;
	e->validated_at = r->validated_at;
	return 0;
}

/*
 * A record's validators as the entry's block (see struct cache_entry);
 * NULL for none. The cache copies it.
 */
static char *
state_validators(const char *etag, const char *lm)
{
	char *v;
	size_t a = etag != NULL ? strlen(etag) : 0;
	size_t b = lm != NULL ? strlen(lm) : 0;

	if (etag == NULL && lm == NULL)
		return NULL;
	v = xmalloc(a + b + 2);
	memcpy(v, etag != NULL ? etag : "", a + 1);
	memcpy(v + a + 1, lm != NULL ? lm : "", b + 1);
	return v;
}

/*
 * What is wrong with a record's fixed part such that the file is refused
 * whole, or NULL.
 */
static const char *
state_rec_why(const struct state_rec2 *r, uint8_t tag)
{
	if (r->policy <= CACHE_NONE || r->policy > CACHE_DISALLOW_ALL)
		return "a policy out of range";
	if (r->origin_len == STATE_NOSTR)
		return "no origin";
	if (tag == STATE_TAG_TDM) {
		if (r->image_len > ROBOTS_MAX_BODY)
			return "a body longer than a fetch keeps";
		if (r->image_len !=
		    (r->policy == CACHE_RULES ? r->body_bytes : 0))
			return "a policy and a body that disagree";
	} else if ((r->policy == CACHE_RULES) != (r->image_len > 0))
		return "a policy and a ruleset image that disagree";
	if (r->http_status < 0 || r->http_status > 999)
		return "an HTTP status out of range";
	return NULL;
}

/* Whether t is a time a record may hold: 0 (none) to STATE_MAX_TIME. */
static int
state_time_ok(double t)
{
	return t >= 0 && t <= STATE_MAX_TIME; /* NaN and infinities fail */
}

/* Whether every time of a record is one (format 2 has four). */
static int
state_times_ok(const struct state_in *in, const struct state_rec *r)
{
	return state_time_ok(r->v2.fetched_at) &&
	       state_time_ok(r->v2.expires_at) &&
	       state_time_ok(r->v2.fail_since) &&
	       state_time_ok(r->v2.next_retry) &&
	       (in->format == STATE_FORMAT_2 ||
	           (state_time_ok(r->version_since) &&
	               state_time_ok(r->validated_at)));
}

/* Leave out the record of origin just read (in->drop says why): logged. */
static void
state_drop(struct state_in *in, const char *origin, void *doc)
{
	char kv[LOG_KV_BUF], kv2[LOG_KV_BUF], kv3[LOG_KV_BUF];

	log_event(LOG_WARNING, "state_entry_dropped",
	    "file=%s record=%zu origin=%s%s reason=%s",
	    log_kvs(in->path, kv, sizeof(kv)), in->records + 1,
	    log_kvs(origin, kv2, sizeof(kv2)),
	    in->tag == STATE_TAG_TDM ? " resource=tdmrep" : "",
	    log_kvs(in->drop, kv3, sizeof(kv3)));
	state_unref(in, doc);
	in->drop = NULL;
	in->dropped++;
}

/*
 * A record's fixed part, checked, and its strings (the entry's origin,
 * final URL and last error, *etag and *lm); -1 (in->why set) when bad.
 */
static int
state_get_fixed(struct state_in *in, struct state_rec *r, struct cache_entry *e,
    char **etag, char **lm)
{
	uint32_t lens[STATE_STRS];
	char **strs[STATE_STRS] = { &e->origin, &e->final_url, &e->last_error,
		etag, lm };
	size_t nstrs = in->format == STATE_FORMAT_2 ? STATE_STRS_2 : STATE_STRS;

	if (state_get(in, r,
	        in->format == STATE_FORMAT_2 ? sizeof(r->v2) : sizeof(*r)) ==
	    -1)
		return -1;
	in->why = state_rec_why(&r->v2, in->tag);
	lens[0] = r->v2.origin_len;
	lens[1] = r->v2.final_url_len;
	lens[2] = r->v2.last_error_len;
	lens[3] = r->etag_len;
	lens[4] = r->last_modified_len;
	if (in->why != NULL || state_get_strs(in, lens, strs, nstrs) == -1)
		return -1;
	if (nstrs == STATE_STRS_2)
		*etag = *lm = NULL;
	return 0;
}

/*
 * Restore the entry e of the record r just read, doc and all, into c;
 * -1 (in->why set) when the record is bad.
 */
static int
state_restore(struct state_in *in, struct cache *c, struct cache_entry *e,
    const struct state_rec *r, const char *etag, const char *lm)
{
	int rc;

	state_fill_entry(e, &r->v2);
	if (state_fill_version(in, e, r) == -1) {
		state_unref(in, e->doc);
		return -1;
	}
	e->validators = state_validators(etag, lm);
	rc = cache_restore(c, e, r->v2.good);
	free(e->validators);
	in->kept[in->tag - 1]++;
	if (rc == 0) {
		in->restored[in->tag - 1]++;
		if (in->nhist > 0) /* else the entry is its only version */
			(void)cache_restore_history(
			    c, e->origin, in->hist, in->nhist);
	} else
		state_unref(in, e->doc);
	return 0;
}

/*
 * Read one record of in->tag and restore it into its cache; -1 (in->why
 * set) when the file is bad. A record framed right whose doc or times are
 * bad is left out (state_drop()), one without a cache passed over: 0.
 */
static int
state_get_entry(struct state_in *in)
{
	struct cache *c =
	    in->tag == STATE_TAG_TDM ? in->cs->tdm : in->cs->robots;
	struct cache_entry e = { 0 };
	struct state_rec r = { 0 };
	char *etag, *lm;

	if (state_get_fixed(in, &r, &e, &etag, &lm) == -1)
		return -1;
	if (c != NULL)
		cache_prefetch(c, e.origin); /* while the doc is read */
	if ((in->tag == STATE_TAG_TDM
	            ? state_get_body(in, c, &r, &e.doc)
	            : state_get_image(in, r.v2.image_len, &e.doc)) == -1)
		return -1;
	if (state_get_history(in) == -1) { /* read even for a record left */
		state_unref(in, e.doc);
		return -1;
	}
	if (c == NULL) {
		in->skipped++;
		return 0;
	}
	if (in->drop == NULL && !state_times_ok(in, &r))
		in->drop = "a time that is not one (NaN, infinite, negative "
		           "or after the year 9999)";
	if (in->drop != NULL) {
		state_drop(in, e.origin, e.doc);
		return 0;
	}
	return state_restore(in, c, &e, &r, etag, lm);
}

/*
 * Whether a file's header is one this build reads: its own, format 3's
 * (the same records without their versions) or format 2's (the records
 * before versions), with ruleset images of version 3 (before usage
 * preferences), 4 (before ai-use) or this build's, which
 * robots_adopt_image_version() reads.
 */
static int
state_head_ok(const struct state_head *got, const struct state_head *want)
{
	int images = got->image_version == STATE_IMAGE_3 ||
	             got->image_version == STATE_IMAGE_4 ||
	             got->image_version == want->image_version;

	if (got->byte_order != want->byte_order || !images)
		return 0;
	if (got->format == STATE_FORMAT_2)
		return got->rec_size == sizeof(struct state_rec2);
	return (got->format == want->format || got->format == STATE_FORMAT_4 ||
	           got->format == STATE_FORMAT_3) &&
	       got->rec_size == want->rec_size;
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
	    !state_head_ok(&got, &want)) {
		in->why = "written by another robotsd build or machine";
		return -1;
	}
	in->format = got.format;
	in->image_version = got.image_version;
	return 0;
}

/*
 * Read every record into its cache and the end; -1 (why set) on the first
 * bad one.
 */
static int
state_get_all(struct state_in *in)
{
	uint64_t sum;

	for (;; in->records++) {
		if (state_get(in, &in->tag, 1) == -1)
			return -1;
		if (in->tag == STATE_TAG_END)
			break;
		if (in->tag != STATE_TAG_ROBOTS &&
		    (in->tag != STATE_TAG_TDM || in->format != STATE_FORMAT)) {
			in->why = "an unknown record tag";
			return -1;
		}
		if (state_get_entry(in) == -1)
			return -1;
	}
	if (fread(&sum, sizeof(sum), 1, in->f) != 1)
		in->why = "cut short";
	else if (sum != state_sum_end(&in->sum))
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

/* Load a saved file into the caches; see state.h. */
long
state_load(const struct state_caches *cs, const char *path,
    unsigned long long cache_max_bytes, struct state_counts *n, char **cause)
{
	struct state_in in = { .sum = { .h = STATE_SUM_INIT },
		.str = BUF_INIT(STATE_STRS * (STATE_MAX_STR + 1)),
		.cs = cs };
	int bad;

	*cause = NULL;
	if (n != NULL)
		*n = (struct state_counts){ 0, 0, 0 };
	in.max_image = cache_max_bytes;
	in.path = path;
	if ((in.f = state_open(path, state_max_size(cache_max_bytes), &in.size,
	         cause)) == NULL)
		return *cause != NULL ? -1 : 0;
	in.iobuf = state_iobuf(in.f);
	bad = state_get_head(&in) == -1 || state_get_all(&in) == -1;
	if (bad && in.pos <= strlen(STATE_MAGIC) + sizeof(struct state_head))
		xasprintf(cause, "%s: %s", path, in.why);
	else if (bad)
		xasprintf(cause, "%s: record %zu (at byte %llu): %s", path,
		    in.records + 1, in.pos, in.why);
	cache_restore_end(cs->robots, in.restored[0], !bad);
	if (cs->tdm != NULL)
		cache_restore_end(cs->tdm, in.restored[1], !bad);
	fclose(in.f);
	free(in.iobuf);
	buf_clear(&in.str);
	if (bad)
		return -1;
	if (n != NULL)
		*n =
		    (struct state_counts){ in.kept[0], in.kept[1], in.skipped };
	return in.kept[0] + in.kept[1];
}
