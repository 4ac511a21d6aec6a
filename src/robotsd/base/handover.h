/*
 * handover.h: client connections handed from one robotsd image to the
 * next across execv() in the same process (the re-exec out of config-error
 * mode), so that no request or answer in flight is lost. The old image
 * writes each connection's socket number, its state and the bytes it holds
 * (requests read but not handled, answers not yet written) into a memfd
 * named by $ROBOTSD_HANDOVER ("PID:FD"); the new image adopts each socket
 * that checks out as a connected, non-listening AF_UNIX stream socket and
 * ignores whatever else the variable or the file says.
 */
#ifndef ROBOTSD_HANDOVER_H
#define ROBOTSD_HANDOVER_H

#include <stddef.h>
#include <sys/types.h>

/* Carried bytes per connection at most (more: the record is ignored). */
#define HANDOVER_MAX_IN (1 << 20)
#define HANDOVER_MAX_OUT (4 << 20)

/* One connection as handed over. */
struct handover_conn {
	int fd;
	int skipping;   /* inside an over-long line, already answered */
	int closing;    /* read no more: close once out is written */
	const char *in; /* request bytes read, not handled */
	size_t inlen;
	const char *out; /* answer bytes not yet written */
	size_t outlen;
};

/* The old image's side: the memfd being written. */
struct handover {
	int fd;
	off_t off;
};

/* Start a hand-over; -1 when no memfd can be had. */
int handover_open(struct handover *);
/*
 * Add h (its fd made inheritable); -1 if it cannot be recorded (then the
 * caller closes the connection).
 */
int handover_add(struct handover *, const struct handover_conn *h);
/* Name the hand-over in the environment for execv(); -1 on failure. */
int handover_pass_on(struct handover *);

/*
 * The new image's side: call adopt for every connection handed over to
 * this process (its fd made non-blocking and close-on-exec), then forget
 * the variable. The number adopted.
 */
size_t handover_take(
    void (*adopt)(void *arg, const struct handover_conn *), void *arg);

#endif /* ROBOTSD_HANDOVER_H */
