"""Fetching (issue 4): coalescing, the status table, redirects, the 500 KiB
cap, content encodings, User-Agent, --connect-to, timeouts, --max-fetches,
disconnecting waiters, origin and path normalization, answer and inspect
fields, private addresses, LRU eviction, https with --ca-file."""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import DaemonTest, closed_port, origin, poll

RULES = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
CAP = 500 * 1024


class Fetch(DaemonTest):

    def test_50_concurrent_checks_coalesce_into_one_fetch(self):
        self.origin.robots("slow.test", RULES, hold=True)
        self.start()
        clients = [self.d.client() for _ in range(50)]
        for i, cl in enumerate(clients):
            cl.send({"op": "check", "url": "http://slow.test/private/%d" % i,
                     "agent": "Bot", "id": i})
        self.origin.wait_hits("slow.test", 1)
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 50),
                        "not all 50 checks are waiting: %r" % self.stats())
        self.origin.release("slow.test")
        for i, cl in enumerate(clients):
            self.assertAnswer(cl.recv(), id=i, ok=True, allowed=False,
                              source="fetched", reason="rule",
                              origin="http://slow.test", http_status=200,
                              crawl_delay=2)
        self.assertEqual(len(self.origin.hits("slow.test")), 1)
        s = self.stats()
        # misses counts every check that found no cached answer.
        self.assertEqual((s["fetches"], s["misses"], s["coalesced"],
                          s["waiting"]), (1, 50, 49, 0), json.dumps(s))

    def test_status_table(self):
        table = [  # status, allowed, reason
            (200, False, "rule"), (404, True, "unavailable"),
            (410, True, "unavailable"), (403, True, "unavailable"),
            (401, True, "unavailable"), (500, False, "unreachable"),
            (502, False, "unreachable"), (503, False, "unreachable"),
            (429, False, "unreachable")]
        self.origin.set("empty.test", body=b"")
        for st, _, _ in table:
            self.origin.set("s%d.test" % st, status=st, body=RULES)
        c = self.start()
        for st, allowed, reason in table:
            with self.subTest(status=st):
                a = c.check("http://s%d.test/private/x" % st)
                want = dict(ok=True, allowed=allowed, reason=reason,
                            source="fetched", http_status=st,
                            origin="http://s%d.test" % st)
                if st != 200:
                    want.update(rule=None, crawl_delay=None)
                self.assertAnswer(a, **want)
        self.assertAnswer(c.check("http://empty.test/x"), ok=True,
                          allowed=True, reason="no_rule", http_status=200)
        s = self.stats()
        self.assertEqual(s["fetch_errors"], 4, json.dumps(s))
        hit = self.origin.hits("s200.test")[0]
        self.assertEqual(hit.headers.get("user-agent"), "robotsd/0.1.0")
        self.assertEqual(hit.path, "/robots.txt")

    def test_network_error_is_unreachable_with_null_status(self):
        c = self.start("--connect-to", "::127.0.0.1:%d" % closed_port(),
                       connect_to=False)
        a = c.check("http://dead.test/x")
        self.assertAnswer(a, ok=True, allowed=False, reason="unreachable",
                          http_status=None, source="fetched", rule=None,
                          origin="http://dead.test")
        self.assertEqual(self.stats()["fetch_errors"], 1)
        i = self.inspect("http://dead.test")
        self.assertAnswer(i, ok=True, state="disallow_all", http_status=None)
        self.assertIsInstance(i["retry"]["last_error"], str)

    def test_dns_failure_is_unreachable_with_null_status(self):
        c = self.start("--fetch-timeout", "3", connect_to=False)
        self.assertAnswer(c.check("http://no-such-host.invalid/x"), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None,
                          origin="http://no-such-host.invalid")
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_robots_txt_url_is_allowed_without_fetch(self):
        self.origin.set("a.test", status=500)
        c = self.start()
        a = c.check("http://a.test/robots.txt")
        self.assertAnswer(a, ok=True, allowed=True, reason="robots_txt",
                          http_status=None, rule=None,
                          origin="http://a.test")
        self.assertEqual(self.origin.hits("a.test"), [])
        self.assertEqual(self.stats()["fetches"], 0)
        self.assertIsNone(a["expires_in"])

    def test_redirects_five_followed_six_and_loop_allow_all(self):
        final5 = self.origin.redirect_chain("r5.test", 5, RULES)
        self.origin.redirect_chain("r6.test", 6, RULES)
        self.origin.set("loop.test", "/robots.txt", status=302,
                        headers={"Location": "/a"})
        self.origin.set("loop.test", "/a", status=302,
                        headers={"Location": "/robots.txt"})
        self.origin.set("x.test", status=301,
                        headers={"Location": "http://y.test/robots.txt"})
        self.origin.robots("y.test", "User-agent: *\nDisallow: /fromy\n")
        c = self.start()
        self.assertAnswer(c.check("http://r5.test/private/1"), ok=True,
                          allowed=False, reason="rule", http_status=200)
        self.assertAnswer(self.inspect("http://r5.test"), state="rules",
                          final_url="http://r5.test" + final5)
        self.assertEqual(len(self.origin.hits("r5.test")), 6)
        self.assertAnswer(c.check("http://r6.test/private/1"), ok=True,
                          allowed=True, reason="unavailable", rule=None,
                          http_status=301)
        self.assertNotIn("/hop6", [h.path for h in self.origin.hits(
            "r6.test")], "followed a 6th redirect")
        self.assertAnswer(c.check("http://loop.test/x"), ok=True,
                          allowed=True, reason="unavailable")
        self.assertAnswer(c.check("http://x.test/fromy"), ok=True,
                          allowed=False, reason="rule", origin="http://x.test",
                          rule={"directive": "disallow", "pattern": "/fromy",
                                "line": 2})
        self.assertAnswer(self.inspect("http://x.test"),
                          final_url="http://y.test/robots.txt")
        self.assertEqual(len(self.origin.hits("y.test")), 1)

    def test_body_capped_at_500_kib(self):
        head = "User-agent: *\nDisallow: /early\n"
        filler = "# filler line to push the next rule past the cap\n"
        body = head + filler * ((CAP + 8000) // len(filler))
        self.assertGreater(len(body), CAP)
        body += "Disallow: /late\n" + filler * 1500  # about 600 KB in all
        self.assertGreater(len(body), 590000)
        self.origin.robots("big.test", body)
        exact = head + "#" * (CAP - len(head) - 1) + "\n"
        self.assertEqual(len(exact), CAP)
        self.origin.robots("exact.test", exact)
        c = self.start()
        self.assertAnswer(c.check("http://big.test/early"), allowed=False)
        self.assertAnswer(c.check("http://big.test/late"), allowed=True,
                          reason="no_rule")
        self.assertAnswer(self.inspect("http://big.test"), ok=True,
                          truncated=True, body_bytes=CAP)
        self.assertAnswer(c.check("http://exact.test/early"), allowed=False)
        self.assertAnswer(self.inspect("http://exact.test"), ok=True,
                          truncated=False, body_bytes=CAP)

    def test_gzip_and_deflate_bodies_decoded(self):
        self.origin.robots("gz.test", RULES, encoding="gzip")
        self.origin.robots("df.test", RULES, encoding="deflate")
        c = self.start()
        for h in ("gz.test", "df.test"):
            with self.subTest(host=h):
                self.assertAnswer(c.check("http://%s/private/a" % h),
                                  allowed=False, reason="rule",
                                  rule={"directive": "disallow",
                                        "pattern": "/private/", "line": 2})
                self.assertAnswer(self.inspect("http://" + h),
                                  body_bytes=len(RULES), truncated=False)
                ae = self.origin.hits(h)[0].headers.get("accept-encoding", "")
                toks = {t.strip().lower() for t in ae.split(",")}
                self.assertTrue({"gzip", "deflate"} <= toks,
                                "Accept-Encoding: %r" % ae)

    def test_gzip_bomb_capped_and_daemon_alive(self):
        self.origin.set("bomb.test", encoding="bomb")
        c = self.start()
        self.assertAnswer(c.check("http://bomb.test/bomb"), ok=True,
                          allowed=False, reason="rule", http_status=200)
        self.assertAnswer(self.inspect("http://bomb.test"), truncated=True,
                          body_bytes=CAP)
        self.assertAnswer(c.call({"op": "ping"}), ok=True)

    def test_user_agent_option_sent(self):
        self.origin.robots("a.test", RULES)
        ua = "ExampleFetcher/9.9 (+http://fetcher.example/bot)"
        c = self.start("--user-agent", ua)
        c.check("http://a.test/")
        self.assertEqual(self.origin.hits("a.test")[0].headers.get(
            "user-agent"), ua)

    def test_connect_to_maps_host_and_port(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p8080\n")
        c = self.start("--connect-to", "a.test:8080:127.0.0.1:%d"
                       % origin().port,
                       "--connect-to", "::127.0.0.1:%d" % closed_port(),
                       connect_to=False)
        self.assertAnswer(c.check("http://a.test:8080/p8080"), ok=True,
                          allowed=False, reason="rule",
                          origin="http://a.test:8080")
        self.assertEqual(self.origin.hits("a.test")[0].host, "a.test:8080")
        self.assertAnswer(c.check("http://a.test/p8080"), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None, origin="http://a.test")
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_fetch_timeout_is_unreachable_with_null_status(self):
        self.origin.robots("hang.test", RULES, hold=True)
        self.origin.robots("drip.test", RULES, endless=True)
        c = self.start("--fetch-timeout", "1")
        for h in ("hang.test", "drip.test"):
            with self.subTest(host=h):
                self.assertAnswer(c.check("http://%s/" % h), ok=True,
                                  allowed=False, reason="unreachable",
                                  http_status=None, source="fetched")
        self.assertEqual(self.stats()["fetch_errors"], 2)

    def test_fetch_timeout_bounds_a_whole_redirect_chain(self):
        # contract: --fetch-timeout is a whole-fetch timeout. Two seconds
        # to the redirect, then a host that never answers: the fetch must
        # end at 4 s, not 2 + 4 s (curl's own timeout restarts per hop).
        # Every margin is a second or more (the redirect is followed with
        # 2 s to spare; the bound sits 1 s from each outcome), so a loaded
        # machine cannot blur the two.
        self.origin.set("slow1.test", status=302, delay=2.0,
                        headers={"Location": "http://slow2.test/robots.txt"})
        self.origin.robots("slow2.test", RULES, hold=True)
        c = self.start("--fetch-timeout", "4")
        t0 = time.monotonic()
        self.assertAnswer(c.check("http://slow1.test/"), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None, source="fetched")
        self.assertLess(time.monotonic() - t0, 5.0)
        self.assertEqual(len(self.origin.hits("slow2.test")), 1)

    def test_unfollowable_redirect_is_like_too_many_redirects(self):
        # A 3xx whose Location cannot be followed ends the chain as more
        # than 5 redirects do: allow all (unavailable), with its status.
        self.origin.set("badloc.test", status=302,
                        headers={"Location": "http://bad host/robots.txt"})
        c = self.start()
        self.assertAnswer(c.check("http://badloc.test/x"), ok=True,
                          allowed=True, reason="unavailable",
                          http_status=302)

    def test_redirect_to_an_idn_host_is_followed(self):
        # Location with a UTF-8 host, raw and percent-encoded: followed to
        # the punycode host (contract: IDN hosts in punycode). Header
        # values go out as latin-1, so the raw one is spelled as the
        # latin-1 characters of its UTF-8 bytes.
        self.origin.robots("xn--mnchen-3ya.test", "User-agent: *\n"
                           "Disallow: /idn\n")
        self.origin.set("idn1.test", status=301, headers={
            "Location": "http://m\u00c3\u00bcnchen.test/robots.txt"})
        self.origin.set("idn2.test", status=301, headers={
            "Location": "http://m%C3%BCnchen.test/robots.txt"})
        c = self.start()
        for host in ("idn1.test", "idn2.test"):
            with self.subTest(host=host):
                self.assertAnswer(c.check("http://%s/idn/x" % host),
                                  ok=True, allowed=False, reason="rule")
        self.assertEqual(len(self.origin.hits("xn--mnchen-3ya.test")), 2)

    def test_max_fetches_1_queues_the_others(self):
        hosts = ["q1.test", "q2.test", "q3.test"]
        for i, h in enumerate(hosts):
            self.origin.robots(h, "User-agent: *\nDisallow: /q%d\n" % i,
                               hold=True)
        c = self.start("--max-fetches", "1")
        for i, h in enumerate(hosts):
            c.send({"op": "check", "url": "http://%s/q%d" % (h, i),
                    "agent": "A", "id": i})
        first = poll(lambda: [h for h in hosts if self.origin.hits(h)])
        self.assertEqual(len(first), 1, "more than one fetch at once")
        for _ in range(len(hosts)):
            running = poll(lambda: [h for h in hosts if self.origin.hits(h)
                                    and not self._released(h)])
            self.assertEqual(len(running), 1, "fetches in flight: %r"
                             % running)
            self._release(running[0])
        for i in range(len(hosts)):
            self.assertAnswer(c.wait_id(i), ok=True, allowed=False,
                              reason="rule", source="fetched")
        for h in hosts:
            self.assertEqual(len(self.origin.hits(h)), 1)

    def _released(self, host):
        return host in getattr(self, "_rel", set())

    def _release(self, host):
        self._rel = getattr(self, "_rel", set()) | {host}
        self.origin.release(host)

    def test_waiter_disconnect_does_not_stop_fetch(self):
        self.origin.robots("a.test", RULES, hold=True)
        c = self.start()
        w = self.d.client()
        w.send({"op": "check", "url": "http://a.test/private/", "agent": "A"})
        self.origin.wait_hits("a.test", 1)
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 1))
        self.assertAnswer(self.inspect("http://a.test"), ok=True,
                          state="pending", fetching=True, expires_in=None)
        w.close()
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        self.origin.release("a.test")
        i = self.wait_fetched("http://a.test")
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 0))
        self.assertAnswer(i, ok=True, state="rules", http_status=200)
        self.assertAnswer(c.check("http://a.test/private/"), allowed=False,
                          source="cache")
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_origin_normalized_idn_port_case_userinfo(self):
        c = self.start()
        cases = [
            ("http://M\u00fcnchen.test/x", "http://xn--mnchen-3ya.test"),
            ("http://a.test:80/x", "http://a.test"),
            ("HTTP://User:pw@A.Test./x?q#f", "http://a.test"),
            ("http://a.test:8080/x", "http://a.test:8080"),
        ]
        for url, want in cases:
            with self.subTest(url=url):
                self.assertAnswer(c.check(url), ok=True, origin=want)
        hosts = {h.host for h in self.origin.hits("xn--mnchen-3ya.test")}
        self.assertEqual(hosts, {"xn--mnchen-3ya.test"})
        self.assertEqual(len(self.origin.hits("a.test")), 2,
                         "a.test and a.test:8080 are two origins")


class Answers(DaemonTest):

    def test_check_answer_has_exactly_the_contract_fields(self):
        body = ("User-agent: FooBot\n"
                "Crawl-delay: 5\nDisallow: /a/\n\n"
                "User-agent: *\nDisallow: /\n")
        self.origin.robots("example.test", body)
        c = self.start()
        a = c.call({"op": "check", "url": "http://Example.TEST:80/a/b?q=1#f",
                    "agent": "FooBot/2.1 (+https://foo.example)", "id": 7})
        self.assertEqual(sorted(a), sorted(
            ["id", "ok", "allowed", "origin", "source", "reason",
             "http_status", "rule", "crawl_delay", "expires_in",
             "version"]),
            json.dumps(a))
        # The version: the first 16 hex digits of SHA-256 of the body.
        self.assertEqual(a["version"],
                         hashlib.sha256(body.encode()).hexdigest()[:16])
        self.assertAnswer(a, id=7, ok=True, allowed=False,
                          origin="http://example.test", source="fetched",
                          reason="rule", http_status=200,
                          rule={"directive": "disallow", "pattern": "/a/",
                                "line": 3}, crawl_delay=5)
        self.assertBetween(a["expires_in"], 86400 - 2, 86400, "expires_in")
        b = c.check("http://example.test/a", agent="OtherBot")
        self.assertAnswer(b, allowed=False, source="cache", crawl_delay=None,
                          rule={"directive": "disallow", "pattern": "/",
                                "line": 6})
        self.assertEqual(b["version"], a["version"])
        # A state without rules: SHA-256 of "status:NNN"; /robots.txt
        # itself is answered without a fetch, so without a version.
        d = c.check("http://missing.test/x")
        self.assertAnswer(d, http_status=404, reason="unavailable",
                          version=hashlib.sha256(b"status:404")
                          .hexdigest()[:16])
        r = c.check("http://example.test/robots.txt")
        self.assertAnswer(r, reason="robots_txt", version=None)

    def test_inspect_shows_groups_sitemaps_and_times(self):
        body = ("User-agent: a\nUser-agent: b\nDisallow: /x\nAllow: /y\n"
                "Crawl-delay: 1.5\n\nUser-agent: *\nDisallow: /z\n"
                "Sitemap: http://s.test/sitemap.xml\n")
        self.origin.robots("s.test", body)
        c = self.start()
        t0 = self.now()
        c.check("http://s.test/")
        i = self.inspect("HTTP://S.Test:80/some/path")  # normalized too
        self.assertAnswer(
            i, ok=True, origin="http://s.test", state="rules",
            http_status=200, body_bytes=len(body), truncated=False,
            final_url="http://s.test/robots.txt",
            groups=[{"agents": ["a", "b"], "rules": 2, "crawl_delay": 1.5},
                    {"agents": ["*"], "rules": 1, "crawl_delay": None}],
            sitemaps=["http://s.test/sitemap.xml"],
            retry={"fail_streak": 0, "failing_since": None,
                   "next_retry": None, "last_error": None,
                   "cause": None},
            fetching=False, stale=False)
        self.assertBetween(i["last_fetch_at"], t0 - 1, t0 + 10, "fetched_at")
        # One fetch: first fetched, last confirmed and last fetched agree.
        self.assertEqual(i["fetched_at"], i["last_fetch_at"])
        self.assertEqual(i["validated_at"], i["last_fetch_at"])
        self.assertEqual(i["version"],
                         hashlib.sha256(body.encode()).hexdigest()[:16])
        self.assertBetween(i["expires_at"] - i["last_fetch_at"], 86400 - 1,
                           86400 + 1, "lifetime")
        self.assertBetween(i["expires_in"], 86400 - 10, 86400, "expires_in")


class PrivateAddresses(DaemonTest):

    def test_private_addresses_refused_unless_through_connect_to(self):
        port = origin().port
        self.origin.set("pub.test", status=301, headers={
            "Location": "http://127.0.0.1:%d/robots.txt" % port})
        self.origin.robots("127.0.0.1", "User-agent: *\nDisallow: /\n")
        c = self.start("--connect-to", "pub.test::127.0.0.1:%d" % port,
                       connect_to=False)
        # Redirected to a loopback address that no --connect-to maps.
        self.assertAnswer(c.check("http://pub.test/x"), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None)
        self.assertAnswer(c.check("http://127.0.0.1:%d/x" % port), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None, origin="http://127.0.0.1:%d"
                          % port)
        self.assertEqual(self.origin.hits("127.0.0.1"), [],
                         "fetched from a refused address")
        self.assertEqual(len(self.origin.hits("pub.test")), 1)

    def test_deny_private_addresses_no_allows_loopback(self):
        port = origin().port
        self.origin.robots("127.0.0.1", "User-agent: *\nDisallow: /\n")
        c = self.start("--deny-private-addresses", "no", connect_to=False)
        self.assertAnswer(c.check("http://127.0.0.1:%d/x" % port), ok=True,
                          allowed=False, reason="rule", http_status=200)
        self.assertEqual(len(self.origin.hits("127.0.0.1")), 1)


class Eviction(DaemonTest):

    def test_least_recently_used_evicted_under_cache_max_bytes(self):
        hosts = ["e%d.test" % i for i in range(6)]
        for h in hosts:
            self.origin.robots(h, RULES)
        c = self.start()
        c.check("http://e0.test/")
        one = self.stats()["cache_bytes"]  # what one such entry holds
        self.d.stop()
        self.d.proc = None
        cap = one * 3 + one // 2
        c = self.start("--cache-max-bytes", str(cap))
        for h in hosts[:3]:
            c.check("http://%s/" % h)
        self.assertEqual(self.stats()["evictions"], 0)
        c.check("http://e0.test/x")  # e0 is now the most recently used
        c.check("http://e3.test/")   # over the cap: e1 goes first
        s = self.stats()
        self.assertLessEqual(s["cache_bytes"], cap, json.dumps(s))
        self.assertEqual((s["evictions"], s["cache_entries"]), (1, 3),
                         json.dumps(s))
        self.assertError(self.inspect("http://e1.test"), "not_cached")
        for h in ("e0.test", "e2.test", "e3.test"):
            self.assertAnswer(self.inspect("http://" + h), ok=True)
        self.assertAnswer(c.check("http://e1.test/"), source="fetched")
        self.assertError(self.inspect("http://e2.test"), "not_cached")


    def test_cache_bytes_never_above_the_cap_whatever_the_sizes(self):
        # Files from 40 bytes to 6 KB, each asked once: after every
        # check, what the cache counts stays within --cache-max-bytes.
        cap = 16384
        c = self.start("--cache-max-bytes", str(cap))
        for i in range(40):
            h = "s%d.test" % i
            self.origin.robots(h, "User-agent: *\n" + "".join(
                "Disallow: /%s-%d/\n" % (h, j) for j in range(i * i % 240)))
            self.assertAnswer(c.check("http://%s/" % h), ok=True)
            s = self.stats()
            self.assertLessEqual(s["cache_bytes"], cap, json.dumps(s))
        self.assertGreater(self.stats()["evictions"], 0)


class Normalization(DaemonTest):

    def test_ipv6_https_ftp_origins_normalized(self):
        c = self.start("--fetch-timeout", "1")
        cases = [
            ("http://[0:0::1]:8080/x", "http://[::1]:8080"),
            ("http://[::1]:80/x", "http://[::1]"),
            ("HTTPS://B.Test:443/x", "https://b.test"),
            ("https://b.test:8443/x", "https://b.test:8443"),
            ("ftp://C.test:21/pub/x", "ftp://c.test"),
        ]
        for url, want in cases:
            with self.subTest(url=url):
                a = c.check(url, wait=False)
                self.assertAnswer(a, ok=True, pending=True, origin=want)

    def test_url_path_normalized_before_matching(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /private/\n"
                           "Disallow: /%7Ejoe/\nDisallow: /%C3%BC\n"
                           "Disallow: /*.pdf$\n")
        c = self.start()
        cases = [
            ("/public/../private/x", False), ("/./private/", False),
            ("/a/b/../../private/", False), ("/%70rivate/x", False),
            ("/~joe/x", False), ("/%7ejoe/x", False), ("/\u00fc", False),
            ("//private/", True), ("/PRIVATE/", True), ("/x.pdf", False),
            ("/x.pdf?y", True), ("/private#frag", True),
        ]
        a = c.call({"op": "check", "agent": "A",
                    "urls": ["http://a.test" + p for p, _ in cases]})
        for (p, allowed), r in zip(cases, a["results"]):
            with self.subTest(path=p):
                self.assertAnswer(r, ok=True, allowed=allowed)

    def test_purge_during_fetch_then_fetch_still_answers_waiters(self):
        self.origin.robots("a.test", RULES, hold=True)
        self.origin.robots("b.test", RULES, hold=True)
        c = self.start()
        c.send({"op": "check", "url": "http://a.test/private/", "agent": "A",
                "id": "a"})
        c.send({"op": "check", "url": "http://b.test/private/", "agent": "A",
                "id": "b"})
        self.origin.wait_hits("a.test", 1)
        self.origin.wait_hits("b.test", 1)
        self.assertAnswer(c.call({"op": "purge", "origin": "http://a.test"}),
                          ok=True, purged=1)
        self.assertAnswer(c.call({"op": "purge", "all": True}), ok=True)
        self.origin.release("a.test")
        self.origin.release("b.test")
        for rid in ("a", "b"):
            self.assertAnswer(c.wait_id(rid), ok=True, allowed=False,
                              source="fetched", reason="rule")
        self.assertEqual(self.stats()["waiting"], 0)
        self.assertAnswer(c.check("http://a.test/private/"), ok=True,
                          allowed=False)


class Https(DaemonTest):

    def setUp(self):
        super().setUp()
        if shutil.which("openssl") is None:
            self.skipTest("no openssl command to make a test certificate")
        self.dir = tempfile.mkdtemp(prefix="robotsd-tls-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.cert, key = self.make_cert("cert")
        self.tls_port = origin().start_tls(self.cert, key)

    def make_cert(self, name):
        """A self-signed certificate for tls.test: (cert path, key path)."""
        cert = os.path.join(self.dir, name + ".pem")
        key = os.path.join(self.dir, name + ".key")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=tls.test", "-addext",
             "subjectAltName=DNS:tls.test", "-keyout", key, "-out",
             cert], check=True, capture_output=True, timeout=30)
        return cert, key

    def test_https_fetch_verified_with_ca_file(self):
        self.origin.robots("tls.test", RULES)
        c = self.start("--connect-to", "tls.test:443:127.0.0.1:%d"
                       % self.tls_port, "--ca-file", self.cert,
                       "--connect-to", "::127.0.0.1:%d" % origin().port,
                       connect_to=False)
        self.assertAnswer(c.check("https://tls.test/private/x"), ok=True,
                          allowed=False, reason="rule", http_status=200,
                          origin="https://tls.test", source="fetched")
        self.assertEqual(self.origin.hits("tls.test")[0].host, "tls.test")

    def start_with_other_ca(self):
        """A daemon whose --ca-file holds a certificate not the origin's:
        (that file, a client)."""
        self.origin.robots("tls.test", RULES)
        ca, _ = self.make_cert("other")
        c = self.start("--connect-to", "tls.test:443:127.0.0.1:%d"
                       % self.tls_port, "--ca-file", ca,
                       "--connect-to", "::127.0.0.1:%d" % origin().port,
                       connect_to=False)
        return ca, c

    def check_again(self, c):
        """Purge https://tls.test and check it: fetched anew."""
        self.assertAnswer(c.call({"op": "purge",
                                  "origin": "https://tls.test"}), ok=True)
        return c.check("https://tls.test/private/x", "TestBot")

    def test_ca_file_is_read_at_start_and_at_reload(self):
        """robotsd gathers its CA certificates into one bundle when it
        starts and when it reloads (so that libcurl parses them once, not
        per connection): a --ca-file rewritten to hold the origin's
        certificate is trusted after SIGHUP, not before."""
        ca, c = self.start_with_other_ca()
        url = "https://tls.test/private/x"
        self.assertAnswer(c.check(url, "TestBot"), reason="unreachable")
        shutil.copyfile(self.cert, ca)
        self.assertAnswer(self.check_again(c), reason="unreachable")
        self.d.proc.send_signal(signal.SIGHUP)
        a = poll(lambda: (lambda a: a if a.get("reason") == "rule"
                          else None)(self.check_again(c)), interval=0.05)
        self.assertTrue(a, "SIGHUP did not read the new --ca-file")
        self.assertAnswer(a, allowed=False, reason="rule", http_status=200,
                          source="fetched")

    def test_ca_rotation_outlasts_more_reloads_than_descriptors(self):
        """Each reload gathers the CA bundle anew; under a descriptor limit
        of 40 more than it, 200 reloads leave as many descriptors open,
        none numbered higher than before, and a rewritten --ca-file is
        still trusted after the next one."""
        ca, c = self.start_with_other_ca()
        url = "https://tls.test/private/x"
        pid = self.d.proc.pid
        self.assertAnswer(c.check(url, "TestBot"), reason="unreachable")

        def fds():
            return sorted(int(n) for n in os.listdir("/proc/%d/fd" % pid))
        before = fds()
        subprocess.run(["prlimit", "--pid", str(pid),
                        "--nofile=%d:" % (before[-1] + 40)], check=True)

        def reloads():
            return self.d.log(100000).count("event=reload outcome=ok")
        for i in range(200):
            self.d.proc.send_signal(signal.SIGHUP)
            self.assertTrue(poll(lambda: reloads() == i + 1),
                            "reload %d not logged" % (i + 1))
        # the fetch thread closes an unchanged copy at its next turn
        self.assertTrue(poll(lambda: fds() == before),
                        "descriptors %s, before the reloads %s"
                        % (fds(), before))
        self.assertEqual(self.d.log(100000).count("ca_bundle_failed"), 0,
                         "a reload could not gather the CA bundle")
        shutil.copyfile(self.cert, ca)
        self.d.proc.send_signal(signal.SIGHUP)
        self.assertTrue(poll(lambda: reloads() == 201))
        a = poll(lambda: (lambda a: a if a.get("reason") == "rule"
                          else None)(self.check_again(c)), interval=0.05)
        self.assertTrue(a, "the reload after 200 did not read --ca-file")

    def test_https_untrusted_certificate_is_unreachable(self):
        self.origin.robots("tls.test", RULES)
        c = self.start("--connect-to", "tls.test:443:127.0.0.1:%d"
                       % self.tls_port,
                       "--connect-to", "::127.0.0.1:%d" % origin().port,
                       connect_to=False)
        self.assertAnswer(c.check("https://tls.test/private/x"), ok=True,
                          allowed=False, reason="unreachable",
                          http_status=None)
        self.assertEqual(self.origin.hits("tls.test"), [])
