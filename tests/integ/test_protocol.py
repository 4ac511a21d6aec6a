"""Wire protocol (issue 4): error codes, ids, pipelining, many connections,
stalled clients, batches, wait:false, purge, stats, out-of-order answers."""
import json
import os
import random
import re
import signal
import socket
import threading
import time

from harness import VERSION, DaemonTest, poll

RULES = "User-agent: *\nDisallow: /private/\n"


class Errors(DaemonTest):

    def test_each_error_code_and_connection_stays_usable(self):
        c = self.start()
        cases = [
            (b"nope\n", "bad_json", None),
            (b'{"op":"ping","id":1\n', "bad_json", None),
            (b'\xff\xfe\x00{\x01garbage\n', "bad_json", None),
            (b'{"id":2}\n', "bad_request", 2),
            (b'{"op":5,"id":3}\n', "bad_request", 3),
            (b'{"op":"check","agent":"A","id":4}\n', "bad_request", 4),
            (b'{"op":"check","url":7,"agent":"A","id":5}\n', "bad_request", 5),
            (b'{"op":"check","url":"http://a.test/","id":6}\n', "bad_request",
             6),
            (b'{"op":"check","url":"http://a.test/","agent":["A"],"id":7}\n',
             "bad_request", 7),
            (b'{"op":"check","urls":"http://a.test/","agent":"A","id":8}\n',
             "bad_request", 8),
            (b'{"op":"inspect","id":9}\n', "bad_request", 9),
            (b'{"op":"check","url":"http://a.test/","urls":["http://a.test/"]'
             b',"agent":"A","id":16}\n', "bad_request", 16),
            (b'{"op":"check","url":"http://a.test/","agent":"A","wait":"no",'
             b'"id":17}\n', "bad_request", 17),
            (b'{"op":"purge","id":18}\n', "bad_request", 18),
            (b'{"op":"purge","origin":"http://a.test","all":true,"id":19}\n',
             "bad_request", 19),
            (b'[1,2]\n', "bad_request", None),
            (b'{"op":"inspect","origin":"gopher://a.test","id":20}\n',
             "unsupported_scheme", 20),
            (b'{"op":"frobnicate","id":10}\n', "unknown_op", 10),
            (b'{"op":"check","url":"not a url","agent":"A","id":11}\n',
             "bad_url", 11),
            (b'{"op":"check","url":"http:///x","agent":"A","id":12}\n',
             "bad_url", 12),
            (b'{"op":"check","url":"gopher://a.test/","agent":"A","id":13}\n',
             "unsupported_scheme", 13),
            (b'{"op":"check","url":"wss://a.test/x","agent":"A","id":14}\n',
             "unsupported_scheme", 14),
            (b'{"op":"inspect","origin":"http://never.test","id":15}\n',
             "not_cached", 15),
        ]
        for raw, code, rid in cases:
            with self.subTest(request=raw):
                c.send_raw(raw)
                self.assertError(c.recv(), code, rid=rid)
        self.assertAnswer(c.call({"op": "ping", "id": "after"}), id="after",
                          ok=True, version=VERSION)
        self.assertEqual(self.origin.hits("a.test"), [],
                         "a rejected request fetched robots.txt")

    def test_garbage_and_deep_nesting_never_break_the_connection(self):
        c = self.start()
        rnd = random.Random(9309)
        lines = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300)
                                                        )).replace(b"\n", b"")
                 for _ in range(200)]
        lines = [ln for ln in lines if ln.rstrip(b" \t\r")]  # see below
        lines += [b"[" * 3000 + b"]" * 3000,
                  b'{"op":"ping","id":' + b"[" * 3000 + b"]" * 3000 + b"}",
                  b'{"op":"check","url":"http://a.test/\\ud800","agent":"A"}',
                  b'{"op":"ping","id":"\xc3\x28"}', b'{"op":"ping"} {"x":1}',
                  b"{}", b"null", b'"str"', b"1e99999", b"\x00"]
        for line in lines:
            with self.subTest(line=line[:40]):
                c.send_raw(line + b"\n")
                a = c.recv()
                self.assertIn(a.get("ok"), (True, False), a)
                if a["ok"] is False:
                    self.assertIn(a["error"]["code"], (
                        "bad_json", "bad_request", "bad_url", "unknown_op"),
                        a)
        self.assertAnswer(c.call({"op": "ping", "id": "alive"}), ok=True,
                          id="alive")

    def test_blank_lines_ignored_and_crlf_accepted(self):
        c = self.start()
        c.send_raw(b"\n \r\n\t\n" + b'{"op":"ping","id":1} \r\n')
        self.assertAnswer(c.recv(), id=1, ok=True)
        c.send_raw(b'\n\n{"op":"ping","id":2}\n')
        self.assertAnswer(c.recv(), id=2, ok=True)

    def test_line_too_long_discards_rest_of_line_and_keeps_connection(self):
        c = self.start()
        long_url = "http://a.test/" + "x" * 70000
        line = json.dumps({"op": "check", "url": long_url, "agent": "A",
                           "id": 1}).encode() + b"\n"
        self.assertGreater(len(line), 65536)
        c.send_raw(line + b'{"op":"ping","id":2}\n')
        self.assertError(c.recv(), "line_too_long")
        self.assertAnswer(c.recv(), id=2, ok=True, version=VERSION)
        self.assertEqual(self.origin.hits("a.test"), [])

    def test_line_just_under_limit_is_accepted(self):
        c = self.start("--max-line", "200")
        req = {"op": "ping", "id": "p" * 100}
        raw = json.dumps(req, separators=(",", ":")).encode()
        req["id"] += "q" * (199 - len(raw))  # 199 bytes + "\n" = 200
        self.assertAnswer(c.call(req), ok=True, id=req["id"])
        req["id"] += "qq"
        c.send(req)
        self.assertError(c.recv(), "line_too_long")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_id_echoed_any_json_value_null_when_absent(self):
        c = self.start()
        for rid in [0, -5, 3.5, "seven", "", True, False, None, [1, "x"],
                    {"k": [1, {"n": None}]}, "ünï\u2603"]:
            with self.subTest(id=rid):
                c.send({"op": "ping", "id": rid})
                self.assertAnswer(c.recv(), ok=True, id=rid)
        c.send({"op": "ping"}, auto_id=False)
        a = c.recv()
        self.assertIn("id", a, "id field missing when the request had none")
        self.assertAnswer(a, id=None, ok=True)
        c.send({"op": "nope", "id": {"x": 1}})
        self.assertError(c.recv(), "unknown_op", rid={"x": 1})

    def test_overloaded_beyond_max_connections(self):
        self.start("--max-connections", "1")
        self.c.close()
        # The slot is free once the daemon saw the start-up probe and the
        # first client go.
        c = poll(self._connect_ok)
        self.assertTrue(c, "no connection accepted with --max-connections 1")
        extra = self.d.client()
        a = extra.recv()
        self.assertError(a, "overloaded")
        self.assertTrue(extra.expect_eof(), "overloaded connection not closed")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        c.close()
        self.assertTrue(poll(self._connect_ok),
                        "no connection accepted after the first closed")

    def test_refused_client_that_already_sent_reads_overloaded_then_eof(self):
        # A client writes at once after connect(), usually before robotsd
        # accepts. Closing a socket with unread input resets it, and a
        # client could then lose the "overloaded" line; robotsd reads what
        # was sent before it closes. SIGSTOP makes "sent before accept"
        # certain.
        self.start("--max-connections", "1")
        self.c.close()
        c = poll(self._connect_ok)
        self.assertTrue(c, "no connection accepted with --max-connections 1")
        os.kill(self.d.proc.pid, signal.SIGSTOP)
        try:
            extra = self.d.client()
            extra.send({"op": "ping", "id": 1})
        finally:
            os.kill(self.d.proc.pid, signal.SIGCONT)
        self.assertError(extra.recv(), "overloaded")
        self.assertEqual(extra.read_line(), b"",
                         "no clean end of stream after overloaded")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_clock_op_exists_only_under_test_clock(self):
        c = self.start(test_clock=False)
        c.send({"op": "clock", "advance": 100000, "id": 1})
        self.assertError(c.recv(), "unknown_op", rid=1)

    def test_check_waiting_too_long_answers_timeout(self):
        # Nine held origins, one fetch at a time, each fetch ends at the 1 s
        # --fetch-timeout: the later checks wait past 2 * 1 + 5 = 7 s.
        hosts = ["t%d.test" % i for i in range(9)]
        for h in hosts:
            self.origin.robots(h, RULES, hold=True)
        c = self.start("--max-fetches", "1", "--fetch-timeout", "1")
        t0 = time.monotonic()
        for i, h in enumerate(hosts):
            c.send({"op": "check", "url": "http://%s/" % h, "agent": "A",
                    "id": i})
        got = {}
        while len(got) < len(hosts):
            a = c.recv(timeout=30)
            got[a["id"]] = (a, time.monotonic() - t0)
        for i in range(6):  # fetched within 6 s: unreachable (timed out)
            self.assertAnswer(got[i][0], ok=True, allowed=False,
                              reason="unreachable", http_status=None)
        for i in (7, 8):
            a, when = got[i]
            self.assertError(a, "timeout", rid=i)
            self.assertBetween(when, 6.5, 9.5, "seconds until timeout")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def _connect_ok(self):
        """A new client if the daemon serves it, else None."""
        cl = self.d.client(timeout=5)
        try:
            if cl.call({"op": "ping"}).get("ok") is True:
                return cl
        except (EOFError, OSError):
            pass
        cl.close()
        return None


class Flow(DaemonTest):

    def test_pipelined_1000_requests_all_answered(self):
        self.origin.robots("a.test", RULES)
        c = self.start()
        self.assertAnswer(c.check("http://a.test/"), ok=True, allowed=True)
        reqs = []
        for i in range(1000):
            if i % 2:
                reqs.append({"op": "ping", "id": i})
            else:
                reqs.append({"op": "check", "id": i, "agent": "B",
                             "url": "http://a.test/private/%d" % i})
        answers = c.pipeline(reqs)
        self.assertEqual(sorted(a["id"] for a in answers), list(range(1000)))
        for a in answers:
            if a["id"] % 2:
                self.assertAnswer(a, ok=True, version=VERSION)
            else:
                self.assertAnswer(a, ok=True, allowed=False, source="cache",
                                  reason="rule")
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_200_concurrent_connections(self):
        self.origin.robots("a.test", RULES)
        self.start()
        clients = [self.d.client() for _ in range(200)]
        for i, cl in enumerate(clients):
            cl.send({"op": "check", "id": i, "agent": "B",
                     "url": "http://a.test/private/x" if i % 2 else
                     "http://a.test/public"})
        for i, cl in enumerate(clients):
            self.assertAnswer(cl.recv(), id=i, ok=True, allowed=not i % 2,
                              origin="http://a.test")
        self.assertEqual(len(self.origin.hits("a.test")), 1,
                         "200 checks of one origin fetched it more than once")

    def test_clients_hanging_up_before_their_answers(self):
        self.origin.robots("a.test", RULES)
        c = self.start()
        c.check("http://a.test/")
        for i in range(50):
            gone = self.d.client()
            gone.send_raw(b'{"op":"check","url":"http://a.test/private/",'
                          b'"agent":"A"}\n' * 20 + b'{"op":"stats"}\n')
            gone.close()
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        self.assertTrue(poll(lambda: self.stats()["connections"] == 1),
                        "closed clients still counted: %r" % self.stats())

    def test_client_stalled_mid_line_does_not_block_others(self):
        c = self.start()
        staller = self.d.client()
        staller.send_raw(b'{"op":"pi')
        for i in range(3):
            self.assertAnswer(c.call({"op": "ping", "id": i}), id=i, ok=True)
            other = self.d.client()
            self.assertAnswer(other.call({"op": "ping"}), ok=True)
        staller.send_raw(b'ng","id":"late"}\n')
        self.assertAnswer(staller.recv(), id="late", ok=True, version=VERSION)

    def test_reader_that_never_reads_is_paused_not_starved_others(self):
        c = self.start("--max-output", "65536")
        slow = self.d.client()
        n, pad = 3000, "p" * 1000  # about 3 MB of answers
        data = b"".join(json.dumps({"op": "ping", "id": [i, pad]}).encode()
                        + b"\n" for i in range(n))
        t = threading.Thread(target=slow.sock.sendall, args=(data,),
                             daemon=True)
        t.start()
        # The daemon stops reading the slow client (its answers pile up)
        # and keeps serving the others.
        for i in range(3):
            self.assertAnswer(c.call({"op": "ping", "id": i}), id=i, ok=True)
        t.join(0.5)  # an absence: give it time to (wrongly) read it all
        self.assertTrue(t.is_alive(), "robotsd read 3 MB of requests from a "
                        "client that reads no answers")
        # Once it reads, every answer comes, in order.
        ids = [slow.recv()["id"] for _ in range(n)]
        self.assertEqual(ids, [[i, pad] for i in range(n)])
        t.join(5)

    def test_one_answer_over_max_output_closes_connection(self):
        self.origin.robots("a.test", RULES)
        c = self.start("--max-output", "65536")
        self.assertAnswer(c.check("http://a.test/"), ok=True)
        urls = ["http://a.test/private/%d" % i for i in range(1000)]
        big = self.d.client()
        big.send({"op": "check", "agent": "A", "urls": urls})
        self.assertTrue(big.expect_eof(), "connection kept after an answer "
                        "over --max-output was queued")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_half_closed_client_gets_its_answers(self):
        self.origin.robots("a.test", RULES, hold=True)
        c = self.start()
        c.send({"op": "check", "url": "http://a.test/private/", "agent": "A",
                "id": 1})
        c.send_raw(b'{"op":"ping","id":2}')  # last line without newline
        c.sock.shutdown(socket.SHUT_WR)
        self.assertAnswer(c.recv(), id=2, ok=True)
        self.origin.release("a.test")
        self.assertAnswer(c.recv(), id=1, ok=True, allowed=False,
                          source="fetched")
        self.assertTrue(c.expect_eof(), "not closed after the last answer")

    def test_cached_answer_overtakes_one_waiting_on_slow_fetch(self):
        self.origin.robots("fast.test", RULES)
        self.origin.robots("slow.test", RULES, hold=True)
        c = self.start()
        self.assertAnswer(c.check("http://fast.test/"), source="fetched")
        c.send({"op": "check", "url": "http://slow.test/private/",
                "agent": "A", "id": "slow"})
        self.origin.wait_hits("slow.test", 1)
        c.send({"op": "check", "url": "http://fast.test/private/",
                "agent": "A", "id": "fast"})
        first = c.recv()
        self.assertAnswer(first, id="fast", ok=True, allowed=False,
                          source="cache")
        self.origin.release("slow.test")
        self.assertAnswer(c.recv(), id="slow", ok=True, allowed=False,
                          source="fetched", reason="rule")

    def test_batch_urls_answers_results_in_order(self):
        self.origin.robots("a.test", RULES)
        self.origin.robots("b.test", "User-agent: *\nDisallow: /\n")
        c = self.start()
        urls = ["http://a.test/private/1", "http://a.test/open",
                "ftp-is-not-a-url", "http://b.test/x", "gopher://a.test/",
                "http://a.test/robots.txt"]
        a = c.call({"op": "check", "agent": "Bot", "urls": urls, "id": 9})
        self.assertAnswer(a, id=9, ok=True)
        res = a.get("results")
        self.assertIsInstance(res, list, json.dumps(a))
        self.assertEqual(len(res), len(urls), json.dumps(a))
        self.assertEqual([r.get("url") for r in res], urls)
        self.assertAnswer(res[0], ok=True, allowed=False, reason="rule",
                          origin="http://a.test", http_status=200,
                          rule={"directive": "disallow",
                                "pattern": "/private/", "line": 2})
        self.assertAnswer(res[1], ok=True, allowed=True, reason="no_rule",
                          rule=None, origin="http://a.test")
        self.assertError(res[2], "bad_url")
        self.assertAnswer(res[3], ok=True, allowed=False, reason="rule",
                          origin="http://b.test")
        self.assertError(res[4], "unsupported_scheme")
        self.assertAnswer(res[5], ok=True, allowed=True, reason="robots_txt",
                          http_status=None, rule=None)
        self.assertEqual(len(self.origin.hits("a.test")), 1)
        self.assertEqual(len(self.origin.hits("b.test")), 1)

    def test_batch_waits_for_every_origin_and_shares_fetches(self):
        self.origin.robots("cached.test", RULES)
        self.origin.robots("slow.test", RULES, hold=True)
        c = self.start()
        c.check("http://cached.test/")
        urls = ["http://slow.test/private/%d" % i for i in range(50)]
        urls.insert(10, "http://cached.test/private/")
        c.send({"op": "check", "agent": "A", "urls": urls, "id": "batch"})
        self.origin.wait_hits("slow.test", 1)
        self.assertAnswer(c.call({"op": "ping", "id": "p"}), ok=True)
        self.assertEqual(c.pending, [], "batch answered before its fetch")
        self.origin.release("slow.test")
        a = c.wait_id("batch")
        self.assertEqual(len(a["results"]), 51)
        for u, r in zip(urls, a["results"]):
            self.assertAnswer(r, ok=True, allowed=False, url=u)
        self.assertEqual(len(self.origin.hits("slow.test")), 1)
        self.assertEqual(self.stats()["fetches"], 2)

    def test_batch_answer_same_whichever_decoder_takes_the_line(self):
        """A batch line of the common shape (decoded without jansson) and
        the same line with an unknown field (left to jansson) get the same
        answer line, byte for byte but for expires_in (the two lines are
        answered at two instants of the running clock): cached, uncached
        and bad URLs, escapes and non-ASCII text, before and after a
        fetch."""
        self.origin.robots("a.test", RULES)
        self.origin.robots("b.test", "User-agent: *\nCrawl-delay: 2\n"
                           "Disallow: /\n")
        self.origin.robots("slow.test", RULES, hold=True)
        c = self.start()
        other = self.d.client()
        c.check("http://a.test/")
        c.check("http://b.test/")
        urls = ["http://a.test/private/1", "http://slow.test/private/x",
                "http://a.test/caf\u00e9?a=1&b=<\u2028>", "gopher://a.test/",
                "http://b.test/\"q\\", "", "http://a.test/robots.txt",
                "http://\u00e9.a.test/", "http://slow.test/open"]
        for ascii_only in (True, False):
            line = json.dumps({"op": "check", "agent": "Bot/1 \u00e9",
                               "urls": urls, "id": 5},
                              separators=(",", ":"), ensure_ascii=ascii_only)
            full = line[:-1] + ',"x":{"y":[null]}}'
            c.send_raw((line + "\n" + full + "\n").encode())
            if ascii_only:
                # both lines wait on the one fetch (two URLs each) before
                # it ends; else the second might be read from the cache
                self.origin.wait_hits("slow.test", 1)
                self.assertTrue(poll(
                    lambda: self.stats(other)["waiting"] == 4),
                    self.stats(other))
                self.origin.release("slow.test")
            first, second = (
                re.sub(rb'"expires_in":[0-9]+', b'"expires_in":0', a)
                for a in (c.read_line(), c.read_line()))
            self.assertEqual(first, second)
            self.assertEqual(len(json.loads(first)["results"]), len(urls))

    def test_large_batch_answer_leaves_whole_and_in_order(self):
        """A fast-path answer of 4 KB or more is handed to the connection
        without a copy: pipelined between small answers it arrives whole
        and in order, the same as the full path's answer to the line; a
        client that leaves with such answers unread costs the daemon
        nothing after it (the sanitizer builds check that they are
        freed)."""
        self.origin.robots("a.test", RULES)
        c = self.start()
        c.check("http://a.test/")
        urls = ["http://a.test/private/%d" % i for i in range(100)]
        line = json.dumps({"op": "check", "agent": "Bot", "urls": urls,
                           "id": 7}, separators=(",", ":"))
        full = line[:-1] + ',"x":1}'
        c.send_raw(("\n".join([line, '{"op":"ping","id":8}', line, full])
                    + "\n").encode())
        first, ping, second, third = (
            re.sub(rb'"expires_in":[0-9]+', b'"expires_in":0', c.read_line())
            for _ in range(4))
        self.assertGreaterEqual(len(first), 4096)
        self.assertEqual(len(json.loads(first)["results"]), 100)
        self.assertAnswer(json.loads(ping), id=8, ok=True)
        self.assertEqual(second, first)
        self.assertEqual(third, first)
        gone = self.d.client()
        gone.send_raw(((line + "\n") * 50).encode())
        gone.close()
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_wait_false_answers_pending_then_cached(self):
        self.origin.robots("a.test", RULES)
        c = self.start()
        a = c.check("http://a.test/private/x", wait=False, id=1)
        self.assertAnswer(a, id=1, ok=True, pending=True,
                          origin="http://a.test")
        self.assertNotIn("allowed", a)
        self.wait_fetched("http://a.test")
        self.assertAnswer(c.check("http://a.test/private/x", wait=False),
                          ok=True, allowed=False, source="cache",
                          reason="rule")
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_purge_one_and_all(self):
        for h in ("a.test", "b.test", "c.test"):
            self.origin.robots(h, RULES)
        c = self.start()
        for h in ("a.test", "b.test", "c.test"):
            self.assertAnswer(c.check("http://%s/" % h), source="fetched")
        self.assertAnswer(c.call({"op": "purge", "origin": "http://a.test",
                                  "id": 1}), id=1, ok=True, purged=1)
        self.assertError(self.inspect("http://a.test"), "not_cached")
        self.assertAnswer(c.call({"op": "purge", "origin": "http://a.test"}),
                          ok=True, purged=0)
        self.assertAnswer(self.inspect("http://b.test"), ok=True,
                          state="rules")
        self.assertAnswer(c.call({"op": "purge", "all": True}), ok=True,
                          purged=2)
        self.assertEqual(self.stats()["cache_entries"], 0)
        self.assertAnswer(c.check("http://a.test/"), source="fetched")
        self.assertEqual(len(self.origin.hits("a.test")), 2)

    def test_stats_counters_after_known_sequence(self):
        self.origin.robots("a.test", RULES)
        self.origin.set("e.test", status=500)
        self.origin.robots("h.test", RULES, hold=True)
        c = self.start()
        s0 = self.stats()
        for k in ("cache_entries", "hits", "misses", "fetches",
                  "fetch_errors", "coalesced"):
            self.assertEqual(s0[k], 0, "fresh daemon: %s" % k)
        self.assertIsInstance(s0["cache_bytes"], int)
        self.assertIsInstance(s0["uptime_s"], (int, float))
        c.check("http://a.test/1")           # miss, fetch
        c.check("http://a.test/2")           # hit
        c.check("http://a.test/3")           # hit
        c.check("http://e.test/")            # miss, fetch, fetch error
        c.check("http://e.test/")            # hit (before the retry)
        c.call({"op": "ping"})
        c.call({"op": "nope"})
        c2 = self.d.client()
        c2.send({"op": "check", "url": "http://h.test/", "agent": "A",
                 "id": "w1"})                # miss, fetch, waits
        self.origin.wait_hits("h.test", 1)
        c.send({"op": "check", "url": "http://h.test/x", "agent": "A",
                "id": "w2"})                 # coalesced on that fetch
        self.assertTrue(poll(lambda: self.stats(c2)["waiting"] == 2),
                        "stats.waiting never reached 2")
        self.origin.release("h.test")
        self.assertAnswer(c2.wait_id("w1"), source="fetched")
        self.assertAnswer(c.wait_id("w2"), source="fetched")
        s = self.stats()
        # misses: checks that found no cached answer (the coalesced too).
        want = {"cache_entries": 3, "hits": 3, "misses": 4, "fetches": 3,
                "fetch_errors": 1, "coalesced": 1, "waiting": 0}
        self.assertEqual({k: s.get(k) for k in want}, want, json.dumps(s))
        self.assertGreater(s["cache_bytes"], 0)
        # Requests between two stats calls: 1 check + 1 ping + 1 stats.
        s1 = self.stats()
        c.check("http://a.test/4")
        c.call({"op": "ping"})
        s2 = self.stats()
        self.assertEqual(s2["requests"] - s1["requests"], 3)
        self.assertEqual(s2["hits"] - s1["hits"], 1)
        # connections: open now; connections_total: accepted since start.
        n, total = s2["connections"], s2["connections_total"]
        for _ in range(2):
            self.d.client().call({"op": "ping"})
        c2.close()
        self.assertTrue(poll(lambda: self.stats()["connections"] == n + 1),
                        "connections != %d: %r" % (n + 1, self.stats()))
        self.assertEqual(self.stats()["connections_total"], total + 2)
