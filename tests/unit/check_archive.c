/*
 * check_archive.c: the WARC archive's file rules as tables (names, when to
 * rotate, which files to remove), then the writer thread for real in a
 * directory of its own: files rotated and the oldest removed, every file a
 * warcinfo record then responses, failures and drops counted.
 */
#include <config.h>

#include <sys/stat.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <zlib.h>

#include "persist/archive.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))
#define T0 1795000000.0 /* 2026-11-18T11:06:40Z */

START_TEST(test_file_names)
{
	char n[ARCHIVE_NAME_SIZE];

	archive_file_name(n, T0, 7);
	ck_assert_str_eq(n, "robotsd-20261118110640-00007.warc.gz");
	archive_file_name(n, 0, 100001);
	ck_assert_str_eq(n, "robotsd-19700101000000-00001.warc.gz");
	ck_assert(archive_is_file_name("robotsd-20261118110640-00007.warc.gz"));
	ck_assert(!archive_is_file_name("robotsd-20261118110640-00007.warc"));
	ck_assert(
	    !archive_is_file_name("robotsd-2026111811064x-00007.warc.gz"));
	ck_assert(!archive_is_file_name("other-20261118110640-00007.warc.gz"));
	ck_assert(
	    !archive_is_file_name("robotsd-20261118110640_00007.warc.gz"));
	ck_assert(!archive_is_file_name(""));
}
END_TEST

static const struct {
	unsigned long long file_bytes;
	unsigned records;
	size_t len;
	unsigned long long max;
	int want;
} rotate_rows[] = {
	{ 0, 0, 500, 100, 0 },   /* an empty file takes any record */
	{ 300, 0, 500, 100, 0 }, /* a warcinfo alone does not count */
	{ 60, 1, 40, 100, 0 },   /* exactly max fits */
	{ 60, 1, 41, 100, 1 },
	{ 60, 3, 500, 100, 1 },
	{ 0, 5, 0, 0, 0 },
};

START_TEST(test_must_rotate)
{
	ck_assert_int_eq(archive_must_rotate(rotate_rows[_i].file_bytes,
	                     rotate_rows[_i].records, rotate_rows[_i].len,
	                     rotate_rows[_i].max),
	    rotate_rows[_i].want);
}
END_TEST

static const struct {
	const char *name;
	unsigned long long bytes[4]; /* oldest first */
	int current;                 /* index of the current file, -1 none */
	unsigned long long max;
	const char *want; /* '1': removed */
} removal_rows[] = {
	{ "under the total", { 10, 10, 10, 10 }, 3, 40, "0000" },
	{ "one over: the oldest goes", { 10, 10, 10, 11 }, 3, 40, "1000" },
	{ "far over: all but the current", { 50, 50, 50, 50 }, 3, 10, "1110" },
	{ "the current is never removed, even oldest", { 50, 50, 50, 50 }, 0,
	    60, "0111" },
	{ "no limit", { 50, 50, 50, 50 }, 3, 0, "0000" },
	{ "no current file", { 30, 30, 30, 30 }, -1, 60, "1100" },
};

START_TEST(test_plan_removal)
{
	struct archive_file f[4];
	size_t i, want = 0, got;
	char row[5];

	memset(f, 0, sizeof(f));
	for (i = 0; i < 4; i++) {
		f[i].bytes = removal_rows[_i].bytes[i];
		f[i].current = (int)i == removal_rows[_i].current;
		want += removal_rows[_i].want[i] == '1';
	}
	got = archive_plan_removal(f, 4, removal_rows[_i].max);
	for (i = 0; i < 4; i++)
		row[i] = f[i].remove ? '1' : '0';
	row[4] = '\0';
	ck_assert_msg(strcmp(row, removal_rows[_i].want) == 0, "%s: %s",
	    removal_rows[_i].name, row);
	ck_assert_uint_eq(got, want);
}
END_TEST

/* A record of an origin; body "User-agent: *\nDisallow: /N\n". */
static void
add(struct archive *a, int n, char *body, size_t bodysz)
{
	static const char head[] = "HTTP/1.1 200 OK\r\n";
	char url[64];
	struct warc_response r;

	snprintf(url, sizeof(url), "http://a%d.example/robots.txt", n);
	snprintf(body, bodysz, "User-agent: *\nDisallow: /%d\n", n);
	memset(&r, 0, sizeof(r));
	r.date = T0 + n;
	r.target_uri = url;
	r.origin = "http://a.example";
	r.ip = "192.0.2.7";
	r.version = "0123456789abcdef";
	r.http_head = head;
	r.http_head_len = sizeof(head) - 1;
	r.body = body;
	r.body_len = strlen(body);
	ck_assert_int_eq(archive_add(a, &r), 0);
}

/* The whole file at path gunzipped (members concatenated) into out. */
static size_t
gunzip_file(const char *path, char *out, size_t outsz)
{
	gzFile g = gzopen(path, "rb");
	int n;

	ck_assert_ptr_nonnull(g);
	n = gzread(g, out, (unsigned)outsz - 1);
	ck_assert_int_ge(n, 0);
	gzclose(g);
	out[n] = '\0';
	return (size_t)n;
}

/* The archive file names of dir, sorted, into names; how many. */
static int
list(const char *dir, char names[][ARCHIVE_NAME_SIZE], int max)
{
	struct dirent **ents;
	int n, i, k = 0;

	n = scandir(dir, &ents, NULL, alphasort);
	ck_assert_int_ge(n, 0);
	for (i = 0; i < n; i++) {
		if (archive_is_file_name(ents[i]->d_name) && k < max)
			memcpy(names[k++], ents[i]->d_name, 37);
		free(ents[i]);
	}
	free(ents);
	return k;
}

START_TEST(test_thread_writes_rotates_and_removes)
{
	char dir[] = "check_archive.XXXXXX", names[8][ARCHIVE_NAME_SIZE];
	char path[512], text[8192], body[64], other[256];
	struct archive_settings set = { NULL, 1, 0, 1 << 20, -1 };
	struct archive_stats st;
	struct archive *a;
	FILE *fp;
	int i, n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* not robotsd's: never removed */
	snprintf(other, sizeof(other), "%s/notes.warc.gz", dir);
	fp = fopen(other, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("0123456789", fp);
	fclose(fp);
	/* each record is about 700 bytes gzipped: keep the newest two files */
	set.dir = dir;
	set.max_bytes = 2200;
	a = archive_new(&set);
	ck_assert_ptr_nonnull(a);
	for (i = 1; i <= 5; i++)
		add(a, i, body, sizeof(body));
	archive_sync(a);
	archive_stats(a, &st);
	ck_assert_uint_eq(st.records, 5);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(st.dropped, 0);
	archive_free(a);
	n = list(dir, names, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(names[0], "robotsd-20261118110644-00003.warc.gz");
	ck_assert_str_eq(names[1], "robotsd-20261118110645-00004.warc.gz");
	ck_assert_int_eq(access(other, F_OK), 0);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		gunzip_file(path, text, sizeof(text));
		ck_assert_msg(
		    strncmp(text, "WARC/1.1\r\nWARC-Type: warcinfo\r\n", 31) ==
		        0,
		    "%s", text);
		ck_assert_ptr_nonnull(strstr(text, names[i]));
		ck_assert_ptr_nonnull(strstr(text, "WARC-Type: response\r\n"));
		/* each string of a queued record is copied, the address too */
		ck_assert_ptr_nonnull(
		    strstr(text, "WARC-IP-Address: 192.0.2.7\r\n"));
		snprintf(body, sizeof(body), "Disallow: /%d\n", 4 + i);
		ck_assert_ptr_nonnull(strstr(text, body));
		unlink(path);
	}
	unlink(other);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_records_share_a_file_until_it_is_full)
{
	char dir[] = "check_archive.XXXXXX", names[8][ARCHIVE_NAME_SIZE];
	char path[512], text[16384], body[64], *p;
	struct archive_settings set = { NULL, 100000, 0, 1 << 20, -1 };
	struct archive *a;
	int i, n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	set.dir = dir;
	a = archive_new(&set);
	for (i = 1; i <= 4; i++)
		add(a, i, body, sizeof(body));
	archive_free(a); /* writes what is queued first */
	ck_assert_int_eq(list(dir, names, 8), 1);
	snprintf(path, sizeof(path), "%s/%s", dir, names[0]);
	gunzip_file(path, text, sizeof(text));
	for (p = text; (p = strstr(p, "WARC-Type: response")) != NULL; p++)
		n++;
	ck_assert_int_eq(n, 4);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/*
 * Under the units' UMask=0077, each file is 0640 of the group set (the
 * socket's): the group reads it, others do not. As root the group is
 * nogroup's (65534), else robotsd's own (all it may give).
 */
START_TEST(test_files_are_the_groups_whatever_the_umask)
{
	char dir[] = "check_archive.XXXXXX", names[8][ARCHIVE_NAME_SIZE];
	char path[512], body[64];
	struct archive_settings set = { NULL, 1, 0, 1 << 20, -1 };
	struct archive_stats st;
	struct archive *a;
	struct stat sb;
	mode_t old = umask(077);
	int i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	set.dir = dir;
	set.gid = geteuid() == 0 ? 65534 : (long)getegid();
	a = archive_new(&set);
	add(a, 1, body, sizeof(body));
	add(a, 2, body, sizeof(body)); /* a file each: max_file_bytes 1 */
	archive_sync(a);
	archive_stats(a, &st);
	archive_free(a);
	umask(old);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_int_eq(list(dir, names, 8), 2);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ck_assert_int_eq(stat(path, &sb), 0);
		ck_assert_uint_eq(sb.st_mode & 07777, 0640);
		ck_assert_uint_eq(sb.st_gid, (gid_t)set.gid);
		unlink(path);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_failures_are_counted_not_fatal)
{
	struct archive_settings set = { "no-such-dir/archive", 100000, 0,
		1 << 20, -1 };
	struct archive_stats st;
	struct archive *a = archive_new(&set);
	char body[64];

	ck_assert_ptr_nonnull(a);
	add(a, 1, body, sizeof(body));
	add(a, 2, body, sizeof(body));
	archive_sync(a);
	archive_stats(a, &st);
	ck_assert_uint_eq(st.records, 0);
	ck_assert_uint_eq(st.errors, 3); /* the start, then each record */
	archive_free(a);
}
END_TEST

START_TEST(test_a_full_queue_drops)
{
	char dir[] = "check_archive.XXXXXX", body[64];
	struct archive_settings set = { NULL, 100000, 0, 100, -1 };
	struct warc_response r;
	struct archive_stats st;
	struct archive *a;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	set.dir = dir;
	a = archive_new(&set);
	memset(&r, 0, sizeof(r));
	r.target_uri = "http://a.example/robots.txt";
	r.http_head = "HTTP/1.1 200 OK\r\n";
	r.http_head_len = 17;
	memset(body, 'x', sizeof(body));
	r.body = body;
	r.body_len = sizeof(body);
	ck_assert_int_eq(archive_add(a, &r), -1);
	archive_stats(a, &st);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.records, 0);
	archive_free(a);
	ck_assert_int_eq(rmdir(dir), 0); /* nothing was written */
}
END_TEST

/* The archive suite. */
static Suite *
archive_suite(void)
{
	Suite *s = suite_create("archive");
	TCase *rules = tcase_create("rules"), *thread = tcase_create("thread");

	tcase_add_test(rules, test_file_names);
	tcase_add_loop_test(rules, test_must_rotate, 0, NROWS(rotate_rows));
	tcase_add_loop_test(rules, test_plan_removal, 0, NROWS(removal_rows));
	tcase_add_test(thread, test_thread_writes_rotates_and_removes);
	tcase_add_test(thread, test_records_share_a_file_until_it_is_full);
	tcase_add_test(thread, test_files_are_the_groups_whatever_the_umask);
	tcase_add_test(thread, test_failures_are_counted_not_fatal);
	tcase_add_test(thread, test_a_full_queue_drops);
	tcase_set_timeout(thread, 30);
	suite_add_tcase(s, rules);
	suite_add_tcase(s, thread);
	return s;
}

TEST_PROGRAM(archive_suite, NULL, NULL);
