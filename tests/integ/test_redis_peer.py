"""A Redis peer that speaks RESP wrongly on cue (issue 21): a reply to no
command, an extra reply, arrays and bulk strings announcing billions, nested
arrays, pub/sub notices of the wrong shape. Each is a protocol error for that
connection (closed, counted in redis_protocol_errors, retried with backoff),
never an abort or a stall: every check is answered right, local-only, and a
well-behaved connection after it serves. Run under ASan too (the harness
fails a test on a sanitizer report in robotsd's stderr)."""
import socket
import threading

from harness import DaemonTest, poll
from test_shared import RULES, tier_built

NIL = b"$-1\r\n"


def _bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


class FakeRedis:
    """A TCP peer answering robotsd's commands as Redis would (every GET a
    miss, every lock granted), except where cue(kind, n, command) returns
    bytes: those are sent instead. kind is "cmd" or "sub" (the connection
    that began with SUBSCRIBE), n counts the connections of that kind from
    0. A cue returning a callable calls it with the socket instead."""

    def __init__(self, cue=None):
        self.cue = cue or (lambda kind, n, cmd: None)
        self.lock = threading.Lock()
        self.count = {"cmd": 0, "sub": 0}
        self.socks = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = "redis://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        for s in [self.listener] + self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def conns(self, kind):
        with self.lock:
            return self.count[kind]

    def _accept(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            self.socks.append(c)
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    @staticmethod
    def _command(f):
        line = f.readline()
        if not line.startswith(b"*"):
            return None
        args = []
        for _ in range(int(line[1:])):
            n = int(f.readline()[1:])
            args.append(f.read(n + 2)[:-2])
        return args

    @staticmethod
    def _normal(args):
        name = args[0].upper()
        if name == b"PING":
            return b"+PONG\r\n"
        if name == b"SUBSCRIBE":
            return b"*3\r\n" + _bulk(b"subscribe") + _bulk(args[1]) + \
                b":1\r\n"
        if name == b"GET":
            return NIL
        if name in (b"SET", b"AUTH", b"SELECT"):
            return b"+OK\r\n"
        if name in (b"EVAL", b"DEL"):
            return b":1\r\n"
        return b":0\r\n"  # EXISTS, PUBLISH

    def _serve(self, c):
        f = c.makefile("rb")
        kind = n = None
        try:
            while True:
                args = self._command(f)
                if args is None:
                    break
                if kind is None:
                    kind = "sub" if args[0].upper() == b"SUBSCRIBE" \
                        else "cmd"
                    with self.lock:
                        n = self.count[kind]
                        self.count[kind] += 1
                out = self.cue(kind, n, args)
                if callable(out):
                    out(c)
                else:
                    c.sendall(out if out is not None else self._normal(args))
        except (OSError, ValueError):
            pass
        c.close()


class RedisPeer(DaemonTest):

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()

    def peer(self, cue):
        """robotsd on a FakeRedis with cue; its client."""
        p = FakeRedis(cue)
        self.addCleanup(p.close)
        self.fake = p
        return self.start("--redis", p.url, "--redis-timeout", "2000")

    def answers_right(self, c, host):
        self.origin.robots(host, RULES)
        a = self.check("http://%s/private/x" % host, client=c)
        self.assertAnswer(a, ok=True, allowed=False, reason="rule")
        b = self.check("http://%s/public" % host, client=c)
        self.assertAnswer(b, ok=True, allowed=True)
        return a

    def assertRecovers(self, c, errors=1):
        """The protocol errors were counted, robotsd lives, a later
        connection serves: a miss is read from the peer again."""
        self.assertTrue(poll(lambda: self.stats(c)["redis_protocol_errors"]
                             >= errors), self.stats(c))
        self.assertIsNone(self.d.proc.poll())
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        before = self.stats(c)["shared_misses"]
        self.answers_right(c, "after.test")
        self.assertEqual(self.stats(c)["shared_misses"], before + 1)
        self.assertIn("redis", self.d.log(100000))

    def once(self, kind, command, bad):
        """A cue: bad instead of the answer to the first command named
        command on the first connection of kind."""
        def cue(k, n, args):
            if k == kind and n == 0 and args[0].upper() == command:
                return bad
            return None
        return cue

    def test_reply_to_no_command_after_the_handshake(self):
        c = self.peer(self.once("cmd", b"PING", b"+PONG\r\n+OK\r\n"))
        self.assertTrue(poll(lambda: self.fake.conns("cmd") >= 2))
        self.assertRecovers(c)
        self.assertIn("a reply to no command", self.d.log(100000))

    def test_extra_reply_after_an_answer(self):
        c = self.peer(self.once("cmd", b"GET", NIL + b"+OK\r\n"))
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        self.assertEqual(self.answers_right(c, "x.test")["source"],
                         "fetched")
        self.assertRecovers(c)

    def test_array_announcing_two_billion_elements(self):
        c = self.peer(self.once("cmd", b"GET", b"*2000000000\r\n"))
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        self.assertEqual(self.answers_right(c, "x.test")["source"],
                         "fetched")
        self.assertRecovers(c)
        self.assertIn("a reply larger than robotsd accepts",
                      self.d.log(100000))

    def test_bulk_string_announcing_two_gigabytes(self):
        """The peer sends 64 MiB of the 2 GB it announced: robotsd closes
        the connection once more than it would accept is buffered, and its
        peak memory grows by far less than what was sent."""
        sent = []

        def flood(s):
            s.sendall(b"$2000000000\r\n")
            chunk = b"x" * 65536
            try:
                for _ in range(1024):
                    s.sendall(chunk)
                    sent.append(len(chunk))
            except OSError:
                pass

        c = self.peer(self.once("cmd", b"GET", flood))
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        hwm0 = self.peak_kb()
        self.assertEqual(self.answers_right(c, "x.test")["source"],
                         "fetched")
        self.assertRecovers(c)
        self.assertLess(sum(sent), 64 << 20)  # cut off before the end
        self.assertLess(self.peak_kb() - hwm0, 16 << 10)

    def peak_kb(self):
        with open("/proc/%d/status" % self.d.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def test_nested_arrays(self):
        c = self.peer(self.once("cmd", b"GET",
                                b"*1\r\n*1\r\n*1\r\n$1\r\nx\r\n"))
        self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1))
        self.assertEqual(self.answers_right(c, "x.test")["source"],
                         "fetched")
        self.assertRecovers(c)
        self.assertIn("a nested array", self.d.log(100000))

    def test_notices_of_the_wrong_shape(self):
        """Each subscriber connection gets one bad notice after its
        SUBSCRIBE is confirmed; hiredis 0.14 would assert on each."""
        bad = [b"*2\r\n:1\r\n:2\r\n",
               b"*1\r\n" + _bulk(b"message"),
               b"*3\r\n" + _bulk(b"message") + b":5\r\n" + _bulk(b"x"),
               b"*3\r\n" + _bulk(b"unsubscribe") + _bulk(b"robotsd:v1:n") +
               _bulk(b"x"),
               b"*3\r\n" + _bulk(b"message") + _bulk(b"robotsd:v1:n") +
               _bulk(b"x" * (3 << 20)),
               b"+OK\r\n"]

        def cue(kind, n, args):
            if kind == "sub" and n < len(bad):
                return FakeRedis._normal(args) + bad[n]
            return None

        c = self.peer(cue)
        self.assertTrue(poll(lambda: self.fake.conns("sub") > len(bad)))
        self.assertRecovers(c, errors=len(bad))
