"""The change feed (issue 19): the watch op on the real daemon, its events
when a real origin's robots.txt changes (and none on a 304 or the same bytes
again), a watcher that does not read dropped with its last line while checks
go on, the feed across three instances on one real redis-server, hostile
messages on the feed channel, and robotsctl watch."""
import json
import os
import shutil
import socket
import subprocess
import tempfile

from harness import ROBOTSCTL, DaemonTest, poll
from test_shared import Redis, tier_built

CHANNEL = "robotsd:v1:f"
V1 = "0123456789abcdef"
V2 = "fedcba9876543210"


def message(origin, old, new, tokens, sender="00000000000000aa", **kw):
    """A fleet message as another instance would publish it."""
    m = {"v": 1, "from": sender, "origin": origin, "old": old, "new": new,
         "at": 1700000000.5, "state": "rules", "tokens": tokens}
    m.update(kw)
    return json.dumps(m, separators=(",", ":"))


class WatchProtocol(DaemonTest):

    def test_watch_answers_then_takes_no_more_requests(self):
        c = self.start()
        a = c.call({"op": "watch", "origins": [
            "https://A.example", "https://a.example:443", "http://b.test"],
            "agents": ["FooBot/1.0", "*"]})
        # two spellings of one origin count once
        self.assertAnswer(a, ok=True, watching=2)
        c.send({"op": "ping", "id": 7})
        a = c.recv()
        self.assertError(a, "bad_request", rid=None)
        self.assertIn("watching", a["error"]["message"])
        # another connection is served as ever
        self.assertAnswer(self.d.client().call({"op": "ping"}), ok=True)

    def test_all_counts_the_cached_origins(self):
        c = self.start()
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        self.assertAnswer(c.check("http://a.test/p"), allowed=False)
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "all": True}), ok=True,
                          watching=1)

    def test_bad_watch_requests(self):
        c = self.start()
        long_agent = "a" * 129
        cases = [
            ({"op": "watch"}, "bad_request"),
            ({"op": "watch", "all": True, "origins": ["http://a.test"]},
             "bad_request"),
            ({"op": "watch", "all": False}, "bad_request"),
            ({"op": "watch", "origins": []}, "bad_request"),
            ({"op": "watch", "origins": "http://a.test"}, "bad_request"),
            ({"op": "watch", "origins": [1]}, "bad_request"),
            ({"op": "watch", "origins": ["http://a.test"] * 1001},
             "bad_request"),
            ({"op": "watch", "all": True, "agents": ["a"] * 17},
             "bad_request"),
            ({"op": "watch", "all": True, "agents": []}, "bad_request"),
            ({"op": "watch", "all": True, "agents": [""]}, "bad_request"),
            ({"op": "watch", "all": True, "agents": [long_agent]},
             "bad_request"),
            ({"op": "watch", "all": True, "agents": ["a\tb"]},
             "bad_request"),
            ({"op": "watch", "origins": ["not a url"]}, "bad_url"),
            ({"op": "watch", "origins": ["gopher://a.test"]},
             "unsupported_scheme"),
        ]
        for req, code in cases:
            a = c.call(req)
            self.assertError(a, code)
        # the limits themselves are fine
        a = c.call({"op": "watch", "origins": ["http://a.test"] * 1000,
                    "agents": ["a" * 128] * 16})
        self.assertAnswer(a, ok=True, watching=1)


class Changes(DaemonTest):
    """Events from real fetches of the local origin, refreshed by moving
    the test clock past the lifetime (a day by default)."""

    def refresh(self, host, c=None):
        """Move the clock a day on, check once (the stale answer starts the
        refresh) and wait for the refresh to end."""
        c = c or self.c
        self.advance(2 * 86400, client=c)
        c.check("http://%s/x" % host, "foobot")
        before = self.d  # the same daemon
        self.assertIs(before, self.d)
        return self.wait_fetched("http://" + host)

    def version(self, host):
        return self.inspect("http://" + host)["version"]

    def test_events_only_when_the_version_changes(self):
        c = self.start()
        sc = self.origin.robots("a.test", "User-agent: *\nDisallow: /a\n",
                                etag='"e1"')
        self.origin.robots("s.test", "User-agent: *\nDisallow: /s\n")
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "origins": [
            "http://a.test", "http://s.test"], "agents": ["FooBot/1.0"]}),
            ok=True, watching=2)
        self.assertAnswer(c.check("http://a.test/a", "foobot"),
                          allowed=False, source="fetched")
        v1 = self.version("a.test")
        ev = w.recv()
        self.assertEqual(ev, {
            "event": "changed", "origin": "http://a.test", "old": None,
            "new": v1, "at": ev["at"], "state": "rules",
            "agents": {"FooBot/1.0": {"newly_disallowed": ["/a"],
                                      "newly_allowed": [],
                                      "usage_changed": False}}})
        self.assertAlmostEqual(ev["at"], self.now(), delta=5)
        # revalidated (304): no event
        self.refresh("a.test")
        self.assertEqual((sc.answered_304, self.version("a.test")), (1, v1))
        # the same bytes again (a 200 without validators): no event
        self.origin.robots("a.test", "User-agent: *\nDisallow: /a\n")
        self.refresh("a.test")
        self.assertEqual(self.version("a.test"), v1)
        # new rules: one event, old and new named
        self.origin.robots("a.test", "User-agent: *\nDisallow: /b\n\n"
                           "User-agent: foobot\nDisallow: /f\n"
                           "Content-Usage: train-ai=n\n")
        self.refresh("a.test")
        v2 = self.version("a.test")
        self.assertNotEqual(v1, v2)
        ev = w.recv()
        self.assertEqual((ev["old"], ev["new"], ev["agents"]), (v1, v2, {
            "FooBot/1.0": {"newly_disallowed": ["/f"],
                           "newly_allowed": ["/a"], "usage_changed": True}}))
        # the rules go (404): allow-all, what foobot had is allowed now
        self.origin.set("a.test", status=404)
        self.refresh("a.test")
        ev = w.recv()
        self.assertEqual((ev["old"], ev["state"], ev["agents"]), (v2,
                         "allow_all", {"FooBot/1.0": {
                             "newly_disallowed": [],
                             "newly_allowed": ["/f"],
                             "usage_changed": True}}))
        v3 = self.version("a.test")
        self.refresh("a.test")  # 404 again: the same version
        self.assertEqual(self.version("a.test"), v3)
        # nothing came in between: the next line is s.test's first version
        self.assertAnswer(c.check("http://s.test/s", "foobot"),
                          allowed=False)
        ev = w.recv()
        self.assertEqual((ev["origin"], ev["old"]), ("http://s.test", None))

    def test_watcher_that_does_not_read_is_dropped(self):
        # events of about 40 KB: past the socket's buffer and 256 KiB
        # queued here, the next one is not queued
        c = self.start("--max-output", "262144")
        bodies = ["User-agent: *\n" + "".join(
            "Disallow: /%s%04d/\n" % (tag, i) for i in range(2000))
            for tag in ("aaaaaaaa", "bbbbbbbb")]
        self.origin.robots("big.test", bodies[0])
        lazy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        lazy.connect(self.d.socket)
        self.addCleanup(lazy.close)
        lazy.sendall(b'{"op":"watch","all":true}\n')
        self.assertTrue(poll(lambda: self.stats()["feed_watchers"] == 1))
        other = self.d.client()
        n = 0
        while self.stats()["feed_dropped"] == 0 and n < 60:
            self.origin.robots("big.test", bodies[n % 2])
            self.refresh("big.test")
            n += 1
            # checks on another connection are answered meanwhile
            self.assertAnswer(other.check("http://big.test/aaaaaaaa0001/",
                                          "x"), ok=True)
        self.assertEqual(self.stats()["feed_dropped"], 1, (n, self.stats()))
        # the watcher reads at last: events, its last line, the end
        lazy.settimeout(20)
        data = b""
        while True:
            chunk = lazy.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        lines = data.decode().splitlines()
        self.assertEqual(json.loads(lines[0]), {"id": None, "ok": True,
                                                "watching": 0})
        self.assertEqual(json.loads(lines[-1]),
                         {"event": "dropped", "reason": "output_budget"})
        for ln in lines[1:-1]:
            self.assertEqual(json.loads(ln)["event"], "changed")
        self.assertEqual(len(lines) - 2, n - 1)  # all but the last change
        self.assertTrue(len(data) > 262144, len(data))
        self.assertTrue(poll(lambda: self.stats()["feed_watchers"] == 0))


class FleetMessages(DaemonTest):
    """What arrives on the feed channel: another instance's message is
    delivered once, with each agent's difference found by its product token
    (else "*"); anything malformed is dropped and changes nothing."""

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="robotsd-redis-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.redis = Redis(self.tmp, "r0").start()
        self.addCleanup(self.redis.stop)

    def subscribed(self, n):
        """Wait until n subscribers listen on the feed channel."""
        def count():
            r = self.redis.cmd("PUBSUB", "NUMSUB", CHANNEL)
            return r[1] >= n
        self.assertTrue(poll(count), "robotsd never subscribed")

    def publish(self, msg):
        return self.redis.cmd("PUBLISH", CHANNEL, msg)

    def test_message_to_watchers_once_by_token(self):
        self.start("--redis", self.redis.url)
        self.subscribed(1)
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "origins": [
            "https://a.test"], "agents": ["FooBot/2.0", "barbot"]}),
            ok=True, watching=1)
        tokens = {"*": {"d": ["/star"], "a": []},
                  "foobot": {"d": ["/f"], "a": ["/g"], "u": True}}
        self.assertEqual(self.publish(
            message("https://a.test", V1, V2, tokens)), 1)
        ev = w.recv()
        self.assertEqual(ev, {
            "event": "changed", "origin": "https://a.test", "old": V1,
            "new": V2, "at": 1700000000.5, "state": "rules",
            "agents": {
                "FooBot/2.0": {"newly_disallowed": ["/f"],
                               "newly_allowed": ["/g"],
                               "usage_changed": True},
                "barbot": {"newly_disallowed": ["/star"],
                           "newly_allowed": []}}})
        # the same change again (a second fetcher, a repeat): not twice;
        # another origin's change: not for this watcher
        self.publish(message("https://a.test", V1, V2, tokens,
                             sender="00000000000000bb"))
        self.publish(message("https://other.test", V1, V2, tokens))
        # too many tokens to carry: agents are null
        self.publish(message("https://a.test", V2, V1, None))
        ev = w.recv()
        self.assertEqual((ev["old"], ev["new"], ev["agents"]),
                         (V2, V1, {"FooBot/2.0": None, "barbot": None}))

    def test_hostile_messages_are_dropped(self):
        self.start("--redis", self.redis.url)
        self.subscribed(1)
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "all": True}), ok=True)
        good = {"*": {"d": [], "a": ["/"]}}
        bad = [
            b"not json",
            b"\xff\xfe",
            b"[]",
            message("https://a.test", V1, V2, good, v=2),
            message("https://a.test", V1, V2, good, sender=""),
            message("https://a.test", V1, V2, good, sender="x" * 17),
            message("https://A.test", V1, V2, good),  # not normalized
            message("https://a.test/path", V1, V2, good),
            message("https://a.test", "XYZ", V2, good),
            message("https://a.test", V1, "", good),
            message("https://a.test", V1, V2, good, at="now"),
            message("https://a.test", V1, V2, good, state=""),
            message("https://a.test", V1, V2, {"foobot": {"d": [], "a": []}}),
            message("https://a.test", V1, V2, {"*": {"d": [1], "a": []}}),
            message("https://a.test", V1, V2, {"*": {"d": "/", "a": []}}),
            message("https://a.test", V1, V2,
                    {"*": {"d": [], "a": [], "u": "yes"}}),
            message("https://a.test", V1, V2,
                    dict(("t%d" % i, {"d": [], "a": []}) for i in range(80)),
                    ),
            message("https://a.test", V1, V2,
                    {"*": {"d": ["/" + "x" * 70000], "a": []}}),
        ]
        for m in bad:
            self.publish(m)
        # still subscribed, and the next good message is the next line
        self.publish(message("https://z.test", V1, V2, good))
        ev = w.recv()
        self.assertEqual((ev["origin"], ev["agents"]),
                         ("https://z.test", {"*": {"newly_disallowed": [],
                                                   "newly_allowed": ["/"]}}))
        st = self.stats()
        self.assertAnswer(self.d.client().call({"op": "ping"}), ok=True)
        self.assertEqual(st.get("feed_refused"), len(bad), st)

    def test_three_instances_each_watcher_gets_each_change_once(self):
        fleet = [self.start("--redis", self.redis.url) for _ in range(3)]
        daemons = list(self.daemons)
        self.subscribed(3)
        watchers = []
        for d in daemons:
            w = d.client()
            self.assertAnswer(w.call({"op": "watch", "origins": [
                "http://f.test", "http://z.test"], "agents": ["foobot"]}),
                ok=True)
            watchers.append(w)
        self.origin.robots("f.test", "User-agent: *\nDisallow: /1\n")
        a, b, c = fleet
        # A fetches: the first version, to every watcher once
        self.assertAnswer(a.check("http://f.test/1", "foobot"),
                          source="fetched", allowed=False)
        v1 = a.call({"op": "inspect", "origin": "http://f.test"})["version"]
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["origin"], ev["old"], ev["new"]),
                             ("http://f.test", None, v1))
        # B and C read it from the tier: no second event
        for x in (b, c):
            self.assertAnswer(x.check("http://f.test/1", "foobot"),
                              allowed=False)
            self.assertEqual(x.call({"op": "inspect", "origin":
                                     "http://f.test"})["source"], "shared")
        # a new version, fetched by A after a day
        self.origin.robots("f.test", "User-agent: *\nDisallow: /2\n")
        for x in fleet:
            self.advance(2 * 86400, client=x)
        a.check("http://f.test/x", "foobot")
        self.assertTrue(poll(lambda: a.call({"op": "inspect", "origin":
                        "http://f.test"})["version"] != v1))
        v2 = a.call({"op": "inspect", "origin": "http://f.test"})["version"]
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["old"], ev["new"], ev["agents"]), (v1, v2, {
                "foobot": {"newly_disallowed": ["/2"],
                           "newly_allowed": ["/1"], "usage_changed": False}}))
        # B and C, their own copy still v1, take v2 (the tier or a fetch):
        # no event, their watchers had it
        for x in (b, c):
            x.check("http://f.test/x", "foobot")
            self.assertTrue(poll(lambda: x.call({
                "op": "inspect", "origin": "http://f.test"})["version"] == v2))
        # the next line of every watcher is the next change, z.test's
        self.origin.robots("z.test", "User-agent: *\nDisallow: /z\n")
        self.assertAnswer(c.check("http://z.test/z", "foobot"),
                          allowed=False)
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["origin"], ev["old"]), ("http://z.test", None))
        st = [self.stats(client=x) for x in fleet]
        self.assertEqual([s["feed_published"] for s in st], [2, 0, 1], st)

    def test_robotsctl_watch_prints_the_feed(self):
        self.start("--redis", self.redis.url)
        self.subscribed(1)
        p = subprocess.Popen([ROBOTSCTL, "-s", self.d.socket, "watch",
                              "https://a.test", "--agent", "foobot"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(p.kill)
        self.subscribed(1)
        self.assertTrue(poll(lambda: self.stats().get("feed_watchers") == 1),
                        "robotsctl never watched")
        tokens = {"*": {"d": [], "a": []},
                  "foobot": {"d": ["/a", "/b"], "a": ["/c"]}}
        self.publish(message("https://a.test", None, V2, tokens))
        line = p.stdout.readline().decode()
        self.assertEqual(line, "2023-11-14T22:13:20Z https://a.test none -> "
                         "%s rules [foobot: -/a -/b +/c]\n" % V2)
        p.kill()
        p.wait()


if __name__ == "__main__":
    import unittest
    unittest.main()
