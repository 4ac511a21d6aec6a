"""robotsd's own resource shortage is not the origin's (issue 21): with a
real descriptor limit (prlimit on the running daemon) a fetch that cannot
open its socket is answered "internal", saying what happened, and leaves
nothing cached; once descriptors are back the origin is fetched and cached
as usual."""
import os
import subprocess

from harness import DaemonTest, poll

RULES = "User-agent: *\nDisallow: /p\n"


def set_nofile(pid, n):
    """The soft descriptor limit of pid (the hard one stays)."""
    subprocess.run(["prlimit", "--pid", str(pid), "--nofile=%d:" % n],
                   check=True)


def soft_nofile(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no open files limit")


def lowest_free_fd(pid):
    """The descriptor number pid's next open() would get: with the limit
    set to it, every new descriptor is refused (EMFILE)."""
    used = {int(fd) for fd in os.listdir("/proc/%d/fd" % pid)}
    return min(set(range(len(used) + 1)) - used)


class LocalErrors(DaemonTest):

    def test_descriptor_shortage_is_never_the_origins_state(self):
        self.origin.robots("fd.test", RULES)
        c = self.start()
        pid = self.d.proc.pid
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        soft = soft_nofile(pid)
        # no descriptor left: the fetch's socket() fails with EMFILE
        set_nofile(pid, lowest_free_fd(pid))
        a = c.check("http://fd.test/p")
        self.assertAnswer(a, ok=False)
        self.assertEqual(a["error"]["code"], "internal", a)
        self.assertEqual(a["error"]["message"],
                         "robotsd could not open a socket: Too many open "
                         "files", a)
        self.assertEqual(self.origin.hits("fd.test"), [])
        self.assertTrue(poll(lambda: "event=fetch_local_error "
                             "origin=http://fd.test" in self.d.log()),
                        self.d.log())
        i = self.inspect("http://fd.test")
        self.assertIn(i.get("state"), (None, "pending"), i)
        self.assertNotIn("unreachable", str(i))
        # descriptors back: fetched and cached as for any origin
        set_nofile(pid, soft)
        self.assertAnswer(c.check("http://fd.test/p"), ok=True,
                          allowed=False, source="fetched")
        self.assertEqual(len(self.origin.hits("fd.test")), 1)
        m = c.call({"op": "stats"})["stats"]
        self.assertEqual(m.get("fetch_errors", 0), 0, m)
