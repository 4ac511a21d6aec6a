/*
 * test_main.h: the one main() of the unit tests (test_main.c). Each test
 * program names its suite, and the setup and teardown around the run if it
 * needs them, with TEST_PROGRAM(suite, setup, teardown).
 */
#ifndef TESTS_TEST_MAIN_H
#define TESTS_TEST_MAIN_H

#include <check.h>

struct test_program {
	Suite *(*suite)(void); /* the tests, built when the run starts */
	/* Before the run, or NULL: 0 to run, else the exit status (77 skip). */
	int (*setup)(void);
	void (*teardown)(void); /* after the run, or NULL */
};

extern const struct test_program test_program;

#define TEST_PROGRAM(suite_, setup_, teardown_)                                \
	const struct test_program test_program = { suite_, setup_, teardown_ }

#endif /* TESTS_TEST_MAIN_H */
