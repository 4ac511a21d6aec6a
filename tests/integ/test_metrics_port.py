"""The metrics port is bounded (issue 21): at most --metrics-max-connections
clients at once, the rest left in the kernel's queue until one closes, and
at most a quarter of them from one address (the rest closed at once), so
one address cannot hold the port (issue 29.7); a complete request head
must come within 5 s of the accept or of the last answer, trickled or
not, so a connection idle 5 s is closed; when the daemon has no descriptor left (a real limit,
prlimit on the running daemon, and 2,000 idle and slow clients) accepting
pauses with one log line instead of retrying accept() in a loop, checks
on the Unix socket are answered all along, and the port serves again once
the clients are gone."""
import os
import resource
import socket
import subprocess
import time

from harness import poll
import test_metrics

RULES = "User-agent: *\nDisallow: /p\n"


def held(pid, port, peer=None):
    """How many connections to port pid holds (the listener aside), of
    those from address peer if given."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    hexaddr = peer and "%08X" % int.from_bytes(socket.inet_aton(peer),
                                                "little")
    found = set()  # a line read twice (the table changing) counts once
    with open("/proc/%d/net/tcp" % pid) as f:
        for line in f.readlines()[1:]:
            field = line.split()
            if (int(field[1].split(":")[1], 16) == port and
                    field[3] != "0A" and field[9] in inodes and  # not LISTEN
                    (peer is None or field[2].split(":")[0] == hexaddr)):
                found.add(field[9])
    return len(found)


def from_address(addr, port, wait=True):
    """A connection to port from local address addr (127/8 is all this
    host's); wait=False: connecting, not waiting to be accepted."""
    s = socket.socket()
    s.bind((addr, 0))
    if not wait:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        return s
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def closed_by_peer(s):
    """Whether s reads end of file (or a reset) now; no wait."""
    s.setblocking(False)
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        s.setblocking(True)


# libmicrohttpd's message (0.9.75, 1.0) for a connection past its limits,
# the per-address one too
MHD_PER_IP_REFUSED = ("Server reached connection limit. "
                      "Closing inbound connection.")
HOST = b"Host: x\r\n"
KEEP_ALIVE = "stays, saying so or not"  # a row's "stays" for HTTP/1.0
HTML = "libmicrohttpd's own HTML body"  # a row's body, among others
HEALTHZ = b"GET /healthz HTTP/1.1\r\n" + HOST + b"\r\n"
H11 = b" HTTP/1.1\r\n" + HOST  # a request line's end, with its Host

# (request bytes, status (or the statuses allowed, None: no answer but the
# close), body (or the bodies allowed) or None: any, whether the connection stays open after the
# answer), after RFC 9112 (persistence: HTTP/1.1 keeps the
# connection unless "close", HTTP/1.0 only with "keep-alive") and RFC
# 9110 (405, 413, 404; HEAD: no body, the GET's Content-Length).
HTTP_ROWS = [
    (HEALTHZ, 200, b"serving\n", True),
    (b"GET /healthz" + H11 + b"Connection: close\r\n\r\n", 200,
     b"serving\n", False),
    (b"GET /healthz HTTP/1.0\r\n\r\n", 200, b"serving\n", False),
    # the answer may say it keeps the connection (RFC 9112 C.2.2)
    (b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200,
     b"serving\n", KEEP_ALIVE),
    (b"GET /healthz HTTP/1.1\nHost: x\n\n", 200, b"serving\n", True),
    (b"GET /metrics?a=1" + H11 + b"\r\n", 200, None, True),
    (b"HEAD /metrics" + H11 + b"\r\n", 200, b"", True),
    (b"GET /nothing" + H11 + b"\r\n", 404, b"not found\n", True),
    (b"DELETE /metrics" + H11 + b"\r\n", 405, b"GET or HEAD only\n",
     False),
    (b"POST /metrics" + H11 + b"Content-Length: 1\r\n\r\nx", 413,
     b"no request body\n", False),
    # no request: a 400 SHOULD come (RFC 9112 2.2), then the close, which
    # libmicrohttpd 0.9.75 does without the 400
    (b"nonsense\r\n\r\n", (400, None), None, False),
    (b"GET /metrics" + H11 + b"X: " + b"a" * 9000 + b"\r\n\r\n", 431,
     None, False),
    # a body is announced by any Content-Length but 0 (RFC 9112 6.3):
    # "05" is five bytes, not none, and a NUL (no valid field byte) or a
    # space before the colon (RFC 9112 5.1: 400) must not hide the field,
    # else the body would be read as the next request
    (b"GET /healthz" + H11 + b"Content-Length: 05\r\n\r\nGET /x", 413,
     b"no request body\n", False),
    # (the message refused, RFC 9110 5.5: for the NUL, 400, or for the
    # body it still announces, 413)
    (b"GET /healthz" + H11 + b"X: \0\r\nContent-Length: 5\r\n\r\nGET /",
     (400, 413), None, False),
    (b"GET /healthz" + H11 + b"Content-Length : 5\r\n\r\nGET /", 400,
     (b"bad request\n", HTML), False),
    # a field line begun with a space (obs-fold, RFC 9112 5.2) is a 400,
    # here for the Host it folds into
    (b"GET /healthz" + H11 + b" Content-Length: 5\r\n\r\nGET /", 400,
     None, False),
    # "close" among the connection options closes (RFC 9112 9.6)
    (b"GET /healthz" + H11 + b"Connection: keep-alive, close\r\n\r\n",
     200, b"serving\n", False),
    (b"GET /healthz" + H11 + b"Connection: keep-alive\r\n"
     b"Connection: close\r\n\r\n", 200, b"serving\n", False),
    # absolute-form targets are accepted (RFC 9112 3.2.2)
    (b"GET http://x/healthz" + H11 + b"\r\n", 200, b"serving\n", True),
]

# RFC 9112 3.2: "A server MUST respond with a 400 (Bad Request) status
# code to any HTTP/1.1 request message that lacks a Host header field and
# to any request message that contains more than one Host header field
# line or a Host header field with an invalid field value" (uri-host
# [ ":" port ], RFC 9110 7.2). HTTP/1.0 needs none.
# libmicrohttpd 1.0 refuses some of these itself, with a body of its own
NO_HOST = (b"one valid Host field needed\n", HTML)
HOST_ROWS = [
    (b"GET /metrics HTTP/1.1\r\n\r\n", 400, NO_HOST, False),
    (b"GET /healthz HTTP/1.1\r\n\r\n", 400, NO_HOST, False),
    (b"HEAD /metrics HTTP/1.1\r\n\r\n", 400, b"", False),
    (b"GET http://x/metrics HTTP/1.1\r\n\r\n", 400, NO_HOST, False),
    (b"GET /metrics" + H11 + HOST + b"\r\n", 400, NO_HOST, False),
    (b"GET /metrics" + H11 + b"host: y\r\n\r\n", 400, NO_HOST, False),
    (b"GET /metrics HTTP/1.0\r\n" + HOST * 2 + b"\r\n", 400, NO_HOST,
     False),
    (b"GET /metrics HTTP/1.1\r\nHost: a b\r\n\r\n", 400, NO_HOST, False),
    (b"GET /metrics HTTP/1.1\r\nHost: x:port\r\n\r\n", 400, NO_HOST,
     False),
    (b"GET /metrics HTTP/1.0\r\nHost: user@x\r\n\r\n", 400, NO_HOST,
     False),
    (b"GET /metrics" + H11 + b"\r\n", 200, None, True),
    (b"GET /metrics HTTP/1.1\r\nHOST: [::1]:9100\r\n\r\n", 200, None,
     True),
    (b"GET /metrics HTTP/1.1\r\nHost:\r\n\r\n", 200, None, True),
    (b"GET /metrics HTTP/1.0\r\n\r\n", 200, None, False),
    (b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1:9100\r\n\r\n", 200,
     None, False),
]


def read_answer(f, head=False):
    """(status, headers dict, body) of one answer from file f."""
    status = int(f.readline().split()[1])
    headers = {}
    while True:
        line = f.readline().rstrip(b"\r\n")
        if not line:
            break
        k, v = line.split(b":", 1)
        headers[k.strip().lower()] = v.strip()
    n = int(headers[b"content-length"])
    return status, headers, b"" if head else f.read(n)


class MetricsPort(test_metrics.MetricsBase):

    def test_http_answers(self):
        self.assert_rows(HTTP_ROWS)

    def test_host_required_in_http11_one_and_valid_in_any(self):
        self.assert_rows(HOST_ROWS)

    def assert_rows(self, rows):
        """Send each request on a connection of its own: its answer, and
        whether the connection then serves another or is closed."""
        self.start_metrics()
        for req, status, body, stays in rows:
            with self.subTest(req=req[:60]):
                s = socket.create_connection(("127.0.0.1", self.port), 10)
                self.addCleanup(s.close)
                s.sendall(req)
                f = s.makefile("rb")
                allowed = status if isinstance(status, tuple) else (status,)
                if None in allowed and f.peek(1) == b"":
                    continue  # closed with no answer
                got = read_answer(f, req.startswith(b"HEAD"))
                self.assertIn(got[0], allowed)
                bodies = body if isinstance(body, tuple) else (body,)
                if body is not None and not (HTML in bodies and
                                             got[2].startswith(b"<html>")):
                    self.assertIn(got[2], bodies)
                said = got[1].get(b"connection")
                if stays == KEEP_ALIVE:
                    self.assertIn(said, (None, b"Keep-Alive", b"keep-alive"))
                else:
                    self.assertEqual(said, None if stays else b"close")
                if stays:
                    s.sendall(HEALTHZ)
                    self.assertEqual(read_answer(f)[0], 200)
                else:
                    self.assertEqual(f.read(1), b"")

    def test_405_names_the_allowed_methods(self):
        # RFC 9110 15.5.6: a 405 MUST carry Allow
        self.start_metrics()
        s = socket.create_connection(("127.0.0.1", self.port), 10)
        self.addCleanup(s.close)
        s.sendall(b"PUT /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _ = read_answer(s.makefile("rb"))
        self.assertEqual((status, headers.get(b"allow")),
                         (405, b"GET, HEAD"))

    def test_pipelined_requests_answered_in_order(self):
        self.start_metrics()
        s = socket.create_connection(("127.0.0.1", self.port), 10)
        self.addCleanup(s.close)
        s.sendall(HEALTHZ + b"GET /nothing" + H11 + b"\r\n" + HEALTHZ)
        f = s.makefile("rb")
        self.assertEqual([read_answer(f)[0] for _ in range(3)],
                         [200, 404, 200])

    def test_pipelined_requests_then_half_close_all_answered(self):
        # the client sends its requests, then shuts its side (as a
        # "printf ... | nc -N" does): every request is answered, in
        # order, and only then is the connection closed
        self.start_metrics()
        s = socket.create_connection(("127.0.0.1", self.port), 10)
        self.addCleanup(s.close)
        s.sendall((b"GET /metrics" + H11 + b"\r\n" + HEALTHZ) * 2)
        s.shutdown(socket.SHUT_WR)
        f = s.makefile("rb")
        self.assertEqual([read_answer(f)[0] for _ in range(4)],
                         [200, 200, 200, 200])
        self.assertEqual(f.read(1), b"")

    def connect(self, n, first_bytes=b""):
        """n connections to the port, each having sent first_bytes;
        closed after the test. Connects do not wait to be accepted."""
        out = []
        for _ in range(n):
            s = socket.socket()
            self.addCleanup(s.close)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", self.port))
            out.append(s)
        for s in out:
            if first_bytes:
                try:
                    s.send(first_bytes)
                except OSError:
                    pass  # not connected yet: an idle one then
        return out

    def test_connections_past_the_cap_wait_to_be_accepted(self):
        # a cap of 8 lets 2 in from one address: 2 from each of 4
        self.start_metrics("--metrics-max-connections", "8")
        pid = self.d.proc.pid
        idle = [from_address("127.0.0.%d" % (2 + i // 2), self.port)
                for i in range(8)]
        for s in idle:
            self.addCleanup(s.close)
        self.assertTrue(poll(lambda: held(pid, self.port) == 8),
                        "8 connections not accepted: %d"
                        % held(pid, self.port))
        late = from_address("127.0.0.6", self.port)
        self.addCleanup(late.close)
        late.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        late.settimeout(1)
        with self.assertRaises(socket.timeout):
            late.recv(1)  # in the queue: not accepted, not refused
        self.assertEqual(held(pid, self.port), 8)
        for s in idle:
            s.close()
        late.settimeout(10)
        got = late.recv(65536)
        self.assertTrue(got.startswith(b"HTTP/1.1 200 OK\r\n"), got)
        self.assertTrue(got.endswith(b"\r\n\r\nserving\n"), got)

    def test_one_address_cannot_hold_the_port(self):
        # issue 29.7: 64 idle and 64 keep-alive connections from one
        # address (the default cap is 64) once kept a scrape waiting; now
        # that address holds 16 (a quarter of the cap), the rest are
        # closed at once, and a scrape from another address is answered
        # while those 16 are still held
        self.start_metrics()
        pid = self.d.proc.pid
        conns = [from_address("127.0.0.2", self.port, wait=False)
                 for _ in range(128)]
        for s in conns:
            self.addCleanup(s.close)
        for s in conns[64:]:  # the keep-alive ones: one request each
            try:
                s.sendall(HEALTHZ)
            except OSError:
                pass  # not connected yet or closed: idle then
        self.assertTrue(poll(lambda: held(pid, self.port) >= 16),
                        "16 connections not accepted: %d"
                        % held(pid, self.port))
        # answered while the other address still holds its share (before:
        # it waited for a held connection to time out, 30 s; the 10 s
        # bound leaves a loaded machine room and still fails that)
        scrape = from_address("127.0.0.1", self.port)
        self.addCleanup(scrape.close)
        scrape.settimeout(10)
        scrape.sendall(b"GET /metrics" + H11 + b"\r\n")
        status, _, body = read_answer(scrape.makefile("rb"))
        self.assertEqual(status, 200)
        self.assertIn(b"robotsd_build_info", body)
        # the other address's connections: 16 still held, no more
        self.assertEqual(held(pid, self.port, "127.0.0.2"), 16)

    def test_libmicrohttpd_messages_are_robotsd_log_lines(self):
        # libmicrohttpd's own messages go to robotsd's log as event
        # lines; here its refusal of an address's 17th connection (a
        # quarter of the default cap of 64 may stay)
        self.start_metrics()
        pid = self.d.proc.pid
        conns = [from_address("127.0.0.3", self.port) for _ in range(16)]
        for s in conns:
            self.addCleanup(s.close)
        self.assertTrue(poll(lambda: held(pid, self.port) >= 16),
                        "16 connections not accepted: %d"
                        % held(pid, self.port))
        late = from_address("127.0.0.3", self.port)
        self.addCleanup(late.close)
        line = ('event=metrics_http message="%s"'
                % MHD_PER_IP_REFUSED)
        self.assertTrue(poll(lambda: line in self.log()), self.log())
        self.assertEqual(self.log().count(line), 1, self.log())

    def test_slow_head_and_idle_connection_are_closed(self):
        # a head trickled a byte at a time and a connection that sends
        # nothing are both closed 5 s after their accept
        self.start_metrics()
        idle = socket.create_connection(("127.0.0.1", self.port), 5)
        slow = socket.create_connection(("127.0.0.1", self.port), 5)
        self.addCleanup(idle.close)
        self.addCleanup(slow.close)
        started = time.monotonic()
        slow.sendall(b"GET /metrics HTTP/1.1\r\n")

        def slow_closed():
            try:
                slow.send(b"X")  # a header that never ends
            except OSError:
                return True
            return closed_by_peer(slow)
        self.assertTrue(poll(slow_closed, timeout=30, interval=0.5),
                        "a head never finished was not cut off")
        self.assertGreaterEqual(time.monotonic() - started, 5 - 0.1)
        self.assertTrue(poll(lambda: closed_by_peer(idle), timeout=10,
                             interval=0.1),
                        "the idle connection was never closed")
        self.assertLess(time.monotonic() - started, 5 + 3)
        self.assertEqual(self.get("/healthz")[0], 200)

    def test_keep_alive_connection_idle_after_an_answer_is_closed(self):
        # the 5 s start again at each answer
        self.start_metrics()
        s = socket.create_connection(("127.0.0.1", self.port), 10)
        self.addCleanup(s.close)
        f = s.makefile("rb")
        for _ in range(3):
            s.sendall(HEALTHZ)
            self.assertEqual(read_answer(f)[0], 200)
        answered = time.monotonic()
        self.assertEqual(f.read(1), b"")  # closed by robotsd
        self.assertGreaterEqual(time.monotonic() - answered, 5 - 0.1)
        self.assertLess(time.monotonic() - answered, 5 + 3)

    def test_descriptor_exhaustion_pauses_accepting_and_checks_go_on(self):
        self.origin.robots("c.test", RULES)
        c = self.start_metrics("--metrics-max-connections", "20000")
        self.assertAnswer(self.check("http://c.test/p"), allowed=False,
                          source="fetched")
        pid = self.d.proc.pid
        used = len(os.listdir("/proc/%d/fd" % pid))
        subprocess.run(["prlimit", "--pid", str(pid),
                        "--nofile=%d:" % (used + 40)], check=True)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard < 2200:
            self.skipTest("this test needs 2,200 descriptors, has %d"
                          % hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        # half idle, half a head begun and never ended
        held = self.connect(1000) + self.connect(
            1000, b"GET /metrics HTTP/1.1\r\nX-Slow: ")
        self.assertTrue(poll(lambda: "event=metrics_accept_paused" in
                             self.d.log(100000)),
                        "descriptors never ran out")
        for i in range(200):
            self.assertAnswer(c.check("http://c.test/q%d" % i),
                              allowed=True, source="cache")
        log = self.d.log(100000)
        self.assertLessEqual(log.count("metrics_accept_paused"), 3, log)
        self.assertLessEqual(log.count("Too many open files"), 3,
                             log[-5000:])
        for s in held:
            s.close()
        self.assertTrue(poll(lambda: (self.get("/metrics", quiet=True)
                                      or (0,))[0] == 200),
                        "the port does not serve once the clients left")
        self.assertTrue(poll(lambda: len(os.listdir("/proc/%d/fd" % pid))
                             <= used + 1),
                        "descriptors held after the clients left")
