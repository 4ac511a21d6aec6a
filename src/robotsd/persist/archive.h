/*
 * archive.h: the WARC archive (--archive-dir): each new robots.txt (or
 * tdmrep.json) version fetched here becomes a gzipped WARC response record
 * (warc.h) appended to DIR/robotsd-YYYYMMDDHHMMSS-NNNNN.warc.gz (the UTC
 * time of the record that opened the file, a sequence number), each file
 * opened by a warcinfo record, rotated past --archive-max-file-bytes, the
 * oldest removed while the files pass --archive-max-bytes. One thread of
 * its own writes them from a queue bounded in bytes: a full queue drops
 * the record (counted), so a slow or failing disk never stalls an answer;
 * every failure (full disk, missing or read-only directory) is logged,
 * rate-limited, and counted, never fatal. Each file is ARCHIVE_FILE_MODE,
 * of the group set.
 */
#ifndef ROBOTSD_ARCHIVE_H
#define ROBOTSD_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "persist/warc.h"

struct archive;

/* Records waiting for the writer, at most (bytes): then they are dropped. */
#define ARCHIVE_QUEUE_BYTES (16u << 20)

struct archive_settings {
	const char *dir;
	unsigned long long max_file_bytes; /* rotate past this */
	unsigned long long max_bytes; /* remove oldest past this; 0: none */
	size_t queue_bytes;           /* records waiting, at most */
	/*
	 * The files' group (the socket's: whoever may query robotsd may
	 * read what it archived), or -1: the group a new file gets.
	 */
	long gid;
};

/* A file's mode, whatever the umask: its group reads, others do not. */
#define ARCHIVE_FILE_MODE 0640

struct archive_stats {
	uint64_t records; /* response records written */
	uint64_t dropped; /* records dropped: the queue was full */
	uint64_t errors;  /* failed opens, writes, removals */
};

/* Start the writer thread; NULL when it could not start (logged). */
struct archive *archive_new(const struct archive_settings *);
/* Write what is queued, stop the thread, free. NULL is fine. */
void archive_free(struct archive *);
/*
 * Queue a copy of the record's fields (record_id and warcinfo_id are the
 * writer's): 0, or -1 when the queue is full (dropped, counted, logged).
 */
int archive_add(struct archive *, const struct warc_response *);
void archive_stats(const struct archive *, struct archive_stats *);
/* Block until every record queued so far is written or failed (tests). */
void archive_sync(struct archive *);

/* Pure rules, exposed for their tests. */

/* The name of a file opened at date (Unix seconds) with number seq. */
#define ARCHIVE_NAME_SIZE 48
void archive_file_name(char out[ARCHIVE_NAME_SIZE], double date, unsigned seq);
/* 1 when name is one of robotsd's archive files (only those are removed). */
int archive_is_file_name(const char *name);
/*
 * 1 when a record of len bytes must go to a new file: the current one
 * holds records already and would pass max with it. A record larger than
 * max goes alone into a file of its own.
 */
int archive_must_rotate(unsigned long long file_bytes, unsigned records,
    size_t len, unsigned long long max);

struct archive_file {
	char name[ARCHIVE_NAME_SIZE];
	unsigned long long bytes;
	int current; /* the file being written: never removed */
	int remove;  /* set by archive_plan_removal() */
};
/*
 * Mark the oldest files (files sorted by name, oldest first) to remove
 * while the total passes max (0: no limit), sparing the current one.
 * Returns how many are marked.
 */
size_t archive_plan_removal(
    struct archive_file *files, size_t n, unsigned long long max);

#endif /* ROBOTSD_ARCHIVE_H */
