/*
 * cfgerr.h: robotsd's config-error mode. When the config file does not
 * load and the service manager handed robotsd its listening socket, robotsd
 * keeps that socket and answers every request line on it with the error
 * "config", naming the file, line and cause, instead of exiting: the
 * socket keeps listening, clients learn why, and no start limit is spent.
 */
#ifndef ROBOTSD_CFGERR_H
#define ROBOTSD_CFGERR_H

#include "iface/metric.h"

struct event_base;
struct cfgerr;

/*
 * Serve the listening socket fd on base with the line server (server.h),
 * answering every request line "config" with the message set by
 * cfgerr_set_message(). fd stays open when the mode ends (cfgerr_free()).
 */
struct cfgerr *cfgerr_new(struct event_base *, int fd);
/*
 * The message answered from now on (its first 1024 bytes): why the config
 * is not in effect, with the config loader's "FILE:LINE: MESSAGE".
 */
void cfgerr_set_message(struct cfgerr *, const char *message);
/* Close every connection and stop listening; the listening fd stays open. */
void cfgerr_free(struct cfgerr *);
/*
 * The re-exec: stop accepting and hand every connection, with the
 * requests read but not answered and the answers not yet written, to the
 * image executed next (handover.h); then cfgerr_free(). Without a memfd
 * the connections are closed.
 */
void cfgerr_hand_over(struct cfgerr *);
/* Adopt the connections the image before handed over, if any. */
void cfgerr_take_over(struct cfgerr *);
/*
 * The sample robotsd_config_error (on /metrics only): 1 (on) in
 * config-error mode, whose counters table is that one sample; 0 in the
 * serving daemon's (stats.c).
 */
struct metric cfgerr_metric(int on);

#endif /* ROBOTSD_CFGERR_H */
