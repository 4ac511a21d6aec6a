"""Limits and edges found in review: the line limit with CRLF, NUL in JSON
strings, the batch size cap, the per-connection cap on waiting checks, the
shutdown drain answering what still waits, inspect during a refresh."""
import json
import signal
import threading

from harness import DaemonTest, poll

RULES = "User-agent: *\nDisallow: /private/\n"


class Limits(DaemonTest):

    def test_line_at_the_limit_may_end_in_crlf(self):
        # docs/protocol.md: a '\r' before the '\n' is not part of the line.
        c = self.start("--max-line", "200")
        req = {"op": "ping", "id": ""}
        raw = json.dumps(req, separators=(",", ":")).encode()
        req["id"] = "p" * (200 - len(raw))
        line = json.dumps(req, separators=(",", ":")).encode()
        self.assertEqual(len(line), 200)
        c.send_raw(line + b"\r\n")
        self.assertAnswer(c.recv(), ok=True, id=req["id"])
        c.send_raw(line + b" \n")  # 201 bytes: over the limit
        self.assertError(c.recv(), "line_too_long")

    def test_nul_inside_a_json_string_is_valid_json(self):
        c = self.start()
        c.send_raw(b'{"op":"ping","id":"a\\u0000b"}\n')
        self.assertAnswer(c.recv(), ok=True, id="a\x00b")
        c.send_raw(b'{"op":"ping\\u0000x","id":1}\n')
        self.assertError(c.recv(), "unknown_op", rid=1)

    def test_batch_of_more_than_1000_urls_is_bad_request(self):
        c = self.start()
        a = c.call({"op": "check", "agent": "A",
                    "urls": ["http://a.test/"] * 1001})
        self.assertError(a, "bad_request")
        self.assertEqual(self.origin.hits("a.test"), [])

    def test_one_connection_holds_at_most_1024_waiting_checks(self):
        self.origin.robots("hold.test", RULES, hold=True)
        c = self.start()
        n = 1030
        c.send_raw(b"".join(
            json.dumps({"op": "check", "url": "http://hold.test/%d" % i,
                        "agent": "A", "id": i}).encode() + b"\n"
            for i in range(n)))
        refused = [c.recv() for _ in range(n - 1024)]
        for a in refused:
            self.assertError(a, "overloaded")
        self.assertEqual(sorted(a["id"] for a in refused),
                         list(range(1024, n)))
        # Another connection is not refused for it.
        other = self.d.client()
        other.send({"op": "check", "url": "http://hold.test/o",
                    "agent": "A", "id": "other"})
        probe = self.d.client()
        self.assertTrue(poll(
            lambda: self.stats(client=probe)["waiting"] == 1025))
        self.origin.release("hold.test")
        self.assertAnswer(other.recv(), ok=True, source="fetched")
        got = [c.recv() for _ in range(1024)]
        self.assertTrue(all(a["ok"] is True for a in got))
        self.assertEqual(len(self.origin.hits("hold.test")), 1)

    def test_sigterm_answers_every_waiting_check(self):
        # contract: SIGTERM answers what is in flight. A's fetch times out
        # at 2 s (unreachable); B's is queued behind it and cannot end
        # before the drain's deadline (--stop-timeout 3 s): "timeout".
        for h in ("a.test", "b.test"):
            self.origin.robots(h, RULES, hold=True)
        c = self.start("--fetch-timeout", "2", "--max-fetches", "1",
                       "--stop-timeout", "3")
        c.send({"op": "check", "url": "http://a.test/", "agent": "A",
                "id": "a"})
        c.send({"op": "check", "url": "http://b.test/", "agent": "A",
                "id": "b"})
        poll(lambda: self.origin.hits("a.test"))
        self.d.proc.send_signal(signal.SIGTERM)
        got = {}
        for _ in range(2):
            a = c.recv(timeout=10)
            got[a["id"]] = a
        self.assertAnswer(got["a"], ok=True, reason="unreachable")
        self.assertError(got["b"], "timeout", rid="b")
        self.assertEqual(self.d.wait_exit(), 0)

    def test_inspect_says_stale_while_a_refresh_runs(self):
        self.origin.robots("r.test", RULES,
                           headers={"Cache-Control": "max-age=100"})
        c = self.start()
        self.assertAnswer(c.check("http://r.test/private/x"),
                          source="fetched", allowed=False)
        self.origin.robots("r.test", RULES, hold=True)
        self.advance(110)
        self.assertAnswer(c.check("http://r.test/private/x"),
                          source="stale", allowed=False)
        i = self.inspect("http://r.test")
        self.assertIs(i["fetching"], True)
        self.assertIs(i["stale"], True)
        self.origin.release("r.test")

    def test_client_leaving_answers_unread_is_disconnected(self):
        # --write-timeout: answers that stay unread that long close the
        # connection; the daemon says so in its log, others are served.
        c = self.start("--write-timeout", "1", "--max-output", "65536")
        slow = self.d.client()
        pad = "p" * 1000
        data = b"".join(json.dumps({"op": "ping", "id": [i, pad]}).encode()
                        + b"\n" for i in range(3000))

        def send():
            try:
                slow.sock.sendall(data)
            except OSError:
                pass  # the daemon hangs up on it: what this test wants
        threading.Thread(target=send, daemon=True).start()
        self.assertTrue(poll(lambda: "warn: event=client_dropped connection="
                             in self.d.log(50),
                             timeout=15), "no write-timeout disconnect")
        self.assertTrue(slow.expect_eof(timeout=10))
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
