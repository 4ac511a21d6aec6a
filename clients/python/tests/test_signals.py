"""The page's own signals (check with page=...) and TDMRep (tdm=True) in
the blocking and the asyncio client, against the real robotsd and the
local origin server; expected values from the contract's section "Every
signal, not only robots.txt" (the request example and the robots_tag
example), and the client's own checking of what robotsd sends."""
import hashlib
import unittest

from support import RULES, ClientTest
from test_clients import Async, Blocking, version_of
from test_preferences import OK

from robotsd import (CheckResult, Evidence, Page, Preference, ProtocolError,
                     RobotsTag, RobotsTagSource, Tdm, UsageStatement)

A, D, U = Preference.ALLOWED, Preference.DISALLOWED, Preference.UNKNOWN

# The contract's request example.
EXAMPLE = Page(headers=[("X-Robots-Tag", "noai"),
                        ("Content-Usage", "train-ai=n")],
               meta=[("robots", "noindex")])


def page_hash(text):
    """The evidence's page: 16 hex digits of the SHA-256 of the input."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Cases:
    DRIVER = None

    def client(self):
        cl = self.DRIVER(self.d.socket)
        self.addCleanup(cl.shutdown)
        return cl

    def test_contract_example(self):
        self.start()
        r = self.client().check("http://a.test/x", "FooBot", usage=True,
                                tdm=True, page=EXAMPLE)
        self.assertIs(r.allowed, True)
        self.assertEqual(r.robots_tag, RobotsTag(
            ["noindex", "noai"], {},
            [RobotsTagSource("header", "x-robots-tag", "noai"),
             RobotsTagSource("meta", "robots", "noindex")]))
        # a.test serves no tdmrep.json (404): the state none, no
        # reservation, so the purpose tdm is unknown
        self.assertEqual(r.usage, {"train-ai": D, "search": U,
                                   "ai-input": U, "ai-use": U, "tdm": U})
        self.assertEqual(r.usage_from, [UsageStatement(
            "content-usage", None, None, "train-ai=n", None, "header")])
        v = version_of(RULES)
        tv = version_of("status:404")
        self.assertEqual(r.tdm, Tdm("none", None, None, None, tv, None))
        self.assertEqual(r.evidence, Evidence(v, tv, page_hash(
            "x-robots-tag: noai\ncontent-usage: train-ai=n\n"
            "meta robots: noindex\n")))
        self.assertEqual(r.evidence.page, "73f780eea2a13c87")

    def test_agent_scoped_rules_and_dict_page(self):
        self.start()
        cl = self.client()
        page = {"headers": [["X-Robots-Tag", "googlebot: noindex"]]}
        r = cl.check("http://a.test/x", "Googlebot/2.1", page=page)
        self.assertEqual(r.robots_tag, RobotsTag(
            ["noindex"], {},
            [RobotsTagSource("header", "x-robots-tag",
                             "googlebot: noindex")]))
        self.assertEqual(r.evidence.page, "91ae3ba1092b72e2")
        self.assertEqual(r.evidence.page,
                         page_hash("x-robots-tag: googlebot: noindex\n"))
        other = cl.check("http://a.test/x", "FooBot", page=page)
        self.assertEqual(other.robots_tag, RobotsTag([], {}, []))
        self.assertEqual(other.evidence, r.evidence)  # same inputs
        self.assertIsNone(other.usage)

    def test_disallowed_url_ignores_page(self):
        self.start()
        r = self.client().check("http://a.test/private/x", "FooBot",
                                usage=True, page=EXAMPLE)
        self.assertEqual((r.allowed, r.robots_tag, r.usage, r.usage_from),
                         (False, None, None, []))
        self.assertEqual(r.evidence.robots, version_of(RULES))

    def test_plain_check_has_no_signals(self):
        self.start()
        cl = self.client()
        r = cl.check("http://a.test/x", "FooBot")
        self.assertEqual((r.robots_tag, r.evidence, r.tdm), (None,) * 3)
        res = cl.check_many(["http://a.test/x", "http://a.test/private/"],
                            "FooBot", tdm=True)
        # tdm on the allowed URL (a.test has no tdmrep.json), null on
        # the disallowed one
        self.assertEqual([(x.allowed, x.tdm) for x in res],
                         [(True, Tdm("none", None, None, None,
                                     version_of("status:404"), None)),
                          (False, None)])


class BlockingSignalsTest(Cases, ClientTest):
    DRIVER = Blocking


class AsyncSignalsTest(Cases, ClientTest):
    DRIVER = Async


EV = {"robots": "0123456789abcdef", "tdmrep": None, "page": "fedcba9876543210"}
TAG = {"rules": ["noindex"], "values": {"max-snippet": "0"},
       "from": [{"source": "meta", "field": "robots", "value": "noindex"}]}


class AnswerChecking(unittest.TestCase):
    """The new fields of what robotsd sends are checked: a wrong type is a
    ProtocolError, never a value passed through."""

    def parse(self, extra, page=True, tdm=False):
        return CheckResult.from_answer("http://x.test/", dict(OK, **extra),
                                       page=page, tdm=tdm)

    def test_well_formed_fields_become_types(self):
        r = self.parse({"robots_tag": TAG, "evidence": EV, "tdm": {
            "state": "rules", "reservation": 1, "policy": "https://p/",
            "location": "/a/*", "version": "00000000000000aa",
            "from": "header"}}, tdm=True)
        self.assertEqual(r.robots_tag, RobotsTag(
            ["noindex"], {"max-snippet": "0"},
            [RobotsTagSource("meta", "robots", "noindex")]))
        self.assertEqual(r.evidence, Evidence("0123456789abcdef", None,
                                              "fedcba9876543210"))
        self.assertEqual(r.tdm, Tdm("rules", 1, "https://p/", "/a/*",
                                    "00000000000000aa", "header"))
        r = self.parse({"tdm": {"state": "none", "reservation": None,
                                "policy": None, "location": None}},
                       page=False, tdm=True)
        self.assertEqual(r.tdm, Tdm("none"))

    def test_wrong_types_are_protocol_errors(self):
        bad = [
            {"evidence": EV},                     # robots_tag missing
            {"robots_tag": TAG},                  # evidence missing
            {"robots_tag": [], "evidence": EV},
            {"robots_tag": dict(TAG, rules="noindex"), "evidence": EV},
            {"robots_tag": dict(TAG, values={"x": 0}), "evidence": EV},
            {"robots_tag": dict(TAG, **{"from": [{"source": "meta"}]}),
             "evidence": EV},
            {"robots_tag": TAG, "evidence": dict(EV, page=None)},
            {"robots_tag": TAG, "evidence": "x"},
        ]
        for extra in bad:
            with self.subTest(extra=extra), self.assertRaises(ProtocolError):
                self.parse(extra)
        for tdm in ({"state": 1}, {"state": "rules", "reservation": 2},
                    {"state": "rules", "reservation": True},
                    {"state": "rules", "policy": 3}, ["rules"]):
            with self.subTest(tdm=tdm), self.assertRaises(ProtocolError):
                self.parse({"tdm": tdm}, page=False, tdm=True)

    def test_only_a_header_statement_lacks_pattern_and_line(self):
        from robotsd._protocol import parse_usage_from
        header = {"directive": "content-usage", "pattern": None,
                  "line": None, "value": "train-ai=n", "source": "header"}
        self.assertEqual(parse_usage_from([header])[0].line, None)
        for st in (dict(header, source="robots.txt"),
                   dict(header, source=None, pattern="/", line=None),
                   dict(header, source="robots.txt", pattern=None, line=3)):
            with self.subTest(st=st), self.assertRaises(ProtocolError):
                parse_usage_from([st])

    def test_page_request_shape(self):
        from robotsd._protocol import check_request
        self.assertEqual(check_request("u", "a", True, page=EXAMPLE,
                                       tdm=True), {
            "op": "check", "url": "u", "agent": "a", "tdm": True,
            "page": {"headers": [["X-Robots-Tag", "noai"],
                                 ["Content-Usage", "train-ai=n"]],
                     "meta": [["robots", "noindex"]]}})
        self.assertEqual(check_request("u", "a", True), {
            "op": "check", "url": "u", "agent": "a"})
        for page in ("x", {"headers": "X-Robots-Tag: noai"},
                     {"headers": [("X-Robots-Tag",)]},
                     {"headers": [("X-Robots-Tag", 1)]},
                     {"meta": [["robots", "noindex", "x"]]},
                     {"header": []}, Page(headers=[b"ab"])):
            with self.subTest(page=page), self.assertRaises(TypeError):
                check_request("u", "a", True, page=page)


if __name__ == "__main__":
    unittest.main()
