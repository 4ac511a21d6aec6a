"""Provenance: the version on answers, conditional revalidation (a real
origin that answers 304 to matching validators) and the history op, with
the real daemon and its test clock."""
import hashlib
import http.client
import json
import os
import shutil
import subprocess
import tempfile

from harness import ROBOTSCTL, DaemonTest, closed_port, poll
from test_metrics import sample
from redisfix import SharedTest
from test_shared import Redis, entry_key, tier_built


def version_of(data):
    """The contract's version: 16 hex digits of SHA-256 of the bytes."""
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()[:16]


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
BODY = "User-agent: *\nDisallow: /private\n"
ETAG = '"v1-abc"'
LAST_MODIFIED = "Tue, 24 Nov 2026 10:00:00 GMT"


class Revalidation(DaemonTest):
    def start_metrics(self):
        """Start a daemon serving /metrics on a port of its own."""
        self.port = closed_port()
        self.start("--metrics", "127.0.0.1:%d" % self.port)
        self.assertTrue(poll(self.scrape, timeout=5, interval=0.05))

    def scrape(self):
        """The /metrics text, or None while nothing answers."""
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                              timeout=5)
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
            conn.close()
            return text
        except OSError:
            return None

    def refresh(self, orig, url):
        """Move past the entry's lifetime, check once (answered from the
        old copy while the refresh runs) and wait for that refresh."""
        before = self.inspect(orig)
        self.advance(before["expires_in"] + 1)
        self.check(url)
        hits = self.origin.wait_hits(orig.split("//")[1],
                                     len(self.origin.hits(
                                         orig.split("//")[1])) + 1)
        self.assertTrue(hits)
        return self.wait_fetched(orig)

    def test_304_keeps_the_entry_and_takes_its_own_lifetime(self):
        sc = self.origin.robots(
            "rv.test", BODY, etag=ETAG, last_modified=LAST_MODIFIED,
            headers={"Cache-Control": "max-age=3600"},
            not_modified={"Cache-Control": "max-age=600"})
        self.start_metrics()
        a = self.check("http://rv.test/private/x")
        self.assertAnswer(a, allowed=False, http_status=200,
                          version=version_of(BODY))
        first = self.wait_fetched("http://rv.test")
        hits = self.origin.hits("rv.test")
        self.assertEqual(len(hits), 1)
        # The first fetch has nothing to send.
        self.assertNotIn("if-none-match", hits[0].headers)
        self.assertNotIn("if-modified-since", hits[0].headers)
        self.assertAlmostEqual(first["expires_at"] - first["validated_at"],
                               3600, delta=0.01)

        i = self.refresh("http://rv.test", "http://rv.test/private/y")
        hits = self.origin.hits("rv.test")
        self.assertEqual(len(hits), 2)
        self.assertEqual(hits[1].headers.get("if-none-match"), ETAG)
        self.assertEqual(hits[1].headers.get("if-modified-since"),
                         LAST_MODIFIED)
        self.assertEqual(sc.answered_304, 1)
        # Kept as it was: same version, first fetched when it was, just
        # confirmed now, with the 304's own lifetime and the 2xx status.
        self.assertAnswer(i, state="rules", http_status=200,
                          version=version_of(BODY),
                          fetched_at=first["fetched_at"], stale=False)
        self.assertGreater(i["validated_at"], first["validated_at"])
        self.assertEqual(i["validated_at"], i["last_fetch_at"])
        # The 304's own max-age, from the revalidation's end.
        self.assertAlmostEqual(i["expires_at"] - i["validated_at"], 600,
                               delta=0.01)
        self.assertEqual(self.stats()["revalidated"], 1)
        a = self.check("http://rv.test/private/z")
        self.assertAnswer(a, allowed=False, source="cache", http_status=200,
                          version=version_of(BODY))
        self.assertEqual(sample(self.scrape(), "robotsd_revalidated_total"),
                         1)

        # A changed file: the origin answers 200 with the new bytes.
        body2 = BODY + "Disallow: /new\n"
        self.origin.robots("rv.test", body2, etag='"v2"',
                           not_modified={"Cache-Control": "max-age=600"})
        i = self.refresh("http://rv.test", "http://rv.test/new")
        self.assertEqual(self.origin.hits("rv.test")[2]
                         .headers.get("if-none-match"), ETAG)
        self.assertAnswer(i, version=version_of(body2), http_status=200)
        self.assertEqual(i["fetched_at"], i["validated_at"])
        self.assertEqual(self.stats()["revalidated"], 1)
        # Only the ETag now: If-Modified-Since is not sent any more.
        self.refresh("http://rv.test", "http://rv.test/new")
        h = self.origin.hits("rv.test")[3]
        self.assertEqual(h.headers.get("if-none-match"), '"v2"')
        self.assertNotIn("if-modified-since", h.headers)
        self.assertEqual(self.stats()["revalidated"], 2)

    def test_last_modified_alone_is_sent_back(self):
        sc = self.origin.robots("lm.test", BODY, last_modified=LAST_MODIFIED)
        self.start()
        self.check("http://lm.test/")
        self.wait_fetched("http://lm.test")
        self.refresh("http://lm.test", "http://lm.test/")
        h = self.origin.hits("lm.test")[1]
        self.assertNotIn("if-none-match", h.headers)
        self.assertEqual(h.headers.get("if-modified-since"), LAST_MODIFIED)
        self.assertEqual(sc.answered_304, 1)
        self.assertEqual(self.stats()["revalidated"], 1)

    def test_304_without_validators_is_an_unfollowed_3xx(self):
        # As before revalidation existed: a 304 to an unconditional
        # request is a 3xx without a Location, "unavailable" (allow all).
        self.origin.set("n304.test", status=304)
        self.start()
        a = self.check("http://n304.test/x")
        self.assertAnswer(a, allowed=True, reason="unavailable",
                          http_status=304, version=version_of("status:304"))
        self.assertEqual(self.stats()["revalidated"], 0)
        self.assertNotIn("if-none-match",
                         self.origin.hits("n304.test")[0].headers)

    def test_absurd_validators_are_not_kept(self):
        self.origin.robots("big.test", BODY, etag='"' + "x" * 300 + '"')
        self.start()
        self.check("http://big.test/")
        self.wait_fetched("http://big.test")
        self.refresh("http://big.test", "http://big.test/")
        h = self.origin.hits("big.test")[1]
        self.assertNotIn("if-none-match", h.headers, json.dumps(h.headers))
        self.assertEqual(self.stats()["revalidated"], 0)


class History(DaemonTest):
    def ctl(self, *args):
        r = subprocess.run([ROBOTSCTL, "-s", self.d.socket] + list(args),
                           capture_output=True, text=True, timeout=10)
        return r.returncode, r.stdout

    def fetch_version(self, body, status=200):
        """Serve body (or status), move past the lifetime, let a check
        refresh, and wait for the refresh; returns inspect."""
        self.origin.set("h.test", status=status, body=body)
        n = len(self.origin.hits("h.test"))
        self.advance(86400 + 1)
        self.check("http://h.test/")
        self.origin.wait_hits("h.test", n + 1)
        return self.wait_fetched("http://h.test")

    def test_history_op_and_robotsctl_history(self):
        self.origin.robots("h.test", "User-agent: *\nDisallow: /a\n")
        self.start("--history-depth", "3")
        t0 = self.now()
        self.check("http://h.test/")
        self.wait_fetched("http://h.test")
        v1 = version_of("User-agent: *\nDisallow: /a\n")
        a = self.c.call({"op": "history", "origin": "HTTP://h.test:80"})
        self.assertAnswer(a, ok=True, origin="http://h.test")
        self.assertEqual([v["version"] for v in a["versions"]], [v1])
        self.assertBetween(a["versions"][0]["first_seen"], int(t0) - 1,
                           t0 + 10, "first_seen")
        self.assertAnswer(a["versions"][0], http_status=200, state="rules")

        t1 = self.fetch_version("User-agent: *\nDisallow: /a\n")  # same
        t2 = self.fetch_version("", status=404)
        t3 = self.fetch_version("User-agent: *\nDisallow: /b\n")
        t4 = self.fetch_version("User-agent: *\nDisallow: /c\n")
        a = self.c.call({"op": "history", "origin": "http://h.test"})
        want = [version_of("User-agent: *\nDisallow: /c\n"),
                version_of("User-agent: *\nDisallow: /b\n"),
                version_of("status:404")]  # depth 3: v1 is gone
        self.assertEqual([v["version"] for v in a["versions"]], want,
                         json.dumps(a))
        self.assertEqual([v["state"] for v in a["versions"]],
                         ["rules", "rules", "allow_all"])
        self.assertEqual([v["http_status"] for v in a["versions"]],
                         [200, 200, 404])
        self.assertEqual(a["versions"][0]["first_seen"],
                         int(t4["fetched_at"]))
        self.assertEqual(a["versions"][1]["first_seen"],
                         int(t3["fetched_at"]))
        self.assertEqual(a["versions"][1]["last_seen"],
                         int(t3["validated_at"]))
        self.assertEqual(a["versions"][2]["first_seen"],
                         int(t2["fetched_at"]))
        self.assertGreater(t2["fetched_at"], t1["validated_at"])

        rc, out = self.ctl("history", "http://h.test")
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(lines[0].split(),
                         ["VERSION", "FIRST_SEEN", "LAST_SEEN", "STATUS",
                          "STATE"])
        self.assertEqual([ln.split()[0] for ln in lines[1:]], want)
        self.assertEqual(lines[3].split()[3:], ["404", "allow_all"])
        rc, out = self.ctl("--json", "history", "http://h.test")
        self.assertEqual(rc, 0)
        self.assertEqual(json.loads(out)["versions"], a["versions"])

        a = self.c.call({"op": "history", "origin": "http://nothere.test"})
        self.assertError(a, "not_cached")
        rc, _ = self.ctl("history", "http://nothere.test")
        self.assertNotEqual(rc, 0)


    def test_history_survives_a_restart(self):
        # Three versions from the real origin, the daemon stopped (its
        # state file saved) and started again: all three, as they were.
        tmp = tempfile.mkdtemp(prefix="robotsd-integ-")
        self.addCleanup(shutil.rmtree, tmp, True)
        state = os.path.join(tmp, "state")
        self.origin.robots("h.test", "User-agent: *\nDisallow: /a\n")
        self.start("--state-file", state)
        self.check("http://h.test/")
        self.wait_fetched("http://h.test")
        self.fetch_version("", status=404)
        self.fetch_version("User-agent: *\nDisallow: /b\n")
        before = self.c.call({"op": "history", "origin": "http://h.test"})
        want = [version_of("User-agent: *\nDisallow: /b\n"),
                version_of("status:404"),
                version_of("User-agent: *\nDisallow: /a\n")]
        self.assertEqual([v["version"] for v in before["versions"]], want)
        self.d.stop()
        self.d.proc = None
        self.start("--state-file", state)
        a = self.c.call({"op": "history", "origin": "http://h.test"})
        self.assertAnswer(a, ok=True, origin="http://h.test")
        self.assertEqual(a["versions"], before["versions"])
        self.assertEqual(len(self.origin.hits("h.test")), 3)
        # Bounded by the depth of the instance that loads it.
        self.d.stop()
        self.d.proc = None
        self.start("--state-file", state, "--history-depth", "2")
        a = self.c.call({"op": "history", "origin": "http://h.test"})
        self.assertEqual(a["versions"], before["versions"][:2])

class OldStateFile(DaemonTest):
    def test_a_state_file_of_the_previous_format_loads(self):
        # Saved by the robotsd before versions (tests/data/README.md).
        body = "User-agent: *\nDisallow: /private\n"
        self.origin.robots("rules.test", body)
        tmp = tempfile.mkdtemp(prefix="robotsd-integ-")
        self.addCleanup(shutil.rmtree, tmp, True)
        state = os.path.join(tmp, "state")
        shutil.copy(os.path.join(DATA, "state-format2.bin"), state)
        self.start("--state-file", state)
        self.assertEqual(self.stats()["cache_entries"], 3)
        # Answered from the loaded copy, without a version, while the
        # first check refreshes it.
        a = self.check("http://rules.test/private/x")
        self.assertAnswer(a, allowed=False, source="stale", version=None)
        i = self.wait_fetched("http://rules.test")
        self.assertAnswer(i, version=version_of(body), http_status=200)
        a = self.check("http://rules.test/private/x")
        self.assertAnswer(a, allowed=False, source="cache",
                          version=version_of(body))


class FleetVersions(DaemonTest):
    """Two instances on one real redis-server name every state alike:
    a ruleset's version is computed from the body by each reader; a
    refresh through the tier revalidates, and the fleet shares the 304."""

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        tmp = tempfile.mkdtemp(prefix="robotsd-redis-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.redis = Redis(tmp, "r0").start()
        self.addCleanup(self.redis.stop)

    def test_two_instances_give_the_same_version(self):
        self.origin.robots("v.test", BODY, etag=ETAG,
                           last_modified=LAST_MODIFIED)
        self.origin.set("gone.test", status=404)
        self.origin.redirect_chain("loop.test", 6, "unreachable")
        a, b = [self.start("--redis", self.redis.url) for _ in range(2)]
        cases = [("http://v.test/private/x", version_of(BODY)),
                 ("http://gone.test/x", version_of("status:404")),
                 ("http://loop.test/x",
                  version_of("error:too_many_redirects"))]
        for url, want in cases:
            with self.subTest(url=url):
                x = self.check(url, client=a)
                self.assertAnswer(x, source="fetched", version=want)
                origin = x["origin"]
                poll(lambda: self.redis.cmd("GET", entry_key(origin)))
                y = self.check(url, client=b)
                self.assertAnswer(y, source="shared", version=want)
                ia = self.inspect(origin, client=a)
                ib = self.inspect(origin, client=b)
                self.assertEqual(ib["version"], ia["version"])
                self.assertEqual(ib["fetched_at"], ia["fetched_at"])
                self.assertEqual(ib["validated_at"], ia["validated_at"])
        self.assertEqual(len(self.origin.hits("v.test")), 1)

    def inspect_on(self, c, orig):
        """inspect orig on c once it is cached with no fetch under way."""
        def done():
            i = self.inspect(orig, client=c)
            return i if i.get("ok") and not i.get("fetching") else None
        i = poll(done)
        self.assertIsNotNone(i)
        return i

    def test_refresh_through_the_tier_revalidates(self):
        sc = self.origin.robots(
            "rv.test", BODY, etag=ETAG, last_modified=LAST_MODIFIED,
            headers={"Cache-Control": "max-age=3600"},
            not_modified={"Cache-Control": "max-age=600"})
        a, b = [self.start("--redis", self.redis.url) for _ in range(2)]
        key = entry_key("http://rv.test")
        x = self.check("http://rv.test/private/x", client=a)
        self.assertAnswer(x, source="fetched", version=version_of(BODY))
        first = poll(lambda: self.redis.cmd("GET", key))
        self.assertIsNotNone(first)
        y = self.check("http://rv.test/private/x", client=b)
        self.assertAnswer(y, source="shared", version=version_of(BODY))
        before = self.inspect_on(a, "http://rv.test")
        for c in (a, b):
            self.advance(before["expires_in"] + 1, client=c)

        # a's refresh goes through the tier with a's validators: a 304.
        self.check("http://rv.test/private/y", client=a)
        self.assertTrue(self.origin.wait_hits("rv.test", 2))
        hits = self.origin.hits("rv.test")
        self.assertEqual(hits[1].headers.get("if-none-match"), ETAG)
        self.assertEqual(hits[1].headers.get("if-modified-since"),
                         LAST_MODIFIED)
        self.assertTrue(poll(lambda: self.stats(a)["revalidated"] == 1))
        self.assertEqual(sc.answered_304, 1)
        ia = self.inspect_on(a, "http://rv.test")
        self.assertAnswer(ia, version=version_of(BODY), http_status=200,
                          fetched_at=before["fetched_at"])
        self.assertGreater(ia["validated_at"], before["validated_at"])
        self.assertAlmostEqual(ia["expires_at"] - ia["validated_at"], 600,
                               delta=0.01)
        # The same version goes to the tier with its new lifetime: b takes
        # it from there, without fetching.
        self.assertTrue(poll(lambda: self.redis.cmd("GET", key) != first))
        z = self.check("http://rv.test/private/z", client=b)
        self.assertAnswer(z, allowed=False, version=version_of(BODY))
        ib = self.inspect_on(b, "http://rv.test")
        self.assertEqual(ib["source"], "shared")
        self.assertEqual(ib["version"], ia["version"])
        self.assertEqual(ib["validated_at"], ia["validated_at"])
        self.assertEqual(ib["expires_at"], ia["expires_at"])
        # At the origin: one 200 and one 304 for the whole fleet.
        self.assertEqual(len(self.origin.hits("rv.test")), 2)
        self.assertEqual(sum(self.stats(c)["revalidated"] for c in (a, b)),
                         1)


KEY = "5f" * 32 + "\n"
TAG = 36  # "RBTH" and an HMAC-SHA256 (--redis-key-file)
V1 = "User-agent: *\nDisallow: /a\n"
V2 = "User-agent: *\nDisallow: /b\n"
DAY = 86400 + 1


class FleetHistory(SharedTest):
    """History through the shared tier: an instance publishes the versions
    it holds with the origin's value (tagged with the fleet's key), and an
    instance that takes the value merges them into its own; a value
    without a valid tag brings no versions."""

    def setUp(self):
        super().setUp()
        self.key = os.path.join(self.tmp, "redis.key")
        with open(self.key, "w") as f:
            f.write(KEY)
        os.chmod(self.key, 0o600)

    def instance(self):
        return self.start("--redis", self.redis.url, "--redis-key-file",
                          self.key, "--redis-timeout", "5000")

    def history(self, c):
        a = c.call({"op": "history", "origin": "http://fh.test"})
        self.assertAnswer(a, ok=True, origin="http://fh.test")
        return a["versions"]

    def two_versions_on_a(self):
        """A sees V1, then (a day later on its clock) V2, and publishes
        V2's value; returns A's history and that value."""
        key = entry_key("http://fh.test")
        self.origin.robots("fh.test", V1)
        a = self.instance()
        self.assertAnswer(self.check("http://fh.test/a", client=a),
                          allowed=False, source="fetched",
                          version=version_of(V1))
        first = poll(lambda: self.redis.cmd("GET", key))
        self.assertIsNotNone(first)
        self.origin.robots("fh.test", V2)
        self.advance(DAY, client=a)
        self.check("http://fh.test/b", client=a)
        self.assertEqual(len(self.origin.wait_hits("fh.test", 2)), 2)
        i = self.wait_fetched("http://fh.test")
        self.assertEqual(i["version"], version_of(V2))
        hist = self.history(a)
        self.assertEqual([v["version"] for v in hist],
                         [version_of(V2), version_of(V1)])
        value = poll(lambda: (lambda v: v if v and v != first else None)(
            self.redis.cmd("GET", key)))
        self.assertIsNotNone(value)
        self.assertEqual(value[-TAG:-32], b"RBTH")
        return hist, value

    def test_a_new_instance_learns_the_versions_the_fleet_saw(self):
        hist, _ = self.two_versions_on_a()
        b = self.instance()  # started after both versions
        self.advance(DAY, client=b)  # the fleet's clocks agree
        self.assertAnswer(self.check("http://fh.test/b", client=b),
                          allowed=False, source="shared",
                          version=version_of(V2))
        self.assertEqual(self.history(b), hist)
        self.assertEqual(len(self.origin.hits("fh.test")), 2)
        self.assertEqual(self.stats(b)["shared_untagged"], 0)

    def test_an_unsigned_history_is_refused(self):
        hist, value = self.two_versions_on_a()
        # The same bytes without the tag: well formed, V1 in its history.
        self.redis.cmd("SET", entry_key("http://fh.test"), value[:-TAG],
                       "PX", 600000)
        b = self.instance()
        self.advance(DAY, client=b)
        self.assertAnswer(self.check("http://fh.test/b", client=b),
                          allowed=False, source="fetched",
                          version=version_of(V2))
        self.assertGreaterEqual(self.stats(b)["shared_untagged"], 1)
        self.assertEqual([v["version"] for v in self.history(b)],
                         [version_of(V2)])
        self.assertEqual(len(self.origin.hits("fh.test")), 3)

    def test_history_of_an_origin_never_asked_here_reads_the_fleet(self):
        # A takes V1 and publishes it; B, never asked about the origin,
        # answers history from the shared value alone.
        self.origin.robots("fh.test", V1)
        a = self.instance()
        self.assertAnswer(self.check("http://fh.test/a", client=a),
                          allowed=False, source="fetched",
                          version=version_of(V1))
        self.assertIsNotNone(
            poll(lambda: self.redis.cmd("GET", entry_key("http://fh.test"))))
        hist = self.history(a)
        self.assertEqual([v["version"] for v in hist], [version_of(V1)])
        b = self.instance()
        self.assertEqual(self.history(b), hist)
        # Nothing fetched, nothing cached, no load on B.
        self.assertEqual(len(self.origin.hits("fh.test")), 1)
        self.assertError(self.inspect("http://fh.test", client=b),
                         "not_cached")
        st = self.stats(b)
        self.assertEqual((st["shared_hits"], st["shared_misses"],
                          st["shared_local"]), (0, 0, 0))

    def test_history_unasked_gives_every_version_the_fleet_saw(self):
        hist, _ = self.two_versions_on_a()
        b = self.instance()
        self.advance(DAY, client=b)  # the fleet's clocks agree
        self.assertEqual(self.history(b), hist)
        self.assertEqual(len(self.origin.hits("fh.test")), 2)
        # Once B takes the value, its history is the same versions.
        self.assertAnswer(self.check("http://fh.test/b", client=b),
                          allowed=False, source="shared",
                          version=version_of(V2))
        self.assertEqual(self.history(b), hist)

    def test_history_unasked_without_a_valid_value_is_not_cached(self):
        b = self.instance()
        a = b.call({"op": "history", "origin": "http://fh.test"})
        self.assertError(a, "not_cached")  # no value in Redis
        _, value = self.two_versions_on_a()
        self.redis.cmd("SET", entry_key("http://fh.test"), value[:-TAG],
                       "PX", 600000)
        self.advance(DAY, client=b)
        a = b.call({"op": "history", "origin": "http://fh.test"})
        self.assertError(a, "not_cached")  # the untagged value refused
        self.assertEqual(self.stats(b)["shared_untagged"], 1)
        self.assertEqual(len(self.origin.hits("fh.test")), 2)
