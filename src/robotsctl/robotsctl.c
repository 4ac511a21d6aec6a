/*
 * robotsctl.c: the command-line client of robotsd.
 *
 * Owns the options, the command table and the daemon commands (check,
 * stats, inspect, purge, ping): each builds one request, has ctl_conn.c
 * exchange it, and renders the answer with ctl_print.c. The offline
 * "test" command is in ctl_offline.c, the live "top" view in ctl_top.c, the
 * change feed ("watch") in ctl_feed.c, "show" and "diff" of archived
 * versions in ctl_archive.c.
 *
 * Exit status: 0 allowed / success, 1 disallowed, 2 error (message on stderr).
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

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

/*
 * check URL AGENT [--usage] [--token T]... [--tdm]: exit 0 allowed, 1
 * disallowed
 * (the agent's verdict, whatever the tokens').
 */
static int
cmd_check(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans, *req, *tokens;
	int allowed, i;

	(void)argc;
	req = json_pack(
	    "{s:s, s:s, s:s}", "op", "check", "url", argv[0], "agent", argv[1]);
	if (req != NULL && ctl->usage)
		json_object_set_new(req, "usage", json_true());
	if (req != NULL && ctl->tdm)
		json_object_set_new(req, "tdm", json_true());
	if (req != NULL && ctl->ntokens > 0) {
		tokens = json_array();
		for (i = 0; i < ctl->ntokens; i++)
			json_array_append_new(
			    tokens, json_string(ctl->tokens[i]));
		json_object_set_new(req, "tokens", tokens);
	}
	ans = ctl_call(ctl, req);
	if (ans == NULL)
		return CTL_EXIT_ERROR;
	if (!json_is_boolean(json_object_get(ans, "allowed"))) {
		ctl_warnx("answer without a verdict");
		json_decref(ans);
		return CTL_EXIT_ERROR;
	}
	allowed = json_is_true(json_object_get(ans, "allowed"));
	if (!ctl->json) {
		ctl_print_check(argv[0], ans);
		ctl_print_usage(ans);
		ctl_print_signals(ans);
	}
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

/* With --tdm, req names the resource tdmrep.json; req. */
json_t *
ctl_resource(const struct ctl *ctl, json_t *req)
{
	if (req != NULL && ctl->tdm)
		json_object_set_new(req, "resource", json_string("tdmrep"));
	return req;
}

/* inspect ORIGIN: the cached entry as "key: value" lines. */
static int
cmd_inspect(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans;

	(void)argc;
	ans = ctl_call(ctl,
	    ctl_resource(ctl,
	        json_pack("{s:s, s:s}", "op", "inspect", "origin", argv[0])));
	if (ans == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json)
		ctl_print_inspect(ans);
	json_decref(ans);
	return CTL_EXIT_OK;
}

/* A Unix time as a UTC date, or "-". */
static void
print_date(const json_t *v)
{
	char date[32];
	struct tm tm;
	time_t t;

	t = (time_t)json_number_value(v);
	if (!json_is_number(v) || gmtime_r(&t, &tm) == NULL ||
	    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(date, sizeof(date), "-");
	printf("%-22s", date);
}

/* history ORIGIN: one line per version, newest first. */
static int
cmd_history(const struct ctl *ctl, int argc, char **argv)
{
	json_t *ans, *v;
	size_t i;

	(void)argc;
	ans = ctl_call(ctl,
	    ctl_resource(ctl,
	        json_pack("{s:s, s:s}", "op", "history", "origin", argv[0])));
	if (ans == NULL)
		return CTL_EXIT_ERROR;
	if (!ctl->json) {
		printf("%-18s%-22s%-22s%-8s%s\n", "VERSION", "FIRST_SEEN",
		    "LAST_SEEN", "STATUS", "STATE");
		json_array_foreach(json_object_get(ans, "versions"), i, v)
		{
			printf("%-18s",
			    ctl_str_or(json_object_get(v, "version"), "-"));
			print_date(json_object_get(v, "first_seen"));
			print_date(json_object_get(v, "last_seen"));
			if (json_is_integer(json_object_get(v, "http_status")))
				printf("%-8lld",
				    (long long)json_integer_value(
				        json_object_get(v, "http_status")));
			else
				printf("%-8s", "-");
			printf("%s\n",
			    ctl_str_or(json_object_get(v, "state"), "-"));
		}
	}
	json_decref(ans);
	return CTL_EXIT_OK;
}

/*
 * The admin socket: --admin-socket or $ROBOTSD_ADMIN_SOCKET, else DIR-admin/
 * NAME for the socket DIR/NAME (/run/robotsd-admin/robotsd.sock for
 * /run/robotsd/robotsd.sock) when it exists, else NULL: admin ops go to
 * the socket itself.
 */
static const char *
ctl_admin_socket(const struct ctl *ctl, char *buf, size_t bufsz)
{
	const char *slash = strrchr(ctl->socket, '/');
	struct stat sb;

	if (ctl->admin_socket != NULL)
		return ctl->admin_socket;
	if (slash == NULL || slash == ctl->socket ||
	    (size_t)snprintf(buf, bufsz, "%.*s-admin%s",
	        (int)(slash - ctl->socket), ctl->socket, slash) >= bufsz ||
	    lstat(buf, &sb) == -1 || !S_ISSOCK(sb.st_mode))
		return NULL;
	return buf;
}

/* purge ORIGIN | purge --all: "purged N", through the admin socket. */
static int
cmd_purge(const struct ctl *octl, int argc, char **argv)
{
	struct ctl admin = *octl, *ctl = &admin;
	char buf[PATH_MAX];
	json_t *ans, *req;

	(void)argc;
	if ((admin.admin_socket = ctl_admin_socket(octl, buf, sizeof(buf))) !=
	    NULL)
		admin.socket = admin.admin_socket;
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

/*
 * ping: "robotsd VERSION"; an error config is reported as config-error
 * mode (ctl_conn.c), with its cause.
 */
static int
cmd_ping(const struct ctl *ctl, int argc, char **argv)
{
	struct ctl pinging = *ctl;
	json_t *ans;

	(void)argc;
	(void)argv;
	pinging.ping = 1;
	if ((ans = ctl_call(&pinging, json_pack("{s:s}", "op", "ping"))) ==
	    NULL)
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
	{ "history", 1, 1, cmd_history },
	{ "ping", 0, 0, cmd_ping },
	{ "top", 0, 0, ctl_cmd_top },
	{ "watch", 0, -1, ctl_cmd_watch },
	{ "test", 3, -1, ctl_cmd_test },
	{ "show", 1, 2, ctl_cmd_show },
	{ "diff", 3, 3, ctl_cmd_diff },
	{ "recheck", 0, -1, ctl_cmd_recheck },
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

/* The usage text. */
static const char ctl_usage[] =
    "usage: robotsctl [-s PATH] [--json] [-t SECONDS] COMMAND "
    "[--] [ARG...]\n"
    "commands:\n"
    "  check URL AGENT          may AGENT fetch URL? (exit 0 yes, "
    "1 no)\n"
    "  stats                    the daemon's counters\n"
    "  inspect ORIGIN           the cached entry of an origin\n"
    "  history ORIGIN           the last versions of an origin's "
    "robots.txt\n"
    "  purge ORIGIN | --all     drop an origin (or all) from the "
    "cache\n"
    "  ping                     the daemon's version\n"
    "  top                      a line of checks/s, hit rate, "
    "fetches/s, errors,\n"
    "                           waiting, cache entries and bytes "
    "every interval\n"
    "  watch [ORIGIN...]        a line per robots.txt change of the "
    "origins (all)\n"
    "  test FILE AGENT URL...   check URLs against a local "
    "robots.txt (FILE - is stdin), offline\n"
    "  show ORIGIN [VERSION]    a version's robots.txt from the "
    "archive (default:\n"
    "                           the version the daemon answers from)\n"
    "  diff ORIGIN V1 V2        how two archived versions differ "
    "(exit 0 same, 1 not)\n"
    "  recheck [WARC...]        'URL [TIME]' lines on stdin: each "
    "verdict under the\n"
    "                           robots.txt in force at TIME (or "
    "--as-of), a JSON line\n"
    "options (before or after COMMAND; after '--' every word is an "
    "ARG):\n"
    "  -s, --socket PATH        daemon socket (default "
    "$ROBOTSD_SOCKET or " CTL_DEFAULT_SOCKET ")\n"
    "  --admin-socket PATH      purge's socket (default "
    "$ROBOTSD_ADMIN_SOCKET, else\n"
    "                           DIR-admin/NAME for DIR/NAME if it "
    "exists)\n"
    "  --json                   print JSON answers, one per line\n"
    "  -t, --timeout SECONDS    wait this long for an answer (default "
    "70, 0 = forever)\n"
    "  -i, --interval SECONDS   top: seconds between lines "
    "(default 1)\n"
    "  -n, --count N            top: stop after N lines (default 0: "
    "never)\n"
    "  -a, --agent AGENT        watch: the changes for AGENT "
    "(repeatable, 16 at most);\n"
    "                           recheck: the agent (once)\n"
    "  --usage                  check, test, recheck: the usage "
    "preferences too\n"
    "  --token T                check, test, recheck: the verdict for "
    "control token T\n"
    "                           (repeatable, 16)\n"
    "  --tdm                    check: the TDMRep answer too (the "
    "origin's tdmrep.json);\n"
    "                           show, diff: tdmrep.json's versions, "
    "not robots.txt's;\n"
    "                           inspect, history: the origin's "
    "tdmrep.json; watch: its\n"
    "                           changes too\n"
    "  --tdmrep FILE            test: a local tdmrep.json, as if "
    "fetched (answers tdm)\n"
    "  --header 'NAME: VALUE'   test: judge each URL as if its page "
    "came with this\n"
    "                           header line (repeatable)\n"
    "  --meta 'NAME=CONTENT'    test: ... and with this <meta> of its "
    "<head> (repeatable)\n"
    "  --archive-dir DIR        show, diff, recheck: robotsd's "
    "--archive-dir (default\n"
    "                           $ROBOTSD_ARCHIVE_DIR, then archive-dir "
    "in robotsd's\n"
    "                           config file; --archive DIR too)\n"
    "  -c, --config FILE        robotsd's config file "
    "(default " CTL_DEFAULT_CONFIG ")\n"
    "  --warc FILE              recheck: read these WARC files "
    "instead (repeatable)\n"
    "  --as-of TIME|now         recheck: the version in force at TIME "
    "(RFC 3339 or\n"
    "                           Unix seconds); now: ask the daemon\n"
    "  --changed                recheck: only URLs whose verdict at "
    "their TIME differs\n"
    "                           from --as-of's\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n";

/* Print the usage text on stdout. */
static void
usage(void)
{
	fputs(ctl_usage, stdout);
}

/* -i SECONDS (0.01 to a day, decimals allowed) or -n COUNT of top. */
static int
parse_top_option(int opt, const char *arg, struct ctl *ctl)
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

/* --token T: a product token (letters, '-', '_'), at most 16 of them. */
static int
parse_token_option(const char *arg, struct ctl *ctl)
{
	size_t i;

	for (i = 0; arg[i] != '\0'; i++)
		if (!isalpha((unsigned char)arg[i]) && arg[i] != '-' &&
		    arg[i] != '_')
			break;
	if (i == 0 || arg[i] != '\0') {
		ctl_warnx(
		    "token '%s': not a product token (letters, '-', '_')", arg);
		return -1;
	}
	if (ctl->ntokens == CTL_MAX_TOKENS) {
		ctl_warnx("token %s: at most %d tokens", arg, CTL_MAX_TOKENS);
		return -1;
	}
	ctl->tokens[ctl->ntokens++] = arg;
	return 0;
}

/*
 * test --header 'NAME: VALUE' (NAME an RFC 9110 token) and --meta
 * 'NAME=CONTENT' (NAME not empty), at most CTL_MAX_PAGE of each.
 */
static int
parse_page_option(int opt, const char *arg, struct ctl *ctl)
{
	size_t n = strcspn(arg, opt == 'H' ? ":" : "=");
	int header = opt == 'H';
	int *count = header ? &ctl->npage_headers : &ctl->npage_meta;

	if (header && strspn(arg, "!#$%&'*+-.^_`|~0123456789"
	                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                          "abcdefghijklmnopqrstuvwxyz") != n)
		n = 0;
	if (n == 0 || arg[n] == '\0') {
		ctl_warnx(header ? "header '%s': not NAME: VALUE (NAME a "
		                   "field name)"
		                 : "meta '%s': not NAME=CONTENT",
		    arg);
		return -1;
	}
	if (*count == CTL_MAX_PAGE) {
		ctl_warnx("at most %d --%s options", CTL_MAX_PAGE,
		    header ? "header" : "meta");
		return -1;
	}
	if (header)
		ctl->page_headers[(*count)++] = arg;
	else
		ctl->page_meta[(*count)++] = arg;
	return 0;
}

/* robotsctl's long options; parse_option() reads them. */
static const struct option ctl_longopts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "admin-socket", required_argument, NULL, 'S' },
	{ "json", no_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "agent", required_argument, NULL, 'a' },
	{ "usage", no_argument, NULL, 'U' },
	{ "token", required_argument, NULL, 'T' },
	{ "archive-dir", required_argument, NULL, 'A' },
	{ "archive", required_argument, NULL, 'A' },
	{ "config", required_argument, NULL, 'c' },
	{ "warc", required_argument, NULL, 'W' },
	{ "as-of", required_argument, NULL, 'O' },
	{ "changed", no_argument, NULL, 'C' },
	{ "tdmrep", required_argument, NULL, 'R' },
	{ "tdm", no_argument, NULL, 'D' },
	{ "header", required_argument, NULL, 'H' },
	{ "meta", required_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/*
 * --agent and --warc, each a list with its own bound, into ctl; -1 when
 * the list is full.
 */
static int
parse_list_option(int opt, char *arg, struct ctl *ctl)
{
	if (opt == 'a') {
		if (ctl->nagents == CTL_MAX_AGENTS) {
			ctl_warnx("at most %d --agent options", CTL_MAX_AGENTS);
			return -1;
		}
		ctl->agents[ctl->nagents++] = arg;
		return 0;
	}
	if (ctl->nwarc == CTL_MAX_WARC) {
		ctl_warnx("at most %d --warc options (more files may "
		          "follow the last)",
		    CTL_MAX_WARC);
		return -1;
	}
	ctl->warc[ctl->nwarc++] = arg;
	return 0;
}

/* An option that only sets a flag or a path: 1 when opt is one. */
static int
parse_plain_option(int opt, struct ctl *ctl)
{
	switch (opt) {
	case 's':
		ctl->socket = optarg;
		return 1;
	case 'S':
		ctl->admin_socket = optarg;
		return 1;
	case 'A':
		ctl->archive_dir = optarg;
		return 1;
	case 'c':
		ctl->config = optarg;
		return 1;
	case 'O':
		ctl->as_of = optarg;
		return 1;
	case 'R':
		ctl->tdmrep = optarg;
		return 1;
	case 'j':
		ctl->json = 1;
		return 1;
	case 'U':
		ctl->usage = 1;
		return 1;
	case 'C':
		ctl->changed = 1;
		return 1;
	case 'D':
		ctl->tdm = 1;
		return 1;
	}
	return 0;
}

/* Parse the option at argv[optind] (one getopt step); -1 on a usage error. */
static int
parse_option(int argc, char **argv, struct ctl *ctl)
{
	const char *errstr;
	long long n;
	int opt;

	switch (opt = getopt_long(
	            argc, argv, "+:s:t:i:n:a:c:hV", ctl_longopts, NULL)) {
	case 't':
		if (parse_num(optarg, 0, CTL_MAX_TIMEOUT, &n, &errstr) == -1) {
			ctl_warnx("timeout %s: %s", optarg, errstr);
			return -1;
		}
		ctl->timeout = (int)n;
		return 0;
	case 'i':
	case 'n':
		return parse_top_option(opt, optarg, ctl);
	case 'a':
	case 'W':
		return parse_list_option(opt, optarg, ctl);
	case 'T':
		return parse_token_option(optarg, ctl);
	case 'H':
	case 'M':
		return parse_page_option(opt, optarg, ctl);
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
		if (parse_plain_option(opt, ctl))
			return 0;
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
	if ((ctl.admin_socket = getenv("ROBOTSD_ADMIN_SOCKET")) != NULL &&
	    *ctl.admin_socket == '\0')
		ctl.admin_socket = NULL;
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
