"""test_cause.py: an unreachable answer (single, batch row) and inspect
name why, as a stable cause code and a message; robotsctl check prints the
cause and the crawl delay; other answers carry no cause. The cause is kept
in the state file across a restart and travels through the shared tier (a
real redis-server) to another instance."""
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import ROBOTSCTL, DaemonTest, closed_port, origin, poll
from test_shared import Redis, entry_key, tier_built

RULES = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"


class CauseTest(DaemonTest):

    def assertCause(self, a, code, message=None):
        self.assertEqual(a.get("reason"), "unreachable", a)
        self.assertIs(a.get("allowed"), False, a)
        cause = a.get("cause")
        self.assertIsInstance(cause, dict, a)
        self.assertEqual(sorted(cause), ["code", "message"], a)
        self.assertEqual(cause["code"], code, a)
        self.assertIsInstance(cause["message"], str, a)
        self.assertNotEqual(cause["message"], "", a)
        if message is not None:
            self.assertEqual(cause["message"], message, a)


class Cause(CauseTest):

    def test_http_status_causes_and_no_cause_elsewhere(self):
        for st in (500, 502, 503, 429):
            self.origin.set("s%d.test" % st, status=st, body=RULES)
        self.origin.robots("ok.test", RULES)
        self.origin.set("gone.test", status=404)
        c = self.start()
        for st, code in ((500, "http_5xx"), (502, "http_5xx"),
                         (503, "http_503"), (429, "http_429")):
            with self.subTest(status=st):
                a = c.check("http://s%d.test/x" % st)
                self.assertEqual(a["http_status"], st, a)
                self.assertCause(a, code, "HTTP status %d" % st)
                i = self.inspect("http://s%d.test" % st)
                self.assertEqual(i["retry"]["cause"], a["cause"], i)
        for u in ("http://ok.test/private/x", "http://ok.test/y",
                  "http://gone.test/x", "http://ok.test/robots.txt"):
            with self.subTest(url=u):
                self.assertNotIn("cause", c.check(u))
        self.assertIsNone(self.inspect("http://ok.test")["retry"]["cause"])
        # a batch's rows: the cause on the unreachable row only
        a = c.call({"op": "check", "agent": "TestBot",
                    "urls": ["http://s503.test/x", "http://ok.test/y"]})
        rows = a["results"]
        self.assertCause(rows[0], "http_503", "HTTP status 503")
        self.assertEqual(rows[0]["source"], "cache", rows[0])
        self.assertNotIn("cause", rows[1])

    def test_connection_refused_is_connect(self):
        c = self.start("--connect-to", "::127.0.0.1:%d" % closed_port(),
                       connect_to=False)
        a = c.check("http://dead.test/x")
        self.assertCause(a, "connect")
        i = self.inspect("http://dead.test")
        self.assertEqual(i["retry"]["cause"], a["cause"], i)
        self.assertEqual(i["retry"]["last_error"], a["cause"]["message"])

    def test_dns_failure_is_dns(self):
        # --connect-to maps only a.test: the .invalid name is looked up
        c = self.start("--fetch-timeout", "5", "--connect-to",
                       "a.test:80:127.0.0.1:%d" % origin().port,
                       connect_to=False)
        self.assertCause(c.check("http://no-such-host.invalid/x"), "dns")

    def test_private_address_refused_is_private_address(self):
        c = self.start(connect_to=False)  # --deny-private-addresses yes
        a = c.check("http://127.0.0.1:%d/x" % origin().port)
        self.assertCause(a, "private_address",
                         "refused a non-public address")
        self.assertEqual(self.origin.hits("127.0.0.1"), [])

    def test_timeout_is_timeout(self):
        self.origin.robots("hang.test", RULES, hold=True)
        c = self.start("--fetch-timeout", "1")
        self.assertCause(c.check("http://hang.test/x"), "timeout")

    def test_robotsctl_check_prints_cause_and_crawl_delay(self):
        self.origin.set("s503.test", status=503)
        self.origin.robots("ok.test", RULES)
        self.start()

        def ctl(url):
            r = subprocess.run([ROBOTSCTL, "-s", self.d.socket, "check", url,
                                "TestBot"],
                               capture_output=True, text=True, timeout=30)
            return r.stdout

        self.assertEqual(ctl("http://s503.test/x"),
                         "disallowed http://s503.test/x (unreachable: "
                         "HTTP 503; cause http_503: HTTP status 503)\n")
        self.assertEqual(ctl("http://ok.test/private/x"),
                         "disallowed http://ok.test/private/x (line 2: "
                         "disallow /private/, crawl delay 2 s)\n")


class CauseKept(CauseTest):
    """A refused connection: the one cause no HTTP status tells."""

    def dead_args(self):
        return ("--connect-to", "dead.test:80:127.0.0.1:%d" % closed_port(),
                "--connect-to", "::127.0.0.1:%d" % origin().port)

    def test_cause_survives_a_restart_with_the_state_file(self):
        self.origin.set("s503.test", status=503)
        tmp = tempfile.mkdtemp(prefix="robotsd-integ-")
        self.addCleanup(shutil.rmtree, tmp, True)
        state = os.path.join(tmp, "state")
        c = self.start("--state-file", state, *self.dead_args(),
                       connect_to=False)
        before = c.check("http://dead.test/x")
        self.assertCause(before, "connect")
        self.assertCause(c.check("http://s503.test/x"), "http_503")
        self.d.stop()
        self.d.proc = None
        c = self.start("--state-file", state, *self.dead_args(),
                       connect_to=False)
        a = c.check("http://dead.test/x")
        self.assertEqual(a["source"], "cache", a)  # not fetched again
        self.assertCause(a, "connect", before["cause"]["message"])
        i = self.inspect("http://dead.test")
        self.assertEqual(i["retry"]["cause"], before["cause"], i)
        self.assertCause(c.check("http://s503.test/x"), "http_503",
                         "HTTP status 503")
        self.assertEqual(len(self.origin.hits("s503.test")), 1)

    def test_cause_reaches_another_instance_through_redis(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        tmp = tempfile.mkdtemp(prefix="robotsd-redis-")
        self.addCleanup(shutil.rmtree, tmp, True)
        redis = Redis(tmp, "r0").start()
        self.addCleanup(redis.stop)
        a = self.start("--redis", redis.url, *self.dead_args(),
                       connect_to=False)
        b = self.start("--redis", redis.url, *self.dead_args(),
                       connect_to=False)
        first = a.check("http://dead.test/x")
        self.assertEqual(first["source"], "fetched", first)
        self.assertCause(first, "connect")
        self.assertTrue(poll(lambda: redis.cmd(
            "GET", entry_key("http://dead.test"))))
        got = b.check("http://dead.test/x")
        self.assertEqual(got["source"], "shared", got)
        self.assertCause(got, "connect", first["cause"]["message"])
        i = self.inspect("http://dead.test", client=b)
        self.assertEqual(i["retry"]["cause"], first["cause"], i)


if __name__ == "__main__":
    unittest.main()
