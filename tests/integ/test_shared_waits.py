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

    def _stopped_holder(self, host, *args):
        """A fleet of two, a the holder of host's lock, its fetch hanging
        (the origin holds its answer), then stopped (SIGSTOP); returns
        b's client."""
        self.origin.robots(host, RULES, hold=True)
        a, b = self.fleet(2, *args)
        holder = self.daemons[0]
        a.send({"op": "check", "agent": "Bot", "wait": False,
                "url": "http://%s/private/x" % host})
        self.origin.wait_hits(host, 1)
        holder.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(holder.proc.send_signal, signal.SIGCONT)
        return b

    def _timed_check(self, b, host, timeout):
        """b's check of host, waited for: its answer and how long it took."""
        t0 = time.monotonic()
        ans = b.wait_id(b.send({"op": "check", "agent": "Bot",
                                "url": "http://%s/private/x" % host}),
                        timeout=timeout)
        return ans, time.monotonic() - t0

    def test_stopped_holder_and_hanging_origin(self):
        # a takes the lock and its fetch hangs; a then stops (SIGSTOP):
        # its lock is no longer renewed and expires within its 3 s. b's
        # check waits, notices the expiry at its next poll (every
        # second), takes the lock over and fetches once itself: the
        # origin still hangs, so the fetch times out after 2 s and the
        # check is answered unreachable, with no HTTP status, well before
        # its own deadline (twice the fetch timeout plus 5 s: 9 s).
        b = self._stopped_holder("hang.stop.test", "--fetch-timeout", "2",
                                 "--redis-lock-time", "3")
        ans, took = self._timed_check(b, "hang.stop.test", 15)
        self.assertAnswer(ans, ok=True, allowed=False, reason="unreachable",
                          http_status=None, source="fetched")
        # lock lifetime + one poll + the fetch timeout
        self.assertLess(took, 3 + 1 + 2 + 4 * SLACK + 0.5)
        self.assertGreater(took, 2)
        self.assertEqual(len(self.origin.hits("hang.stop.test")), 2)
        st = self.stats(b)
        self.assertEqual(st["shared_lock_takeovers"], 1)
        self.assertEqual(st["shared_local"], 0)

    def test_stopped_holder_with_the_default_lock_time(self):
        # The default --redis-lock-time (40 s) with a 4 s fetch timeout:
        # the check's deadline is 13 s. a sets its lock for the fetch
        # timeout plus 2 s (6 s), not 40: stopped right after taking it,
        # it leaves a lock that expires within 6 s; b notices at its next
        # poll (a second), takes over and fetches (4 s, the origin still
        # hangs), and its check is answered unreachable, no HTTP status,
        # as a single instance would, before its deadline. Before, the
        # lock lived 40 s and the check was answered "timeout" at 13 s.
        b = self._stopped_holder("dflt.stop.test", "--fetch-timeout", "4")
        pttl = self.redis.cmd("PTTL", lock_key("http://dflt.stop.test"))
        ans, took = self._timed_check(b, "dflt.stop.test", 20)
        self.assertAnswer(ans, ok=True, allowed=False, reason="unreachable",
                          http_status=None, source="fetched")
        self.assertBetween(pttl, 1, 6000, "the stopped holder's lock")
        # what was left of the lock + at most one poll + the fetch timeout
        self.assertBetween(took, pttl / 1000 + 4 - SLACK,
                           pttl / 1000 + 1 + 4 + 4 * SLACK + 0.5)
        self.assertLess(took, 13)
        self.assertEqual(len(self.origin.hits("dflt.stop.test")), 2)
        st = self.stats(b)
        self.assertEqual((st["shared_lock_takeovers"], st["shared_local"]),
                         (1, 0))

    def test_stopped_holder_past_the_checks_deadline(self):
        # A lock that outlives the check's deadline (twice the 1 s fetch
        # timeout plus 5 s: 7 s), as one an instance with a longer fetch
        # timeout renewed just before it stopped: b's check of the origin
        # a stopped holding is answered "timeout" at that deadline
        # (protocol.md), not before; b goes on waiting, takes the lock
        # over once it expires (8 s after), and fetches: the origin still
        # hangs, so the next check is told unreachable.
        b = self._stopped_holder("late.stop.test", "--fetch-timeout", "1",
                                 "--redis-lock-time", "8")
        # a's own lock lives 3 s (the fetch timeout plus 2 s); made 8 s,
        # within --redis-lock-time: a robotsd's lock, waited on
        self.assertEqual(self.redis.cmd(
            "PEXPIRE", lock_key("http://late.stop.test"), 8000), 1)
        ans, took = self._timed_check(b, "late.stop.test", 15)
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
