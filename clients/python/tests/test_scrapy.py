"""RobotsdMiddleware in real Scrapy crawls (crawl.py, run with a python3
that has Scrapy: Debian's /usr/bin/python3 first) of a small site served by
the local origin server, with robotsd fetching its robots.txt."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from support import ClientTest

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
UA = "PyTestCrawler/1.0 (+http://crawler.example/bot)"
ROBOTS = ("User-agent: pytestcrawler\n"
          "Disallow: /private/\n"
          "Allow: /private/open\n"
          "Crawl-delay: 0.4\n"
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

    def crawl(self, socket, **cfg):
        """Run crawl.py; its result dict."""
        tmp = tempfile.mkdtemp(prefix="robotsd-scrapy-")
        conf, out = os.path.join(tmp, "conf.json"), os.path.join(tmp, "out")
        with open(conf, "w") as f:
            json.dump(dict(cfg, start=self.base + "/", socket=socket,
                           user_agent=UA), f)
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
            self.d.socket,
            reactor="twisted.internet.asyncioreactor.AsyncioSelectorReactor"))

    def test_robotsd_down_fails_closed_by_default(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"))
        self.assertEqual(self.page_hits(), [])
        self.assertEqual(res["urls"], [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"), 1)
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])

    def test_robotsd_down_with_fail_open_crawls(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"),
                         fail_open=True)
        paths = sorted(h.path for h in self.page_hits())
        self.assertEqual(paths, sorted(set(PAGES) | FORBIDDEN))
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"),
            len(PAGES) + len(FORBIDDEN) + 1)  # + s3://


if __name__ == "__main__":
    unittest.main()
