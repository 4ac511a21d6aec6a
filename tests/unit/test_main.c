/*
 * test_main.c: main() of every unit test program: the program's setup, its
 * suite run by Check (CK_FORK and CK_RUN_CASE as Check reads them), its
 * teardown; exit 0 when every test passed.
 */
#include <config.h>

#include <check.h>
#include <stdlib.h>

#include "test_main.h"

int
main(void)
{
	SRunner *sr;
	int failed, rc;

	if (test_program.setup != NULL && (rc = test_program.setup()) != 0)
		return rc;
	sr = srunner_create(test_program.suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (test_program.teardown != NULL)
		test_program.teardown();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
