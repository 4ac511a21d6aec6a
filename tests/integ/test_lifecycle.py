"""Lifecycle (issue 2): start, ping, SIGTERM/SIGINT/SIGHUP, stale and live
sockets, socket mode, the state file, metrics, robotsctl exit statuses."""
import http.client
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile

from harness import (ROBOTSCTL, VERSION, Daemon, DaemonTest, START_TIMEOUT,
                     closed_port, poll)


class Lifecycle(DaemonTest):

    def test_ping_answers_version_and_robotsctl_ping_prints_it(self):
        c = self.start()
        self.assertAnswer(c.call({"op": "ping", "id": 1}), id=1, ok=True,
                          version=VERSION)
        r = subprocess.run([ROBOTSCTL, "-s", self.d.socket, "ping"],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual((r.returncode, r.stdout.decode()),
                         (0, "robotsd %s\n" % VERSION), r.stderr)

    def test_bad_json_then_same_connection_answers_ping(self):
        c = self.start()
        c.send_raw(b"nope\n")
        self.assertError(c.recv(), "bad_json", rid=None)
        self.assertAnswer(c.call({"op": "ping", "id": 2}), id=2, ok=True,
                          version=VERSION)

    def test_sigterm_exits_0_and_removes_socket(self):
        self.start()
        self.assertTrue(stat.S_ISSOCK(os.stat(self.d.socket).st_mode))
        self.d.stop()  # asserts exit status 0 and the socket file gone
        self.d.proc = None  # already stopped; the cleanup has nothing to do

    def test_sigint_exits_0_and_removes_socket(self):
        self.start()
        self.d.proc.send_signal(signal.SIGINT)
        self.assertEqual(self.d.wait_exit(), 0)
        self.assertFalse(os.path.exists(self.d.socket))

    def test_sigterm_answers_the_check_in_flight(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n",
                           hold=True)
        c = self.start()
        c.send({"op": "check", "url": "http://a.test/p", "agent": "A",
                "id": "inflight"})
        self.origin.wait_hits("a.test", 1)
        self.d.proc.send_signal(signal.SIGTERM)
        self.assertTrue(poll(lambda: not os.path.exists(self.d.socket)),
                        "still accepting (socket file kept) after SIGTERM")
        self.origin.release("a.test")
        self.assertAnswer(c.wait_id("inflight"), ok=True, allowed=False,
                          source="fetched", reason="rule")
        self.assertEqual(self.d.wait_exit(), 0)

    def test_sighup_reloads_config_keeping_cache_and_command_line(self):
        d = Daemon(["--default-ttl", "1000"])
        with open(d.conf, "w") as f:
            f.write("user-agent FirstAgent/1\ndefault-ttl 5000\n")
        self.daemons.append(d)
        d.start()
        self.addCleanup(d.stop)
        c = d.client()
        self.assertAnswer(c.check("http://a.test/", "A"), source="fetched")
        self.assertEqual(self.origin.hits("a.test")[0].headers["user-agent"],
                         "FirstAgent/1")
        with open(d.conf, "w") as f:
            f.write("user-agent SecondAgent/2\ndefault-ttl 7000\n")
        d.proc.send_signal(signal.SIGHUP)
        n = [0]

        def reloaded():
            n[0] += 1
            h = "r%d.test" % n[0]
            a = c.check("http://%s/" % h, "A")
            ua = self.origin.hits(h)[0].headers["user-agent"]
            return a if ua == "SecondAgent/2" else None
        a = poll(reloaded, interval=0.05)
        self.assertTrue(a, "SIGHUP did not load the new user-agent")
        self.assertBetween(a["expires_in"], 1000 - 2, 1000,
                           "--default-ttl from the command line must win")
        self.assertAnswer(c.check("http://a.test/x", "A"), source="cache")
        self.assertEqual(len(self.origin.hits("a.test")), 1)

    def test_state_file_keeps_cache_across_restart(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n",
                           headers={"Cache-Control": "max-age=5000"})
        self.origin.set("down.test", status=500)
        state = os.path.join(self.private_dir(), "state")
        c = self.start("--state-file", state)
        self.assertAnswer(c.check("http://a.test/p"), source="fetched")
        c.check("http://down.test/")
        self.d.stop()
        self.d.proc = None
        self.assertTrue(os.path.exists(state), "contract: --state-file: "
                        "the cache is saved on shutdown; no file written")
        c = self.start("--state-file", state)
        a = c.check("http://a.test/p")
        self.assertAnswer(a, ok=True, allowed=False, source="cache",
                          reason="rule", http_status=200,
                          rule={"directive": "disallow", "pattern": "/p",
                                "line": 2})
        self.assertBetween(a["expires_in"], 5000 - 10, 5000, "expires_in")
        self.assertEqual(len(self.origin.hits("a.test")), 1)
        i = self.inspect("http://down.test")
        if i.get("ok"):  # a failing origin may be kept, with its retry
            self.assertEqual(i["retry"]["fail_streak"], 1)

    def test_metrics_served_over_http(self):
        port = closed_port()
        c = self.start("--metrics", "127.0.0.1:%d" % port)
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        c.check("http://a.test/p")

        def get():
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port,
                                                  timeout=5)
                conn.request("GET", "/metrics")
                r = conn.getresponse()
                return r.status, r.getheader("Content-Type", ""), r.read()
            except OSError:
                return None
        got = poll(get, timeout=5, interval=0.05)
        self.assertTrue(got, "contract: --metrics 127.0.0.1:%d: nothing "
                        "answers HTTP at /metrics" % port)
        status, ctype, body = got
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("text/plain"), ctype)
        samples = [ln for ln in body.decode().splitlines()
                   if ln and not ln.startswith("#")]
        self.assertTrue(samples, body)
        for ln in samples:
            self.assertRegex(ln, r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? "
                             r"[-+0-9.eEInfa]+$")
        self.assertTrue([ln for ln in samples if "fetch" in ln], body)

    def test_damaged_state_file_starts_with_empty_cache(self):
        for h in ("a.test", "b.test", "c.test"):
            self.origin.robots(h, "User-agent: *\nDisallow: /p\n"
                               "Sitemap: http://%s/s.xml\n" % h)
        state = os.path.join(self.private_dir(), "state")
        c = self.start("--state-file", state)
        for h in ("a.test", "b.test", "c.test"):
            c.check("http://%s/" % h)
        self.d.stop()
        self.d.proc = None
        with open(state, "rb") as f:
            good = f.read()
        cuts = sorted({0, 1, 7, len(good) // 3, len(good) // 2,
                       len(good) - 1})
        damaged = [good[:n] for n in cuts]
        damaged.append(bytes(b ^ 0x5A for b in good))
        for data in damaged:
            with self.subTest(bytes=len(data)):
                with open(state, "wb") as f:
                    f.write(data)
                c = self.start("--state-file", state)
                self.assertAnswer(c.call({"op": "ping"}), ok=True)
                n = self.stats()["cache_entries"]
                self.assertLessEqual(n, 3)
                self.d.stop()
                self.d.proc = None

    def private_dir(self):
        d = tempfile.mkdtemp(prefix="robotsd-state-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def test_bad_option_fails_with_message_and_no_socket(self):
        for args in (["--no-such-option"], ["--max-fetches", "many"],
                     ["--socket-mode", "999"]):
            with self.subTest(args=args):
                d = Daemon(args)
                self.daemons.append(d)
                d.start(wait=False)
                rc = d.wait_exit()
                self.assertNotIn(rc, (0, None), "robotsd %s ran" % args)
                self.assertTrue(d.log().strip(), "no message on stderr")
                self.assertFalse(os.path.exists(d.socket))

    def test_default_socket_mode_is_0660(self):
        self.start()
        self.assertEqual(stat.S_IMODE(os.stat(self.d.socket).st_mode), 0o660)

    def test_socket_mode_option_is_applied(self):
        self.start("--socket-mode", "0600")
        self.assertEqual(stat.S_IMODE(os.stat(self.d.socket).st_mode), 0o600)

    def test_stale_socket_file_does_not_prevent_start(self):
        d = Daemon()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(d.socket)
        s.close()  # a leftover socket file nobody listens on
        self.assertTrue(os.path.exists(d.socket))
        self.daemons.append(d)
        d.start()
        self.addCleanup(d.stop)
        self.assertAnswer(d.client().call({"op": "ping"}), ok=True,
                          version=VERSION)

    def test_second_daemon_on_live_socket_fails_and_first_keeps_serving(self):
        c = self.start()
        second = Daemon(socket_path=self.d.socket)
        self.daemons.append(second)
        second.start(wait=False)
        rc = second.wait_exit()
        self.assertIsNotNone(rc, "second robotsd still running on a live "
                             "socket")
        self.assertNotEqual(rc, 0, "second robotsd exited 0")
        self.assertTrue(second.log().strip(), "no error message on stderr")
        self.assertTrue(os.path.exists(self.d.socket),
                        "the second daemon removed the live socket")
        self.assertAnswer(c.call({"op": "ping"}), ok=True, version=VERSION)
        fresh = self.d.client()  # and still accepts new connections
        self.assertAnswer(fresh.call({"op": "ping"}), ok=True,
                          version=VERSION)


class Robotsctl(DaemonTest):

    def ctl(self, *args):
        r = subprocess.run([ROBOTSCTL, "-s", self.d.socket] + list(args),
                           capture_output=True, timeout=START_TIMEOUT)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def test_check_exit_status_allowed_0_disallowed_1_error_2(self):
        self.origin.robots("a.test", "User-agent: *\nDisallow: /no\n")
        self.start()
        self.assertEqual(self.ctl("check", "http://a.test/yes", "Bot")[0], 0)
        self.assertEqual(self.ctl("check", "http://a.test/no", "Bot")[0], 1)
        rc, out, err = self.ctl("check", "gopher://a.test/", "Bot")
        self.assertEqual(rc, 2)
        self.assertTrue(err.strip(), "no error on stderr")
        rc, out, err = self.ctl("inspect", "http://never.test")
        self.assertEqual(rc, 2)
        self.assertTrue(err.strip(), "no error on stderr")
        self.assertEqual(self.ctl("purge", "http://a.test")[0], 0)
        self.assertEqual(self.ctl("stats")[0], 0)

    def test_no_daemon_is_error_2(self):
        self.start()
        self.d.stop()
        self.d.proc = None
        rc, out, err = self.ctl("ping")
        self.assertEqual(rc, 2)
        self.assertTrue(err.strip(), "no error on stderr")
