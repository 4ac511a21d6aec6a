"""robotsctl recheck (issue 28): each URL's verdict under the robots.txt
in force when it was fetched, or at --as-of; against robotsd's own
archive (the real robotsd fetching two versions of a site from the real
local origin, a day apart) and against a WARC file robotsd did not write
(written here with the standard library only, a capture that redirects
to another host's and a 503 capture among them), the version ids being
the ones robotsd answers with."""
import base64
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import uuid

from harness import ROBOTSCTL, DaemonTest, poll

WARC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warc")

V1 = "User-agent: *\nDisallow: /one/\n"
V2 = "User-agent: *\nDisallow: /one/\nDisallow: /two/\n"
DAY = 86400


def version(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record(target, date, status, headers, body):
    """One gzipped WARC/1.0 response record, as another crawler writes
    it (no WARC-Robotsd-* fields)."""
    http = ("HTTP/1.1 %d X\r\n" % status +
            "".join("%s: %s\r\n" % h for h in headers) +
            "\r\n").encode() + body
    head = ("WARC/1.0\r\nWARC-Type: response\r\n"
            "WARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: %s\r\n"
            "WARC-Target-URI: %s\r\n"
            "Content-Type: application/http; msgtype=response\r\n"
            "Content-Length: %d\r\n\r\n"
            % (uuid.uuid4(), date, target, len(http))).encode()
    return gzip.compress(head + http + b"\r\n\r\n")


def chunked(data, size):
    """data in chunks of size bytes (RFC 9112 section 7.1), as on the
    wire."""
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


def warcio_write(path, captures):
    """Write captures (url, date, status, headers, payload bytes) to path
    with warcio (tests/integ/warc/write.mjs); False when warcio is not
    installed (scripts/deps test installs it)."""
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(WARC, "node_modules", "warcio")):
        return False
    lines = "".join(json.dumps({
        "url": u, "date": d, "status": st, "reason": "X",
        "headers": [list(h) for h in hs],
        "body": base64.b64encode(b).decode()}) + "\n"
        for u, d, st, hs, b in captures)
    subprocess.run(["node", os.path.join(WARC, "write.mjs"), path],
                   input=lines.encode(), check=True, timeout=60)
    return True


class Recheck(DaemonTest):

    def setUp(self):
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="robotsd-recheck-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def env_without_archive(self):
        e = dict(os.environ)
        e.pop("ROBOTSD_ARCHIVE_DIR", None)
        return e

    def recheck(self, lines, *args):
        e = self.env_without_archive()
        sock = ["-s", self.d.socket] if getattr(self, "d", None) else []
        p = subprocess.run([ROBOTSCTL] + sock + ["recheck"] + list(args),
                           input="".join(x + "\n" for x in lines).encode(),
                           capture_output=True, timeout=60, env=e)
        return (p.returncode,
                [json.loads(x) for x in p.stdout.decode().splitlines()],
                p.stderr.decode())

    def test_a_warc_file_of_another_tool(self):
        w = os.path.join(self.tmp, "other.warc.gz")
        with open(w, "wb") as f:
            f.write(record("http://a.test/robots.txt",
                           "2024-01-01T00:00:00Z", 200, [], V1.encode()))
            f.write(record("http://a.test/robots.txt",
                           "2024-06-01T00:00:00Z", 200, [], V2.encode()))
            f.write(record("http://b.test/robots.txt",
                           "2024-01-01T00:00:00Z", 301,
                           [("Location", "https://www.b.test/robots.txt")],
                           b""))
            f.write(record("https://www.b.test/robots.txt",
                           "2024-01-01T00:00:01Z", 200, [],
                           b"User-agent: *\nDisallow: /b/\n"))
            f.write(record("http://c.test/robots.txt",
                           "2024-01-01T00:00:00Z", 503, [], b"busy"))
        rc, out, err = self.recheck(
            ["http://a.test/one/x 2023-12-31T23:59:59Z",
             "http://a.test/two/x 2024-03-01T00:00:00Z",
             "http://a.test/two/x 1719792000",
             "http://b.test/b/x 2024-02-01T00:00:00+01:00",
             "http://c.test/x 2024-02-01T00:00:00Z"],
            "--agent", "FooBot/1.0", "--warc", w)
        self.assertEqual(rc, 1, err)  # the first URL had no version
        self.assertEqual([(r["allowed"], r["version"], r["reason"],
                           r["first_seen"]) for r in out], [
            (None, None, "no_version", None),
            (True, version(V1), "no_rule", 1704067200),
            (False, version(V2), "rule", 1717200000),
            (False, version("User-agent: *\nDisallow: /b/\n"), "rule",
             1704067200),
            (False, version("status:503"), "unreachable", 1704067200)])
        self.assertEqual(out[2]["rule"],
                         {"directive": "disallow", "pattern": "/two/",
                          "line": 3})
        self.assertEqual(out[3]["at"], 1706742000)
        self.assertIn("1 redirects, 0 unresolved", err)
        # as of June, only the URL whose verdict changed
        rc, out, err = self.recheck(
            ["http://a.test/one/x 2024-03-01T00:00:00Z",
             "http://a.test/two/x 2024-03-01T00:00:00Z"],
            "--agent", "foobot", "--warc", w, "--as-of",
            "2024-07-01T00:00:00Z", "--changed")
        self.assertEqual(rc, 0, err)
        self.assertEqual([(r["url"], r["allowed"]) for r in out],
                         [("http://a.test/two/x", False)])

    def test_robotsd_archive_two_versions(self):
        adir = os.path.join(self.tmp, "archive")
        os.mkdir(adir)
        self.origin.robots("a.test", V1)
        self.start("--archive-dir", adir)
        a1 = self.check("http://a.test/two/x")
        t1 = self.now()
        self.origin.robots("a.test", V2)
        self.advance(DAY + 1)
        self.check("http://a.test/two/x")  # stale: starts the refresh
        poll(lambda: self.check("http://a.test/two/x").get("allowed") is
             False)
        a2 = self.check("http://a.test/two/x")
        self.assertTrue(poll(lambda: self.stats()["archive_records"] == 2),
                        self.stats())
        t2 = self.now()
        rc, out, err = self.recheck(
            ["http://a.test/two/x %d" % int(t1 + 1),
             "http://a.test/two/x %d" % int(t2 + 1)],
            "--agent", "TestBot", "--archive", adir)
        self.assertEqual(rc, 0, err)
        self.assertEqual([(r["allowed"], r["version"]) for r in out],
                         [(True, a1["version"]), (False, a2["version"])])
        # No --archive: robotsd's config file names the directory.
        conf = os.path.join(self.tmp, "robotsd.conf")
        with open(conf, "w") as f:
            f.write("# robotsd.conf\nsocket /x.sock\n"
                    "#archive-dir /nowhere\n  archive-dir  %s  \n" % adir)
        rc, again, err = self.recheck(
            ["http://a.test/two/x %d" % int(t1 + 1),
             "http://a.test/two/x %d" % int(t2 + 1)],
            "--agent", "TestBot", "--config", conf)
        self.assertEqual(rc, 0, err)
        self.assertEqual(again, out)
        p = subprocess.run([ROBOTSCTL, "-s", self.d.socket, "--config", conf,
                            "show", "http://a.test", a1["version"]],
                           capture_output=True, timeout=60,
                           env=self.env_without_archive())
        self.assertEqual((p.returncode, p.stdout.decode()), (0, V1),
                         p.stderr)
        # A config without the line, and one that is not there.
        with open(conf, "w") as f:
            f.write("#archive-dir %s\n" % adir)
        rc, _, err = self.recheck(["http://a.test/x"], "--agent", "T",
                                  "--config", conf)
        self.assertEqual(rc, 2)
        self.assertIn("recheck: which archive? give --archive-dir DIR "
                      "(robotsd's --archive-dir), set ROBOTSD_ARCHIVE_DIR, "
                      "or set archive-dir in " + conf, err)
        rc, _, err = self.recheck(["http://a.test/x"], "--agent", "T",
                                  "--config", conf + ".none")
        self.assertEqual(rc, 2)
        self.assertIn("recheck: %s.none: No such file or directory" % conf,
                      err)
        # now, from the daemon
        rc, out, err = self.recheck(
            ["http://a.test/two/x %d" % int(t1 + 1)],
            "--agent", "TestBot", "--archive", adir, "--as-of", "now",
            "--changed")
        self.assertEqual(rc, 0, err)
        self.assertEqual([(r["allowed"], r["version"]) for r in out],
                         [(False, a2["version"])])

    def test_a_warc_file_written_by_warcio(self):
        # Another tool's file: a redirect to a capture kept as a crawler
        # keeps the wire bytes (chunked and gzipped), a 500, a gzipped
        # 200, and a 200 whose gzip is broken (robotsd: a network error).
        moved = b"User-agent: *\nDisallow: /r/\n"
        ok = b"User-agent: FooBot\nDisallow: /ok/\n"
        w = os.path.join(self.tmp, "warcio.warc.gz")
        if not warcio_write(w, [
            ("http://r.test/robots.txt", "2024-01-01T00:00:00Z", 302,
             [("Location", "/moved/robots.txt")], b""),
            ("http://r.test/moved/robots.txt", "2024-01-01T00:00:02Z", 200,
             [("Content-Encoding", "gzip"),
              ("Transfer-Encoding", "chunked")],
             chunked(gzip.compress(moved), 7)),
            ("http://f.test/robots.txt", "2024-01-01T00:00:00Z", 500, [],
             b"oops"),
            ("http://ok.test/robots.txt", "2024-01-01T00:00:00Z", 200,
             [("Content-Encoding", "gzip")], gzip.compress(ok)),
            ("http://bad.test/robots.txt", "2024-01-01T00:00:00Z", 200,
             [("Content-Encoding", "gzip")], b"not gzip at all"),
        ]):
            self.skipTest("warcio is not installed (scripts/deps test)")
        rc, out, err = self.recheck(
            ["http://r.test/r/x 2024-02-01T00:00:00Z",
             "http://r.test/x 2024-02-01T00:00:00Z",
             "http://f.test/x 2024-02-01T00:00:00Z",
             "http://ok.test/ok/1 2024-02-01T00:00:00Z",
             "http://ok.test/x 2024-02-01T00:00:00Z",
             "http://bad.test/x 2024-02-01T00:00:00Z"],
            "--agent", "FooBot/1.0", "--warc", w)
        self.assertEqual(rc, 0, err)
        t0 = 1704067200
        self.assertEqual([(r["allowed"], r["version"], r["reason"],
                           r["first_seen"]) for r in out], [
            (False, version(moved.decode()), "rule", t0),
            (True, version(moved.decode()), "no_rule", t0),
            (False, version("status:500"), "unreachable", t0),
            (False, version(ok.decode()), "rule", t0),
            (True, version(ok.decode()), "no_rule", t0),
            (False, version("error:network"), "unreachable", t0)])
        self.assertEqual(out[0]["rule"],
                         {"directive": "disallow", "pattern": "/r/",
                          "line": 2})
        self.assertIn("1 redirects, 0 unresolved", err)
