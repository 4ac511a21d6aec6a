"""Running under a service manager (issue 11): socket activation through
systemd-socket-activate with the sd_notify(3) messages on a NOTIFY_SOCKET
datagram socket of the test's own (READY=1, STATUS= naming the passed
socket, WATCHDOG=1 at half of WATCHDOG_USEC, STOPPING=1), -f logging to
stderr under LISTEN_FDS/NOTIFY_SOCKET, "<N>" priorities when stderr is the
journal, an admin socket passed beside the socket (named admin, kept in
config-error mode), passed sockets robotsd cannot serve, --test-clock only on the
command line, exit status 78 (EX_CONFIG) for configuration errors, and,
handed its socket, the config-error mode instead of that exit (issue 20):
every request answered with the error "config", READY=1 with the reason as
STATUS=, and SIGHUP once the file is fixed serving on the same socket."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest

from harness import (ROBOTSCTL, ROBOTSD, VERSION, START_TIMEOUT, Daemon,
                     DaemonTest, closed_port, http_get, origin, poll)

EX_CONFIG = 78
ACTIVATE = shutil.which("systemd-socket-activate")


def built_with_systemd():
    """robotsd links libsystemd (else there is no socket activation)."""
    with open(ROBOTSD, "rb") as f:
        return b"sd_listen_fds" in f.read()


needs_activate = unittest.skipUnless(
    ACTIVATE and built_with_systemd(),
    "needs systemd-socket-activate and a robotsd built with libsystemd")


class Notify:
    """A NOTIFY_SOCKET: a datagram socket collecting sd_notify messages."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setblocking(False)
        self.msgs = []

    def drain(self):
        while True:
            try:
                self.msgs.append(self.sock.recv(4096).decode())
            except BlockingIOError:
                return self.msgs

    def wait_for(self, msg, count=1, timeout=START_TIMEOUT):
        """Poll until msg was received count times; the messages so far."""
        return poll(lambda: self.drain().count(msg) >= count and self.msgs,
                    timeout, 0.01)

    def close(self):
        self.sock.close()


def journal_stream(path):
    """$JOURNAL_STREAM ("dev:ino") naming the file at path."""
    st = os.stat(path)
    return "%d:%d" % (st.st_dev, st.st_ino)


class Pipeliner:
    """One connection pipelining checks of /private/N with id N as fast as
    robotsd answers (at most 256 unanswered), each line in two writes; its
    answers by id: "config" (the error) or "verdict" (allowed false)."""

    def __init__(self, sock, name):
        self.sock, self.name = sock, name
        self.window = threading.Semaphore(256)
        self.stop = threading.Event()
        self.sent = 0
        self.answers = {}
        self.errors = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.write, daemon=True),
                        threading.Thread(target=self.read, daemon=True)]

    def start(self):
        for t in self.threads:
            t.start()

    def count(self, kind):
        with self.lock:
            return sum(1 for k in self.answers.values() if k == kind)

    def write(self):
        while not self.stop.is_set():
            self.window.acquire()
            line = ('{"op":"check","url":"http://reexec.example/private/'
                    '%s%d","agent":"A","id":%d}\n'
                    % (self.name, self.sent, self.sent)).encode()
            cut = 1 + self.sent % (len(line) - 1)
            self.sock.sendall(line[:cut])
            self.sock.sendall(line[cut:])
            self.sent += 1

    def read(self):
        for line in self.sock.makefile("rb"):
            a = json.loads(line)
            if a.get("ok") is False and a["error"]["code"] == "config":
                kind = "config"
            elif a.get("ok") is True and a.get("allowed") is False:
                kind = "verdict"
            else:
                kind = None
                self.errors.append(line)
            with self.lock:
                if a["id"] in self.answers:
                    self.errors.append(line)
                self.answers[a["id"]] = kind
            self.window.release()

    def finish(self):
        """Stop writing; wait until every line sent is answered."""
        self.stop.set()
        self.threads[0].join(START_TIMEOUT)
        assert poll(lambda: len(self.answers) >= self.sent, START_TIMEOUT)


class Service(DaemonTest):

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="robotsd-service-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.conf = self.path("empty.conf")
        open(self.conf, "w").close()
        self.errlog = self.path("stderr.log")
        self.procs = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_proc(self, args, env=None, pass_fds=()):
        """Start args with stderr in self.errlog; killed after the test."""
        errf = open(self.errlog, "wb")
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=errf,
                             stderr=errf, env=env, pass_fds=pass_fds)
        errf.close()
        self.procs.append(p)
        self.addCleanup(self.reap, p)
        return p

    def reap(self, p):
        if p.poll() is None:
            p.kill()
        p.wait()

    def stderr(self):
        with open(self.errlog, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait(self, p):
        try:
            return p.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("robotsd still running:\n%s" % self.stderr())

    def activate(self, listen, env=(), args=(), binary=ROBOTSD,
                 prefix=False):
        """binary -f under systemd-socket-activate, listening on listen
        (a list of -l addresses), with -E env; its configured socket is
        another path that must stay unused. args go to robotsd, or with
        prefix to systemd-socket-activate (--fdname=)."""
        cmd = [ACTIVATE]
        for addr in listen:
            cmd += ["-l", addr]
        for e in env:
            cmd += ["-E", e]
        if prefix:
            cmd += list(args)
        cmd += [binary, "-f", "-c", self.conf, "-s",
                self.path("configured.sock"), "--log-level", "info"]
        return self.run_proc(cmd + ([] if prefix else list(args)))

    def activate_notify(self, sock, env=(), binary=ROBOTSD):
        """activate([sock]) with a NOTIFY_SOCKET of the test's own, and a
        first client connected (which makes systemd-socket-activate exec
        robotsd); the process, the Notify and the client's socket."""
        notify = Notify(self.path("notify"))
        self.addCleanup(notify.close)
        p = self.activate([sock], ["NOTIFY_SOCKET=" + notify.path] + list(env),
                          binary=binary)
        return p, notify, self.connect(sock)

    def stop_notified(self, p, notify):
        """SIGTERM: exit 0 after STOPPING=1."""
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())
        self.assertIn("STOPPING=1", notify.drain())

    def connect(self, addr, family=socket.AF_UNIX):
        """Connect to a socket systemd-socket-activate holds (which makes it
        exec robotsd); retried until it listens."""
        def attempt():
            s = socket.socket(family, socket.SOCK_STREAM)
            try:
                s.connect(addr)
                s.settimeout(START_TIMEOUT)
                return s
            except OSError:
                s.close()
                return None
        s = poll(attempt, START_TIMEOUT, 0.02)
        self.assertTrue(s, "nothing listens on %s:\n%s" % (addr,
                                                           self.stderr()))
        self.addCleanup(s.close)
        return s

    def wait_listening(self, sock):
        """Poll until robotsd logged that it serves sock (its signal
        handlers are installed by then)."""
        self.assertTrue(poll(lambda: ("event=start version=%s socket=%s\n"
                                      % (VERSION, sock)) in self.stderr(),
                             START_TIMEOUT), self.stderr())

    # --- socket activation ----------------------------------------------
    @needs_activate
    def test_socket_activation_ready_status_watchdog_stopping(self):
        sock = self.path("passed.sock")
        notify = Notify(self.path("notify"))
        self.addCleanup(notify.close)
        p = self.activate([sock], ["NOTIFY_SOCKET=" + notify.path,
                                   "WATCHDOG_USEC=200000"])
        s = self.connect(sock)
        s.sendall(b'{"op":"ping","id":1}\n')
        self.assertEqual(s.makefile("rb").readline(),
                         ('{"id":1,"ok":true,"version":"%s"}\n'
                          % VERSION).encode())
        msgs = notify.wait_for("READY=1")
        self.assertIn("READY=1", msgs, self.stderr())
        self.assertIn("STATUS=serving " + sock, msgs)
        # WATCHDOG=1 keeps coming from the loop after READY=1, every 0.1 s.
        ready = msgs.index("READY=1")
        msgs = poll(lambda: notify.drain()[ready:].count("WATCHDOG=1") >= 3
                    and notify.msgs, START_TIMEOUT, 0.02)
        self.assertTrue(msgs, "fewer than 3 WATCHDOG=1 after READY=1: %r"
                        % notify.msgs)
        self.assertFalse(os.path.exists(self.path("configured.sock")),
                         "robotsd bound the configured socket too")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())
        self.assertIn("STOPPING=1", notify.drain())
        self.assertLess(notify.msgs.index("READY=1"),
                        notify.msgs.index("STOPPING=1"))
        # -f under LISTEN_FDS and NOTIFY_SOCKET: stderr, not syslog.
        err = self.stderr()
        self.assertRegex(err, r"Z robotsd\[%d\]: info: "
                         r"event=socket_activation socket=%s\n"
                         % (p.pid, sock))
        self.assertIn("info: event=start version=%s socket=%s\n"
                      % (VERSION, sock), err)
        self.assertIn("info: event=watchdog interval_ms=100\n", err)
        self.assertIn("info: event=stopping signal=15 waiting=0 fetches=0 "
                      "origins=- stop_timeout=10\n", err)
        self.assertIn("info: event=stopped\n", err)

    @needs_activate
    def test_no_watchdog_without_watchdog_usec(self):
        p, notify, _ = self.activate_notify(self.path("passed.sock"))
        self.assertIn("READY=1", notify.wait_for("READY=1"), self.stderr())
        self.stop_notified(p, notify)
        self.assertNotIn("WATCHDOG=1", notify.msgs)
        self.assertNotIn("watchdog", self.stderr())

    @needs_activate
    def test_passed_tcp_socket_is_refused(self):
        port = closed_port()
        p = self.activate(["127.0.0.1:%d" % port])
        self.connect(("127.0.0.1", port), socket.AF_INET)
        self.assertEqual(self.wait(p), EX_CONFIG, self.stderr())
        self.assertIn(
            "error: socket activation: the passed socket is a TCP/IP "
            "socket; robotsd serves only a listening Unix stream socket "
            "(ListenStream=/path)\n", self.stderr())
        self.assertFalse(os.path.exists(self.path("configured.sock")))

    @needs_activate
    def test_two_passed_sockets_are_refused(self):
        a, b = self.path("a.sock"), self.path("b.sock")
        p = self.activate([a, b])
        self.connect(a)
        self.assertEqual(self.wait(p), EX_CONFIG, self.stderr())
        self.assertIn("error: socket activation: 2 sockets passed; robotsd "
                      "serves exactly one Unix stream socket, and an admin "
                      "socket named admin (FileDescriptorName=admin)\n",
                      self.stderr())

    @needs_activate
    def test_passed_admin_socket_is_served_and_may_purge(self):
        a, b = self.path("a.sock"), self.path("b.sock")
        p = self.activate([a, b], args=["--fdname=robotsd.socket:admin"],
                          prefix=True)
        self.connect(a).close()
        admin = self.connect(b)
        admin.sendall(b'{"op":"purge","all":true,"id":1}\n')
        self.assertEqual(admin.makefile("rb").readline(),
                         b'{"id":1,"ok":true,"purged":0}\n')
        self.assertIn("info: event=admin_socket socket=%s passed=yes\n" % b,
                      self.stderr())
        admin.close()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())
        # systemd's sockets: robotsd removes neither file.
        self.assertTrue(os.path.exists(a) and os.path.exists(b))

    @needs_activate
    def test_config_error_mode_keeps_the_admin_socket(self):
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        a, b = self.path("a.sock"), self.path("b.sock")
        p = self.activate([a, b], args=["--fdname=robotsd.socket:admin"],
                          prefix=True)
        self.connect(a).close()
        admin = self.connect(b)
        admin.sendall(b'{"op":"purge","all":true,"id":1}\n')
        self.assertEqual(admin.makefile("rb").readline(), self.config_error(
            "%s:1: unknown option 'bogus-option'" % self.conf)("1"))
        admin.close()
        # Fixed, SIGHUP: robotsd executes itself anew with both sockets.
        open(self.conf, "w").close()
        p.send_signal(signal.SIGHUP)
        self.assertTrue(poll(lambda: "event=admin_socket" in self.stderr(),
                             START_TIMEOUT), self.stderr())
        admin = self.connect(b)
        admin.sendall(b'{"op":"purge","all":true,"id":2}\n')
        self.assertEqual(admin.makefile("rb").readline(),
                         b'{"id":2,"ok":true,"purged":0}\n')
        self.assertIn("info: event=admin_socket socket=%s passed=yes\n" % b,
                      self.stderr())
        admin.close()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())

    @needs_activate
    def test_only_an_admin_socket_passed_is_refused(self):
        a = self.path("a.sock")
        p = self.activate([a], args=["--fdname=admin"], prefix=True)
        self.connect(a)
        self.assertEqual(self.wait(p), EX_CONFIG, self.stderr())
        self.assertIn("error: socket activation: only the admin socket was "
                      "passed; robotsd needs its own socket too\n",
                      self.stderr())

    @needs_activate
    def test_refused_socket_is_logged_at_error_priority_in_the_journal(self):
        port = closed_port()
        open(self.errlog, "wb").close()
        js = journal_stream(self.errlog)
        # stderr (opened again by run_proc) is the same file: same dev:ino.
        p = self.activate(["127.0.0.1:%d" % port], ["JOURNAL_STREAM=" + js])
        self.connect(("127.0.0.1", port), socket.AF_INET)
        self.assertEqual(self.wait(p), EX_CONFIG, self.stderr())
        self.assertIn("\n<3>error: socket activation: the passed socket is "
                      "a TCP/IP socket;", "\n" + self.stderr())

    # --- -f logging without socket activation ---------------------------
    def test_f_logs_to_stderr_with_notify_socket_set(self):
        notify = Notify(self.path("notify"))
        self.addCleanup(notify.close)
        sock = self.path("robotsd.sock")
        env = dict(os.environ, NOTIFY_SOCKET=notify.path)
        env.pop("JOURNAL_STREAM", None)
        env.pop("LISTEN_FDS", None)
        p = self.run_proc([ROBOTSD, "-f", "-c", self.conf, "-s", sock,
                           "--log-level", "info"], env)
        self.wait_listening(sock)
        if built_with_systemd():
            self.assertIn("STATUS=serving " + sock, notify.wait_for("READY=1"))
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())
        self.assertRegex(self.stderr(), r"Z robotsd\[%d\]: info: event=start "
                         r"version=%s socket=%s\n" % (p.pid, VERSION, sock))

    def test_f_with_journal_stderr_uses_priority_prefixes(self):
        sock = self.path("robotsd.sock")
        open(self.errlog, "wb").close()
        env = dict(os.environ, JOURNAL_STREAM=journal_stream(self.errlog))
        p = self.run_proc([ROBOTSD, "-f", "-c", self.conf, "-s", sock,
                           "--log-level", "info", "--test-clock"], env)
        self.wait_listening(sock)
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.wait(p), 0, self.stderr())
        err = self.stderr()
        self.assertIn('<4>warn: event=test_clock_on note="TEST CLOCK ON '
                      "(--test-clock): any client of the socket can move "
                      "robotsd's clock; for tests only, never in "
                      'production"\n', err)
        self.assertIn("<6>info: event=start version=%s socket=%s\n"
                      % (VERSION, sock), err)

    # --- configuration errors --------------------------------------------
    def test_test_clock_in_config_file_is_refused(self):
        with open(self.conf, "w") as f:
            f.write("# tests only\ntest-clock yes\n")
        for extra in ([], ["-n"]):
            with self.subTest(extra=extra):
                p = self.run_proc([ROBOTSD, "-f", "-c", self.conf, "-s",
                                   self.path("robotsd.sock")] + extra)
                self.assertEqual(self.wait(p), EX_CONFIG)
                self.assertEqual(self.stderr(), "robotsd: %s:2: test-clock: "
                                 "only valid on the command line\n"
                                 % self.conf)
                self.assertFalse(os.path.exists(self.path("robotsd.sock")))

    def test_test_clock_on_command_line_is_logged_as_warning(self):
        self.start()  # the harness passes --test-clock
        self.assertRegex(self.d.log(), r"robotsd\[\d+\]: warn: "
                         r'event=test_clock_on note="TEST CLOCK ON '
                         r"\(--test-clock\)")

    def test_bad_config_exits_78_at_error_priority_in_the_journal(self):
        with open(self.conf, "w") as f:
            f.write("max-fetches many\n")
        open(self.errlog, "wb").close()
        env = dict(os.environ, JOURNAL_STREAM=journal_stream(self.errlog))
        for extra in (["-f"], ["-n"], []):
            with self.subTest(extra=extra):
                p = self.run_proc([ROBOTSD, "-c", self.conf] + extra, env)
                self.assertEqual(self.wait(p), EX_CONFIG)
                self.assertEqual(
                    self.stderr(), "<3>robotsd: %s:1: max-fetches: 'many' is "
                    "not a number between 1 and 1000000\n" % self.conf)

    # --- config-error mode ------------------------------------------------
    def config_error(self, line):
        """The answer line to a request carrying id, while the config file
        does not load with the error at conf:line (docs/protocol.md)."""
        return lambda rid: (
            '{"id":%s,"ok":false,"error":{"code":"config","message":'
            '"robotsd\'s configuration does not load: %s"}}\n'
            % (rid, line)).encode()

    @needs_activate
    def test_bad_config_with_passed_socket_answers_config_error(self):
        with open(self.conf, "w") as f:
            f.write("# robotsd.conf\nbogus-option 1\n")
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock, ["WATCHDOG_USEC=200000"])
        r = s.makefile("rb")
        answer = self.config_error(
            "%s:2: unknown option 'bogus-option'" % self.conf)
        s.sendall(b'{"op":"ping","id":1}\n')
        self.assertEqual(r.readline(), answer("1"), self.stderr())
        # The connection lives on: any request, pipelined, blank lines
        # skipped, a line that is no JSON object answered with id null.
        s.sendall(b'{"op":"check","url":"http://a.example/","agent":"A",'
                  b'"id":"two"}\r\n\n  \nnot json\n{"op":"stats","id":[3]}\n')
        self.assertEqual([r.readline() for _ in range(3)],
                         [answer('"two"'), answer("null"), answer("[3]")])
        # An over-long line: one answer, id null; the next line is answered.
        s.sendall(b"x" * 70000 + b'\n{"op":"ping","id":4}\n')
        self.assertEqual([r.readline() for _ in range(2)],
                         [answer("null"), answer("4")])
        msgs = notify.wait_for("READY=1")
        self.assertIn("STATUS=config error: %s:2: unknown option "
                      "'bogus-option'; answering every request with error "
                      "config until the file is fixed (robotsd -n, then "
                      "systemctl restart or reload)" % self.conf, msgs)
        ready = msgs.index("READY=1")
        self.assertTrue(
            poll(lambda: notify.drain()[ready:].count("WATCHDOG=1") >= 3,
                 START_TIMEOUT, 0.02),
            "fewer than 3 WATCHDOG=1 in config-error mode: %r" % notify.msgs)
        err = self.stderr()
        self.assertIn("robotsd: %s:2: unknown option 'bogus-option'\n"
                      % self.conf, err)
        self.assertRegex(err, r"robotsd\[%d\]: warn: event=config_error "
                         r"socket=%s note=" % (p.pid, sock))
        # SIGHUP, still bad: the new cause is answered, robotsd stays.
        with open(self.conf, "w") as f:
            f.write("max-fetches many\n")
        p.send_signal(signal.SIGHUP)
        answer = self.config_error("%s:1: max-fetches: 'many' is not a "
                                   "number between 1 and 1000000" % self.conf)
        self.assertTrue(poll(lambda: "event=reload outcome=failed" in
                             self.stderr(), START_TIMEOUT), self.stderr())
        s.sendall(b'{"op":"ping","id":5}\n')
        self.assertEqual(r.readline(), answer("5"))
        # Fixed, SIGHUP: the same process serves on the same socket file.
        inode = os.stat(sock).st_ino
        open(self.conf, "w").close()
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)
        self.assertIn("info: event=reload outcome=reexec", self.stderr())
        # The connection survives the re-exec, now answered for real.
        s.sendall(b'{"op":"ping","id":"after"}\n')
        self.assertEqual(r.readline(),
                         ('{"id":"after","ok":true,"version":"%s"}\n'
                          % VERSION).encode())
        t = self.connect(sock)
        t.sendall(b'{"op":"ping","id":6}\n')
        self.assertEqual(t.makefile("rb").readline(),
                         ('{"id":6,"ok":true,"version":"%s"}\n'
                          % VERSION).encode())
        self.assertEqual(os.stat(sock).st_ino, inode)
        self.assertRegex(self.stderr(), r"robotsd\[%d\]: info: event=start "
                         r"version=%s socket=%s\n" % (p.pid, VERSION, sock))
        self.assertFalse(os.path.exists(self.path("configured.sock")))
        self.stop_notified(p, notify)

    def http_get(self, port, path):
        """(status, body) of GET path on 127.0.0.1:port; None if refused."""
        try:
            return http_get(port, path)
        except OSError:
            return None

    @needs_activate
    def test_config_error_mode_serves_metrics_and_ping_names_it(self):
        # The metrics line comes after the bad one: the file is read past
        # its errors for it (config_metrics_address()).
        port = closed_port()
        with open(self.conf, "w") as f:
            f.write("max-fetchs 3\nmetrics 127.0.0.1:%d\n" % port)
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock)
        notify.wait_for("READY=1")
        why = ("%s:1: unknown option 'max-fetchs'; did you mean "
               "max-fetches?" % self.conf)
        got = poll(lambda: self.http_get(port, "/metrics"), START_TIMEOUT,
                   0.02)
        self.assertTrue(got, self.stderr())
        self.assertEqual(got[0], 200)
        self.assertIn("\n# TYPE robotsd_config_error gauge\n"
                      "robotsd_config_error 1\n", got[1])
        self.assertIn('robotsd_build_info{version="%s"} 1\n' % VERSION,
                      got[1])
        self.assertEqual(self.http_get(port, "/healthz"), (503, "starting\n"))
        self.assertRegex(self.stderr(), r"robotsd\[%d\]: info: event=metrics "
                         r"addr=127.0.0.1:%d config_error=1\n" % (p.pid, port))
        r = subprocess.run([ROBOTSCTL, "-s", sock, "ping"],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual(
            (r.returncode, r.stdout.decode(), r.stderr.decode()),
            (2, "", "robotsctl: robotsd is in config-error mode (it answers "
             "every request with error config): robotsd's configuration "
             "does not load: %s\n" % why))
        # Other commands keep the plain "CODE: MESSAGE".
        r = subprocess.run([ROBOTSCTL, "-s", sock, "stats"],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual(r.stderr.decode(), "robotsctl: config: robotsd's "
                         "configuration does not load: %s\n" % why)
        # Fixed, SIGHUP: the new image serves /metrics on the same port,
        # robotsd_config_error 0.
        with open(self.conf, "w") as f:
            f.write("metrics 127.0.0.1:%d\n" % port)
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)

        def serving():
            got = self.http_get(port, "/metrics")
            return got is not None and "robotsd_config_error 0\n" in got[1]
        self.assertTrue(poll(serving, START_TIMEOUT, 0.02), self.stderr())
        self.assertEqual(self.http_get(port, "/healthz"), (200, "serving\n"))
        self.stop_notified(p, notify)

    @needs_activate
    def test_reload_names_the_options_that_need_a_restart(self):
        with open(self.conf, "w") as f:
            f.write("max-connections 10\n")
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock)
        notify.wait_for("READY=1")
        self.wait_listening(sock)
        with open(self.conf, "w") as f:
            f.write("max-connections 20\nmax-fetches 3\nmax-line 1024\n")
        p.send_signal(signal.SIGHUP)
        msgs = notify.wait_for("READY=1", count=2)
        self.assertIn("STATUS=serving %s; reloaded, but these options take "
                      "effect only after a restart: max-connections,"
                      "max-line" % sock, msgs)
        self.assertRegex(
            self.stderr(), r"robotsd\[%d\]: warn: event=reload outcome=ok "
            r"needs_restart=max-connections,max-line note=" % p.pid)
        # The file back as robotsd runs it: the status is plain again.
        with open(self.conf, "w") as f:
            f.write("max-connections 10\n")
        p.send_signal(signal.SIGHUP)
        msgs = notify.wait_for("READY=1", count=3)
        self.assertEqual(msgs[-2:], ["STATUS=serving " + sock, "READY=1"])
        self.stop_notified(p, notify)

    @needs_activate
    def test_config_error_mode_pauses_accepting_when_descriptors_run_out(self):
        # accept() failing with EMFILE leaves the socket readable: retried
        # at once it would spin and flood the log; it pauses instead, and
        # clients are answered again once descriptors are free.
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock)
        s.sendall(b'{"op":"ping","id":1}\n')
        self.assertIn(b'"code":"config"', s.makefile("rb").readline())
        used = len(os.listdir("/proc/%d/fd" % p.pid))
        subprocess.run(["prlimit", "--pid", str(p.pid),
                        "--nofile=%d:" % (used + 10)], check=True)
        held = []
        for _ in range(40):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.addCleanup(c.close)
            c.setblocking(False)
            c.connect_ex(sock)
            held.append(c)
        self.assertTrue(poll(lambda: "Too many open files" in self.stderr(),
                             START_TIMEOUT), "descriptors never ran out")
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu():
            with open("/proc/%d/stat" % p.pid) as f:
                field = f.read().rsplit(")", 1)[1].split()
            return (int(field[11]) + int(field[12])) / ticks
        spent = cpu()
        time.sleep(1)  # a wall-clock second of the real daemon's CPU time
        self.assertLess(cpu() - spent, 0.3, "accept() retried in a loop")
        self.assertLessEqual(self.stderr().count("Too many open files"), 5,
                             self.stderr()[-2000:])
        for c in held:
            c.close()
        t = self.connect(sock)
        t.sendall(b'{"op":"ping","id":2}\n')
        self.assertIn(b'"code":"config"', t.makefile("rb").readline())
        self.stop_notified(p, notify)

    def comm(self, pid):
        with open("/proc/%d/comm" % pid) as f:
            return f.read()

    def pgrep_x(self, name):
        """The pids pgrep -x name finds (by the process's name, comm)."""
        r = subprocess.run(["pgrep", "-x", name], capture_output=True,
                           text=True, timeout=START_TIMEOUT)
        return [int(pid) for pid in r.stdout.split()]

    @needs_activate
    @unittest.skipUnless(shutil.which("pgrep"), "needs pgrep")
    def test_reexec_out_of_config_error_mode_keeps_the_name(self):
        # The kernel names a process after the file it executes: executed
        # anew from /proc/self/exe, robotsd was "exe" to ps, pgrep -x and
        # systemctl status.
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        sock = self.path("passed.sock")
        p, notify, _ = self.activate_notify(sock)
        notify.wait_for("READY=1")
        self.assertEqual(self.comm(p.pid), "robotsd\n")
        open(self.conf, "w").close()
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)
        self.assertEqual(self.comm(p.pid), "robotsd\n", self.stderr())
        self.assertIn(p.pid, self.pgrep_x("robotsd"))
        self.stop_notified(p, notify)

    @needs_activate
    def test_reexec_out_of_config_error_mode_runs_the_upgraded_file(self):
        # An upgrade renames a new file over the one robotsd was started
        # from: executed anew, robotsd runs the new file, not the old
        # image. The new file here is a script that leaves a mark and runs
        # the real robotsd, in the same process.
        bindir = self.path("bin")
        os.mkdir(bindir)
        installed = os.path.join(bindir, "robotsd")
        shutil.copy2(ROBOTSD, installed)
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        sock = self.path("passed.sock")
        p, notify, _ = self.activate_notify(sock, binary=installed)
        notify.wait_for("READY=1")
        mark = self.path("upgraded")
        new = installed + ".dpkg-new"
        with open(new, "w") as f:
            f.write('#!/bin/sh\necho $$ >"%s"\nexec "%s" "$@"\n'
                    % (mark, ROBOTSD))
        os.chmod(new, 0o755)
        os.rename(new, installed)
        open(self.conf, "w").close()
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)
        with open(mark) as f:
            self.assertEqual(f.read(), "%d\n" % p.pid)
        self.assertEqual(self.comm(p.pid), "robotsd\n")
        self.stop_notified(p, notify)

    @needs_activate
    def test_reexec_loses_no_request_in_flight(self):
        # The re-exec out of config-error mode closed every client: about
        # 1% of pipelined requests went unanswered. Two connections
        # pipeline checks, each line sent in two pieces (so that a partial
        # line is read at the re-exec), through the fixed file's SIGHUP:
        # every line gets exactly one answer, "config" before the re-exec
        # and a real verdict after, on the same connections.
        origin().set("reexec.example",
                     body=b"User-agent: *\nDisallow: /private\n")
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        sock = self.path("passed.sock")
        notify = Notify(self.path("notify"))
        self.addCleanup(notify.close)
        p = self.activate([sock], ["NOTIFY_SOCKET=" + notify.path], args=[
            "--connect-to", "::127.0.0.1:%d" % origin().port])
        clients = [Pipeliner(self.connect(sock), n) for n in ("a", "b")]
        self.assertTrue(notify.wait_for("READY=1"), self.stderr())
        for c in clients:
            c.start()
        self.assertTrue(poll(lambda: all(c.count("config") >= 300
                                         for c in clients), START_TIMEOUT))
        open(self.conf, "w").close()
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)
        self.assertTrue(poll(lambda: all(c.count("verdict") >= 300
                                         for c in clients), START_TIMEOUT),
                        self.stderr())
        for c in clients:
            c.finish()
        for c in clients:
            self.assertEqual(c.errors, [])
            self.assertEqual(sorted(c.answers), list(range(c.sent)))
            kinds = [c.answers[i] for i in range(c.sent)]
            first = kinds.index("verdict")
            self.assertEqual(kinds[:first], ["config"] * first)
            self.assertEqual(kinds[first:], ["verdict"] * (c.sent - first))
        self.assertRegex(self.stderr(), r"info: event=handover "
                         r"connections=2\n(.*\n)*.*info: event=handover "
                         r"connections=2\n")
        self.stop_notified(p, notify)

    def handed_over(self, records, fds, pid_ok=True):
        """robotsd started with $ROBOTSD_HANDOVER naming a memfd holding
        records ((fd, flags, in, out) or raw bytes) for its own pid (or
        another's), with fds inherited; once it serves, its stderr."""
        memfd = os.memfd_create("crafted", 0)
        self.addCleanup(os.close, memfd)
        for r in records:
            if isinstance(r, tuple):
                fd, flags, data_in, data_out = r
                r = struct.pack("=IiIII", 0x52484f31, fd, flags,
                                len(data_in), len(data_out)) + data_in + \
                    data_out
            os.write(memfd, r)
        pid = "$$" if pid_ok else "1"
        sock = self.path("robotsd.sock")
        self.run_proc(["sh", "-c", 'ROBOTSD_HANDOVER=%s:%d exec "$0" "$@"'
                       % (pid, memfd), ROBOTSD, "-f", "-c", self.conf, "-s",
                       sock, "--log-level", "info"],
                      pass_fds=[memfd] + fds)
        self.wait_listening(sock)
        self.assertTrue(poll(lambda: "event=handover " in self.stderr()
                             or "handover_ignored" in self.stderr(),
                             START_TIMEOUT), self.stderr())
        return self.stderr()

    def test_crafted_handover_adopts_only_real_connections(self):
        # $ROBOTSD_HANDOVER comes from the environment: every fd and byte
        # it names is checked. Only a connected Unix stream socket is
        # adopted: its carried answer is written first, its carried
        # requests answered, the partial one completed by its client.
        mine, theirs = socket.socketpair()
        self.addCleanup(mine.close)
        self.addCleanup(theirs.close)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(self.path("l.sock"))
        listener.listen()
        tcp_l = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(tcp_l.close)
        tcp = socket.create_connection(tcp_l.getsockname())
        self.addCleanup(tcp.close)
        rp, wp = os.pipe()
        self.addCleanup(os.close, rp)
        self.addCleanup(os.close, wp)
        good = theirs.fileno()
        bad = [0, 2, listener.fileno(), rp, tcp.fileno(), 999]
        err = self.handed_over(
            [(good, 0, b'{"op":"ping","id":"carried"}\n{"op":"ping","id":',
              b"an answer the image before queued\n"),
             (good, 0, b"", b"named twice\n")] +
            [(fd, 0, b"", b"") for fd in bad] +
            [struct.pack("=IiIII", 0x52484f31, good, 0, 1 << 30, 0),
             (good, 0, b"", b"after the bad record\n")],
            [good, listener.fileno(), rp, tcp.fileno()])
        self.assertIn("info: event=handover connections=1\n", err)
        self.assertEqual(err.count("warn: event=handover_skipped"), 7, err)
        mine.settimeout(START_TIMEOUT)
        mine.sendall(b'"partial"}\n')
        r = mine.makefile("rb")
        self.assertEqual(
            [r.readline() for _ in range(3)],
            [b"an answer the image before queued\n"] + [
                ('{"id":"%s","ok":true,"version":"%s"}\n'
                 % (i, VERSION)).encode() for i in ("carried", "partial")])
        # The pipe robotsd was handed but did not adopt is left open.
        self.assertEqual(os.write(wp, b"x"), 1)

    def test_handover_for_another_pid_is_ignored(self):
        mine, theirs = socket.socketpair()
        self.addCleanup(mine.close)
        self.addCleanup(theirs.close)
        err = self.handed_over(
            [(theirs.fileno(), 0, b'{"op":"ping","id":1}\n', b"")],
            [theirs.fileno()], pid_ok=False)
        self.assertIn("warn: event=handover_ignored", err)
        self.assertNotIn("event=handover ", err)

    @needs_activate
    def test_term_right_after_a_reexecuting_hup_always_stops(self):
        # A TERM sent while a HUP makes robotsd execute itself anew was
        # lost in 6 of 30 tries (taken by the old image's handler, never
        # dispatched): the new image served on, and systemctl stop waited
        # for its timeout. It must stop robotsd every time, before or
        # after the new image starts.
        for i in range(30):
            with open(self.conf, "w") as f:
                f.write("bogus-option 1\n")
            notify = Notify(self.path("notify%d" % i))
            self.addCleanup(notify.close)
            sock = self.path("passed%d.sock" % i)
            p = self.activate([sock], ["NOTIFY_SOCKET=" + notify.path])
            self.connect(sock)
            self.assertTrue(notify.wait_for("READY=1"), self.stderr())
            open(self.conf, "w").close()
            p.send_signal(signal.SIGHUP)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(self.wait(p), 0, "round %d" % i)
            self.assertIn("info: event=stopped\n", self.stderr())

    @needs_activate
    def test_a_config_that_cannot_start_is_config_error_mode(self):
        # The file loads, but its metrics port is taken: robotsd exited 1
        # and its clients got ECONNREFUSED. Handed its socket, it answers
        # "config" naming the cause, and serves once HUP finds it gone.
        taken = socket.socket()
        self.addCleanup(taken.close)
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        addr = "127.0.0.1:%d" % taken.getsockname()[1]
        with open(self.conf, "w") as f:
            f.write("metrics %s\n" % addr)
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock)
        cause = ("metrics: cannot listen on %s (Address already in use)"
                 % addr)
        s.sendall(b'{"op":"ping","id":1}\n')
        self.assertEqual(
            s.makefile("rb").readline(),
            ('{"id":1,"ok":false,"error":{"code":"config","message":'
             '"robotsd cannot start with its configuration: %s"}}\n'
             % cause).encode(), self.stderr())
        self.assertIn("STATUS=start error: %s; answering every request with "
                      "error config until the cause is fixed (then "
                      "systemctl restart or reload)" % cause,
                      notify.wait_for("READY=1"))
        err = self.stderr()
        self.assertIn("error: %s\n" % cause, err)
        self.assertRegex(err, r"robotsd\[%d\]: warn: event=config_error "
                         r"socket=%s note=\"robotsd cannot start" % (p.pid,
                                                                   sock))
        taken.close()
        p.send_signal(signal.SIGHUP)
        self.wait_listening(sock)
        t = self.connect(sock)
        t.sendall(b'{"op":"ping","id":2}\n')
        self.assertEqual(t.makefile("rb").readline(),
                         ('{"id":2,"ok":true,"version":"%s"}\n'
                          % VERSION).encode())
        self.stop_notified(p, notify)

    @needs_activate
    def test_reexec_into_a_start_error_keeps_the_connection(self):
        # The file loads after the HUP but cannot start (its metrics port
        # is taken): the new image is in config-error mode again, and
        # adopts the connection there.
        taken = socket.socket()
        self.addCleanup(taken.close)
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        addr = "127.0.0.1:%d" % taken.getsockname()[1]
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        sock = self.path("passed.sock")
        p, notify, s = self.activate_notify(sock)
        r = s.makefile("rb")
        # One write: read at once, so the partial line is carried over.
        s.sendall(b'{"op":"ping","id":1}\n{"op":"ping","id":')
        self.assertEqual(r.readline(), self.config_error(
            "%s:1: unknown option 'bogus-option'" % self.conf)("1"))
        with open(self.conf, "w") as f:
            f.write("metrics %s\n" % addr)
        p.send_signal(signal.SIGHUP)
        self.assertTrue(poll(lambda: self.stderr().count(
            "event=handover connections=1\n") == 2, START_TIMEOUT),
            self.stderr())
        s.sendall(b'2}\n')
        self.assertEqual(
            r.readline(),
            ('{"id":2,"ok":false,"error":{"code":"config","message":'
             '"robotsd cannot start with its configuration: metrics: '
             'cannot listen on %s (Address already in use)"}}\n'
             % addr).encode(), self.stderr())
        self.stop_notified(p, notify)

    @needs_activate
    def test_config_error_mode_stops_with_0_on_term(self):
        with open(self.conf, "w") as f:
            f.write("bogus-option 1\n")
        p, notify, _ = self.activate_notify(self.path("passed.sock"))
        self.assertIn("READY=1", notify.wait_for("READY=1"), self.stderr())
        self.stop_notified(p, notify)
        self.assertIn("info: event=stopped\n", self.stderr())

    def test_bad_command_line_exits_78(self):
        d = Daemon(["--no-such-option"])
        self.daemons.append(d)
        d.start(wait=False)
        self.assertEqual(d.wait_exit(), EX_CONFIG)
        self.assertEqual(d.log(), "robotsd: unknown option '--no-such-option'")

    def test_check_only_good_config_exits_0(self):
        r = subprocess.run([ROBOTSD, "-n", "-c", self.conf],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, b"configuration OK\n", b""))


if __name__ == "__main__":
    unittest.main()
