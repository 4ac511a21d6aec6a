"""What an operator reads: /metrics (checked with promtool), its histograms
and labelled counters moving with checks and fetches, /healthz through a
drain, and the key=value log lines of a fetch and of a failing origin."""
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

from harness import VERSION, DaemonTest, closed_port, http_get, poll

PROMTOOL = shutil.which("promtool")


def sample(text, name, labels=""):
    """The value of one sample in exposition text; None when absent."""
    key = name + ("{%s}" % labels if labels else "")
    for ln in text.splitlines():
        if ln.startswith(key + " "):
            return float(ln[len(key) + 1:])
    return None


class MetricsBase(DaemonTest):
    """A daemon with --metrics on a free port, and HTTP helpers."""

    def start_metrics(self, *args, **kw):
        self.port = closed_port()
        c = self.start("--metrics", "127.0.0.1:%d" % self.port, *args, **kw)
        self.assertTrue(poll(lambda: self.get("/healthz", quiet=True),
                             timeout=5, interval=0.05),
                        "nothing answers HTTP on port %d" % self.port)
        return c

    def get(self, path, quiet=False):
        """(status, body) of GET path; None if nothing answers (quiet)."""
        try:
            return http_get(self.port, path)
        except OSError:
            if quiet:
                return None
            raise

    def log(self):
        """The daemon's whole log, each line ended by a newline."""
        return self.d.log(100000) + "\n"

    def scrape(self):
        status, text = self.get("/metrics")
        self.assertEqual(status, 200)
        return text

    def promtool(self, text):
        if PROMTOOL is None:
            self.skipTest("promtool is not installed (Debian: prometheus)")
        r = subprocess.run([PROMTOOL, "check", "metrics"],
                           input=text.encode(), capture_output=True,
                           timeout=30)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""),
                         text)



class MetricsTest(MetricsBase):

    # --- /metrics --------------------------------------------------------
    def test_metrics_pass_promtool_and_histograms_move(self):
        c = self.start_metrics()
        before = self.scrape()
        self.promtool(before)
        self.assertEqual(sample(before, "robotsd_build_info",
                                'version="%s"' % VERSION), 1)
        self.assertEqual(sample(before, "robotsd_fetch_duration_seconds_count"),
                         0)
        req0 = sample(before, "robotsd_request_duration_seconds_count")
        lag0 = sample(before, "robotsd_loop_lag_seconds_count")
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        self.assertAnswer(c.check("http://a.test/p"), source="fetched",
                          reason="rule")
        self.assertAnswer(c.check("http://a.test/q"), source="cache",
                          reason="no_rule")
        self.assertAnswer(c.check("http://a.test/robots.txt"),
                          source="cache", reason="robots_txt")
        self.advance(86400 + 1)  # past the TTL: the old copy, refreshing
        self.assertAnswer(c.check("http://a.test/p"), source="stale",
                          reason="rule")
        self.wait_fetched("http://a.test")
        after = self.scrape()
        self.promtool(after)
        self.assertEqual(
            sample(after, "robotsd_fetch_duration_seconds_count"), 2)
        self.assertEqual(sample(after, "robotsd_fetch_duration_seconds_bucket",
                                'le="+Inf"'), 2)
        self.assertGreater(
            sample(after, "robotsd_fetch_duration_seconds_sum"), 0)
        self.assertEqual(sample(after, "robotsd_fetch_duration_seconds_bucket",
                                'le="60"'), 2)
        # the checks, the clock move and the inspects of wait_fetched
        self.assertGreaterEqual(
            sample(after, "robotsd_request_duration_seconds_count"),
            req0 + 6)
        self.assertGreater(
            sample(after, "robotsd_request_duration_seconds_sum"), 0)
        self.assertLoopLag(after, lag0)
        for labels, n in (('source="fetched",reason="rule"', 1),
                          ('source="cache",reason="no_rule"', 1),
                          ('source="cache",reason="robots_txt"', 1),
                          ('source="stale",reason="rule"', 1),
                          ('source="stale",reason="no_rule"', 0),
                          ('source="shared",reason="rule"', 0),
                          ('source="fetched",reason="unreachable"', 0)):
            self.assertEqual(sample(after, "robotsd_answers_total", labels),
                             n, labels)
        self.assertEqual(sample(after, "robotsd_fetch_outcomes_total",
                                'class="2xx"'), 2)
        self.assertEqual(sample(after, "robotsd_fetch_outcomes_total",
                                'class="5xx"'), 0)
        self.assertEqual(sample(after, "robotsd_origins_in_backoff"), 0)
        self.assertGreater(sample(after, "process_resident_memory_bytes"),
                           1 << 20)
        self.assertGreaterEqual(sample(after, "process_open_fds"), 4)
        self.assertGreater(sample(after, "process_cpu_seconds_total"), -1)
        self.assertLess(abs(sample(after, "process_start_time_seconds")
                            - time.time()), 120)
        # the stats op keeps its fields and shows no labelled samples
        st = self.stats()
        self.assertEqual((st["fetches"], st["hits"], st["stale"],
                          st["backoff"]),
                         (2, 1, 1, 0))  # /robots.txt is no cache hit
        self.assertFalse([k for k in st if "{" in k or k.endswith("_bucket")])

    def assertLoopLag(self, text, count0):
        """The loop lag histogram has counted ticks since count0 (it runs
        on the real clock, so wait for the next one), and the ticks it
        puts over 10 ms are those robotsd_loop_late_total counts."""
        def count():
            return sample(self.scrape(), "robotsd_loop_lag_seconds_count")
        self.assertIsNotNone(count0, "no robotsd_loop_lag_seconds")
        self.assertTrue(poll(lambda: count() > count0, timeout=5),
                        "the loop lag timer did not tick")
        n = sample(text, "robotsd_loop_lag_seconds_count")
        self.assertEqual(sample(text, "robotsd_loop_lag_seconds_bucket",
                                'le="+Inf"'), n)
        under = [sample(text, "robotsd_loop_lag_seconds_bucket",
                        'le="%s"' % le)
                 for le in ("0.0005", "0.001", "0.0025", "0.005", "0.01",
                            "0.025", "0.05", "0.1", "0.25", "0.5", "1",
                            "2.5")]
        self.assertEqual(under, sorted(under), text)
        self.assertLessEqual(under[-1], n)
        self.assertEqual(n - under[4],
                         sample(text, "robotsd_loop_late_total"), text)
        self.assertGreaterEqual(
            sample(text, "robotsd_loop_lag_seconds_sum"), 0)

    def test_start_time_is_the_epochs_without_proc_stat(self):
        # The shipped unit's ProcSubset=pid: /proc holds the processes
        # only, no /proc/stat (and no btime). robotsd runs in a mount
        # namespace of its own with such a /proc (the sh execs robotsd).
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare(1) to mount a /proc "
                          "of subset=pid")
        wrap = ["unshare", "--mount", "sh", "-c",
                'mount -t proc -o subset=pid proc /proc && '
                '! test -e /proc/stat && exec "$@"', "sh"]
        probe = subprocess.run(wrap + ["true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot mount /proc with subset=pid: %r"
                          % probe.stderr)
        self.start_metrics(wrap=wrap)
        text = self.scrape()
        self.assertLess(abs(sample(text, "process_start_time_seconds")
                            - time.time()), 60, text)
        self.assertGreater(sample(text, "process_resident_memory_bytes"),
                           1 << 20)

    def test_failing_origin_backoff_and_recovery(self):
        c = self.start_metrics()
        self.origin.set("down.test", status=503)
        self.assertAnswer(c.check("http://down.test/"), allowed=False,
                          source="fetched", reason="unreachable")
        m = self.scrape()
        self.promtool(m)
        self.assertEqual(sample(m, "robotsd_origins_in_backoff"), 1)
        self.assertEqual(sample(m, "robotsd_fetch_outcomes_total",
                                'class="5xx"'), 1)
        self.assertEqual(sample(m, "robotsd_answers_total",
                                'source="fetched",reason="unreachable"'), 1)
        self.assertEqual(self.stats()["backoff"], 1)
        log = self.log()
        got = re.search(
            r"info: event=fetch origin=http://down\.test status=503 "
            r"bytes=\d+ ms=\d+ redirects=0 class=5xx outcome=unreachable "
            r"stale=0 failures=1 next_retry_s=(\d+) "
            r"error=\"HTTP status 503\"\n", log)
        self.assertTrue(got, log)
        self.assertRegex(
            log, r"warn: event=backoff_start origin=http://down\.test "
            r"stale=0 next_retry_s=%s error=\"HTTP status 503\"\n"
            % got.group(1))
        # The origin comes back: the next try after the retry time ends
        # the backoff.
        self.origin.robots("down.test", "User-agent: *\nDisallow:\n")
        self.advance(int(got.group(1)) + 1)
        c.check("http://down.test/")  # the old answer; refreshes
        self.wait_fetched("http://down.test")
        self.assertAnswer(c.check("http://down.test/"), allowed=True,
                          source="cache", reason="no_rule")
        log = self.log()
        self.assertRegex(log, r"info: event=fetch origin=http://down\.test "
                         r"status=200 bytes=24 ms=\d+ redirects=0 class=2xx "
                         r"outcome=rules\n")
        self.assertRegex(log, r"info: event=backoff_end "
                         r"origin=http://down\.test failures=1 "
                         r"failed_for_s=\d+\n")
        self.assertEqual(sample(self.scrape(), "robotsd_origins_in_backoff"),
                         0)

    def test_fetch_log_line_quotes_odd_bytes(self):
        c = self.start()
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        self.assertAnswer(c.check("http://a.test:80/x"), source="fetched")
        self.assertRegex(self.log(), r"info: event=fetch "
                         r"origin=http://a\.test status=200 bytes=27 ms=\d+ "
                         r"redirects=0 class=2xx outcome=rules\n")
        self.origin.set("b.test", status=500, delay=0)
        c.check("http://b.test/")
        # a network-supplied error text with spaces is one quoted value
        self.assertRegex(self.log(), r" error=\"HTTP status 500\"\n")
        self.assertNotIn("__", self.log())

    # --- /healthz ----------------------------------------------------------
    def test_healthz_200_while_serving_503_while_draining(self):
        c = self.start_metrics()
        self.assertEqual(self.get("/healthz"), (200, "serving\n"))
        self.assertEqual(self.get("/nothing")[0], 404)
        self.origin.set("slow.test", hold=True)
        c.send({"id": 9, "op": "check", "agent": "A",
                "url": "http://slow.test/"})
        self.origin.wait_hits("slow.test", 1)
        self.d.proc.send_signal(signal.SIGTERM)
        # the check keeps the daemon in its drain: /healthz says so
        self.assertTrue(poll(lambda: self.get("/healthz") ==
                             (503, "stopping\n"), timeout=5), self.log())
        self.assertIsNone(self.d.proc.poll(), "did not wait for the check")
        self.origin.release("slow.test")
        self.assertAnswer(c.wait_id(9), ok=True, source="fetched")
        self.assertEqual(self.d.wait_exit(), 0, self.log())
        self.assertIn("info: event=stopping signal=15 waiting=1 fetches=1 "
                      "origins=http://slow.test stop_timeout=10\n",
                      self.log())


if __name__ == "__main__":
    unittest.main()
