/*
 * conf.h: robotsd's configuration, loaded from the command line and the
 * config file (robotsd.conf(5): "name value" lines, '#' comments) and
 * reloaded on SIGHUP; options given on the command line win over the file.
 * The options themselves, and struct config, are options.h's.
 */
#ifndef ROBOTSD_CONF_H
#define ROBOTSD_CONF_H

#include <stddef.h>

#include "conf/options.h"

/*
 * Build a config from defaults, the config file and argv. Returns NULL and
 * sets *cause (allocated, e.g. "robotsd.conf:12: unknown option 'x'") on
 * error; *exit_now is set (with *cause NULL) after --help or --version.
 */
struct config *config_load(int argc, char **argv, int *exit_now, char **cause);
/*
 * Re-read the file for SIGHUP, keeping what argv said; NULL + *cause on
 * error. Options that only a restart applies keep their old values: *kept
 * names those the file changed, comma-separated in the table's order
 * (allocated), or is NULL when there is none.
 */
struct config *config_reload(const struct config *, char **kept, char **cause);
void config_free(struct config *); /* NULL is fine */
/*
 * For config-error mode, whose config does not load: the metrics address
 * it would have had, as far as argv and the file can be read (allocated),
 * or NULL. argv's --metrics if it scans that far with a valid one, else
 * the last "metrics" line of the file (-c's, else the default one) whose
 * value is ADDR:PORT, whatever the other lines hold.
 */
char *config_metrics_address(int argc, char **argv);
/*
 * The password of --redis-password-file (its first line), malloc'd; NULL
 * when the option is not set, or with *cause on error (a message that
 * never holds the password).
 */
char *config_redis_password(const struct config *, char **cause);

#endif /* ROBOTSD_CONF_H */
