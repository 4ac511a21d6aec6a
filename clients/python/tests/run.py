"""Run the Python client's test modules; the last line says
"clients-python: N passed, N failed"; exit status 1 on any failure."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MODULES = ["test_lines", "test_clients", "test_preferences", "test_signals",
           "test_scrapy", "test_watch",
           "test_hostile_daemon"]


def main(argv):
    names = argv[1:] or MODULES
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    res = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    failed = len(res.failures) + len(res.errors) + \
        len(res.unexpectedSuccesses)
    sys.stdout.flush()
    print("clients-python: %d passed, %d failed"
          % (res.testsRun - failed - len(res.skipped), failed))
    return 1 if failed or not res.testsRun else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
