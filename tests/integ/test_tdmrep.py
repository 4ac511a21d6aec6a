"""TDMRep (issue 27): /.well-known/tdmrep.json as a second resource per
origin, fetched only when a check asks ("tdm":true) or with --tdmrep
always, once for all the checks waiting on it, through the robots.txt
fetch machinery; --tdmrep off fetches nothing."""
import json

from harness import DaemonTest, poll

TDM = "/.well-known/tdmrep.json"
RULES = "User-agent: *\nDisallow: /private/\n"
FILE = json.dumps([{"location": "/a/*", "tdm-reservation": 1,
                    "tdm-policy": "https://t.test/policy.json"},
                   {"location": "/", "tdm-reservation": 0}])


class TdmRep(DaemonTest):

    def serve(self, host, tdm_body=FILE, **kw):
        self.origin.robots(host, RULES)
        self.origin.set(host, TDM, body=tdm_body, **kw)

    def tdm_hits(self, host):
        return len(self.origin.hits(host, TDM))

    def test_a_check_without_tdm_never_fetches_it(self):
        self.serve("plain.test")
        self.start()
        a = self.check("http://plain.test/a/x")
        self.assertAnswer(a, ok=True, allowed=True, source="fetched")
        self.assertNotIn("tdm", a)
        self.assertEqual(self.tdm_hits("plain.test"), 0)
        self.assertEqual(len(self.origin.hits("plain.test")), 1)

    def test_waiting_checks_share_one_fetch_and_wait_for_it(self):
        self.serve("wait.test", hold=True)
        self.start()
        clients = [self.d.client() for _ in range(20)]
        for i, cl in enumerate(clients):
            cl.send({"op": "check", "url": "http://wait.test/a/%d" % i,
                     "agent": "Bot", "tdm": True, "id": i})
        self.origin.wait_hits("wait.test", 1, path=TDM)
        # robots.txt is fetched alongside, and the checks still wait
        self.origin.wait_hits("wait.test", 1, path="/robots.txt")
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 20),
                        "not all 20 checks are waiting: %r" % self.stats())
        self.origin.release("wait.test", TDM)
        for i, cl in enumerate(clients):
            self.assertAnswer(cl.recv(), id=i, ok=True, allowed=True,
                              origin="http://wait.test")
        self.assertEqual(self.tdm_hits("wait.test"), 1)
        self.assertEqual(len(self.origin.hits("wait.test", "/robots.txt")),
                         1)
        # settled: the next check asks for neither again
        self.assertAnswer(self.check("http://wait.test/a/z", tdm=True),
                          ok=True, source="cache")
        self.assertEqual(len(self.origin.hits("wait.test")), 2)

    def test_a_batch_fetches_each_origin_once(self):
        for h in ("b1.test", "b2.test"):
            self.serve(h)
        c = self.start()
        urls = ["http://b1.test/a/1", "http://b2.test/x", "http://b1.test/y",
                "http://b2.test/private/z"]
        a = c.call({"op": "check", "urls": urls, "agent": "Bot",
                    "tdm": True})
        self.assertIs(a["ok"], True, a)
        self.assertEqual([r["allowed"] for r in a["results"]],
                         [True, True, True, False])
        self.assertEqual((self.tdm_hits("b1.test"), self.tdm_hits("b2.test")),
                         (1, 1))

    def test_a_check_waits_for_robots_txt_after_tdmrep(self):
        self.origin.robots("both.test", RULES, hold=True)
        self.origin.set("both.test", TDM, body=FILE)
        self.start()
        cl = self.d.client()
        cl.send({"op": "check", "url": "http://both.test/private/1",
                 "agent": "Bot", "tdm": True, "id": 7})
        self.origin.wait_hits("both.test", 1, path=TDM)
        self.origin.wait_hits("both.test", 1, path="/robots.txt")
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 1))
        self.origin.release("both.test")
        self.assertAnswer(cl.recv(), id=7, ok=True, allowed=False,
                          source="fetched", reason="rule")

    def test_wait_false_answers_pending_and_fetches_both(self):
        self.serve("bg.test")
        c = self.start()
        a = c.call({"op": "check", "url": "http://bg.test/a/1",
                    "agent": "Bot", "tdm": True, "wait": False})
        self.assertAnswer(a, ok=True, pending=True)
        self.origin.wait_hits("bg.test", 1, path=TDM)
        self.origin.wait_hits("bg.test", 1, path="/robots.txt")
        self.wait_fetched("http://bg.test")
        self.assertEqual(self.tdm_hits("bg.test"), 1)

    def test_tdmrep_off_fetches_nothing(self):
        self.serve("off.test")
        self.start("--tdmrep", "off")
        a = self.check("http://off.test/a/x", tdm=True)
        self.assertAnswer(a, ok=True, allowed=True, source="fetched")
        self.assertEqual(self.tdm_hits("off.test"), 0)

    def test_tdmrep_always_fetches_with_every_robots_txt(self):
        self.serve("al.test")
        self.start("--tdmrep", "always")
        self.assertAnswer(self.check("http://al.test/x"), ok=True,
                          allowed=True)
        self.origin.wait_hits("al.test", 1, path=TDM)
        # then a check that asks finds it settled: no fetch, no wait
        self.assertAnswer(self.check("http://al.test/a/1", tdm=True),
                          ok=True, source="cache")
        self.assertEqual(self.tdm_hits("al.test"), 1)

    def test_tdm_must_be_a_boolean(self):
        c = self.start()
        a = c.call({"op": "check", "url": "http://x.test/", "agent": "B",
                    "tdm": 1})
        self.assertError(a, "bad_request")
        self.assertEqual(a["error"]["message"], "'tdm' must be true or false")
