/*
 * config.h: robotsd's options. One table drives the command line, the
 * config file (robotsd.conf(5): "name value" lines, '#' comments), --help and
 * SIGHUP reload. Options given on the command line win over the file.
 */
#ifndef ROBOTSD_CONFIG_H
#define ROBOTSD_CONFIG_H

#include <stddef.h>

struct connect_to {
	char *spec; /* "H:P:H2:P2" as given, handed to curl */
};

struct config {
	char *config_file; /* NULL: none */
	char *socket_path;
	int foreground;
	unsigned socket_mode;
	char *user_agent;
	char **connect_to; /* NULL-terminated list of "H:P:H2:P2" */
	size_t nconnect_to;
	char *ca_file;
	long default_ttl;
	long min_ttl;
	long max_ttl;
	long fetch_timeout;
	long max_fetches;
	unsigned long long cache_max_bytes;
	char *state_file;
	long state_save_interval; /* seconds; 0: save only at exit */
	long retry_min;
	long retry_max;
	long retry_503_min;
	long retry_503_max;
	long unreachable_allow_after;
	long max_connections;
	long max_waiting;
	int deny_private_addresses;
	char **redis; /* NULL-terminated --redis URLs, or NULL: none */
	size_t nredis;
	long redis_timeout;   /* milliseconds */
	long redis_lock_time; /* seconds */
	char *metrics;
	int log_level;      /* LOG_ERR .. LOG_DEBUG from <syslog.h> */
	size_t max_line;    /* request line limit, bytes (64 KiB) */
	size_t max_output;  /* per-connection queued output limit, bytes */
	long write_timeout; /* seconds a client may leave answers unread */
	int test_clock;     /* hidden: accept the "clock" op (tests only) */
	int check_only;     /* -n: check the configuration and exit */
	int argc;           /* private copy of argv, re-applied on reload */
	char **argv;
};

/*
 * Build a config from defaults, the config file and argv. Returns NULL and
 * sets *cause (allocated, e.g. "robotsd.conf:12: unknown option 'x'") on
 * error; *exit_now is set (with *cause NULL) after --help or --version.
 */
struct config *config_load(int argc, char **argv, int *exit_now, char **cause);
/* Re-read the file for SIGHUP, keeping what argv said; NULL + *cause on error.
 */
struct config *config_reload(const struct config *, char **cause);
void config_free(struct config *); /* NULL is fine */

#endif /* ROBOTSD_CONFIG_H */
