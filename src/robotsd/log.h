/*
 * log.h: logging to stderr (foreground, with timestamps) or to the journal
 * via stderr without timestamps under systemd. Levels as <syslog.h>.
 * Untrusted text (URLs, agents, bodies) must go through log_escape() first.
 */
#ifndef ROBOTSD_LOG_H
#define ROBOTSD_LOG_H

#include <stddef.h>
#include <syslog.h>

void log_init(int foreground, int level);
void log_set_level(int level);
int log_enabled(int level);
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
