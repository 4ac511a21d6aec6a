"""harness.py: run the real robotsd for a test and talk to it.

Daemon starts robotsd in the foreground on a private socket in a fresh
tempfile.mkdtemp() directory, with an empty config file, --log-level debug,
--connect-to ::127.0.0.1:PORT (every origin goes to the local Origin server),
--test-clock and the test's extra options; it waits (polling, bounded) for the
socket to accept, keeps stderr in a file, and stop() sends SIGTERM and checks
exit status 0 and that the socket file is gone. Client speaks the
newline-delimited JSON protocol: requests as compact JSON lines, answers
matched by id, pipelining and raw bytes. DaemonTest is the TestCase base:
one shared Origin, daemons stopped (and checked) after each test, their
stderr printed when the test failed.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from origin import Origin

# Run by hand (no ROBOTSD/ROBOTSCTL in the environment): the build that
# scripts/test makes, _build/werror.
BUILD = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", "..", "_build", "werror"))
ROBOTSD = os.environ.get("ROBOTSD") or os.path.join(BUILD, "robotsd")
ROBOTSCTL = os.environ.get("ROBOTSCTL") or os.path.join(BUILD, "robotsctl")
VERSION = "0.1.0"
# Generous bounds (a slow 2-core machine, ASan builds); polls end early.
START_TIMEOUT = 20.0
ANSWER_TIMEOUT = 20.0

_origin = []


def origin():
    """The one Origin server of this test process."""
    if not _origin:
        _origin.append(Origin())
    return _origin[0]


def http_get(port, path):
    """(status, body) of GET path on 127.0.0.1:port; OSError if nothing
    answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def poll(pred, timeout=ANSWER_TIMEOUT, interval=0.01):
    """Call pred until it returns something true; returns that, or the last
    (false) value after timeout."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= end:
            return v
        time.sleep(interval)


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def nobody_cannot_run(prog):
    """Why prog cannot run as user nobody here, or None when it can: the
    tests of rights run clients as nobody, which needs root, setpriv, and
    directories of programs and libraries that nobody may search (a root
    file system made with mode 0700, as a throwaway chroot can be, has
    none)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "needs root and setpriv"
    try:
        r = subprocess.run(NOBODY + [prog, "--version"],
                           capture_output=True, text=True, timeout=30)
    except OSError as e:
        return "setpriv: %s" % e
    if r.returncode != 0:
        return "user nobody cannot run %s here: %s" % (
            prog, r.stderr.strip()[:200])
    return None


def closed_port():
    """A local TCP port nobody listens on (connection refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Client:
    """One connection to the daemon's socket."""

    def __init__(self, path, timeout=ANSWER_TIMEOUT):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)  # blocking: waits while the backlog is full
        self.sock.settimeout(timeout)
        self.timeout = timeout
        self.buf = b""
        self.pending = []  # answers read but not yet claimed
        self.next_id = 1000000

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, req, auto_id=True):
        """Send one request; gives it a fresh numeric id unless it has one
        (or auto_id is false). Returns the id (None if absent)."""
        if auto_id and "id" not in req:
            req = dict(req, id=self.next_id)
            self.next_id += 1
        self.send_raw(json.dumps(req, separators=(",", ":")).encode() + b"\n")
        return req.get("id")

    def read_line(self, timeout=None):
        """The next raw answer line (bytes), b"" at EOF."""
        self.sock.settimeout(timeout or self.timeout)
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return b""
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line + b"\n"

    def recv(self, timeout=None):
        """The next answer, in arrival order (pending ones first)."""
        if self.pending:
            return self.pending.pop(0)
        line = self.read_line(timeout)
        if not line:
            raise EOFError("daemon closed the connection")
        return json.loads(line)

    def wait_id(self, rid, timeout=None):
        """The answer carrying id rid; others read meanwhile are kept."""
        key = json.dumps(rid, sort_keys=True)
        for i, a in enumerate(self.pending):
            if json.dumps(a.get("id"), sort_keys=True) == key:
                return self.pending.pop(i)
        end = time.monotonic() + (timeout or self.timeout)
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout("no answer with id %s" % key)
            line = self.read_line(left)
            if not line:
                raise EOFError("daemon closed the connection waiting for "
                               "id %s" % key)
            a = json.loads(line)
            if json.dumps(a.get("id"), sort_keys=True) == key:
                return a
            self.pending.append(a)

    def call(self, req, timeout=None):
        """Send req and return its answer."""
        return self.wait_id(self.send(req), timeout)

    def check(self, url, agent="TestBot", **kw):
        return self.call(dict(kw, op="check", url=url, agent=agent))

    def pipeline(self, reqs, timeout=None):
        """Send many requests (from a thread, so neither side blocks) and
        return the answers in arrival order."""
        data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n"
                        for r in reqs)
        err = []

        def writer():
            try:
                self.sock.sendall(data)
            except OSError as e:
                err.append(e)
        t = threading.Thread(target=writer, daemon=True)
        t.start()
        out = [self.recv(timeout) for _ in reqs]
        t.join(timeout or self.timeout)
        if err:
            raise err[0]
        return out

    def expect_eof(self, timeout=None):
        """True if the daemon closes the connection (EOF or reset) before
        timeout; answers read meanwhile are kept in self.pending."""
        end = time.monotonic() + (timeout or self.timeout)
        try:
            while time.monotonic() < end:
                line = self.read_line(max(0.01, end - time.monotonic()))
                if not line:
                    return True
                self.pending.append(json.loads(line))
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        return False


class Daemon:
    """One robotsd process with a private socket and log."""

    def __init__(self, args=(), connect_to=True, socket_path=None,
                 test_clock=True, wrap=()):
        self.dir = tempfile.mkdtemp(prefix="robotsd-integ-")
        self.socket = socket_path or os.path.join(self.dir, "robotsd.sock")
        self.conf = os.path.join(self.dir, "empty.conf")
        open(self.conf, "w").close()
        self.log_path = os.path.join(self.dir, "stderr.log")
        # wrap: a command that execs its arguments (robotsd keeps the pid)
        self.args = list(wrap) + [ROBOTSD, "-f", "-c", self.conf,
                                  "-s", self.socket, "--log-level", "debug"]
        if connect_to:
            self.args += ["--connect-to", "::127.0.0.1:%d" % origin().port]
        if test_clock:
            self.args.append("--test-clock")
        self.args += list(args)
        self.proc = None
        self.clients = []

    def start(self, wait=True):
        self.logf = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                     stdout=self.logf, stderr=self.logf)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self):
        """Poll until the socket accepts; fail with the log otherwise."""
        end = time.monotonic() + START_TIMEOUT
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError("robotsd exited with %s at start:\n%s"
                                     % (self.proc.returncode, self.log()))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.socket)
                return
            except OSError:
                time.sleep(0.02)
            finally:
                s.close()
        raise AssertionError("robotsd did not accept on %s within %ss:\n%s"
                             % (self.socket, START_TIMEOUT, self.log()))

    def client(self, timeout=ANSWER_TIMEOUT):
        c = Client(self.socket, timeout)
        self.clients.append(c)
        return c

    def log(self, tail=200):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-tail:])

    def wait_exit(self, timeout=START_TIMEOUT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        """SIGTERM; assert exit status 0 and the socket file removed."""
        for c in self.clients:
            c.close()
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit()
        if rc is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("robotsd did not exit within %ss of "
                                 "SIGTERM:\n%s" % (START_TIMEOUT, self.log()))
        self.logf.close()
        if rc != 0:
            raise AssertionError("robotsd exited with status %d (want 0):\n%s"
                                 % (rc, self.log()))
        if os.path.exists(self.socket):
            raise AssertionError("robotsd left its socket file %s behind"
                                 % self.socket)
        log = self.log(100000)
        if "Sanitizer" in log or "runtime error:" in log:
            raise AssertionError("sanitizer report in robotsd's stderr:\n%s"
                                 % log)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if getattr(self, "logf", None):
            self.logf.close()


class DaemonTest(unittest.TestCase):
    """Base: self.start(args) runs a daemon stopped after the test; helpers
    for the common requests."""

    maxDiff = None

    def setUp(self):
        self.origin = origin()
        self.origin.reset()
        self.daemons = []

    def start(self, *args, **kw):
        """Start a daemon with extra options; sets self.d and self.c (a
        client) and returns the client."""
        d = Daemon(args, **kw)
        self.daemons.append(d)
        d.start()
        self.addCleanup(d.stop)
        # Cleanups run last first: every hold is released before the stop,
        # so a test that failed mid-way does not leave the daemon draining
        # fetches nobody will answer (up to --fetch-timeout).
        self.addCleanup(self.origin.release_all)
        self.d = d
        self.c = d.client()
        return self.c

    def run(self, result=None):
        before = None
        if result is not None:
            before = len(result.failures) + len(result.errors)
        try:
            return super().run(result)
        finally:
            failed = (result is not None and
                      len(result.failures) + len(result.errors) > before)
            for d in getattr(self, "daemons", []):
                d.kill()
                if failed:
                    sys.stdout.write("\n--- robotsd stderr (%s) ---\n%s\n"
                                     "--- end ---\n" % (" ".join(d.args),
                                                        d.log(80)))
                shutil.rmtree(d.dir, ignore_errors=True)

    # --- requests --------------------------------------------------------
    def check(self, url, agent="TestBot", client=None, **kw):
        return (client or self.c).check(url, agent, **kw)

    def stats(self, client=None):
        a = (client or self.c).call({"op": "stats"})
        self.assertIs(a.get("ok"), True, a)
        return a["stats"]

    def inspect(self, orig, client=None):
        return (client or self.c).call({"op": "inspect", "origin": orig})

    def advance(self, seconds, client=None):
        """Move the daemon's test clock; returns its new now."""
        a = (client or self.c).call({"op": "clock", "advance": seconds})
        self.assertIs(a.get("ok"), True, "clock op: %r" % (a,))
        return a["now"]

    def now(self):
        return self.advance(0)

    def wait_fetched(self, orig, timeout=ANSWER_TIMEOUT):
        """Poll inspect until orig is cached with no fetch under way."""
        def done():
            a = self.inspect(orig)
            if a.get("ok") and not a.get("fetching") and \
                    a.get("state") != "pending":
                return a
            return None
        a = poll(done, timeout, 0.02)
        self.assertTrue(a, "%s still fetching after %ss: %r"
                        % (orig, timeout, self.inspect(orig)))
        return a

    # --- assertions ------------------------------------------------------
    def assertAnswer(self, ans, **want):
        """Each named field of ans equals its expected value exactly (True
        and 1 are told apart)."""
        def same(a, b):
            return a == b and isinstance(a, bool) == isinstance(b, bool)
        bad = {k: (v, ans.get(k, "<absent>")) for k, v in want.items()
               if k not in ans or not same(ans[k], v)}
        if bad:
            self.fail("answer %s\n  mismatches (field: want, got): %s"
                      % (json.dumps(ans), bad))

    def assertError(self, ans, code, rid="<any>"):
        """ans is an ok:false answer with error code (and id rid)."""
        self.assertIs(ans.get("ok"), False, "want error %s, got %s"
                      % (code, json.dumps(ans)))
        err = ans.get("error")
        self.assertIsInstance(err, dict, json.dumps(ans))
        self.assertEqual(err.get("code"), code, json.dumps(ans))
        self.assertIsInstance(err.get("message"), str, json.dumps(ans))
        self.assertTrue(err["message"], "empty error message")
        if rid != "<any>":
            self.assertIn("id", ans, json.dumps(ans))
            self.assertEqual(ans["id"], rid, json.dumps(ans))

    def assertBetween(self, v, lo, hi, what=""):
        """lo <= v <= hi, for times that move with the real clock."""
        self.assertIsInstance(v, (int, float), what)
        self.assertTrue(lo <= v <= hi, "%s: %r not in [%r, %r]"
                        % (what, v, lo, hi))
