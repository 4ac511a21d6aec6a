"""with-daemon.py COMMAND...: run COMMAND beside a real robotsd ($ROBOTSD)
on a private socket, named to COMMAND as $ROBOTSD_SOCKET, with every origin
served by the integration tests' local origin server (tests/integ), where
http://a.test/robots.txt is RULES. The packaged clients' tests run their
client this way. Exit status: COMMAND's (2 if it could not run)."""
import os
import subprocess
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "tests", "integ"))

from harness import Daemon, origin  # noqa: E402

RULES = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    o = origin()
    o.robots("a.test", RULES)
    d = Daemon(test_clock=False).start()
    try:
        env = dict(os.environ, ROBOTSD_SOCKET=d.socket)
        rc = subprocess.run(argv[1:], env=env, timeout=120).returncode
    finally:
        d.stop()
        o.close()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
