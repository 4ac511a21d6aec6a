"""Usage preferences (Content-Usage, Content-Signal) and control tokens in
the blocking and the asyncio client: against the real robotsd and the
local origin server, and the client's own checking of what robotsd sends.
The expected values follow docs/usage-preferences.md (selection like
Allow/Disallow per directive, ties most restrictive, file-scope
Content-Signal for every agent, the two directives combined per purpose
most restrictively)."""
import unittest

from support import ClientTest
from test_clients import Async, Blocking

from robotsd import (CheckResult, Preference, ProtocolError, Rule,
                     TokenVerdict, UsageStatement)

A, D, U = Preference.ALLOWED, Preference.DISALLOWED, Preference.UNKNOWN

ROBOTS = (
    "Content-Signal: search=yes, ai-input=no\n"      # 1: file scope
    "\n"                                             # 2
    "User-agent: *\n"                                # 3
    "Disallow: /private/\n"                          # 4
    "Content-Usage: train-ai=y\n"                    # 5
    "Content-Usage: /news/ train-ai=n, search=y\n"   # 6
    "Content-Usage: /mixed/ train-ai=n\n"            # 7
    "Content-Usage: /mixed/ train-ai=y\n"            # 8
    "\n"                                             # 9
    "User-agent: Google-Extended\n"                  # 10
    "Disallow: /\n"                                  # 11
    "Allow: /open/\n"                                # 12
    "\n"                                             # 13
    "User-agent: usagebot\n"                         # 14
    "Allow: /\n"                                     # 15
    "Content-Usage: ai-use=n\n")                     # 16

SIGNAL = UsageStatement("content-signal", "/", 1, "search=yes, ai-input=no",
                        "file")
EVERYONE = UsageStatement("content-usage", "/", 5, "train-ai=y")
NEWS = UsageStatement("content-usage", "/news/", 6, "train-ai=n, search=y")
MIXED_N = UsageStatement("content-usage", "/mixed/", 7, "train-ai=n")
MIXED_Y = UsageStatement("content-usage", "/mixed/", 8, "train-ai=y")
AI_USE = UsageStatement("content-usage", "/", 16, "ai-use=n")


def same_statements(test, got, want):
    """got equals want; a Content-Usage line's scope may be absent or
    "group" (only Content-Signal lines need one)."""
    test.assertIsNotNone(got)
    norm = [st if st.scope is not None or st.directive != "content-usage"
            else UsageStatement(st.directive, st.pattern, st.line, st.value,
                                "group") for st in got]
    want = [st if st.scope is not None else UsageStatement(
        st.directive, st.pattern, st.line, st.value, "group") for st in want]
    test.assertEqual(norm, want)


class Cases:
    DRIVER = None

    def setUp(self):
        super().setUp()
        self.origin.robots("u.test", ROBOTS)

    def client(self):
        cl = self.DRIVER(self.d.socket)
        self.addCleanup(cl.shutdown)
        return cl

    def test_usage_per_url_and_purpose(self):
        self.start()
        cl = self.client()
        cases = [
            # url, agent, usage, usage_from
            ("http://u.test/a", "FooBot",
             {"train-ai": A, "search": A, "ai-input": D, "ai-use": U},
             [SIGNAL, EVERYONE]),
            ("http://u.test/news/today", "FooBot",
             {"train-ai": D, "search": A, "ai-input": D, "ai-use": U},
             [SIGNAL, NEWS]),
            # a tie: disallowed beats allowed
            ("http://u.test/mixed/x", "FooBot",
             {"train-ai": D, "search": A, "ai-input": D, "ai-use": U},
             [SIGNAL, MIXED_N, MIXED_Y]),
            # usagebot's own group has no Content-Usage: no * fallback;
            # the file-scope Content-Signal still applies
            # its own ai-use line (AIPREF vocab-08)
            ("http://u.test/news/today", "UsageBot/1.0",
             {"train-ai": U, "search": A, "ai-input": D, "ai-use": D},
             [SIGNAL, AI_USE]),
        ]
        for url, agent, usage, usage_from in cases:
            with self.subTest(url=url, agent=agent):
                r = cl.check(url, agent, usage=True)
                self.assertIs(r.allowed, True)
                self.assertEqual(r.usage, usage)
                for p in r.usage.values():
                    self.assertIsInstance(p, Preference)
                same_statements(self, r.usage_from, usage_from)
                self.assertIsNone(r.tokens)
        r = cl.check("http://u.test/private/x", "FooBot", usage=True)
        self.assertEqual((r.allowed, r.usage, r.usage_from), (False, None, []))
        plain = cl.check("http://u.test/news/today", "FooBot")
        self.assertEqual((plain.usage, plain.usage_from, plain.tokens),
                         (None, None, None))
        self.assertEqual(len(self.origin.hits("u.test")), 1)

    def test_batch_with_usage_and_tokens(self):
        self.start()
        cl = self.client()
        urls = ["http://u.test/a", "http://u.test/private/x",
                "http://u.test/open/y", "gopher://u.test/"]
        res = cl.check_many(urls, "FooBot", usage=True,
                            tokens=["Google-Extended", "Applebot-Extended"])
        self.assertEqual([r.allowed for r in res], [True, False, True, None])
        self.assertEqual(res[0].usage["train-ai"], A)
        self.assertEqual((res[1].usage, res[1].usage_from), (None, []))
        self.assertEqual(res[2].usage, {"train-ai": A, "search": A,
                                        "ai-input": D, "ai-use": U})
        self.assertIsNotNone(res[3].error)
        self.assertEqual(res[0].tokens, {
            "google-extended": TokenVerdict(False, Rule("disallow", "/", 11)),
            "applebot-extended": TokenVerdict(True, None)})
        # the tokens' verdicts whatever the agent's own
        self.assertEqual(res[1].tokens, {
            "google-extended": TokenVerdict(False, Rule("disallow", "/", 11)),
            "applebot-extended": TokenVerdict(False,
                                              Rule("disallow", "/private/",
                                                   4))})
        self.assertEqual(res[2].tokens["google-extended"],
                         TokenVerdict(True, Rule("allow", "/open/", 12)))

    def test_tokens_alone(self):
        self.start()
        cl = self.client()
        r = cl.check("http://u.test/open/z", "UsageBot",
                     tokens=["Google-Extended"])
        self.assertEqual(r.tokens, {"google-extended": TokenVerdict(
            True, Rule("allow", "/open/", 12))})
        self.assertIsNone(r.usage_from)

    def test_unavailable_robots_txt_gives_every_purpose_unknown(self):
        self.origin.set("gone.test", status=404)
        self.start()
        r = self.client().check("http://gone.test/x", "FooBot", usage=True)
        self.assertEqual((r.allowed, r.reason), (True, "unavailable"))
        self.assertEqual(r.usage, {"train-ai": U, "search": U,
                                   "ai-input": U, "ai-use": U})
        self.assertEqual(r.usage_from, [])


class BlockingUsageTest(Cases, ClientTest):
    DRIVER = Blocking


class AsyncUsageTest(Cases, ClientTest):
    DRIVER = Async


OK = {"ok": True, "allowed": True, "origin": "http://x.test",
      "source": "cache", "reason": "no_rule"}


class AnswerChecking(unittest.TestCase):
    """What robotsd sends is checked: a field of the wrong type is a
    ProtocolError, never a value passed through."""

    def parse(self, extra, usage=True, tokens=False):
        return CheckResult.from_answer("http://x.test/", dict(OK, **extra),
                                       usage, tokens)

    def test_well_formed_fields_become_types(self):
        r = self.parse({"usage": {"train-ai": "disallowed",
                                  "search": "allowed"},
                        "usage_from": [{"directive": "content-signal",
                                        "pattern": "/", "line": 2,
                                        "value": "ai-train=no",
                                        "scope": "file"}],
                        "tokens": {"google-extended": {
                            "allowed": False, "rule": {
                                "directive": "disallow", "pattern": "/",
                                "line": 9}}}}, tokens=True)
        self.assertIs(r.usage["train-ai"], Preference.DISALLOWED)
        self.assertEqual(r.usage["search"], "allowed")  # a str enum
        self.assertEqual(r.usage_from, [UsageStatement(
            "content-signal", "/", 2, "ai-train=no", "file")])
        self.assertEqual(r.tokens["google-extended"],
                         TokenVerdict(False, Rule("disallow", "/", 9)))

    def test_wrong_types_are_protocol_errors(self):
        st = {"directive": "content-usage", "pattern": "/", "line": 1,
              "value": "train-ai=n"}
        bad = [
            {"usage": ["train-ai"], "usage_from": []},
            {"usage": {"train-ai": "yes"}, "usage_from": []},
            {"usage": {"train-ai": None}, "usage_from": []},
            {"usage": {}, "usage_from": {}},
            {"usage": {}, "usage_from": [dict(st, line="1")]},
            {"usage": {}, "usage_from": [dict(st, line=True)]},
            {"usage": {}, "usage_from": [dict(st, value=None)]},
            {"usage": {}, "usage_from": [dict(st, scope=1)]},
            {"usage": {}, "usage_from": ["content-usage"]},
            {"usage": {}},  # asked for, half missing
            {},              # asked for, missing: an older robotsd
        ]
        for extra in bad:
            with self.subTest(extra=extra), self.assertRaises(ProtocolError):
                self.parse(extra)
        for tokens in ({"g": {"allowed": "false", "rule": None}},
                       {"g": {"rule": None}},
                       {"g": {"allowed": True, "rule": "x"}},
                       {"g": {"allowed": True, "rule": {"directive": 1}}},
                       ["g"], None):
            with self.subTest(tokens=tokens), \
                    self.assertRaises(ProtocolError):
                self.parse({"tokens": tokens}, usage=False, tokens=True)

    def test_pending_and_error_answers_need_no_usage(self):
        r = CheckResult.from_answer("u", {"ok": True, "pending": True,
                                          "origin": "http://u"}, True, True)
        self.assertEqual((r.pending, r.usage, r.tokens), (True, None, None))
        r = CheckResult.from_answer("u", {"ok": False, "error": {
            "code": "bad_url", "message": "m"}}, True, True)
        self.assertEqual(r.error.code, "bad_url")

    def test_tokens_must_be_a_list_of_strings(self):
        from robotsd._protocol import check_request
        with self.assertRaises(TypeError):
            check_request("u", "a", True, tokens="Google-Extended")
        self.assertEqual(check_request("u", "a", True, True, ("G",)), {
            "op": "check", "url": "u", "agent": "a", "usage": True,
            "tokens": ["G"]})


if __name__ == "__main__":
    unittest.main()
