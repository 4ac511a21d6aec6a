"""Usage preferences and control tokens on check, extra lines and warnings
on inspect (issue 18): the real daemon, the local origin, and for the
shared case two instances on one real redis-server. Expected values are
the contract's ("Usage preferences" in docs/protocol.md) and the worked
example of draft-ietf-aipref-attach-05, section 6."""
import hashlib
import json
import re
import shutil
import subprocess
import tempfile

from harness import ROBOTSCTL, DaemonTest, poll
from test_shared import Redis, tier_built

# draft-ietf-aipref-attach-05, section 6, verbatim.
EXAMPLE = """User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""
UNKNOWN = {"train-ai": "unknown", "search": "unknown", "ai-input": "unknown",
           "ai-use": "unknown"}


def prefs(train="unknown", search="unknown", ai_input="unknown",
          ai_use="unknown"):
    return {"train-ai": train, "search": search, "ai-input": ai_input,
            "ai-use": ai_use}


def usage_line(line, pattern, value):
    return {"directive": "content-usage", "pattern": pattern, "line": line,
            "value": value}


def signal_line(line, pattern, value, scope):
    return {"directive": "content-signal", "pattern": pattern, "line": line,
            "value": value, "scope": scope}


# The worked example's table, per agent and path: the verdict, the usage,
# the statements that decided.
EXAMPLE_ROWS = [
    ("TestBot", "/test", True, prefs(train="disallowed"),
     [usage_line(4, "/", "train-ai=n")]),
    ("TestBot", "/never/test", False, None, []),
    ("TestBot", "/ai-ok/test", True, prefs(train="allowed"),
     [usage_line(5, "/ai-ok/", "train-ai=y")]),
    ("ExampleBot/1.0", "/never/test", True, prefs(train="allowed"),
     [usage_line(9, "/", "train-ai=y")]),
]


class Usage(DaemonTest):

    def assertUsage(self, ans, usage, usage_from):
        self.assertIn("usage", ans, json.dumps(ans))
        self.assertEqual(ans["usage"], usage, json.dumps(ans))
        self.assertEqual(ans["usage_from"], usage_from, json.dumps(ans))

    def test_worked_example_single_checks(self):
        self.origin.robots("ex.test", EXAMPLE)
        self.start()
        for agent, path, allowed, usage, frm in EXAMPLE_ROWS:
            with self.subTest(agent=agent, path=path):
                a = self.check("http://ex.test" + path, agent, usage=True)
                self.assertAnswer(a, ok=True, allowed=allowed,
                                  reason="rule")
                self.assertUsage(a, usage, frm)
                self.assertNotIn("tokens", a)

    def test_worked_example_batch_rows(self):
        self.origin.robots("ex.test", EXAMPLE)
        self.start()
        paths = ["/test", "/never/test", "/ai-ok/test"]
        urls = ["http://ex.test" + p for p in paths]
        urls += ["http://ex.test/robots.txt", "not a url"]
        for rnd in ("fetched", "cache"):  # the full road, then the fast one
            with self.subTest(road=rnd):
                a = self.c.call({"op": "check", "urls": urls,
                                 "agent": "TestBot", "usage": True})
                rows = a["results"]
                self.assertEqual(len(rows), 5, json.dumps(a))
                for row, (_, path, allowed, usage, frm) in zip(
                        rows, EXAMPLE_ROWS[:3]):
                    self.assertAnswer(row, url="http://ex.test" + path,
                                      ok=True, allowed=allowed)
                    self.assertUsage(row, usage, frm)
                self.assertEqual(rows[0]["source"], rnd)
                # /robots.txt itself: always allowed, no preferences
                self.assertAnswer(rows[3], ok=True, allowed=True,
                                  reason="robots_txt")
                self.assertUsage(rows[3], UNKNOWN, [])
                # an error row stays as it was
                self.assertEqual(sorted(rows[4]), ["error", "ok", "url"])
                self.assertEqual(rows[4]["error"]["code"], "bad_url")

    def test_without_usage_the_answer_bytes_are_unchanged(self):
        self.origin.robots("pin.test", EXAMPLE)
        self.origin.set("gone.test", status=404)
        self.start()
        # The version of each state, computed here as the contract says:
        # SHA-256 of the body, or of "status:NNN", first 16 hex digits.
        pin = hashlib.sha256(EXAMPLE.encode()).hexdigest()[:16].encode()
        gone = hashlib.sha256(b"status:404").hexdigest()[:16].encode()
        lines = [
            (b'{"op":"check","url":"http://pin.test/never/x",'
             b'"agent":"TestBot","id":1}\n',
             b'{"id":1,"ok":true,"allowed":false,"origin":"http://pin.test",'
             b'"source":"fetched","reason":"rule","http_status":200,'
             b'"rule":{"directive":"disallow","pattern":"/never/","line":3},'
             b'"crawl_delay":null,"expires_in":E,"version":"' + pin +
             b'"}\n'),
            (b'{"op":"check","url":"http://pin.test/a","agent":"TestBot",'
             b'"id":2}\n',
             b'{"id":2,"ok":true,"allowed":true,"origin":"http://pin.test",'
             b'"source":"cache","reason":"rule","http_status":200,'
             b'"rule":{"directive":"allow","pattern":"/","line":2},'
             b'"crawl_delay":null,"expires_in":E,"version":"' + pin +
             b'"}\n'),
            (b'{"op":"check","url":"http://gone.test/a","agent":"TestBot",'
             b'"id":"s"}\n',
             b'{"id":"s","ok":true,"allowed":true,"origin":"http://gone.test"'
             b',"source":"fetched","reason":"unavailable","http_status":404,'
             b'"rule":null,"crawl_delay":null,"expires_in":E,'
             b'"version":"' + gone + b'"}\n'),
            (b'{"op":"check","urls":["http://pin.test/robots.txt"],'
             b'"agent":"TestBot","id":3}\n',
             b'{"id":3,"ok":true,"results":[{"url":'
             b'"http://pin.test/robots.txt","ok":true,"allowed":true,'
             b'"origin":"http://pin.test","source":"cache","reason":'
             b'"robots_txt","http_status":null,"rule":null,'
             b'"crawl_delay":null,"expires_in":null,"version":null}]}\n'),
        ]
        for req, want in lines:
            with self.subTest(request=req):
                self.c.send_raw(req)
                got = self.c.read_line()
                m = re.search(rb'"expires_in":(\d+)', got)
                if m is not None:
                    self.assertTrue(86400 - 5 <= int(m.group(1)) <= 86400,
                                    got)
                    got = got[:m.start(1)] + b"E" + got[m.end(1):]
                self.assertEqual(got, want)

    def test_fast_and_full_roads_write_the_same_members(self):
        self.origin.robots("ex.test", EXAMPLE)
        self.start()
        self.check("http://ex.test/", usage=True)  # cached from here on
        for path in ("/test", "/never/test", "/ai-ok/test"):
            with self.subTest(path=path):
                url = "http://ex.test" + path
                fast = self.c.call({"op": "check", "url": url, "id": 7,
                                    "agent": "TestBot", "usage": True})
                # a string id is not the fast decoder's: the full road
                full = self.c.call({"op": "check", "url": url, "id": "7",
                                    "agent": "TestBot", "usage": True})
                full["id"] = 7
                self.assertEqual(fast, full)

    def test_disallowed_unreachable_and_unavailable(self):
        self.origin.set("down.test", status=503)
        self.origin.set("gone.test", status=404)
        self.start()
        a = self.check("http://down.test/x", usage=True,
                       tokens=["Google-Extended"])
        self.assertAnswer(a, ok=True, allowed=False, reason="unreachable")
        self.assertUsage(a, None, [])
        self.assertEqual(a["tokens"], {"google-extended": {
            "allowed": False, "rule": None}})
        a = self.check("http://gone.test/x", usage=True,
                       tokens=["Google-Extended"])
        self.assertAnswer(a, ok=True, allowed=True, reason="unavailable")
        self.assertUsage(a, UNKNOWN, [])
        self.assertEqual(a["tokens"], {"google-extended": {
            "allowed": True, "rule": None}})

    def test_content_signal_file_and_group_scope(self):
        self.origin.robots("sig.test", (
            "Content-Signal: search=yes, ai-train=no\n"  # 1: file scope
            "User-agent: *\n"
            "Content-Signal: /docs/ ai-input=no\n"       # 3
            "Content-Usage: /docs/ search=n\n"           # 4
            "Disallow: /private/\n"))
        self.start()
        a = self.check("http://sig.test/page", usage=True)
        self.assertAnswer(a, allowed=True, reason="no_rule")
        self.assertUsage(a, prefs(train="disallowed", search="allowed"), [
            signal_line(1, "/", "search=yes, ai-train=no", "file")])
        # the longer PATH decides; the two directives combine per purpose
        a = self.check("http://sig.test/docs/a", usage=True)
        self.assertUsage(a, prefs(search="disallowed", ai_input="disallowed"),
                         [signal_line(3, "/docs/", "ai-input=no", "group"),
                          usage_line(4, "/docs/", "search=n")])
        a = self.check("http://sig.test/private/a", usage=True)
        self.assertAnswer(a, allowed=False)
        self.assertUsage(a, None, [])

    def test_control_tokens_whatever_the_agent_verdict(self):
        self.origin.robots("tok.test", (
            "User-agent: Google-Extended\n"
            "Disallow: /\n"
            "\n"
            "User-agent: *\n"
            "Allow: /\n"
            "Disallow: /x/\n"))
        self.start()
        toks = ["Google-Extended", "Applebot-Extended/1.0"]
        a = self.check("http://tok.test/a", "FooBot/2.1", tokens=toks)
        self.assertAnswer(a, ok=True, allowed=True)
        self.assertNotIn("usage", a)
        self.assertEqual(a["tokens"], {
            "google-extended": {"allowed": False, "rule": {
                "directive": "disallow", "pattern": "/", "line": 2}},
            "applebot-extended": {"allowed": True, "rule": {
                "directive": "allow", "pattern": "/", "line": 5}}})
        # agent disallowed: the tokens are still answered
        a = self.check("http://tok.test/x/1", "FooBot", tokens=toks,
                       usage=True)
        self.assertAnswer(a, ok=True, allowed=False)
        self.assertUsage(a, None, [])
        self.assertEqual(a["tokens"]["applebot-extended"], {
            "allowed": False, "rule": {
                "directive": "disallow", "pattern": "/x/", "line": 6}})
        # in a batch, each row; /robots.txt is allowed for every token
        a = self.c.call({"op": "check", "agent": "FooBot", "tokens": toks,
                         "urls": ["http://tok.test/b",
                                  "http://tok.test/robots.txt"]})
        r0, r1 = a["results"]
        self.assertIs(r0["tokens"]["google-extended"]["allowed"], False)
        self.assertEqual(r1["tokens"], {
            "google-extended": {"allowed": True, "rule": None},
            "applebot-extended": {"allowed": True, "rule": None}})
        self.assertEqual(len(self.origin.hits("tok.test")), 1)

    def test_bad_request_for_wrongly_typed_fields(self):
        self.start()
        base = '"op":"check","agent":"A","url":"http://a.test/"'
        batch = '"op":"check","agent":"A","urls":["http://a.test/"]'
        bad = ['"usage":"yes"', '"usage":1', '"usage":null',
               '"tokens":"Google-Extended"', '"tokens":[1]',
               '"tokens":[""]', '"tokens":["*"]', '"tokens":{}',
               '"tokens":["GPTBot","gptbot/1.1"]',
               '"tokens":[%s]' % ",".join('"t%s"' % chr(97 + i)
                                          for i in range(17))]
        rid = 0
        for fields in (base, batch):
            for b in bad:
                rid += 1
                with self.subTest(request=b, fields=fields):
                    self.c.send_raw(('{%s,%s,"id":%d}\n'
                                     % (fields, b, rid)).encode())
                    self.assertError(self.c.wait_id(rid), "bad_request",
                                     rid)
        self.assertIs(self.c.call({"op": "ping"}).get("ok"), True)
        self.assertEqual(self.origin.hits("a.test"), [])

    def test_inspect_extra_lines_and_warnings(self):
        self.origin.robots("ins.test", (
            "License: https://ins.test/license.xml\n"   # 1
            "Content-Usage: train-ai=n\n"               # 2: outside a group
            "User-agent: *\n"                           # 3
            "Content-Usage: train-ai=no\n"              # 4: nonstandard
            "Content-Signal: search=yes ai-train=no\n"  # 5: no comma
            "Disallow: /private/\n"                     # 6
            "X-Thing: value\n"                          # 7
            "\n"
            "User-agent: b\n"                           # 9
            "Content-Usage: /private/ train-ai=y\n"))   # 10
        self.start()
        self.check("http://ins.test/")
        hits = len(self.origin.hits("ins.test"))
        a = self.inspect("http://ins.test")
        self.assertIs(a.get("ok"), True, json.dumps(a))
        self.assertEqual(a["extra_lines"], [
            {"directive": "License", "value": "https://ins.test/license.xml",
             "line": 1, "group": None},
            {"directive": "Content-Usage", "value": "train-ai=n", "line": 2,
             "group": None},
            {"directive": "Content-Usage", "value": "train-ai=no",
             "line": 4, "group": 0},
            {"directive": "Content-Signal",
             "value": "search=yes ai-train=no", "line": 5, "group": 0},
            {"directive": "X-Thing", "value": "value", "line": 7,
             "group": 0},
            {"directive": "Content-Usage", "value": "/private/ train-ai=y",
             "line": 10, "group": 1}])
        for w in a["warnings"]:
            self.assertEqual(sorted(w), ["code", "line", "message"])
            self.assertIsInstance(w["message"], str)
            self.assertTrue(w["message"])
        got = {(w["line"], w["code"]) for w in a["warnings"]}
        for want in [(2, "usage_outside_group"),
                     (4, "pref_value_nonstandard"),
                     (5, "pref_parse_failed")]:
            self.assertIn(want, got, json.dumps(a["warnings"]))
        # from the cached entry: no fetch
        self.assertEqual(len(self.origin.hits("ins.test")), hits)

    def test_ai_use_purpose_and_the_use_key(self):
        # AIPREF vocab-08's ai-use, from Content-Usage only; Content-Signal's
        # use=reference (Cloudflare's managed files) known: no warning.
        self.origin.robots("v8.test", (
            "User-agent: *\n"                                     # 1
            "Content-Signal: search=yes, ai-train=no, use=reference\n"
            "Allow: /\n"                                          # 3
            "Content-Usage: ai-use=n\n"                           # 4
            "Content-Usage: /open/ ai-use=y, train-ai=n\n"))      # 5
        self.start()
        a = self.check("http://v8.test/page", "AnyBot", usage=True)
        self.assertUsage(a, prefs(train="disallowed", search="allowed",
                                  ai_use="disallowed"),
                         [signal_line(2, "/", "search=yes, ai-train=no, "
                                      "use=reference", "group"),
                          usage_line(4, "/", "ai-use=n")])
        self.assertEqual(list(a["usage"]),
                         ["train-ai", "search", "ai-input", "ai-use"])
        a = self.check("http://v8.test/open/x", "AnyBot", usage=True)
        self.assertEqual(a["usage"]["ai-use"], "allowed", json.dumps(a))
        self.assertEqual(a["usage"]["ai-input"], "unknown", json.dumps(a))
        a = self.inspect("http://v8.test")
        self.assertEqual(a["warnings"], [], json.dumps(a))

    def test_inspect_warns_the_author(self):
        # The walk-through's three mistakes, each beside a near miss.
        self.origin.robots("auth.test", (
            "User-agent: *\n"                                 # 1
            "Allow: /\n"                                      # 2 prepended
            "Disallow: /\n"                                   # 3 the site's
            "Allow: /a\n"                                     # 4
            "Disallow: /a$\n"                                 # 5 no tie
            "Content-Signal: ai-train=no\n"                   # 6
            "Content-Usage: train-ai=y\n"                     # 7 conflict
            "Content-Usage: /blog train-ai=n\n"               # 8 agrees
            "\n"
            "User-agent: LastBot\n"                           # 10
            "Disallow: /x\n"                                  # 11
            "Content-Signal: search=yes, ai-train=no\n"))     # 12 pasted
        self.start()
        self.check("http://auth.test/")
        a = self.inspect("http://auth.test")
        got = [(w["line"], w["code"]) for w in a["warnings"]]
        self.assertEqual(got, [(3, "allow_disallow_tie"),
                               (7, "pref_conflict"),
                               (12, "pref_not_in_star_group")],
                         json.dumps(a["warnings"]))
        self.assertIn("the Allow wins", a["warnings"][0]["message"])
        # robotsctl inspect prints each.
        r = subprocess.run([ROBOTSCTL, "-s", self.d.socket, "inspect",
                            "http://auth.test"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [x for x in r.stdout.splitlines()
                 if x.startswith("warning line ")]
        self.assertEqual([x.split(":")[0] for x in lines], [
            "warning line 3 allow_disallow_tie",
            "warning line 7 pref_conflict",
            "warning line 12 pref_not_in_star_group"])

    def test_robotsctl_check_and_inspect(self):
        self.origin.robots("ex.test", EXAMPLE + (
            "\nUser-agent: Google-Extended\nDisallow: /\n"
            "Content-Usage: train-ai=no\n"))
        self.start()

        def ctl(*args):
            return subprocess.run([ROBOTSCTL, "-s", self.d.socket] +
                                  list(args), capture_output=True, text=True,
                                  timeout=30)
        r = ctl("check", "--usage", "--token", "Google-Extended",
                "http://ex.test/test", "TestBot")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, (
            "allowed http://ex.test/test (line 2: allow /)\n"
            "  usage: train-ai=disallowed search=unknown ai-input=unknown "
            "ai-use=unknown\n"
            "    line 4: content-usage / train-ai=n\n"
            "  token google-extended: disallowed (line 12: disallow /)\n"))
        r = ctl("check", "--usage", "http://ex.test/never/x", "TestBot")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, (
            "disallowed http://ex.test/never/x (line 3: disallow /never/)\n"
            "  usage: none (a disallowed URL has no preferences)\n"))
        r = ctl("--json", "check", "--usage", "http://ex.test/ai-ok/a",
                "TestBot")
        a = json.loads(r.stdout)
        self.assertUsage(a, prefs(train="allowed"),
                         [usage_line(5, "/ai-ok/", "train-ai=y")])
        r = ctl("inspect", "http://ex.test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("extra line 4 (group 0): Content-Usage: train-ai=n\n",
                      r.stdout)
        self.assertIn("warning line 13 pref_value_nonstandard: ", r.stdout)


class SharedUsage(DaemonTest):
    """The shared tier ships the body: a second instance compiles it and
    answers the same preferences without fetching."""

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        tmp = tempfile.mkdtemp(prefix="robotsd-redis-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.redis = Redis(tmp, "r0").start()
        self.addCleanup(self.redis.stop)

    def test_second_instance_answers_from_the_shared_value(self):
        self.origin.robots("ex.test", EXAMPLE)
        one = self.start("--redis", self.redis.url)
        two = self.start("--redis", self.redis.url)
        urls = ["http://ex.test" + p for p in
                ("/test", "/never/test", "/ai-ok/test")]
        req = {"op": "check", "urls": urls, "agent": "TestBot",
               "usage": True, "tokens": ["ExampleBot"]}
        a = one.call(req)
        self.assertEqual(a["results"][0]["source"], "fetched")
        self.assertTrue(poll(lambda: self.redis.keys("robotsd:v1:e:")),
                        "never published")
        b = two.call(req)
        self.assertEqual(b["results"][0]["source"], "shared")
        for ra, rb in zip(a["results"], b["results"]):
            for k in ("allowed", "usage", "usage_from", "tokens"):
                self.assertEqual(ra[k], rb[k], k)
        for row, (_, _, _, usage, frm) in zip(b["results"], EXAMPLE_ROWS):
            self.assertEqual(row["usage"], usage)
            self.assertEqual(row["usage_from"], frm)
        self.assertEqual(len(self.origin.hits("ex.test")), 1)
