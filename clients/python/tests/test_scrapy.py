"""RobotsdMiddleware in real Scrapy crawls (crawl.py, run with a python3
that has Scrapy: Debian's /usr/bin/python3 first) of a small site served by
the local origin server, with robotsd fetching its robots.txt."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

from support import ClientTest

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
UA = "PyTestCrawler/1.0 (+http://crawler.example/bot)"
# ROBOTSTXT_USER_AGENT in the crawl that sets it: a group of its own.
ROBOTS_UA = "SweepBot/2.0"
ROBOTS = ("User-agent: pytestcrawler\n"
          "Disallow: /private/\n"
          "Allow: /private/open\n"
          "Crawl-delay: 0.4\n"
          "\n"
          "User-agent: sweepbot\n"
          "Disallow: /b\n"
          "\n"
          "User-agent: *\n"
          "Disallow: /\n")
PAGES = {
    "/": ["/a", "/b", "/private/1", "/private/open"],
    "/a": ["/c", "/private/2"],
    "/b": ["/c", "/private/3/x"],
    "/c": ["s3://bucket/key"],  # a scheme robotsd does not judge
    "/private/open": ["/a"],
}
FORBIDDEN = {"/private/1", "/private/2", "/private/3/x"}
MIDDLEWARE = "robotsd.scrapy.RobotsdMiddleware"


def scrapy_python():
    """A python3 that can import scrapy (Debian's first), or None."""
    for py in ("/usr/bin/python3", sys.executable, "python3"):
        try:
            if subprocess.run([py, "-c", "import scrapy"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return py
        except OSError:
            pass
    return None


class ScrapyCrawl(ClientTest):

    def setUp(self):
        super().setUp()
        self.python = scrapy_python()
        self.assertIsNotNone(self.python, "no python3 with Scrapy "
                             "(Debian: apt-get install python3-scrapy)")
        self.origin.robots(HOST, ROBOTS)
        for path, links in PAGES.items():
            body = "<html><body>%s</body></html>" % "".join(
                '<a href="%s">%s</a>' % (h, h) for h in links)
            self.origin.set(HOST, path, body=body,
                            headers={"Content-Type": "text/html"})
        self.base = "http://%s:%d" % (HOST, self.origin.port)

    def crawl(self, socket, **settings):
        """Run crawl.py with these Scrapy settings over its own; its result
        dict."""
        tmp = tempfile.mkdtemp(prefix="robotsd-scrapy-")
        conf, out = os.path.join(tmp, "conf.json"), os.path.join(tmp, "out")
        with open(conf, "w") as f:
            json.dump(dict(start=self.base + "/", socket=socket,
                           user_agent=UA, settings=settings), f)
        p = subprocess.run([self.python, os.path.join(HERE, "crawl.py"),
                            conf, out], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        log = p.stdout.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, log[-4000:])
        with open(out) as f:
            res = json.load(f)
        res["log"] = log
        return res

    def page_hits(self):
        return [h for h in self.origin.hits(HOST) if h.path != "/robots.txt"]

    def assert_polite_crawl(self, res):
        log = res["log"][-4000:]
        self.assertIn(MIDDLEWARE, res["middlewares"])
        hits = self.page_hits()
        paths = sorted(h.path for h in hits)
        self.assertEqual(paths, sorted(PAGES), log)
        self.assertFalse(FORBIDDEN & set(paths))
        self.assertEqual(res["stats"].get("robotstxt/forbidden"),
                         len(FORBIDDEN), log)
        robots = self.origin.hits(HOST, "/robots.txt")
        self.assertEqual(len(robots), 1, robots)
        self.assertTrue(robots[0].headers["user-agent"].startswith(
            "robotsd/"), robots[0].headers)
        for h in hits:
            self.assertEqual(h.headers["user-agent"], UA)
        self.assertEqual(res["slot_delays"], {HOST: 0.4}, log)
        times = sorted(h.time for h in hits)
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertGreaterEqual(min(gaps), 0.35, gaps)
        self.assertNotIn("robotstxt/request_count", res["stats"])
        # s3: passed the middleware unjudged; Scrapy could not download it.
        self.assertEqual(res["stats"].get(
            "downloader/exception_type_count/"
            "scrapy.exceptions.NotSupported"), 1, log)
        self.assertFalse([k for k in res["stats"]
                          if k.startswith("robotsd/error_count/")])

    def test_default_reactor(self):
        self.start()
        self.assert_polite_crawl(self.crawl(self.d.socket))

    def test_asyncio_reactor(self):
        self.start()
        self.assert_polite_crawl(self.crawl(
            self.d.socket, TWISTED_REACTOR=(
                "twisted.internet.asyncioreactor.AsyncioSelectorReactor")))

    def test_robotsd_down_fails_closed_by_default(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"))
        self.assertEqual(self.page_hits(), [])
        self.assertEqual(res["urls"], [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"), 1)
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])

    def test_robotsd_down_with_fail_open_crawls(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"),
                         ROBOTSD_FAIL_OPEN=True)
        paths = sorted(h.path for h in self.page_hits())
        self.assertEqual(paths, sorted(set(PAGES) | FORBIDDEN))
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"),
            len(PAGES) + len(FORBIDDEN) + 1)  # + s3://

    def test_unreachable_robots_txt_defers_until_it_recovers(self):
        # robots.txt answers 503 until the crawl has asked once, then the
        # rules: every page is fetched after the recovery, none lost.
        self.origin.robots(HOST, "", status=503)
        self.start("--retry-503-min", "1", "--retry-503-max", "2")

        def recover():
            if len(self.origin.wait_hits(HOST, 1, timeout=60,
                                         path="/robots.txt")) >= 1:
                self.origin.robots(HOST, ROBOTS)
        t = threading.Thread(target=recover, daemon=True)
        t.start()
        res = self.crawl(self.d.socket)
        t.join(5)
        log = res["log"][-6000:]
        st = res["stats"]
        self.assertEqual(sorted(h.path for h in self.page_hits()),
                         sorted(PAGES), log)
        self.assertGreaterEqual(st.get("robotsd/deferred", 0), 1, log)
        self.assertEqual(st.get("robotsd/forbidden"), len(FORBIDDEN), log)
        self.assertEqual(st.get("robotstxt/forbidden"), len(FORBIDDEN), log)
        self.assertNotIn("robotsd/gave_up", st)
        self.assertEqual(len(self.origin.hits(HOST, "/robots.txt")), 2)
        info = [ln for ln in res["log"].splitlines()
                if "INFO" in ln and "deferring its requests" in ln]
        self.assertEqual(len(info), 1, info)
        self.assertIn("(http_503: HTTP status 503)", info[0])
        self.assertEqual(res["reason"], "finished")

    def test_unreachable_dropped_when_told_or_after_defer_max(self):
        self.origin.robots(HOST, "", status=503)
        self.start("--retry-503-min", "1", "--retry-503-max", "2")
        res = self.crawl(self.d.socket, ROBOTSD_UNREACHABLE="drop")
        st = res["stats"]
        self.assertEqual(self.page_hits(), [])
        self.assertEqual(st.get("robotsd/unreachable"), 1, st)  # "/"
        for k in ("robotsd/deferred", "robotstxt/forbidden",
                  "robotsd/forbidden"):
            self.assertNotIn(k, st)
        res = self.crawl(self.d.socket, ROBOTSD_DEFER_MAX=1)
        st = res["stats"]
        self.assertEqual(self.page_hits(), [])
        self.assertEqual((st.get("robotsd/deferred"),
                          st.get("robotsd/gave_up")), (1, 1), st)
        self.assertNotIn("robotstxt/forbidden", st)

    def test_required_stops_the_crawl_when_robotsd_is_down(self):
        sock = os.path.join(tempfile.mkdtemp(), "none.sock")
        res = self.crawl(sock, ROBOTSD_REQUIRED=True,
                         ROBOTSD_CONNECT_TIMEOUT=0.5)
        self.assertEqual(res["reason"], "robotsd_unavailable")
        self.assertEqual(self.page_hits(), [])
        self.assertIn("robotsd cannot be reached at %s" % sock, res["log"])
        self.assertIn("ROBOTSD_REQUIRED is set: stopping the crawl",
                      res["log"])

    def test_robotstxt_user_agent_picks_the_group(self):
        # Pages are still requested as USER_AGENT; robotsd judges them for
        # ROBOTSTXT_USER_AGENT, whose group disallows only /b (so
        # /private/3/x, linked from /b alone, is never seen) and sets no
        # Crawl-delay.
        self.start()
        res = self.crawl(self.d.socket, ROBOTSTXT_USER_AGENT=ROBOTS_UA)
        log = res["log"][-4000:]
        hits = self.page_hits()
        self.assertEqual(sorted(h.path for h in hits),
                         ["/", "/a", "/c", "/private/1", "/private/2",
                          "/private/open"], log)
        for h in hits:
            self.assertEqual(h.headers["user-agent"], UA)
        self.assertEqual(res["stats"].get("robotstxt/forbidden"), 1, log)
        self.assertEqual(res["slot_delays"], {HOST: 0}, log)
        self.assertEqual(len(self.origin.hits(HOST, "/robots.txt")), 1)

    def test_disabled_leaves_requests_to_scrapy(self):
        # ROBOTSD_ENABLED=False: the middleware is not installed
        # (NotConfigured), so robotsd is never asked and nothing is held
        # back, not even what robots.txt disallows.
        self.start()
        before = self.stats()
        res = self.crawl(self.d.socket, ROBOTSD_ENABLED=False)
        after = self.stats()
        log = res["log"][-4000:]
        self.assertNotIn(MIDDLEWARE, res["middlewares"])
        self.assertEqual(sorted(h.path for h in self.page_hits()),
                         sorted(set(PAGES) | FORBIDDEN), log)
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])
        self.assertEqual(after["requests"] - before["requests"], 1)  # stats
        self.assertEqual(after["connections_total"],
                         before["connections_total"])
        self.assertFalse([k for k in res["stats"]
                          if k.startswith(("robotstxt/", "robotsd/"))], log)


if __name__ == "__main__":
    unittest.main()
