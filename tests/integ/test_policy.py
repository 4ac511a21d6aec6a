"""Policy (issue 5): cache lifetimes, refresh after expiry, stale copies
through failures, the retry schedules, Retry-After, the 30-day rule,
--max-waiting, warming with wait:false. Time moves with the test clock."""
import email.utils
import json
import math
import time

from harness import DaemonTest, poll

OLD = "User-agent: *\nDisallow: /old\n"
NEW = "User-agent: *\nDisallow: /new\n"
SLACK = 2.0  # seconds: real time passing, integer rounding


def http_date(delta):
    return email.utils.formatdate(time.time() + delta, usegmt=True)


class Lifetimes(DaemonTest):

    def assertExpiresIn(self, url, want):
        a = self.check(url)
        self.assertIs(a.get("ok"), True, json.dumps(a))
        self.assertBetween(a.get("expires_in"), want - SLACK, want,
                           "expires_in of %s" % url)

    def test_ttl_from_headers_with_default_clamps(self):
        cases = {  # host: (headers, expected lifetime)
            "plain.test": ({}, 86400),
            "maxage.test": ({"Cache-Control": "public, max-age=3600"}, 3600),
            "smax.test": ({"Cache-Control": "max-age=3600, s-maxage=7200"},
                          7200),
            "short.test": ({"Cache-Control": "max-age=10"}, 60),
            "long.test": ({"Cache-Control": "max-age=99999999"}, 2592000),
            "nostore.test": ({"Cache-Control": "no-store"}, 60),
            "expires.test": ({"Expires": http_date(1800)}, 1800),
            "age.test": ({"Cache-Control": "max-age=3600", "Age": "600"},
                         3000),
        }
        for h, (hdrs, _) in cases.items():
            self.origin.robots(h, OLD, headers=hdrs)
        self.origin.set("gone.test", status=404,
                        headers={"Cache-Control": "max-age=3600"})
        self.start()
        for h, (_, want) in cases.items():
            with self.subTest(host=h):
                self.assertExpiresIn("http://%s/" % h, want)
        with self.subTest(host="gone.test"):
            self.assertExpiresIn("http://gone.test/", 3600)
        i = self.inspect("http://maxage.test")
        self.assertAnswer(i, ok=True, state="rules", http_status=200,
                          fetching=False, stale=False)
        self.assertBetween(i["expires_at"] - i["last_fetch_at"], 3600 - 1,
                           3600 + 1, "expires_at - fetched_at")

    def test_ttl_clamped_to_min_and_max_ttl_options(self):
        cases = {"low.test": ({"Cache-Control": "max-age=50"}, 100),
                 "high.test": ({"Cache-Control": "max-age=9000"}, 5000),
                 "none.test": ({}, 4000),
                 "nostore.test": ({"Cache-Control": "no-store"}, 100)}
        for h, (hdrs, _) in cases.items():
            self.origin.robots(h, OLD, headers=hdrs)
        self.start("--min-ttl", "100", "--max-ttl", "5000",
                   "--default-ttl", "4000")
        for h, (_, want) in cases.items():
            with self.subTest(host=h):
                self.assertExpiresIn("http://%s/" % h, want)


class Refresh(DaemonTest):

    def test_expired_entry_served_stale_while_one_refresh_runs(self):
        self.origin.robots("a.test", OLD,
                           headers={"Cache-Control": "max-age=100"})
        c = self.start()
        self.assertAnswer(c.check("http://a.test/old"), allowed=False,
                          source="fetched")
        self.origin.robots("a.test", NEW, hold=True,
                           headers={"Cache-Control": "max-age=100"})
        self.advance(101)
        # Answered at once from the old copy while the refresh is held.
        self.assertAnswer(c.check("http://a.test/old"), ok=True,
                          allowed=False, source="stale", reason="rule")
        self.origin.wait_hits("a.test", 2)
        self.assertAnswer(self.inspect("http://a.test"), fetching=True)
        self.assertAnswer(c.check("http://a.test/new"), ok=True,
                          allowed=True, source="stale")
        self.assertEqual(self.stats()["fetches"], 2, "a second refresh")
        self.origin.release("a.test")
        self.wait_fetched("http://a.test")
        self.assertAnswer(c.check("http://a.test/new"), allowed=False,
                          source="cache", reason="rule")
        self.assertAnswer(c.check("http://a.test/old"), allowed=True,
                          source="cache", reason="no_rule")
        self.assertEqual(len(self.origin.hits("a.test")), 2)
        s = self.stats()
        self.assertEqual((s["fetches"], s["stale"]), (2, 2), json.dumps(s))

    def test_purge_during_refresh_makes_checks_wait_for_it(self):
        self.origin.robots("a.test", OLD,
                           headers={"Cache-Control": "max-age=100"})
        c = self.start()
        self.assertAnswer(c.check("http://a.test/old"), allowed=False)
        self.origin.robots("a.test", NEW, hold=True)
        self.advance(101)
        self.assertAnswer(c.check("http://a.test/old"), source="stale")
        self.origin.wait_hits("a.test", 2)
        self.assertAnswer(c.call({"op": "purge", "origin": "http://a.test"}),
                          ok=True, purged=1)
        # The old copy is gone: the next check waits for the fetch.
        c.send({"op": "check", "url": "http://a.test/new", "agent": "A",
                "id": "after"})
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        self.assertEqual(c.pending, [], "answered from the purged copy")
        self.origin.release("a.test")
        self.assertAnswer(c.wait_id("after"), ok=True, allowed=False,
                          source="fetched", reason="rule")
        self.assertEqual(len(self.origin.hits("a.test")), 2)

    def test_good_copy_kept_through_5xx(self):
        self.origin.robots("a.test", OLD,
                           headers={"Cache-Control": "max-age=100"})
        c = self.start()
        self.assertAnswer(c.check("http://a.test/old"), allowed=False)
        self.origin.set("a.test", status=500)
        self.advance(101)
        self.assertAnswer(c.check("http://a.test/old"), allowed=False,
                          source="stale")
        i = self.wait_fetched("http://a.test")
        self.assertAnswer(i, state="rules", stale=True, http_status=500)
        self.assertEqual(i["retry"]["fail_streak"], 1)
        a = c.check("http://a.test/old")
        self.assertAnswer(a, ok=True, allowed=False, source="stale",
                          reason="rule", http_status=500,
                          rule={"directive": "disallow", "pattern": "/old",
                                "line": 2})
        self.assertBetween(a["expires_in"], 60 - SLACK, 66,
                           "expires_in = time to the first retry (60 s +10%)")
        self.assertAnswer(c.check("http://a.test/other"), allowed=True,
                          source="stale", reason="no_rule")


class Backoff(DaemonTest):

    def step_to_retry(self, url, orig, streak):
        """Before next_retry a check fetches nothing; at it, exactly one."""
        i = self.inspect(orig)
        nr = i["retry"]["next_retry"]
        f = self.stats()["fetches"]
        self.advance(int(nr - self.now()) - 2)
        a = self.check(url)
        self.assertAnswer(a, ok=True, allowed=False, reason="unreachable")
        host = orig.split("//")[1]
        self.assertEqual(self.stats()["fetches"], f,
                         "fetched before next_retry (streak %d)" % streak)
        self.assertEqual(len(self.origin.hits(host)), streak)
        self.advance(3)
        self.assertAnswer(self.check(url), ok=True, allowed=False)
        self.assertAnswer(self.check(url), ok=True, allowed=False)
        self.assertEqual(self.stats()["fetches"], f + 1,
                         "want one retry at next_retry (streak %d)" % streak)
        self.assertEqual(len(self.origin.wait_hits(host, streak + 1)),
                         streak + 1)
        return self.wait_fetched(orig)

    def assertDelay(self, i, lo, hi, what):
        r = i["retry"]
        self.assertBetween(r["next_retry"] - i["last_fetch_at"], lo - 1, hi + 1,
                           "%s: next_retry - fetched_at (%s)"
                           % (what, json.dumps(i)))

    def test_backoff_doubles_with_jitter_up_to_retry_max(self):
        self.origin.set("down.test", status=500)
        c = self.start("--retry-min", "100", "--retry-max", "1000")
        url, orig = "http://down.test/x", "http://down.test"
        a = c.check(url)
        self.assertAnswer(a, allowed=False, reason="unreachable",
                          http_status=500, source="fetched")
        self.assertBetween(a["expires_in"], 100 - SLACK, 110, "expires_in")
        i = self.wait_fetched(orig)
        first = i["last_fetch_at"]
        for streak, lo in [(1, 100), (2, 200), (3, 400), (4, 800),
                           (5, 1000), (6, 1000)]:
            with self.subTest(streak=streak):
                r = i["retry"]
                self.assertAnswer(i, state="disallow_all", http_status=500,
                                  stale=False)
                self.assertEqual(r["fail_streak"], streak, json.dumps(i))
                self.assertBetween(r["failing_since"], first - 1, first + 1,
                                   "failing_since")
                self.assertIsInstance(r["last_error"], str)
                self.assertDelay(i, lo, min(lo * 1.1, 1000), "delay")
            if streak < 6:
                i = self.step_to_retry(url, orig, streak)
        self.assertEqual(self.stats()["fetch_errors"], 6)

    def test_jitter_spreads_retries_of_many_origins(self):
        hosts = ["j%d.test" % k for k in range(20)]
        for h in hosts:
            self.origin.set(h, status=500)
        c = self.start("--retry-min", "1000", "--retry-max", "100000")
        a = c.call({"op": "check", "agent": "A",
                    "urls": ["http://%s/" % h for h in hosts]})
        delays = []
        for h, r in zip(hosts, a["results"]):
            self.assertAnswer(r, ok=True, allowed=False, reason="unreachable")
            i = self.inspect("http://" + h)
            d = i["retry"]["next_retry"] - i["last_fetch_at"]
            self.assertBetween(d, 1000 - 0.01, 1100, h)
            delays.append(round(d, 1))
        self.assertGreater(len(set(delays)), 1,
                           "no jitter: every origin retries after %s s"
                           % delays[0])

    def test_503_and_429_use_the_shorter_schedule(self):
        self.origin.set("s503.test", status=503)
        self.origin.set("s429.test", status=429)
        c = self.start("--retry-min", "1000", "--retry-503-min", "30",
                       "--retry-503-max", "300")
        for h in ("s503.test", "s429.test"):
            with self.subTest(host=h):
                orig = "http://" + h
                a = c.check(orig + "/")
                self.assertAnswer(a, allowed=False, reason="unreachable")
                self.assertBetween(a["expires_in"], 30 - SLACK, 33, h)
                i = self.wait_fetched(orig)
                self.assertDelay(i, 30, 33, h)
        i = self.step_to_retry("http://s503.test/", "http://s503.test", 1)
        self.assertEqual(i["retry"]["fail_streak"], 2)
        self.assertDelay(i, 60, 66, "503 second delay")

    def test_retry_after_seconds_and_date_clamped(self):
        cases = {  # host: (status, Retry-After, expected delay)
            "ra120.test": (503, "120", 120),
            "ralow.test": (503, "5", 30),
            "rahigh.test": (503, "99999", 300),
            "radate.test": (503, http_date(200), 200),
            "ra429.test": (429, "45", 45),
            "ra500.test": (500, "45", 1000),  # only 503/429 honor it
        }
        for h, (st, ra, _) in cases.items():
            self.origin.set(h, status=st, headers={"Retry-After": ra})
        c = self.start("--retry-min", "1000", "--retry-max", "5000",
                       "--retry-503-min", "30", "--retry-503-max", "300")
        for h, (_, _, want) in cases.items():
            with self.subTest(host=h):
                c.check("http://%s/" % h)
                i = self.wait_fetched("http://" + h)
                hi = want * 1.1 if h == "ra500.test" else want
                self.assertDelay(i, want - (2 if h == "radate.test" else 0),
                                 hi, h)


class Unreachable(DaemonTest):

    def retry_until(self, url, orig, pred, limit=12):
        """Advance to each next retry and let it fail, until pred(inspect)
        holds; returns the inspect answers seen (before each step)."""
        seen = []
        for _ in range(limit):
            i = self.wait_fetched(orig)
            seen.append(i)
            if pred(i):
                return seen
            self.advance(math.ceil(i["retry"]["next_retry"] - self.now()) + 1)
            self.check(url)
            self.assertTrue(poll(lambda: self.inspect(orig)["fetching"] is
                                 False and self.inspect(orig)["retry"]
                                 ["fail_streak"] > i["retry"]["fail_streak"]),
                            "retry did not run")
        self.fail("pred never held: %s" % json.dumps(seen[-1]))

    def test_long_failure_allows_all_without_good_copy(self):
        self.origin.set("dead.test", status=500)
        c = self.start("--retry-min", "100", "--retry-max", "400",
                       "--unreachable-allow-after", "1000")
        url, orig = "http://dead.test/x", "http://dead.test"
        self.assertAnswer(c.check(url), allowed=False, reason="unreachable")
        seen = self.retry_until(url, orig,
                                lambda i: i["state"] != "disallow_all")
        last = seen[-1]
        self.assertEqual(last["state"], "allow_all", json.dumps(last))
        r = last["retry"]
        self.assertGreaterEqual(last["last_fetch_at"] - r["failing_since"], 1000)
        for i in seen[:-1]:
            self.assertLess(i["last_fetch_at"] - i["retry"]["failing_since"],
                            1000, "allowed all too early: %s" % json.dumps(i))
        self.assertAnswer(c.check(url), ok=True, allowed=True, http_status=500)

    def test_long_failure_keeps_last_good_copy(self):
        self.origin.robots("was.test", OLD,
                           headers={"Cache-Control": "max-age=100"})
        c = self.start("--retry-min", "100", "--retry-max", "400",
                       "--unreachable-allow-after", "1000")
        url, orig = "http://was.test/old", "http://was.test"
        self.assertAnswer(c.check(url), allowed=False, source="fetched")
        self.origin.set("was.test", status=500)
        self.advance(101)
        self.assertAnswer(c.check(url), allowed=False, source="stale")
        self.retry_until(
            url, orig, lambda i: i["last_fetch_at"] - i["retry"]["failing_since"]
            >= 1000)
        self.assertAnswer(c.check(url), ok=True, allowed=False,
                          source="stale", reason="rule")
        self.assertAnswer(c.check("http://was.test/fine"), ok=True,
                          allowed=True, reason="no_rule")
        self.assertAnswer(self.inspect(orig), state="rules", stale=True)


class Load(DaemonTest):

    def test_max_waiting_overload_while_cached_answers_flow(self):
        self.origin.robots("cached.test", OLD)
        for h in ("h1.test", "h2.test", "h3.test"):
            self.origin.robots(h, OLD, hold=True)
        c = self.start("--max-waiting", "2")
        self.assertAnswer(c.check("http://cached.test/old"), allowed=False)
        c.send({"op": "check", "url": "http://h1.test/old", "agent": "A",
                "id": "w1"})
        c.send({"op": "check", "url": "http://h2.test/old", "agent": "A",
                "id": "w2"})
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 2))
        self.assertError(c.check("http://h3.test/old"), "overloaded")
        self.assertError(c.check("http://h1.test/x"), "overloaded")
        self.assertAnswer(c.check("http://cached.test/old"), ok=True,
                          allowed=False, source="cache")
        self.assertAnswer(c.check("http://h3.test/old", wait=False),
                          ok=True, pending=True)
        b = c.call({"op": "check", "agent": "A", "urls": [
            "http://cached.test/old", "http://h2.test/x"]})
        self.assertAnswer(b["results"][0], ok=True, allowed=False,
                          source="cache")
        self.assertError(b["results"][1], "overloaded")
        for h in ("h1.test", "h2.test", "h3.test"):
            self.origin.release(h)
        self.assertAnswer(c.wait_id("w1"), ok=True, allowed=False,
                          source="fetched")
        self.assertAnswer(c.wait_id("w2"), ok=True, allowed=False,
                          source="fetched")
        self.assertEqual(self.stats()["waiting"], 0)

    def test_wait_false_batch_warms_200_origins(self):
        n = 200
        for k in range(n):
            self.origin.robots("w%d.test" % k,
                               "User-agent: *\nDisallow: /w%d/\n" % k)
        c = self.start()
        urls = ["http://w%d.test/w%d/x" % (k, k) for k in range(n)]
        a = c.call({"op": "check", "agent": "A", "urls": urls,
                    "wait": False})
        self.assertAnswer(a, ok=True)
        self.assertEqual(len(a["results"]), n)
        for r in a["results"]:
            self.assertAnswer(r, ok=True, pending=True)
        self.assertTrue(poll(lambda: self.stats()["cache_entries"] == n and
                             all(self.origin.hits("w%d.test" % k)
                                 for k in range(n))))

        def all_done():
            b = c.call({"op": "check", "agent": "A", "urls": urls,
                        "wait": False})
            return b if all("allowed" in r for r in b["results"]) else None
        b = poll(all_done, interval=0.1)
        self.assertTrue(b, "not every origin got cached")
        for k, r in enumerate(b["results"]):
            self.assertAnswer(r, ok=True, allowed=False, reason="rule",
                              origin="http://w%d.test" % k)
        s = self.stats()
        self.assertEqual((s["fetches"], s["cache_entries"]), (n, n))
        for k in range(n):
            self.assertEqual(len(self.origin.hits("w%d.test" % k)), 1)
