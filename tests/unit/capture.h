/*
 * capture.h: what a test's code writes to stdout or stderr, read back
 * (check_config for --help and --version, check_log for log lines).
 */
#ifndef TESTS_CAPTURE_H
#define TESTS_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <check.h>

/* Redirect fd into a temporary file until capture_end. */
static inline int
capture_begin(int fd, int *saved)
{
	char path[] = "/tmp/check_capture.XXXXXX";
	int tmp;

	fflush(stdout);
	fflush(stderr);
	ck_assert_int_ne(tmp = mkstemp(path), -1);
	unlink(path);
	*saved = dup(fd);
	dup2(tmp, fd);
	return tmp;
}

/* Restore fd and return what was written to it. */
static inline char *
capture_end(int fd, int saved, int tmp)
{
	char *buf;
	off_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(saved, fd);
	close(saved);
	n = lseek(tmp, 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(pread(tmp, buf, (size_t)n, 0), n);
	close(tmp);
	return buf;
}

#endif /* TESTS_CAPTURE_H */
