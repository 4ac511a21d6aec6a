"""TDMRep (issue 27): /.well-known/tdmrep.json as a second resource per
origin, fetched only when a check asks ("tdm":true) or with --tdmrep
always, once for all the checks waiting on it, through the robots.txt
fetch machinery; --tdmrep off fetches nothing."""
import hashlib
import json
import os
import select
import shutil
import subprocess
import tempfile

from harness import ROBOTSCTL, DaemonTest, poll
from redisfix import SharedTest, entry_key

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

    def test_an_overloaded_batch_never_reads_an_evicted_entry(self):
        # One waiting slot, a cache of a few hundred bytes: the batch's
        # second URL starts robots.txt's fetch of c.test, whose entry
        # evicts b.test's, which the batch's lookup memo still held, and
        # its tdmrep.json is refused as overloaded (before: a read of the
        # freed entry, SIGSEGV).
        self.serve("held.test", hold=True)
        self.serve("b.test")
        self.serve("c.test")
        self.start("--max-waiting", "1", "--cache-max-bytes", "500")
        held = self.d.client()
        held.send({"op": "check", "url": "http://held.test/a/x",
                   "agent": "Bot", "tdm": True, "id": 1})
        self.origin.wait_hits("held.test", 1, path=TDM)
        self.assertAnswer(self.check("http://b.test/x"), ok=True)
        a = self.c.call({"op": "check", "agent": "Bot", "tdm": True,
                         "urls": ["http://b.test/x", "http://c.test/y"]})
        self.assertIsNone(self.d.proc.poll(), self.d.log())
        self.assertAnswer(a, ok=True)
        self.assertEqual(len(a["results"]), 2)
        self.assertAnswer(self.c.call({"op": "ping"}), ok=True)

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
            # robots.txt came first; each check still waited on a fetch
            self.assertAnswer(cl.recv(), id=i, ok=True, allowed=True,
                              origin="http://wait.test", source="fetched")
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
        self.assertTrue(poll(lambda: self.c.call(
            {"op": "inspect", "origin": "http://al.test",
             "resource": "tdmrep"}).get("state") == "rules"))
        # then a check that asks finds it settled: no fetch, no wait
        self.assertAnswer(self.check("http://al.test/a/1", tdm=True),
                          ok=True, source="cache")
        self.assertEqual(self.tdm_hits("al.test"), 1)

    def test_purge_forgets_the_file_too(self):
        self.serve("pu.test")
        c = self.start()
        self.check("http://pu.test/a", tdm=True)
        self.assertEqual(c.call({"op": "purge", "origin": "http://pu.test"})
                         ["purged"], 1)
        self.assertError(c.call({"op": "inspect", "origin": "http://pu.test",
                                 "resource": "tdmrep"}), "not_cached")
        self.check("http://pu.test/a", tdm=True)
        self.assertEqual(self.tdm_hits("pu.test"), 2)
        self.assertEqual(c.call({"op": "purge", "all": True})["purged"], 1)
        self.assertError(c.call({"op": "inspect", "origin": "http://pu.test",
                                 "resource": "tdmrep"}), "not_cached")

    def test_tdm_must_be_a_boolean(self):
        c = self.start()
        a = c.call({"op": "check", "url": "http://x.test/", "agent": "B",
                    "tdm": 1})
        self.assertError(a, "bad_request")
        self.assertEqual(a["error"]["message"], "'tdm' must be true or false")


class TdmRepStates(DaemonTest):
    """The state each answer gives, its lifetime, refreshes and failures,
    as inspect shows them with "resource":"tdmrep"."""

    def tdm_inspect(self, orig):
        return self.c.call({"op": "inspect", "origin": orig,
                            "resource": "tdmrep"})

    def fetched(self, host, **kw):
        self.origin.robots(host, RULES)
        self.origin.set(host, TDM, **kw)
        self.assertAnswer(self.check("http://%s/a/1" % host, tdm=True),
                          ok=True)
        return self.tdm_inspect("http://" + host)

    def test_rules(self):
        self.start()
        body = json.dumps([{"location": "/a/", "tdm-reservation": 1},
                           {"location": "/a/b", "tdm-reservation": 0,
                            "tdm-policy": "https://p.test/p.json"},
                           {"location": "no-slash", "tdm-reservation": 1}])
        a = self.fetched("r.test", body=body)
        self.assertAnswer(a, ok=True, resource="tdmrep", state="rules",
                          http_status=200, source="fetched",
                          body_bytes=len(body), fetching=False, stale=False)
        self.assertEqual(a["rules"], [
            {"member": 0, "location": "/a/", "tdm-reservation": 1,
             "tdm-policy": None},
            {"member": 1, "location": "/a/b", "tdm-reservation": 0,
             "tdm-policy": "https://p.test/p.json"}])
        self.assertEqual([(w["line"], w["code"], w["resource"])
                          for w in a["warnings"]],
                         [(1, "tdmrep_shadowed", "tdmrep"),
                          (1, "tdmrep_location", "tdmrep")])
        self.assertEqual(a["expires_in"], 86400)
        self.assertEqual(a["version"], hashlib.sha256(
            body.encode()).hexdigest()[:16])

    def test_invalid_says_why(self):
        self.start()
        a = self.fetched("inv.test", body='{"location":"/"}')
        self.assertAnswer(a, ok=True, state="invalid", http_status=200,
                          rules=None)
        self.assertEqual(a["warnings"], [
            {"line": None, "code": "tdmrep_invalid",
             "message": "not a JSON array of rules: invalid",
             "resource": "tdmrep"}])
        a = self.fetched("inv2.test", body="<html>")
        self.assertAnswer(a, state="invalid")
        self.assertEqual(a["warnings"][0]["code"], "tdmrep_invalid")
        self.assertTrue(a["warnings"][0]["message"].startswith("not JSON ("),
                        a)

    def test_4xx_is_none(self):
        self.start()
        for st in (404, 410, 403):
            with self.subTest(status=st):
                a = self.fetched("n%d.test" % st, status=st, body="x")
                self.assertAnswer(a, ok=True, state="none", http_status=st,
                                  rules=None, warnings=[])
                self.assertEqual(a["retry"]["fail_streak"], 0)

    def test_unreachable_then_the_good_copy_is_kept(self):
        self.start()
        a = self.fetched("down.test", status=503)
        self.assertAnswer(a, ok=True, state="unreachable", http_status=503)
        self.assertEqual(a["retry"]["fail_streak"], 1)
        self.assertEqual(a["retry"]["cause"]["code"], "http_503")
        self.assertBetween(a["expires_in"], 30, 60, "503 retry")
        # the retry, due on robots.txt's 503 schedule, gets the file
        self.origin.set("down.test", TDM, body=FILE,
                        headers={"Cache-Control": "max-age=120"})
        self.advance(61)
        self.check("http://down.test/x", tdm=True)
        self.assertTrue(poll(lambda: self.tdm_inspect("http://down.test")
                             ["state"] == "rules"))
        a = self.tdm_inspect("http://down.test")
        self.assertEqual(a["expires_in"], 120)
        self.assertEqual(a["retry"]["fail_streak"], 0)
        # due again: the refresh fails and the copy keeps answering
        self.origin.set("down.test", TDM, status=500)
        self.advance(121)
        self.check("http://down.test/x", tdm=True)
        self.origin.wait_hits("down.test", 3, path=TDM)
        self.assertTrue(poll(lambda: self.tdm_inspect("http://down.test")
                             ["retry"]["fail_streak"] == 1))
        a = self.tdm_inspect("http://down.test")
        self.assertAnswer(a, state="rules", stale=True, http_status=500)
        self.assertEqual(len(a["rules"]), 2)
        self.assertEqual(self.stats()["tdmrep_fetch_errors"], 2)

    def test_a_refresh_is_conditional_and_a_304_keeps_the_file(self):
        self.start()
        a = self.fetched("etag.test", body=FILE, etag='"t1"',
                         headers={"Cache-Control": "max-age=60"})
        version = a["version"]
        self.advance(61)
        self.check("http://etag.test/x", tdm=True)
        hits = self.origin.wait_hits("etag.test", 2, path=TDM)
        self.assertEqual(hits[1].headers.get("if-none-match"), '"t1"')
        self.assertTrue(poll(lambda: self.stats()
                             .get("tdmrep_revalidated") == 1))
        a = self.tdm_inspect("http://etag.test")
        self.assertAnswer(a, state="rules", version=version, stale=False)

    def test_inspect_errors(self):
        self.start()
        a = self.tdm_inspect("http://never.test")
        self.assertError(a, "not_cached")
        self.assertEqual(a["error"]["message"], "the origin "
                         "http://never.test's tdmrep.json is not in the cache")
        a = self.c.call({"op": "inspect", "origin": "http://x.test",
                         "resource": "sitemap"})
        self.assertError(a, "bad_request")
        # robots.txt's entry says nothing of tdmrep
        self.origin.robots("plain.test", RULES)
        self.check("http://plain.test/")
        a = self.inspect("http://plain.test")
        self.assertNotIn("resource", a)
        self.assertAnswer(self.c.call({"op": "inspect",
                                       "origin": "http://plain.test",
                                       "resource": "robots.txt"}),
                          ok=True, state="rules")

    def test_off(self):
        self.start("--tdmrep", "off")
        a = self.tdm_inspect("http://x.test")
        self.assertError(a, "not_cached")
        self.assertEqual(a["error"]["message"],
                         "tdmrep.json is never fetched (--tdmrep off)")


def ver(body):
    return hashlib.sha256(body.encode()).hexdigest()[:16]


class TdmRepAnswer(DaemonTest):
    """The answer's "tdm" member (contract: "Every signal, not only
    robots.txt", TDMRep)."""

    def serve(self, host, **kw):
        self.origin.robots(host, RULES)
        self.origin.set(host, TDM, **kw)

    def tdm(self, url, **kw):
        a = self.check(url, tdm=True, **kw)
        self.assertIs(a.get("ok"), True, a)
        return a

    def test_first_matching_member_decides(self):
        self.serve("ans.test", body=FILE)
        self.start()
        a = self.tdm("http://ans.test/a/x")
        self.assertEqual(a["tdm"], {
            "state": "rules", "reservation": 1,
            "policy": "https://t.test/policy.json", "location": "/a/*",
            "version": ver(FILE)})
        self.assertEqual(self.tdm("http://ans.test/b?q=1")["tdm"], {
            "state": "rules", "reservation": 0, "policy": None,
            "location": "/", "version": ver(FILE)})

    def test_no_member_matches(self):
        body = json.dumps([{"location": "/only/", "tdm-reservation": 1}])
        self.serve("nm.test", body=body)
        self.start()
        self.assertEqual(self.tdm("http://nm.test/x")["tdm"], {
            "state": "rules", "reservation": None, "policy": None,
            "location": None, "version": ver(body)})

    def test_a_disallowed_url_answers_null(self):
        self.serve("dis.test", body=FILE)
        self.start()
        a = self.tdm("http://dis.test/private/a")
        self.assertAnswer(a, allowed=False)
        self.assertIsNone(a["tdm"])

    def test_states_without_rules(self):
        self.serve("n404.test", status=404)
        self.serve("n503.test", status=503)
        self.serve("ninv.test", body="{}")
        self.start()
        cases = [("n404.test", "none"), ("n503.test", "unreachable"),
                 ("ninv.test", "invalid")]
        for host, state in cases:
            with self.subTest(host=host):
                t = self.tdm("http://%s/a/x" % host)["tdm"]
                self.assertEqual((t["state"], t["reservation"],
                                  t["policy"], t["location"]),
                                 (state, None, None, None))
                self.assertRegex(t["version"], "^[0-9a-f]{16}$")
        self.assertEqual(self.tdm("http://ninv.test/")["tdm"]["version"],
                         ver("{}"))

    def test_off_answers_none_without_fetching(self):
        self.serve("off.test", body=FILE)
        self.start("--tdmrep", "off")
        self.assertEqual(self.tdm("http://off.test/a/x")["tdm"], {
            "state": "none", "reservation": None, "policy": None,
            "location": None, "version": None})
        self.assertEqual(len(self.origin.hits("off.test", TDM)), 0)

    def test_usage_has_the_tdm_purpose(self):
        self.serve("use.test", body=FILE)
        self.start()
        self.assertEqual(
            self.tdm("http://use.test/a/x", usage=True)["usage"]["tdm"],
            "disallowed")
        self.assertEqual(
            self.tdm("http://use.test/b", usage=True)["usage"]["tdm"],
            "allowed")
        a = self.check("http://use.test/b", usage=True)
        self.assertNotIn("tdm", a["usage"])

    def test_the_page_overrides_and_the_evidence_names_the_file(self):
        self.serve("pg.test", body=FILE)
        self.start()
        page = {"headers": [["TDM-Reservation", "0"]], "meta": []}
        a = self.tdm("http://pg.test/a/x", page=page)
        self.assertEqual(a["tdm"], {
            "state": "rules", "reservation": 0,
            "policy": "https://t.test/policy.json", "location": "/a/*",
            "version": ver(FILE), "from": "header"})
        self.assertEqual(a["evidence"]["tdmrep"], ver(FILE))
        a = self.check("http://pg.test/a/x", page=page)
        self.assertIsNone(a["evidence"]["tdmrep"])

    def test_a_batch_answers_each_row(self):
        self.serve("bt.test", body=FILE)
        c = self.start()
        a = c.call({"op": "check", "agent": "Bot", "tdm": True,
                    "urls": ["http://bt.test/a/1", "http://bt.test/z",
                             "http://bt.test/private/q"]})
        self.assertEqual([r["tdm"] and r["tdm"]["reservation"]
                          for r in a["results"]], [1, 0, None])
        self.assertIsNone(a["results"][2]["tdm"])

    def test_a_fetch_that_times_out_is_unreachable(self):
        self.serve("slow.test", body=FILE, hold=True)
        self.start("--fetch-timeout", "1")
        a = self.tdm("http://slow.test/a/x")
        self.assertAnswer(a, allowed=True, source="fetched")
        self.assertEqual((a["tdm"]["state"], a["tdm"]["reservation"]),
                         ("unreachable", None))
        i = self.c.call({"op": "inspect", "origin": "http://slow.test",
                         "resource": "tdmrep"})
        self.assertEqual(i["retry"]["cause"]["code"], "timeout")

    def test_wait_false_on_a_cached_robots_txt_answers_tdm_null(self):
        self.serve("wf.test", body=FILE, hold=True)
        self.start()
        self.assertAnswer(self.check("http://wf.test/x"), ok=True)
        a = self.check("http://wf.test/a/1", tdm=True, wait=False)
        self.assertAnswer(a, ok=True, source="cache", allowed=True)
        self.assertIsNone(a["tdm"])
        self.origin.wait_hits("wf.test", 1, path=TDM)
        self.origin.release("wf.test", TDM)
        self.assertTrue(poll(lambda: self.check(
            "http://wf.test/a/1", tdm=True, wait=False)["tdm"] is not None))

    def test_an_unsettled_file_still_answers_the_pages_own_reservation(self):
        # The file is not fetched yet ("wait":false): the page's own
        # TDM-Reservation answers, state "pending", never less than the
        # page says; without a page "tdm" stays null.
        self.serve("wp.test", body=FILE, hold=True)
        self.start()
        self.assertAnswer(self.check("http://wp.test/x"), ok=True)
        page = {"headers": [["TDM-Reservation", "1"]]}
        a = self.check("http://wp.test/a/1", tdm=True, wait=False,
                       usage=True, page=page)
        self.assertAnswer(a, ok=True, source="cache", allowed=True)
        self.assertEqual(a["tdm"], {"state": "pending", "reservation": 1,
                                    "policy": None, "location": None,
                                    "version": None, "from": "header"})
        self.assertEqual(a["usage"]["tdm"], "disallowed")
        self.assertIsNone(a["evidence"]["tdmrep"])
        a = self.check("http://wp.test/a/1", tdm=True, wait=False, page={
            "headers": [["TDM-Reservation", "1"]],
            "meta": [["tdm-reservation", "0"],
                     ["tdm-policy", "https://p.test/x"]]})
        self.assertEqual(a["tdm"], {"state": "pending", "reservation": 0,
                                    "policy": "https://p.test/x",
                                    "location": None, "version": None,
                                    "from": "meta"})
        a = self.check("http://wp.test/a/1", tdm=True, wait=False,
                       page={"headers": [["X-Robots-Tag", "noai"]]})
        self.assertEqual(a["tdm"], {"state": "pending", "reservation": None,
                                    "policy": None, "location": None,
                                    "version": None})
        self.assertIsNone(self.check("http://wp.test/a/1", tdm=True,
                                     wait=False)["tdm"])
        # a disallowed URL ignores the page, pending or not
        self.assertIsNone(self.check("http://wp.test/private/1", tdm=True,
                                     wait=False, page=page)["tdm"])
        self.origin.wait_hits("wp.test", 1, path=TDM)
        self.origin.release("wp.test", TDM)
        self.assertTrue(poll(lambda: self.check(
            "http://wp.test/a/1", tdm=True, wait=False)["tdm"] is not None))
        a = self.check("http://wp.test/z", tdm=True, page=page)
        self.assertEqual((a["tdm"]["state"], a["tdm"]["reservation"],
                          a["tdm"]["location"], a["tdm"]["from"]),
                         ("rules", 1, "/", "header"))

    def test_an_overloaded_file_still_answers_the_pages_own_reservation(self):
        # One waiting slot, taken: the file's fetch is refused as
        # overloaded, and the check goes on with robots.txt's cached copy.
        self.serve("busy.test", body=FILE, hold=True)
        self.serve("ov.test", body=FILE)
        self.start("--max-waiting", "1")
        self.assertAnswer(self.check("http://ov.test/x"), ok=True)
        held = self.d.client()
        held.send({"op": "check", "url": "http://busy.test/a/x",
                   "agent": "Bot", "tdm": True, "id": 1})
        self.origin.wait_hits("busy.test", 1, path=TDM)
        self.assertTrue(poll(lambda: self.stats()["waiting"] == 1))
        a = self.check("http://ov.test/a/1", tdm=True,
                       page={"meta": [["tdm-reservation", "1"]]})
        self.assertAnswer(a, ok=True, allowed=True)
        self.assertEqual(a["tdm"], {"state": "pending", "reservation": 1,
                                    "policy": None, "location": None,
                                    "version": None, "from": "meta"})
        self.assertIsNone(self.check("http://ov.test/a/1", tdm=True)["tdm"])
        self.origin.release("busy.test", TDM)
        self.assertAnswer(held.recv(), id=1, ok=True)


class TdmRepStateFile(DaemonTest):
    """tdmrep.json in the state file (--state-file): robotsd stopped and
    started again answers a saved origin's "tdm" exactly as before, from
    the file, without fetching it again; --tdmrep off passes its records
    over; a state file of the previous format still loads."""

    HOSTS = {"s.test": dict(body=FILE, etag='"s1"',
                            headers={"Cache-Control": "max-age=7200"}),
             "n.test": dict(status=404),
             "u.test": dict(status=503),
             "i.test": dict(body="<html>")}

    def setUp(self):
        super().setUp()
        tmp = tempfile.mkdtemp(prefix="robotsd-integ-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.state = os.path.join(tmp, "state")

    def restart(self, *args):
        self.d.stop()
        self.d.proc = None
        return self.start("--state-file", self.state, *args)

    def tdm_inspect(self, host):
        return self.c.call({"op": "inspect", "origin": "http://" + host,
                            "resource": "tdmrep"})

    def saved(self):
        """Each host's robots.txt and tdmrep.json fetched, the daemon
        stopped (saving them); each one's tdm answer and inspect."""
        for h, kw in self.HOSTS.items():
            self.origin.robots(h, RULES)
            self.origin.set(h, TDM, **kw)
        self.start("--state-file", self.state)
        before = {}
        for h in self.HOSTS:
            a = self.check("http://%s/a/x" % h, tdm=True)
            self.assertAnswer(a, ok=True, allowed=True, source="fetched")
            before[h] = (a["tdm"], self.tdm_inspect(h))
        self.assertEqual({h: b[0]["state"] for h, b in before.items()},
                         {"s.test": "rules", "n.test": "none",
                          "u.test": "unreachable", "i.test": "invalid"})
        return before

    def test_a_restart_answers_tdm_as_before_without_a_fetch(self):
        before = self.saved()
        hits = {h: len(self.origin.hits(h)) for h in self.HOSTS}
        self.restart()
        for h, (tdm, insp) in before.items():
            with self.subTest(host=h):
                a = self.check("http://%s/a/x" % h, tdm=True)
                self.assertAnswer(a, ok=True, allowed=True, source="cache",
                                  tdm=tdm)
                i = self.tdm_inspect(h)
                for k in ("state", "version", "http_status", "rules",
                          "warnings", "body_bytes", "final_url", "stale"):
                    self.assertEqual(i.get(k), insp.get(k), k)
                self.assertEqual(i["retry"]["fail_streak"],
                                 insp["retry"]["fail_streak"])
                self.assertEqual(i["retry"]["cause"], insp["retry"]["cause"])
                self.assertEqual(i["retry"]["next_retry"],
                                 insp["retry"]["next_retry"])
                self.assertLessEqual(i["expires_in"], insp["expires_in"])
        self.assertEqual({h: len(self.origin.hits(h)) for h in self.HOSTS},
                         hits)
        self.assertIn("event=state_loaded origins=4 file=%s tdmrep=4"
                      % self.state, self.d.log())
        self.assertEqual(before["s.test"][0]["reservation"], 1)
        # its validators came through: the refresh, when due, is a 304
        self.advance(7201)
        self.check("http://s.test/a/x", tdm=True)
        got = self.origin.wait_hits("s.test", 2, path=TDM)
        self.assertEqual(got[1].headers.get("if-none-match"), '"s1"')

    def test_tdmrep_off_passes_its_records_over(self):
        self.saved()
        hits = {h: len(self.origin.hits(h, TDM)) for h in self.HOSTS}
        self.restart("--tdmrep", "off")
        self.assertIn("event=state_loaded origins=4 file=%s "
                      "tdmrep_skipped=4" % self.state, self.d.log())
        a = self.check("http://s.test/a/x", tdm=True)
        self.assertAnswer(a, ok=True, allowed=True, source="cache")
        self.assertEqual(a["tdm"]["state"], "none")
        self.assertEqual({h: len(self.origin.hits(h, TDM))
                          for h in self.HOSTS}, hits)
        # saved again without them, then loaded with a cache for them: the
        # file holds robots.txt's only, and tdmrep.json is fetched anew
        self.restart()
        self.assertIn("event=state_loaded origins=4 file=%s tdmrep=0"
                      % self.state, self.d.log())
        a = self.check("http://s.test/a/x", tdm=True)
        self.assertEqual(a["tdm"]["reservation"], 1)
        self.assertEqual(len(self.origin.hits("s.test", TDM)),
                         hits["s.test"] + 1)

    def test_a_state_file_of_format_4_loads(self):
        # Saved by the robotsd before tdmrep.json was kept in it
        # (tests/data/README.md): its robots.txt entries load; a check
        # that asks for tdm fetches the file.
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(
            __file__)), "..", "data", "state-format4.bin"), self.state)
        self.origin.robots("rules.test", "User-agent: *\nDisallow: /private\n")
        self.origin.set("rules.test", TDM, body=FILE)
        self.start("--state-file", self.state)
        self.assertIn("event=state_loaded origins=3 file=%s tdmrep=0"
                      % self.state, self.d.log())
        self.assertEqual(self.stats()["cache_entries"], 3)
        a = self.check("http://rules.test/private/x", tdm=True)
        self.assertAnswer(a, ok=True, allowed=False)
        a = self.check("http://rules.test/a/x", tdm=True)
        self.assertEqual(a["tdm"]["reservation"], 1)
        self.assertEqual(len(self.origin.hits("rules.test", TDM)), 1)


class TdmRepLog(DaemonTest):

    def test_fetch_and_backoff_lines_name_the_resource(self):
        self.origin.robots("lg.test", RULES)
        self.origin.set("lg.test", TDM, status=503)
        self.start()
        self.check("http://lg.test/a", tdm=True)
        self.assertTrue(poll(lambda: "event=backoff_start" in self.d.log()))
        log = self.d.log()
        self.assertRegex(log, r"event=fetch origin=http://lg\.test "
                         r"resource=tdmrep status=503 .* outcome=unreachable")
        self.assertRegex(log, r"event=backoff_start origin=http://lg\.test "
                         r"resource=tdmrep stale=0")
        self.assertRegex(log, r"event=fetch origin=http://lg\.test "
                         r"status=200 .* outcome=rules")


class TdmRepCtl(DaemonTest):

    def ctl(self, *args):
        return subprocess.run([ROBOTSCTL, "-s", self.d.socket] + list(args),
                              capture_output=True, text=True, timeout=30)

    def test_robotsctl_check_tdm(self):
        body = json.dumps([{"location": "/a/*", "tdm-reservation": 1,
                            "tdm-policy": "https://ex.test/p.json"}])
        self.origin.robots("ctl.test", RULES)
        self.origin.set("ctl.test", TDM, body=body)
        self.start()
        r = self.ctl("check", "--tdm", "http://ctl.test/a/1", "Bot")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout, (
            "allowed http://ctl.test/a/1 (no_rule)\n"
            "  tdm: reservation=1 policy=https://ex.test/p.json "
            "location=/a/* (rules, version %s)\n" % ver(body)))
        r = self.ctl("check", "--tdm", "--usage", "http://ctl.test/b", "Bot")
        self.assertEqual(r.stdout, (
            "allowed http://ctl.test/b (no_rule)\n"
            "  usage: train-ai=unknown search=unknown ai-input=unknown "
            "ai-use=unknown tdm=unknown\n"
            "  tdm: reservation=none policy=- location=- "
            "(rules, version %s)\n" % ver(body)))
        r = self.ctl("check", "--tdm", "http://ctl.test/private/x", "Bot")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, (
            "disallowed http://ctl.test/private/x "
            "(line 2: disallow /private/)\n"
            "  tdm: none (a disallowed URL)\n"))
        r = self.ctl("--json", "check", "--tdm", "http://ctl.test/a/2", "Bot")
        self.assertEqual(json.loads(r.stdout)["tdm"]["reservation"], 1)
        # without --tdm, nothing of it
        r = self.ctl("check", "http://ctl.test/a/1", "Bot")
        self.assertEqual(r.stdout, "allowed http://ctl.test/a/1 (no_rule)\n")

    def test_robotsctl_test_answers_as_the_daemon(self):
        # The same robots.txt, tdmrep.json and page, offline and from the
        # daemon: the same signals and evidence; a disallowed URL ignores
        # the page, tdmrep.json included (evidence.tdmrep null).
        self.origin.robots("same.test", RULES)
        self.origin.set("same.test", TDM, body=FILE)
        self.start()
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        files = {"robots.txt": RULES, "tdmrep.json": FILE}
        for name, body in files.items():
            with open(os.path.join(d.name, name), "w") as f:
                f.write(body)
        h = [["TDM-Reservation", "0"], ["X-Robots-Tag", "noai"]]
        for path, allowed in (("/a/1", True), ("/private/1", False)):
            url = "http://same.test" + path
            a = self.check(url, agent="Bot", tdm=True, usage=True,
                           page={"headers": h})
            r = subprocess.run(
                [ROBOTSCTL, "--json", "test", "--usage", "--tdmrep",
                 os.path.join(d.name, "tdmrep.json")] +
                sum([["--header", "%s: %s" % (n, v)] for n, v in h], []) +
                [os.path.join(d.name, "robots.txt"), "Bot", url],
                capture_output=True, text=True, timeout=30)
            o = json.loads(r.stdout)
            self.assertIs(a["allowed"], allowed, a)
            for k in ("allowed", "usage", "tdm", "robots_tag", "evidence"):
                self.assertEqual(o[k], a[k], (path, k))
            self.assertEqual(a["evidence"]["tdmrep"],
                             ver(FILE) if allowed else None)


class TdmRepBudget(DaemonTest):
    """robots.txt's and tdmrep.json's caches under one --cache-max-bytes
    (robotsd(8)): together within it, the least recently used of either
    going first; without TDMRep the whole cap is robots.txt's."""

    def test_both_caches_stay_within_one_cap(self):
        cap = 20000
        self.start("--cache-max-bytes", str(cap))
        n = 0
        while self.stats()["evictions"] == 0:   # robots.txt fills it all
            n += 1
            self.assertLess(n, 200, self.stats())
            h = "f%d.test" % n
            self.origin.robots(h, RULES)
            self.origin.set(h, TDM, body=FILE)
            self.assertAnswer(self.check("http://%s/x" % h), ok=True)
        self.assertGreater(self.stats()["cache_bytes"], cap * 3 // 4)
        for i in range(n, n - 5, -1):
            a = self.check("http://f%d.test/a/1" % i, tdm=True)
            self.assertEqual(a["tdm"]["reservation"], 1, a)
            s = self.stats()
            self.assertLessEqual(s["cache_bytes"] + s["tdmrep_bytes"], cap,
                                 s)
        self.assertGreater(s["tdmrep_entries"], 0, s)
        self.assertGreater(s["tdmrep_bytes"], 0, s)


class TdmRepFleet(SharedTest):
    """With --redis the fleet fetches an origin's tdmrep.json once, under
    its own key: robots.txt's shared value is untouched."""

    def test_one_fetch_per_fleet(self):
        self.origin.robots("fl.test", RULES)
        self.origin.set("fl.test", TDM, body=FILE)
        a, b = self.fleet(2)
        x = self.check("http://fl.test/a/1", client=a, tdm=True)
        self.assertEqual(x["tdm"]["reservation"], 1)
        y = self.check("http://fl.test/a/2", client=b, tdm=True)
        self.assertAnswer(y, ok=True, allowed=True, source="shared")
        self.assertEqual(y["tdm"], x["tdm"])
        self.assertEqual(len(self.origin.hits("fl.test", TDM)), 1)
        self.assertEqual(len(self.origin.hits("fl.test", "/robots.txt")), 1)
        i = b.call({"op": "inspect", "origin": "http://fl.test",
                    "resource": "tdmrep"})
        self.assertAnswer(i, state="rules", source="shared")
        # robots.txt's value is robots.txt's
        self.assertAnswer(self.check("http://fl.test/private/x", client=b),
                          ok=True, allowed=False, reason="rule")

    def test_a_purge_refetches_it_for_the_fleet(self):
        self.origin.robots("fp.test", RULES)
        self.origin.set("fp.test", TDM, body=FILE)
        a, b = self.fleet(2)
        self.check("http://fp.test/a/1", client=a, tdm=True)
        # the tier's writes are a's own, in the background: the file is
        # shared before the purge, and the purge has reached the tier
        # before b looks (as test_shared's robots.txt purge waits)
        keys = [entry_key("http://fp.test"), entry_key("http://fp.test" + TDM)]
        self.assertTrue(poll(lambda: all(self.redis.cmd("EXISTS", k) == 1
                                         for k in keys)), keys)
        self.assertEqual(a.call({"op": "purge", "origin": "http://fp.test"})
                         ["purged"], 1)
        self.assertTrue(poll(lambda: all(self.redis.cmd("EXISTS", k) == 0
                                         for k in keys)), keys)
        self.origin.set("fp.test", TDM, status=404)
        y = self.check("http://fp.test/a/2", client=b, tdm=True)
        self.assertEqual(y["tdm"]["state"], "none")
        self.assertEqual(len(self.origin.hits("fp.test", TDM)), 2)

    def test_history_of_a_file_not_held_here_is_the_fleets(self):
        """history of tdmrep.json on an instance that never asked for it
        reads the file's shared value: the writer's versions, each with
        its state (an invalid file stays invalid across the tier), and
        nothing is fetched or cached there."""
        self.origin.robots("fh.test", RULES)
        self.origin.set("fh.test", TDM, body=INVALID)
        a, b = self.fleet(2)
        self.check("http://fh.test/a/1", client=a, tdm=True)
        self.origin.set("fh.test", TDM, body=FILE)
        for x in (a, b):  # one clock: b leaves out versions from its future
            self.advance(2 * 86400, client=x)
        self.check("http://fh.test/a/1", client=a, tdm=True)

        def shared():
            h = b.call({"op": "history", "origin": "http://fh.test",
                        "resource": "tdmrep"})
            return h if len(h.get("versions", ())) == 2 else None
        self.assertTrue(poll(shared), "the tier never held both versions")
        h = shared()
        self.assertAnswer(h, ok=True, origin="http://fh.test",
                          resource="tdmrep")
        self.assertEqual([(v["version"], v["state"]) for v in h["versions"]],
                         [(ver(FILE), "rules"), (ver(INVALID), "invalid")])
        self.assertError(b.call({"op": "inspect", "origin": "http://fh.test",
                                 "resource": "tdmrep"}), "not_cached")
        self.assertEqual(len(self.origin.hits("fh.test", TDM)), 2)


INVALID = '{"location":"/"}'


class TdmRepHistory(DaemonTest):
    """history with "resource":"tdmrep": the file's own versions, newest
    first, each state tdmrep.json's, the resource named; robots.txt's
    answer as before."""

    def tdm_inspect(self, host):
        return self.c.call({"op": "inspect", "origin": "http://" + host,
                            "resource": "tdmrep"})

    def tdm_history(self, orig):
        return self.c.call({"op": "history", "origin": orig,
                            "resource": "tdmrep"})

    def refetched(self, host, version, advance):
        """Move the clock on, check (the file's refresh starts) and wait
        until the file's version is version."""
        self.advance(advance)
        self.check("http://%s/a/1" % host, tdm=True)

        def settled():
            a = self.tdm_inspect(host)
            return a.get("version") == version and not a.get("fetching")
        self.assertTrue(poll(settled), self.tdm_inspect(host))

    def ctl(self, *args):
        return subprocess.run([ROBOTSCTL, "-s", self.d.socket] + list(args),
                              capture_output=True, text=True, timeout=30)

    def test_each_version_and_its_state(self):
        host = "h.test"
        self.origin.robots(host, RULES)
        self.origin.set(host, TDM, status=503)
        self.start()
        self.check("http://h.test/a/1", tdm=True)
        a = self.tdm_inspect(host)
        self.assertAnswer(a, state="unreachable", http_status=503)
        down = a["version"]
        self.origin.set(host, TDM, body=FILE)
        self.refetched(host, ver(FILE), 61)  # robots.txt's 503 retry
        self.origin.set(host, TDM, body=INVALID)
        self.refetched(host, ver(INVALID), 2 * 86400)
        self.origin.set(host, TDM, status=404)
        self.refetched(host, ver("status:404"), 2 * 86400)
        h = self.tdm_history("http://h.test")
        self.assertAnswer(h, ok=True, origin="http://h.test",
                          resource="tdmrep")
        self.assertEqual([(v["version"], v["http_status"], v["state"])
                          for v in h["versions"]],
                         [(ver("status:404"), 404, "none"),
                          (ver(INVALID), 200, "invalid"),
                          (ver(FILE), 200, "rules"),
                          (down, 503, "unreachable")])
        firsts = [v["first_seen"] for v in h["versions"]]
        self.assertEqual(firsts, sorted(firsts, reverse=True))
        # robots.txt's history: its one version, no resource named
        r = self.c.call({"op": "history", "origin": "http://h.test"})
        self.assertEqual(sorted(r), ["id", "ok", "origin", "versions"])
        self.assertEqual([(v["version"], v["state"]) for v in r["versions"]],
                         [(ver(RULES), "rules")])
        self.assertEqual(r, self.c.call({"op": "history",
                                         "origin": "http://h.test",
                                         "resource": "robots.txt",
                                         "id": r["id"]}))
        # robotsctl history --tdm: the same versions and states
        p = self.ctl("history", "--tdm", "http://h.test")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(),
                         ["VERSION", "FIRST_SEEN", "LAST_SEEN", "STATUS",
                          "STATE"])
        self.assertEqual([(f[0], f[3], f[4]) for f in
                          (line.split() for line in lines[1:])],
                         [(ver("status:404"), "404", "none"),
                          (ver(INVALID), "200", "invalid"),
                          (ver(FILE), "200", "rules"),
                          (down, "503", "unreachable")])
        p = self.ctl("history", "http://h.test")
        self.assertEqual([line.split()[4] for line in
                          p.stdout.splitlines()[1:]], ["rules"])
        p = self.ctl("inspect", "--tdm", "http://h.test")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("resource: tdmrep", p.stdout.splitlines())
        self.assertIn("state: none", p.stdout.splitlines())

    def test_errors(self):
        self.start()
        a = self.tdm_history("http://never.test")
        self.assertError(a, "not_cached")
        self.assertEqual(a["error"]["message"],
                         "the origin's tdmrep.json is not in the cache")
        # robots.txt cached, its tdmrep.json never asked for
        self.origin.robots("plain.test", RULES)
        self.check("http://plain.test/")
        self.assertError(self.tdm_history("http://plain.test"), "not_cached")
        self.assertError(self.c.call({"op": "history",
                                      "origin": "http://plain.test",
                                      "resource": "sitemap"}),
                         "bad_request")
        p = self.ctl("history", "--tdm", "http://plain.test")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("tdmrep.json is not in the cache", p.stderr)

    def test_off(self):
        self.start("--tdmrep", "off")
        a = self.tdm_history("http://x.test")
        self.assertError(a, "not_cached")
        self.assertEqual(a["error"]["message"],
                         "tdmrep.json is never fetched (--tdmrep off)")


class TdmRepWatch(DaemonTest):
    """watch with "resources":[...,"tdmrep"]: a new version of an origin's
    tdmrep.json is an event naming the resource, for the watchers that ask
    for it; robots.txt's events are as ever, and a watch without
    "resources" hears only of robots.txt."""

    def watch(self, req):
        w = self.d.client()
        self.assertAnswer(w.call(dict(req, op="watch")), ok=True)
        return w

    def test_a_new_file_is_an_event_for_its_watchers(self):
        host = "w.test"
        self.origin.robots(host, RULES)
        self.origin.set(host, TDM, body=FILE)
        self.start()
        both = self.watch({"origins": ["http://w.test"], "agents": ["foobot"],
                           "resources": ["robots.txt", "tdmrep"]})
        plain = self.watch({"origins": ["http://w.test"],
                            "agents": ["foobot"]})
        tdm_only = self.watch({"all": True, "resources": ["tdmrep"]})
        self.check("http://w.test/a/1", tdm=True)
        evs = [both.recv(), both.recv()]
        tdm = [e for e in evs if "resource" in e]
        robots = [e for e in evs if "resource" not in e]
        self.assertEqual(len(tdm), 1, evs)
        self.assertEqual(tdm[0], {
            "event": "changed", "origin": "http://w.test",
            "resource": "tdmrep", "old": None, "new": ver(FILE),
            "at": tdm[0]["at"], "state": "rules", "old_state": None})
        self.assertAlmostEqual(tdm[0]["at"], self.now(), delta=5)
        self.assertEqual(robots[0]["new"], ver(RULES))
        self.assertEqual(robots[0]["agents"], {"foobot": {
            "newly_disallowed": ["/private/"], "newly_allowed": [],
            "usage_changed": False}})
        self.assertEqual(tdm_only.recv(), tdm[0])
        self.assertEqual(plain.recv(), robots[0])
        # a new file that is not a JSON array: invalid, its old state said
        self.origin.set(host, TDM, body=INVALID)
        self.advance(2 * 86400)
        self.check("http://w.test/a/1", tdm=True)
        ev = both.recv()
        self.assertEqual(ev, {
            "event": "changed", "origin": "http://w.test",
            "resource": "tdmrep", "old": ver(FILE), "new": ver(INVALID),
            "at": ev["at"], "state": "invalid", "old_state": "rules"})
        self.assertEqual(tdm_only.recv(), ev)
        self.wait_fetched("http://w.test")  # robots.txt's refresh too
        # robots.txt came again the same (no event); its next change is
        # the next line of both robots.txt watchers, tdmrep.json's of none
        body = "User-agent: *\nDisallow: /b\n"
        self.origin.robots(host, body)
        self.advance(2 * 86400)
        self.check("http://w.test/x")
        for w in (plain, both):
            ev = w.recv()
            self.assertNotIn("resource", ev)
            self.assertEqual((ev["old"], ev["new"]),
                             (ver(RULES), ver(body)))

    def test_robotsctl_watch_tdm(self):
        self.start()
        # unbuffered: a line read takes no more bytes, so select() tells
        p = subprocess.Popen([ROBOTSCTL, "-s", self.d.socket, "watch",
                              "--tdm", "http://p.test"], bufsize=0,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(p.kill)
        self.assertTrue(poll(lambda: self.stats().get("feed_watchers") == 1),
                        "robotsctl never watched")
        self.origin.robots("p.test", RULES)
        self.origin.set("p.test", TDM, body=FILE)
        self.check("http://p.test/a/1", tdm=True)
        lines = []
        for _ in range(2):  # a line each, in time (none: a failure)
            self.assertTrue(select.select([p.stdout], [], [], 30)[0],
                            "robotsctl printed %r" % lines)
            lines.append(p.stdout.readline().decode().split(" ", 1)[1])
        lines.sort()
        self.assertEqual(lines, [
            "http://p.test none -> %s rules [*: -/private/]\n" % ver(RULES),
            "http://p.test tdmrep none -> %s rules (was none)\n" % ver(FILE)])

    def test_bad_watches(self):
        self.start()
        for res in ([], ["sitemap"], "tdmrep", [1], ["tdmrep"] * 3):
            with self.subTest(resources=res):
                self.assertError(self.c.call({"op": "watch", "all": True,
                                              "resources": res}),
                                 "bad_request")

    def test_off(self):
        self.start("--tdmrep", "off")
        a = self.c.call({"op": "watch", "all": True,
                         "resources": ["robots.txt", "tdmrep"]})
        self.assertError(a, "not_cached")
        self.assertEqual(a["error"]["message"],
                         "tdmrep.json is never fetched (--tdmrep off)")
        self.assertAnswer(self.c.call({"op": "watch", "all": True,
                                       "resources": ["robots.txt"]}),
                          ok=True)
