"""origin.py: a real local HTTP origin server for the integration tests.

One ThreadingHTTPServer on 127.0.0.1 (ephemeral port) runs in a thread of the
test process. robotsd is started with --connect-to ::127.0.0.1:PORT, so every
origin it fetches lands here and the Host header picks the scenario a test
set up. Each (host, path) has a Scenario: status, headers, body, encoding
(gzip, deflate, or a gzip bomb), a delay or a hold (the answer waits until
the test releases it), an endless slow body, validators (ETag and
Last-Modified sent with the answer; a request whose If-None-Match or
If-Modified-Since matches them exactly is answered 304 with the scenario's
not_modified headers, and counted). Every request is logged per host (time,
path, headers). Unknown hosts and paths answer 404.

Every Origin is closed at interpreter exit (atexit): its serving threads and
every connection's thread, TLS handshakes included, have ended before
OpenSSL's exit cleanup runs; a thread still inside OpenSSL then can abort
the process ("double free or corruption") after every test passed.
"""
import atexit
import gzip
import http.server
import socket
import ssl
import threading
import time
import zlib

BOMB_DECODED = 50 * 1000 * 1000  # bytes a gzip bomb decodes to
BOMB_HEAD = b"User-agent: *\nDisallow: /bomb\n"
_bomb_cache = []


def gzip_bomb():
    """A small gzip body (about 50 KB) that decodes to 50 MB of robots.txt:
    BOMB_HEAD, then newlines."""
    if not _bomb_cache:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
        parts = [z.compress(BOMB_HEAD)]
        chunk = b"\n" * (1 << 20)
        left = BOMB_DECODED - len(BOMB_HEAD)
        while left > 0:
            parts.append(z.compress(chunk[:min(left, len(chunk))]))
            left -= len(chunk)
        parts.append(z.flush())
        _bomb_cache.append(b"".join(parts))
    return _bomb_cache[0]


class Scenario:
    """What one host (and path) answers."""

    def __init__(self, status=200, body=b"", headers=None, encoding=None,
                 delay=0.0, hold=False, endless=False, chunk_interval=0.2,
                 etag=None, last_modified=None, not_modified=None):
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.headers = list((headers or {}).items()) \
            if isinstance(headers, dict) else list(headers or [])
        self.encoding = encoding  # None, "gzip", "deflate", "bomb"
        self.delay = delay        # seconds before answering
        self.hold = hold          # answer only after Origin.release(host)
        self.endless = endless    # send the body slowly, forever
        self.chunk_interval = chunk_interval
        self.released = threading.Event()
        self.etag = etag                    # sent as ETag
        self.last_modified = last_modified  # sent as Last-Modified
        self.not_modified = list((not_modified or {}).items())  # 304's
        self.answered_304 = 0

    def matches(self, headers):
        """Whether a request's validators match (RFC 9110 13.1.1: a weak
        comparison for If-None-Match; If-Modified-Since only without it,
        compared as the exact string the origin sent)."""
        inm = headers.get("if-none-match")
        if inm is not None:
            tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
            return self.etag is not None and \
                self.etag.removeprefix("W/") in tags
        ims = headers.get("if-modified-since")
        return ims is not None and ims == self.last_modified

    def encoded_body(self):
        """The body bytes on the wire and the Content-Encoding, or None."""
        if self.encoding == "gzip":
            return gzip.compress(self.body), "gzip"
        if self.encoding == "deflate":
            return zlib.compress(self.body), "deflate"  # RFC 1950 zlib
        if self.encoding == "bomb":
            return gzip_bomb(), "gzip"
        return self.body, None


class Hit:
    """One request the origin received."""

    def __init__(self, host, path, headers):
        self.time = time.monotonic()
        self.host = host
        self.path = path
        self.headers = headers  # dict, lower-case names

    def __repr__(self):
        return "Hit(%s%s)" % (self.host, self.path)


def _host_key(host_header):
    """'A.Test:8080' -> ('a.test:8080', 'a.test')."""
    full = (host_header or "").strip().lower()
    if full.startswith("["):
        bare = full[:full.find("]") + 1]
    else:
        bare = full.rsplit(":", 1)[0] if ":" in full else full
    return full, bare


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def handle(self):
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except OSError:  # ssl.SSLError too: an untrusting client
                return
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            pass  # the daemon hung up (a cap, a timeout): fine

    def do_GET(self):
        origin = self.server.origin
        full, bare = _host_key(self.headers.get("Host"))
        headers = {k.lower(): v for k, v in self.headers.items()}
        origin._log(bare, Hit(full, self.path, headers))
        sc = origin._lookup(full, bare, self.path)
        if sc is None:
            sc = Scenario(status=404, body=b"not found\n")
        if sc.delay and origin._stop.wait(sc.delay):
            return
        if sc.hold:
            while not sc.released.wait(0.05):
                if origin._stop.is_set():
                    return
        try:
            self._answer(sc, origin)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _answer(self, sc, origin):
        if sc.status == 200 and sc.matches(
                {k.lower(): v for k, v in self.headers.items()}):
            sc.answered_304 += 1
            self.send_response(304)
            for k, v in sc.not_modified:
                self.send_header(k, v)
            self.end_headers()
            return
        body, enc = sc.encoded_body()
        self.send_response(sc.status)
        names = set()
        for k, v in (("ETag", sc.etag), ("Last-Modified", sc.last_modified)):
            if v is not None:
                self.send_header(k, v)
                names.add(k.lower())
        for k, v in sc.headers:
            self.send_header(k, v)
            names.add(k.lower())
        if enc and "content-encoding" not in names:
            self.send_header("Content-Encoding", enc)
        if sc.endless:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            while not origin._stop.wait(sc.chunk_interval):
                self.wfile.write(b"# still going\n")
                self.wfile.flush()
            self.close_connection = True
            return
        if "content-length" not in names:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 512  # hundreds of fetches may connect at once
    daemon_threads = True
    block_on_close = True  # server_close() joins every connection's thread

    def __init__(self, *args):
        self._conns = set()
        self._conns_lock = threading.Lock()
        super().__init__(*args)

    def process_request(self, request, client_address):
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def hang_up(self):
        """Wake every connection's thread: its reads (or handshake) end."""
        with self._conns_lock:  # held: no fd is closed and reused meanwhile
            for conn in self._conns:
                try:  # the plain socket's shutdown, not SSLSocket's
                    socket.socket.shutdown(conn, socket.SHUT_RDWR)
                except OSError:
                    pass


class _TLSServer(_Server):
    """The same server over TLS; the handshake runs in the handler thread."""

    def get_request(self):
        sock, addr = self.socket.accept()
        return self.tls.wrap_socket(sock, server_side=True,
                                    do_handshake_on_connect=False), addr


class Origin:
    """The server, serving from a thread; close() stops it quickly."""

    def __init__(self):
        self._lock = threading.Lock()
        self._scenarios = {}  # (host, path or None) -> Scenario
        self._hits = {}       # bare host -> [Hit]
        self._stop = threading.Event()
        self._servers = []    # [(server, its serve_forever thread)]
        self._closed = False
        self.port = self._serve(_Server(("127.0.0.1", 0), _Handler))
        atexit.register(self.close)

    def _serve(self, srv):
        srv.origin = self
        thread = threading.Thread(
            target=srv.serve_forever, kwargs={"poll_interval": 0.05},
            daemon=True)
        thread.start()
        self._servers.append((srv, thread))
        return srv.server_address[1]

    def start_tls(self, certfile, keyfile):
        """Also serve HTTPS (same scenarios) on another port; returns it."""
        tls = _TLSServer(("127.0.0.1", 0), _Handler)
        tls.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.tls.load_cert_chain(certfile, keyfile)
        return self._serve(tls)

    def close(self):
        """Stop every server and join all their threads; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        # serve_forever returns (no new connections) within its poll
        # interval: stop every server at once, not one after another.
        stoppers = [threading.Thread(target=srv.shutdown)
                    for srv, _ in self._servers]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()
        for _, thread in self._servers:
            thread.join()
        for srv, _ in self._servers:
            srv.hang_up()
            srv.server_close()  # joins each connection's thread

    def reset(self):
        """Forget every scenario and hit (between tests); release holds."""
        self.release_all()
        with self._lock:
            self._scenarios.clear()
            self._hits.clear()

    def set(self, host, path="/robots.txt", **kw):
        """Set what host answers for path (None: any path); returns it."""
        sc = Scenario(**kw)
        with self._lock:
            old = self._scenarios.get((host.lower(), path))
            if old is not None:
                old.released.set()
            self._scenarios[(host.lower(), path)] = sc
        return sc

    def robots(self, host, text, **kw):
        """Shorthand: host's /robots.txt answers 200 with text."""
        return self.set(host, body=text, **kw)

    def redirect_chain(self, host, hops, final_body, status=301):
        """/robots.txt -> /hop1 -> ... -> /hopN (N = hops redirects); the
        last answers 200 final_body. Returns the final path."""
        prev = "/robots.txt"
        for i in range(1, hops + 1):
            nxt = "/hop%d" % i
            self.set(host, prev, status=status, headers={"Location": nxt})
            prev = nxt
        self.set(host, prev, body=final_body)
        return prev

    def release_all(self):
        """Release every hold (scenarios and hits stay)."""
        with self._lock:
            for sc in self._scenarios.values():
                sc.released.set()

    def release(self, host, path="/robots.txt"):
        with self._lock:
            sc = self._scenarios.get((host.lower(), path))
        if sc is not None:
            sc.released.set()

    def hits(self, host, path=None):
        """The requests host received so far (optionally only for path)."""
        with self._lock:
            hs = list(self._hits.get(host.lower(), []))
        return [h for h in hs if path is None or h.path == path]

    def wait_hits(self, host, n, timeout=10.0, path=None):
        """Poll until host has at least n hits; returns them (maybe fewer)."""
        end = time.monotonic() + timeout
        while True:
            hs = self.hits(host, path)
            if len(hs) >= n or time.monotonic() >= end:
                return hs
            time.sleep(0.01)

    def _lookup(self, full, bare, path):
        with self._lock:
            for key in ((full, path), (bare, path), (full, None),
                        (bare, None)):
                if key in self._scenarios:
                    return self._scenarios[key]
        return None

    def _log(self, bare, hit):
        with self._lock:
            self._hits.setdefault(bare, []).append(hit)
