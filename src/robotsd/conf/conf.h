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
/* Re-read the file for SIGHUP, keeping what argv said; NULL + *cause on error.
 */
struct config *config_reload(const struct config *, char **cause);
void config_free(struct config *); /* NULL is fine */
/*
 * The password of --redis-password-file (its first line), malloc'd; NULL
 * when the option is not set, or with *cause on error (a message that
 * never holds the password).
 */
char *config_redis_password(const struct config *, char **cause);

#endif /* ROBOTSD_CONF_H */
