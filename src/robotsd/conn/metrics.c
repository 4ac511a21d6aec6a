/*
 * metrics.c: the optional Prometheus text endpoint on evhttp. Owns the
 * evhttp server; formats the counters table it is handed (metric.h) at
 * request time, with robotsd_build_info and the process metrics (from
 * /proc/self) after it, and answers /healthz from the daemon's state.
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "base/histo.h"
#include "conn/metrics.h"
#include "base/parse.h"
#include "base/xmalloc.h"

struct metrics {
	stats_fn stats;
	void *stats_arg;
	struct evhttp *http;
	enum metrics_health health;
};

/* "# HELP" and "# TYPE" when v starts a family (prev is the sample before). */
static void
metrics_family(
    struct evbuffer *out, const struct metric *v, const struct metric *prev)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	if (prev != NULL && strcmp(prev->prom, v->prom) == 0)
		return;
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", v->prom,
	    v->help, v->prom, types[v->type]);
}

/* A histogram's buckets, sum and count; label ('k="v",...') or NULL. */
static void
metrics_histogram(struct evbuffer *out, const char *prom, const char *label,
    const struct histo *h)
{
	const char *l = label != NULL ? label : "",
	           *c = label != NULL ? "," : "";
	const char *o = label != NULL ? "{" : "", *e = label != NULL ? "}" : "";
	size_t i;

	for (i = 0; i < HISTO_BUCKETS; i++)
		evbuffer_add_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n",
		    prom, l, c, histo_bounds[i],
		    (unsigned long long)histo_cumulative(h, i));
	evbuffer_add_printf(out,
	    "%s_bucket{%s%sle=\"+Inf\"} %llu\n%s_sum%s%s%s %.9g\n"
	    "%s_count%s%s%s %llu\n",
	    prom, l, c, (unsigned long long)h->count, prom, o, l, e, h->sum,
	    prom, o, l, e, (unsigned long long)h->count);
}

/* The counters table, in the exposition format. */
static void
metrics_table(struct metrics *m, struct evbuffer *out)
{
	struct metric v[METRICS_MAX];
	size_t i, n = m->stats(m->stats_arg, v);

	for (i = 0; i < n; i++) {
		metrics_family(out, &v[i], i > 0 ? &v[i - 1] : NULL);
		if (v[i].type == METRIC_HISTOGRAM)
			metrics_histogram(
			    out, v[i].prom, v[i].label, v[i].histo);
		else if (v[i].label != NULL)
			evbuffer_add_printf(out, "%s{%s} %llu\n", v[i].prom,
			    v[i].label, (unsigned long long)v[i].value);
		else
			evbuffer_add_printf(out, "%s %llu\n", v[i].prom,
			    (unsigned long long)v[i].value);
	}
}

/* Open file descriptors: the entries of /proc/self/fd; -1 if unknown. */
static long
metrics_open_fds(void)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* The boot time (seconds since the epoch) from /proc/stat; 0 if unknown. */
static double
metrics_boot_time(void)
{
	unsigned long long btime = 0;
	char line[256];
	FILE *f;

	if ((f = fopen("/proc/stat", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return (double)btime;
}

/* The process metrics of the Prometheus client libraries, from /proc. */
static void
metrics_process(struct evbuffer *out)
{
	unsigned long long ut, st, start, rss;
	double tck = (double)sysconf(_SC_CLK_TCK);
	char buf[1024], *p;
	long fds = metrics_open_fds();
	FILE *f;
	size_t n;

	if ((f = fopen("/proc/self/stat", "r")) == NULL)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After "pid (comm)": fields 3.. ; utime is 14, rss 24. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2,
	        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
	        "%*d %*d %*d %*d %*d %*d %llu %*u %llu",
	        &ut, &st, &start, &rss) != 4 ||
	    tck <= 0)
		return;
	evbuffer_add_printf(out,
	    "# HELP process_cpu_seconds_total User and system CPU time.\n"
	    "# TYPE process_cpu_seconds_total counter\n"
	    "process_cpu_seconds_total %.2f\n"
	    "# HELP process_resident_memory_bytes Resident memory.\n"
	    "# TYPE process_resident_memory_bytes gauge\n"
	    "process_resident_memory_bytes %llu\n"
	    "# HELP process_start_time_seconds Start time since the epoch.\n"
	    "# TYPE process_start_time_seconds gauge\n"
	    "process_start_time_seconds %.2f\n",
	    (double)(ut + st) / tck,
	    rss * (unsigned long long)sysconf(_SC_PAGESIZE),
	    metrics_boot_time() + (double)start / tck);
	if (fds >= 0)
		evbuffer_add_printf(out,
		    "# HELP process_open_fds Open file descriptors.\n"
		    "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
		    fds);
}

/* GET /metrics: the Prometheus text exposition format. */
static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	struct evbuffer *out;

	if ((out = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	metrics_table(m, out);
	evbuffer_add_printf(out,
	    "# HELP robotsd_build_info The running robotsd's version.\n"
	    "# TYPE robotsd_build_info gauge\n"
	    "robotsd_build_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	metrics_process(out);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* GET /healthz: 200 "serving" while serving, else 503 and the state. */
static void
metrics_healthz_cb(struct evhttp_request *req, void *arg)
{
	static const char *const names[] = { "starting", "serving",
		"stopping" };
	struct metrics *m = arg;
	struct evbuffer *out;

	if ((out = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evbuffer_add_printf(out, "%s\n", names[m->health]);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	if (m->health == METRICS_SERVING)
		evhttp_send_reply(req, 200, "OK", out);
	else
		evhttp_send_reply(req, 503, "Service Unavailable", out);
	evbuffer_free(out);
}

/* What /healthz answers from now on. */
void
metrics_set_health(struct metrics *m, enum metrics_health h)
{
	if (m != NULL)
		m->health = h;
}

/* Anything but /metrics and /healthz. */
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
	evhttp_set_cb(m->http, "/healthz", metrics_healthz_cb, m);
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
