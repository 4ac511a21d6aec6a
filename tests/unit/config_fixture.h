/*
 * config_fixture.h: what check_config.c and check_config_shipped.c share:
 * the config under test, temporary config files, loading with arguments,
 * the error text of a line, and quiet logs.
 */
#ifndef TESTS_CONFIG_FIXTURE_H
#define TESTS_CONFIG_FIXTURE_H

#define TOPSRCDIR TESTDATADIR "/../.."
#ifdef HAVE_REDIS
#define HAVE_REDIS_BUILD 1
#else
#define HAVE_REDIS_BUILD 0 /* --redis is refused: see test_redis_options */
#endif
#define MAXARGS 32

static struct config *cf;
static char *cause;
static char conf_path[PATH_MAX];

/* Free what a test left behind. */
static inline void
config_teardown(void)
{
	config_free(cf);
	cf = NULL;
	free(cause);
	cause = NULL;
	if (conf_path[0] != '\0')
		unlink(conf_path);
	conf_path[0] = '\0';
}

/* Write text to a new temporary file named in conf_path. */
static inline void
write_conf(const char *text)
{
	const char *tmp = getenv("TMPDIR");
	FILE *fp;
	int fd;

	snprintf(conf_path, sizeof(conf_path), "%s/check_config.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	ck_assert_int_ne(fd = mkstemp(conf_path), -1);
	ck_assert_ptr_nonnull(fp = fdopen(fd, "w"));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Replace the contents of conf_path. */
static inline void
rewrite_conf(const char *text)
{
	FILE *fp;

	ck_assert_ptr_nonnull(fp = fopen(conf_path, "w"));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/*
 * argv (room for MAXARGS): "robotsd", first and the arguments of ap up to
 * a NULL, NULL-terminated; argc.
 */
static inline int
fill_argv(const char **argv, const char *first, va_list ap)
{
	int argc = 0;

	argv[argc++] = "robotsd";
	while (first != NULL && argc < MAXARGS - 1) {
		argv[argc++] = first;
		first = va_arg(ap, const char *);
	}
	argv[argc] = NULL;
	return argc;
}

/* config_load on "robotsd" plus the NULL-terminated arguments after first. */
static inline struct config *
load_args(int *exit_now, const char *first, ...)
{
	const char *argv[MAXARGS];
	int argc, dummy;
	va_list ap;

	va_start(ap, first);
	argc = fill_argv(argv, first, ap);
	va_end(ap);
	free(cause);
	cause = NULL;
	return config_load(
	    argc, (char **)argv, exit_now ? exit_now : &dummy, &cause);
}

/* Write text as the config file and load it with "-c FILE" first. */
#define LOAD(text, ...)                                                        \
	(write_conf(text), cf = load_args(NULL, "-c", conf_path, __VA_ARGS__))

/* "FILE:LINE: rest" for the current temporary config file. */
static inline char *
at_line(int line, const char *rest)
{
	static char buf[PATH_MAX + 256];

	snprintf(buf, sizeof(buf), "%s:%d: %s", conf_path, line, rest);
	return buf;
}

/* Read a whole file into a new string. */
static inline char *
slurp(const char *path)
{
	char *buf;
	FILE *fp;
	long n;

	ck_assert_msg(
	    (fp = fopen(path, "r")) != NULL, "%s: %s", path, strerror(errno));
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return buf;
}

/* Errors only: reload warnings are expected. */
static inline int
config_quiet_log(void)
{
	unsetenv("JOURNAL_STREAM");
	log_init(1, LOG_ERR);
	return 0;
}

#endif /* TESTS_CONFIG_FIXTURE_H */
