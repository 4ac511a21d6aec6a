"""test_admin.py: purge needs the admin right (root, robotsd's own user,
or a member of --admin-group), from the socket peer's credentials, or a
connection on the admin socket (--admin-socket: 0600, or 0660 with group
--admin-group; every client there may purge, whoever it is); other ops
stay open. Clients run as another uid through setpriv (tests run as
root)."""
import grp
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from harness import ROBOTSCTL, ROBOTSD, DaemonTest, nobody_cannot_run

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


FORBIDDEN = ("purge needs the admin right: use robotsd's admin socket, or "
             "run it as root, as robotsd's user or as a member of its "
             "admin-group")
# A client with none of the admin right's credentials.
STRANGER = ("--reuid=nobody", "--regid=daemon", "--clear-groups")


class Admin(DaemonTest):

    def setUp(self):
        why = nobody_cannot_run(PYTHON)
        if why is not None:
            self.skipTest(why)
        super().setUp()

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="robotsd-admin-")
        os.chmod(d, 0o755)
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def start_open(self, *args):
        self.dir = self.tmpdir()
        self.admin = os.path.join(self.dir, "admin.sock")
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        args = [self.admin if a == "ADMIN" else a for a in args]
        return self.start("--socket-mode", "0666", *args,
                          socket_path=os.path.join(self.dir, "robotsd.sock"))

    def client_as(self, path, *setpriv):
        return subprocess.run(["setpriv"] + list(setpriv) +
                              [PYTHON, "-c", CLIENT, path] + REQS,
                              capture_output=True, text=True, timeout=60)

    def as_user(self, *setpriv, path=None):
        p = self.client_as(path or self.d.socket, *setpriv)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {a["id"]: a for a in map(json.loads, p.stdout.splitlines())}

    def assertCannotConnect(self, path, *setpriv):
        p = self.client_as(path, *setpriv)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("PermissionError: [Errno 13] Permission denied",
                      p.stderr)

    def assertSocket(self, path, mode, gid):
        st = os.lstat(path)
        self.assertTrue(stat.S_ISSOCK(st.st_mode))
        self.assertEqual((stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid),
                         (mode, os.geteuid(), gid))

    def assertAdmin(self, answers, admin):
        for i in (1, 2):
            if admin:
                self.assertIs(answers[i]["ok"], True, answers[i])
            else:
                self.assertEqual(answers[i], {
                    "id": i, "ok": False, "error": {
                        "code": "forbidden",
                        "message": FORBIDDEN}})
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

    # --- the admin socket ------------------------------------------------
    def test_admin_socket_0660_group_admin_group(self):
        self.start_open("--admin-group", "nogroup", "--admin-socket", "ADMIN")
        admin = self.admin
        self.assertSocket(admin, 0o660, grp.getgrnam("nogroup").gr_gid)
        self.assertAdmin(self.as_user("--reuid=nobody", "--regid=daemon",
                                      "--groups=nogroup", path=admin), True)
        # The kernel refuses the others before robotsd sees them.
        self.assertCannotConnect(admin, *STRANGER)
        self.assertAdmin(self.as_user(*STRANGER), False)

    def test_every_client_of_the_admin_socket_may_purge(self):
        self.start_open("--admin-socket", "ADMIN")
        # Without --admin-group: 0600, root's (robotsd's user) alone.
        self.assertSocket(self.admin, 0o600, os.getegid())
        self.assertCannotConnect(self.admin, *STRANGER)
        # Opened to all, the socket is the right: no credential is asked.
        os.chmod(self.admin, 0o666)
        self.assertAdmin(self.as_user(*STRANGER, path=self.admin), True)
        self.assertAdmin(self.as_user(*STRANGER), False)
        self.d.stop()
        self.assertFalse(os.path.lexists(self.admin))

    def test_admin_socket_the_socket_itself_is_a_config_error(self):
        d = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null", "-s", "/x/r.s",
                            "--admin-socket", "/x/r.s"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(d.returncode, 78, d.stderr)
        self.assertIn("admin-socket: /x/r.s is the socket itself", d.stderr)

    def test_admin_socket_group_robotsd_is_not_in_is_refused(self):
        why = nobody_cannot_run(ROBOTSD)
        if why is not None:
            self.skipTest(why)
        d = self.tmpdir()
        os.chmod(d, 0o777)
        a = os.path.join(d, "admin.sock")
        p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                            "--clear-groups", ROBOTSD, "-f", "-c",
                            "/dev/null", "-s", os.path.join(d, "r.sock"),
                            "--admin-socket", a, "--admin-group", "daemon"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("admin-socket %s: cannot give it group daemon: "
                      "Operation not permitted (robotsd must run as root or "
                      "as a member of admin-group)\n" % a, p.stderr)
        self.assertFalse(os.path.lexists(a))

    def robotsctl_as(self, env, *args):
        return subprocess.run(
            ["setpriv"] + list(STRANGER) + [ROBOTSCTL] + list(args),
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, ROBOTSD_SOCKET=self.d.socket, **env))

    def test_robotsctl_purge_uses_dir_admin_name(self):
        why = nobody_cannot_run(ROBOTSCTL)
        if why is not None:
            self.skipTest(why)
        d = self.tmpdir()
        os.mkdir(d + "-admin", 0o755)
        self.addCleanup(shutil.rmtree, d + "-admin", True)
        admin = os.path.join(d + "-admin", "robotsd.sock")
        self.start("--socket-mode", "0666", "--admin-group", "nogroup",
                   "--admin-socket", admin,
                   socket_path=os.path.join(d, "robotsd.sock"))
        p = self.robotsctl_as({}, "purge", "--all")
        self.assertEqual(
            (p.returncode, p.stdout, p.stderr),
            (2, "", "robotsctl: cannot connect to %s: Permission denied "
             "(robotsd's admin socket, which purge uses, is for group "
             "nogroup, mode 0660: join the group, e.g. \"sudo usermod -aG "
             "nogroup $USER\", then log in again)\n" % admin))
        for env, opt in (({}, ["--admin-socket", self.d.socket]),
                         ({"ROBOTSD_ADMIN_SOCKET": self.d.socket}, [])):
            p = self.robotsctl_as(env, *opt, "purge", "--all")
            self.assertEqual((p.returncode, p.stdout, p.stderr),
                             (2, "", "robotsctl: forbidden: %s\n" % FORBIDDEN))
        # Other commands keep the main socket.
        p = self.robotsctl_as({}, "ping")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                            "--clear-groups", ROBOTSCTL, "-s", self.d.socket,
                            "purge", "--all"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr),
                         (0, "purged 0\n", ""))

    def test_unknown_admin_group_is_a_config_error(self):
        d = subprocess.run([ROBOTSD, "-n", "-c", "/dev/null",
                            "--admin-group", "no-such-group-x"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(d.returncode, 0)
        self.assertIn("admin-group: no group 'no-such-group-x'", d.stderr)


if __name__ == "__main__":
    unittest.main()
