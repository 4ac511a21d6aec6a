"""robotsctl top (the stats view called watch before the change feed took
the name): a header, then one line per interval computed from
successive stats answers; -i and -n bound it; its numbers add up to the
checks and fetches made while it ran."""
import json
import subprocess
import unittest

from harness import ROBOTSCTL, DaemonTest, poll

HEADER = ["checks/s", "hit%", "fetches/s", "errors", "waiting", "entries",
          "bytes"]


def human(n):
    """Bytes as top prints them: 512, 1.5K, 20.0M."""
    if n < 1024:
        return str(n)
    v, units = n / 1024, "KMGT"
    u = 0
    while v >= 1024 and u < len(units) - 1:
        v, u = v / 1024, u + 1
    return "%.1f%s" % (v, units[u])


class TopTest(DaemonTest):

    def top(self, *args):
        return subprocess.Popen([ROBOTSCTL, "-s", self.d.socket, "top"]
                                + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def finish(self, p):
        out, err = p.communicate(timeout=30)
        self.assertEqual((p.returncode, err), (0, b""), out)
        return out.decode().splitlines()

    def wait_top_sampled(self):
        """Return once the daemon has read a request of top: each of
        our own stats calls adds one request, so a step of two is it."""
        prev = [self.stats()["requests"]]

        def seen():
            cur = self.stats()["requests"]
            step, prev[0] = cur - prev[0], cur
            return step >= 2
        self.assertTrue(poll(seen, timeout=10, interval=0.01),
                        "top asked for no stats")

    def test_text_lines_header_and_count(self):
        c = self.start()
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        self.assertAnswer(c.check("http://a.test/p"), source="fetched")
        lines = self.finish(self.top("-i", "0.05", "-n", "3"))
        self.assertEqual(len(lines), 4, lines)
        self.assertEqual(lines[0].split(), HEADER)
        for ln in lines[1:]:
            f = ln.split()
            self.assertEqual(len(f), 7, ln)
            # no checks while it ran: no hit rate; one cached origin
            self.assertEqual((f[0], f[1], f[2], f[3], f[4], f[5]),
                             ("0.0", "-", "0.0", "0", "0", "1"), ln)
            self.assertEqual(f[6], human(self.stats()["cache_bytes"]))

    def test_json_lines_add_up_to_the_checks_made(self):
        c = self.start()
        self.origin.robots("a.test", "User-agent: *\nDisallow: /p\n")
        self.origin.set("down.test", status=503)
        p = self.top("--json", "-i", "0.4", "-n", "3")
        self.wait_top_sampled()
        self.assertAnswer(c.check("http://a.test/p"), source="fetched")
        for path in ("/a", "/b", "/p", "/c"):
            self.assertAnswer(c.check("http://a.test" + path),
                              source="cache")
        self.assertAnswer(c.check("http://down.test/"), source="fetched",
                          reason="unreachable")
        rows = [json.loads(ln) for ln in self.finish(p)]
        self.assertEqual(len(rows), 3, rows)
        self.assertEqual(sum(r["checks"] for r in rows), 6, rows)
        self.assertEqual(sum(r["fetches"] for r in rows), 2, rows)
        self.assertEqual(sum(r["fetch_errors"] for r in rows), 1, rows)
        hits = sum(r["hit_pct"] * r["checks"] / 100 for r in rows
                   if r["checks"])
        self.assertAlmostEqual(hits, 4, places=0)
        self.assertEqual((rows[-1]["cache_entries"], rows[-1]["waiting"]),
                         (2, 0), rows)
        self.assertEqual(rows[-1]["cache_bytes"],
                         self.stats()["cache_bytes"])
        for r in rows:
            self.assertGreaterEqual(r["checks_per_s"], 0)

    def test_bad_options_and_no_daemon(self):
        for args, msg in ((["-i", "0"], b"interval 0: too small"),
                          (["-n", "x"], b"count x: invalid"),
                          (["extra"], b"top: wrong number of arguments")):
            r = subprocess.run([ROBOTSCTL, "-s", "/nonexistent", "top"]
                               + args, capture_output=True, timeout=10)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)
        r = subprocess.run([ROBOTSCTL, "-s", "/nonexistent/sock", "top",
                            "-n", "1"], capture_output=True, timeout=10)
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertTrue(r.stderr.startswith(b"robotsctl: "), r.stderr)


if __name__ == "__main__":
    unittest.main()
