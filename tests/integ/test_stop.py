"""test_stop.py: a stop says what it waits for (checks waiting, fetches
under way and their origins) in one line, waits at most --stop-timeout,
then answers the checks still waiting "timeout", abandons the fetches,
saves the state file and exits 0."""
import os
import re
import shutil
import signal
import tempfile
import time
import unittest

from harness import DaemonTest, poll


class Stop(DaemonTest):

    def test_stop_logs_what_it_waits_for_and_waits_stop_timeout(self):
        self.origin.robots("slow1.test", "User-agent: *\nDisallow: /\n",
                           hold=True)
        self.origin.robots("slow2.test", "User-agent: *\nDisallow: /\n",
                           hold=True)
        self.origin.robots("fast.test", "User-agent: *\nDisallow: /p\n")
        tmp = tempfile.mkdtemp(prefix="robotsd-stop-")
        self.addCleanup(shutil.rmtree, tmp, True)
        state = os.path.join(tmp, "state")
        c = self.start("--stop-timeout", "1", "--fetch-timeout", "30",
                       "--state-file", state)
        self.assertIs(c.check("http://fast.test/p")["allowed"], False)
        c.send({"op": "check", "url": "http://slow1.test/x", "agent": "A",
                "id": "w"})
        self.assertIs(c.check("http://slow2.test/x", wait=False)
                      ["pending"], True)
        self.origin.wait_hits("slow1.test", 1)
        self.origin.wait_hits("slow2.test", 1)
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 1))
        t0 = time.monotonic()
        self.d.proc.send_signal(signal.SIGTERM)
        a = c.wait_id("w")
        self.assertEqual(a["error"]["code"], "timeout", a)
        self.assertEqual(self.d.wait_exit(), 0)
        took = time.monotonic() - t0
        self.assertLess(took, 10, "waited for the fetches (fetch-timeout)")
        self.assertGreaterEqual(took, 0.9, "did not wait stop-timeout")
        log = self.d.log(1000)
        m = re.search(r"event=stopping signal=15 waiting=1 fetches=2 "
                      r"origins=(\S+) stop_timeout=1\n", log + "\n")
        self.assertIsNotNone(m, log)
        self.assertEqual(sorted(m.group(1).split(",")),
                         ["http://slow1.test", "http://slow2.test"])
        self.assertIn("event=state_saved", log)
        self.assertTrue(os.path.exists(state))


if __name__ == "__main__":
    unittest.main()
