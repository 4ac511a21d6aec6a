"""Shared by the client tests: the real robotsd and the local origin server
of the integration tests (tests/integ/harness.py and origin.py under
$top_srcdir), and the package under test on sys.path."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get("top_srcdir") or os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "integ"))

import harness  # noqa: E402  (needs the path above)
from harness import Daemon, DaemonTest, poll  # noqa: E402,F401

RULES = ("User-agent: *\n"
         "Disallow: /private/\n"
         "Allow: /private/open\n"
         "Crawl-delay: 2\n")


class ClientTest(DaemonTest):
    """A DaemonTest whose daemon runs on the real clock (no --test-clock)
    and an origin a.test serving RULES."""

    def setUp(self):
        super().setUp()
        self.origin.robots("a.test", RULES)

    def start(self, *args, **kw):
        kw.setdefault("test_clock", False)
        return super().start(*args, **kw)

    def restart(self, kill=False):
        """Stop the daemon (SIGTERM, or SIGKILL if kill) and start a new
        one on its socket."""
        old = self.d
        if kill:
            old.kill()
            old.proc = None  # its cleanup has nothing left to check
        else:
            old.stop()
        d = Daemon(old.args[old.args.index("--log-level") + 2:],
                   socket_path=old.socket, test_clock=False)
        self.daemons.append(d)
        d.start()
        self.addCleanup(d.stop)
        self.d = d
        return d


__all__ = ["harness", "Daemon", "ClientTest", "poll", "RULES"]
