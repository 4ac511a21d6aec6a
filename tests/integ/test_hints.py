"""test_hints.py: errors that say what to do. robotsctl run by a user
outside the socket's group is told which group to join; inspect of an
origin not cached names the origin it looked up (as normalized); the
README and the shipped config give the same metrics address."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import ROBOTSCTL, DaemonTest, nobody_cannot_run

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", ".."))


class Hints(DaemonTest):

    def test_permission_denied_names_the_group_to_join(self):
        d = tempfile.mkdtemp(prefix="robotsd-hints-")
        os.chmod(d, 0o755)
        self.addCleanup(shutil.rmtree, d, True)
        # a copy nobody can reach, wherever the build directory is
        ctl = os.path.join(d, "robotsctl")
        shutil.copy(ROBOTSCTL, ctl)
        why = nobody_cannot_run(ctl)
        if why is not None:
            self.skipTest(why)
        self.start("--socket-mode", "0660",
                   socket_path=os.path.join(d, "robotsd.sock"))
        group = __import__("grp").getgrgid(
            os.stat(self.d.socket).st_gid).gr_name
        r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                            "--clear-groups", ctl, "-s", self.d.socket,
                            "ping"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 2, r)
        self.assertEqual(
            r.stderr, "robotsctl: cannot connect to %s: Permission denied "
            "(the socket is for group %s, mode 0660: join the group, e.g. "
            "\"sudo usermod -aG %s $USER\", then log in again)\n"
            % (self.d.socket, group, group))

    def test_nothing_listening_asks_whether_robotsd_runs(self):
        r = subprocess.run([ROBOTSCTL, "-s", "/nonexistent/robotsd.sock",
                            "ping"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.stderr, "robotsctl: cannot connect to "
                         "/nonexistent/robotsd.sock: No such file or "
                         "directory (is robotsd running?)\n")

    def test_inspect_not_cached_names_the_origin_looked_up(self):
        c = self.start()
        for asked, origin in (("a.test:8080", "https://a.test:8080"),
                              ("HTTP://B.test:80/x", "http://b.test")):
            with self.subTest(asked=asked):
                a = c.call({"op": "inspect", "origin": asked})
                self.assertEqual(a["error"], {
                    "code": "not_cached",
                    "message": "the origin %s is not in the cache" % origin})

    def test_readme_and_shipped_config_agree_on_the_metrics_port(self):
        readme = open(os.path.join(TOP, "README.md")).read()
        conf = open(os.path.join(TOP, "etc", "robotsd.conf")).read()
        ports = set(re.findall(r"127\.0\.0\.1:(\d+)", conf)) & \
            set(re.findall(r"metrics 127\.0\.0\.1:(\d+)", conf))
        self.assertEqual(ports, {"9167"})
        self.assertEqual(set(re.findall(r"metrics 127\.0\.0\.1:(\d+)",
                                        readme)), ports)


if __name__ == "__main__":
    unittest.main()
