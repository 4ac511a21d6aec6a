/*
 * metrics.c: the optional Prometheus text endpoint on evhttp. Owns the
 * evhttp server; formats the counters table it is handed (metric.h) at
 * request time.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "conf.h"
#include "metrics.h"
#include "parse.h"
#include "xmalloc.h"

struct metrics {
	stats_fn stats;
	void *stats_arg;
	struct evhttp *http;
};

/* GET /metrics: the Prometheus text exposition format. */
static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	struct metric v[METRICS_MAX];
	struct evbuffer *out;
	size_t i, n;

	if ((out = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	n = m->stats(m->stats_arg, v);
	for (i = 0; i < n; i++) {
		/* One HELP and TYPE for the labelled series of a name. */
		if (i == 0 || strcmp(v[i].prom, v[i - 1].prom) != 0)
			evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n",
			    v[i].prom, v[i].help, v[i].prom,
			    v[i].type == METRIC_COUNTER ? "counter" : "gauge");
		evbuffer_add_printf(out, "%s%s%s%s %llu\n", v[i].prom,
		    v[i].label != NULL ? "{" : "",
		    v[i].label != NULL ? v[i].label : "",
		    v[i].label != NULL ? "}" : "",
		    (unsigned long long)v[i].value);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* Anything but /metrics. */
static void
metrics_404_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, 404, NULL);
}

/* Listen for GET /metrics; see metrics.h. */
struct metrics *
metrics_new(struct event_base *base, const char *addr, stats_fn stats,
    void *stats_arg, char **cause)
{
	struct metrics *m;
	unsigned short port;
	char *host;

	if (parse_hostport(addr, &host, &port) == -1) {
		xasprintf(cause, "metrics: '%s' is not ADDR:PORT", addr);
		return NULL;
	}
	m = xcalloc(1, sizeof(*m));
	m->stats = stats;
	m->stats_arg = stats_arg;
	if ((m->http = evhttp_new(base)) == NULL ||
	    evhttp_bind_socket(m->http, host, port) == -1) {
		xasprintf(cause, "metrics: cannot listen on %s", addr);
		metrics_free(m);
		free(host);
		return NULL;
	}
	free(host);
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	/* A scraper sends a short GET; anything else is cut off early. */
	evhttp_set_max_headers_size(m->http, 8192);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_timeout(m->http, 10);
	evhttp_set_cb(m->http, "/metrics", metrics_cb, m);
	evhttp_set_gencb(m->http, metrics_404_cb, m);
	return m;
}

/* Stop serving and free. */
void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	if (m->http != NULL)
		evhttp_free(m->http);
	free(m);
}
