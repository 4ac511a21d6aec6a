/*
 * cfgerr.c: the config-error mode's sessions (cfgerr.h) on the line
 * server (server.h): every request line is answered with the error
 * "config", nothing else: no cache, no fetches, no config. The server
 * does the rest as in normal service, with the options' defaults: request
 * lines of max-line's 64 KiB (an over-long one is answered once with id
 * null and skipped), max-connections' 4096 (one more is answered once
 * with id null and closed), write-timeout's 60 seconds, the output of all
 * clients together bounded by max-output-total's default; a client that
 * does not read its answers is paused past CFGERR_MAX_OUTPUT / 2.
 */
#include <config.h>

#include <stdlib.h>

#include "wire/buf.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "conn/cfgerr.h"
#include "conn/server.h"
#include "iface/reply.h"
#include "iface/session_ops.h"
#include "wire/proto.h"

#define CFGERR_MAX_LINE 65536           /* max-line's default */
#define CFGERR_MAX_CONNECTIONS 4096     /* max-connections' default */
#define CFGERR_MAX_OUTPUT (512 * 1024)  /* paused past half of it */
#define CFGERR_OUTPUT_BUDGET (64 << 20) /* max-output-total's default */
#define CFGERR_WRITE_TIMEOUT 60         /* write-timeout's default */
#define CFGERR_MAX_MESSAGE 1024         /* bytes of the message answered */

struct cfgerr {
	struct server *srv;
	char *message;      /* the answers' "message" */
	struct buf refusal; /* the answer with id null */
};

/* One client: where its answers go. */
struct cfgerr_session {
	struct cfgerr *ce;
	struct reply *out;
};

/* session_ops.h's open: a client of config-error mode arg. */
static void *
cfgerr_open(void *arg, struct reply *out, int admin)
{
	struct cfgerr_session *s = xcalloc(1, sizeof(*s));

	(void)admin;
	s->ce = arg;
	s->out = out;
	return s;
}

/* The answer to one line: the error "config" with id (NULL: null). */
static void
cfgerr_answer(struct cfgerr_session *s, const json_t *id)
{
	struct buf b = BUF_INIT(0);

	proto_error(&b, id, PE_CONFIG, s->ce->message);
	if (b.state == BUF_OK)
		s->out->ops->send(s->out, NULL, b.p, b.len); /* not timed */
	buf_clear(&b);
}

/* session_ops.h's line: blank lines are not answered. */
static void
cfgerr_line(void *arg, const char *line, size_t len)
{
	struct cfgerr_session *s = arg;
	struct request req;
	enum proto_err err;
	const char *msg;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	/* Decoded only for its id: whatever it asks, the answer is "config". */
	(void)proto_decode(line, len, 0, &req, &err, &msg);
	cfgerr_answer(s, req.id);
	proto_request_clear(&req);
}

/* session_ops.h's too_long: the answer with id null. */
static void
cfgerr_too_long(void *arg, size_t limit)
{
	(void)limit;
	cfgerr_answer(arg, NULL);
}

/* session_ops.h's free. */
static void
cfgerr_session_free(void *s)
{
	free(s);
}

/* session_ops.h's refusal: the answer with id null. */
static const char *
cfgerr_refusal(void *arg, size_t *len)
{
	struct cfgerr *ce = arg;

	*len = ce->refusal.len;
	return ce->refusal.p;
}

static const struct session_ops cfgerr_session_ops = { cfgerr_open, cfgerr_line,
	cfgerr_too_long, NULL, NULL, cfgerr_session_free, cfgerr_refusal };

/* The message answered; see cfgerr.h. */
void
cfgerr_set_message(struct cfgerr *ce, const char *message)
{
	free(ce->message);
	xasprintf(&ce->message, "%.*s", CFGERR_MAX_MESSAGE, message);
	buf_clear(&ce->refusal);
	proto_error(&ce->refusal, NULL, PE_CONFIG, ce->message);
	if (ce->refusal.state != BUF_OK)
		fatalx("out of memory setting the config error");
}

/* Serve fd; see cfgerr.h. */
struct cfgerr *
cfgerr_new(struct event_base *base, int fd)
{
	struct server_settings set = {
		.max_line = CFGERR_MAX_LINE,
		.max_output = CFGERR_MAX_OUTPUT,
		.output_budget = CFGERR_OUTPUT_BUDGET,
		.write_timeout = CFGERR_WRITE_TIMEOUT,
		.max_connections = CFGERR_MAX_CONNECTIONS,
		.admin_gid = -1,
		.keep_fd = 1,
	};
	struct cfgerr *ce = xcalloc(1, sizeof(*ce));
	char *cause = NULL;

	ce->refusal = BUF_INIT(0);
	cfgerr_set_message(ce, "robotsd's configuration is not in effect");
	ce->srv = server_new(base, &cfgerr_session_ops, ce, &set);
	if (server_listen(ce->srv, &set, fd, &cause) == -1) {
		free(cause);
		cfgerr_free(ce);
		return NULL;
	}
	return ce;
}

/* Close the connections; the listening fd stays open (see cfgerr.h). */
void
cfgerr_free(struct cfgerr *ce)
{
	if (ce == NULL)
		return;
	server_free(ce->srv);
	free(ce->message);
	buf_clear(&ce->refusal);
	free(ce);
}

/* Adopt what the image before handed over; see cfgerr.h. */
void
cfgerr_take_over(struct cfgerr *ce)
{
	server_take_over(ce->srv);
}

/* Hand the connections over, then free; see cfgerr.h. */
void
cfgerr_hand_over(struct cfgerr *ce)
{
	server_hand_over(ce->srv);
	ce->srv = NULL;
	cfgerr_free(ce);
}

/* robotsd_config_error; see cfgerr.h. */
struct metric
cfgerr_metric(int on)
{
	return (struct metric){ NULL, "robotsd_config_error",
		"1 while robotsd answers every request with error config "
		"(its config does not load or start), else 0.",
		METRIC_GAUGE, on != 0, NULL, NULL };
}
