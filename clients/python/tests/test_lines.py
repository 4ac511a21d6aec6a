"""The request lines the clients write and the results they build from an
answer, against the plain reference: every line is byte for byte the
compact json.dumps of the request with its id last, whatever builds it
(the prepared check line, any other request), and a CheckResult built from
an answer equals the one its constructor makes, field for field."""
import asyncio
import json
import unittest

import support  # noqa: F401  (the package under test on sys.path)
from robotsd import AsyncClient, CheckResult, Client, Rule
from robotsd._protocol import (Cause, LineTooLongError, check_head,
                               check_request, parse_answer, request_head,
                               with_id)
from test_hostile_daemon import Peer

URLS = ["https://a.example/x", "https://a.example/", "",
        "https://\u00e9.example/\u00fc?q=\"x\"\\\n\t\x01\x7f\u2028",
        "https://a.example/\U0001F600", "https://a.example/" + "a" * 3000]
AGENTS = ["Googlebot", "Foo\"Bot/2.1 \u00fc", "\x00", ""]


def reference(req, rid):
    """The line of req sent as id rid, as json.dumps writes it."""
    return (json.dumps(dict(req, id=rid), separators=(",", ":"),
                       ensure_ascii=False) + "\n").encode()


class Lines(unittest.TestCase):

    def test_the_check_line_is_the_reference(self):
        for url in URLS:
            for agent in AGENTS:
                for rid in (1, 99, 1 << 62):
                    want = reference(check_request(url, agent, True), rid)
                    self.assertEqual(with_id(check_head(url, agent), rid, 0),
                                     want, (url, agent))

    def test_other_requests_are_the_reference(self):
        table = [{"op": "ping"}, {"op": "stats"},
                 {"op": "check", "url": "u", "agent": "a", "wait": False},
                 {"op": "check", "urls": ["a", "\u00e9"], "agent": "x",
                  "usage": True, "tokens": ["Google-Extended"]},
                 {"op": "purge", "all": True},
                 {"op": "check", "url": 1, "agent": None}, {}]
        for req in table:
            self.assertEqual(with_id(request_head(req), 7, 0),
                             reference(req, 7), req)
        # an id of the request is replaced by the id of the send
        self.assertEqual(with_id(request_head({"id": 3, "op": "ping"}), 7,
                                 0), reference({"op": "ping"}, 7))
        # not a string: as json.dumps writes it, robotsd refuses it
        self.assertEqual(with_id(check_head(1, "a"), 2, 0),
                         b'{"op":"check","url":1,"agent":"a","id":2}\n')

    def test_not_unicode_is_refused_before_sending(self):
        for head in (lambda: check_head("https://a.example/\ud800", "a"),
                     lambda: check_head("https://a.example/", "\udfff"),
                     lambda: request_head({"op": "inspect",
                                           "origin": "\ud800"})):
            with self.assertRaisesRegex(ValueError, "not valid Unicode"):
                head()

    def test_the_line_bound_counts_the_id(self):
        head = check_head("https://a.example/x", "a")
        n = len(with_id(head, 9, 0)) - 1
        self.assertEqual(len(with_id(head, 9, n)) - 1, n)
        with self.assertRaises(LineTooLongError):
            with_id(head, 10, n)

    def test_both_clients_write_the_reference_lines(self):
        lines = []

        def answer(req):
            lines.append(req)
            return (json.dumps({"id": req["id"], "ok": True,
                                "allowed": True, "origin": "https://a.ex",
                                "source": "cache", "reason": "no_rule"})
                    + "\n").encode()
        peer = Peer(answer)
        self.addCleanup(peer.close)
        calls = [("https://a.example/\u00e9", "Bot", {}),
                 ("https://a.example/y", "Bot", {"wait": False})]
        with Client(peer.path) as c:
            for url, agent, kw in calls:
                c.check(url, agent, **kw)

        async def run():
            async with AsyncClient(peer.path) as c:
                for url, agent, kw in calls:
                    await c.check(url, agent, **kw)
        asyncio.run(run())
        want = [list(check_request(url, agent, kw.get("wait", True))
                     .items()) for url, agent, kw in calls] * 2
        self.assertEqual([list(req.items())[:-1] for req in lines], want)
        self.assertEqual([list(req)[-1] for req in lines], ["id"] * 4)


class Results(unittest.TestCase):

    def test_an_answer_line_reads_as_json_loads_reads_it(self):
        table = [b'{"id":1,"ok":true}', b' {"a":1} ', b'{"a":1}  \r',
                 b'[1]', b'1', b'{"a":"\xc3\xa9\xed\xa0\x80"}',
                 b'\xef\xbb\xbf{"a":1}', b'{"a":1}x', b'{"a":1} {}',
                 b'\xff{}', b'', b'nul', b'{"a":']
        for line in table:
            try:
                want = ("value", json.loads(line))
            except ValueError as e:
                want = ("error", type(e))
            try:
                got = ("value", parse_answer(line))
            except ValueError as e:
                got = ("error", type(e))
            self.assertEqual(got, want, line)

    def test_a_result_equals_its_constructed_twin(self):
        base = {"id": 1, "ok": True, "allowed": True,
                "origin": "https://a.ex", "source": "cache",
                "reason": "rule"}
        table = [
            ({}, {}),
            ({"rule": {"directive": "allow", "pattern": "/a", "line": 3},
              "crawl_delay": 2, "expires_in": 5, "http_status": 200,
              "version": "0123456789abcdef"},
             {"rule": Rule("allow", "/a", 3), "crawl_delay": 2.0,
              "expires_in": 5, "http_status": 200,
              "version": "0123456789abcdef"}),
            ({"allowed": False, "reason": "unreachable",
              "cause": {"code": "dns", "message": "no such host"}},
             {"allowed": False, "reason": "unreachable",
              "cause": Cause("dns", "no such host")}),
            ({"allowed": None, "pending": True, "source": None,
              "reason": None}, {"allowed": None, "pending": True,
                                "source": None, "reason": None}),
        ]
        for extra, fields in table:
            a = dict(base, **extra)
            want = CheckResult(**dict({"url": "u", "allowed": True,
                                       "origin": "https://a.ex",
                                       "source": "cache",
                                       "reason": "rule"}, **fields))
            got = CheckResult.from_answer("u", a)
            self.assertEqual(got, want, extra)
            self.assertEqual(repr(got), repr(want))
            self.assertEqual(hash(got.rule), hash(want.rule))
            with self.assertRaises(AttributeError):  # still frozen
                got.allowed = None  # type: ignore[misc]


if __name__ == "__main__":
    unittest.main()
