"""test_shipped.py: the shipped config keeps a state file in the unit's
StateDirectory and tells to run robotsd -n; -n says "configuration OK"
when asked, not into the journal at every start (unless at debug); a
first start without a state file logs no state_loaded line; scripts/run's
sandbox config keeps everything robotsd writes under run/."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import ROBOTSD, Daemon, DaemonTest

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", ".."))


def run_n(*args, journal=False):
    """robotsd -n ARGS; with journal, its stdout is a pipe that
    $JOURNAL_STREAM names, as under systemd. (rc, stdout, stderr)."""
    r, w = os.pipe()
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    if journal:
        st = os.fstat(w)
        env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
    p = subprocess.Popen([ROBOTSD, "-n"] + list(args), stdout=w,
                         stderr=subprocess.PIPE, env=env)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    err = p.stderr.read().decode()
    p.stderr.close()
    return p.wait(30), out, err


class Shipped(DaemonTest):

    def test_configuration_ok_when_asked_not_into_the_journal(self):
        self.assertEqual(run_n("-c", "/dev/null"),
                         (0, "configuration OK\n", ""))
        self.assertEqual(run_n("-c", "/dev/null", journal=True), (0, "", ""))
        self.assertEqual(run_n("-c", "/dev/null", "--log-level", "debug",
                               journal=True), (0, "configuration OK\n", ""))
        rc, out, err = run_n("-c", "/dev/null", "--max-ttl", "x",
                             journal=True)
        self.assertEqual((rc, out), (78, ""))
        self.assertIn("max-ttl", err)

    def test_shipped_config_keeps_a_state_file_in_the_state_directory(self):
        conf = open(os.path.join(TOP, "etc", "robotsd.conf")).read()
        unit = open(os.path.join(TOP, "systemd",
                                 "robotsd.service.in")).read()
        self.assertIn("\nStateDirectory=robotsd\n", unit)
        self.assertEqual(re.findall(r"^state-file (\S+)$", conf, re.M),
                         ["/var/lib/robotsd/cache.state"])
        self.assertIn("robotsd -n -c /etc/robotsd.conf", conf)
        self.assertEqual(run_n("-c", os.path.join(TOP, "etc",
                                                  "robotsd.conf")),
                         (0, "configuration OK\n", ""))

    def test_first_start_without_state_file_logs_no_state_loaded(self):
        tmp = tempfile.mkdtemp(prefix="robotsd-state-")
        self.addCleanup(shutil.rmtree, tmp, True)
        state = os.path.join(tmp, "cache.state")
        self.origin.robots("a.test", "User-agent: *\nDisallow: /x\n")
        c = self.start("--state-file", state)
        self.assertIs(c.check("http://a.test/x")["allowed"], False)
        self.d.stop()
        log = self.d.log(1000)
        self.assertNotIn("state_loaded", log)
        self.assertNotIn("state_load_failed", log)
        self.assertIn("no state file %s yet" % state, log)
        self.assertTrue(os.path.exists(state))
        d = Daemon(["--state-file", state])
        self.daemons.append(d)
        d.start()
        self.addCleanup(d.stop)
        d.client().call({"op": "ping"})
        self.assertIn("event=state_loaded origins=1 file=%s" % state,
                      d.log(1000))


if __name__ == "__main__":
    unittest.main()


class Sandbox(unittest.TestCase):
    """scripts/run runs robotsd with scripts/sandbox-conf's copy of the
    shipped config: every path robotsd writes lies under the checkout's
    run/, whatever the config says, and the rest is unchanged."""

    def sandbox(self, text, run="/checkout/run"):
        tmp = tempfile.mkdtemp(prefix="robotsd-sandbox-")
        self.addCleanup(shutil.rmtree, tmp, True)
        conf = os.path.join(tmp, "in.conf")
        with open(conf, "w") as f:
            f.write(text)
        return subprocess.run([os.path.join(TOP, "scripts", "sandbox-conf"),
                               conf, run], check=True,
                              capture_output=True, text=True).stdout

    def test_paths_robotsd_writes_go_under_run(self):
        out = self.sandbox("# state-file /var/lib/x\n"
                           "state-file /var/lib/robotsd/cache.state\n"
                           "  archive-dir\t/var/lib/robotsd/archive\n"
                           "max-fetches 7\n#archive-dir /srv/a\n")
        self.assertEqual(out, "# state-file /var/lib/x\n"
                              "state-file /checkout/run/cache.state\n"
                              "  archive-dir\t/checkout/run/archive\n"
                              "max-fetches 7\n#archive-dir /srv/a\n")

    def test_shipped_config_in_the_sandbox_loads_and_writes_only_run(self):
        run = tempfile.mkdtemp(prefix="robotsd-run-")
        self.addCleanup(shutil.rmtree, run, True)
        with open(os.path.join(TOP, "etc", "robotsd.conf")) as f:
            out = self.sandbox(f.read(), run)
        active = [l.split() for l in out.splitlines()
                  if l.strip() and not l.lstrip().startswith("#")]
        paths = {l[0]: l[1] for l in active
                 if l[0] in ("state-file", "archive-dir")}
        self.assertEqual(paths, {"state-file": run + "/cache.state"})
        conf = os.path.join(run, "robotsd.conf")
        with open(conf, "w") as f:
            f.write(out)
        rc, _, err = run_n("-c", conf)
        self.assertEqual(rc, 0, err)
