/*
 * state.h: the cache saved to --state-file when the daemon stops and
 * loaded when it starts, so a restart does not refetch every origin. The
 * file holds each settled entry with its compiled ruleset image, and a
 * checksum; it is written to FILE.tmp and renamed into place.
 */
#ifndef ROBOTSD_STATE_H
#define ROBOTSD_STATE_H

#include <stddef.h>

struct cache;

/* Save every settled entry; the count, or -1 with *cause (allocated). */
long state_save(const struct cache *, const char *path, char **cause);
/*
 * Load a saved cache into c; the count of entries restored (0 when the file
 * does not exist), or -1 with *cause when the file is unusable: a file of
 * another build or with a bad checksum loads nothing; entries before a
 * malformed record stay loaded.
 */
long state_load(struct cache *, const char *path, char **cause);

#endif /* ROBOTSD_STATE_H */
