/*
 * log.h: logging to stderr (foreground, with timestamps), to the journal
 * via stderr without timestamps under systemd, or else to syslog (a
 * daemon). Levels as <syslog.h>.
 * Untrusted text (URLs, agents, bodies) must go through log_escape() first.
 */
#ifndef ROBOTSD_LOG_H
#define ROBOTSD_LOG_H

#include <stddef.h>
#include <syslog.h>

enum log_sink {
	LOG_SINK_STDERR,  /* timestamped lines on stderr */
	LOG_SINK_JOURNAL, /* "<N>" lines on stderr, which is the journal */
	LOG_SINK_SYSLOG,  /* syslog(3), facility daemon */
};

/*
 * Pick the sink from whether robotsd stays in the foreground and whether
 * stderr is the journal ($JOURNAL_STREAM), open syslog if that is it (before
 * daemon(): the connection is kept across it), and set the level.
 */
void log_init(int foreground, int level);
/* 1 when fd is the stream named by $JOURNAL_STREAM ("dev:ino"). */
int log_fd_is_journal(int fd);
/* The sink log_init() picks: journal, else stderr if foreground, else syslog.
 */
enum log_sink log_sink_pick(int foreground, int journal);
void log_set_level(int level);
int log_enabled(int level);
void log_errx(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Before log_init(): "robotsd: msg" on stderr ("<3>" first if the journal). */
void log_startup_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
/*
 * Escape untrusted bytes for a log line (C-style escapes, at most max bytes
 * of input, "..." when cut) into buf of size bufsz; returns buf.
 */
const char *log_escape(
    const char *s, size_t len, size_t max, char *buf, size_t bufsz);
/*
 * A value for a key=value field: bare when every byte is printable ASCII
 * other than space, '"', '=' and '\\' (and s is not empty), else quoted
 * "..." with log_escape() inside (at most max input bytes). Returns buf.
 */
const char *log_kv(
    const char *s, size_t len, size_t max, char *buf, size_t bufsz);
/* log_kv() of a NUL-terminated string (NULL: "-"), at most 200 bytes. */
#define LOG_KV_MAX 200
#define LOG_KV_BUF (LOG_KV_MAX * 4 + 8)
const char *log_kvs(const char *s, char *buf, size_t bufsz);

/*
 * One event line: "event=NAME" then fmt's "key=value ..." fields (values
 * from untrusted text through log_kv()). Each event name has its own token
 * bucket (LOG_EVENT_BURST lines, refilled LOG_EVENT_RATE a second), so that
 * a hostile origin or client cannot flood the log; the first line of a
 * kind let through after some were dropped is preceded by "event=
 * log_suppressed kind=NAME lines=N".
 */
#define LOG_EVENT_BURST 200.0
#define LOG_EVENT_RATE 50.0
void log_event(int level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A token bucket (exposed for its tests). */
struct log_bucket {
	double tokens;            /* lines that may be written now */
	double last;              /* when tokens was last refilled, seconds */
	int primed;               /* tokens and last are set */
	unsigned long suppressed; /* lines dropped since the last one written */
};
/* 1: take a token (a line may be written); 0: suppressed (counted). */
int log_bucket_take(struct log_bucket *, double now, double burst, double rate);

/* Parse "error", "warn", "info", "debug"; -1 if unknown. */
int log_level_parse(const char *);

#endif /* ROBOTSD_LOG_H */
