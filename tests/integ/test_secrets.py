"""test_secrets.py: no Redis password in any log line or error message:
a bad --redis URL (config error at start and by -n), and a Redis server
that refuses connections, with the password in the URL or in
--redis-password-file."""
import os
import subprocess
import tempfile
import time
import unittest

from harness import ROBOTSD, Daemon, DaemonTest, closed_port

SECRET = "Tops3cretPw"


def has_redis():
    r = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null", "--redis",
                        "redis://127.0.0.1"], capture_output=True, text=True)
    return r.returncode == 0


@unittest.skipUnless(has_redis(), "robotsd built without hiredis")
class Secrets(DaemonTest):

    def test_bad_redis_url_is_shown_masked(self):
        for extra in (["-n"], ["-f"]):
            with self.subTest(mode=extra[0]):
                r = subprocess.run(
                    [ROBOTSD] + extra + ["-c", "/dev/null", "-s",
                                         "/nonexistent/x.sock", "--redis",
                                         "redis://:%s@bad:0" % SECRET],
                    capture_output=True, text=True, timeout=30)
                out = r.stdout + r.stderr
                self.assertNotEqual(r.returncode, 0, out)
                self.assertIn("'redis://***@bad:0' is not a Redis URL", out)
                self.assertNotIn(SECRET, out)

    def test_password_file_missing_is_an_error_without_the_password(self):
        r = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null",
                            "--redis-password-file", "/nonexistent/pw"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("redis-password-file: /nonexistent/pw: No such file",
                      r.stderr)

    def test_refused_redis_logs_no_password(self):
        port = closed_port()
        with tempfile.NamedTemporaryFile("w", suffix=".pw") as pw:
            pw.write(SECRET + "2\n")
            pw.flush()
            self.start("--redis", "redis://:%s@127.0.0.1:%d" % (SECRET, port),
                       "--redis", "redis://127.0.0.1:%d/1" % port,
                       "--redis-password-file", pw.name,
                       "--redis-timeout", "100")
            self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
            self.assertIs(self.check("http://a.test/x")["allowed"], False)
            # wait for the tier to have tried and failed to connect
            end = time.monotonic() + 20
            while time.monotonic() < end and "redis" not in \
                    self.d.log().lower().split("event=shared_tier", 1)[-1]:
                time.sleep(0.05)
            self.d.stop()
            self.daemons.remove(self.d)
            log = self.d.log(100000)
        self.assertNotIn(SECRET, log)
        self.assertIn("127.0.0.1:%d" % port, log)


if __name__ == "__main__":
    unittest.main()
