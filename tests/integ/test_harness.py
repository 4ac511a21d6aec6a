"""The harness itself: a test process that served TLS exits cleanly.

An Origin's TLS connections are handled in threads that sit inside OpenSSL;
if any is still running when the interpreter exits, OpenSSL's exit cleanup
races it and the process can abort ("double free or corruption", exit 134)
after every test passed. origin.py closes every Origin at exit and joins
those threads. Here the scaled-up case (150 TLS servers, one handshake
each, half the client's connections still open, then exit) runs in fresh
interpreters, Debian's python3 and the python3 first on PATH, and must exit
0 every time (before the fix about one run in twenty aborted).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = 8  # per interpreter; each run takes about a second
CHILD = r"""
import socket, ssl, sys
sys.path.insert(0, sys.argv[1])
from origin import Origin
o = Origin()
ports = [o.start_tls(sys.argv[2], sys.argv[3]) for _ in range(150)]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
conns = [ctx.wrap_socket(socket.create_connection(("127.0.0.1", p)))
         for p in ports]
for c in conns[::2]:  # half hung up by now, half still open at exit
    c.close()
print("handshakes: %d" % len(conns))
"""


def interpreters():
    """Debian's python3 and the first on PATH, each once."""
    found = []
    for py in ["/usr/bin/python3", shutil.which("python3"), sys.executable]:
        if py and os.path.exists(py):
            real = subprocess.run([py, "-c", "import sys; print(sys.executable)"],
                                  capture_output=True, text=True,
                                  timeout=30).stdout.strip()
            if real not in [r for _, r in found]:
                found.append((py, real))
    return [py for py, _ in found]


class TlsTeardown(unittest.TestCase):

    def setUp(self):
        if shutil.which("openssl") is None:
            self.skipTest("no openssl command to make a test certificate")
        d = tempfile.mkdtemp(prefix="robotsd-tls-")
        self.addCleanup(shutil.rmtree, d, True)
        self.cert, self.key = (os.path.join(d, "cert.pem"),
                               os.path.join(d, "key"))
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=tls.test", "-keyout", self.key, "-out",
             self.cert], check=True, capture_output=True, timeout=30)

    def test_150_tls_servers_exit_cleanly_every_time(self):
        pythons = interpreters()
        self.assertTrue(pythons)
        for py in pythons:
            for run in range(RUNS):
                p = subprocess.run(
                    [py, "-c", CHILD, HERE, self.cert, self.key],
                    capture_output=True, text=True, timeout=60)
                self.assertEqual(
                    (p.returncode, p.stdout, p.stderr),
                    (0, "handshakes: 150\n", ""),
                    "%s, run %d of %d" % (py, run + 1, RUNS))


if __name__ == "__main__":
    unittest.main()
