"""The change feed (issues 19, 28, 29): the watch op on the real daemon, its
events when a real origin's robots.txt changes (and none on a 304 or the
same bytes again), a revert reported like any change, a watcher that does
not read dropped with its last line while checks go on, what one change of
a big robots.txt costs with many watchers, robotsctl watch printing every
byte of a hostile site escaped; and across a fleet on one real
redis-server: each watcher gets each change once, never before its own
instance answers from it, a revert too, and messages without the fleet's
tag are refused and change nothing."""
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile

from harness import ROBOTSCTL, DaemonTest, poll
from test_shared import Redis, tier_built

CHANNEL = "robotsd:v1:f"
V1 = "0123456789abcdef"
V2 = "fedcba9876543210"
KEY = "5f" * 32 + "\n"


def version_of(body):
    """robotsd's version of a robots.txt body (docs/protocol.md): the first
    16 hex digits of its SHA-256."""
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def message(origin, version, sender="00000000000000aa", **kw):
    """A fleet message as another instance would publish it, untagged."""
    m = {"v": 2, "from": sender, "seq": 0, "origin": origin,
         "version": version, "at": 1700000000500}
    m.update(kw)
    return json.dumps(m, separators=(",", ":"))


def rss_peak(pid):
    """The peak resident set of a process (VmHWM), in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM for %d" % pid)


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

    def test_revert_is_reported(self):
        """A -> B -> A within ten minutes: three events (issue 29: the
        last was never reported)."""
        c = self.start()
        a, b = ("User-agent: *\nDisallow: /a\n",
                "User-agent: *\nDisallow: /b\n")
        short = {"Cache-Control": "max-age=60"}
        self.origin.robots("flap.test", a, headers=short)
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "origins": [
            "http://flap.test"]}), ok=True)
        self.assertAnswer(c.check("http://flap.test/a"), allowed=False)
        seen = [w.recv()]
        for body in (b, a):
            self.origin.robots("flap.test", body, headers=short)
            self.advance(61)
            c.check("http://flap.test/x")
            seen.append(w.recv())
        va, vb = version_of(a), version_of(b)
        self.assertEqual([(e["old"], e["new"]) for e in seen],
                         [(None, va), (va, vb), (vb, va)])
        self.assertEqual(seen[2]["agents"], {"*": {
            "newly_disallowed": ["/a"], "newly_allowed": ["/b"],
            "usage_changed": False}})

    def test_big_change_costs_one_line_for_many_watchers(self):
        """100 watchers naming the same 16 agents, a change of a 150 KB
        robots.txt (an event of 4 MB): one line made, one difference
        computed, queued to all by reference (issue 29: a copy each, 400
        MB here); the peak RSS grows by less than a sixth of that."""
        c = self.start()
        bodies = ["User-agent: *\n" + "".join(
            "Disallow: /%s/%05d/some/longer/path/x\n" % (tag, i)
            for i in range(4000)) for tag in ("old", "new")]
        self.origin.robots("big.test", bodies[0])
        self.assertAnswer(c.check("http://big.test/x"), ok=True)
        agents = ["agent%c/1.0" % chr(ord("a") + i) for i in range(16)]
        watchers = []
        for _ in range(100):
            w = self.d.client()
            w.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.assertAnswer(w.call({"op": "watch", "origins": [
                "http://big.test"], "agents": agents}), ok=True)
            watchers.append(w)
        before = self.stats()
        peak = rss_peak(self.d.proc.pid)
        self.origin.robots("big.test", bodies[1])
        self.advance(2 * 86400)
        c.check("http://big.test/x")
        self.assertTrue(poll(lambda: self.stats()["feed_events"] ==
                             before["feed_events"] + 100), self.stats())
        grown = rss_peak(self.d.proc.pid) - peak
        self.assertLess(grown, 64 << 20, "peak RSS grew %d MB" %
                        (grown >> 20))
        st = self.stats()
        self.assertEqual(st["feed_lines"] - before["feed_lines"], 1)
        self.assertEqual(st["feed_diffs"] - before["feed_diffs"], 1)
        self.assertEqual(st["feed_dropped"], 0)
        # every watcher has the whole line; two read it to the end
        for w in watchers[:2]:
            ev = w.recv()
            self.assertEqual(sorted(ev["agents"]), sorted(agents))
            d = ev["agents"]["agentp/1.0"]
            self.assertEqual((len(d["newly_disallowed"]),
                              len(d["newly_allowed"])), (4000, 4000))
            self.assertEqual(d["newly_disallowed"][0],
                             "/new/00000/some/longer/path/x")

    def test_robotsctl_watch_escapes_what_the_site_wrote(self):
        """A crawled site's pattern with terminal commands in it (issue 29:
        they reached the operator's terminal raw): printed escaped, and as
        JSON without a C1 control either."""
        c = self.start()
        evil = "/x\x1b]0;title\x07\x1b[2J"
        c1 = "/y\u009b2J"
        text = subprocess.Popen([ROBOTSCTL, "-s", self.d.socket, "watch",
                                 "http://evil.test", "--agent", "foobot"],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self.addCleanup(text.kill)
        raw = subprocess.Popen([ROBOTSCTL, "-s", self.d.socket, "--json",
                                "watch", "http://evil.test"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(raw.kill)
        self.assertTrue(poll(lambda: self.stats().get("feed_watchers") == 2),
                        "robotsctl never watched")
        self.origin.robots("evil.test", "User-agent: *\nDisallow: %s\n"
                           "Disallow: %s\n" % (evil, c1))
        self.assertAnswer(c.check("http://evil.test/x"), ok=True)
        v = self.inspect("http://evil.test")["version"]
        line = text.stdout.readline()
        self.assertRegex(line.decode(), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ")
        self.assertEqual(line.split(b" ", 1)[1],
                         b"http://evil.test none -> " + v.encode() +
                         b" rules [foobot: -/x\\x1b]0;title\\x07\\x1b[2J"
                         b" -/y\\u009b2J]\n")
        first = raw.stdout.readline()  # the watch's own answer
        self.assertEqual(json.loads(first)["watching"], 1)
        line = raw.stdout.readline()
        for b in range(0x20):
            self.assertNotIn(bytes([b]), line[:-1])
        self.assertNotIn(b"\x7f", line)
        self.assertNotIn(b"\xc2\x9b", line)
        self.assertIn(b"\\u009b2J", line)
        self.assertEqual(json.loads(line)["agents"]["*"]["newly_disallowed"],
                         sorted([evil, c1]))


class Fleet(DaemonTest):
    """The feed across instances on one real redis-server."""

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

    def publish(self, msg, times=1):
        """PUBLISH msg on the feed channel, times over in one command."""
        if times == 1:
            return self.redis.cmd("PUBLISH", CHANNEL, msg)
        return self.redis.cmd(
            "EVAL", "for i = 1, tonumber(ARGV[2]) do redis.call("
            "'PUBLISH', KEYS[1], ARGV[1]) end return 0", 1, CHANNEL, msg,
            times)

    def key_file(self):
        path = os.path.join(self.tmp, "redis.key")
        with open(path, "w") as f:
            f.write(KEY)
        os.chmod(path, 0o600)
        return path

    def fleet(self, n, *args):
        """n instances on the one redis-server, subscribed."""
        cs = [self.start("--redis", self.redis.url, *args)
              for _ in range(n)]
        self.subscribed(n)
        return cs

    def watch(self, d, *origins):
        w = d.client()
        self.assertAnswer(w.call({"op": "watch", "origins": list(origins),
                                  "agents": ["foobot"]}), ok=True)
        return w

    def version(self, c, origin):
        return c.call({"op": "inspect", "origin": origin})["version"]

    def test_three_instances_each_watcher_gets_each_change_once(self):
        fleet = self.fleet(3)
        daemons = list(self.daemons)
        watchers = [self.watch(d, "http://f.test", "http://z.test")
                    for d in daemons]
        self.origin.robots("f.test", "User-agent: *\nDisallow: /1\n")
        a, b, c = fleet
        # A fetches: the first version, to every watcher once, B's and C's
        # once their instance holds it (from the tier)
        self.assertAnswer(a.check("http://f.test/1", "foobot"),
                          source="fetched", allowed=False)
        v1 = self.version(a, "http://f.test")
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["origin"], ev["old"], ev["new"]),
                             ("http://f.test", None, v1))
        for x in (b, c):
            self.assertAnswer(x.check("http://f.test/1", "foobot"),
                              allowed=False, source="cache")
            self.assertEqual(x.call({"op": "inspect", "origin":
                                     "http://f.test"})["source"], "shared")
        # a new version, fetched by A after a day
        self.origin.robots("f.test", "User-agent: *\nDisallow: /2\n")
        for x in fleet:
            self.advance(2 * 86400, client=x)
        a.check("http://f.test/x", "foobot")
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["old"], ev["agents"]), (v1, {
                "foobot": {"newly_disallowed": ["/2"],
                           "newly_allowed": ["/1"], "usage_changed": False}}))
        v2 = ev["new"]
        for x in fleet:
            self.assertEqual(self.version(x, "http://f.test"), v2)
        # the next line of every watcher is the next change, z.test's
        self.origin.robots("z.test", "User-agent: *\nDisallow: /z\n")
        self.assertAnswer(c.check("http://z.test/z", "foobot"),
                          allowed=False)
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["origin"], ev["old"]), ("http://z.test", None))
        st = [self.stats(client=x) for x in fleet]
        self.assertEqual([s["feed_published"] for s in st], [2, 0, 1], st)
        self.assertEqual([s["feed_loads"] for s in st], [1, 3, 2], st)
        self.assertEqual(len(self.origin.hits("f.test")), 2)

    def test_event_only_once_the_instance_answers_it(self):
        """Issue 28: B announced A's change while B's checks still
        answered the old version. Each round A fetches a new version; the
        moment B's watcher reads the event, a check on B must answer from
        that version."""
        a, b = self.fleet(2)
        w = self.watch(self.daemons[1], "http://race.test")
        checker = self.daemons[1].client()
        for i in range(20):
            body = "User-agent: *\nDisallow: /r%d\n" % i
            self.origin.robots("race.test", body)
            for x in (a, b):
                self.advance(2 * 86400, client=x)
            a.check("http://race.test/x", "foobot")
            ev = w.recv()
            ans = checker.check("http://race.test/r%d" % i, "foobot")
            self.assertEqual(ev["new"], version_of(body), (i, ev))
            self.assertAnswer(ans, allowed=False, version=ev["new"])
            self.assertNotEqual(ans.get("source"), "stale", (i, ans))
        self.assertEqual(self.stats(client=b)["feed_published"], 0)

    def test_a_tdmrep_change_reaches_the_fleet(self):
        """A new tdmrep.json fetched by A tells B, whose watcher watches
        the origin's tdmrep.json: B loads it from the tier (no fetch of
        its own), its watcher hears of it once B holds it, and B's "tdm"
        checks answer A's new file."""
        tdm = "/.well-known/tdmrep.json"
        one = json.dumps([{"location": "/", "tdm-reservation": 0}])
        two = json.dumps([{"location": "/", "tdm-reservation": 1}])
        self.origin.robots("t.test", "User-agent: *\nDisallow: /p\n")
        self.origin.set("t.test", tdm, body=one)
        a, b = self.fleet(2)
        self.assertEqual(a.check("http://t.test/x", "foobot", tdm=True)
                         ["tdm"]["reservation"], 0)
        y = b.check("http://t.test/x", "foobot", tdm=True)
        self.assertAnswer(y, source="shared")
        self.assertEqual(y["tdm"]["version"], version_of(one))
        w = self.daemons[1].client()
        self.assertAnswer(w.call({"op": "watch", "origins": ["http://t.test"],
                                  "resources": ["robots.txt", "tdmrep"]}),
                          ok=True)
        self.origin.set("t.test", tdm, body=two)
        for x in (a, b):
            self.advance(2 * 86400, client=x)
        a.check("http://t.test/x", "foobot", tdm=True)
        ev = w.recv()
        self.assertEqual((ev["origin"], ev["resource"], ev["old"], ev["new"],
                          ev["state"], ev["old_state"]),
                         ("http://t.test", "tdmrep", version_of(one),
                          version_of(two), "rules", "rules"))
        z = b.check("http://t.test/x", "foobot", tdm=True)
        self.assertEqual((z["tdm"]["reservation"], z["tdm"]["version"]),
                         (1, version_of(two)))
        i = b.call({"op": "inspect", "origin": "http://t.test",
                    "resource": "tdmrep"})
        self.assertAnswer(i, source="shared", version=version_of(two),
                          stale=False)
        self.assertEqual(len(self.origin.hits("t.test", tdm)), 2)
        sa, sb = self.stats(client=a), self.stats(client=b)
        # A's: robots.txt's first version, the file's first and second
        self.assertEqual((sa["feed_published"], sb["feed_published"]),
                         (3, 0))
        self.assertEqual(sb["feed_loads"], 1)
        # B's history of the file is A's versions too
        h = b.call({"op": "history", "origin": "http://t.test",
                    "resource": "tdmrep"})
        self.assertEqual([v["version"] for v in h["versions"]],
                         [version_of(two), version_of(one)])

    def test_revert_reported_across_the_fleet(self):
        """A -> B -> A within ten minutes, fetched by one instance: every
        watcher of both gets all three changes."""
        fleet = self.fleet(2)
        watchers = [self.watch(d, "http://flap.test") for d in self.daemons]
        a, b = ("User-agent: *\nDisallow: /a\n",
                "User-agent: *\nDisallow: /b\n")
        short = {"Cache-Control": "max-age=60"}
        self.origin.robots("flap.test", a, headers=short)
        fleet[0].check("http://flap.test/a", "foobot")
        seen = [[w.recv()] for w in watchers]
        for body in (b, a):
            self.origin.robots("flap.test", body, headers=short)
            for x in fleet:
                self.advance(61, client=x)
            fleet[0].check("http://flap.test/x", "foobot")
            for got, w in zip(seen, watchers):
                got.append(w.recv())
        va, vb = version_of(a), version_of(b)
        for got in seen:
            self.assertEqual([(e["old"], e["new"]) for e in got],
                             [(None, va), (va, vb), (vb, va)])

    def test_messages_without_the_fleets_tag_are_refused(self):
        """Issue 29: with --redis-key-file a hand-made message is refused,
        counted and logged (within the log's bounds), and announcing a
        version beforehand does not keep its real change from anyone."""
        fleet = self.fleet(2, "--redis-key-file", self.key_file())
        watchers = [self.watch(d, "http://pre.test") for d in self.daemons]
        body = "User-agent: *\nDisallow: /after\n"
        forged = message("http://pre.test", version_of(body))
        self.assertEqual(self.publish(forged), 2)
        for x in fleet:
            self.assertTrue(poll(lambda: self.stats(client=x).get(
                "feed_refused") == 1))
        for d in self.daemons:
            self.assertIn('event=feed_refused why="untagged"', d.log())
        # the real change: to every watcher
        self.origin.robots("pre.test", body)
        fleet[0].check("http://pre.test/after", "foobot")
        for w in watchers:
            ev = w.recv()
            self.assertEqual((ev["old"], ev["new"]),
                             (None, version_of(body)))
        # a flood: all counted, the log bounded (200 lines, then 50 a
        # second, and a line saying how many it left out)
        self.publish(forged, 2000)
        for x in fleet:
            self.assertTrue(poll(lambda: self.stats(client=x).get(
                "feed_refused") == 2001))
        d = self.daemons[0]
        logged = d.log(100000).count("event=feed_refused")
        self.assertLess(logged, 1000)

        def said_left_out():
            self.publish(forged)
            return "event=log_suppressed kind=feed_refused" in d.log(100000)
        self.assertTrue(poll(said_left_out, interval=0.1))
        self.assertEqual(self.stats(client=fleet[0])["feed_loads"], 0)

    def test_without_a_key_a_message_is_only_a_reason_to_look(self):
        """No key: a hand-made message is taken, but what a watcher hears
        is what its own instance then holds (here the origin's real
        version, fetched once), and the version announced beforehand does
        not keep its real change from anyone."""
        a, b = self.fleet(2)
        w = self.watch(self.daemons[1], "http://pre.test")
        now = "User-agent: *\nDisallow: /now\n"
        later = "User-agent: *\nDisallow: /later\n"
        self.origin.robots("pre.test", now)
        self.publish(message("http://pre.test", version_of(later)))
        ev = w.recv()
        self.assertEqual((ev["old"], ev["new"]), (None, version_of(now)))
        self.assertEqual(len(self.origin.hits("pre.test")), 1)
        self.origin.robots("pre.test", later)
        for x in (a, b):
            self.advance(2 * 86400, client=x)
        a.check("http://pre.test/x", "foobot")
        ev = w.recv()
        self.assertEqual((ev["old"], ev["new"]),
                         (version_of(now), version_of(later)))

    def test_hostile_messages_are_dropped(self):
        self.fleet(1)
        w = self.d.client()
        self.assertAnswer(w.call({"op": "watch", "all": True}), ok=True)
        bad = [
            b"not json",
            b"\xff\xfe",
            b"[]",
            message("https://a.test", V2, v=3),
            message("https://a.test", V2, sender=""),
            message("https://a.test", V2, sender="x" * 17),
            message("https://a.test", V2, sender="0" * 15),
            message("https://A.test", V2),  # not normalized
            message("https://a.test/path", V2),
            message("https://a.test", "XYZ"),
            message("https://a.test", ""),
            message("https://a.test", V2, at="now"),
            message("https://a.test", V2, at=1.5),
            message("https://a.test", V2, seq=-1),
            message("https://a.test" + "x" * 5000, V2),
            json.dumps({"v": 2}),
        ]
        for m in bad:
            self.publish(m)
        st = poll(lambda: (lambda s: s if s.get("feed_refused") == len(bad)
                           else None)(self.stats()))
        self.assertTrue(st, self.stats())
        self.assertEqual((st["feed_loads"], st["feed_events"]), (0, 0))
        # still subscribed: the next good message is looked into
        self.origin.robots("z.test", "User-agent: *\nDisallow: /z\n")
        self.publish(message("http://z.test", V2))
        ev = w.recv()
        self.assertEqual((ev["origin"], ev["old"]), ("http://z.test", None))
        self.assertEqual(self.stats()["feed_loads"], 1)


if __name__ == "__main__":
    import unittest
    unittest.main()
