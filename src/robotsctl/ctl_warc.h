/*
 * ctl_warc.h: reading WARC files (ISO 28500, gzipped per record or not:
 * zlib reads either) record by record, for show, diff (robotsd's own
 * archive) and recheck (any tool's WARC files).
 */
#ifndef ROBOTSD_CTL_WARC_H
#define ROBOTSD_CTL_WARC_H

#include <zlib.h>

struct buf;

/* A record's block at most: 500 KiB of body, headers. */
#define CTL_MAX_BLOCK (2u << 20)

/*
 * What one record's WARC header says, as far as robotsctl cares. resource
 * is robotsd's WARC-Robotsd-Resource ("tdmrep"), "" without one
 * (robots.txt).
 */
struct ctl_warc_rec {
	char type[32], origin[2048], version[32], resource[32];
	char target[4096], date[64];
	unsigned long long length;
};

/* Read the next record's header; 1 read, 0 at the end, -1 not WARC. */
int ctl_warc_header(gzFile, struct ctl_warc_rec *);
/*
 * Whether r holds resource ("tdmrep"; NULL or "robots.txt": robots.txt's,
 * which a record without WARC-Robotsd-Resource is).
 */
int ctl_warc_is_resource(const struct ctl_warc_rec *r, const char *resource);
/* Read (keep != NULL) or skip the block of len bytes; -1 cut short. */
int ctl_warc_block(gzFile, unsigned long long len, struct buf *keep);

#endif /* ROBOTSD_CTL_WARC_H */
