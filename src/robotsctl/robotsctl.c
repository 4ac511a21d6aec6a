/*
 * robotsctl.c: the command-line client of robotsd.
 *
 * Owns the options, the command table and the daemon commands (check,
 * stats, inspect, purge, ping): each builds one request, has ctl_conn.c
 * exchange it, and renders the answer with ctl_print.c. The offline
 * "test" command is in ctl_test.c, the live "watch" view in ctl_watch.c.
 *
 * Exit status: 0 allowed / success, 1 disallowed, 2 error (message on stderr).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "robotsctl.h"

#define CTL_DEFAULT_SOCKET "/run/robotsd/robotsd.sock"
#define CTL_DEFAULT_TIMEOUT 70 /* s: past the daemon's 65 s check deadline */
#define CTL_MAX_TIMEOUT 86400  /* seconds */

/* One subcommand. */
struct ctl_cmd {
	const char *name;
	int min_args, max_args; /* max -1: no limit */
	int (*run)(const struct ctl *, int, char **);
};

/* Print "robotsctl: MESSAGE" on stderr. */
void
ctl_warnx(const char *fmt, ...)
{
	va_list ap;

	fputs("robotsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Parse a decimal number in [min, max]; -1 with *errstr set if it is not. */
static int
parse_num(const char *s, long long min, long long max, long long *out,
    const char **errstr)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE) {
		*errstr = "invalid";
		return -1;
	}
	if (v < min || v > max) {
		*errstr = v < min ? "too small" : "too large";
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * The daemon commands.
 */

/* check URL AGENT: exit 0 allowed, 1 disallowed. */
static int
cmd_check(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans;
	int allowed;

	(void)argc;
	ans = ctl_call(ctl, json_pack("{s:s, s:s, s:s}", "op", "check", "url",
	                        argv[0], "agent", argv[1]));
	if (ans == NULL)
		return CTL_EXIT_ERROR;
	if (!json_is_boolean(json_object_get(ans, "allowed"))) {
		ctl_warnx("answer without a verdict");
		json_decref(ans);
		return CTL_EXIT_ERROR;
	}
	allowed = json_is_true(json_object_get(ans, "allowed"));
	if (!ctl->json)
		ctl_print_check(argv[0], ans);
	json_decref(ans);
	return allowed ? CTL_EXIT_OK : CTL_EXIT_DISALLOWED;
}

/* stats: "name value" lines in the order received. */
static int
cmd_stats(const struct ctl *ctl, int argc, char **argv)
{
	const char *k;
	json_t *ans, *v;

	(void)argc;
	(void)argv;
	if ((ans = ctl_call(ctl, json_pack("{s:s}", "op", "stats"))) == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json)
		json_object_foreach(json_object_get(ans, "stats"), k, v)
		{
			ctl_put_text(k, strlen(k));
			putchar(' ');
			ctl_print_scalar(v);
			putchar('\n');
		}
	json_decref(ans);
	return CTL_EXIT_OK;
}

/* inspect ORIGIN: the cached entry as "key: value" lines. */
static int
cmd_inspect(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans;

	(void)argc;
	ans = ctl_call(
	    ctl, json_pack("{s:s, s:s}", "op", "inspect", "origin", argv[0]));
	if (ans == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json)
		ctl_print_flat(ans);
	json_decref(ans);
	return CTL_EXIT_OK;
}

/* purge ORIGIN | purge --all: "purged N". */
static int
cmd_purge(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans, *req;

	(void)argc;
	if (ctl->purge_all)
		req = json_pack("{s:s, s:b}", "op", "purge", "all", 1);
	else
		req = json_pack("{s:s, s:s}", "op", "purge", "origin", argv[0]);
	if ((ans = ctl_call(ctl, req)) == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json) {
		fputs("purged ", stdout);
		ctl_print_scalar(json_object_get(ans, "purged"));
		putchar('\n');
	}
	json_decref(ans);
	return CTL_EXIT_OK;
}

/* ping: "robotsd VERSION". */
static int
cmd_ping(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans;

	(void)argc;
	(void)argv;
	if ((ans = ctl_call(ctl, json_pack("{s:s}", "op", "ping"))) == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json) {
		fputs("robotsd ", stdout);
		ctl_print_scalar(json_object_get(ans, "version"));
		putchar('\n');
	}
	json_decref(ans);
	return CTL_EXIT_OK;
}

/*
 * Options and dispatch.
 */

static const struct ctl_cmd cmds[] = {
	{ "check", 2, 2, cmd_check },
	{ "stats", 0, 0, cmd_stats },
	{ "inspect", 1, 1, cmd_inspect },
	{ "purge", 1, 1, cmd_purge },
	{ "ping", 0, 0, cmd_ping },
	{ "watch", 0, 0, ctl_cmd_watch },
	{ "test", 3, -1, ctl_cmd_test },
};

/* Print a usage error's hint on stderr. */
static void
usage_error(void)
{
	fputs("usage: robotsctl [-s PATH] [--json] [-t SECONDS] COMMAND "
	      "[--] [ARG...]\n"
	      "run 'robotsctl --help' for the commands\n",
	    stderr);
}

/* Print the usage text on stdout. */
static void
usage(void)
{
	fputs(
	    "usage: robotsctl [-s PATH] [--json] [-t SECONDS] COMMAND "
	    "[--] [ARG...]\n"
	    "commands:\n"
	    "  check URL AGENT          may AGENT fetch URL? (exit 0 yes, "
	    "1 no)\n"
	    "  stats                    the daemon's counters\n"
	    "  inspect ORIGIN           the cached entry of an origin\n"
	    "  purge ORIGIN | --all     drop an origin (or all) from the "
	    "cache\n"
	    "  ping                     the daemon's version\n"
	    "  watch                    a line of checks/s, hit rate, "
	    "fetches/s, errors,\n"
	    "                           waiting, cache entries and bytes "
	    "every interval\n"
	    "  test FILE AGENT URL...   check URLs against a local "
	    "robots.txt (FILE - is stdin), offline\n"
	    "options (before or after COMMAND; after '--' every word is an "
	    "ARG):\n"
	    "  -s, --socket PATH        daemon socket (default "
	    "$ROBOTSD_SOCKET or " CTL_DEFAULT_SOCKET ")\n"
	    "  --json                   print JSON answers, one per line\n"
	    "  -t, --timeout SECONDS    wait this long for an answer (default "
	    "70, 0 = forever)\n"
	    "  -i, --interval SECONDS   watch: seconds between lines "
	    "(default 1)\n"
	    "  -n, --count N            watch: stop after N lines (default 0: "
	    "never)\n"
	    "  -h, --help               this text\n"
	    "  -V, --version            the version\n",
	    stdout);
}

/* -i SECONDS (0.01 to a day, decimals allowed) or -n COUNT of watch. */
static int
parse_watch_option(int opt, const char *arg, struct ctl *ctl)
{
	const char *errstr = "invalid";
	long long n;
	char *end;
	double v;

	if (opt == 'n') {
		if (parse_num(arg, 0, LONG_MAX, &n, &errstr) == -1) {
			ctl_warnx("count %s: %s", arg, errstr);
			return -1;
		}
		ctl->count = (long)n;
		return 0;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (*arg == '\0' || *end != '\0' || errno == ERANGE || !(v >= 0.01) ||
	    v > CTL_MAX_TIMEOUT) {
		if (*arg != '\0' && *end == '\0' && errno != ERANGE)
			errstr = v < 0.01 ? "too small" : "too large";
		ctl_warnx("interval %s: %s (0.01 to %d seconds)", arg, errstr,
		    CTL_MAX_TIMEOUT);
		return -1;
	}
	ctl->interval = v;
	return 0;
}

/* Parse the option at argv[optind] (one getopt step); -1 on a usage error. */
static int
parse_option(int argc, char **argv, struct ctl *ctl)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *errstr;
	long long n;
	int opt;

	switch (opt = getopt_long(argc, argv, "+:s:t:i:n:hV", longopts, NULL)) {
	case 's':
		ctl->socket = optarg;
		return 0;
	case 'j':
		ctl->json = 1;
		return 0;
	case 't':
		if (parse_num(optarg, 0, CTL_MAX_TIMEOUT, &n, &errstr) == -1) {
			ctl_warnx("timeout %s: %s", optarg, errstr);
			return -1;
		}
		ctl->timeout = (int)n;
		return 0;
	case 'i':
	case 'n':
		return parse_watch_option(opt, optarg, ctl);
	case 'h':
		usage();
		exit(CTL_EXIT_OK);
	case 'V':
		printf("robotsctl %s\n", PACKAGE_VERSION);
		exit(CTL_EXIT_OK);
	case ':':
		ctl_warnx("%s: missing argument", argv[optind - 1]);
		break;
	default:
		ctl_warnx("unknown option '%s'", argv[optind - 1]);
		break;
	}
	usage_error();
	return -1;
}

/*
 * Parse the options, which may come before or after COMMAND, into ctl, and
 * move the operands (COMMAND and its arguments) to argv[1..]; their number,
 * or -1 on a usage error. "--" ends the options; "-" is an operand (stdin).
 * "purge --all" is the purge command's own option, not an operand.
 */
static int
parse_args(int argc, char **argv, struct ctl *ctl)
{
	int n = 1;

	opterr = 0;
	optind = 1;
	while (optind < argc) {
		const char *arg = argv[optind];

		if (strcmp(arg, "--") == 0) {
			while (++optind < argc)
				argv[n++] = argv[optind];
			break;
		}
		if (n == 2 && strcmp(argv[1], "purge") == 0 &&
		    strcmp(arg, "--all") == 0) {
			ctl->purge_all = 1;
			optind++;
		} else if (arg[0] != '-' || arg[1] == '\0')
			argv[n++] = argv[optind++];
		else if (parse_option(argc, argv, ctl) == -1)
			return -1;
	}
	return n - 1;
}

/* Run COMMAND with its arguments. */
int
main(int argc, char **argv)
{
	struct ctl ctl = { .timeout = CTL_DEFAULT_TIMEOUT, .interval = 1 };
	const struct ctl_cmd *cmd;
	size_t i;
	int nargs, nops;

	if ((ctl.socket = getenv("ROBOTSD_SOCKET")) == NULL ||
	    *ctl.socket == '\0')
		ctl.socket = CTL_DEFAULT_SOCKET;
	if ((nops = parse_args(argc, argv, &ctl)) == -1)
		return CTL_EXIT_ERROR;
	if (nops == 0) {
		usage_error();
		return CTL_EXIT_ERROR;
	}
	nargs = nops - 1;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cmd = &cmds[i];
		if (strcmp(argv[1], cmd->name) != 0)
			continue;
		/* --all stands in for purge's ORIGIN. */
		if (nargs + ctl.purge_all < cmd->min_args ||
		    (cmd->max_args != -1 &&
		        nargs + ctl.purge_all > cmd->max_args)) {
			ctl_warnx("%s: wrong number of arguments", cmd->name);
			usage_error();
			return CTL_EXIT_ERROR;
		}
		return cmd->run(&ctl, nargs, argv + 2);
	}
	ctl_warnx("unknown command '%s'", argv[1]);
	usage_error();
	return CTL_EXIT_ERROR;
}
