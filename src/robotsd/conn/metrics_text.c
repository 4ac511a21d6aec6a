/*
 * metrics_text.c: the body of GET /metrics in the Prometheus text
 * exposition format: the counters table it is handed (metric.h), then
 * robotsd_build_info and the process metrics of the Prometheus client
 * libraries (from /proc/self). Knows nothing of HTTP (metrics.c).
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "base/histo.h"
#include "conn/metrics_text.h"

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
metrics_table(stats_fn stats, void *stats_arg, struct evbuffer *out)
{
	struct metric v[METRICS_MAX];
	size_t i, n = stats(stats_arg, v);

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

/*
 * The boot time, seconds since the epoch: the wall clock less the time
 * since boot (CLOCK_BOOTTIME, the clock of /proc/self/stat's start time).
 * Not /proc/stat's btime, which a unit's ProcSubset=pid hides; 0 if unknown.
 */
static double
metrics_boot_time(void)
{
	struct timespec now, up;
	double secs;

	if (clock_gettime(CLOCK_REALTIME, &now) == -1 ||
	    clock_gettime(CLOCK_BOOTTIME, &up) == -1)
		return 0;
	secs = (double)(now.tv_sec - up.tv_sec);
	return secs + (double)(now.tv_nsec - up.tv_nsec) / 1e9;
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

/* The /metrics body: the table, the build info, the process. */
void
metrics_body(stats_fn stats, void *stats_arg, struct evbuffer *out)
{
	metrics_table(stats, stats_arg, out);
	evbuffer_add_printf(out,
	    "# HELP robotsd_build_info The running robotsd's version.\n"
	    "# TYPE robotsd_build_info gauge\n"
	    "robotsd_build_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	metrics_process(out);
}
