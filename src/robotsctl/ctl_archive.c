/*
 * ctl_archive.c: "robotsctl show ORIGIN [VERSION]" and "robotsctl diff
 * ORIGIN V1 V2" read robotsd's WARC archive themselves: the directory is
 * --archive-dir DIR (or $ROBOTSD_ARCHIVE_DIR, or the archive-dir line of
 * robotsd's config file, --config or the default one), the daemon's own
 * --archive-dir. Every robotsd-*.warc.gz file there is read, oldest first,
 * record by record (zlib reads the gzip members one after the other), and
 * the body of the response record whose WARC-Robotsd-Origin and
 * WARC-Robotsd-Version match is what follows its HTTP headers. Without a
 * VERSION, show asks the daemon (inspect) for the version it answers from
 * now: the daemon keeps only the compiled rules, not the text, so the text
 * comes from the archive too. They read robots.txt's records (those
 * without WARC-Robotsd-Resource), or with --tdm tdmrep.json's
 * (WARC-Robotsd-Resource: tdmrep), whose versions are of another file.
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "wire/buf.h"
#include "robotsctl.h"
#include "ctl_warc.h"

#define CTL_VERSION_LEN 16

/*
 * A search of the archive: the files it read, and those this user may not
 * read (EACCES), reported once at the end rather than file by file.
 */
struct search {
	int files, denied;
	int dir_denied;       /* the directory itself cannot be listed */
	const char *resource; /* "tdmrep" (--tdm), or NULL: robots.txt */
};

/*
 * The value of the archive-dir line of the config file f (robotsd.conf(5):
 * "name value" lines, '#' comments), into out; 1 found, 0 not there.
 */
static int
conf_archive(FILE *f, char *out, size_t outsz)
{
	static const char name[] = "archive-dir";
	char line[8192], *p;
	size_t n;

	while (fgets(line, sizeof(line), f) != NULL) {
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (strncmp(p, name, sizeof(name) - 1) != 0 ||
		    !isspace((unsigned char)p[sizeof(name) - 1]))
			continue;
		for (p += sizeof(name) - 1; isspace((unsigned char)*p); p++)
			;
		n = strlen(p);
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (n == 0 || n >= outsz)
			continue;
		memcpy(out, p, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

/*
 * The archive directory robotsd's config file names (--config, else the
 * default file), or NULL: none (reported when --config was given and
 * cannot be read).
 */
static const char *
conf_archive_dir(const struct ctl *ctl, const char *cmd)
{
	static char dir[4096];
	const char *path =
	    ctl->config != NULL ? ctl->config : CTL_DEFAULT_CONFIG;
	FILE *f;
	int found;

	if ((f = fopen(path, "r")) == NULL) {
		if (ctl->config != NULL)
			ctl_warnx("%s: %s: %s", cmd, path, strerror(errno));
		return NULL;
	}
	found = conf_archive(f, dir, sizeof(dir));
	fclose(f);
	return found ? dir : NULL;
}

/* See robotsctl.h. */
const char *
ctl_archive_dir(const struct ctl *ctl, const char *cmd)
{
	const char *d = ctl->archive_dir;

	if (d == NULL || *d == '\0')
		d = getenv("ROBOTSD_ARCHIVE_DIR");
	if (d == NULL || *d == '\0')
		d = conf_archive_dir(ctl, cmd);
	if (d == NULL || *d == '\0') {
		ctl_warnx("%s: which archive? give --archive-dir DIR "
		          "(robotsd's --archive-dir), set ROBOTSD_ARCHIVE_DIR, "
		          "or set archive-dir in %s",
		    cmd,
		    ctl->config != NULL ? ctl->config : CTL_DEFAULT_CONFIG);
		return NULL;
	}
	return d;
}

/* See robotsctl.h. */
int
ctl_is_version(const char *v)
{
	size_t i;

	for (i = 0; v[i] != '\0'; i++)
		if (!((v[i] >= '0' && v[i] <= '9') ||
		        (v[i] >= 'a' && v[i] <= 'f')))
			return 0;
	return i == CTL_VERSION_LEN;
}

/*
 * Find origin's version in the file at path; its body goes into body.
 * 1 found, 0 not, -1 the file cannot be read (reported, or counted in s
 * when this user may not read it).
 */
static int
find_in_file(struct search *s, const char *path, const char *origin,
    const char *version, struct buf *body)
{
	struct buf block = BUF_INIT(CTL_MAX_BLOCK);
	gzFile g;
	const char *p;
	struct ctl_warc_rec r;
	int rc = 0, h;

	errno = 0;
	s->files++;
	if ((g = gzopen(path, "rb")) == NULL) {
		if (errno == EACCES)
			s->denied++;
		else
			ctl_warnx(
			    "%s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	while (rc == 0 && (h = ctl_warc_header(g, &r)) == 1) {
		int want = strcmp(r.type, "response") == 0 &&
		           strcmp(r.origin, origin) == 0 &&
		           strcmp(r.version, version) == 0 &&
		           ctl_warc_is_resource(&r, s->resource) &&
		           r.length <= CTL_MAX_BLOCK;

		buf_reset(&block);
		if (ctl_warc_block(g, r.length, want ? &block : NULL) == -1) {
			ctl_warnx("%s: a record is cut short", path);
			break;
		}
		if (!want || block.state != BUF_OK || block.len == 0)
			continue;
		p = memmem(block.p, block.len, "\r\n\r\n", 4);
		p = p == NULL ? block.p + block.len : p + 4;
		buf_reset(body);
		buf_add(body, p, (size_t)(block.p + block.len - p));
		rc = 1;
	}
	gzclose(g);
	buf_clear(&block);
	return rc;
}

/* See robotsctl.h. */
int
ctl_archive_is_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 16 && strncmp(d->d_name, "robotsd-", 8) == 0 &&
	       strcmp(d->d_name + n - 8, ".warc.gz") == 0;
}

/*
 * Find origin's version in dir (newest file first); 1 found, else 0 (what
 * this user may not read counted in s, other failures reported).
 */
static int
find_version(struct search *s, const char *dir, const char *origin,
    const char *version, struct buf *body)
{
	struct dirent **ents;
	char path[4096];
	int n, i, found = 0;

	if ((n = scandir(dir, &ents, ctl_archive_is_file, alphasort)) == -1) {
		if (errno == EACCES)
			s->dir_denied = 1;
		else
			ctl_warnx("%s: %s", dir, strerror(errno));
		return 0;
	}
	for (i = n - 1; i >= 0 && !found; i--) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		found = find_in_file(s, path, origin, version, body) == 1;
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return found;
}

/* The version the daemon answers origin from now, or NULL (reported). */
static char *
cached_version(const struct ctl *ctl, const char *origin)
{
	struct ctl quiet = *ctl;
	const char *v;
	char *out = NULL;
	json_t *ans;

	quiet.json = 0;
	ans = ctl_call(&quiet,
	    ctl->tdm
	        ? json_pack("{s:s, s:s, s:s}", "op", "inspect", "origin",
	              origin, "resource", "tdmrep")
	        : json_pack("{s:s, s:s}", "op", "inspect", "origin", origin));
	if (ans == NULL)
		return NULL;
	v = ctl_str_or(json_object_get(ans, "version"), NULL);
	if (v == NULL || !ctl_is_version(v))
		ctl_warnx("show: %s: the cached %s has no version", origin,
		    ctl->tdm ? "tdmrep.json" : "entry");
	else if ((out = strdup(v)) == NULL)
		ctl_warnx("out of memory");
	json_decref(ans);
	return out;
}

/*
 * Load one version's body, or report why not, once: permission denied
 * when this user may not read the directory or some of its files (the
 * version may be in those), else that the version is not there; 0 or -1.
 */
static int
load(const struct ctl *ctl, const char *cmd, const char *dir,
    const char *origin, const char *version, struct buf *body)
{
	struct search s = { 0, 0, 0, ctl->tdm ? "tdmrep" : NULL };

	if (!ctl_is_version(version)) {
		ctl_warnx(
		    "%s: %s: not a version (16 hex digits)", cmd, version);
		return -1;
	}
	if (find_version(&s, dir, origin, version, body))
		return 0;
	if (s.dir_denied)
		ctl_warnx("%s: %s: permission denied: this user may not list "
		          "the archive",
		    cmd, dir);
	else if (s.denied > 0)
		ctl_warnx("%s: %s: permission denied: this user may not read "
		          "%d of its %d archive files, which may hold %s "
		          "version %s (robotsd's socket group may)",
		    cmd, dir, s.denied, s.files, origin, version);
	else
		ctl_warnx("%s: %s%s version %s is not in the archive %s", cmd,
		    origin, ctl->tdm ? " tdmrep.json" : "", version, dir);
	return -1;
}

int
ctl_cmd_show(const struct ctl *ctl, int argc, char **argv)
{
	const char *dir = ctl_archive_dir(ctl, "show");
	struct buf body = BUF_INIT(0);
	char *cached = NULL;
	const char *v;
	int rc = CTL_EXIT_ERROR;

	if (dir == NULL)
		return CTL_EXIT_ERROR;
	if (argc < 2 && (cached = cached_version(ctl, argv[0])) == NULL)
		return CTL_EXIT_ERROR;
	v = argc >= 2 ? argv[1] : cached;
	if (load(ctl, "show", dir, argv[0], v, &body) == 0) {
		fwrite(body.p, 1, body.len, stdout);
		rc = fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
	} else if (cached != NULL)
		ctl_warnx(
		    "show: robotsd keeps the compiled rules of the cached "
		    "version, not its text: only the archive has that");
	buf_clear(&body);
	free(cached);
	return rc;
}

int
ctl_cmd_diff(const struct ctl *ctl, int argc, char **argv)
{
	const char *dir = ctl_archive_dir(ctl, "diff");
	struct buf a = BUF_INIT(0), b = BUF_INIT(0);
	char la[2200], lb[2200];
	int rc = CTL_EXIT_ERROR;

	(void)argc;
	if (dir == NULL)
		return CTL_EXIT_ERROR;
	if (load(ctl, "diff", dir, argv[0], argv[1], &a) == 0 &&
	    load(ctl, "diff", dir, argv[0], argv[2], &b) == 0) {
		snprintf(la, sizeof(la), "%s %s", argv[0], argv[1]);
		snprintf(lb, sizeof(lb), "%s %s", argv[0], argv[2]);
		/* like diff(1): 0 the same, 1 they differ */
		rc = ctl_diff(stdout, la, a.p, a.len, lb, b.p, b.len);
		if (fflush(stdout) != 0)
			rc = CTL_EXIT_ERROR;
	}
	buf_clear(&a);
	buf_clear(&b);
	return rc;
}
