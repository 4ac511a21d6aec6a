"""test_robotsctl_signals.py: `robotsctl test` with the signals beside
robots.txt, offline (the contract, "Every signal, not only robots.txt" and
"Offline, the same"): --tdmrep FILE as a tdmrep.json fetched with a 200,
--header and --meta as the page the URL came with. The expected answers
follow the contract's rules (first member in sequence; header over
tdmrep.json, meta over header, an absent field resetting nothing, the last
valid line counting; "from"; versions and evidence as SHA-256 prefixes),
computed here, not copied from the program's output. ROBOTSCTL is the
robotsctl to run (set by make check).
"""
import hashlib
import json
import os
import subprocess
import tempfile
import unittest

ROBOTSCTL = os.environ.get("ROBOTSCTL", "")
TIMEOUT = 30

ROBOTS = (
    "User-agent: *\n"               # line 1
    "Disallow: /private/\n"         # line 2
    "Content-Usage: train-ai=y\n"   # line 3
)

P = "https://p.example/policy.json"
Q = "https://q.example/q.json"
TDMREP = (
    "[\n"
    '  {"location": "/a/*", "tdm-reservation": 1, "tdm-policy": "' + P + '"},\n'
    '  {"location": "/a/b", "tdm-reservation": 0},\n'     # line 3: shadowed
    '  {"location": "x", "tdm-reservation": 1},\n'        # line 4: skipped
    '  {"location": "/free/", "tdm-reservation": 0}\n'
    "]\n"
)


def version(data):
    """The contract's version: 16 hex digits of the SHA-256 of the bytes."""
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def evidence(headers, meta):
    """The contract's page evidence: the header lines robotsd reads
    (lowercased names, in order), then every meta pair."""
    read = {"robots-tag", "x-robots-tag", "content-usage", "content-signal",
            "tdm-reservation", "tdm-policy", "link"}
    text = "".join("%s: %s\n" % (n.lower(), v) for n, v in headers
                   if n.lower() in read)
    text += "".join("meta %s: %s\n" % (n.lower(), c) for n, c in meta)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tdm(reservation, policy, location, from_=None, state="rules",
        ver=version(TDMREP)):
    t = {"state": state, "reservation": reservation, "policy": policy,
         "location": location, "version": ver}
    if from_ is not None:
        t["from"] = from_
    return t


TDM_WARNINGS = [
    {"line": 3, "code": "tdmrep_shadowed", "resource": "tdmrep",
     "message": "member 1 can never decide: the location of member 0, "
                "earlier, is a prefix of its own"},
    {"line": 4, "code": "tdmrep_location", "resource": "tdmrep",
     "message": "member 2 has no location that is a string starting "
                "with '/' or '*': skipped"},
]


def setUpModule():
    if not ROBOTSCTL or not os.access(ROBOTSCTL, os.X_OK):
        raise unittest.SkipTest("set ROBOTSCTL to the built robotsctl")


class SignalsTest(unittest.TestCase):
    """robotsctl test with --tdmrep, --header and --meta."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.robots = self.write(ROBOTS, "robots.txt")
        self.tdmrep = self.write(TDMREP, "tdmrep.json")

    def write(self, body, name):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(body)
        return path

    def run_ctl(self, *args):
        r = subprocess.run([ROBOTSCTL] + list(args), capture_output=True,
                           timeout=TIMEOUT)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def answers(self, *args, urls=(), headers=(), meta=(), rc=0):
        """The JSON objects of robotsctl test --json ARGS ROBOTS Bot URLS."""
        opts = []
        for n, v in headers:
            opts += ["--header", "%s: %s" % (n, v)]
        for n, c in meta:
            opts += ["--meta", "%s=%s" % (n, c)]
        code, out, err = self.run_ctl("--json", "test", *args, *opts,
                                      self.robots, "Bot", *urls)
        self.assertEqual(code, rc, err)
        return [json.loads(line) for line in out.splitlines()]

    # --- tdmrep.json alone ------------------------------------------------

    def test_first_member_in_sequence(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=(
            "http://e.com/a/b", "http://e.com/free/x", "http://e.com/z"))
        self.assertEqual([x["tdm"] for x in a], [
            tdm(1, P, "/a/*"),        # /a/* comes first: /a/b never decides
            tdm(0, None, "/free/"),
            tdm(None, None, None),    # no member matches
        ])
        for x in a:
            self.assertNotIn("evidence", x)   # no page given
            self.assertNotIn("robots_tag", x)
            self.assertNotIn("usage", x)
            self.assertEqual(x["warnings"], TDM_WARNINGS)

    def test_usage_purpose_tdm(self):
        a = self.answers("--usage", "--tdmrep", self.tdmrep, urls=(
            "http://e.com/a/x", "http://e.com/free/x", "http://e.com/z"))
        self.assertEqual([x["usage"]["tdm"] for x in a],
                         ["disallowed", "allowed", "unknown"])
        self.assertEqual(a[0]["usage"]["train-ai"], "allowed")
        # no tdm purpose when TDMRep is not asked
        b = self.answers("--usage", urls=("http://e.com/a/x",))
        self.assertNotIn("tdm", b[0]["usage"])
        self.assertNotIn("tdm", b[0])

    def test_disallowed_url(self):
        h = [("TDM-Reservation", "0")]
        a = self.answers("--usage", "--tdmrep", self.tdmrep, headers=h,
                         urls=("http://e.com/private/a",), rc=1)[0]
        self.assertIs(a["allowed"], False)
        self.assertIsNone(a["tdm"])
        self.assertIsNone(a["robots_tag"])
        self.assertIsNone(a["usage"])
        # tdmrep.json is not used for a disallowed URL: no version of it
        # in the evidence, as robotsd answers
        self.assertEqual(a["evidence"], {
            "robots": version(ROBOTS), "tdmrep": None,
            "page": evidence(h, [])})

    def test_invalid_file(self):
        bad = self.write('{"location": "/", "tdm-reservation": 1}', "bad")
        a = self.answers("--tdmrep", bad, urls=("http://e.com/a",))[0]
        ver = version('{"location": "/", "tdm-reservation": 1}')
        self.assertEqual(a["tdm"], tdm(None, None, None, state="invalid",
                                       ver=ver))
        self.assertEqual(len(a["warnings"]), 1)
        w = a["warnings"][0]
        self.assertEqual((w["line"], w["code"], w["resource"]),
                         (None, "tdmrep_invalid", "tdmrep"))

    def test_tdmrep_from_stdin(self):
        r = subprocess.run([ROBOTSCTL, "--json", "test", "--tdmrep", "-",
                            self.robots, "Bot", "http://e.com/a/x"],
                           input=TDMREP.encode(), capture_output=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        a = json.loads(r.stdout)
        self.assertEqual(a["tdm"], tdm(1, P, "/a/*"))
        self.assertEqual(a["warnings"], TDM_WARNINGS)

    def test_bad_url_keeps_warnings(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=(
            "http://e.com/a/x", "mailto:x@e.com"), rc=2)
        self.assertIs(a[1]["ok"], False)
        self.assertNotIn("tdm", a[1])
        self.assertEqual(a[1]["warnings"], TDM_WARNINGS)

    # --- the page's overrides ---------------------------------------------

    def test_header_overrides_file(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=("http://e.com/a/x",),
                         headers=[("TDM-Reservation", "0")])[0]
        # the absent policy resets nothing; location stays the member's
        self.assertEqual(a["tdm"], tdm(0, P, "/a/*", "header"))

    def test_header_policy_alone(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=(
            "http://e.com/a/x", "http://e.com/z"),
            headers=[("TDM-Policy", Q)])
        self.assertEqual(a[0]["tdm"], tdm(1, Q, "/a/*", "tdmrep.json"))
        self.assertEqual(a[1]["tdm"], tdm(None, Q, None, "header"))

    def test_meta_overrides_header(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=("http://e.com/free/",),
                         headers=[("TDM-Reservation", "0"),
                                  ("TDM-Policy", Q)],
                         meta=[("tdm-reservation", "1")])[0]
        self.assertEqual(a["tdm"], tdm(1, Q, "/free/", "meta"))

    def test_last_valid_line(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=("http://e.com/z",),
                         headers=[("TDM-Reservation", "1"),
                                  ("tdm-reservation", "0"),
                                  ("TDM-Reservation", "2"),
                                  ("TDM-Reservation", "yes")])[0]
        self.assertEqual(a["tdm"], tdm(0, None, None, "header"))

    def test_page_saying_nothing(self):
        a = self.answers("--tdmrep", self.tdmrep, urls=(
            "http://e.com/a/x", "http://e.com/z"),
            headers=[("TDM-Reservation", " 7 "), ("Date", "x")])
        self.assertEqual(a[0]["tdm"], tdm(1, P, "/a/*", "tdmrep.json"))
        self.assertEqual(a[1]["tdm"], tdm(None, None, None))

    # --- robots_tag, preference headers, evidence --------------------------

    def test_page_without_tdmrep(self):
        h = [("X-Robots-Tag", "bot: noindex"), ("X-Robots-Tag", "other: noai"),
             ("Content-Usage", "train-ai=n"), ("Date", "today")]
        m = [("robots", "nosnippet"), ("description", "d")]
        a = self.answers("--usage", headers=h, meta=m,
                         urls=("http://e.com/a",))[0]
        self.assertNotIn("tdm", a)
        self.assertEqual(a["robots_tag"], {
            "rules": ["noindex", "nosnippet"], "values": {},
            "from": [{"source": "header", "field": "x-robots-tag",
                      "value": "bot: noindex"},
                     {"source": "meta", "field": "robots",
                      "value": "nosnippet"}]})
        # a header disallow beats robots.txt's allow
        self.assertEqual(a["usage"]["train-ai"], "disallowed")
        self.assertEqual(a["usage_from"], [
            {"directive": "content-usage", "pattern": "/", "line": 3,
             "value": "train-ai=y", "source": "robots.txt"},
            {"directive": "content-usage", "pattern": None, "line": None,
             "value": "train-ai=n", "source": "header"}])
        self.assertEqual(a["evidence"], {"robots": version(ROBOTS),
                                         "tdmrep": None,
                                         "page": evidence(h, m)})
        self.assertEqual(a["warnings"], [])

    def test_header_value_trimmed(self):
        a = self.answers(headers=[("X-Robots-Tag", "noai  ")],
                         urls=("http://e.com/a",))[0]
        self.assertEqual(a["robots_tag"]["from"][0]["value"], "noai")
        self.assertEqual(a["evidence"]["page"],
                         evidence([("X-Robots-Tag", "noai")], []))

    # --- text -------------------------------------------------------------

    def test_text(self):
        code, out, err = self.run_ctl(
            "test", "--usage", "--tdmrep", self.tdmrep,
            "--header", "TDM-Reservation: 0", "--header", "X-Robots-Tag: noai",
            self.robots, "Bot", "http://e.com/a/x")
        self.assertEqual(code, 0, err)
        t = self.tdmrep
        self.assertEqual(err.splitlines(), [
            "%s:3: tdmrep_shadowed: %s" % (t, TDM_WARNINGS[0]["message"]),
            "%s:4: tdmrep_location: %s" % (t, TDM_WARNINGS[1]["message"])])
        page = evidence([("TDM-Reservation", "0"), ("X-Robots-Tag", "noai")],
                        [])
        self.assertEqual(out.splitlines(), [
            "allowed http://e.com/a/x (no_rule)",
            "  usage: train-ai=allowed search=unknown ai-input=unknown "
            "ai-use=unknown tdm=allowed",
            "    line 3: content-usage / train-ai=y",
            "  tdm: reservation=0 policy=%s location=/a/* from=header "
            "(rules, version %s)" % (P, version(TDMREP)),
            "  robots_tag: noai",
            "    header x-robots-tag: noai",
            "  evidence: robots=%s tdmrep=%s page=%s"
            % (version(ROBOTS), version(TDMREP), page)])

    # --- bad input --------------------------------------------------------

    def test_bad_options(self):
        for args, msg in [
                (["--header", "no colon"], "header 'no colon': not NAME"),
                (["--header", ": v"], "header ': v': not NAME"),
                (["--header", "a b: v"], "header 'a b: v': not NAME"),
                (["--meta", "robots"], "meta 'robots': not NAME=CONTENT"),
                (["--meta", "=x"], "meta '=x': not NAME=CONTENT"),
                (["--tdmrep", os.path.join(self.dir.name, "none")],
                 "none: No such file or directory")]:
            code, out, err = self.run_ctl("test", *args, self.robots, "Bot",
                                          "http://e.com/")
            self.assertEqual(code, 2, args)
            self.assertEqual(out, "")
            self.assertIn(msg, err)
        code, out, err = self.run_ctl("test", "--tdmrep", "-", "-", "Bot",
                                      "http://e.com/")
        self.assertEqual(code, 2)
        self.assertIn("cannot both be -", err)
        big = ["--header", "X-Robots-Tag: " + "n" * 70000]
        code, out, err = self.run_ctl("test", *big, self.robots, "Bot",
                                      "http://e.com/")
        self.assertEqual(code, 2)
        self.assertIn("over the 65536", err)


if __name__ == "__main__":
    unittest.main()
