"""Out of descriptors, robotsd never exits (issue 29, item 5): with a real
descriptor limit (prlimit on the running daemon) and clients holding every
descriptor, a fetch is answered "internal", and when the fetch thread then
goes idle and renews its loop (a new libevent base, which needs an epoll
descriptor and a pipe, and which libevent ends the process over when the
pipe cannot be had) robotsd stays up; once the clients close it fetches
and answers as usual."""
import os
import socket
import subprocess

from harness import DaemonTest, poll

RULES = "User-agent: *\nDisallow: /p\n"


def set_nofile(pid, n):
    """The soft descriptor limit of pid (the hard one stays)."""
    subprocess.run(["prlimit", "--pid", str(pid), "--nofile=%d:" % n],
                   check=True)


def lowest_free_fd(pid):
    """The descriptor number pid's next open() would get: with the limit
    set to it, every new descriptor is refused (EMFILE)."""
    used = {int(fd) for fd in os.listdir("/proc/%d/fd" % pid)}
    return min(set(range(len(used) + 1)) - used)


def pin_nofile(pid, steady=20):
    """Set the soft limit at the lowest free descriptor, and lower it with
    every descriptor freed below it (an open one the fetch thread or the
    saver ends late), until the lowest free one has held for steady polls:
    then no descriptor is left to open. The limit set."""
    state = {"limit": None, "held": 0}

    def settled():
        n = lowest_free_fd(pid)
        if n != state["limit"]:
            set_nofile(pid, n)
            state["limit"], state["held"] = n, 0
        else:
            state["held"] += 1
        return state["held"] >= steady

    poll(settled, interval=0.02)
    return state["limit"]


def fd_table(pid):
    """What each of pid's descriptors is open on (a file, socket:[inode])."""
    table = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            table[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except FileNotFoundError:
            pass
    return table


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


class Descriptors(DaemonTest):

    def renewals(self, word):
        return self.d.log(100000).count("event=fetch_loop_%s " % word)

    def warm(self):
        """One fetch and the idle renewal after it, with descriptors to
        spare; the renewals logged by then."""
        self.origin.robots("warm.test", RULES)
        c = self.start()
        self.assertAnswer(c.check("http://warm.test/p"), ok=True,
                          allowed=False, source="fetched")
        self.assertTrue(poll(lambda: self.renewals("renewed") >= 1),
                        self.d.log())
        return c, self.renewals("renewed")

    def fill(self, pid, spare):
        """Clients until robotsd cannot accept: every descriptor is taken
        (the limit spare descriptors above what it holds now)."""
        limit = open_fds(pid) + spare
        set_nofile(pid, limit)
        socks = []
        self.addCleanup(lambda: [s.close() for s in socks])
        for _ in range(limit):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.d.socket)
            socks.append(s)
        self.assertTrue(poll(lambda: open_fds(pid) == limit and
                             "event=accept_failed" in self.d.log(1000)),
                        (open_fds(pid), limit, self.d.log()))
        return socks, limit

    def fetch_and_idle(self, c, host, n):
        """A fetch with no descriptor left, answered "internal"; then the
        renewal the thread's idle second brings: the n-th one logged."""
        a = c.check("http://%s/p" % host)
        self.assertAnswer(a, ok=False)
        self.assertEqual(a["error"]["code"], "internal", a)
        self.idle(n)

    def idle(self, n):
        """The renewal the fetch thread's idle second brings: the n-th one
        logged; robotsd still running."""
        self.assertTrue(poll(lambda: self.d.proc.poll() is not None or
                             self.renewals("renewed") +
                             self.renewals("kept") == n), self.d.log())
        self.assertIsNone(self.d.proc.poll(), self.d.log())

    def test_clients_holding_every_descriptor_never_end_robotsd(self):
        self.origin.robots("fd.test", RULES)
        c, renewed = self.warm()
        pid = self.d.proc.pid
        socks, limit = self.fill(pid, 8)
        # no descriptor for a new loop: the spare goes in, or the old
        # loop is kept (before: exit 1, "evsig_init_: socketpair")
        self.fetch_and_idle(c, "fd.test", renewed + 1)
        log = self.d.log(1000)
        self.assertTrue("renewed=%d spare_used=1" % (renewed + 1) in log or
                        'kept=1 error="Too many open files"' in log, log)
        done = self.renewals("renewed")
        # the clients gone, it fetches and answers as ever, and renews
        for s in socks:
            s.close()
        self.assertTrue(poll(lambda: open_fds(pid) < limit - 4),
                        open_fds(pid))
        self.assertAnswer(c.check("http://fd.test/p"), ok=True,
                          allowed=False, source="fetched")
        self.assertAnswer(c.check("http://fd.test/q"), ok=True,
                          allowed=True, source="cache")
        self.assertEqual(len(self.origin.hits("fd.test")), 1)
        self.assertTrue(poll(lambda: self.renewals("renewed") ==
                             done + 1), self.d.log())
        self.assertIsNone(self.d.proc.poll())

    def test_a_new_loop_with_no_pipe_left_takes_the_spare(self):
        """No descriptor left but those curl's multi handle frees when
        idle: the epoll one can be had, the pipe cannot, and the spare
        made before goes in."""
        self.origin.robots("one.test", RULES)
        c, renewed = self.warm()
        pid = self.d.proc.pid
        limit = pin_nofile(pid)
        held = fd_table(pid)
        self.assertEqual(lowest_free_fd(pid), limit)
        a = c.check("http://one.test/p")
        gone = {fd: f for fd, f in held.items()
                if fd_table(pid).get(fd) != f}
        if a.get("ok") and gone:
            # a descriptor robotsd held was closed after the limit had
            # held, and the fetch had it: the premise did not hold
            self.skipTest("descriptors freed under the limit: %s" % gone)
        self.assertAnswer(a, ok=False)
        self.assertEqual(a["error"]["code"], "internal", a)
        self.idle(renewed + 1)
        log = self.d.log(1000)
        self.assertAnswer(c.call({"op": "ping"}), ok=True)
        if "kept=1" in log and "epoll_create: Too many open files" in log:
            # curl's multi handle had no descriptor of its own to free
            # (made while none was left): the premise did not hold, and
            # the old loop was kept, as the test above allows
            self.skipTest("no descriptor freed at the renewal: " + log)
        self.assertIn("renewed=%d spare_used=1" % (renewed + 1), log)


if __name__ == "__main__":
    import unittest
    unittest.main()
