"""What the shared-tier tests (test_shared*.py and the others that start a
fleet) share: real redis-server processes on private Unix sockets (no
persistence), peers robotsd reaches in place of Redis (a slow link, a
garbling server), readers of what robotsd stores there, and SharedTest,
the fixture of a fleet on them."""
import http.client
import os
import queue
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import zlib

from harness import ROBOTSD, START_TIMEOUT, DaemonTest, poll

RULES = "User-agent: *\nDisallow: /private\n"
ENTRY = "robotsd:v1:e:"
EX_CONFIG = 78
DELAY = 0.3  # the slow origin's answer, seconds
# What a bound on an answer's time allows beyond what it names: the
# daemon's and the test's own work on a busy machine. An ASan build (the
# suite runs it with ASAN_OPTIONS set) is several times slower at that
# work, so it gets more; the optimized build keeps the tight bound that
# tells one Redis timeout from two.
SLACK = 0.4 if os.environ.get("ASAN_OPTIONS") else 0.15
# What a robotsd built without hiredis says to --redis
# (src/robotsd/conf/conf.c).
NO_TIER = ("robotsd: redis: this robotsd was built without hiredis, so it "
           "has no shared Redis tier; rebuild it with hiredis "
           "(libhiredis-dev) or drop --redis")
_built = []


def tier_built():
    """Whether robotsd has the shared tier: its configuration check (-n)
    takes --redis, or refuses it with exit 78 and NO_TIER. Any other
    outcome is a failure, never a reason to skip."""
    if not _built:
        r = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null", "--redis",
                            "unix:///nonexistent/redis.sock"],
                           capture_output=True, timeout=START_TIMEOUT)
        out = (r.returncode, r.stdout.decode(), r.stderr.decode())
        if out == (0, "configuration OK\n", ""):
            _built.append(True)
        elif out == (EX_CONFIG, "", NO_TIER + "\n"):
            _built.append(False)
        else:
            raise AssertionError("robotsd -n --redis: %r" % (out,))
    return _built[0]


def entry_key(origin):
    return ENTRY + "{" + origin + "}"


def lock_key(origin):
    return "robotsd:v1:l:{" + origin + "}"


# The server the fleet tests run against: redis-server, or another that
# speaks its protocol (scripts/test runs them again with valkey-server
# where it is installed).
SERVER = os.environ.get("ROBOTSD_TEST_REDIS_SERVER", "redis-server")


class Redis:
    """One redis-server (or exe) on a private Unix socket (or, given a
    port, on 127.0.0.1:port), without persistence; extra are more of its
    options (a TLS port, ACL users)."""

    def __init__(self, tmp, name, port=None, exe=None, extra=()):
        self.sock = os.path.join(tmp, name + ".sock")
        self.url = "unix://" + self.sock
        self.port = port
        if port is not None:
            self.url = "redis://127.0.0.1:%d" % port
        self.exe = exe or SERVER
        self.extra = list(extra)
        self.proc = None

    def start(self):
        exe = shutil.which(self.exe)
        if exe is None:
            raise AssertionError("%s is not installed: run scripts/deps "
                                 "(the README's test command)" % self.exe)
        where = ["--port", "0", "--unixsocket", self.sock]
        if self.port is not None:
            where = ["--port", str(self.port), "--bind", "127.0.0.1",
                     "--unixsocket", self.sock]
        self.proc = subprocess.Popen(
            [exe] + where + ["--save", "", "--appendonly", "no"] +
            self.extra,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = poll(self._ping, 10, 0.02)
        if not ok:
            raise AssertionError("redis-server did not start on " + self.url)
        return self

    def _ping(self):
        try:
            return self.cmd("PING") == "PONG"
        except OSError:
            return False

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def pause(self, on):
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP if on else signal.SIGCONT)

    def cmd(self, *args):
        """One command over RESP, on the Unix socket, as the default
        user; bulk strings come back as bytes."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(self.sock)
            out = b"*%d\r\n" % len(args)
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
            s.sendall(out)
            return _reply(s.makefile("rb"))
        finally:
            s.close()

    def keys(self, prefix):
        return sorted(k.decode() for k in self.cmd("KEYS", prefix + "*"))


class Peer:
    """Something robotsd connects to in place of Redis, listening on
    listener: each connection goes to serve(sock), and close() ends them
    all."""

    def __init__(self, listener):
        self.listener = listener
        self.socks = []
        listener.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        for s in [self.listener] + self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept
            except OSError:
                pass
            s.close()

    def _accept(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            self.socks.append(c)
            self.serve(c)

    @staticmethod
    def thread(f, *args):
        threading.Thread(target=f, args=args, daemon=True).start()


class Link(Peer):
    """A Unix socket in front of a Redis: the link robotsd reaches it by.
    Whatever Redis says arrives delay seconds late (a slow Redis, or a slow
    network), and stop_at, when it is in a command on its way to Redis,
    stops Redis (SIGSTOP) just before the command reaches it."""

    def __init__(self, tmp, redis, delay=0.0, stop_at=None):
        self.redis, self.delay, self.stop_at = redis, delay, stop_at
        self.path = os.path.join(tmp, "link.sock")
        self.url = "unix://" + self.path
        self.stopped = threading.Event()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        super().__init__(listener)

    def serve(self, c):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.redis.sock)
        self.socks.append(s)
        late = queue.Queue()
        self.thread(self._up, c, s)
        self.thread(self._down, s, late)
        self.thread(self._late, late, c)

    def _up(self, c, s):
        while True:
            try:
                data = c.recv(65536)
                if self.stop_at is not None and self.stop_at in data:
                    self.stop_at = None
                    self.redis.pause(True)
                    self.stopped.set()
                if not data:
                    break
                s.sendall(data)
            except OSError:
                break
        s.close()

    def _down(self, s, late):
        while True:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            late.put((time.monotonic() + self.delay, data))
            if not data:
                return

    def _late(self, late, c):
        while True:
            due, data = late.get()
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                if not data:
                    break
                c.sendall(data)
            except OSError:
                break
        c.close()


class Garbage(Peer):
    """A TCP peer where robotsd expects Redis, answering bytes that are not
    RESP (an HTTP server's, say) to the first command of each connection;
    with pong, it answers PING right (the handshake passes) and garbles
    only what comes after. Keeps when each connection came and what it
    said first."""

    ANSWER = b"HTTP/1.1 400 Bad Request\r\n\r\n"

    def __init__(self, pong=False):
        self.pong = pong
        self.conns = []  # (time.monotonic(), first bytes)
        listener = socket.socket()
        # the connections it leaves (in TIME_WAIT) must not keep a Redis
        # from the port
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        self.url = "redis://127.0.0.1:%d" % self.port
        super().__init__(listener)

    def first(self, word):
        """When the connections that began with word came."""
        return [t for t, data in self.conns if word in data]

    def serve(self, c):
        self.thread(self._garble, c)

    def _garble(self, c):
        try:
            data = c.recv(65536)
            self.conns.append((time.monotonic(), data))
            while data:
                ping = data.startswith(b"*1\r\n$4\r\nPING\r\n")
                c.sendall(b"+PONG\r\n" if self.pong and ping
                          else self.ANSWER)
                data = c.recv(65536)  # until robotsd hangs up
        except OSError:
            pass
        c.close()


def _reply(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise AssertionError("redis error: " + rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:-2]
    if kind == b"*":
        return [_reply(f) for _ in range(int(rest))]
    raise AssertionError("odd redis reply %r" % line)


def value_ok(v):
    """A value as robotsd writes it: magic, version 1, length, CRC-32."""
    return (v is not None and v[:4] == b"RBTV" and
            struct.unpack(">H", v[4:6])[0] == 1 and
            struct.unpack(">I", v[8:12])[0] == len(v) and
            zlib.crc32(v[:-4]) == struct.unpack(">I", v[-4:])[0])


def value_times(v):
    """fetched_at, expires_at, stale_until (ms) of a version 1 value."""
    return struct.unpack(">qqq", v[20:44])


class SharedTest(DaemonTest):
    """A redis-server (self.redis) and instances started on it."""


    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="robotsd-redis-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.redis = self.server("r0")

    def server(self, name):
        r = Redis(self.tmp, name).start()
        self.addCleanup(r.stop)
        return r

    def fleet(self, n, *args, servers=None):
        """n instances on the given Redis servers; their clients."""
        tier = []
        for r in servers or [self.redis]:
            tier += ["--redis", r.url]
        return [self.start(*(tier + list(args))) for _ in range(n)]

    def timed_check(self, c, host):
        """A check of host's disallowed path: its answer, seconds taken."""
        t0 = time.monotonic()
        a = self.check("http://%s/private/x" % host, client=c)
        return a, time.monotonic() - t0

    def commands(self, r, name):
        """How many times Redis r ran command name since it started."""
        info = r.cmd("INFO", "commandstats").decode()
        for line in info.splitlines():
            if line.startswith("cmdstat_%s:calls=" % name):
                return int(line.split("=")[1].split(",")[0])
        return 0

    def scrape(self, port):
        """The text of /metrics on port (polled until it answers)."""
        def get():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            try:
                conn.request("GET", "/metrics")
                return conn.getresponse().read().decode()
            except OSError:
                return None
            finally:
                conn.close()
        return poll(get, timeout=5, interval=0.05)

    def published(self, origin, r=None):
        """origin's value in Redis r, once there: a publish follows the
        answers of the fetch it publishes."""
        r = r or self.redis
        v = poll(lambda: r.cmd("GET", entry_key(origin)))
        self.assertIsNotNone(v, "%s never published" % origin)
        return v

    def answers_right(self, c, host, **kw):
        a = self.check("http://%s/private/x" % host, client=c, **kw)
        self.assertAnswer(a, ok=True, allowed=False, reason="rule")
        b = self.check("http://%s/public" % host, client=c)
        self.assertAnswer(b, ok=True, allowed=True)
        return a
