"""Waiting for another instance's fetch (issue 29, items 8, 13 and 14):
a waiter waits as long as the lock's holder lives, however long its
fetch waits its turn; a holder that stops (SIGSTOP) is noticed when its
lock expires, and the check is answered as the contract says; notices on
the channel only make a waiter read the lock again. Real robotsd
instances, a real redis-server, the local origin server counting its
fetches."""
import signal
import socket
import time

from harness import poll
from redisfix import RULES, SLACK, SharedTest, entry_key, lock_key

NOTICES = "robotsd:v1:n"


class Waits(SharedTest):

    def test_waiter_outlasts_a_living_holders_backlog(self):
        # One fetch at a time at a, each taking 0.2 s: the last of 64
        # origins is published some 12.8 s after the first, past three
        # lock lifetimes (9 s) and past the check's deadline (twice the
        # fetch timeout plus 5 s: 9 s). Before, b gave up on its living
        # holder after three waits and fetched the last origins itself,
        # counting them as the tier's failure.
        n = 64
        hosts = ["w%d.wait.test" % i for i in range(n)]
        for h in hosts:
            self.origin.robots(h, RULES, delay=0.2)
        a, b = self.fleet(2, "--max-fetches", "1", "--fetch-timeout", "2",
                          "--redis-lock-time", "3")
        for h in hosts:
            a.send({"op": "check", "agent": "Bot", "wait": False,
                    "url": "http://%s/private/x" % h})
        # a holds every lock (or has published already) before b asks
        self.assertTrue(poll(lambda: all(
            self.redis.cmd("EXISTS", lock_key("http://" + h)) or
            self.redis.cmd("EXISTS", entry_key("http://" + h))
            for h in hosts)))
        for h in hosts:
            b.send({"op": "check", "agent": "Bot", "wait": False,
                    "url": "http://%s/private/x" % h})
        # every origin ends up in b, from the tier
        self.assertTrue(poll(lambda: sum(self.stats(b)[k] for k in (
            "shared_hits", "shared_local")) >= n, 40), self.stats(b))
        self.assertEqual({h: len(self.origin.hits(h)) for h in hosts},
                         {h: 1 for h in hosts})
        sa, sb = self.stats(a), self.stats(b)
        self.assertEqual((sa["shared_local"], sb["shared_local"]), (0, 0))
        self.assertEqual((sa["shared_misses"], sb["shared_misses"]), (n, 0))
        self.assertEqual(sb["shared_lock_takeovers"], 0)
        for h in hosts:
            ans = self.check("http://%s/private/x" % h, client=b)
            self.assertAnswer(ans, ok=True, allowed=False, reason="rule",
                              source="cache")

    def _poll_stat(self, c, name, want, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.stats(c)[name] >= want:
                return True
            time.sleep(0.05)
        return False

    def test_stopped_holder_and_hanging_origin(self):
        # a takes the lock and its fetch hangs; a then stops (SIGSTOP):
        # its lock is no longer renewed and expires within its 3 s. b's
        # check waits, notices the expiry at its next poll (every
        # second), takes the lock over and fetches once itself: the
        # origin still hangs, so the fetch times out after 2 s and the
        # check is answered unreachable, with no HTTP status, well before
        # its own deadline (twice the fetch timeout plus 5 s: 9 s).
        self.origin.robots("hang.stop.test", RULES, hold=True)
        a, b = self.fleet(2, "--fetch-timeout", "2",
                          "--redis-lock-time", "3")
        holder = self.daemons[0]
        a.send({"op": "check", "agent": "Bot", "wait": False,
                "url": "http://hang.stop.test/private/x"})
        self.origin.wait_hits("hang.stop.test", 1)
        holder.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(holder.proc.send_signal, signal.SIGCONT)
        t0 = time.monotonic()
        ans = b.wait_id(b.send({"op": "check", "agent": "Bot",
                                "url": "http://hang.stop.test/private/x"}),
                        timeout=15)
        took = time.monotonic() - t0
        self.assertAnswer(ans, ok=True, allowed=False, reason="unreachable",
                          http_status=None, source="fetched")
        # lock lifetime + one poll + the fetch timeout
        self.assertLess(took, 3 + 1 + 2 + 4 * SLACK + 0.5)
        self.assertGreater(took, 2)
        self.assertEqual(len(self.origin.hits("hang.stop.test")), 2)
        st = self.stats(b)
        self.assertEqual(st["shared_lock_takeovers"], 1)
        self.assertEqual(st["shared_local"], 0)

    def test_stopped_holder_past_the_checks_deadline(self):
        # The lock outlives the check's deadline (twice the 1 s fetch
        # timeout plus 5 s: 7 s): b's check of the origin a stopped
        # holding is answered "timeout" at that deadline (protocol.md),
        # not before; b goes on waiting, takes the lock over once it
        # expires (8 s after a's last renewal), and fetches: the
        # origin still hangs, so the next check is told unreachable.
        self.origin.robots("late.stop.test", RULES, hold=True)
        a, b = self.fleet(2, "--fetch-timeout", "1",
                          "--redis-lock-time", "8")
        holder = self.daemons[0]
        a.send({"op": "check", "agent": "Bot", "wait": False,
                "url": "http://late.stop.test/private/x"})
        self.origin.wait_hits("late.stop.test", 1)
        holder.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(holder.proc.send_signal, signal.SIGCONT)
        # a renewed its lock at most 4 s ago: its expiry is 4 to 8 s away;
        # made 8 s, as after a renewal just before the stop
        self.assertEqual(self.redis.cmd(
            "PEXPIRE", lock_key("http://late.stop.test"), 8000), 1)
        t0 = time.monotonic()
        ans = b.wait_id(b.send({"op": "check", "agent": "Bot",
                                "url": "http://late.stop.test/private/x"}),
                        timeout=15)
        took = time.monotonic() - t0
        self.assertError(ans, "timeout")
        self.assertBetween(took, 7 - SLACK, 7 + 4 * SLACK + 0.5)
        self.assertEqual(len(self.origin.wait_hits("late.stop.test", 2)), 2)
        self.assertTrue(poll(lambda: self.inspect(
            "http://late.stop.test", client=b).get("fetching") is False))
        ans = self.check("http://late.stop.test/private/x", client=b)
        self.assertAnswer(ans, ok=True, allowed=False, reason="unreachable",
                          http_status=None)
        st = self.stats(b)
        self.assertEqual((st["shared_lock_takeovers"], st["shared_local"]),
                         (1, 0))
        self.assertEqual(len(self.origin.hits("late.stop.test")), 2)

    def _notice(self, origin, k, c):
        """A notice of origin that no publish sent, heard by both
        instances; returns once c has read it: c has read the k-th feed
        message (malformed, refused and counted) sent after it."""
        self.assertEqual(self.redis.cmd("PUBLISH", NOTICES, origin), 2)
        self.redis.cmd("PUBLISH", "robotsd:v1:f", "not a feed message")
        self.assertTrue(self._poll_stat(c, "feed_refused", k, 5))

    def test_notice_flood_does_not_end_a_wait(self):
        # a fetches (the origin holds its answer); b waits on a's lock.
        # Notices of the origin that nobody's publish sent: each makes b
        # read the lock, still held, so b keeps waiting. Before, each
        # notice ended b's wait, and after three b fetched itself.
        self.origin.robots("flood.test", RULES, hold=True)
        a, b = self.fleet(2, "--fetch-timeout", "5",
                          "--redis-lock-time", "6")
        a.send({"op": "check", "id": 1, "agent": "Bot",
                "url": "http://flood.test/private/x"})
        self.origin.wait_hits("flood.test", 1)
        b.send({"op": "check", "id": 2, "agent": "Bot",
                "url": "http://flood.test/private/x"})
        self.assertTrue(self._poll_stat(b, "shared_lock_waits", 1, 5))
        # a flood of notices, each read by b while it waits; then many
        # more at once
        for k in range(1, 21):
            self._notice("http://flood.test", k, b)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.redis.sock)
        s.sendall(b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%s\r\n$17\r\n"
                  b"http://flood.test\r\n" % (len(NOTICES),
                                                NOTICES.encode()) * 5000)
        s.close()
        self._notice("http://flood.test", 21, b)
        self.origin.release("flood.test")
        self.assertAnswer(a.wait_id(1), ok=True, allowed=False,
                          reason="rule", source="fetched")
        self.assertAnswer(b.wait_id(2), ok=True, allowed=False,
                          reason="rule", source="shared")
        self.assertEqual(len(self.origin.hits("flood.test")), 1)
        st = self.stats(b)
        self.assertEqual((st["shared_local"], st["shared_misses"]), (0, 0))
        self.assertEqual(st["shared_lock_takeovers"], 0)
