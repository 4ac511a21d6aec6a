/*
 * sd.h: systemd integration. Readiness, reload and stop notifications
 * (sd_notify) and socket activation (LISTEN_FDS). Built without libsystemd,
 * every call is a harmless no-op and sysd_listen_fd() returns -1.
 */
#ifndef ROBOTSD_SD_H
#define ROBOTSD_SD_H

/* 1 when started by systemd (NOTIFY_SOCKET, LISTEN_FDS or JOURNAL_STREAM). */
int sysd_detected(void);
/*
 * A listening Unix stream socket passed by socket activation, or -1 when
 * there is none. The fd is non-blocking and close-on-exec on return.
 */
int sysd_listen_fd(void);
void sysd_ready(void);
void sysd_reloading(void);
void sysd_stopping(void);
/* A one-line status for "systemctl status" (printf format). */
void sysd_status(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif /* ROBOTSD_SD_H */
