"""Who may set verdicts through Redis (issue 21): a forged "allow all"
value written straight into a real redis-server. With --redis-key-file it
is refused (no valid tag), the origin fetched and the value overwritten
with a tagged one; without a key it is taken, but its lifetime is bounded by
the reader's --max-ttl from its fetch time, itself at most 60 s ahead of the
reader's clock. The key file's rules are checked at start (exit 78)."""
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib

from harness import ROBOTSD, START_TIMEOUT, DaemonTest, poll
from test_shared import RULES, Redis, entry_key, lock_key, tier_built, \
    value_ok, value_times

EX_CONFIG = 78
KEY = "5f" * 32 + "\n"
TAG = 36  # "RBTH" and an HMAC-SHA256
YEAR_MS = 365 * 86400 * 1000


def forged_allow_all(origin, fetched_ms, expires_ms):
    """A well-formed version 1 value saying "allow all" (a 404), as anyone
    with write access to Redis can make it: CRC-32 right, no tag."""
    return forged(origin, 2, 404, 0, fetched_ms, expires_ms, 0, 0)


def forged_failing(origin, fetched_ms, retry_ms):
    """A well-formed version 1 failure state (disallow all: a third 503 in
    a row, fetched at fetched_ms) whose next retry is at retry_ms."""
    return forged(origin, 3, 503, 3, fetched_ms, retry_ms, fetched_ms,
                  retry_ms)


def forged(origin, policy, status, streak, fetched_ms, expires_ms, since_ms,
           retry_ms):
    """A well-formed version 1 value with these fields, untagged."""
    header = struct.pack(">BBHIqqqqqq", policy, 0, status, streak,
                         fetched_ms, expires_ms, expires_ms, since_ms,
                         retry_ms, 0)
    strings = b""
    for s in (origin.encode(), b"", b"", b""):
        strings += struct.pack(">I", len(s)) + s
    total = 12 + len(header) + len(strings) + 4
    v = b"RBTV" + struct.pack(">HHI", 1, len(header), total) + header + \
        strings
    return v + struct.pack(">I", zlib.crc32(v))


class TierTrust(DaemonTest):

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="robotsd-trust-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.redis = Redis(self.tmp, "r0").start()
        self.addCleanup(self.redis.stop)

    def key_file(self, text=KEY, mode=0o600):
        path = os.path.join(self.tmp, "redis.key")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def forge(self, host, fetched_ms, expires_ms):
        origin = "http://" + host
        v = forged_allow_all(origin, fetched_ms, expires_ms)
        self.assertTrue(value_ok(v))
        self.redis.cmd("SET", entry_key(origin), v, "PX", 600000)

    def test_forged_value_refused_with_a_key(self):
        self.origin.robots("forged.test", RULES)
        # a budget no slow run spends: each miss reads twice (before the
        # lock and under it)
        c = self.start("--redis", self.redis.url, "--redis-key-file",
                       self.key_file(), "--redis-timeout", "5000")
        now_ms = int(time.time() * 1000)
        self.forge("forged.test", now_ms, now_ms + YEAR_MS)
        a = self.check("http://forged.test/private/x", client=c)
        self.assertAnswer(a, ok=True, allowed=False, reason="rule",
                          source="fetched")
        self.assertEqual(len(self.origin.hits("forged.test")), 1)
        # overwritten by a tagged value, which the fleet then takes
        key = entry_key("http://forged.test")
        v = poll(lambda: (lambda x: x if x and value_ok(x[:-TAG]) else None)(
            self.redis.cmd("GET", key)))
        self.assertTrue(v, self.redis.cmd("GET", key))
        self.assertEqual(v[-TAG:-32], b"RBTH")
        s = self.stats(c)
        self.assertEqual(s["shared_untagged"], 2)  # before and under lock
        self.assertEqual(s["shared_corrupt"], 2)
        d = self.start("--redis", self.redis.url, "--redis-key-file",
                       self.key_file(), "--redis-timeout", "5000")
        a = self.check("http://forged.test/private/x", client=d)
        self.assertAnswer(a, ok=True, allowed=False, source="shared")
        self.assertEqual(len(self.origin.hits("forged.test")), 1)
        self.assertEqual(self.stats(d)["shared_untagged"], 0)

    def test_forged_value_clamped_without_a_key(self):
        self.origin.robots("ahead.test", RULES)
        self.origin.robots("long.test", RULES)
        c = self.start("--redis", self.redis.url, "--max-ttl", "3600",
                       "--redis-timeout", "5000")
        now_ms = int(time.time() * 1000)
        # a publisher whose clock runs a year ahead: refetched, overwritten
        self.forge("ahead.test", now_ms + YEAR_MS, now_ms + YEAR_MS + 3000000)
        a = self.check("http://ahead.test/private/x", client=c)
        self.assertAnswer(a, ok=True, allowed=False, source="fetched")
        # the publish that follows the answer overwrites the forged value
        def overwritten():
            v = self.redis.cmd("GET", entry_key("http://ahead.test"))
            return v if v and value_ok(v) and \
                value_times(v)[0] <= now_ms + 60000 else None
        self.assertTrue(poll(overwritten), self.redis.cmd(
            "GET", entry_key("http://ahead.test")))
        # "allow all" for about 292 million years: without a key it is
        # taken (the trust model), but for no longer than --max-ttl
        self.forge("long.test", now_ms, 2 ** 63 - 1)
        a = self.check("http://long.test/private/x", client=c)
        self.assertAnswer(a, ok=True, allowed=True, source="shared")
        self.assertLessEqual(a["expires_in"], 3600)
        self.assertGreater(a["expires_in"], 3600 - 60)
        self.assertEqual(len(self.origin.hits("long.test")), 0)
        # past it the same value in Redis no longer counts: fetched
        self.advance(3700)
        self.check("http://long.test/private/x", client=c)
        self.assertTrue(poll(lambda: self.check(
            "http://long.test/private/x", client=c).get("allowed") is False))
        self.assertEqual(len(self.origin.hits("long.test")), 1)

    def test_value_replayed_after_a_purge_is_refused(self):
        """A tagged value saved before a purge and written back after it
        (SET, with a long expiry) is refused: fetched before the purge's
        record. The fleet fetches the origin's new rules instead of rolling
        back to the old version for the rest of its lifetime."""
        self.origin.robots("purged.test", RULES)
        args = ("--redis", self.redis.url, "--redis-key-file",
                self.key_file(), "--redis-timeout", "5000")
        a, b = self.start(*args), self.start(*args)
        self.assertAnswer(self.check("http://purged.test/private/x",
                                     client=a), allowed=False, reason="rule")
        key = entry_key("http://purged.test")
        old = poll(lambda: self.redis.cmd("GET", key))
        self.assertTrue(old)
        self.origin.robots("purged.test", "User-agent: *\nDisallow: /new\n")
        p = a.call({"op": "purge", "origin": "http://purged.test"})
        self.assertIs(p["ok"], True, p)
        self.assertTrue(poll(lambda: self.redis.cmd("EXISTS", key) == 0))
        self.redis.cmd("SET", key, old, "PX", 600000)  # the replay
        x = self.check("http://purged.test/private/x", client=b)
        self.assertAnswer(x, ok=True, allowed=True, source="fetched")
        self.assertAnswer(self.check("http://purged.test/new", client=b),
                          allowed=False, reason="rule")
        self.assertEqual(len(self.origin.hits("purged.test")), 2)
        # overwritten with the new rules, which the fleet then shares
        self.assertTrue(poll(lambda: self.redis.cmd("GET", key) != old))
        c = self.start(*args)
        x = self.check("http://purged.test/new", client=c)
        self.assertAnswer(x, ok=True, allowed=False, source="shared")
        self.assertEqual(len(self.origin.hits("purged.test")), 2)

    def test_failure_state_without_expiry_lets_go(self):
        """A failure state planted with no Redis expiry and its next retry
        a year away, for an origin that is healthy: it holds for at most
        the reader's longest retry (--retry-max) after the failed fetch it
        claims, however often it is read again; then the origin is
        fetched. (It used to be clamped to now + --retry-max at each
        reread: disallowed for ever, never fetched.)"""
        self.origin.robots("failed.test", RULES)
        c = self.start("--redis", self.redis.url, "--redis-timeout", "5000",
                       "--retry-min", "5", "--retry-max", "20",
                       "--retry-503-min", "5", "--retry-503-max", "20")
        now_ms = int(self.now() * 1000)
        origin = "http://failed.test"
        v = forged_failing(origin, now_ms, now_ms + YEAR_MS)
        self.assertTrue(value_ok(v))
        self.redis.cmd("SET", entry_key(origin), v)  # no expiry
        a = self.check("http://failed.test/private/x", client=c)
        self.assertAnswer(a, ok=True, allowed=False, reason="unreachable",
                          source="shared")
        self.assertLessEqual(a["expires_in"], 20)
        # each retry due rereads the same value: it no longer holds
        for _ in range(3):
            self.advance(8)
            self.check("http://failed.test/x", client=c)
        self.assertTrue(poll(lambda: self.check(
            "http://failed.test/private/x", client=c).get("reason") ==
            "rule"))
        self.assertEqual(len(self.origin.hits("failed.test")), 1)
        a = self.check("http://failed.test/public", client=c)
        self.assertAnswer(a, ok=True, allowed=True, reason="no_rule")

    def test_lock_that_would_never_expire_is_taken_over(self):
        """A lock key set by hand with no expiry, or one longer than any
        robotsd sets: one wait (--redis-lock-time), then taken over and
        fetched, where the check used to wait until it timed out."""
        c = self.start("--redis", self.redis.url, "--redis-lock-time", "3",
                       "--fetch-timeout", "2")
        for host, expiry in (("stuck.test", ()),
                             ("long.test", ("PX", 86400000))):
            self.origin.robots(host, RULES)
            lock = lock_key("http://" + host)
            self.redis.cmd("SET", lock, "nobody", *expiry)
            a = self.check("http://%s/private/x" % host, client=c)
            self.assertAnswer(a, ok=True, allowed=False, reason="rule",
                              source="fetched")
            self.assertEqual(len(self.origin.hits(host)), 1)
            # released after the publish: nobody's lock is gone too
            self.assertTrue(poll(lambda: self.redis.cmd("EXISTS", lock) == 0))
        self.assertEqual(self.stats(c)["shared_lock_takeovers"], 2)

    def test_key_file_rules_at_start(self):
        cases = [
            (KEY, 0o644, "readable or writable by others (mode 0644)"),
            (KEY, 0o602, "readable or writable by others (mode 0602)"),
            ("5f" * 31 + "\n", 0o600, "not 64 hex digits"),
        ]
        for text, mode, why in cases:
            path = self.key_file(text, mode)
            r = subprocess.run(
                [ROBOTSD, "-n", "-c", "/dev/null", "--redis", self.redis.url,
                 "--redis-key-file", path],
                capture_output=True, timeout=START_TIMEOUT)
            self.assertEqual(r.returncode, EX_CONFIG, r)
            err = r.stderr.decode()
            self.assertIn("redis-key-file: %s: %s" % (path, why), err)
        path = self.key_file(KEY, 0o640)  # the group may read it
        r = subprocess.run(
            [ROBOTSD, "-n", "-c", "/dev/null", "--redis", self.redis.url,
             "--redis-key-file", path],
            capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual((r.returncode, r.stdout), (0, b"configuration OK\n"))
