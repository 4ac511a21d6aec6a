/*
 * ctl_conn.c: robotsctl's exchange with the daemon: connect to the Unix
 * socket, send one compact JSON line with an "id", and read lines (partial
 * reads reassembled, EINTR retried, answers with other ids skipped) until
 * the answer arrives or the deadline passes.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "wire/buf.h"
#include "robotsctl.h"

#define CTL_MAX_ANSWER (64 << 20) /* bytes of one answer line */
#define CTL_REQUEST_ID 1

/* A connection to the daemon with its input buffer. */
struct ctl_conn {
	int fd;
	const char *path;
	struct buf in; /* capped at CTL_MAX_ANSWER */
	struct timespec deadline;
	int timeout;
};

/* Milliseconds left before the deadline (-1: no deadline, 0: passed). */
static int
ctl_conn_remaining_ms(const struct ctl_conn *c)
{
	struct timespec now;
	long long ms;

	if (c->timeout == 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(c->deadline.tv_sec - now.tv_sec) * 1000 +
	     (c->deadline.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/*
 * Say why connect() to path failed, and what to do: join the socket's
 * group when permission was denied, start robotsd when nothing listens.
 */
static void
ctl_conn_refused(const char *path, int err, int admin)
{
	struct group *gr;
	struct stat sb;
	char gid[32];
	const char *name;

	if (err != EACCES && err != EPERM) {
		ctl_warnx("cannot connect to %s: %s%s", path, strerror(err),
		    err == ENOENT || err == ECONNREFUSED
		        ? " (is robotsd running?)"
		        : "");
		return;
	}
	if (stat(path, &sb) == -1) {
		ctl_warnx("cannot connect to %s: %s (a directory on the way "
		          "is closed to you: robotsd's socket is for the "
		          "members of its group; ask to join it)",
		    path, strerror(err));
		return;
	}
	if ((gr = getgrgid(sb.st_gid)) != NULL)
		name = gr->gr_name;
	else {
		snprintf(gid, sizeof(gid), "%lu", (unsigned long)sb.st_gid);
		name = gid;
	}
	ctl_warnx("cannot connect to %s: %s (%s is for group %s, mode %04o: "
	          "join the group, e.g. \"sudo usermod -aG %s $USER\", then "
	          "log in again)",
	    path, strerror(err),
	    admin ? "robotsd's admin socket, which purge uses," : "the socket",
	    name, (unsigned)(sb.st_mode & 07777), name);
}

/*
 * Connect to the daemon's socket; -1 (reported) on failure. The timeout
 * also bounds a connect that blocks on a full listen queue and the send.
 */
static int
ctl_conn_open(struct ctl_conn *c, const struct ctl *ctl)
{
	struct timeval tv = { .tv_sec = ctl->timeout };
	struct sockaddr_un sun;

	memset(c, 0, sizeof(*c));
	c->in = BUF_INIT(CTL_MAX_ANSWER); /* the memset took its cap away */
	c->fd = -1;
	c->path = ctl->socket;
	c->timeout = ctl->timeout;
	clock_gettime(CLOCK_MONOTONIC, &c->deadline);
	c->deadline.tv_sec += ctl->timeout;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(c->path) >= sizeof(sun.sun_path)) {
		ctl_warnx("%s: socket path too long", c->path);
		return -1;
	}
	memcpy(sun.sun_path, c->path, strlen(c->path));
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		ctl_warnx("socket: %s", strerror(errno));
		return -1;
	}
	if (ctl->timeout > 0)
		(void)setsockopt(
		    c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		ctl_conn_refused(
		    c->path, errno, ctl->socket == ctl->admin_socket);
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

/* Close the connection and free its buffer. */
static void
ctl_conn_close(struct ctl_conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	buf_clear(&c->in);
}

/* Send all of buf; -1 (reported) on failure. */
static int
ctl_conn_send(struct ctl_conn *c, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			ctl_warnx("%s: send: %s", c->path, strerror(errno));
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make room for more input; -1 (reported) when the answer is too long. */
static int
ctl_conn_grow(struct ctl_conn *c)
{
	if (buf_reserve(&c->in, 4096) > 0)
		return 0;
	if (c->in.state == BUF_FULL)
		ctl_warnx(
		    "%s: answer longer than %d bytes", c->path, CTL_MAX_ANSWER);
	else
		ctl_warnx("out of memory");
	return -1;
}

/* Wait for input and append what arrives; -1 (reported) on EOF/timeout. */
static int
ctl_conn_fill(struct ctl_conn *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int ms, r;

	if (ctl_conn_grow(c) == -1)
		return -1;
	for (;;) {
		if ((ms = ctl_conn_remaining_ms(c)) == 0) {
			ctl_warnx(
			    "%s: no answer within %d s", c->path, c->timeout);
			return -1;
		}
		if ((r = poll(&pfd, 1, ms)) == -1 && errno != EINTR) {
			ctl_warnx("%s: poll: %s", c->path, strerror(errno));
			return -1;
		}
		if (r <= 0)
			continue;
		n = read(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len);
		if (n > 0) {
			c->in.len += (size_t)n;
			return 0;
		}
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == 0)
			ctl_warnx("%s: connection closed by robotsd", c->path);
		else
			ctl_warnx("%s: read: %s", c->path, strerror(errno));
		return -1;
	}
}

/* The next complete line (allocated, without '\n'); NULL (reported). */
static char *
ctl_conn_line(struct ctl_conn *c, size_t *len)
{
	size_t scanned = 0, n;
	char *nl, *line;

	for (;;) {
		nl = c->in.len > scanned
		         ? memchr(c->in.p + scanned, '\n', c->in.len - scanned)
		         : NULL;
		if (nl != NULL)
			break;
		scanned = c->in.len;
		if (ctl_conn_fill(c) == -1)
			return NULL;
	}
	n = (size_t)(nl - c->in.p);
	if ((line = malloc(n + 1)) == NULL) {
		ctl_warnx("out of memory");
		return NULL;
	}
	memcpy(line, c->in.p, n);
	line[n] = '\0';
	c->in.len -= n + 1;
	memmove(c->in.p, nl + 1, c->in.len);
	*len = n;
	return line;
}

/*
 * Whether an answer is for our request: its id is ours, or it is an error
 * the daemon could not tie to a request (id null or absent, e.g.
 * line_too_long); we have only one request in flight.
 */
static int
answer_is_ours(const json_t *ans)
{
	const json_t *id = json_object_get(ans, "id");

	if (json_is_integer(id))
		return json_integer_value(id) == CTL_REQUEST_ID;
	return (id == NULL || json_is_null(id)) &&
	       json_is_false(json_object_get(ans, "ok"));
}

/* Read lines until our answer; other ids are skipped. NULL (reported). */
static json_t *
ctl_conn_answer(struct ctl_conn *c, char **raw)
{
	json_error_t jerr;
	json_t *ans;
	char *line;
	size_t len;

	for (;;) {
		if ((line = ctl_conn_line(c, &len)) == NULL)
			return NULL;
		ans = json_loadb(line, len, 0, &jerr);
		if (!json_is_object(ans)) {
			ctl_warnx("%s: bad answer from robotsd: %s", c->path,
			    ans == NULL ? jerr.text : "not an object");
			json_decref(ans);
			free(line);
			return NULL;
		}
		if (answer_is_ours(ans)) {
			*raw = line;
			return ans;
		}
		json_decref(ans);
		free(line);
	}
}

/*
 * An ok:false answer's error: "CODE: MESSAGE"; for ping, the error config
 * says that robotsd is in config-error mode, with the message's cause.
 */
static void
ctl_report(const struct ctl *ctl, const json_t *err)
{
	const char *code = ctl_str_or(json_object_get(err, "code"), "error");
	const char *msg =
	    ctl_str_or(json_object_get(err, "message"), "no message");

	if (ctl->ping && strcmp(code, "config") == 0)
		ctl_warnx("robotsd is in config-error mode (it answers every "
		          "request with error config): %s",
		    msg);
	else
		ctl_warnx("%s: %s", code, msg);
}

/*
 * Open c, send req (an "id" is added; the reference is taken) and return
 * the answer with its raw line in *raw; an ok:false answer is reported
 * ("CODE: MESSAGE") and gives NULL, as does any failure. c stays open.
 */
static json_t *
ctl_conn_exchange(
    struct ctl_conn *c, const struct ctl *ctl, json_t *req, char **raw)
{
	json_t *ans = NULL, *err;
	char *line = NULL;

	*raw = NULL;
	if (req == NULL) {
		ctl_warnx("arguments must be valid UTF-8");
		return NULL;
	}
	json_object_set_new(req, "id", json_integer(CTL_REQUEST_ID));
	if ((line = json_dumps(req, JSON_COMPACT)) == NULL ||
	    ctl_conn_open(c, ctl) == -1 ||
	    ctl_conn_send(c, line, strlen(line)) == -1 ||
	    ctl_conn_send(c, "\n", 1) == -1 ||
	    (ans = ctl_conn_answer(c, raw)) == NULL)
		goto done;
	if (ctl->json)
		ctl_put_json(*raw);
	if (!json_is_true(json_object_get(ans, "ok"))) {
		err = json_object_get(ans, "error");
		ctl_report(ctl, err);
		json_decref(ans);
		ans = NULL;
	}
done:
	json_decref(req);
	free(line);
	return ans;
}

/*
 * Send req (an "id" is added; the reference is taken) and return the answer,
 * printing its raw line with --json. An ok:false answer is reported
 * ("CODE: MESSAGE") and gives NULL, as does any failure.
 */
json_t *
ctl_call(const struct ctl *ctl, json_t *req)
{
	struct ctl_conn c = { .fd = -1, .in = BUF_INIT(CTL_MAX_ANSWER) };
	char *raw;
	json_t *ans = ctl_conn_exchange(&c, ctl, req, &raw);

	ctl_conn_close(&c);
	free(raw);
	return ans;
}

/* Lines after a stream's first answer: no deadline. */
static int
stream_lines(struct ctl_conn *c, ctl_line_fn each, void *arg)
{
	json_error_t jerr;
	json_t *v;
	char *line;
	size_t len;
	int rc = 0;

	c->timeout = 0;
	while (rc == 0) {
		if ((line = ctl_conn_line(c, &len)) == NULL)
			return -1;
		if ((v = json_loadb(line, len, 0, &jerr)) == NULL ||
		    !json_is_object(v)) {
			ctl_warnx("%s: bad line from robotsd: %s", c->path,
			    v == NULL ? jerr.text : "not an object");
			rc = -1;
		} else
			rc = each(line, v, arg);
		json_decref(v);
		free(line);
	}
	return rc;
}

/* See robotsctl.h. */
int
ctl_stream(const struct ctl *ctl, json_t *req, ctl_line_fn each, void *arg)
{
	struct ctl_conn c = { .fd = -1, .in = BUF_INIT(CTL_MAX_ANSWER) };
	char *raw;
	json_t *ans = ctl_conn_exchange(&c, ctl, req, &raw);
	int rc = -1;

	fflush(stdout);
	if (ans != NULL)
		rc = stream_lines(&c, each, arg);
	ctl_conn_close(&c);
	json_decref(ans);
	free(raw);
	return rc;
}
