"""test_robotsctl_offline.py: robotsctl from the outside, with no real
daemon. `robotsctl test FILE AGENT URL...`: exit statuses, the text and
--json formats, stdin, and the errors, with expected verdicts from RFC 9309
and the contract, not from the program's output. The daemon commands
against a scripted fake socket peer: the request line, answers split across
reads, answers with other ids skipped, error answers, timeouts, and the text
formats. ROBOTSCTL is the robotsctl to run (set by make check; by hand:
export ROBOTSCTL=/path/to/_build/DIR/robotsctl).
"""
import json
import os
import socket
import subprocess
import tempfile
import threading
import unittest

ROBOTSCTL = os.environ.get("ROBOTSCTL", "")
TIMEOUT = 30

BASIC = (
    "User-agent: *\n"          # line 1
    "Disallow: /private/\n"    # line 2
    "Allow: /private/open\n"   # line 3
    "Crawl-delay: 5\n"         # line 4
)

USAGE = (
    "Content-Signal: search=yes, ai-train=no\n"        # line 1
    "User-agent: *\n"                                  # line 2
    "Allow: /\n"                                       # line 3
    "Disallow: /never/\n"                              # line 4
    "Content-Usage: train-ai=n\n"                      # line 5
    "Content-Usage: /ai-ok/ train-ai=y\n"              # line 6
    "\n"
    "User-agent: Google-Extended\n"                    # line 8
    "Disallow: /\n"                                    # line 9
)

FOOBOT = (
    "User-agent: FooBot\n"     # line 1
    "Disallow: /foo-only\n"    # line 2
    "\n"
    "User-agent: *\n"          # line 4
    "Disallow: /\n"            # line 5
)


def setUpModule():
    if not ROBOTSCTL or not os.access(ROBOTSCTL, os.X_OK):
        raise unittest.SkipTest("set ROBOTSCTL to the built robotsctl")


class RobotsctlTest(unittest.TestCase):
    """Runs robotsctl test against robots.txt bodies in a temporary dir."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, body, name="robots.txt"):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(body.encode() if isinstance(body, str) else body)
        return path

    def run_ctl(self, *args, stdin=None):
        r = subprocess.run([ROBOTSCTL] + list(args), input=stdin,
                           capture_output=True, timeout=TIMEOUT)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def run_test(self, body, agent, *urls, json_out=False):
        pre = ["--json"] if json_out else []
        return self.run_ctl(*pre, "test", self.write(body), agent, *urls)

    def json_lines(self, out):
        return [json.loads(line) for line in out.splitlines()]

    # --- exit status and text lines ---------------------------------------

    def test_all_allowed_exits_0_with_no_rule_reason(self):
        rc, out, err = self.run_test(BASIC, "AnyBot", "https://example.com/",
                                     "https://example.com/public/page")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "allowed https://example.com/ (no_rule, crawl delay 5 s)\n"
                         "allowed https://example.com/public/page "
                         "(no_rule, crawl delay 5 s)\n")
        self.assertEqual(err, "")

    def test_any_disallowed_exits_1_and_names_rule_and_line(self):
        rc, out, err = self.run_test(BASIC, "AnyBot",
                                     "https://example.com/public",
                                     "https://example.com/private/x")
        self.assertEqual(rc, 1, err)
        self.assertEqual(out.splitlines(), [
            "allowed https://example.com/public (no_rule, crawl delay 5 s)",
            "disallowed https://example.com/private/x "
            "(line 2: disallow /private/, crawl delay 5 s)",
        ])

    def test_longest_match_decides_and_its_line_is_printed(self):
        # RFC 9309 2.2.2: the most specific (longest) match wins.
        rc, out, _ = self.run_test(BASIC, "AnyBot",
                                   "https://example.com/private/open/doc")
        self.assertEqual(rc, 0)
        self.assertEqual(out, "allowed https://example.com/private/open/doc "
                         "(line 3: allow /private/open, crawl delay 5 s)\n")

    def test_allow_wins_a_tie_of_equal_length(self):
        body = "User-agent: *\nDisallow: /page\nAllow: /page\n"
        rc, out, _ = self.run_test(body, "AnyBot", "http://example.com/page")
        self.assertEqual(rc, 0)
        self.assertEqual(out,
                         "allowed http://example.com/page (line 3: allow /page)\n")

    def test_control_characters_from_a_robots_txt_are_escaped(self):
        # ESC [ 31 m (a terminal colour), BEL and U+009B (CSI as one
        # character) in a pattern: printed as escapes, never raw.
        body = ("User-agent: *\nDisallow: /\x1b[31mred\x07\u009b2J\n"
                .encode())
        rc, out, _ = self.run_test(body, "AnyBot",
                                   "http://example.com/%1B[31mred%07%C2%9B2J")
        self.assertEqual(rc, 1, out)
        self.assertEqual(out, "disallowed http://example.com/%1B[31mred%07"
                         "%C2%9B2J (line 2: disallow "
                         "/\\x1b[31mred\\x07\\u009b2J)\n")
        self.assertNotIn("\x1b", out)

    def test_robots_txt_itself_is_allowed_with_robots_txt_reason(self):
        body = "User-agent: *\nDisallow: /\n"
        rc, out, _ = self.run_test(body, "AnyBot",
                                   "https://example.com/robots.txt")
        self.assertEqual(rc, 0)
        self.assertEqual(out,
                         "allowed https://example.com/robots.txt (robots_txt)\n")

    def test_group_is_chosen_by_product_token_of_full_user_agent(self):
        ua = "FooBot/2.1 (+https://foo.example/bot.html)"
        rc, out, _ = self.run_test(FOOBOT, ua, "https://example.com/page",
                                   "https://example.com/foo-only/x")
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines(), [
            "allowed https://example.com/page (no_rule)",
            "disallowed https://example.com/foo-only/x "
            "(line 2: disallow /foo-only)",
        ])

    def test_other_agent_falls_back_to_star_group(self):
        rc, out, _ = self.run_test(FOOBOT, "BarBot/1.0",
                                   "https://example.com/page")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "disallowed https://example.com/page "
                         "(line 5: disallow /)\n")

    def test_percent_encoded_unreserved_matches_plain_form(self):
        # RFC 9309 2.2.2: %7E is ~.
        body = "User-agent: *\nDisallow: /%7Ejoe/\n"
        rc, out, _ = self.run_test(body, "AnyBot",
                                   "https://example.com/~joe/index.html")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "disallowed https://example.com/~joe/index.html "
                         "(line 2: disallow /%7Ejoe/)\n")

    def test_query_is_matched_and_fragment_dropped(self):
        body = "User-agent: *\nDisallow: /*?sid=\n"
        rc, out, _ = self.run_test(body, "AnyBot",
                                   "https://example.com/a?sid=1#top",
                                   "https://example.com/a#?sid=1")
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines(), [
            "disallowed https://example.com/a?sid=1#top "
            "(line 2: disallow /*?sid=)",
            "allowed https://example.com/a#?sid=1 (no_rule)",
        ])

    def test_empty_file_allows_everything(self):
        rc, out, _ = self.run_test("", "AnyBot", "https://example.com/x")
        self.assertEqual(rc, 0)
        self.assertEqual(out, "allowed https://example.com/x (no_rule)\n")

    # --- input ------------------------------------------------------------

    def test_dash_reads_robots_txt_from_stdin(self):
        rc, out, err = self.run_ctl("test", "-", "AnyBot",
                                    "https://example.com/private/x",
                                    stdin=BASIC.encode())
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "disallowed https://example.com/private/x "
                         "(line 2: disallow /private/, crawl delay 5 s)\n")

    def test_missing_file_exits_2_with_error_naming_it(self):
        path = os.path.join(self.dir.name, "absent.txt")
        rc, out, err = self.run_ctl("test", path, "AnyBot",
                                    "https://example.com/")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("robotsctl: " + path + ": "), err)

    def test_too_few_arguments_is_a_usage_error(self):
        rc, out, err = self.run_ctl("test", self.write(BASIC), "AnyBot")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("robotsctl: "), err)

    # --- bad URLs ---------------------------------------------------------

    def test_bad_url_is_reported_and_others_still_checked(self):
        rc, out, err = self.run_test(BASIC, "AnyBot", "https://",
                                     "https://example.com/ok")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "allowed https://example.com/ok "
                         "(no_rule, crawl delay 5 s)\n")
        self.assertTrue(err.startswith("robotsctl: https://: "), err)

    def test_error_wins_over_disallowed_in_exit_status(self):
        rc, _, _ = self.run_test(BASIC, "AnyBot",
                                 "https://example.com/private/x", "https://")
        self.assertEqual(rc, 2)

    def test_unsupported_scheme_is_an_error(self):
        rc, out, err = self.run_test(BASIC, "AnyBot", "gopher://example.com/x")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("robotsctl: gopher://example.com/x: "),
                        err)

    # --- --json -----------------------------------------------------------

    def test_json_prints_one_check_shaped_object_per_url(self):
        rc, out, _ = self.run_test(BASIC, "AnyBot",
                                   "https://example.com/private/x",
                                   "https://example.com/",
                                   "https://example.com/robots.txt",
                                   json_out=True)
        self.assertEqual(rc, 1)
        self.assertEqual(self.json_lines(out), [
            {"url": "https://example.com/private/x", "ok": True,
             "allowed": False, "reason": "rule",
             "rule": {"directive": "disallow", "pattern": "/private/",
                      "line": 2},
             "crawl_delay": 5, "warnings": []},
            {"url": "https://example.com/", "ok": True, "allowed": True,
             "reason": "no_rule", "rule": None, "crawl_delay": 5,
             "warnings": []},
            {"url": "https://example.com/robots.txt", "ok": True,
             "allowed": True, "reason": "robots_txt", "rule": None,
             "crawl_delay": 5, "warnings": []},
        ])

    def test_json_crawl_delay_is_null_without_one(self):
        rc, out, _ = self.run_test(FOOBOT, "FooBot", "https://example.com/",
                                   json_out=True)
        self.assertEqual(rc, 0)
        self.assertEqual(self.json_lines(out), [
            {"url": "https://example.com/", "ok": True, "allowed": True,
             "reason": "no_rule", "rule": None, "crawl_delay": None,
             "warnings": []}])

    def test_json_bad_url_and_unsupported_scheme_carry_error_codes(self):
        rc, out, _ = self.run_test(BASIC, "AnyBot", "https://",
                                   "gopher://example.com/", json_out=True)
        self.assertEqual(rc, 2)
        lines = self.json_lines(out)
        self.assertEqual(len(lines), 2)
        for line, url, code in zip(lines, ["https://", "gopher://example.com/"],
                                   ["bad_url", "unsupported_scheme"]):
            self.assertEqual(sorted(line), ["error", "ok", "url",
                                            "warnings"])
            self.assertEqual(line["url"], url)
            self.assertIs(line["ok"], False)
            self.assertEqual(line["error"]["code"], code)
            self.assertIsInstance(line["error"]["message"], str)
            self.assertNotEqual(line["error"]["message"], "")

    # --- options anywhere, "--" -------------------------------------------

    def test_json_after_the_command_or_its_arguments(self):
        path = self.write(BASIC)
        url = "https://example.com/private/x"
        want = [{"url": url, "ok": True, "allowed": False, "reason": "rule",
                 "rule": {"directive": "disallow", "pattern": "/private/",
                          "line": 2}, "crawl_delay": 5, "warnings": []}]
        for args in (["test", "--json", path, "AnyBot", url],
                     ["test", path, "AnyBot", url, "--json"]):
            with self.subTest(args=args):
                rc, out, err = self.run_ctl(*args)
                self.assertEqual(rc, 1, err)
                self.assertEqual(self.json_lines(out), want)

    def test_double_dash_lets_an_agent_start_with_a_dash(self):
        # The "-weird-agent" matches no group but "*" (RFC 9309 2.2.1).
        body = "User-agent: *\nDisallow: /x\n"
        rc, out, err = self.run_ctl("test", "--", self.write(body),
                                    "-weird-agent", "https://example.com/x")
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "disallowed https://example.com/x "
                         "(line 2: disallow /x)\n")

    def test_word_after_double_dash_is_not_an_option(self):
        rc, out, err = self.run_ctl("test", self.write(BASIC), "--",
                                    "--json", "https://example.com/")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "allowed https://example.com/ "
                         "(no_rule, crawl delay 5 s)\n")

    def test_dash_word_without_double_dash_is_an_unknown_option(self):
        rc, out, err = self.run_ctl("test", self.write(BASIC),
                                    "-weird-agent", "https://example.com/")
        self.assertEqual((rc, out), (2, ""))
        self.assertTrue(err.startswith("robotsctl: unknown option "), err)

    def test_help_and_version_after_the_command(self):
        rc, out, _ = self.run_ctl("check", "--help")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("usage: robotsctl "), out)
        rc, out, _ = self.run_ctl("ping", "-V")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("robotsctl "), out)


    # --- --usage and --token ----------------------------------------------

    def test_usage_json_gives_purposes_and_deciding_lines(self):
        # The contract's own example: a file-scope Content-Signal and a
        # Content-Usage in the '*' group; per purpose most restrictive.
        rc, out, err = self.run_ctl("--json", "test", "--usage",
                                    self.write(USAGE), "AnyBot",
                                    "https://example.com/page",
                                    "https://example.com/ai-ok/page",
                                    "https://example.com/never/page")
        self.assertEqual(rc, 1, err)
        page, ok, never = self.json_lines(out)
        self.assertEqual(page["usage"], {"train-ai": "disallowed",
                                         "search": "allowed",
                                         "ai-input": "unknown",
                                         "ai-use": "unknown"})
        self.assertEqual(page["usage_from"], [
            {"directive": "content-signal", "pattern": "/", "line": 1,
             "value": "search=yes, ai-train=no", "scope": "file"},
            {"directive": "content-usage", "pattern": "/", "line": 5,
             "value": "train-ai=n"}])
        # Longest PATH decides per directive; the two combined most
        # restrictively: Content-Signal's ai-train=no still applies.
        self.assertEqual(ok["usage"]["train-ai"], "disallowed")
        self.assertEqual([s["line"] for s in ok["usage_from"]], [1, 6])
        # A disallowed URL has no preferences.
        self.assertIs(never["allowed"], False)
        self.assertIsNone(never["usage"])
        self.assertEqual(never["usage_from"], [])
        # The new members come after the existing ones.
        self.assertEqual(list(page)[:7], ["url", "ok", "allowed", "reason",
                                          "rule", "crawl_delay", "usage"])

    def test_usage_text_adds_indented_lines(self):
        rc, out, err = self.run_ctl("test", "--usage", self.write(USAGE),
                                    "AnyBot", "https://example.com/page")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), [
            "allowed https://example.com/page (line 3: allow /)",
            "  usage: train-ai=disallowed search=allowed ai-input=unknown "
            "ai-use=unknown",
            "    line 1: content-signal (file) / search=yes, ai-train=no",
            "    line 5: content-usage / train-ai=n"])

    # --- warnings for the file's author -----------------------------------

    AUTHOR = ("User-agent: *\n"                              # 1
              "Allow: /\n"                                   # 2
              "Disallow: /\n"                                # 3 tie
              "Content-Signal: ai-train=no\n"                # 4
              "Content-Usage: train-ai=y\n"                  # 5 conflict
              "\n"
              "User-agent: LastBot\n"                        # 7
              "Disallow: /x\n"                               # 8
              "Content-Signal: search=yes, ai-train=no\n")   # 9 pasted

    def test_warnings_go_to_stderr_once_with_their_line(self):
        path = self.write(self.AUTHOR)
        rc, out, err = self.run_ctl("test", path, "AnyBot",
                                    "https://example.com/a",
                                    "https://example.com/b")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), [
            "allowed https://example.com/a (line 2: allow /)",
            "allowed https://example.com/b (line 2: allow /)"])
        lines = err.splitlines()
        self.assertEqual([x.split(": ")[0:2] for x in lines], [
            [path + ":3", "allow_disallow_tie"],
            [path + ":5", "pref_conflict"],
            [path + ":9", "pref_not_in_star_group"]])
        self.assertIn("the Allow wins", lines[0])

    def test_json_warnings_in_every_url_object(self):
        rc, out, err = self.run_test(self.AUTHOR, "AnyBot",
                                     "https://example.com/a", "not a url",
                                     json_out=True)
        self.assertEqual(rc, 2, err)
        good, bad = self.json_lines(out)
        want = [(3, "allow_disallow_tie"), (5, "pref_conflict"),
                (9, "pref_not_in_star_group")]
        for obj in (good, bad):
            self.assertEqual([(w["line"], w["code"])
                              for w in obj["warnings"]], want)
            for w in obj["warnings"]:
                self.assertEqual(sorted(w), ["code", "line", "message"])
        self.assertNotIn("allow_disallow_tie", err)  # not twice

    def test_a_clean_file_warns_nothing(self):
        # Near misses of each warning, and Cloudflare's use=reference.
        body = ("User-agent: *\n"
                "Allow: /a*\n"
                "Disallow: /a\n"
                "Content-Signal: search=yes, ai-train=no, use=reference\n"
                "Content-Usage: /blog train-ai=y\n"
                "\n"
                "User-agent: LastBot\n"
                "User-agent: *\n"
                "Disallow: /x\n")
        rc, out, err = self.run_test(body, "AnyBot", "https://example.com/a")
        self.assertEqual((rc, err), (0, ""))
        rc, out, err = self.run_test(body, "AnyBot", "https://example.com/a",
                                     json_out=True)
        self.assertEqual(self.json_lines(out)[0]["warnings"], [])

    def test_usage_answers_ai_use(self):
        body = ("User-agent: *\n"
                "Content-Usage: train-ai=y, ai-use=n\n"
                "Content-Signal: ai-input=yes\n")
        rc, out, err = self.run_ctl("test", "--usage", self.write(body),
                                    "AnyBot", "https://example.com/p")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines()[1],
                         "  usage: train-ai=allowed search=unknown "
                         "ai-input=allowed ai-use=disallowed")

    def test_without_usage_no_usage_members(self):
        rc, out, _ = self.run_test(USAGE, "AnyBot", "https://example.com/",
                                   json_out=True)
        self.assertEqual(rc, 0)
        ans = self.json_lines(out)[0]
        self.assertNotIn("usage", ans)
        self.assertNotIn("usage_from", ans)
        self.assertNotIn("tokens", ans)

    def test_tokens_are_evaluated_as_product_tokens(self):
        # Google-Extended has its own group; Applebot-Extended falls back
        # to '*'; whatever the verdict for the agent itself.
        rc, out, err = self.run_ctl("--json", "test", "--token",
                                    "Google-Extended", "--token",
                                    "Applebot-Extended", self.write(USAGE),
                                    "AnyBot", "https://example.com/page",
                                    "https://example.com/never/x")
        self.assertEqual(rc, 1, err)
        page, never = self.json_lines(out)
        self.assertEqual(page["tokens"], {
            "google-extended": {"allowed": False, "rule": {
                "directive": "disallow", "pattern": "/", "line": 9}},
            "applebot-extended": {"allowed": True, "rule": {
                "directive": "allow", "pattern": "/", "line": 3}}})
        self.assertFalse(never["allowed"])
        self.assertFalse(never["tokens"]["applebot-extended"]["allowed"])
        self.assertNotIn("usage", page)

    def test_token_text_lines(self):
        rc, out, err = self.run_ctl("test", "--token", "Google-Extended",
                                    self.write(USAGE), "AnyBot",
                                    "https://example.com/page")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines()[1:], [
            "  token google-extended: disallowed (line 9: disallow /)"])

    def test_token_without_rule_says_no_rule_as_the_check_line_does(self):
        # No group for the token and no '*' group: allowed, no rule; the
        # token's line names it as the URL's line does, (no_rule).
        rc, out, err = self.run_ctl("test", "--token", "Google-Extended",
                                    self.write("User-agent: FooBot\n"
                                               "Disallow: /private\n"),
                                    "AnyBot", "https://example.com/page")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), [
            "allowed https://example.com/page (no_rule)",
            "  token google-extended: allowed (no_rule)"])

    def test_bad_and_too_many_tokens_are_usage_errors(self):
        path = self.write(USAGE)
        rc, _, err = self.run_ctl("test", "--token", "Google Extended",
                                  path, "a", "https://example.com/")
        self.assertEqual(rc, 2)
        self.assertIn("not a product token", err)
        many = []
        for i in range(17):
            many += ["--token", "bot-" + "x" * (i + 1)]
        rc, _, err = self.run_ctl("test", *many, path, "a",
                                  "https://example.com/")
        self.assertEqual(rc, 2)
        self.assertIn("at most 16", err)
        rc, out, err = self.run_ctl("--json", "test", *many[:32], path, "a",
                                    "https://example.com/")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.json_lines(out)[0]["tokens"]), 16)


class FakeDaemon:
    """A Unix socket peer for one connection: reads one request line,
    then sends reply(request) byte by byte (so that the client sees it in
    pieces) and closes, or with reply None holds the connection open until
    the client goes away."""

    def __init__(self, path, reply):
        self.path = path
        self.reply = reply
        self.request = None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.sock.accept()
        with conn:
            f = conn.makefile("rb")
            line = f.readline()
            self.request = json.loads(line)
            self.request_line = line
            data = self.reply(self.request) if self.reply else None
            if data is None:
                conn.recv(1)  # until robotsctl closes its side
                return
            if callable(data):
                data(conn)  # streams what it likes
                return
            for i in range(len(data)):
                conn.sendall(data[i:i + 1])

    def close(self):
        self.thread.join(TIMEOUT)
        self.sock.close()


def answer(req, **fields):
    """One answer line for req carrying fields."""
    return (json.dumps(dict({"id": req["id"]}, **fields)) + "\n").encode()


class RobotsctlClientTest(unittest.TestCase):
    """The daemon commands against a FakeDaemon."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.path = os.path.join(self.dir.name, "robotsd.sock")

    def run_ctl(self, reply, *args, env=None, socket_first=True):
        """Run robotsctl against a FakeDaemon; "-s PATH" goes first unless
        socket_first is False (then args name the socket themselves)."""
        if os.path.exists(self.path):
            os.unlink(self.path)  # the socket file of an earlier FakeDaemon
        fake = FakeDaemon(self.path, reply)
        self.addCleanup(fake.sock.close)
        pre = ["-s", self.path] if socket_first else []
        r = subprocess.run([ROBOTSCTL] + pre + list(args),
                           capture_output=True, timeout=TIMEOUT, env=env)
        fake.close()
        self.fake = fake
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def test_check_sends_one_compact_line_with_an_id(self):
        def reply(req):
            return answer(req, ok=True, allowed=True, reason="no_rule",
                          source="cache", rule=None, http_status=200)
        rc, out, err = self.run_ctl(reply, "check", "https://e.com/x",
                                    "FooBot/2.1 (+https://foo.example)")
        self.assertEqual(rc, 0, err)
        line = self.fake.request_line
        self.assertTrue(line.endswith(b"}\n"), line)
        self.assertEqual(line.count(b"\n"), 1)
        req = dict(self.fake.request)
        self.assertIn("id", req)
        del req["id"]
        self.assertEqual(req, {"op": "check", "url": "https://e.com/x",
                               "agent": "FooBot/2.1 (+https://foo.example)"})
        self.assertEqual(out, "allowed https://e.com/x (no_rule)\n")

    def test_answers_with_other_ids_are_skipped(self):
        def reply(req):
            other = {"id": [req["id"]], "ok": True, "allowed": True}
            return ((json.dumps(other) + "\n").encode() +
                    b'{"id":"x","ok":true,"version":"wrong"}\n' +
                    answer(req, ok=True, allowed=False, reason="rule",
                           source="fetched", http_status=200,
                           rule={"directive": "disallow", "pattern": "/a/",
                                 "line": 3}))
        rc, out, err = self.run_ctl(reply, "check", "https://e.com/a/b", "A")
        self.assertEqual(rc, 1, err)
        self.assertEqual(out,
                         "disallowed https://e.com/a/b (line 3: disallow /a/)\n")

    def test_answer_line_longer_than_64_mib_is_refused(self):
        sent = []

        def endless(conn):
            conn.sendall(b'{"id":1,"ok":true,"pad":"')
            chunk = b"x" * (1 << 20)
            try:
                for _ in range(256):  # 256 MiB at most
                    conn.sendall(chunk)
                    sent.append(len(chunk))
            except OSError:
                pass  # robotsctl hung up

        rc, out, err = self.run_ctl(lambda req: endless, "ping")
        self.assertEqual(rc, 2, err)
        self.assertEqual(err, "robotsctl: %s: answer longer than 67108864 "
                         "bytes\n" % self.path)
        self.assertLess(sum(sent), 128 << 20)

    def test_stale_source_and_http_status_details(self):
        cases = [
            ({"allowed": True, "reason": "unavailable", "source": "fetched",
              "http_status": 404}, 0, "allowed U (unavailable: HTTP 404)"),
            ({"allowed": False, "reason": "unreachable", "source": "cache",
              "http_status": 503}, 1, "disallowed U (unreachable: HTTP 503)"),
            ({"allowed": False, "reason": "unreachable", "source": "cache",
              "http_status": None}, 1, "disallowed U (unreachable)"),
            ({"allowed": True, "reason": "no_rule", "source": "stale",
              "http_status": 200}, 0, "allowed U (no_rule, stale)"),
        ]
        for fields, want_rc, want in cases:
            with self.subTest(want=want):
                rc, out, _ = self.run_ctl(
                    lambda req: answer(req, ok=True, rule=None, **fields),
                    "check", "U", "A")
                self.assertEqual(rc, want_rc)
                self.assertEqual(out, want + "\n")

    def test_json_prints_the_answer_line_unchanged(self):
        line = []

        def reply(req):
            line.append(answer(req, ok=True, version="9.9"))
            return line[0]
        rc, out, _ = self.run_ctl(reply, "--json", "ping")
        self.assertEqual(rc, 0)
        self.assertEqual(out.encode(), line[0])

    def test_ping_prints_version(self):
        rc, out, _ = self.run_ctl(
            lambda req: answer(req, ok=True, version="1.2.3"), "ping")
        self.assertEqual((rc, out), (0, "robotsd 1.2.3\n"))
        self.assertEqual(self.fake.request["op"], "ping")

    def test_stats_prints_name_value_lines_in_order(self):
        stats = '{"cache_entries":3,"hits":10,"misses":2,"uptime_s":7}'

        def reply(req):
            return ('{"id":%s,"ok":true,"stats":%s}\n'
                    % (json.dumps(req["id"]), stats)).encode()
        rc, out, _ = self.run_ctl(reply, "stats")
        self.assertEqual(rc, 0)
        self.assertEqual(out,
                         "cache_entries 3\nhits 10\nmisses 2\nuptime_s 7\n")

    def test_purge_all_sends_all_true_and_prints_count(self):
        rc, out, _ = self.run_ctl(
            lambda req: answer(req, ok=True, purged=4), "purge", "--all")
        self.assertEqual((rc, out), (0, "purged 4\n"))
        self.assertEqual(self.fake.request["all"], True)
        self.assertNotIn("origin", self.fake.request)

    def test_inspect_flattens_nested_fields(self):
        def reply(req):
            return answer(req, ok=True, origin="https://e.com",
                          groups=[{"agents": ["a", "b"], "rules": 2}],
                          sitemaps=[], retry={"fail_streak": 0,
                                              "last_error": None})
        rc, out, _ = self.run_ctl(reply, "inspect", "e.com")
        self.assertEqual(rc, 0)
        self.assertEqual(self.fake.request["origin"], "e.com")
        self.assertEqual(out.splitlines(), [
            "origin: https://e.com", "groups[0].agents: a, b",
            "groups[0].rules: 2", "sitemaps: (none)",
            "retry.fail_streak: 0", "retry.last_error: -"])

    def test_error_answer_prints_code_and_message_and_exits_2(self):
        def reply(req):
            return answer(req, ok=False, error={
                "code": "not_cached", "message": "not in the cache"})
        rc, out, err = self.run_ctl(reply, "inspect", "e.com")
        self.assertEqual((rc, out), (2, ""))
        self.assertEqual(err, "robotsctl: not_cached: not in the cache\n")

    def test_error_without_id_is_taken_as_the_answer(self):
        def reply(req):
            return (b'{"id":null,"ok":false,"error":{"code":"line_too_long",'
                    b'"message":"too long"}}\n')
        rc, _, err = self.run_ctl(reply, "ping")
        self.assertEqual(rc, 2)
        self.assertEqual(err, "robotsctl: line_too_long: too long\n")

    def test_connection_closed_before_answer_is_an_error(self):
        rc, out, err = self.run_ctl(lambda req: b'{"id":', "ping")
        self.assertEqual((rc, out), (2, ""))
        self.assertTrue(err.startswith("robotsctl: "), err)

    def test_no_answer_within_timeout_is_an_error(self):
        rc, out, err = self.run_ctl(None, "-t", "1", "ping")
        self.assertEqual((rc, out), (2, ""))
        self.assertTrue(err.startswith("robotsctl: "), err)

    def test_daemon_not_running_names_the_socket(self):
        path = os.path.join(self.dir.name, "absent.sock")
        r = subprocess.run([ROBOTSCTL, "-s", path, "ping"],
                           capture_output=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2)
        self.assertIn(path, r.stderr.decode())
        self.assertTrue(r.stderr.decode().startswith("robotsctl: "))

    def test_robotsd_socket_variable_is_used_and_s_wins(self):
        env = dict(os.environ, ROBOTSD_SOCKET=self.path)
        r = subprocess.run([ROBOTSCTL, "ping"], env=env, capture_output=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2)
        self.assertIn(self.path, r.stderr.decode())
        env["ROBOTSD_SOCKET"] = os.path.join(self.dir.name, "elsewhere")
        rc, out, _ = self.run_ctl(
            lambda req: answer(req, ok=True, version="1"), "ping", env=env)
        self.assertEqual((rc, out), (0, "robotsd 1\n"))

    # --- options anywhere, "--" -------------------------------------------

    def test_socket_option_after_the_command(self):
        for args in (["ping", "-s", self.path],
                     ["ping", "--socket", self.path],
                     ["ping", "--socket=" + self.path]):
            with self.subTest(args=args):
                rc, out, err = self.run_ctl(
                    lambda req: answer(req, ok=True, version="1.2.3"),
                    *args, socket_first=False)
                self.assertEqual((rc, out), (0, "robotsd 1.2.3\n"), err)

    def test_json_after_the_check_arguments_prints_the_answer_line(self):
        line = []

        def reply(req):
            line.append(answer(req, ok=True, allowed=False, reason="rule",
                               source="cache", http_status=200,
                               rule={"directive": "disallow",
                                     "pattern": "/", "line": 2}))
            return line[0]
        rc, out, err = self.run_ctl(reply, "check", "https://e.com/x", "A",
                                    "--json")
        self.assertEqual(rc, 1, err)
        self.assertEqual(out.encode(), line[0])
        self.assertEqual(self.fake.request["agent"], "A")

    def test_double_dash_sends_a_dash_agent_unchanged(self):
        def reply(req):
            return answer(req, ok=True, allowed=True, reason="no_rule",
                          source="cache", rule=None, http_status=200)
        rc, out, err = self.run_ctl(reply, "check", "-s", self.path, "--",
                                    "https://e.com/", "-weird-agent",
                                    socket_first=False)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.fake.request["url"], "https://e.com/")
        self.assertEqual(self.fake.request["agent"], "-weird-agent")
        self.assertEqual(out, "allowed https://e.com/ (no_rule)\n")

    def test_purge_all_with_options_around_it(self):
        rc, out, err = self.run_ctl(
            lambda req: answer(req, ok=True, purged=2),
            "purge", "-s", self.path, "--all", "--json", socket_first=False)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["purged"], 2)
        self.assertEqual(self.fake.request["all"], True)

    def test_all_after_double_dash_is_an_origin(self):
        rc, _, _ = self.run_ctl(
            lambda req: answer(req, ok=True, purged=0), "purge", "--",
            "--all")
        self.assertEqual(rc, 0)
        self.assertEqual(self.fake.request["origin"], "--all")
        self.assertNotIn("all", self.fake.request)

    def test_purge_with_both_origin_and_all_is_a_usage_error(self):
        r = subprocess.run([ROBOTSCTL, "-s", self.path, "purge", "--all",
                            "https://e.com"], capture_output=True,
                           timeout=TIMEOUT)
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertTrue(r.stderr.startswith(b"robotsctl: purge: "), r.stderr)


if __name__ == "__main__":
    unittest.main()
