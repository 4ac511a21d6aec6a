"""Run the integration tests (tests/integ/test_*.py, or the files matching
each pattern given) and end with one summary line, 'integration: N passed,
N failed'. Exit 1 on any failure."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    sys.path.insert(0, HERE)
    patterns = sys.argv[1:] or ["test_*.py"]
    suite = unittest.TestSuite(
        unittest.defaultTestLoader.discover(HERE, pattern=p)
        for p in patterns)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    if result.testsRun == 0:
        print("integration: no test ran")
        return 1
    print("integration: %d passed, %d failed, %d skipped"
          % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
