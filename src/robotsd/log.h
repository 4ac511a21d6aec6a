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
/* Parse "error", "warn", "info", "debug"; -1 if unknown. */
int log_level_parse(const char *);

#endif /* ROBOTSD_LOG_H */
