"""TLS and ACL users to the shared tier (issue 25), against real servers:
redis-server, and valkey-server where it is installed, each started with
a TLS port and an ACL user with exactly the rights docs/scaling.md gives
robotsd. A fleet of two shares one cache over TLS as that user; an
untrusted CA, an expired certificate, a wrong name or a plain-text server
behind rediss:// each give local-only operation and one log line saying
why, never a crash and never a byte of plain text. A robotsd whose hiredis
has no TLS (Debian 12's 0.14) refuses rediss:// at start (exit 78); its
ACL tests run all the same. Certificates are made by the openssl command."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading

from harness import ROBOTSD, START_TIMEOUT, DaemonTest, closed_port, poll
from redisfix import EX_CONFIG, RULES, Peer, Redis, tier_built

# docs/scaling.md's rule: robotsd's keys and channels, the commands it
# sends and those its scripts call (EVAL runs them as the same user).
ACL_RULE = ("on resetkeys ~robotsd:v1:* resetchannels &robotsd:v1:* -@all "
            "+get +set +del +exists +pexpire +pttl +eval +publish "
            "+subscribe +ping +select")
USER, PASSWORD = "robotsd", "fleet-secret-1"
NO_TLS = ("robotsd: redis: rediss://127.0.0.1:%d/0: rediss:// needs TLS, "
          "and this robotsd was built without it (TLS needs hiredis 1.0 or "
          "later with hiredis_ssl, as in Debian 13)")
_tls = []


def tls_built():
    """Whether robotsd speaks TLS to Redis: -n takes a rediss:// URL, or
    refuses it with exit 78 and NO_TLS."""
    if not _tls:
        port = closed_port()
        r = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null", "--redis",
                            "rediss://127.0.0.1:%d" % port],
                           capture_output=True, timeout=START_TIMEOUT)
        out = (r.returncode, r.stdout.decode(), r.stderr.decode())
        if out == (0, "configuration OK\n", ""):
            _tls.append(True)
        elif out == (EX_CONFIG, "", NO_TLS % port + "\n"):
            _tls.append(False)
        else:
            raise AssertionError("robotsd -n --redis rediss://: %r" % (out,))
    return _tls[0]


def servers():
    """The Redis servers to test against: each one installed."""
    return [s for s in ("redis-server", "valkey-server") if shutil.which(s)]


def openssl(*args, cwd):
    subprocess.run(("openssl",) + args, cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Certs:
    """A CA and what it signs, in dir: server.pem for localhost and
    127.0.0.1, expired.pem (the same names, expired), client.pem; and a
    second CA, other.pem, that signed nothing robotsd sees."""

    def __init__(self, d):
        self.dir = d
        for ca in ("ca", "other"):
            openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    ca + ".key", "-out", ca + ".pem", "-subj",
                    "/CN=robotsd test " + ca, "-days", "2", cwd=d)
        with open(os.path.join(d, "ext"), "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        self.sign("server", "/CN=localhost", "-days", "2")
        self.sign("expired", "/CN=localhost", "-not_before",
                  "20200101000000Z", "-not_after", "20200102000000Z",
                  key="server")
        self.sign("client", "/CN=robotsd", "-days", "2")

    def sign(self, name, subj, *validity, key=None):
        key = key or name
        if not os.path.exists(os.path.join(self.dir, key + ".key")):
            openssl("genpkey", "-algorithm", "EC", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-out", key + ".key",
                    cwd=self.dir)
        openssl("req", "-new", "-key", key + ".key", "-out", name + ".csr",
                "-subj", subj, cwd=self.dir)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem",
                "-CAkey", "ca.key", "-out", name + ".pem", "-extfile",
                "ext", *validity, cwd=self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)


class Capture(Peer):
    """A TCP listener where a rediss:// URL points: keeps the first bytes
    of each connection, answers nothing, closes."""

    def __init__(self):
        self.first = []
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        super().__init__(listener)

    def serve(self, c):
        def keep():
            try:
                c.settimeout(5)
                self.first.append(c.recv(5))
            except OSError:
                pass
            c.close()
        self.thread(keep)


class TierTest(DaemonTest):
    """A private directory; servers started with the ACL user."""

    def setUp(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="robotsd-tls-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def server(self, exe, *extra, port=None):
        r = Redis(self.tmp, "%s-%d" % (exe, len(os.listdir(self.tmp))),
                  port=port, exe=exe, extra=list(extra)).start()
        self.addCleanup(r.stop)
        r.cmd("ACL", "SETUSER", USER, *(ACL_RULE.split() +
                                        [">" + PASSWORD]))
        return r

    def acl_denials(self, r):
        return [e for e in r.cmd("ACL", "LOG") or []]

    def fleet_shares(self, url, *args, host="tls.fleet.test"):
        """Two instances on url: B answers from A's fetch."""
        self.origin.robots(host, RULES)
        a = self.start("--redis", url, "--redis-timeout", "2000", *args)
        b = self.start("--redis", url, "--redis-timeout", "2000", *args)
        for c in (a, b):
            self.assertTrue(poll(lambda: self.stats(c)["redis_up_0"] == 1),
                            self.stats(c))
        first = self.check("http://%s/private/x" % host, client=a)
        self.assertAnswer(first, ok=True, allowed=False, source="fetched")
        second = poll(lambda: self.check("http://%s/private/y" % host,
                                         client=b))
        self.assertAnswer(second, ok=True, allowed=False, source="shared")
        self.assertEqual(len(self.origin.hits(host)), 1)
        return a, b


class AclUser(TierTest):
    """The ACL user of docs/scaling.md is all robotsd needs: everything
    it does on a fleet (reads, locks, publishes, waits, the change feed,
    failure states, purge) runs as that user with no command or key
    refused, on either hiredis."""

    def test_fleet_needs_nothing_more_than_the_rule(self):
        for exe in servers():
            with self.subTest(server=exe):
                r = self.server(exe)
                url = "unix://%s:%s@%s" % (USER, PASSWORD, r.sock)
                a, b = self.fleet_shares(url, host=exe + ".acl.test")
                # a wait on another instance's lock: one fetch for both
                slow = exe + ".slow.test"
                self.origin.robots(slow, RULES, delay=0.5)
                both = [None, None]

                def ask(i, c):
                    both[i] = self.check("http://%s/private/x" % slow,
                                         client=c)
                ts = [threading.Thread(target=ask, args=(i, c))
                      for i, c in enumerate((a, b))]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                self.assertEqual(sorted(x["source"] for x in both),
                                 ["fetched", "shared"], both)
                self.assertEqual(len(self.origin.hits(slow)), 1)
                w = self.d.client()
                self.assertEqual(w.call({"op": "watch", "all": True})
                                 .get("ok"), True)
                # a change fetched by A reaches B's watcher over the feed
                self.origin.robots(exe + ".acl.test",
                                   "User-agent: *\nDisallow: /\n")
                self.advance(100000, client=a)
                self.check("http://%s.acl.test/" % exe, client=a)
                ev = w.recv(timeout=10)
                self.assertEqual(ev.get("event"), "changed", ev)
                # a failing origin's state is shared
                self.origin.robots(exe + ".down.test", "", status=503)
                self.check("http://%s.down.test/" % exe, client=a)
                self.assertTrue(poll(lambda: r.cmd(
                    "EXISTS", "robotsd:v1:e:{http://%s.down.test}" % exe)))
                p = a.call({"op": "purge", "all": True})
                self.assertIs(p.get("ok"), True, p)
                self.assertEqual(self.acl_denials(r), [])
                st = self.stats(a)
                self.assertEqual(st["redis_errors"], 0, st)
                for d in list(self.daemons):
                    d.stop()
                self.daemons.clear()

    def test_wrong_password_is_local_only(self):
        r = self.server(servers()[0])
        self.origin.robots("pw.test", RULES)
        c = self.start("--redis", "unix://%s:wrong@%s" % (USER, r.sock))
        self.assertTrue(poll(lambda: "handshake refused" in
                             self.d.log(100000)), self.d.log())
        a = self.check("http://pw.test/private/x")
        self.assertAnswer(a, ok=True, allowed=False, source="fetched")
        self.assertEqual(self.stats(c)["redis_up_0"], 0)

    def test_password_file_with_a_user_name(self):
        r = self.server(servers()[0])
        pw = os.path.join(self.tmp, "pw")
        with open(pw, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(pw, 0o600)
        self.fleet_shares("unix://%s@%s" % (USER, r.sock),
                          "--redis-password-file", pw, host="pwfile.test")


class NoTls(TierTest):

    def test_rediss_is_refused_where_tls_is_not_built(self):
        if tls_built():
            self.skipTest("robotsd speaks TLS to Redis")
        port = closed_port()
        r = subprocess.run([ROBOTSD, "-f", "-c", "/dev/null", "--redis",
                            "rediss://127.0.0.1:%d" % port],
                           capture_output=True, timeout=START_TIMEOUT)
        self.assertEqual(r.returncode, EX_CONFIG)
        self.assertIn(NO_TLS[len("robotsd: "):] % port, r.stderr.decode())


class Tls(TierTest):

    def setUp(self):
        super().setUp()
        if not tls_built():
            self.skipTest("robotsd was built without TLS to Redis")
        self.certs = Certs(self.tmp)

    def tls_server(self, exe, cert="server", auth_clients="no"):
        port = closed_port()
        c = self.certs
        r = self.server(exe, "--port", "0", "--tls-port", str(port),
                        "--tls-cert-file", c.path(cert + ".pem"),
                        "--tls-key-file", c.path("server.key"),
                        "--tls-ca-cert-file", c.path("ca.pem"),
                        "--tls-auth-clients", auth_clients)
        r.tls_port = port
        return r

    def url(self, r, host="127.0.0.1"):
        return "rediss://%s:%s@%s:%d" % (USER, PASSWORD, host, r.tls_port)

    def test_fleet_shares_one_cache_over_tls_as_the_acl_user(self):
        for exe in servers():
            with self.subTest(server=exe):
                r = self.tls_server(exe, auth_clients="yes")
                self.fleet_shares(
                    self.url(r, "localhost"),
                    "--redis-tls-ca-file", self.certs.path("ca.pem"),
                    "--redis-tls-cert-file", self.certs.path("client.pem"),
                    "--redis-tls-key-file", self.certs.path("client.key"),
                    host=exe + ".tls.test")
                self.assertEqual(self.acl_denials(r), [])
                for d in list(self.daemons):
                    d.stop()
                self.daemons.clear()

    def local_only(self, url, why, *args):
        """robotsd on url answers every check itself and logs why."""
        self.origin.robots("local.test", RULES)
        c = self.start("--redis", url, "--redis-timeout", "500", *args)
        self.assertTrue(poll(lambda: why in self.d.log(100000)),
                        self.d.log())
        a = self.check("http://local.test/private/x")
        self.assertAnswer(a, ok=True, allowed=False, source="fetched")
        st = self.stats(c)
        self.assertEqual(st["redis_up_0"], 0, st)
        self.assertIsNone(self.d.proc.poll())

    def test_untrusted_ca(self):
        r = self.tls_server(servers()[0])
        # OpenSSL names the chain it could not trust
        self.local_only(self.url(r), "TLS: the server's certificate: ",
                        "--redis-tls-ca-file", self.certs.path("other.pem"))

    def test_expired_certificate(self):
        r = self.tls_server(servers()[0], cert="expired")
        self.local_only(self.url(r), "TLS: the server's certificate: "
                        "certificate has expired",
                        "--redis-tls-ca-file", self.certs.path("ca.pem"))

    def test_wrong_name(self):
        r = self.tls_server(servers()[0])
        self.local_only(self.url(r), "TLS: the server's certificate: "
                        "hostname mismatch",
                        "--redis-tls-ca-file", self.certs.path("ca.pem"),
                        "--redis-tls-server-name", "other.example")

    def test_plain_text_server_never_gets_plain_text(self):
        r = self.server(servers()[0], "--port", str(closed_port()))
        port = int(r.extra[1])
        # a plain server waits for the end of a line that never comes
        self.local_only("rediss://127.0.0.1:%d" % port,
                        "no TLS handshake in time",
                        "--redis-tls-ca-file", self.certs.path("ca.pem"))
        cap = Capture()
        self.addCleanup(cap.close)
        self.start("--redis", "rediss://127.0.0.1:%d" % cap.port,
                   "--redis-tls-ca-file", self.certs.path("ca.pem"))
        self.assertTrue(poll(lambda: len(cap.first) >= 2), cap.first)
        for first in cap.first:  # a TLS handshake record, every time
            self.assertEqual(first[:1], b"\x16", cap.first)
