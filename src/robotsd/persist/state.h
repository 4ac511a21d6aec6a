/*
 * state.h: the caches saved to --state-file (every --state-save-interval
 * seconds and when the daemon stops) and loaded when it starts, so a
 * restart does not refetch every origin. The file holds each settled entry
 * of robots.txt's cache with its compiled ruleset image, each of
 * tdmrep.json's with the body it was compiled from, and a checksum; a save
 * writes a new file beside it (mkostemp) and renames it into place.
 */
#ifndef ROBOTSD_STATE_H
#define ROBOTSD_STATE_H

#include <stddef.h>
#include <stdint.h>

struct cache;

/* The caches a state file holds. */
struct state_caches {
	struct cache *robots; /* robots.txt's */
	/*
	 * tdmrep.json's (a kind with a source(): ops/tdmres.h), or NULL
	 * (--tdmrep off): none saved, and a file's records of it are read,
	 * checked and passed over.
	 */
	struct cache *tdm;
};

/* What a save wrote or a load kept of each cache. */
struct state_counts {
	long robots, tdm; /* records (a load: not those left out) */
	long skipped;     /* a load: tdmrep.json records passed over */
};

/*
 * Save every settled entry, giving up after timeout seconds; the count of
 * both caches' (each in *n, which may be NULL), or -1 with *cause
 * (allocated). Nothing at path or beside it is opened: the new file
 * replaces path by rename().
 */
long state_save(const struct state_caches *, const char *path, double timeout,
    struct state_counts *n, char **cause);
/*
 * state_save in two steps, for a save in a child process: create the
 * temporary file beside path (*tmp allocated; fd, or -1 with *cause), then
 * fill it, fsync it and rename it over path (the count, or -1 with *cause
 * and the temporary file removed). fd is closed either way.
 */
int state_tmp_open(const char *path, char **tmp, char **cause);
/*
 * Remove the temporary files that saves to path left when they were
 * interrupted (robotsd killed): regular files of ours beside path named
 * exactly as state_tmp_open() names them, nothing else. removed (or NULL)
 * is called with each one's path; returns how many went.
 */
int state_tmp_sweep(const char *path, void (*removed)(const char *));
long state_write(const struct state_caches *, int fd, const char *tmp,
    const char *path, double timeout, struct state_counts *n, char **cause);
/*
 * Load a saved file into the caches; the count of entries restored (0
 * when the file does not exist; each cache's in *n, which may be NULL), or
 * -1 with *cause when the file is unusable: not a regular file (a symbolic
 * link, a FIFO...), larger than state_max_size(cache_max_bytes), of
 * another build, or with any bad record or a bad checksum. Then nothing is
 * loaded: all or nothing. A record framed right whose ruleset image fails
 * its deep check, whose tdmrep.json body is not the one its version names,
 * or whose times are not times (NaN, infinite, negative, after the year
 * 9999), is left out alone with an event=state_entry_dropped line, and not
 * counted.
 */
long state_load(const struct state_caches *, const char *path,
    unsigned long long cache_max_bytes, struct state_counts *n, char **cause);
/*
 * The checksum a state file ends with, of its len bytes before it (for
 * the fuzz target, which makes the checksum of a mutated file right).
 */
uint64_t state_checksum(const void *p, size_t len);
/*
 * The largest state file accepted with --cache-max-bytes cache_max_bytes:
 * that of both caches full, each record being no larger than what its
 * entry counts against its cache's cap.
 */
unsigned long long state_max_size(unsigned long long cache_max_bytes);

#endif /* ROBOTSD_STATE_H */
