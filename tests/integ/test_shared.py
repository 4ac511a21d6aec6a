"""The shared Redis tier (issue 9): several real robotsd instances, real
redis-server processes on private Unix sockets (no persistence) and the
local origin server. One fetch per origin for the whole fleet, a dead lock
holder, a shared failure state, Redis stopped, paused and restarted,
refused values, two servers, the Redis expiry of an entry, purge. A robotsd
built without hiredis skips all of that and must refuse --redis at start."""
import os
import signal
import struct
import subprocess
import threading
import time

from harness import ROBOTSD, START_TIMEOUT, Daemon, DaemonTest, closed_port, \
    poll
from redisfix import DELAY, ENTRY, EX_CONFIG, NO_TIER, RULES, SLACK, Garbage, \
    Link, Redis, SharedTest, entry_key, lock_key, tier_built, value_ok, \
    value_times

__all__ = ["RULES", "Redis", "entry_key", "lock_key", "tier_built",
           "value_ok", "value_times"]  # for the other fleet tests


class Shared(SharedTest):

    def test_fleet_fetches_each_origin_once(self):
        hosts = ["o%d.fleet.test" % i for i in range(100)]
        for h in hosts:
            self.origin.robots(h, RULES, delay=0.3)
        clients = self.fleet(3)
        results = [None] * 3

        def run(i, c):
            reqs = [{"op": "check", "id": j, "agent": "Bot",
                     "url": "http://%s/private/%d" % (h, j)}
                    for j, h in enumerate(hosts)]
            results[i] = c.pipeline(reqs)

        threads = [threading.Thread(target=run, args=(i, c))
                   for i, c in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sources = {}
        for answers in results:
            self.assertEqual(len(answers), 100)
            for a in answers:
                self.assertAnswer(a, ok=True, allowed=False, reason="rule")
                sources[a["source"]] = sources.get(a["source"], 0) + 1
        per = {h: len(self.origin.hits(h)) for h in hosts}
        self.assertEqual(set(per.values()), {1}, per)
        # one instance fetched each origin; the two others took its value
        self.assertEqual(sources, {"fetched": 100, "shared": 200}, sources)
        # a publish is counted when Redis confirms it, after the answers
        self.assertTrue(poll(lambda: sum(self.stats(c)["shared_publishes"]
                                         for c in clients) >= 100))
        st = [self.stats(c) for c in clients]
        self.assertEqual(sum(s["shared_publishes"] for s in st), 100)
        self.assertEqual(sum(s["shared_misses"] for s in st), 100)
        self.assertEqual(sum(s["shared_hits"] for s in st), 200)
        self.assertEqual(sum(s["shared_local"] for s in st), 0)
        for c in clients:
            a = self.inspect("http://o7.fleet.test", client=c)
            self.assertIn(a["source"], ("fetched", "shared"))

    def test_dead_lock_holder(self):
        self.origin.robots("held.test", RULES, hold=True)
        a, b, c = self.fleet(3, "--redis-lock-time", "3",
                             "--fetch-timeout", "2")
        holder = self.daemons[0]
        a.send({"op": "check", "id": 1, "agent": "Bot",
                "url": "http://held.test/private/x"})
        self.origin.wait_hits("held.test", 1)
        self.assertTrue(self.redis.cmd("GET", lock_key("http://held.test")))
        for cl in (b, c):
            cl.send({"op": "check", "id": 2, "agent": "Bot",
                     "url": "http://held.test/private/x"})
        self.assertTrue(poll(lambda: all(
            self.stats(cl)["shared_lock_waits"] == 1 for cl in (b, c))))
        holder.kill()
        holder.proc = None  # killed on purpose: nothing to check at stop
        self.origin.robots("held.test", RULES)  # answers at once now
        t0 = time.monotonic()
        for cl in (b, c):
            self.assertAnswer(cl.recv(), id=2, ok=True, allowed=False,
                              reason="rule")
        # the lock lived 3 s; a waiter polls it every second
        self.assertLess(time.monotonic() - t0, 6)
        self.assertEqual(len(self.origin.hits("held.test")), 2)
        # a publish is counted when Redis confirms it, after the answers
        self.assertTrue(poll(lambda: sum(self.stats(cl)["shared_publishes"]
                                         for cl in (b, c)) >= 1))
        st = [self.stats(cl) for cl in (b, c)]
        # Both waiters may take the expired lock over, one after the
        # other: the second then finds the first's value on its read under
        # the lock and fetches nothing (one origin hit above, one publish).
        self.assertIn(sum(s["shared_lock_takeovers"] for s in st), (1, 2))
        self.assertEqual(sum(s["shared_publishes"] for s in st), 1)

    def test_lock_lasts_while_its_fetch_waits_its_turn(self):
        # One fetch at a time and two origins ahead that hang until the
        # 2 s fetch timeout: the third origin's lock, taken at once, is
        # held some 4 s before its fetch even starts, past its 3 s
        # lifetime. Its holder keeps it: the other instance waits for the
        # publish and fetches nothing. (Before, the lock expired, the
        # waiter took it over and both fetched.)
        for h in ("hang1.test", "hang2.test"):
            self.origin.robots(h, RULES, hold=True)
        self.origin.robots("late.test", RULES)
        a, b = self.fleet(2, "--max-fetches", "1", "--fetch-timeout", "2",
                          "--redis-lock-time", "3")
        for i, h in enumerate(("hang1.test", "hang2.test", "late.test")):
            a.send({"op": "check", "id": i, "agent": "Bot",
                    "url": "http://%s/private/x" % h})
        self.assertTrue(poll(lambda: self.redis.cmd(
            "EXISTS", lock_key("http://late.test"))))
        b.send({"op": "check", "id": 9, "agent": "Bot",
                "url": "http://late.test/private/x"})
        self.assertAnswer(a.wait_id(2), ok=True, allowed=False,
                          reason="rule", source="fetched")
        self.assertAnswer(b.wait_id(9), ok=True, allowed=False,
                          reason="rule", source="shared")
        self.assertEqual(len(self.origin.hits("late.test")), 1)
        # (a wait lasts --redis-lock-time: b may wait a second round)
        self.assertEqual(self.stats(b)["shared_lock_takeovers"], 0)

    def test_retry_after_is_shared(self):
        self.origin.set("busy.test", status=503,
                        headers={"Retry-After": "120"})
        clients = self.fleet(3)
        a = self.check("http://busy.test/x", client=clients[0])
        self.assertAnswer(a, ok=True, allowed=False, reason="unreachable",
                          source="fetched")
        for c in clients[1:]:
            a = self.check("http://busy.test/x", client=c)
            self.assertAnswer(a, ok=True, allowed=False,
                              reason="unreachable", source="shared")
            self.assertEqual(self.inspect("http://busy.test", client=c)
                             ["source"], "shared")
        self.origin.robots("busy.test", RULES)
        for c in clients:
            self.advance(119, client=c)
        for c in clients:
            self.assertAnswer(self.check("http://busy.test/x", client=c),
                              allowed=False, reason="unreachable")
        self.assertEqual(len(self.origin.hits("busy.test")), 1)
        for c in clients:
            self.advance(2, client=c)
        # the retry is due: one instance refetches, the others take it
        self.check("http://busy.test/private/x", client=clients[1])
        self.assertTrue(poll(lambda: self.inspect(
            "http://busy.test", client=clients[1])["state"] == "rules"))
        for c in (clients[2], clients[0]):
            # an expired entry answers stale at once and refreshes: here
            # from the value the first instance published
            self.check("http://busy.test/private/x", client=c)
            self.assertTrue(poll(lambda: self.inspect(
                "http://busy.test", client=c)["state"] == "rules"))
            self.assertEqual(self.inspect("http://busy.test", client=c)
                             ["source"], "shared")
            self.answers_right(c, "busy.test")
        self.assertEqual(len(self.origin.hits("busy.test")), 2)

    def test_redis_stopped_paused_restarted(self):
        for i in range(6):
            self.origin.robots("d%d.test" % i, RULES, delay=DELAY)
        clients = self.fleet(3, "--redis-timeout", "200")
        self.answers_right(clients[0], "d0.test")
        self.redis.pause(True)  # a slow Redis: every call times out
        for i, c in enumerate(clients):
            t0 = time.monotonic()
            self.answers_right(c, "d1.test")
            # the get's 200 ms, then the fetch
            self.assertLess(time.monotonic() - t0, 0.2 + DELAY + SLACK)
        self.assertGreater(self.stats(clients[1])["redis_timeouts"], 0)
        self.redis.pause(False)
        self.redis.stop()  # down: calls fail at once
        for c in clients:
            for h in ("d2.test", "d0.test"):  # a fetch at most, each
                t0 = time.monotonic()
                self.answers_right(c, h)
                self.assertLess(time.monotonic() - t0, DELAY + SLACK)
            self.assertEqual(self.stats(c)["redis_up_0"], 0)
        self.assertEqual(len(self.origin.hits("d2.test")), 3)
        self.redis.start()
        for c in clients:
            self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1,
                                 10), "no reconnect: %r" % self.stats(c))
        a = self.answers_right(clients[0], "d3.test")
        self.assertEqual(a["source"], "fetched")
        for c in clients[1:]:
            a = self.answers_right(c, "d3.test")
            self.assertEqual(a["source"], "shared")
        self.assertEqual(len(self.origin.hits("d3.test")), 1)

    def test_slow_redis_costs_a_miss_one_timeout(self):
        # Every Redis answer comes 300 ms late and the budget is 400 ms:
        # the get is answered, the lock gets the 100 ms left and no answer
        # in them, the read under the lock never starts: the miss is
        # fetched here at once. Per call (300 + 300 + 300) it would wait
        # 900 ms before the fetch.
        self.origin.robots("slow.test", RULES, delay=DELAY)
        link = Link(self.tmp, self.redis, delay=0.3)
        self.addCleanup(link.close)
        c = self.start("--redis", link.url, "--redis-timeout", "400")
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        a, took = self.timed_check(c, "slow.test")
        self.assertAnswer(a, ok=True, allowed=False, reason="rule",
                          source="fetched")
        self.assertBetween(took, 0.4 + DELAY - 0.01, 0.4 + DELAY + SLACK)
        s = self.stats(c)
        self.assertEqual((s["shared_local"], s["redis_timeouts"],
                          s["redis_errors"]), (1, 1, 0))
        # the connection stays (only a caller ran out of time), and the
        # lock Redis granted after the miss gave up on it is released
        self.assertEqual(s["redis_up_0"], 1)
        self.assertTrue(poll(lambda: self.commands(self.redis, "eval") == 1))
        self.assertEqual(self.commands(self.redis, "set"), 1)  # the lock
        self.assertEqual(self.redis.cmd("EXISTS",
                                        lock_key("http://slow.test")), 0)
        self.assertEqual(len(self.origin.hits("slow.test")), 1)

    def test_redis_stalls_during_a_miss(self):
        # Redis stops (SIGSTOP) as the miss's lock is on its way to it:
        # the miss has spent almost nothing of its 200 ms, waits out the
        # rest and is fetched here.
        self.origin.robots("stall.test", RULES, delay=DELAY)
        link = Link(self.tmp, self.redis, stop_at=b"NX")
        self.addCleanup(link.close)
        c = self.start("--redis", link.url, "--redis-timeout", "200")
        self.addCleanup(self.redis.pause, False)
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        a, took = self.timed_check(c, "stall.test")
        self.assertTrue(link.stopped.is_set())
        self.assertAnswer(a, ok=True, allowed=False, reason="rule",
                          source="fetched")
        self.assertBetween(took, 0.2 + DELAY - 0.01, 0.2 + DELAY + SLACK)
        s = self.stats(c)
        # The lock's call timed out. The fetch's new version then goes out
        # on the change feed while Redis is still stopped, and that call
        # may have timed out too by the time the stats are read (on a busy
        # machine it has): one timeout, or two, never none or more.
        self.assertEqual(s["shared_local"], 1)
        self.assertIn(s["redis_timeouts"], (1, 2))
        self.redis.pause(False)
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1, 10))

    def test_redis_stopped_while_a_miss_is_in_flight(self):
        # One instance holds the lock and fetches (the origin holds its
        # answer until released), the other waits for it; then Redis goes.
        for h in ("after1.test", "after2.test"):
            self.origin.robots(h, RULES, delay=DELAY)
        a, b = self.fleet(2, "--redis-timeout", "200")

        def lost_mid_fetch(host, waits, lose, bound):
            """lose() Redis while a fetches host and b waits (b's waits so
            far: waits): b fetches too, within bound of it; once the
            origin answers, both answer right at once."""
            self.origin.robots(host, RULES, hold=True)
            a.send({"op": "check", "id": 1, "agent": "Bot",
                    "url": "http://%s/private/x" % host})
            self.origin.wait_hits(host, 1)
            b.send({"op": "check", "id": 2, "agent": "Bot",
                    "url": "http://%s/private/x" % host})
            self.assertTrue(poll(lambda: self.stats(b)["shared_lock_waits"]
                                 == waits + 1))
            lose()
            t0 = time.monotonic()
            self.origin.wait_hits(host, 2)
            self.assertLess(time.monotonic() - t0, bound)
            self.origin.release(host)
            t0 = time.monotonic()
            for c, rid in ((a, 1), (b, 2)):
                self.assertAnswer(c.wait_id(rid), ok=True, allowed=False,
                                  reason="rule")
                self.assertLess(time.monotonic() - t0, SLACK)
            self.assertEqual(len(self.origin.hits(host)), 2)

        def shared_again(host):
            for c in (a, b):
                self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"]
                                     == 1, 10))
            self.assertEqual(self.answers_right(a, host)["source"],
                             "fetched")
            self.assertEqual(self.answers_right(b, host)["source"], "shared")
            self.assertEqual(len(self.origin.hits(host)), 1)

        # Killed: the waiter hears its connection go and fetches at once;
        # the holder's answer does not wait for its failed publish.
        lost_mid_fetch("killed.test", 0, self.redis.stop, SLACK)
        self.assertEqual(self.stats(b)["shared_local"], 1)
        self.redis.start()
        shared_again("after1.test")
        # Stopped: the waiter learns it from its next poll of the lock (at
        # most a second later) and that poll's 200 ms deadline.
        self.addCleanup(self.redis.pause, False)
        lost_mid_fetch("stopped.test", 1, lambda: self.redis.pause(True),
                       1.0 + 0.2 + SLACK)
        self.redis.pause(False)
        shared_again("after2.test")

    def garbage_peer(self, pong):
        """robotsd with a peer answering garbage where Redis should be:
        every check right, local-only; one log line of each kind for many
        misses; its connections retried. Returns the peer and the client."""
        peer = Garbage(pong)
        self.addCleanup(peer.close)
        c = self.start("--redis", peer.url, "--redis-timeout", "200")
        hosts = ["g%d.test" % i for i in range(20)]
        for h in hosts:
            self.origin.robots(h, RULES)
        t0 = time.monotonic()
        for h in hosts:
            self.assertEqual(self.answers_right(c, h)["source"], "fetched")
        self.assertLess(time.monotonic() - t0, 5)  # in one log period
        s = self.stats(c)
        self.assertEqual((s["shared_local"], s["shared_hits"],
                          s["shared_publishes"]), (20, 0, 0), s)
        self.assertGreaterEqual(s["redis_errors"], 1, s)
        log = self.d.log(100000).splitlines()
        warned = [ln for ln in log if "warn: event=redis " in ln]
        fallback = [ln for ln in log if "warn: event=shared_fallback " in ln]
        self.assertEqual(len(warned), 1, warned)
        self.assertIn("Protocol error", warned[0])
        self.assertEqual(len(fallback), 1, fallback)
        self.assertIsNone(self.d.proc.poll())
        return peer, c

    def test_peer_answering_garbage_at_once(self):
        peer, c = self.garbage_peer(pong=False)
        self.assertEqual(self.stats(c)["redis_up_0"], 0)
        # the command connection is retried: not given up, not in a loop
        self.assertTrue(poll(lambda: len(peer.first(b"PING")) >= 4, 5))
        self.assertBacksOff(peer.first(b"PING"))
        # a real Redis takes the port: robotsd connects by itself, shares
        peer.close()
        r = Redis(self.tmp, "tcp", port=peer.port).start()
        self.addCleanup(r.stop)
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1, 10))
        self.origin.robots("after.test", RULES)
        self.answers_right(c, "after.test")
        self.assertTrue(poll(lambda: r.cmd("EXISTS",
                                           entry_key("http://after.test"))))
        self.assertTrue(poll(lambda: self.stats(c)["shared_publishes"] == 1))

    def test_peer_answering_garbage_after_the_handshake(self):
        peer, c = self.garbage_peer(pong=True)
        # Each connection passes the handshake and the next call fails it:
        # with misses coming all the time, the reconnections back off all
        # the same.
        for i in range(200):
            if len(peer.first(b"PING")) >= 4:
                break
            self.origin.robots("m%d.test" % i, RULES)
            self.answers_right(c, "m%d.test" % i)
            time.sleep(0.02)  # misses keep coming, in real time
        self.assertBacksOff(peer.first(b"PING"))
        self.assertIsNone(self.d.proc.poll())

    def assertBacksOff(self, at):
        """Connections at these times came after 100, 200, 400 ms (each
        backoff at least, whatever the load)."""
        self.assertGreaterEqual(len(at), 4, at)
        gaps = [b - a for a, b in zip(at, at[1:4])]
        for k, gap in enumerate(gaps):
            self.assertGreaterEqual(gap, 0.1 * 2 ** k - 0.01, gaps)

    def test_refused_values_are_refetched_and_overwritten(self):
        hosts = ["bad%d.test" % i for i in range(3)]
        for h in hosts:
            self.origin.robots(h, RULES)
        a, b = self.fleet(2)
        for h in hosts:
            self.answers_right(a, h)
        good = [self.published("http://" + h) for h in hosts]
        self.assertTrue(all(value_ok(v) for v in good))
        v = good[0]
        corrupt = v[:30] + bytes([v[30] ^ 0xFF]) + v[31:]
        truncated = v[:len(v) // 2]
        other = v[:4] + struct.pack(">H", 2) + v[6:]
        for h, bad in zip(hosts, (corrupt, truncated, other)):
            self.redis.cmd("SET", entry_key("http://" + h), bad, "PX", 600000)
        for h in hosts:
            self.assertEqual(self.answers_right(b, h)["source"], "fetched")
            self.assertEqual(len(self.origin.hits(h)), 2, h)
            self.assertTrue(poll(lambda: value_ok(
                self.redis.cmd("GET", entry_key("http://" + h)))), h)
        # each refused value is read twice: before the lock and under it
        self.assertEqual(self.stats(b)["shared_corrupt"], 6)
        self.assertEqual(self.stats(b)["shared_local"], 0)

    def test_two_servers_split_origins(self):
        r1 = self.server("r1")
        hosts = ["split%d.test" % i for i in range(40)]
        for h in hosts:
            self.origin.robots(h, RULES)
        a, b = self.fleet(2, servers=[self.redis, r1])
        for h in hosts:
            self.answers_right(a, h)

        def stored(r):
            return {k[len(ENTRY) + 1:-1] for k in r.keys(ENTRY)}
        poll(lambda: len(stored(self.redis) | stored(r1)) == len(hosts))
        on0, on1 = stored(self.redis), stored(r1)
        self.assertEqual(on0 | on1, {"http://" + h for h in hosts})
        self.assertEqual(on0 & on1, set())
        self.assertTrue(on0 and on1, (on0, on1))
        r1.stop()
        self.assertTrue(poll(lambda: self.stats(b)["redis_up_1"] == 0))
        for h in hosts:
            a = self.answers_right(b, h)
            want = "shared" if "http://" + h in on0 else "fetched"
            self.assertEqual(a["source"], want, h)
            self.assertEqual(len(self.origin.hits(h)),
                             1 if want == "shared" else 2, h)
        s = self.stats(b)
        self.assertEqual((s["shared_hits"], s["shared_local"]),
                         (len(on0), len(on1)))

    def test_redis_expiry_is_the_remaining_lifetime(self):
        self.origin.robots("ttl.test", RULES,
                           headers={"Cache-Control": "max-age=600"})
        a, b = self.fleet(2)
        self.answers_right(a, "ttl.test")
        v = self.published("http://ttl.test")
        pttl = self.redis.cmd("PTTL", entry_key("http://ttl.test"))
        fetched, expires, stale = value_times(v)
        self.assertEqual(expires - fetched, 600000)
        # remaining lifetime (600 s) + as long again served stale
        self.assertEqual(stale - fetched, 1200000)
        self.assertTrue(1190000 < pttl <= 1200000, pttl)
        e = self.inspect("http://ttl.test", client=b)
        self.assertEqual(e["ok"], False)  # b has nothing yet
        self.answers_right(b, "ttl.test")
        e = self.inspect("http://ttl.test", client=b)
        self.assertEqual(e["source"], "shared")
        self.assertBetween(e["expires_in"], 590, 600)

    def test_purge_removes_the_shared_copy(self):
        self.origin.robots("gone.test", RULES)
        a, b = self.fleet(2)
        self.answers_right(a, "gone.test")
        key = entry_key("http://gone.test")
        self.published("http://gone.test")
        p = a.call({"op": "purge", "origin": "http://gone.test"})
        self.assertIs(p["ok"], True, p)
        self.assertTrue(poll(lambda: self.redis.cmd("EXISTS", key) == 0))
        self.assertEqual(self.answers_right(b, "gone.test")["source"],
                         "fetched")
        self.assertEqual(len(self.origin.hits("gone.test")), 2)

    def test_metrics_per_server_and_reload_keeps_the_tier(self):
        r1 = self.server("r1")
        port = closed_port()
        self.origin.robots("hup.test", RULES)
        a, b = self.fleet(2, servers=[self.redis, r1])
        self.d.stop()  # b again, with metrics
        b = self.start("--redis", self.redis.url, "--redis", r1.url,
                       "--metrics", "127.0.0.1:%d" % port)
        r1.stop()
        self.assertTrue(poll(lambda: self.stats(b)["redis_up_1"] == 0))
        text = self.scrape(port)
        self.assertIn('robotsd_redis_up{server="%s?db=0"} 1\n'
                      % self.redis.url, text)
        self.assertIn('robotsd_redis_up{server="%s?db=0"} 0\n' % r1.url,
                      text)
        self.assertEqual(text.count("# TYPE robotsd_redis_up gauge"), 1)
        self.assertIn("robotsd_shared_hits_total 0\n", text)
        r1.start()
        self.daemons[0].proc.send_signal(signal.SIGHUP)
        self.assertTrue(poll(lambda: "info: event=reload outcome=ok" in
                             self.daemons[0].log()))
        for c in (a, b):
            self.assertTrue(poll(lambda: self.stats(c)["redis_up_1"] == 1,
                                 10))
        self.answers_right(a, "hup.test")
        self.assertEqual(self.answers_right(b, "hup.test")["source"],
                         "shared")
        self.assertEqual(len(self.origin.hits("hup.test")), 1)

    def test_every_server_in_stats_up_to_the_cap(self):
        # 32 servers at most, each with its row in stats and /metrics
        port = closed_port()
        tier = []
        for i in range(32):
            tier += ["--redis", "unix://%s/none%d.sock" % (self.tmp, i)]
        c = self.start(*tier, "--metrics", "127.0.0.1:%d" % port)
        s = self.stats(c)
        rows = {k: v for k, v in s.items() if k.startswith("redis_up_")}
        self.assertEqual(rows, {"redis_up_%d" % i: 0 for i in range(32)})
        text = self.scrape(port)
        for i in range(32):
            self.assertIn('robotsd_redis_up{server="unix://%s/none%d.sock'
                          '?db=0"} 0\n' % (self.tmp, i), text)
        # a 33rd is a configuration error, not a server left out
        r = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null"] + tier +
                           ["--redis", "unix:///none32.sock"],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual((r.returncode, r.stderr.decode()), (
            EX_CONFIG, "robotsd: redis: 33 servers given, at most 32 "
            "(stats and /metrics show each one's state)\n"))

    def test_failing_origin_keeps_the_fleets_good_copy(self):
        self.origin.robots("flaky.test", RULES,
                           headers={"Cache-Control": "max-age=60"})
        a, b = self.fleet(2)
        self.answers_right(a, "flaky.test")
        self.origin.set("flaky.test", status=503)
        for c in (a, b):
            self.advance(61, client=c)
        # a's copy expired: it answers stale and refreshes, which fails
        self.assertAnswer(self.check("http://flaky.test/private/x", client=a),
                          allowed=False, source="stale", reason="rule")
        self.assertTrue(poll(lambda: self.inspect(
            "http://flaky.test", client=a)["retry"]["fail_streak"] == 1))
        # b never had it: the fleet's value still carries the good copy
        a2 = self.check("http://flaky.test/private/x", client=b)
        self.assertAnswer(a2, allowed=False, source="shared", reason="rule",
                          http_status=503)
        e = self.inspect("http://flaky.test", client=b)
        self.assertEqual((e["state"], e["stale"], e["source"]),
                         ("rules", True, "shared"), e)
        self.assertEqual(e["retry"]["fail_streak"], 1)
        self.assertEqual(len(self.origin.hits("flaky.test")), 2)


class WithoutTier(DaemonTest):
    """A robotsd built without hiredis never ignores --redis: it refuses it
    at start, before it listens, with the reason and exit status 78."""

    def test_redis_is_refused_at_start(self):
        if tier_built():
            self.skipTest("robotsd was built with hiredis")
        d = Daemon(["--redis", "unix:///nonexistent/redis.sock"])
        self.daemons.append(d)
        d.start(wait=False)
        self.assertEqual(d.wait_exit(), EX_CONFIG, d.log())
        self.assertEqual(d.log(), NO_TIER)
        self.assertFalse(os.path.exists(d.socket))
