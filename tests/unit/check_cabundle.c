/*
 * check_cabundle.c: the CA bundle https fetches use (cabundle.c): the files
 * copied in order, each ending on a line of its own, into one file readable
 * at its /proc/self/fd path; an unreadable file refused by name; a reload
 * that changes nothing keeps the same file, one that changes the extra CA
 * file makes a new one and keeps the previous open.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>

#include "fetch/cabundle.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

static char dir[] = "/tmp/check_cabundle.XXXXXX";

/* A file named name in the test directory holding text; its path. */
static const char *
put(const char *name, const char *text)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];
	FILE *fp;

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(fp = fopen(p, "w"));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
	return p;
}

/* What a bundle holds, read back through its path as curl reads it. */
static char *
slurp(const struct cabundle *b)
{
	static char text[4096];
	FILE *fp;
	size_t n;

	ck_assert_ptr_nonnull(fp = fopen(b->path, "r"));
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	ck_assert_uint_eq(n, b->size);
	return text;
}

/* The first 1 KiB of a file (less if shorter), as a string. */
static char *
head(const char *path, char *out)
{
	FILE *fp;
	size_t n;

	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	n = fread(out, 1, 1024, fp);
	out[n] = '\0';
	fclose(fp);
	return out;
}

/* Remove the test directory and what put() left in it. */
static void
cleanup(void)
{
	static const char *names[] = { "a.pem", "b.pem", "x.pem" };
	char p[300];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static const struct {
	const char *a, *b; /* file texts; NULL: no such path given */
	const char *want;
} concat_rows[] = {
	{ "A\n", "B\n", "A\n\nB\n\n" },
	{ "A", "B", "A\nB\n" }, /* no final newline: B still starts a line */
	{ "A\n", NULL, "A\n\n" },
	{ NULL, "B\n", "B\n\n" },
	{ "", "", "\n\n" },
};

START_TEST(test_files_are_copied_in_order)
{
	const char *paths[2] = { NULL, NULL };
	struct cabundle b;
	char err[256];

	if (concat_rows[_i].a != NULL)
		paths[0] = put("a.pem", concat_rows[_i].a);
	if (concat_rows[_i].b != NULL)
		paths[1] = put("b.pem", concat_rows[_i].b);
	ck_assert_int_eq(cabundle_make(&b, paths, 2, err, sizeof(err)), 0);
	ck_assert_int_ge(b.fd, 0);
	ck_assert_str_eq(slurp(&b), concat_rows[_i].want);
	cabundle_close(&b);
	ck_assert_int_eq(b.fd, -1);
}
END_TEST

START_TEST(test_unreadable_file_is_refused_by_name)
{
	char missing[300], err[256], want[400];
	const char *paths[2];
	struct cabundle b;

	snprintf(missing, sizeof(missing), "%s/none.pem", dir);
	paths[0] = put("a.pem", "A\n");
	paths[1] = missing;
	ck_assert_int_eq(cabundle_make(&b, paths, 2, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: %s", missing, strerror(ENOENT));
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(b.fd, -1);
}
END_TEST

START_TEST(test_same_means_same_bytes)
{
	const char *paths[1];
	struct cabundle a, b, c;
	char err[256];

	paths[0] = put("a.pem", "same");
	ck_assert_int_eq(cabundle_make(&a, paths, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(cabundle_make(&b, paths, 1, err, sizeof(err)), 0);
	paths[0] = put("a.pem", "sane");
	ck_assert_int_eq(cabundle_make(&c, paths, 1, err, sizeof(err)), 0);
	ck_assert(cabundle_same(&a, &b));
	ck_assert(!cabundle_same(&a, &c));
	cabundle_close(&b);
	ck_assert(!cabundle_same(&a, &b)); /* none is like nothing */
	cabundle_close(&a);
	cabundle_close(&c);
}
END_TEST

/* "x" then "y" is not "xy" then "": the newlines between count too. */
START_TEST(test_same_sees_where_files_end)
{
	const char *xy[2], *xy0[2];
	struct cabundle a, b;
	char err[256];

	xy[0] = put("a.pem", "x");
	xy[1] = put("b.pem", "y");
	ck_assert_int_eq(cabundle_make(&a, xy, 2, err, sizeof(err)), 0);
	xy0[0] = put("a.pem", "xy");
	xy0[1] = put("b.pem", "");
	ck_assert_int_eq(cabundle_make(&b, xy0, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.size, b.size);
	ck_assert(!cabundle_same(&a, &b));
	cabundle_close(&a);
	cabundle_close(&b);
}
END_TEST

/* A reload with an extra CA file holding text: make, then install. */
static void
update(struct cabundles *cb, const char *text)
{
	struct cabundle nb;
	char err[256];

	ck_assert_msg(
	    cabundles_make(&nb, put("x.pem", text), err, sizeof(err)) == 0,
	    "%s", err);
	cabundles_install(cb, &nb);
	ck_assert_int_eq(nb.fd, -1); /* taken, or closed when unchanged */
}

/*
 * libcurl keeps the store it parsed under the CAINFO path: a bundle must
 * never get the path of one closed before (memfd_create() alone reuses
 * the lowest free descriptor).
 */
START_TEST(test_no_two_bundles_share_a_path)
{
	const char *paths[1] = { put("a.pem", "A\n") };
	struct cabundle b[4];
	char err[256], seen[4][32];
	int i, j;

	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(
		    cabundle_make(&b[i], paths, 1, err, sizeof(err)), 0);
		snprintf(seen[i], sizeof(seen[i]), "%s", b[i].path);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(seen[i], seen[j]);
		if (i > 0)
			cabundle_close(&b[i - 1]); /* free the lower number */
	}
	cabundle_close(&b[3]);
}
END_TEST

/*
 * Reloads: the same extra file keeps the bundle (its path, which curl's
 * store cache is keyed on); a changed one makes a new bundle holding
 * libcurl's CA file then the extra, and keeps the old one as prev.
 */
START_TEST(test_update_keeps_an_unchanged_bundle_and_rotates_a_new_one)
{
	struct cabundles cb = CABUNDLES_NONE;
	const char *sys = NULL;
	char bundle_head[1025], sys_head[1025];
	int fd1;
	CURL *e;

	ck_assert_ptr_nonnull(e = curl_easy_init());
	curl_easy_getinfo(e, CURLINFO_CAINFO, &sys);
	if (sys == NULL || access(sys, R_OK) == -1) {
		/* libcurl has no readable CA file here: nothing to add to */
		curl_easy_cleanup(e);
		return;
	}
	update(&cb, "EXTRA-ONE\n");
	fd1 = cb.cur.fd;
	ck_assert_int_ge(fd1, 0);
	ck_assert_int_eq(cb.prev.fd, -1);
	/* libcurl's file comes first */
	ck_assert_str_eq(head(cb.cur.path, bundle_head), head(sys, sys_head));
	update(&cb, "EXTRA-ONE\n");
	ck_assert_int_eq(cb.cur.fd, fd1);
	ck_assert_int_eq(cb.prev.fd, -1);
	update(&cb, "EXTRA-TWO\n");
	ck_assert_int_ne(cb.cur.fd, fd1);
	ck_assert_int_eq(cb.prev.fd, fd1);
	ck_assert_uint_eq(cb.cur.size, cb.prev.size);
	cabundles_free(&cb);
	curl_easy_cleanup(e);
}
END_TEST

static Suite *
cabundle_suite(void)
{
	Suite *s = suite_create("cabundle");
	TCase *tc = tcase_create("bundle");

	tcase_add_loop_test(
	    tc, test_files_are_copied_in_order, 0, NROWS(concat_rows));
	tcase_add_test(tc, test_unreadable_file_is_refused_by_name);
	tcase_add_test(tc, test_same_means_same_bytes);
	tcase_add_test(tc, test_no_two_bundles_share_a_path);
	tcase_add_test(tc, test_same_sees_where_files_end);
	tcase_add_test(
	    tc, test_update_keeps_an_unchanged_bundle_and_rotates_a_new_one);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	sr = srunner_create(cabundle_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
