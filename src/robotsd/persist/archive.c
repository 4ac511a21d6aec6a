/*
 * archive.c: the WARC archive's writer thread and its file rules
 * (archive.h). The loop thread only copies a record's fields into the
 * queue; formatting, gzip, open, write and removal happen here on the
 * writer thread. A record is written with one write() after the file's
 * end is noted; a failed write truncates the file back, so a file only
 * ever holds whole gzip members. Logging from this thread goes through a
 * token bucket of its own (a line at once, then one a minute).
 */
#include <config.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "persist/archive.h"
#include "base/log.h"
#include "base/xmalloc.h"

#define ARCHIVE_LOG_BURST 3.0
#define ARCHIVE_LOG_RATE (1.0 / 60) /* a line a minute once past the burst */
#define ARCHIVE_MAX_FILES 100000    /* files a removal pass looks at */

/* One queued record: its fields, copied (strings in the same block). */
struct archive_job {
	struct archive_job *next;
	size_t bytes; /* what it counts against the queue */
	double date;
	char *target_uri, *origin, *ip, *version, *resource, *head, *body;
	size_t head_len, body_len;
	int truncated;
};

struct archive {
	struct archive_settings set; /* dir owned */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct archive_job *head, *tail; /* under lock */
	size_t queued;                   /* bytes, under lock */
	int busy;                        /* the thread holds a job */
	int stop;
	_Atomic uint64_t records, dropped, errors;
	struct log_bucket drop_log; /* loop thread only */
	/* Writer thread only. */
	struct log_bucket error_log;
	int fd; /* the current file, or -1 */
	char path[4096];
	char info_id[WARC_ID_SIZE];
	unsigned long long file_bytes; /* of the current file */
	unsigned file_records;
	unsigned seq;             /* the next file's number */
	unsigned long long total; /* of every archive file, as last seen */
	int total_known;          /* total was counted since the start */
};

/* Seconds on the monotonic clock, for the log buckets. */
static double
archive_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
archive_file_name(char out[ARCHIVE_NAME_SIZE], double date, unsigned seq)
{
	time_t s = (time_t)date;
	char ts[16];
	struct tm tm;

	if (date < 0 || gmtime_r(&s, &tm) == NULL ||
	    strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm) != 14)
		snprintf(ts, sizeof(ts), "19700101000000");
	snprintf(out, ARCHIVE_NAME_SIZE, "robotsd-%s-%05u.warc.gz", ts,
	    seq % 100000);
}

int
archive_is_file_name(const char *name)
{
	size_t i;

	if (strlen(name) != 36 || strncmp(name, "robotsd-", 8) != 0 ||
	    name[22] != '-' || strcmp(name + 28, ".warc.gz") != 0)
		return 0;
	for (i = 8; i < 28; i++)
		if (i != 22 && (name[i] < '0' || name[i] > '9'))
			return 0;
	return 1;
}

int
archive_must_rotate(unsigned long long file_bytes, unsigned records, size_t len,
    unsigned long long max)
{
	return records > 0 && file_bytes + len > max;
}

size_t
archive_plan_removal(
    struct archive_file *files, size_t n, unsigned long long max)
{
	unsigned long long total = 0;
	size_t i, marked = 0;

	for (i = 0; i < n; i++) {
		files[i].remove = 0;
		total += files[i].bytes;
	}
	if (max == 0)
		return 0;
	for (i = 0; i < n && total > max; i++) {
		if (files[i].current)
			continue;
		files[i].remove = 1;
		total -= files[i].bytes;
		marked++;
	}
	return marked;
}

/* Count a failure and log it (rate-limited), naming errnum properly. */
static void
archive_fail(struct archive *a, const char *what, const char *path, int errnum)
{
	char e[128], ek[160], p[300];

	atomic_fetch_add(&a->errors, 1);
	if (!log_bucket_take(&a->error_log, archive_monotonic(),
	        ARCHIVE_LOG_BURST, ARCHIVE_LOG_RATE))
		return;
	snprintf(e, sizeof(e), "%s", strerror(errnum));
	log_warnx("event=archive_error op=%s path=%s errors=%llu "
	          "suppressed=%lu error=%s",
	    what, log_kvs(path, p, sizeof(p)),
	    (unsigned long long)atomic_load(&a->errors),
	    a->error_log.suppressed, log_kvs(e, ek, sizeof(ek)));
	a->error_log.suppressed = 0;
}

/* Write all of len bytes; 0, or -1 with errno. */
static int
archive_write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Append a gzipped record to the current file; on failure cut the file
 * back to its end before it (or, if that fails too, close it: the next
 * record opens a new file).
 */
static int
archive_append(struct archive *a, const struct buf *gz, const char *what)
{
	int e;

	if (archive_write_all(a->fd, gz->p, gz->len) == 0) {
		a->file_bytes += gz->len;
		a->total += gz->len;
		return 0;
	}
	e = errno;
	archive_fail(a, what, a->path, e);
	if (ftruncate(a->fd, (off_t)a->file_bytes) == -1) {
		close(a->fd);
		a->fd = -1;
	}
	return -1;
}

static void
archive_close(struct archive *a)
{
	if (a->fd != -1 && close(a->fd) == -1)
		archive_fail(a, "close", a->path, errno);
	a->fd = -1;
}

/*
 * Give the new file its group (tried until it fails once: robotsd is not
 * of that group) and ARCHIVE_FILE_MODE, which the umask (the units'
 * UMask=0077) took from open()'s mode. Empty until then: no one read it.
 */
static void
archive_share(struct archive *a)
{
	if (a->set.gid >= 0 &&
	    fchown(a->fd, (uid_t)-1, (gid_t)a->set.gid) == -1) {
		archive_fail(a, "chown", a->path, errno);
		a->set.gid = -1;
	}
	if (fchmod(a->fd, ARCHIVE_FILE_MODE) == -1)
		archive_fail(a, "chmod", a->path, errno);
}

/* Open a new file named for date, written with its warcinfo record. */
static int
archive_open(struct archive *a, double date)
{
	struct buf rec = BUF_INIT(0), gz = BUF_INIT(0);
	char name[ARCHIVE_NAME_SIZE];
	unsigned tries;
	int rc = -1;

	archive_close(a);
	for (tries = 0; tries < 1000; tries++) {
		archive_file_name(name, date, a->seq++);
		snprintf(a->path, sizeof(a->path), "%s/%s", a->set.dir, name);
		a->fd = open(a->path,
		    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
		    ARCHIVE_FILE_MODE);
		if (a->fd != -1 || errno != EEXIST)
			break;
	}
	if (a->fd == -1) {
		archive_fail(a, "open", a->path, errno);
		return -1;
	}
	archive_share(a);
	a->file_bytes = 0;
	a->file_records = 0;
	if (warc_random_id(a->info_id) == -1 ||
	    warc_warcinfo(&rec, a->info_id, date, name,
	        "robotsd/" PACKAGE_VERSION) == -1 ||
	    warc_gzip(&gz, rec.p, rec.len) == -1)
		archive_fail(a, "format", a->path, errno ? errno : ENOMEM);
	else if (archive_append(a, &gz, "write") == 0)
		rc = 0;
	if (rc == -1) { /* leave no empty file behind */
		unlink(a->path);
		archive_close(a);
	}
	buf_clear(&rec);
	buf_clear(&gz);
	return rc;
}

static int
archive_name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct archive_file *)x)->name,
	    ((const struct archive_file *)y)->name);
}

/* Count the archive files of the directory; remove the oldest past max. */
static void
archive_enforce(struct archive *a)
{
	struct archive_file *f = NULL;
	size_t n = 0, cap = 0, i;
	const char *cur = a->fd != -1 ? strrchr(a->path, '/') + 1 : "";
	struct dirent *d;
	struct stat st;
	char path[4096];
	DIR *dir;

	if ((dir = opendir(a->set.dir)) == NULL) {
		archive_fail(a, "scan", a->set.dir, errno);
		return;
	}
	while ((d = readdir(dir)) != NULL && n < ARCHIVE_MAX_FILES) {
		if (!archive_is_file_name(d->d_name) ||
		    fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		        -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			f = xreallocarray(f, cap, sizeof(*f));
		}
		memcpy(f[n].name, d->d_name, strlen(d->d_name) + 1); /* 36 */
		f[n].bytes = (unsigned long long)st.st_size;
		f[n].current = strcmp(d->d_name, cur) == 0;
		n++;
	}
	closedir(dir);
	qsort(f, n, sizeof(*f), archive_name_cmp);
	archive_plan_removal(f, n, a->set.max_bytes);
	a->total = 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", a->set.dir, f[i].name);
		if (f[i].remove && unlink(path) == -1 && errno != ENOENT) {
			archive_fail(a, "remove", path, errno);
			f[i].remove = 0;
		}
		if (!f[i].remove)
			a->total += f[i].bytes;
	}
	a->total_known = 1;
	free(f);
}

/* Format one job as a record of the current file (opened if need be). */
static int
archive_format(struct archive *a, const struct archive_job *j, struct buf *gz)
{
	struct buf rec = BUF_INIT(0);
	char id[WARC_ID_SIZE];
	struct warc_response r = {
		.record_id = id,
		.warcinfo_id = a->info_id,
		.date = j->date,
		.target_uri = j->target_uri,
		.origin = j->origin,
		.ip = j->ip,
		.version = j->version,
		.resource = j->resource,
		.http_head = j->head,
		.http_head_len = j->head_len,
		.body = j->body,
		.body_len = j->body_len,
		.truncated = j->truncated,
	};
	int rc = -1;

	buf_reset(gz);
	if (warc_random_id(id) == 0 && warc_response(&rec, &r) == 0 &&
	    warc_gzip(gz, rec.p, rec.len) == 0)
		rc = 0;
	buf_clear(&rec);
	return rc;
}

/*
 * Whether the current file is no longer at its path: unlinked (its
 * directory removed, or the file alone), or the path now names another
 * file. A path that cannot be looked up for another reason (say the
 * directory lost its search permission) is not taken as gone: the file
 * is still where it was.
 */
static int
archive_file_gone(const struct archive *a)
{
	struct stat fs, ps;

	if (fstat(a->fd, &fs) == -1 || fs.st_nlink == 0)
		return 1;
	if (stat(a->path, &ps) == -1)
		return errno == ENOENT || errno == ENOTDIR;
	return ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino;
}

/*
 * Never append to a file that is gone: count and log it, close it, and
 * let the record open a new file (which fails, counted, while the
 * directory is missing: robotsd creates none). The total is counted
 * again from the directory.
 */
static void
archive_check_file(struct archive *a)
{
	if (a->fd == -1 || !archive_file_gone(a))
		return;
	archive_fail(a, "gone", a->path, ENOENT);
	(void)close(a->fd);
	a->fd = -1;
	a->total_known = 0;
}

/* Write one job: open or rotate the file, append, keep the total. */
static void
archive_write_job(struct archive *a, const struct archive_job *j)
{
	struct buf gz = BUF_INIT(0);

	archive_check_file(a);
	if (a->fd == -1 && archive_open(a, j->date) == -1)
		goto out;
	if (archive_format(a, j, &gz) == -1) {
		archive_fail(a, "format", j->target_uri, EINVAL);
		goto out;
	}
	if (archive_must_rotate(a->file_bytes, a->file_records, gz.len,
	        a->set.max_file_bytes)) {
		if (archive_open(a, j->date) == -1 ||
		    archive_format(a, j, &gz) == -1)
			goto out;
		archive_enforce(a);
	}
	if (archive_append(a, &gz, "write") == 0) {
		a->file_records++;
		atomic_fetch_add(&a->records, 1);
	}
	if (!a->total_known ||
	    (a->set.max_bytes > 0 && a->total > a->set.max_bytes))
		archive_enforce(a);
out:
	buf_clear(&gz);
}

static void *
archive_main(void *arg)
{
	struct archive *a = arg;
	struct archive_job *j;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (a->head == NULL && !a->stop)
			pthread_cond_wait(&a->wake, &a->lock);
		if ((j = a->head) == NULL)
			break; /* stopping, and every job is written */
		a->head = j->next;
		if (a->head == NULL)
			a->tail = NULL;
		a->busy = 1;
		pthread_mutex_unlock(&a->lock);
		archive_write_job(a, j);
		pthread_mutex_lock(&a->lock);
		a->queued -= j->bytes;
		a->busy = 0;
		free(j);
		pthread_cond_broadcast(&a->idle);
	}
	pthread_mutex_unlock(&a->lock);
	archive_close(a);
	return NULL;
}

struct archive *
archive_new(const struct archive_settings *set)
{
	struct archive *a = xcalloc(1, sizeof(*a));
	struct stat st;
	int e;

	a->set = *set;
	a->set.dir = xstrdup(set->dir);
	a->fd = -1;
	if (stat(a->set.dir, &st) == -1)
		e = errno;
	else
		e = S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e != 0)
		archive_fail(a, "start", a->set.dir, e);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	pthread_cond_init(&a->idle, NULL);
	if ((e = pthread_create(&a->thread, NULL, archive_main, a)) != 0) {
		log_errx("archive: cannot start its thread: %s", strerror(e));
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->wake);
		pthread_cond_destroy(&a->idle);
		free((char *)a->set.dir);
		free(a);
		return NULL;
	}
	return a;
}

void
archive_free(struct archive *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->wake);
	pthread_cond_destroy(&a->idle);
	free((char *)a->set.dir);
	free(a);
}

/* A copy of s (len bytes) at *at, NUL-terminated; *at moves past it. */
static char *
archive_copy(char **at, const char *s, size_t len)
{
	char *p = *at;

	if (s == NULL)
		return NULL;
	if (len > 0)
		memcpy(p, s, len);
	p[len] = '\0';
	*at += len + 1;
	return p;
}

/* The length of an optional string. */
static size_t
archive_len(const char *s)
{
	return s == NULL ? 0 : strlen(s);
}

int
archive_add(struct archive *a, const struct warc_response *r)
{
	size_t bytes = sizeof(struct archive_job) + archive_len(r->target_uri) +
	               archive_len(r->origin) + archive_len(r->ip) +
	               archive_len(r->version) + archive_len(r->resource) +
	               r->http_head_len + r->body_len + 7;
	struct archive_job *j;
	char *at;

	pthread_mutex_lock(&a->lock);
	if (a->queued + bytes > a->set.queue_bytes) {
		pthread_mutex_unlock(&a->lock);
		atomic_fetch_add(&a->dropped, 1);
		if (log_bucket_take(&a->drop_log, archive_monotonic(),
		        ARCHIVE_LOG_BURST, ARCHIVE_LOG_RATE)) {
			log_warnx("event=archive_dropped dropped=%llu: the "
			          "archive's disk is behind; records are "
			          "dropped",
			    (unsigned long long)atomic_load(&a->dropped));
			a->drop_log.suppressed = 0;
		}
		return -1;
	}
	a->queued += bytes;
	pthread_mutex_unlock(&a->lock);
	j = xmalloc(bytes);
	memset(j, 0, sizeof(*j));
	at = (char *)(j + 1);
	j->bytes = bytes;
	j->date = r->date;
	j->target_uri =
	    archive_copy(&at, r->target_uri, archive_len(r->target_uri));
	j->origin = archive_copy(&at, r->origin, archive_len(r->origin));
	j->ip = archive_copy(&at, r->ip, archive_len(r->ip));
	j->version = archive_copy(&at, r->version, archive_len(r->version));
	j->resource = archive_copy(&at, r->resource, archive_len(r->resource));
	j->head = archive_copy(
	    &at, r->http_head ? r->http_head : "", r->http_head_len);
	j->head_len = r->http_head_len;
	j->body = archive_copy(&at, r->body ? r->body : "", r->body_len);
	j->body_len = r->body_len;
	j->truncated = r->truncated;
	pthread_mutex_lock(&a->lock);
	if (a->tail != NULL)
		a->tail->next = j;
	else
		a->head = j;
	a->tail = j;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void
archive_stats(const struct archive *a, struct archive_stats *s)
{
	s->records = atomic_load(&a->records);
	s->dropped = atomic_load(&a->dropped);
	s->errors = atomic_load(&a->errors);
}

void
archive_sync(struct archive *a)
{
	pthread_mutex_lock(&a->lock);
	while (a->head != NULL || a->busy)
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
}
