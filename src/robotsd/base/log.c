/*
 * log.c: robotsd's logging. Owns the current level and the sink (see
 * log_sink_pick()): when stderr is the systemd journal (JOURNAL_STREAM),
 * "<N>level: msg" lines with the priority prefix of sd-daemon(3), since the
 * journal records time and pid itself; else in the foreground,
 * "2026-11-23T07:50:00Z robotsd[pid]: level: msg" on stderr; else (a
 * daemon, whose stderr daemon() points at /dev/null) syslog, facility
 * daemon, "level: msg" at the message's priority. The syslog socket is
 * opened by log_init() (LOG_NDELAY), before daemon(), and kept across it.
 * While stderr is still a terminal (errors before daemon()), syslog lines
 * are also written there as "robotsd[pid]: level: msg".
 * Also escapes untrusted bytes for log lines, formats key=value event
 * lines (log_event()) and rate-limits them per event name.
 */
#include <config.h>

#include <sys/stat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define LOG_LINE_MAX 4096

static enum log_sink log_sink = LOG_SINK_STDERR;
static int log_level = LOG_INFO;

static void log_vwrite(int, int, const char *, va_list)
    __attribute__((format(printf, 3, 0)));
static void log_line(int, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* See log.h. */
int
log_fd_is_journal(int fd)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;
	char c;

	if (js == NULL || sscanf(js, "%llu:%llu%c", &dev, &ino, &c) != 2)
		return 0;
	if (fstat(fd, &sb) == -1)
		return 0;
	return (unsigned long long)sb.st_dev == dev &&
	       (unsigned long long)sb.st_ino == ino;
}

/* 1 when stderr is the systemd journal. */
static int
log_stderr_is_journal(void)
{
	return log_fd_is_journal(STDERR_FILENO);
}

/* The sink: the journal when stderr is it, stderr in the foreground, syslog. */
enum log_sink
log_sink_pick(int foreground, int journal)
{
	if (journal)
		return LOG_SINK_JOURNAL;
	return foreground ? LOG_SINK_STDERR : LOG_SINK_SYSLOG;
}

/* Choose the sink (opening or closing syslog) and the level. */
void
log_init(int foreground, int level)
{
	enum log_sink sink = log_sink_pick(foreground, log_stderr_is_journal());

	if (sink == LOG_SINK_SYSLOG && log_sink != LOG_SINK_SYSLOG)
		openlog("robotsd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (sink != LOG_SINK_SYSLOG && log_sink == LOG_SINK_SYSLOG)
		closelog();
	log_sink = sink;
	log_set_level(level);
}

/* Change the level (SIGHUP reload). */
void
log_set_level(int level)
{
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	log_level = level;
}

/* 1 when messages of this level are written. */
int
log_enabled(int level)
{
	return level <= log_level;
}

/* The name a level has in a log line. */
static const char *
log_level_name(int level)
{
	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
	case LOG_NOTICE:
		return "warn";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

/* Format one message and write it as a single line; errnum 0: none. */
static void
log_vwrite(int level, int errnum, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX], ts[32];
	struct tm tm;
	time_t now;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_sink == LOG_SINK_JOURNAL) {
		fprintf(stderr, "<%d>%s: %s%s%s\n", level,
		    log_level_name(level), msg, errnum ? ": " : "",
		    errnum ? strerror(errnum) : "");
		return;
	}
	if (log_sink == LOG_SINK_SYSLOG) {
		syslog(level, "%s: %s%s%s", log_level_name(level), msg,
		    errnum ? ": " : "", errnum ? strerror(errnum) : "");
		if (!isatty(STDERR_FILENO))
			return;
	}
	ts[0] = '\0';
	if (log_sink == LOG_SINK_STDERR) {
		now = time(NULL);
		if (gmtime_r(&now, &tm) != NULL)
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	}
	fprintf(stderr, "%srobotsd[%ld]: %s: %s%s%s\n", ts, (long)getpid(),
	    log_level_name(level), msg, errnum ? ": " : "",
	    errnum ? strerror(errnum) : "");
}

/* One line at level, no errno. */
static void
log_line(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, 0, fmt, ap);
	va_end(ap);
}

/* An error that robotsd survives (or exits after itself), no errno. */
void
log_errx(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_ERR, 0, fmt, ap);
	va_end(ap);
	errno = saved;
}

/*
 * An error before log_init() (a bad command line or config file): always
 * on stderr as "robotsd: msg", with the "<3>" (LOG_ERR) prefix when stderr
 * is the journal, so that "journalctl -p err" shows it.
 */
void
log_startup_error(const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%srobotsd: %s\n", log_stderr_is_journal() ? "<3>" : "",
	    msg);
}

/* A warning followed by ": strerror(errno)"; errno is kept. */
void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (log_enabled(LOG_WARNING)) {
		va_start(ap, fmt);
		log_vwrite(LOG_WARNING, saved, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* A warning without errno. */
void
log_warnx(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (log_enabled(LOG_WARNING)) {
		va_start(ap, fmt);
		log_vwrite(LOG_WARNING, 0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* An informational message. */
void
log_info(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (log_enabled(LOG_INFO)) {
		va_start(ap, fmt);
		log_vwrite(LOG_INFO, 0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* A debug message. */
void
log_debug(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (log_enabled(LOG_DEBUG)) {
		va_start(ap, fmt);
		log_vwrite(LOG_DEBUG, 0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* Log an error with ": strerror(errno)" and exit(1). */
void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Log an error and exit(1). */
void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_ERR, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* The C-style escape of one byte into e (at most 4 bytes); its length. */
static size_t
log_escape_byte(unsigned char c, char *e)
{
	static const char hex[] = "0123456789abcdef";
	const char *esc = NULL;

	switch (c) {
	case '\n':
		esc = "\\n";
		break;
	case '\r':
		esc = "\\r";
		break;
	case '\t':
		esc = "\\t";
		break;
	case '\\':
		esc = "\\\\";
		break;
	case '"':
		esc = "\\\"";
		break;
	}
	if (esc != NULL) {
		memcpy(e, esc, 2);
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		e[0] = (char)c;
		return 1;
	}
	e[0] = '\\';
	e[1] = 'x';
	e[2] = hex[c >> 4];
	e[3] = hex[c & 0xf];
	return 4;
}

/*
 * Escape at most max bytes of s into buf. When input is left over (beyond
 * max, or beyond what buf holds), the output ends in "..." instead.
 */
const char *
log_escape(const char *s, size_t len, size_t max, char *buf, size_t bufsz)
{
	size_t i, n, o = 0, el, mark = 0;
	char e[4];

	if (bufsz == 0)
		return buf;
	if (s == NULL)
		s = "(null)", len = 6;
	n = len < max ? len : max;
	for (i = 0; i < n; i++) {
		el = log_escape_byte((unsigned char)s[i], e);
		if (o + el + 1 > bufsz)
			break;
		memcpy(buf + o, e, el);
		o += el;
		if (o + 4 <= bufsz)
			mark = o;
	}
	if (i < len) {
		o = mark;
		if (o + 4 <= bufsz) {
			memcpy(buf + o, "...", 3);
			o += 3;
		}
	}
	buf[o] = '\0';
	return buf;
}

/* 1 when byte c may stand in a bare (unquoted) key=value value. */
static int
log_kv_bare(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\';
}

/* A key=value value: bare, or quoted with C-style escapes inside. */
const char *
log_kv(const char *s, size_t len, size_t max, char *buf, size_t bufsz)
{
	size_t i;

	if (bufsz < 3) {
		if (bufsz > 0)
			buf[0] = '\0';
		return buf;
	}
	i = 0;
	while (s != NULL && i < len && log_kv_bare((unsigned char)s[i]))
		i++;
	if (s != NULL && len > 0 && i == len && len <= max && len < bufsz) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		return buf;
	}
	buf[0] = '"';
	log_escape(s, len, max, buf + 1, bufsz - 2);
	i = strlen(buf);
	buf[i] = '"';
	buf[i + 1] = '\0';
	return buf;
}

/* log_kv() of a C string; NULL is "-". */
const char *
log_kvs(const char *s, char *buf, size_t bufsz)
{
	if (s == NULL)
		s = "-";
	return log_kv(s, strlen(s), LOG_KV_MAX, buf, bufsz);
}

/* Refill b for the time since its last use, then take a token if any. */
int
log_bucket_take(struct log_bucket *b, double now, double burst, double rate)
{
	if (!b->primed || now < b->last) {
		b->tokens = burst;
		b->last = now;
		b->primed = 1;
	}
	b->tokens += (now - b->last) * rate;
	if (b->tokens > burst)
		b->tokens = burst;
	b->last = now;
	if (b->tokens < 1) {
		b->suppressed++;
		return 0;
	}
	b->tokens -= 1;
	return 1;
}

#define LOG_KINDS 32

/* The bucket of an event name (the last slot is shared once all are used). */
static struct log_bucket *
log_bucket_of(const char *event)
{
	static struct {
		char name[32];
		struct log_bucket b;
	} kinds[LOG_KINDS];
	size_t i;

	for (i = 0; i < LOG_KINDS - 1 && kinds[i].name[0] != '\0'; i++)
		if (strcmp(kinds[i].name, event) == 0)
			return &kinds[i].b;
	if (i < LOG_KINDS - 1)
		snprintf(kinds[i].name, sizeof(kinds[i].name), "%s", event);
	return &kinds[i].b;
}

/* Seconds on the monotonic clock. */
static double
log_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void log_vevent(int, const char *, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

/* Write one event line, unless its kind is over its rate. */
static void
log_vevent(int level, const char *event, const char *fmt, va_list ap)
{
	struct log_bucket *b = log_bucket_of(event);
	char msg[LOG_LINE_MAX];

	if (!log_bucket_take(
	        b, log_monotonic(), LOG_EVENT_BURST, LOG_EVENT_RATE))
		return;
	if (b->suppressed > 0) {
		log_line(level, "event=log_suppressed kind=%s lines=%lu", event,
		    b->suppressed);
		b->suppressed = 0;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_line(level, "event=%s%s%s", event, msg[0] != '\0' ? " " : "", msg);
}

/* See log.h. */
void
log_event(int level, const char *event, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (log_enabled(level)) {
		va_start(ap, fmt);
		log_vevent(level, event, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* "error", "warn", "info" or "debug" to a <syslog.h> level; -1 if none. */
int
log_level_parse(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} levels[] = {
		{ "error", LOG_ERR },
		{ "warn", LOG_WARNING },
		{ "info", LOG_INFO },
		{ "debug", LOG_DEBUG },
	};
	size_t i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (s != NULL && strcmp(s, levels[i].name) == 0)
			return levels[i].level;
	return -1;
}
