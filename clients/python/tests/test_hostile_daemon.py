"""The clients against a daemon that breaks the protocol (a scripted Unix
socket peer, not robotsd): an answer line without end, and an "allowed"
that is not a boolean. Each is a ProtocolError (a ConnectionLostError), in
bounded memory and time, never a truthy string."""
import asyncio
import json
import os
import socket
import tempfile
import threading
import unittest

from robotsd import AsyncClient, Client, ConnectionLostError
from robotsd._protocol import MAX_ANSWER, ProtocolError


class Peer:
    """Answers each request line with answer(request) (bytes, or a
    callable given the socket)."""

    def __init__(self, answer):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "robotsd.sock")
        self.answer = answer
        self.sent = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    def _serve(self, c):
        f = c.makefile("rb")
        try:
            for line in f:
                out = self.answer(json.loads(line))
                if callable(out):
                    out(self, c)
                else:
                    c.sendall(out)
        except OSError:
            pass
        c.close()

    def close(self):
        self.sock.close()
        self.dir.cleanup()


def endless(peer, c):
    """An answer line that never ends, in 1 MiB pieces (at most 4 x the
    bound)."""
    c.sendall(b'{"id":1,"ok":true,"pad":"')
    chunk = b"x" * (1 << 20)
    for _ in range(4 * (MAX_ANSWER >> 20)):
        c.sendall(chunk)
        peer.sent += len(chunk)


def string_allowed(req):
    return (json.dumps({"id": req["id"], "ok": True, "allowed": "false",
                        "origin": "http://a.test", "source": "cache",
                        "reason": "rule"}) + "\n").encode()


class Hostile(unittest.TestCase):

    def peer(self, answer):
        p = Peer(answer)
        self.addCleanup(p.close)
        return p

    def check(self, path, url):
        with Client(path, timeout=20) as c:
            return c.check(url, "A")

    def acheck(self, path, url):
        async def run():
            async with AsyncClient(path, timeout=20) as c:
                return await c.check(url, "A")
        return asyncio.run(run())

    def test_answer_line_over_the_bound_is_a_protocol_error(self):
        for call in (self.check, self.acheck):
            p = self.peer(lambda req: endless)
            with self.assertRaises(ProtocolError) as cm:
                call(p.path, "http://a.test/")
            self.assertIsInstance(cm.exception, ConnectionLostError)
            self.assertIn("longer than %d bytes" % MAX_ANSWER,
                          str(cm.exception))
            # the client hung up soon after the bound, not at the end
            self.assertLess(p.sent, 2 * MAX_ANSWER)

    def test_non_boolean_allowed_is_a_protocol_error(self):
        for call in (self.check, self.acheck):
            p = self.peer(string_allowed)
            with self.assertRaises(ProtocolError) as cm:
                call(p.path, "http://a.test/")
            self.assertIn("allowed='false'", str(cm.exception))

    def test_non_string_version_is_a_protocol_error(self):
        for version in (7, False, ["ab"]):
            def answer(req):
                return (json.dumps({
                    "id": req["id"], "ok": True, "allowed": True,
                    "origin": "http://a.test", "source": "cache",
                    "reason": "no_rule", "version": version}) +
                    "\n").encode()
            for call in (self.check, self.acheck):
                p = self.peer(answer)
                with self.assertRaises(ProtocolError) as cm:
                    call(p.path, "http://a.test/")
                self.assertIn("version is %r" % (version,), str(cm.exception))

    def test_an_answer_not_asked_for_is_refused(self):
        # Each answer below is for no request the client sent: never
        # handed to the waiting call, which fails with ProtocolError (the
        # connection is not the protocol) at once, not at its timeout.
        verdict = {"ok": True, "allowed": True, "origin": "http://a.test",
                   "source": "cache", "reason": "no_rule"}
        cases = [
            ("null", lambda rid: None, "ok answer of id null"),
            ("float", lambda rid: float(rid), "id %d.0," % 1),
            ("string", lambda rid: str(rid), 'id "1",'),
            ("bool", lambda rid: True, "id true,"),
            ("never sent", lambda rid: rid + 1000, "id 1001,"),
        ]
        for name, id_of, why in cases:
            def answer(req, id_of=id_of):
                return (json.dumps(dict(verdict, id=id_of(req["id"]))) +
                        "\n").encode()
            for call in (self.check, self.acheck):
                with self.subTest(name, call=call.__name__):
                    p = self.peer(answer)
                    with self.assertRaises(ProtocolError) as cm:
                        call(p.path, "http://a.test/")
                    self.assertIn(why, str(cm.exception))

    def test_an_answer_without_a_required_field_is_refused(self):
        # A verdict's allowed, origin, source and reason, a pending
        # answer's origin, the answer's id: missing is an error, never a
        # default.
        verdict = {"ok": True, "allowed": True, "origin": "http://a.test",
                   "source": "cache", "reason": "no_rule"}
        for field in ("id", "allowed", "origin", "source", "reason"):
            def answer(req, field=field):
                a = dict(verdict, id=req["id"])
                del a[field]
                return (json.dumps(a) + "\n").encode()
            for call in (self.check, self.acheck):
                with self.subTest(field, call=call.__name__):
                    p = self.peer(answer)
                    with self.assertRaises(ProtocolError):
                        call(p.path, "http://a.test/")

        def pending(req):
            return (json.dumps({"id": req["id"], "ok": True,
                                "pending": True}) + "\n").encode()
        p = self.peer(pending)
        with Client(p.path, timeout=20) as c:
            with self.assertRaises(ProtocolError) as cm:
                c.check("http://a.test/", "A", wait=False)
        self.assertIn("origin is None", str(cm.exception))
