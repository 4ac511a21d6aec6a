"""The WARC archive (issue 19, --archive-dir): the real robotsd fetching
from the real local origin writes one response record per new version of
each origin, read back by warcio (npm, the independent WARC reader of the
Webrecorder project: tests/integ/warc/check.mjs, which also checks both
digests of every record with Node's own SHA-256), or where npm could
not install warcio by tests/integ/warc/warcread.py, a reader of our own
that checks the same; a directory that is
missing, not a directory, or on a full file system never stops answers and
moves archive_errors; robotsctl show and diff read the archive."""
import base64
import calendar
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import ROBOTSCTL, DaemonTest, poll

HERE = os.path.dirname(os.path.abspath(__file__))
WARC = os.path.join(HERE, "warc")
sys.path.insert(0, WARC)
import warcread  # noqa: E402  (beside check.mjs)
V1 = "User-agent: *\nDisallow: /one/\n"
V2 = "User-agent: *\nDisallow: /one/\nDisallow: /two/\n"
GZ = "User-agent: *\nAllow: /\nDisallow: /gz/\n"
ET = "User-agent: *\nDisallow: /etag/\n"
CAP = 500 * 1024
BIG = "User-agent: *\nDisallow: /x\n" + "# " + "z" * (CAP + 1000) + "\n"
DAY = 86400


def version(text):
    """The contract's version: 16 hex digits of SHA-256 of the text."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def warcio_ready():
    return shutil.which("node") is not None and os.path.isdir(
        os.path.join(WARC, "node_modules", "warcio"))


def read_archive(test, d):
    """Every record of the files in d, as warcio reads them (check.mjs),
    or where warcio could not be installed as warcread.py (a reader of our
    own, standard library only) reads them; fails the test on a bad
    digest."""
    if warcio_ready():
        p = subprocess.run(["node", os.path.join(WARC, "check.mjs"), d],
                           capture_output=True, text=True, timeout=60)
        test.assertEqual(p.returncode, 0, "warcio check failed:\n%s\n%s"
                         % (p.stdout, p.stderr))
        rows = [json.loads(line) for line in p.stdout.splitlines()]
    else:
        rows = warcread.read_dir(d)
    for r in rows:
        test.assertTrue(r["block_ok"], r)
        if "payload" in r:
            test.assertTrue(r["payload_ok"], r)
            r["warc_d"] = dict(r["warc"])
            r["http_d"] = {k.lower(): v for k, v in r["http"]}
            r["body"] = base64.b64decode(r["payload"])
    return rows


class Archive(DaemonTest):

    def setUp(self):
        super().setUp()
        self.adir = tempfile.mkdtemp(prefix="robotsd-archive-")
        self.addCleanup(shutil.rmtree, self.adir, True)

    def fetch(self, url):
        a = self.check(url)
        self.assertIs(a.get("ok"), True, a)
        return a

    def refresh(self, orig, url):
        """Move the clock past the entry's lifetime, check (a stale answer
        starts the refresh), wait for it to end; the next answer."""
        before = self.inspect(orig)
        self.advance(DAY + 1)
        self.check(url)
        poll(lambda: self.inspect(orig).get("last_fetch_at", 0) >
             before.get("last_fetch_at", 0) and
             not self.inspect(orig).get("fetching"))
        return self.fetch(url)

    def test_one_record_per_version_read_by_warcio(self):
        self.origin.robots("a.test", V1)
        self.origin.robots("gz.test", GZ, encoding="gzip",
                           headers={"X-Served-By": "origin.py"})
        self.origin.set("gone.test", status=404, body=b"no robots here\n")
        etag = self.origin.robots("etag.test", ET, etag='"v1"')
        hop = self.origin.redirect_chain("moved.test", 1, ET + "# moved\n")
        self.origin.robots("big.test", BIG)
        self.start("--archive-dir", self.adir)
        t0 = self.now()
        v = {}
        v["a1"] = self.fetch("http://a.test/one/x")
        t1 = self.now()  # the first record was written between t0 and t1
        v["gz"] = self.fetch("http://gz.test/gz/x")
        v["gone"] = self.fetch("http://gone.test/x")
        v["etag"] = self.fetch("http://etag.test/x")
        v["moved"] = self.fetch("http://moved.test/x")
        v["big"] = self.fetch("http://big.test/x")
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 6),
                        self.stats())
        # a new version of a.test: one more record; the same bytes again
        # (gz.test refreshed), a 404 again and a 304: none.
        self.origin.robots("a.test", V2)
        v["a2"] = self.refresh("http://a.test", "http://a.test/two/x")
        self.assertFalse(v["a2"]["allowed"], v["a2"])
        self.assertNotEqual(v["a2"]["version"], v["a1"]["version"])
        again = self.refresh("http://gz.test", "http://gz.test/gz/x")
        self.assertEqual(again["version"], v["gz"]["version"])
        self.refresh("http://gone.test", "http://gone.test/x")
        self.refresh("http://etag.test", "http://etag.test/x")
        self.assertEqual(etag.answered_304, 1)
        self.assertEqual(len(self.origin.hits("gz.test")), 2)
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 7),
                        self.stats())
        s = self.stats()
        self.assertEqual((s["archive_errors"], s["archive_dropped"]), (0, 0))
        self.d.stop()  # the writer ends with what it has queued

        rows = read_archive(self, self.adir)
        self.assertEqual([r["type"] for r in rows],
                         ["warcinfo"] + ["response"] * 7)
        info = dict(rows[0]["warc"])
        files = sorted(os.listdir(self.adir))
        self.assertEqual(len(files), 1, files)
        self.assertRegex(files[0], r"^robotsd-\d{14}-\d{5}\.warc\.gz$")
        self.assertEqual(info["WARC-Filename"], files[0])
        # the file is named for the first record's time (test clock),
        # which a running clock may have moved past a second since t0
        self.assertIn(files[0][8:22], {
            time.strftime("%Y%m%d%H%M%S", time.gmtime(t))
            for t in range(int(t0), int(t1) + 1)})
        recs = rows[1:]
        want = [("a1", "http://a.test", V1, 200),
                ("gz", "http://gz.test", GZ, 200),
                ("gone", "http://gone.test", "no robots here\n", 404),
                ("etag", "http://etag.test", ET, 200),
                ("a2", "http://a.test", V2, 200)]
        self.assertEqual(sorted(r["warc_d"]["WARC-Robotsd-Version"]
                                for r in recs),
                         sorted(a["version"] for a in v.values()))
        by_version = {r["warc_d"]["WARC-Robotsd-Version"]: r for r in recs}
        for key, orig, body, status in want:
            with self.subTest(record=key):
                r = by_version[v[key]["version"]]
                w = r["warc_d"]
                self.assertEqual(w["WARC-Target-URI"], orig + "/robots.txt")
                self.assertEqual(w["WARC-Robotsd-Origin"], orig)
                # the address the response came from: the local origin
                self.assertEqual(w["WARC-IP-Address"], "127.0.0.1")
                self.assertEqual(w["WARC-Warcinfo-ID"],
                                 info["WARC-Record-ID"])
                self.assertEqual(w["Content-Type"],
                                 "application/http;msgtype=response")
                self.assertRegex(w["WARC-Record-ID"],
                                 r"^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4"
                                 r"[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                                 r"[0-9a-f]{12}>$")
                when = calendar.timegm(time.strptime(
                    w["WARC-Date"], "%Y-%m-%dT%H:%M:%SZ"))
                self.assertGreaterEqual(when, int(t0))
                self.assertNotIn("WARC-Truncated", w)
                self.assertEqual(r["status"], status)
                self.assertEqual(r["body"], body.encode())
                self.assertEqual(r["http_d"]["content-length"],
                                 str(len(body)))
        gz = by_version[v["gz"]["version"]]
        self.assertEqual(gz["http_d"]["x-crawler-content-encoding"], "gzip")
        self.assertNotIn("content-encoding", gz["http_d"])
        self.assertEqual(gz["http_d"]["x-served-by"], "origin.py")
        self.assertEqual(gz["http_d"]["x-crawler-content-length"],
                         str(len(gzip.compress(GZ.encode()))))
        # after a redirect: the URL that gave the response
        moved = by_version[v["moved"]["version"]]
        self.assertEqual(moved["warc_d"]["WARC-Target-URI"],
                         "http://moved.test" + hop)
        self.assertEqual(moved["warc_d"]["WARC-Robotsd-Origin"],
                         "http://moved.test")
        self.assertEqual(moved["body"], (ET + "# moved\n").encode())
        # cut at 500 KiB: marked, the digests over what is kept
        big = by_version[v["big"]["version"]]
        self.assertEqual(big["warc_d"]["WARC-Truncated"], "length")
        self.assertEqual(big["body"], BIG.encode()[:CAP])
        self.assertEqual(big["http_d"]["x-crawler-content-length"],
                         str(len(BIG)))
        self.assertEqual(big["http_d"]["content-length"], str(CAP))
        # the second version of a.test is a day later than the first
        a1 = by_version[v["a1"]["version"]]["warc_d"]["WARC-Date"]
        a2 = by_version[v["a2"]["version"]]["warc_d"]["WARC-Date"]
        self.assertGreater(a2, a1)

    def ctl(self, *args, env=None, prefix=()):
        e = dict(os.environ)
        e.pop("ROBOTSD_ARCHIVE_DIR", None)
        e.update(env or {})
        p = subprocess.run(list(prefix) + [ROBOTSCTL, "-s", self.d.socket] +
                           list(args), capture_output=True, timeout=60, env=e)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_robotsctl_show_and_diff(self):
        self.origin.robots("a.test", V1)
        self.start("--archive-dir", self.adir)
        v1 = self.fetch("http://a.test/x")["version"]
        self.origin.robots("a.test", V2)
        v2 = self.refresh("http://a.test", "http://a.test/x")["version"]
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 2),
                        self.stats())
        ad = ["--archive-dir", self.adir]
        self.assertEqual(self.ctl("show", "http://a.test", v1, *ad),
                         (0, V1, ""))
        # no VERSION: the one the daemon answers from now
        self.assertEqual(self.ctl("show", "http://a.test", *ad), (0, V2, ""))
        self.assertEqual(self.ctl(
            "show", "http://a.test", v2,
            env={"ROBOTSD_ARCHIVE_DIR": self.adir}), (0, V2, ""))
        self.assertEqual(self.ctl("diff", "http://a.test", v1, v2, *ad), (
            1, "--- http://a.test %s\n+++ http://a.test %s\n"
            "@@ -1,2 +1,3 @@\n User-agent: *\n Disallow: /one/\n"
            "+Disallow: /two/\n" % (v1, v2), ""))
        self.assertEqual(self.ctl("diff", "http://a.test", v2, v2, *ad),
                         (0, "", ""))
        rc, out, err = self.ctl("show", "http://a.test", "0" * 16, *ad)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("version 0000000000000000 is not in the archive", err)
        rc, out, err = self.ctl("show", "http://b.test", v1, *ad)
        self.assertEqual((rc, out), (2, ""))
        rc, out, err = self.ctl("show", "http://a.test", "v1", *ad)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("not a version (16 hex digits)", err)
        rc, out, err = self.ctl("show", "http://a.test", v1)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("give --archive-dir DIR", err)

    def test_tdmrep_records_name_the_resource(self):
        # A check that asks for tdm archives tdmrep.json's versions too,
        # each record naming its resource; robots.txt's have the fields
        # they always had. robotsctl show and diff --tdm read them; show
        # and diff without it, and recheck, pass them over.
        tdm = "/.well-known/tdmrep.json"
        t1 = json.dumps([{"location": "/", "tdm-reservation": 1}])
        t2 = json.dumps([{"location": "/", "tdm-reservation": 0}])
        self.origin.robots("t.test", V1)
        self.origin.set("t.test", tdm, body=t1)
        self.origin.robots("n.test", V2)
        self.origin.set("n.test", tdm, status=404, body=b"no file\n")
        self.start("--archive-dir", self.adir)
        r1 = self.fetch("http://t.test/one/x")["version"]
        self.advance(60)  # tdmrep.json's first version after robots.txt's
        v1 = self.check("http://t.test/x", tdm=True)["tdm"]["version"]
        v404 = self.check("http://n.test/x", tdm=True)["tdm"]["version"]
        self.origin.set("t.test", tdm, body=t2)
        self.advance(DAY + 1)
        self.check("http://t.test/x", tdm=True)  # stale: both refreshed
        self.assertTrue(poll(lambda: self.c.call(
            {"op": "inspect", "origin": "http://t.test",
             "resource": "tdmrep"}).get("version") == version(t2)))
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 5),
                        self.stats())
        ad = ["--archive-dir", self.adir]
        self.assertEqual(self.ctl("show", "--tdm", "http://t.test", v1, *ad),
                         (0, t1, ""))
        self.assertEqual(self.ctl("show", "--tdm", "http://t.test", *ad),
                         (0, t2, ""))
        self.assertEqual(self.ctl("show", "--tdm", "http://n.test", v404,
                                  *ad), (0, "no file\n", ""))
        rc, out, _ = self.ctl("diff", "--tdm", "http://t.test", v1,
                              version(t2), *ad)
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.ctl("show", "http://t.test", *ad), (0, V1, ""))
        rc, out, err = self.ctl("show", "http://t.test", v1, *ad)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("version %s is not in the archive" % v1, err)
        rc, out, err = self.ctl("show", "--tdm", "http://t.test", r1, *ad)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("http://t.test tdmrep.json version %s is not in the "
                      "archive" % r1, err)
        # recheck at a time after every record: robots.txt's version
        # decides, never tdmrep.json's (newer, and no robots.txt rules)
        line = "http://t.test/one/x %d\n" % int(self.now() + 1)
        p = subprocess.run([ROBOTSCTL, "recheck", "--agent", "TestBot",
                            "--archive", self.adir], input=line.encode(),
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual((out["allowed"], out["version"]), (False, r1))
        self.assertIn("3 records of another resource passed over",
                      p.stderr.decode())
        self.d.stop()

        rows = read_archive(self, self.adir)
        recs = [r for r in rows if r["type"] == "response"]
        self.assertEqual(len(recs), 5)
        tdms = [r for r in recs if "WARC-Robotsd-Resource" in r["warc_d"]]
        self.assertEqual(sorted((r["warc_d"]["WARC-Robotsd-Origin"],
                                 r["warc_d"]["WARC-Robotsd-Resource"],
                                 r["warc_d"]["WARC-Target-URI"],
                                 r["warc_d"]["WARC-Robotsd-Version"],
                                 r["status"], r["body"]) for r in tdms),
                         sorted([("http://t.test", "tdmrep",
                                  "http://t.test" + tdm, v1, 200,
                                  t1.encode()),
                                 ("http://t.test", "tdmrep",
                                  "http://t.test" + tdm, version(t2), 200,
                                  t2.encode()),
                                 ("http://n.test", "tdmrep",
                                  "http://n.test" + tdm, v404, 404,
                                  b"no file\n")]))
        # robots.txt's records: the same fields in the same order as ever
        robots = [r for r in recs if r not in tdms]
        self.assertEqual(len(robots), 2)
        for r in robots:
            self.assertEqual([k for k, _ in r["warc"]], [
                "WARC-Type", "WARC-Record-ID", "WARC-Date",
                "WARC-Target-URI", "WARC-Warcinfo-ID", "WARC-IP-Address",
                "WARC-Robotsd-Origin", "WARC-Robotsd-Version",
                "WARC-Payload-Digest", "WARC-Block-Digest", "Content-Type",
                "Content-Length"])
            self.assertEqual(r["warc_d"]["WARC-Target-URI"],
                             r["warc_d"]["WARC-Robotsd-Origin"] +
                             "/robots.txt")
        self.assertEqual([k for k, _ in tdms[0]["warc"]][7:9], [
            "WARC-Robotsd-Version", "WARC-Robotsd-Resource"])

    def test_the_socket_group_reads_the_archive_others_do_not(self):
        # Under UMask=0077 the files are 0640 of the socket's group: a
        # member reads them with robotsctl show, another user is told
        # "permission denied", once, not that the version is missing.
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to drop privileges")
        nogroup = 65534
        sdir = tempfile.mkdtemp(prefix="robotsd-sock-")
        self.addCleanup(shutil.rmtree, sdir, True)
        os.chown(sdir, 0, nogroup)
        os.chmod(sdir, 0o2755)  # the socket takes the directory's group
        os.chmod(self.adir, 0o755)
        self.origin.robots("a.test", V1)
        old = os.umask(0o077)
        try:
            self.start("--archive-dir", self.adir,
                       socket_path=os.path.join(sdir, "s.sock"))
        finally:
            os.umask(old)
        self.assertEqual(os.stat(self.d.socket).st_gid, nogroup)
        v1 = self.fetch("http://a.test/x")["version"]
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 1),
                        self.stats())
        files = [f for f in os.listdir(self.adir) if f.endswith(".warc.gz")]
        self.assertEqual(len(files), 1)
        st = os.stat(os.path.join(self.adir, files[0]))
        self.assertEqual((oct(st.st_mode & 0o7777), st.st_gid),
                         (oct(0o640), nogroup))
        self.assertEqual(self.stats()["archive_errors"], 0)
        ad = ["--archive-dir", self.adir]
        member = ["setpriv", "--reuid=nobody", "--regid=nogroup",
                  "--clear-groups"]
        self.assertEqual(self.ctl("show", "http://a.test", v1, *ad,
                                  prefix=member), (0, V1, ""))
        other = ["setpriv", "--reuid=nobody", "--regid=daemon",
                 "--clear-groups"]
        rc, out, err = self.ctl("show", "http://a.test", v1, *ad,
                                prefix=other)
        self.assertEqual((rc, out), (2, ""))
        self.assertEqual(err.lower().count("permission denied"), 1, err)
        self.assertIn("may not read 1 of its 1 archive files", err)
        self.assertNotIn("not in the archive", err)

    def test_a_fleet_archives_a_version_where_it_was_fetched(self):
        from test_shared import Redis, entry_key, tier_built
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        r = Redis(self.adir, "r0").start()
        self.addCleanup(r.stop)
        self.origin.robots("fleet.test", V1)
        dirs = [os.path.join(self.adir, n) for n in ("a", "b")]
        clients = []
        for d in dirs:
            os.mkdir(d)
            clients.append(self.start("--redis", r.url, "--archive-dir", d))
        a = self.check("http://fleet.test/one/x", client=clients[0])
        self.assertEqual(a["source"], "fetched", a)
        self.assertTrue(poll(lambda: r.cmd("GET", entry_key(
            "http://fleet.test"))), "never published")
        b = self.check("http://fleet.test/one/x", client=clients[1])
        self.assertEqual((b["source"], b["version"]), ("shared", a["version"]))
        self.assertTrue(poll(lambda: self.stats(clients[0])[
            "archive_records"] == 1))
        self.assertEqual(self.stats(clients[1])["archive_records"], 0)
        self.assertEqual(len(self.origin.hits("fleet.test")), 1)
        self.assertEqual(os.listdir(dirs[1]), [])

    def test_missing_dir_or_a_file_in_its_place(self):
        missing = os.path.join(self.adir, "missing")
        afile = os.path.join(self.adir, "file")
        open(afile, "w").close()
        for where, text in ((missing, "No such file or directory"),
                            (afile, "Not a directory")):
            with self.subTest(dir=where):
                self.origin.robots("m.test", V1)
                self.start("--archive-dir", where)
                a = self.fetch("http://m.test/one/x")
                self.assertFalse(a["allowed"])
                self.assertTrue(poll(
                    lambda: self.stats()["archive_errors"] >= 2),
                    self.stats())
                s = self.stats()
                self.assertEqual(s["archive_records"], 0)
                # the counter moves just before the line is written
                log = poll(lambda: "op=open" in self.d.log(1000) and
                           self.d.log(1000))
                self.assertTrue(log, self.d.log(1000))
                self.assertIn("event=archive_error op=start", log)
                self.assertIn(text, log)
                self.d.stop()
                self.origin.reset()

    def test_a_removed_directory_or_file_is_never_written_into(self):
        """rm -rf of the archive directory while robotsd has a file open
        in it: the next version is not written into the unlinked file (it
        would count in archive_records and vanish); it is counted and
        logged as op=gone, and the new file cannot be opened (robotsd
        creates no directory). Once the directory is back, records go
        into a new file there; a file removed alone is replaced too."""
        adir = os.path.join(self.adir, "a")
        os.mkdir(adir)
        self.origin.robots("rm.test", V1)
        self.start("--archive-dir", adir)
        self.fetch("http://rm.test/one/x")
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 1))
        shutil.rmtree(adir)
        self.origin.robots("rm.test", V2)
        self.refresh("http://rm.test", "http://rm.test/two/x")
        self.assertTrue(poll(lambda: self.stats()["archive_errors"] == 2),
                        self.stats())
        s = self.stats()
        self.assertEqual((s["archive_records"], s["archive_errors"]), (1, 2))
        log = poll(lambda: "op=open" in self.d.log(1000) and
                   self.d.log(1000))
        self.assertTrue(log, self.d.log(1000))
        self.assertIn("event=archive_error op=gone", log)
        self.assertIn('error="No such file or directory"', log)
        self.assertFalse(os.path.exists(adir))  # robotsd made none
        # the directory is back: the next version goes into a new file
        os.mkdir(adir)
        self.origin.robots("rm.test", V1 + "Disallow: /three/\n")
        self.refresh("http://rm.test", "http://rm.test/three/x")
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 2),
                        self.stats())
        self.assertEqual(self.stats()["archive_errors"], 2)
        first = os.listdir(adir)
        self.assertEqual(len(first), 1, first)
        # the file alone removed: one error, the record in a new file
        os.unlink(os.path.join(adir, first[0]))
        self.origin.robots("rm.test", V1 + "Disallow: /four/\n")
        self.refresh("http://rm.test", "http://rm.test/four/x")
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 3),
                        self.stats())
        self.assertEqual(self.stats()["archive_errors"], 3)
        self.d.stop()
        rows = read_archive(self, adir)
        self.assertEqual([r["type"] for r in rows], ["warcinfo", "response"])
        self.assertEqual(rows[1]["body"],
                         (V1 + "Disallow: /four/\n").encode())

    def test_full_file_system_keeps_answers_and_counts(self):
        mnt = os.path.join(self.adir, "small")
        os.mkdir(mnt)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k",
                            "tmpfs", mnt], capture_output=True, text=True)
        if p.returncode != 0:
            self.skipTest("cannot mount a small tmpfs (needs root): %s"
                          % p.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", "-l", mnt])
        fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 4096) > 0:
                pass
        except OSError:
            pass  # full
        os.close(fd)
        for i in range(8):
            self.origin.robots("f%d.test" % i,
                               "User-agent: *\nDisallow: /f%d/\n" % i)
        self.start("--archive-dir", mnt)
        for i in range(8):
            a = self.fetch("http://f%d.test/f%d/x" % (i, i))
            self.assertFalse(a["allowed"], a)
        self.assertTrue(poll(lambda: self.stats()["archive_errors"] >= 8),
                        self.stats())
        s = self.stats()
        self.assertEqual(s["archive_records"], 0)
        self.assertTrue(poll(lambda: "No space left on device" in
                             self.d.log(1000)), self.d.log(1000))
        # still answering, from the cache, at once
        a = self.fetch("http://f0.test/f0/y")
        self.assertEqual(a["source"], "cache")
        # the full file system holds no partial record, no empty file
        self.assertEqual(os.listdir(mnt), ["filler"])


if __name__ == "__main__":
    unittest.main()
