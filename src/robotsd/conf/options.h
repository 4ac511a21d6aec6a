/*
 * options.h: robotsd's options: struct config, what they parse into, and
 * the one table (options.c) that drives the command line, the config file
 * (robotsd.conf(5)), --help, the defaults and SIGHUP reload. Loading them
 * from argv and the file is conf.c's.
 */
#ifndef ROBOTSD_OPTIONS_H
#define ROBOTSD_OPTIONS_H

#include <stddef.h>

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
	long history_depth;
	char *tdmrep; /* --tdmrep: on-demand, always or off (tdmres.h) */
	int deny_private_addresses;
	char *admin_group;  /* may run admin ops, or NULL: root and our uid */
	char *admin_socket; /* admin ops socket to create, or NULL: none */
	char **redis;       /* NULL-terminated --redis URLs, or NULL: none */
	size_t nredis;
	long redis_timeout;   /* milliseconds */
	long redis_lock_time; /* seconds */
	char *archive_dir;    /* NULL: no archive */
	unsigned long long archive_max_file_bytes;
	unsigned long long archive_max_bytes; /* 0: no limit */
	char *redis_key_file;
	unsigned char redis_key[32]; /* its key, when redis_key_file is set */
	char *redis_password_file;   /* AUTH for URLs without a password */
	/* rediss:// URLs: the CA bundle (else the system's), a client
	 * certificate and its key, the name to verify (else the URL's host) */
	char *redis_tls_ca_file;
	char *redis_tls_cert_file;
	char *redis_tls_key_file;
	char *redis_tls_server_name;
	char *metrics;
	long metrics_max_connections; /* --metrics connections at once */
	int log_level;                /* LOG_ERR .. LOG_DEBUG from <syslog.h> */
	size_t max_line;              /* request line limit, bytes (64 KiB) */
	size_t max_output;  /* per-connection queued output limit, bytes */
	size_t all_output;  /* ... for all connections together */
	long write_timeout; /* seconds a client may leave answers unread */
	long stop_timeout;  /* seconds a stop waits for checks in flight */
	int test_clock;     /* hidden: accept the "clock" op (tests only) */
	int check_only;     /* -n: check the configuration and exit */
	int argc;           /* private copy of argv, re-applied on reload */
	char **argv;
};

enum opt_type {
	OT_STR,     /* char *, non-empty */
	OT_FLAG,    /* int; no value on the command line, yes|no in the file */
	OT_BOOL,    /* int; yes|no */
	OT_LONG,    /* long, decimal */
	OT_BYTES,   /* unsigned long long; bytes, optional K/M/G suffix */
	OT_SIZE,    /* size_t; bytes, optional K/M/G suffix */
	OT_MODE,    /* unsigned, octal */
	OT_LEVEL,   /* int; error|warn|info|debug as LOG_ERR..LOG_DEBUG */
	OT_LIST,    /* char ** (connect_to), repeatable */
	OT_CONFIG,  /* -c: command line only */
	OT_CHECK,   /* -n: command line only */
	OT_HELP,    /* -h: command line only */
	OT_VERSION, /* -V: command line only */
};

#define OPT_RELOAD 0x1 /* SIGHUP applies a new value */
#define OPT_HIDDEN 0x2 /* not in --help nor in the docs */
#define OPT_ARGV 0x4   /* command line only, never from the file */

struct option_def {
	const char *name; /* long option and config file key */
	int shortopt;     /* 0: none */
	enum opt_type type;
	long long min, max;
	const char *def; /* default, parsed like a value; NULL: unset */
	size_t off;      /* in struct config */
	int flags;
	const char *arg; /* name of the value in --help */
	const char *help;
};

/* The offset of a field of struct config, for the table. */
#define OFF(f) offsetof(struct config, f)
/* Rows the table may have (options.c checks it has no more). */
#define OPTIONS_MAX 64

extern const struct option_def options[];
extern const size_t noptions;

/* 1 for the options that only the command line can give. */
int opt_argv_only(const struct option_def *);
/* 1 when the option takes a value on the command line. */
int opt_has_value(const struct option_def *);
/*
 * Set option d of cf from value (first: the first value of a list option
 * from this source, which replaces the list). 0, or -1 with *err.
 */
int opt_set(struct config *cf, const struct option_def *d, const char *value,
    int first, char **err);
/* Fill cf with the table's defaults. */
void opt_defaults(struct config *);
/* The table entry for a config file key; NULL if none. */
const struct option_def *opt_find(const char *name);
/*
 * A pure rule, for "did you mean": the option an unknown name is a slip
 * for, or NULL. The closest name (the first in the table on a tie) at an
 * edit distance of at most 2 that is less than half the unknown name's
 * length; case aside; insertion, deletion, substitution and the swap of
 * two neighbours each count 1. Hidden options are never suggested, nor,
 * in_file, those only the command line takes. Names longer than
 * OPT_SUGGEST_MAX bytes get no suggestion.
 */
#define OPT_SUGGEST_MAX 64
const char *opt_suggest(const char *name, int in_file);

#endif /* ROBOTSD_OPTIONS_H */
