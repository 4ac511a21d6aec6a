"""test_admin.py: purge needs the admin right (root, robotsd's own user,
or a member of --admin-group), from the socket peer's credentials; other
ops stay open. Clients run as another uid through setpriv (tests run as
root)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import ROBOTSD, DaemonTest, nobody_cannot_run

# Debian's python3 where there is one: another first on PATH may live
# where user nobody cannot reach it (a home directory).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable

# One client: each request line of argv[2:] on the socket argv[1], each
# answer printed.
CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("rwb")
for line in sys.argv[2:]:
    f.write(line.encode() + b"\n")
    f.flush()
    sys.stdout.write(f.readline().decode())
"""
REQS = ['{"op":"purge","all":true,"id":1}',
        '{"op":"purge","origin":"http://a.test","id":2}',
        '{"op":"ping","id":3}', '{"op":"stats","id":4}',
        '{"op":"check","url":"http://a.test/x","agent":"A","id":5}',
        '{"op":"inspect","origin":"http://a.test","id":6}']


class Admin(DaemonTest):

    def setUp(self):
        why = nobody_cannot_run(PYTHON)
        if why is not None:
            self.skipTest(why)
        super().setUp()

    def start_open(self, *args):
        d = tempfile.mkdtemp(prefix="robotsd-admin-")
        os.chmod(d, 0o755)
        self.addCleanup(shutil.rmtree, d, True)
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        return self.start("--socket-mode", "0666", *args,
                          socket_path=os.path.join(d, "robotsd.sock"))

    def as_user(self, *setpriv):
        p = subprocess.run(["setpriv"] + list(setpriv) +
                           [PYTHON, "-c", CLIENT, self.d.socket] + REQS,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {a["id"]: a for a in map(json.loads, p.stdout.splitlines())}

    def assertAdmin(self, answers, admin):
        for i in (1, 2):
            if admin:
                self.assertIs(answers[i]["ok"], True, answers[i])
            else:
                self.assertEqual(answers[i], {
                    "id": i, "ok": False, "error": {
                        "code": "forbidden",
                        "message": "purge needs the admin right: run it as "
                        "root, as robotsd's user or as a member of its "
                        "admin-group"}})
        for i in (3, 4, 5, 6):  # open to every client
            self.assertIs(answers[i]["ok"], True, answers[i])

    def test_only_root_and_robotsds_user_by_default(self):
        self.start_open()
        self.assertAdmin(self.as_user("--reuid=nobody", "--regid=nogroup",
                                      "--clear-groups"), False)
        self.assertAdmin(self.as_user("--reuid=0", "--regid=0",
                                      "--keep-groups"), True)

    def test_admin_group_by_primary_or_supplementary_group(self):
        self.start_open("--admin-group", "nogroup")
        self.assertAdmin(self.as_user("--reuid=nobody", "--regid=nogroup",
                                      "--clear-groups"), True)
        self.assertAdmin(self.as_user("--reuid=nobody", "--regid=daemon",
                                      "--groups=nogroup"), True)
        self.assertAdmin(self.as_user("--reuid=nobody", "--regid=daemon",
                                      "--clear-groups"), False)

    def test_unknown_admin_group_is_a_config_error(self):
        d = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null",
                            "--admin-group", "no-such-group-x"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(d.returncode, 0)
        self.assertIn("admin-group: no group 'no-such-group-x'", d.stderr)


if __name__ == "__main__":
    unittest.main()
