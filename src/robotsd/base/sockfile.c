/*
 * sockfile.c: the listening socket's file. robotsd creates it with its
 * mode from the start, refuses a path another robotsd serves or that is
 * not a socket, and at exit removes the file only if it is still the
 * socket it bound. The admin socket is created closed (0600) and opened
 * to its group (0660) only once the file has that group.
 */
#include <config.h>

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sockfile.h"
#include "base/xmalloc.h"

/*
 * Is a socket file at path served by a live process? 1 yes, 0 no (stale
 * or absent), -1 when path exists and is not a socket.
 */
static int
sockfile_live(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st) == -1)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0 ||
	       (errno != ECONNREFUSED && errno != ENOENT);
	close(fd);
	return live;
}

/* Remove a stale socket file of a dead daemon; never anything else. */
static void
sockfile_unlink_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
}

/* Bind and listen on path with mode; -1 with *cause on error. */
int
sockfile_listen(const char *path, unsigned mode, char **cause)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, live, rc;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: socket path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((live = sockfile_live(path, &sun)) != 0) {
		xasprintf(cause,
		    live > 0 ? "%s: another robotsd is serving this socket"
		             : "%s: exists and is not a socket",
		    path);
		return -1;
	}
	sockfile_unlink_stale(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	         0)) == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * The umask gives the socket its mode as bind() creates it: no
	 * window where it is more open, and no chmod(path), which would
	 * follow a symbolic link put there meanwhile.
	 */
	old = umask(~mode & 0777);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1 || listen(fd, SOMAXCONN) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Remember the device and inode of the socket file just bound, so that at
 * exit robotsd removes only its own socket, never one that replaced it.
 */
void
sockfile_note(struct sockfile *sf, const char *path)
{
	char kv[LOG_KV_BUF];
	struct stat st;

	if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		log_event(LOG_WARNING, "socket_vanished",
		    "path=%s note=\"gone after bind; it will not be removed "
		    "at exit\"",
		    log_kvs(path, kv, sizeof(kv)));
		return;
	}
	sf->path = xstrdup(path);
	sf->dev = st.st_dev;
	sf->ino = st.st_ino;
}

/* Remove our socket file if the path still names it; see above. */
void
sockfile_unlink(struct sockfile *sf)
{
	char kv[LOG_KV_BUF], kv2[LOG_KV_BUF];
	struct stat st;

	if (sf->path == NULL)
		return;
	if (lstat(sf->path, &st) == -1) {
		if (errno != ENOENT)
			log_event(LOG_WARNING, "socket_not_removed",
			    "path=%s error=%s",
			    log_kvs(sf->path, kv, sizeof(kv)),
			    log_kvs(strerror(errno), kv2, sizeof(kv2)));
		return;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_dev != sf->dev ||
	    st.st_ino != sf->ino) {
		log_event(LOG_WARNING, "socket_replaced",
		    "path=%s outcome=left_in_place note=\"no longer robotsd's "
		    "socket (replaced since start)\"",
		    log_kvs(sf->path, kv, sizeof(kv)));
		return;
	}
	if (unlink(sf->path) == -1)
		log_event(LOG_WARNING, "socket_not_removed", "path=%s error=%s",
		    log_kvs(sf->path, kv, sizeof(kv)),
		    log_kvs(strerror(errno), kv2, sizeof(kv2)));
}

/* The name of group gid, or its number, into buf. */
static const char *
sockfile_group_name(long gid, char *buf, size_t bufsz)
{
	struct group *gr = getgrgid((gid_t)gid);

	if (gr != NULL)
		snprintf(buf, bufsz, "%s", gr->gr_name);
	else
		snprintf(buf, bufsz, "%ld", gid);
	return buf;
}

/* Bind and listen on path, 0660 and group gid (else 0600); see .h. */
int
sockfile_listen_group(const char *path, long gid, char **cause)
{
	char name[64];
	int fd;

	if ((fd = sockfile_listen(path, 0600, cause)) == -1 || gid < 0)
		return fd;
	/* Not following a symbolic link that replaced the socket. */
	if (fchownat(AT_FDCWD, path, (uid_t)-1, (gid_t)gid,
	        AT_SYMLINK_NOFOLLOW) == -1) {
		const char *why = strerror(errno); /* before getgrgid() */

		xasprintf(cause,
		    "%s: cannot give it group %s: %s (robotsd must run as "
		    "root or as a member of admin-group)",
		    path, sockfile_group_name(gid, name, sizeof(name)), why);
		close(fd);
		sockfile_unlink_stale(path);
		return -1;
	}
	if (fchmodat(AT_FDCWD, path, 0660, AT_SYMLINK_NOFOLLOW) == -1) {
		xasprintf(cause, "%s: chmod 0660: %s", path, strerror(errno));
		close(fd);
		sockfile_unlink_stale(path);
		return -1;
	}
	return fd;
}
