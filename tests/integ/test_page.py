"""The page's own signals on check (contract: "Every signal, not only
robots.txt", After the fetch): a check carrying "page" with the headers and
<meta> pairs a worker received answers robots_tag, combines the page's
Content-Usage / Content-Signal headers with robots.txt, and carries
evidence. The real daemon and the local origin; every expected value is
worked out here by hand from the contract's text."""
import hashlib
import json

from harness import DaemonTest

ROBOTS = """User-agent: *
Allow: /
Disallow: /private/
Content-Usage: train-ai=y
"""
V_ROBOTS = hashlib.sha256(ROBOTS.encode()).hexdigest()[:16]
V_404 = hashlib.sha256(b"status:404").hexdigest()[:16]

PAGE = {"headers": [["X-Robots-Tag", "googlebot: noindex"],
                    ["X-Robots-Tag", "nosnippet, max-snippet: 20"],
                    ["Robots-Tag", "TestBot;noai"],
                    ["Content-Type", "text/html"],
                    ["robots-tag", "*;max-snippet=5"],
                    ["Content-Usage", "train-ai=n"]],
        "meta": [["robots", "noarchive"], ["Description", "x"]]}
# The evidence input: the header lines robotsd reads (Content-Type is not
# one), names lowercased, in order; then every meta pair.
PAGE_INPUT = (b"x-robots-tag: googlebot: noindex\n"
              b"x-robots-tag: nosnippet, max-snippet: 20\n"
              b"robots-tag: TestBot;noai\n"
              b"robots-tag: *;max-snippet=5\n"
              b"content-usage: train-ai=n\n"
              b"meta robots: noarchive\n"
              b"meta description: x\n")
V_PAGE = hashlib.sha256(PAGE_INPUT).hexdigest()[:16]

# TestBot's rules: the googlebot line does not apply; the second
# X-Robots-Tag line, the Robots-Tag field (its two lines joined with ", ")
# and the robots meta do; max-snippet 20 and 5: the smallest wins.
TAGS = {"rules": ["nosnippet", "noarchive", "noai"],
        "values": {"max-snippet": "5"},
        "from": [{"source": "header", "field": "x-robots-tag",
                  "value": "nosnippet, max-snippet: 20"},
                 {"source": "header", "field": "robots-tag",
                  "value": "TestBot;noai, *;max-snippet=5"},
                 {"source": "meta", "field": "robots",
                  "value": "noarchive"}]}
# robots.txt says train-ai=y, the header train-ai=n: any disallow wins.
USAGE = {"train-ai": "disallowed", "search": "unknown",
         "ai-input": "unknown", "ai-use": "unknown"}
USAGE_FROM = [{"directive": "content-usage", "pattern": "/", "line": 4,
               "value": "train-ai=y", "source": "robots.txt"},
              {"directive": "content-usage", "pattern": None, "line": None,
               "value": "train-ai=n", "source": "header"}]


class Page(DaemonTest):

    def test_page_signals_fetched_then_cached(self):
        self.origin.robots("pg.test", ROBOTS)
        self.start()
        for source in ("fetched", "cache"):  # parked, then answered at once
            with self.subTest(source=source):
                a = self.check("http://pg.test/a", "TestBot/1.0",
                               usage=True, page=PAGE)
                self.assertAnswer(a, ok=True, allowed=True, source=source,
                                  usage=USAGE, usage_from=USAGE_FROM,
                                  robots_tag=TAGS)
                self.assertEqual(a["evidence"], {"robots": V_ROBOTS,
                                                 "tdmrep": None,
                                                 "page": V_PAGE})

    def test_either_decoder_reads_the_page_alike(self):
        # The common shape of a page is decoded without a JSON tree; one
        # with a member robotsd does not read, or an escaped key, takes
        # jansson. Parked and cached, the answers are the same bytes.
        self.origin.robots("pg.test", ROBOTS)
        self.start()
        pairs = json.dumps(PAGE)[1:-1].replace('"headers"', '"h\\u0065aders"')
        lines = {"plain": {"page": PAGE},
                 "other member": {"page": dict(PAGE, x=[1])},
                 "escaped key": None}
        answers = {}
        for n, (name, extra) in enumerate(lines.items()):
            url = "http://pg.test/a%d" % n
            for source in ("fetched", "cache"):
                if extra is None:
                    self.c.send_raw(('{"op":"check","url":"%s","agent":'
                                     '"TestBot","usage":true,"id":1,'
                                     '"page":{%s}}\n' % (url, pairs))
                                    .encode())
                else:
                    self.c.send(dict({"op": "check", "url": url,
                                      "agent": "TestBot", "usage": True,
                                      "id": 1}, **extra), auto_id=False)
                a = json.loads(self.c.read_line())
                self.assertEqual(a["evidence"]["page"], V_PAGE, name)
                self.assertEqual(a["robots_tag"], TAGS, name)
                self.assertEqual(a["usage"], USAGE, name)
                for varies in ("source", "fetched_at", "age_s"):
                    a.pop(varies, None)
                answers.setdefault(source, {})[name] = a
        for source, by in answers.items():
            self.assertEqual(by["other member"], by["plain"], source)
            self.assertEqual(by["escaped key"], by["plain"], source)

    def test_members_come_last_in_order(self):
        self.origin.robots("pg.test", ROBOTS)
        self.start()
        req = {"op": "check", "url": "http://pg.test/a", "agent": "TestBot",
               "id": 7, "page": {"headers": [["X-Robots-Tag", "noindex"]]}}
        for _ in range(2):
            self.c.send(req)
            line = self.c.read_line()
            v = hashlib.sha256(b"x-robots-tag: noindex\n").hexdigest()[:16]
            tail = ('"version":"%s","robots_tag":{"rules":["noindex"],'
                    '"values":{},"from":[{"source":"header",'
                    '"field":"x-robots-tag","value":"noindex"}]},'
                    '"evidence":{"robots":"%s","tdmrep":null,"page":"%s"}}\n'
                    % (V_ROBOTS, V_ROBOTS, v)).encode()
            self.assertTrue(line.endswith(tail), line)
            self.assertNotIn(b'"usage"', line)

    def test_disallowed_url_ignores_page(self):
        self.origin.robots("pg.test", ROBOTS)
        self.start()
        a = self.check("http://pg.test/private/x", usage=True, page=PAGE)
        self.assertAnswer(a, ok=True, allowed=False, usage=None,
                          usage_from=[], robots_tag=None)
        self.assertEqual(a["evidence"], {"robots": V_ROBOTS, "tdmrep": None,
                                         "page": V_PAGE})

    def test_no_robots_txt_header_signal_and_values(self):
        self.origin.set("gone.test", status=404)
        self.start()
        page = {"headers": [["Content-Signal", "ai-train=no"],
                            ["content-signal", "search=yes"]],
                "meta": [["robots", "max-image-preview:standard, none"],
                         ["TestBot", "unavailable_after: "
                                     "2010-06-25T15:00:00+01:00"],
                         ["otherbot", "noai"]]}
        a = self.check("http://gone.test/p", usage=True, page=page)
        self.assertAnswer(a, ok=True, allowed=True, reason="unavailable")
        self.assertEqual(a["usage"], {"train-ai": "disallowed",
                                      "search": "allowed",
                                      "ai-input": "unknown",
                                      "ai-use": "unknown"})
        self.assertEqual(a["usage_from"], [
            {"directive": "content-signal", "pattern": None, "line": None,
             "value": "ai-train=no, search=yes", "source": "header"}])
        self.assertEqual(a["robots_tag"], {
            "rules": ["noindex", "nofollow", "none"],
            "values": {"max-image-preview": "standard",
                       "unavailable_after": "2010-06-25T14:00:00Z"},
            "from": [{"source": "meta", "field": "robots",
                      "value": "max-image-preview:standard, none"},
                     {"source": "meta", "field": "testbot",
                      "value": "unavailable_after: "
                               "2010-06-25T15:00:00+01:00"}]})
        inp = (b"content-signal: ai-train=no\ncontent-signal: search=yes\n"
               b"meta robots: max-image-preview:standard, none\n"
               b"meta testbot: unavailable_after: "
               b"2010-06-25T15:00:00+01:00\nmeta otherbot: noai\n")
        self.assertEqual(a["evidence"], {
            "robots": V_404, "tdmrep": None,
            "page": hashlib.sha256(inp).hexdigest()[:16]})

    def test_a_long_meta_name_is_lowercased_too(self):
        # an agent's product token of 100 letters: its <meta> name, in
        # capitals, is named lowercased as every shorter one is
        self.origin.set("gone.test", status=404)
        self.start()
        token = "Longbot" + "x" * 93
        page = {"meta": [[token.upper(), "noai"]]}
        a = self.check("http://gone.test/p", agent=token + "/1.0",
                       page=page)
        self.assertAnswer(a, ok=True, allowed=True, reason="unavailable")
        self.assertEqual(a["robots_tag"], {
            "rules": ["noai"], "values": {},
            "from": [{"source": "meta", "field": token.lower(),
                      "value": "noai"}]})

    def test_robots_txt_url_and_empty_page(self):
        self.start()
        a = self.check("http://pg.test/robots.txt", page={})
        self.assertAnswer(a, ok=True, allowed=True, reason="robots_txt",
                          robots_tag={"rules": [], "values": {},
                                      "from": []})
        self.assertEqual(a["evidence"], {
            "robots": None, "tdmrep": None,
            "page": hashlib.sha256(b"").hexdigest()[:16]})

    def test_bad_page_members_are_bad_requests(self):
        self.origin.robots("pg.test", ROBOTS)
        self.start()
        bad = [[], "x", {"headers": "x"}, {"headers": [["a"]]},
               {"headers": [["a", 1]]}, {"headers": [["", "v"]]},
               {"headers": [["a", "b", "c"]]}, {"meta": [["n", None]]},
               {"meta": {"robots": "noindex"}}]
        for i, page in enumerate(bad):
            with self.subTest(page=page):
                a = self.c.call({"op": "check", "url": "http://pg.test/a",
                                 "agent": "TestBot", "id": i, "page": page})
                self.assertError(a, "bad_request", rid=i)
        a = self.c.call({"op": "check", "urls": ["http://pg.test/a"],
                         "agent": "TestBot", "id": 99, "page": {}})
        self.assertError(a, "bad_request", rid=99)
        # the connection lives on
        a = self.check("http://pg.test/a", page={})
        self.assertAnswer(a, ok=True, allowed=True)
        self.assertEqual(json.dumps(a["robots_tag"]),
                         '{"rules": [], "values": {}, "from": []}')
