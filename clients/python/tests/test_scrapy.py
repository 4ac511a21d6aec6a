"""RobotsdMiddleware in real Scrapy crawls (crawl.py, run with a python3
that has Scrapy: Debian's /usr/bin/python3 first) of a small site served by
the local origin server, with robotsd fetching its robots.txt."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

from support import ClientTest, poll
from test_hostile_daemon import Peer, string_allowed

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
PIPELINE = "robotsd.scrapy.RobotsdUsagePipeline"


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


class CrawlTest(ClientTest):
    """Runs crawls of the site PAGES (robots.txt ROBOTS) served by the
    local origin server."""

    def setUp(self):
        super().setUp()
        self.python = scrapy_python()
        self.assertIsNotNone(self.python, "no python3 with Scrapy "
                             "(Debian: apt-get install python3-scrapy)")
        self.serve(ROBOTS, PAGES)
        self.base = "http://%s:%d" % (HOST, self.origin.port)

    def serve(self, robots, pages):
        """HOST serves robots and pages (path -> the paths it links)."""
        self.origin.robots(HOST, robots)
        for path, links in pages.items():
            body = "<html><body>%s</body></html>" % "".join(
                '<a href="%s">%s</a>' % (h, h) for h in links)
            self.origin.set(HOST, path, body=body,
                            headers={"Content-Type": "text/html"})

    def crawl(self, socket, items=False, **settings):
        """Run crawl.py with these Scrapy settings over its own; its result
        dict (with items: also "items", what its item pipeline stored)."""
        return self.crawl_end(self.crawl_start(socket, items, **settings))

    def crawl_start(self, socket, items=False, **settings):
        """Start crawl.py as crawl() does; crawl_end() waits for it. Its
        log is read as it comes: self.logged(TEXT) waits for a line."""
        tmp = tempfile.mkdtemp(prefix="robotsd-scrapy-")
        conf, out = os.path.join(tmp, "conf.json"), os.path.join(tmp, "out")
        stored = os.path.join(tmp, "items.jsonl") if items else None
        with open(conf, "w") as f:
            json.dump(dict(start=self.base + "/", socket=socket,
                           user_agent=UA, settings=settings, items=stored),
                      f)
        p = subprocess.Popen([self.python, os.path.join(HERE, "crawl.py"),
                              conf, out], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        self.addCleanup(p.kill)
        p.lines, p.cond, p.out, p.stored = [], threading.Condition(), out, \
            stored
        self.running = p

        def read():
            for line in p.stdout:
                with p.cond:
                    p.lines.append(line.decode("utf-8", "replace"))
                    p.cond.notify_all()
            with p.cond:
                p.lines.append(None)  # the end
                p.cond.notify_all()
        p.reader = threading.Thread(target=read, daemon=True)
        p.reader.start()
        return p

    def logged(self, text, timeout=60):
        """Wait until a line of the running crawl's log contains text."""
        p = self.running
        with p.cond:
            ok = p.cond.wait_for(lambda: None in p.lines or any(
                text in ln for ln in p.lines), timeout)
            seen = "".join(ln for ln in p.lines if ln is not None)
        self.assertTrue(ok and text in seen, "no %r in:\n%s"
                        % (text, seen[-4000:]))

    def crawl_end(self, p):
        rc = p.wait(120)
        p.reader.join(30)
        log = "".join(ln for ln in p.lines if ln is not None)
        self.assertEqual(rc, 0, log[-4000:])
        with open(p.out) as f:
            res = json.load(f)
        res["log"] = log
        if p.stored:
            with open(p.stored) as f:
                res["items"] = [json.loads(line) for line in f]
        return res

    def assert_refused(self, settings, message):
        """The middleware made with these settings raises, saying
        message (before any crawl starts)."""
        p = subprocess.run(
            [self.python, "-c", "import sys; sys.path.insert(0, %r)\n"
             "from scrapy.utils.test import get_crawler\n"
             "from robotsd.scrapy import RobotsdMiddleware\n"
             "RobotsdMiddleware(get_crawler(settings_dict=%r))"
             % (os.path.join(HERE, ".."), settings)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(message.encode(), p.stdout)

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



class ScrapyCrawl(CrawlTest):

    def test_default_reactor(self):
        self.start()
        self.assert_polite_crawl(self.crawl(self.d.socket))

    def test_asyncio_reactor(self):
        self.start()
        self.assert_polite_crawl(self.crawl(
            self.d.socket, TWISTED_REACTOR=(
                "twisted.internet.asyncioreactor.AsyncioSelectorReactor")))

    def test_robotsd_down_fails_closed_by_default(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"),
                         ROBOTSD_CONNECT_TIMEOUT=0.5)
        self.assertEqual(self.page_hits(), [])
        self.assertEqual(res["urls"], [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"), 1)
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])

    def test_waits_for_robotsd_within_the_connect_timeout(self):
        # No socket yet when the crawl starts: its checks keep trying to
        # connect for ROBOTSD_CONNECT_TIMEOUT, as the clients' calls do,
        # and robotsd starting meanwhile gets the whole polite crawl
        # (before, the first request was dropped at once).
        sock = os.path.join(tempfile.mkdtemp(), "late.sock")
        self.crawl_start(sock, ROBOTSD_CONNECT_TIMEOUT=60)
        self.logged("robotsd cannot be reached at %s (robotsd is not "
                    "running" % sock)
        self.start(socket_path=sock)
        res = self.crawl_end(self.running)
        self.assert_polite_crawl(res)
        self.assertIn(": trying again for ", res["log"])

    def test_protocol_error_is_not_sent_again(self):
        # A peer answering "allowed": "false" (a string): the check fails
        # with ProtocolError and is dropped after one send (a lost
        # connection is sent once more; nonsense would come back the same).
        checks = []

        def answer(req):
            if req.get("op") == "check":
                checks.append(req["url"])
            return string_allowed(req)
        peer = Peer(answer)
        self.addCleanup(peer.close)
        res = self.crawl(peer.path)
        self.assertEqual(self.page_hits(), [])
        self.assertEqual(checks, [self.base + "/"])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ProtocolError"), 1)

    def test_robotsd_down_with_fail_open_crawls(self):
        res = self.crawl(os.path.join(tempfile.mkdtemp(), "none.sock"),
                         ROBOTSD_FAIL_OPEN=True, ROBOTSD_CONNECT_TIMEOUT=0.5)
        paths = sorted(h.path for h in self.page_hits())
        self.assertEqual(paths, sorted(set(PAGES) | FORBIDDEN))
        self.assertEqual(self.origin.hits(HOST, "/robots.txt"), [])
        self.assertEqual(
            res["stats"].get("robotsd/error_count/ConnectionLostError"),
            len(PAGES) + len(FORBIDDEN) + 1)  # + s3://

    def crawl_recovering(self, failures, **settings):
        """A crawl of a site whose robots.txt answers 503 to robotsd's
        first failures fetches, then the rules."""
        self.origin.robots(HOST, "", status=503)
        self.start("--retry-503-min", "1", "--retry-503-max", "2")

        def recover():
            if len(self.origin.wait_hits(HOST, failures, timeout=60,
                                         path="/robots.txt")) >= failures:
                self.origin.robots(HOST, ROBOTS)
        t = threading.Thread(target=recover, daemon=True)
        t.start()
        res = self.crawl(self.d.socket, **settings)
        t.join(5)
        return res

    def test_unreachable_robots_txt_defers_until_it_recovers(self):
        # robots.txt answers 503 until the crawl has asked once, then the
        # rules: every page is fetched after the recovery, none lost.
        res = self.crawl_recovering(1)
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

    def test_a_request_deferred_twice_is_counted_once(self):
        # Two 503s: the start URL, the only request of the crawl before
        # the recovery, is deferred (at least) twice; robotsd/deferred
        # counts requests, so 1 (it counted each deferral before).
        # deferrals of 1 s may outpace robotsd's retries (1 to 2 s each)
        res = self.crawl_recovering(2, ROBOTSD_DEFER_MAX=30)
        log = res["log"]
        again = "deferred <GET %s/> by " % self.base
        self.assertGreaterEqual(len([ln for ln in log.splitlines()
                                     if again in ln]), 2, log[-6000:])
        self.assertIn("(deferral 2 of at most 30)", log)
        self.assertEqual(res["stats"].get("robotsd/deferred"), 1,
                         log[-6000:])
        self.assertEqual(sorted(h.path for h in self.page_hits()),
                         sorted(PAGES), log[-6000:])
        self.assertNotIn("robotsd/gave_up", res["stats"])

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
        # the clean line only: no traceback of Scrapy stopping an engine
        # that was not running yet
        self.assertNotIn("Traceback", res["log"])
        self.assertNotIn("Unhandled error", res["log"])

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


class ConnectionCrawl(CrawlTest):
    """The middleware keeps one connection to robotsd for the whole crawl,
    and opens one new one after robotsd restarts."""

    N = 40  # pages before the restart, and as many after it

    def test_one_connection_for_every_check_and_one_after_a_restart(self):
        before = ["/p%d" % i for i in range(self.N)]
        after = ["/q%d" % i for i in range(self.N)]
        self.serve("User-agent: *\nDisallow: /private/\n",
                   dict({"/": before + ["/hold"], "/hold": after},
                        **{p: [] for p in before + after}))
        # /hold is answered only once robotsd has restarted
        self.origin.set(HOST, "/hold", body="<html><body>%s</body></html>"
                        % "".join('<a href="%s">x</a>' % p for p in after),
                        headers={"Content-Type": "text/html"}, hold=True)
        self.start()
        first = self.stats()
        seen = {}

        def restart():
            # every page of the first half checked and asked for
            want = set(before) | {"/", "/hold"}
            if not poll(lambda: want <= {h.path for h in
                                         self.origin.hits(HOST)},
                        timeout=90):
                seen["error"] = sorted(h.path for h in self.origin.hits(HOST))
                self.origin.release(HOST, "/hold")
                return
            seen["old"] = self.stats()
            self.restart()
            seen["client"] = c = self.d.client()
            seen["new"] = self.stats(client=c)
            self.origin.release(HOST, "/hold")

        t = threading.Thread(target=restart, daemon=True)
        t.start()
        res = self.crawl(self.d.socket, CONCURRENT_REQUESTS=4)
        t.join(30)
        log = res["log"][-4000:]
        self.assertNotIn("error", seen, log)
        self.assertEqual(sorted(h.path for h in self.page_hits()),
                         sorted(["/", "/hold"] + before + after), log)
        old = seen["old"]
        # the first robotsd: one connection for "/", the first half and
        # /hold (N + 2 checks, and the second stats request)
        self.assertEqual(old["connections_total"] -
                         first["connections_total"], 1, log)
        self.assertEqual(old["requests"] - first["requests"],
                         self.N + 2 + 1, log)
        # the restarted one: one new connection for the second half
        last = self.stats(client=seen["client"])
        self.assertEqual(last["connections_total"] -
                         seen["new"]["connections_total"], 1, log)
        self.assertEqual(last["requests"] - seen["new"]["requests"],
                         self.N + 1, log)
        self.assertFalse([k for k in res["stats"]
                          if k.startswith("robotsd/error_count/")], log)


# Usage preferences: the crawl is for training a model ("train-ai").
USAGE_ROBOTS = (
    "Content-Signal: /sig/ ai-train=no, search=yes\n"   # 1: file scope
    "User-agent: pytestcrawler\n"                       # 2
    "Disallow: /private/\n"                             # 3
    "Content-Usage: train-ai=y\n"                       # 4
    "Content-Usage: /news/ train-ai=n\n"                # 5
    "Content-Usage: /blog/ search=y\n"                  # 6
    "\n"
    "User-agent: *\n"
    "Disallow: /\n")
USAGE_PAGES = {
    "/": ["/a", "/news/1", "/blog/1", "/sig/1", "/private/1"],
    "/a": ["/news/2", "/blog/2"],
    "/news/1": ["/a"],
    "/news/2": ["/a"],
    "/blog/1": ["/a"],
    "/blog/2": ["/a"],
    "/sig/1": ["/a"],
}
# train-ai per page, from the lines above: line 4 for /, /a; line 5
# (the longest match) for /news/; line 6, which says nothing of train-ai,
# for /blog/; Content-Signal line 1 (ai-train=no) for /sig/.
TRAIN_DISALLOWED = {"/news/1", "/news/2", "/sig/1"}
TRAIN_UNKNOWN = {"/blog/1", "/blog/2"}
TRAIN_ALLOWED = {"/", "/a"}


class UsageCrawl(CrawlTest):
    """ROBOTSD_USAGE_PURPOSES in a real crawl: pages whose purpose is
    ruled out are not fetched, and meta["robotsd"] reaches the items."""

    def setUp(self):
        super().setUp()
        self.serve(USAGE_ROBOTS, USAGE_PAGES)

    def fetched(self):
        return sorted(h.path for h in self.page_hits())

    def test_train_ai_disallowed_pages_are_dropped(self):
        self.start()
        res = self.crawl(self.d.socket, items=True,
                         ROBOTSD_USAGE_PURPOSES=["train-ai"])
        log = res["log"][-4000:]
        self.assertEqual(self.fetched(),
                         sorted(TRAIN_ALLOWED | TRAIN_UNKNOWN), log)
        self.assertEqual(res["stats"].get("robotsd/usage_forbidden"),
                         len(TRAIN_DISALLOWED), log)
        self.assertEqual(res["stats"].get(
            "robotsd/usage_forbidden/train-ai"), len(TRAIN_DISALLOWED))
        self.assertEqual(res["stats"].get("robotstxt/forbidden"), 1, log)
        # the debug line names the deciding lines
        self.assertIn("Forbidden by usage preferences: <GET %s/news/1> "
                      "(train-ai disallowed; line 5: content-usage /news/ "
                      "train-ai=n)" % self.base, res["log"])
        self.assertIn("line 1: content-signal /sig/ ai-train=no, search=yes",
                      res["log"])
        items = {i["url"][len(self.base):]: i["robotsd"]
                 for i in res["items"]}
        self.assertEqual(sorted(items), sorted(TRAIN_ALLOWED | TRAIN_UNKNOWN))
        a = items["/a"]
        self.assertEqual(sorted(a), ["usage", "usage_from", "version"])
        self.assertEqual(a["version"], hashlib.sha256(
            USAGE_ROBOTS.encode()).hexdigest()[:16])
        self.assertEqual(a["usage"], {"train-ai": "allowed",
                                      "search": "unknown",
                                      "ai-input": "unknown",
                                      "ai-use": "unknown"})
        self.assertEqual(
            [(s["directive"], s["pattern"], s["line"], s["value"])
             for s in a["usage_from"]],
            [("content-usage", "/", 4, "train-ai=y")])
        self.assertEqual(items["/blog/1"]["usage"],
                         {"train-ai": "unknown", "search": "allowed",
                          "ai-input": "unknown", "ai-use": "unknown"})

    def test_empty_purposes_clear_the_setting(self):
        # -s ROBOTSD_USAGE_PURPOSES= (an empty string) over a project's
        # purposes: none listed, nothing dropped for usage (before, the
        # empty name was an unknown purpose that stopped the crawl).
        self.start()
        res = self.crawl(self.d.socket, ROBOTSD_USAGE_PURPOSES="")
        log = res["log"][-4000:]
        self.assertEqual(self.fetched(), sorted(USAGE_PAGES), log)
        self.assertNotIn("robotsd/usage_forbidden", res["stats"])
        self.assertEqual(res["stats"].get("robotstxt/forbidden"), 1, log)

    def test_unknown_denied(self):
        self.start()
        res = self.crawl(self.d.socket,
                         ROBOTSD_USAGE_PURPOSES=["train-ai"],
                         ROBOTSD_USAGE_UNKNOWN="deny")
        log = res["log"][-4000:]
        # /blog/2 is linked from /a only; /blog/1 is dropped as unknown
        self.assertEqual(self.fetched(), sorted(TRAIN_ALLOWED), log)
        self.assertEqual(res["stats"].get("robotsd/usage_forbidden"),
                         len(TRAIN_DISALLOWED | TRAIN_UNKNOWN), log)

    def test_without_purposes_nothing_is_dropped_for_usage(self):
        # ROBOTSD_USAGE records the preferences with the items only.
        self.start()
        res = self.crawl(self.d.socket, items=True, ROBOTSD_USAGE=True)
        log = res["log"][-4000:]
        self.assertEqual(self.fetched(), sorted(USAGE_PAGES), log)
        self.assertNotIn("robotsd/usage_forbidden", res["stats"])
        items = {i["url"][len(self.base):]: i["robotsd"]
                 for i in res["items"]}
        self.assertEqual(items["/news/1"]["usage"]["train-ai"], "disallowed")

    def test_a_purpose_robotsd_does_not_know_stops_the_crawl(self):
        self.assert_refused({"ROBOTSD_USAGE_PURPOSES": ["ai-train"]},
                            "unknown purpose(s) ai-train")



# A site whose start page robots.txt marks train-ai=n (the whole site but
# /open/), with the page's own signals in headers and <meta>.
PAGE_ROBOTS = ("User-agent: pytestcrawler\n"                     # 1
               "Disallow: /private/\n"                           # 2
               "Content-Usage: train-ai=n\n"                     # 3
               "Content-Usage: /open/ train-ai=y\n"              # 4
               "\n"
               "User-agent: *\n"
               "Disallow: /\n")
# path -> (links, response headers, <meta> of the <head>)
PAGE_SITE = {
    "/": (["/open/1", "/open/2", "/private/1"], {}, []),
    "/open/1": (["/open/3"], {"Content-Usage": "train-ai=n"}, []),
    "/open/2": ([], {"X-Robots-Tag": "noai, noindex"},
                [("robots", "nosnippet"), ("description", "two")]),
    "/open/3": ([], {}, []),
}


class PageCrawl(CrawlTest):
    """The check after the download (the page's headers and <meta>) and
    the two purpose modes in a real crawl."""

    def setUp(self):
        super().setUp()
        self.origin.robots(HOST, PAGE_ROBOTS)
        for path, (links, headers, meta) in PAGE_SITE.items():
            head = "".join('<meta name="%s" content="%s">' % m for m in meta)
            body = "<html><head>%s</head><body>%s</body></html>" % (
                head, "".join('<a href="%s">%s</a>' % (h, h) for h in links))
            self.origin.set(HOST, path, body=body, headers=dict(
                headers, **{"Content-Type": "text/html; charset=utf-8"}))
        self.version = hashlib.sha256(PAGE_ROBOTS.encode()).hexdigest()[:16]

    def fetched(self):
        return sorted(h.path for h in self.page_hits())

    def items(self, res):
        return {i["url"][len(self.base):]: i["robotsd"]
                for i in res["items"]}

    def test_refuse_before_fetch_is_the_default(self):
        # robots.txt says train-ai=n for the start page: nothing fetched
        # (the start page's links are never seen).
        self.start()
        res = self.crawl(self.d.socket, items=True,
                         ROBOTSD_USAGE_PURPOSES=["train-ai"])
        self.assertEqual(self.fetched(), [], res["log"][-4000:])
        self.assertEqual(res["items"], [])
        self.assertEqual(res["stats"].get("robotsd/usage_forbidden/train-ai"),
                         1)
        self.assertNotIn("robotsd/page_checked", res["stats"])

    def test_tdm_purpose_refused_before_the_fetch(self):
        # tdmrep.json reserves /open/2 (first member) and leaves the rest
        # open: "tdm" among the purposes drops /open/2 before its fetch,
        # and every fetched page records the TDMRep answer
        body = json.dumps([{"location": "/open/2", "tdm-reservation": 1,
                            "tdm-policy": "https://p.test/policy"},
                           {"location": "/", "tdm-reservation": 0}])
        self.origin.set(HOST, "/.well-known/tdmrep.json", body=body,
                        headers={"Content-Type": "application/json"})
        self.start()
        res = self.crawl(self.d.socket, items=True,
                         ROBOTSD_USAGE_PURPOSES=["tdm"])
        # robotsd fetched tdmrep.json once for the whole crawl
        self.assertEqual(self.fetched(), ["/", "/.well-known/tdmrep.json",
                                          "/open/1", "/open/3"],
                         res["log"][-4000:])
        st = res["stats"]
        self.assertEqual(st.get("robotsd/usage_forbidden/tdm"), 1)
        tv = hashlib.sha256(body.encode()).hexdigest()[:16]
        for path, answer in self.items(res).items():
            self.assertEqual(answer["tdm"], {
                "state": "rules", "reservation": 0, "policy": None,
                "location": "/", "version": tv}, path)
            self.assertEqual(answer["usage"]["tdm"], "allowed", path)

    def test_plain_crawl_sends_no_page(self):
        self.start()
        res = self.crawl(self.d.socket, items=True)
        self.assertEqual(self.fetched(), sorted(PAGE_SITE))
        self.assertNotIn("robotsd/page_checked", res["stats"])
        for answer in self.items(res).values():
            self.assertEqual(sorted(answer), ["usage", "usage_from",
                                              "version"])

    def test_fetch_for_discovery_drops_the_items(self):
        self.start()
        res = self.crawl(self.d.socket, items=True,
                         ROBOTSD_USAGE_PURPOSES=["train-ai"],
                         ROBOTSD_USAGE_MODE="discover",
                         ITEM_PIPELINES={PIPELINE: 100,
                                         "__main__.ItemFile": 300})
        log = res["log"][-6000:]
        self.assertEqual(self.fetched(), sorted(PAGE_SITE), log)
        st = res["stats"]
        self.assertEqual(st.get("robotsd/page_checked"), len(PAGE_SITE))
        self.assertNotIn("robotsd/usage_forbidden", st)
        self.assertEqual(st.get("robotstxt/forbidden"), 1)  # /private/1
        self.assertEqual(st.get("robotsd/item_dropped"), 2, log)
        self.assertEqual(st.get("robotsd/item_dropped/train-ai"), 2)
        items = self.items(res)
        # / (robots.txt line 3) and /open/1 (its header) are kept out;
        # /open/3 was reached through /open/1
        self.assertEqual(sorted(items), ["/open/2", "/open/3"])
        self.assertIn("Forbidden by usage preferences: train-ai", res["log"])
        self.assertEqual(items["/open/2"], self.expected_open_2())

    def test_page_check_without_purposes(self):
        self.start()
        res = self.crawl(self.d.socket, items=True, ROBOTSD_PAGE=True,
                         ROBOTSD_USAGE=True)
        self.assertEqual(self.fetched(), sorted(PAGE_SITE))
        self.assertNotIn("robotsd/item_dropped", res["stats"])
        items = self.items(res)
        self.assertEqual(sorted(items), sorted(PAGE_SITE))
        self.assertEqual(items["/open/2"], self.expected_open_2())
        # the page's Content-Usage header over robots.txt line 4
        self.assertEqual(items["/open/1"], {
            "version": self.version,
            "usage": {"train-ai": "disallowed", "search": "unknown",
                      "ai-input": "unknown", "ai-use": "unknown"},
            "usage_from": [
                {"directive": "content-usage", "line": 4,
                 "pattern": "/open/", "scope": None,
                 "source": "robots.txt", "value": "train-ai=y"},
                {"directive": "content-usage", "line": None,
                 "pattern": None, "scope": None, "source": "header",
                 "value": "train-ai=n"}],
            "robots_tag": {"rules": [], "values": {}, "sources": []},
            "evidence": {"robots": self.version, "tdmrep": None,
                         "page": "bb5f8822260fbed8"}})

    def expected_open_2(self):
        """meta["robotsd"] of /open/2 (X-Robots-Tag and a robots <meta>)
        with train-ai asked for."""
        return {
            "version": self.version,
            "usage": {"train-ai": "allowed", "search": "unknown",
                      "ai-input": "unknown", "ai-use": "unknown"},
            "usage_from": [{"directive": "content-usage", "line": 4,
                            "pattern": "/open/", "scope": None,
                            "source": "robots.txt", "value": "train-ai=y"}],
            "robots_tag": {
                "rules": ["noindex", "nosnippet", "noai"], "values": {},
                "sources": [{"source": "header", "field": "x-robots-tag",
                             "value": "noai, noindex"},
                            {"source": "meta", "field": "robots",
                             "value": "nosnippet"}]},
            "evidence": {"robots": self.version, "tdmrep": None,
                         "page": "18d38e78fd5a28da"},
        }

    def page_check_fails(self, **settings):
        """A crawl with the page check against a peer answering each plain
        check "allowed" and each page check "overloaded"."""
        def answer(req):
            if req.get("op") != "check":
                out = {"id": req["id"], "ok": True}
            elif "page" in req:
                out = {"id": req["id"], "ok": False, "error": {
                    "code": "overloaded", "message": "busy"}}
            else:
                out = {"id": req["id"], "ok": True, "allowed": True,
                       "origin": self.base, "source": "cache",
                       "reason": "no_rule", "version": "0123456789abcdef"}
            return (json.dumps(out) + "\n").encode()
        peer = Peer(answer)
        self.addCleanup(peer.close)
        return self.crawl(peer.path, items=True, ROBOTSD_PAGE=True,
                          **settings)

    def test_a_page_answered_disallowed_after_the_download_is_dropped(self):
        # robots.txt changed to Disallow between the check before the
        # fetch and the page check after it: the page is not used
        def answer(req):
            out = {"id": req.get("id"), "ok": True}
            if req.get("op") == "check":
                out.update({"allowed": "page" not in req,
                            "origin": self.base, "source": "cache",
                            "version": "0123456789abcdef"})
                out.update({"reason": "rule", "rule": "Disallow: /",
                            "line": 1, "usage": None, "tdm": None,
                            "robots_tag": None, "evidence": {
                                "robots": "0123456789abcdef",
                                "tdmrep": None,
                                "page": "fedcba9876543210"}}
                           if "page" in req else {"reason": "no_rule"})
            return (json.dumps(out) + "\n").encode()
        peer = Peer(answer)
        self.addCleanup(peer.close)
        res = self.crawl(peer.path, items=True, ROBOTSD_PAGE=True)
        self.assertEqual(self.fetched(), ["/"])  # its links never read
        self.assertEqual(res["items"], [])
        st = res["stats"]
        self.assertEqual(st.get("robotsd/page_checked"), 1, res["log"][-3000:])
        self.assertEqual(st.get("robotsd/page_forbidden"), 1)
        self.assertIn("Forbidden by robots.txt after the download",
                      res["log"])

    def test_a_page_check_that_fails_drops_the_response(self):
        res = self.page_check_fails()
        self.assertEqual(self.fetched(), ["/"])  # its links never read
        self.assertEqual(res["items"], [])
        self.assertEqual(res["stats"].get("robotsd/error_count/overloaded"),
                         1)
        self.assertIn("dropped (set ROBOTSD_FAIL_OPEN to fetch anyway)",
                      res["log"])

    def test_a_page_check_that_fails_keeps_the_first_answer_fail_open(self):
        res = self.page_check_fails(ROBOTSD_FAIL_OPEN=True)
        fetched = sorted(PAGE_SITE) + ["/private/1"]  # the peer allows it
        self.assertEqual(self.fetched(), sorted(fetched))
        # /private/1 answers a 404 that is not text/html: no page check
        self.assertEqual(res["stats"].get("robotsd/error_count/overloaded"),
                         len(PAGE_SITE))
        self.assertNotIn("robotsd/page_checked", res["stats"])
        for answer in self.items(res).values():
            self.assertEqual(answer, {"version": "0123456789abcdef",
                                      "usage": None, "usage_from": None})

    def test_discover_without_the_pipeline_stops_the_crawl(self):
        self.assert_refused({"ROBOTSD_USAGE_MODE": "discover"},
                            "ROBOTSD_USAGE_MODE \"discover\" keeps the items "
                            "out with robotsd.scrapy.RobotsdUsagePipeline: "
                            "add it to ITEM_PIPELINES")


# Run in the python3 that has Scrapy: what page_of() and _is_html() make
# of a few responses, as JSON.
PAGE_OF = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from scrapy.http import HtmlResponse, Response
from robotsd.scrapy import _is_html, page_of
body = (b'<html><head><meta name="robots" content="noindex">'
        b'<meta name="" content="blank"><meta name=" " content="sp">'
        b'<meta property="og:title" content="x">'
        b'<meta name="GPTBot" content="noai"></head>'
        b'<body><meta name="late" content="body"></body></html>')
r = HtmlResponse("http://a.test/", body=body, headers={
    "Content-Type": "text/html", "Set-Cookie": "a=1",
    "X-Robots-Tag": ["noai", "googlebot: noindex"],
    "Content-Usage": "train-ai=n"})
page = page_of(r)
html = [_is_html(cls("http://a.test/", body=b"<html></html>",
                     headers={"Content-Type": ctype}))
        for cls, ctype in ((HtmlResponse, "text/html; charset=utf-8"),
                           (HtmlResponse, "application/json"),
                           (Response, "text/html"))]
print(json.dumps(dict(headers=sorted(page.headers), meta=page.meta,
                      html=html)))
"""


class PageOf(unittest.TestCase):
    """What the page check sends of a response: the header fields robotsd
    reads, the <meta> of the <head> with a name that is not blank (robotsd
    refuses an empty name), and only for text responses."""

    def test_the_page_of_a_response(self):
        py = scrapy_python()
        self.assertIsNotNone(py, "no python3 with Scrapy")
        out = subprocess.run([py, "-c", PAGE_OF, os.path.dirname(HERE)],
                             check=True, capture_output=True).stdout
        got = json.loads(out)
        self.assertEqual(got["headers"], [
            ["Content-Usage", "train-ai=n"],
            ["X-Robots-Tag", "googlebot: noindex"],
            ["X-Robots-Tag", "noai"]])
        self.assertEqual(got["meta"], [["robots", "noindex"],
                                       ["GPTBot", "noai"]])
        # text/html, JSON, and a Response without selectors.
        self.assertEqual(got["html"], [True, False, False])

if __name__ == "__main__":
    unittest.main()
