"""One memory budget for the answers queued to all clients together
(--max-output-total), and the event loop's own lateness measurement, under
the attack that used to take gigabytes: many clients pipelining 1,000-URL
batches of cached origins and never reading their answers."""
import errno
import json
import socket
import time

from harness import DaemonTest, poll
from test_hostile import sanitized, vm

CLIENTS = 200
BATCHES = 20          # per client: 3.8 MB of answers
BUDGET = 8 << 20
HOSTS = ["b%d.test" % i for i in range(10)]


def batch(rid):
    urls = ["http://%s/page/%d/%d" % (HOSTS[i % len(HOSTS)], rid, i)
            for i in range(1000)]
    return (json.dumps({"op": "check", "id": rid, "agent": "B",
                        "urls": urls}, separators=(",", ":")) + "\n").encode()


def flood(path, n, data):
    """n clients that send data (as much as their sockets take without
    blocking) and never read."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.setblocking(False)
        socks.append([s, 0])
    for _ in range(200):  # a few rounds: robotsd reads as it answers
        busy = False
        for ent in socks:
            s, off = ent
            if off >= len(data):
                continue
            try:
                ent[1] += s.send(data[off:off + (1 << 20)])
                busy = True
            except OSError as e:
                if e.errno in (errno.EPIPE, errno.ECONNRESET):
                    ent[1] = len(data)  # closed by robotsd (shed)
                elif e.errno != errno.EAGAIN:
                    raise
        if not busy:
            break
        time.sleep(0.01)
    return [s for s, _ in socks]


class OutputBudget(DaemonTest):

    def settled(self, key):
        """Wait until the stat key stops moving (robotsd has read all it
        will read); return the stats."""
        last = [None]

        def still():
            st = self.stats()
            same = st[key] == last[0]
            last[0] = st[key]
            return same
        poll(still, timeout=60, interval=0.5)
        return self.stats()

    def test_never_reading_clients_stay_within_the_total_budget(self):
        c = self.start("--max-output-total", str(BUDGET),
                       "--max-connections", "400")
        pid = self.d.proc.pid
        for h in HOSTS:
            self.origin.robots(h, "User-agent: *\nDisallow: /page/1\n")
            self.assertAnswer(c.check("http://%s/" % h), ok=True)
        base = vm(pid, "VmRSS")
        data = b"".join(batch(i) for i in range(BATCHES))
        socks = flood(self.d.socket, CLIENTS, data)
        st = self.settled("hits")
        grown = vm(pid, "VmRSS") - base
        print("\n  %d clients: requests %d, output queued %d B (peak %d, "
              "budget %d), paused %d, shed %d, RSS +%d KiB"
              % (CLIENTS, st["requests"], st["client_output_bytes"],
                 st["client_output_peak_bytes"], BUDGET,
                 st["clients_paused"], st["clients_shed"], grown))
        # Unbounded, 200 clients queued 3.8 MB each (max-output 8M pauses
        # a client at 4 MB only): 760 MB. Within the budget, the total
        # goes past it by at most the answer to the line being handled
        # (190 KB for 1,000 URLs; 512 KiB allowed).
        self.assertLessEqual(st["client_output_bytes"], BUDGET, st)
        self.assertLessEqual(st["client_output_peak_bytes"],
                             BUDGET + 512 * 1024, st)
        self.assertGreater(st["clients_paused"], 0, st)
        if not sanitized():
            self.assertLess(grown, 96 * 1024, "RSS grew past the budget")
        for s in socks:
            s.close()
        poll(lambda: self.stats()["connections"] == 1, timeout=60,
             interval=0.2)
        st = self.stats()
        self.assertEqual(st["client_output_bytes"], 0, st)
        # only the stats request being answered is left
        self.assertLess(st["client_input_bytes"], 64, st)
        after = vm(pid, "VmRSS") - base
        print("  after they closed: RSS +%d KiB over the baseline" % after)
        if not sanitized():
            self.assertLess(after, 16 * 1024, "memory not returned")
        self.assertAnswer(c.check("http://%s/page/2" % HOSTS[0]),
                          allowed=True)

    def test_loop_lag_stays_low_under_overload(self):
        c = self.start("--max-output-total", str(BUDGET),
                       "--max-connections", "400")
        for h in HOSTS:
            self.origin.robots(h, "User-agent: *\nDisallow: /page/1\n")
            self.assertAnswer(c.check("http://%s/" % h), ok=True)
        data = b"".join(batch(i) for i in range(BATCHES))
        socks = flood(self.d.socket, CLIENTS, data)
        st = self.settled("hits")
        for s in socks:
            s.close()
        print("\n  loop lag: p99 %d us, max %d us, of which robotsd worked: "
              "p99 %d us, max %d us; %d ticks over 10 ms late; %d requests, "
              "%d times a client was left for a later turn"
              % (st["loop_lag_p99_us"], st["loop_lag_max_us"],
                 st["loop_work_p99_us"], st["loop_work_max_us"],
                 st["loop_late"], st["requests"], st["clients_deferred"]))
        self.assertGreater(st["loop_lag_max_us"], 0, st)
        # The slice ran out and clients waited for later turns...
        self.assertGreater(st["clients_deferred"], 0, st)
        # ... and a turn took up only the waiting clients it had time for,
        # each of which then moved on: a client waits again only after a
        # line of it was answered or a read of its socket (a batch line is
        # two reads of 16 KiB), or after it was paused and resumed; at most
        # 3 times a line, once a pause, once when it goes. Before, every
        # turn put every waiting client back on the backlog: 40 times a
        # line here, a turn's worth of epoll calls each time.
        self.assertLessEqual(st["clients_deferred"],
                             3 * st["requests"] + st["clients_paused"]
                             + st["connections_total"], st)
        # Before, all the batches that arrived together were answered in
        # one turn: the timer's lateness had a p99 of 188 to 256 ms on an
        # idle machine. That lateness also counts the time robotsd waits
        # for a CPU other processes hold (p99 472 ms once on a loaded
        # machine with the turns kept short), so what is bounded is the
        # part of it robotsd spent working: a turn's 4 ms of request
        # lines, the line under way when they ran out (a few ms under
        # ASan), the writes. Its 99th percentile, not its maximum: once, in
        # an ASan build on a loaded machine, one tick counted 100 ms of
        # work (p99 7 ms). With a 200 ms slice every late tick counts
        # 59 to 67 ms, the p99 as well.
        self.assertLess(st["loop_work_p99_us"], 25000, st)
