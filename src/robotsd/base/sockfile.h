/*
 * sockfile.h: the listening socket's file (see sockfile.c).
 */
#ifndef ROBOTSD_SOCKFILE_H
#define ROBOTSD_SOCKFILE_H

#include <sys/types.h>

struct sockfile {
	char *path; /* NULL: nothing to remove at exit */
	dev_t dev;  /* the socket bound there ... */
	ino_t ino;  /* ... removed only if still this inode */
};

/* Bind and listen on path with mode; the fd, or -1 with *cause. */
int sockfile_listen(const char *path, unsigned mode, char **cause);
/*
 * The same for the admin socket: mode 0660 and group gid, or 0600 when gid
 * is -1; never open to the group before the file has that group.
 */
int sockfile_listen_group(const char *path, long gid, char **cause);
/* Remember the socket file path names now, just after binding it. */
void sockfile_note(struct sockfile *, const char *path);
/* Remove the remembered socket file if path still names it. */
void sockfile_unlink(struct sockfile *);

#endif /* ROBOTSD_SOCKFILE_H */
