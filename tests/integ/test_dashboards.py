"""test_dashboards.py: the shipped Prometheus alert rules and Grafana
dashboard (contrib/) name only metrics a real robotsd exports (each
robotsd_ name in them, less a histogram's _bucket/_sum/_count, is a family
of /metrics), the rules pass promtool check rules and the unit tests of
tests/data/robotsd-alerts-test.yml (promtool test rules); the new families
(verdict label, configured limits) move and hold the settings."""
import http.client
import json
import os
import re
import shutil
import subprocess
import unittest

from harness import DaemonTest, closed_port, poll
from test_metrics import sample

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", ".."))
RULES = os.path.join(TOP, "contrib", "prometheus", "robotsd-alerts.yml")
RULES_TEST = os.path.join(TOP, "tests", "data", "robotsd-alerts-test.yml")
DASHBOARD = os.path.join(TOP, "contrib", "grafana", "robotsd-dashboard.json")
PROMTOOL = shutil.which("promtool")


def families(text):
    """The metric families a /metrics text declares (# TYPE lines)."""
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M))


def named(text):
    """robotsd_ metric names in text, histogram suffixes taken off."""
    return {re.sub(r"_(bucket|sum|count)$", "", m)
            for m in re.findall(r"\brobotsd_[a-z0-9_]+", text)}


class Dashboards(DaemonTest):

    def start_metrics(self, *args):
        self.port = closed_port()
        c = self.start("--metrics", "127.0.0.1:%d" % self.port, *args)
        self.assertTrue(poll(self.scrape_quiet, timeout=5, interval=0.05),
                        "nothing answers HTTP on port %d" % self.port)
        return c

    def scrape_quiet(self):
        try:
            return self.scrape()
        except OSError:
            return None

    def scrape(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        text = r.read().decode()
        conn.close()
        return text

    def test_rules_and_dashboard_name_only_exported_metrics(self):
        self.start_metrics()
        exported = families(self.scrape())
        rules = open(RULES).read()
        dash = json.load(open(DASHBOARD))
        exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
        exprs.append(dash["templating"]["list"][1]["query"])
        for where, text in (("rules", rules), ("dashboard", "\n".join(exprs))):
            with self.subTest(where=where):
                names = named(text)
                self.assertGreater(len(names), 5)
                self.assertEqual(names - exported, set(),
                                 "%s names metrics robotsd lacks" % where)

    def test_promtool_checks_the_rules(self):
        if PROMTOOL is None:
            self.skipTest("promtool is not installed (Debian: prometheus)")
        r = subprocess.run([PROMTOOL, "check", "rules", RULES],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_promtool_tests_the_config_error_alert(self):
        if PROMTOOL is None:
            self.skipTest("promtool is not installed (Debian: prometheus)")
        r = subprocess.run([PROMTOOL, "test", "rules", RULES_TEST],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_answer_times_by_op_checks_at_once_and_waited_apart(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        c = self.start_metrics()
        c.check("http://a.test/x")            # waits on the fetch
        c.check("http://a.test/y")            # at once
        c.check("http://a.test/z")            # at once
        c.call({"op": "inspect", "origin": "http://a.test"})
        c.call({"op": "stats"})
        c.call({"op": "history", "origin": "http://a.test"})
        c.send_raw(b"not json\n")  # answered (id null) before the ping
        c.call({"op": "ping"})
        text = self.scrape()
        want = {'op="check",waited="yes"': 1, 'op="check",waited="no"': 2,
                'op="ping"': 1, 'op="inspect"': 1, 'op="stats"': 1,
                'op="history"': 1, 'op="watch"': 0,
                'op="purge"': 0, 'op="other"': 1}
        for labels, n in want.items():
            self.assertEqual(sample(text, "robotsd_op_duration_seconds_count",
                                    labels), n, labels)
        ops = sum(float(v) for v in re.findall(
            r"^robotsd_op_duration_seconds_count\{[^}]*\} (\S+)$", text,
            re.M))
        self.assertEqual(ops, sample(
            text, "robotsd_request_duration_seconds_count"))

    def test_watch_events_are_not_timed_as_answers(self):
        """A watch's events answer no request line: only the watch op's own
        answer counts in op="watch"; a line the watching connection sends
        is refused before its op, as "other"."""
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        c = self.start_metrics()
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch",
                                  "origins": ["http://a.test"]}),
                          ok=True, watching=1)
        self.assertAnswer(c.check("http://a.test/x"), source="fetched")
        self.assertEqual(w.recv()["event"], "changed")
        w.send({"op": "ping", "id": 7})
        self.assertError(w.recv(), "bad_request", rid=None)
        text = self.scrape()
        want = {'op="watch"': 1, 'op="other"': 1,
                'op="check",waited="yes"': 1}
        for labels, n in want.items():
            self.assertEqual(sample(text, "robotsd_op_duration_seconds_count",
                                    labels), n, labels)
        self.assertEqual(sample(
            text, "robotsd_request_duration_seconds_count"), 3)

    def test_verdict_label_and_configured_limits(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        c = self.start_metrics("--max-waiting", "1234", "--max-fetches",
                               "7", "--cache-max-bytes", "64M",
                               "--max-connections", "99")
        c.check("http://a.test/x")
        c.check("http://a.test/y")
        c.check("http://a.test/z")
        c.check("http://a.test/robots.txt")
        text = self.scrape()
        self.assertEqual(sample(text, "robotsd_verdicts_total",
                                'verdict="allowed"'), 3)
        self.assertEqual(sample(text, "robotsd_verdicts_total",
                                'verdict="disallowed"'), 1)
        for name, want in (("robotsd_limit_max_waiting", 1234),
                           ("robotsd_limit_max_fetches", 7),
                           ("robotsd_limit_cache_max_bytes", 64 << 20),
                           ("robotsd_limit_max_connections", 99)):
            self.assertEqual(sample(text, name), want, name)


if __name__ == "__main__":
    unittest.main()
