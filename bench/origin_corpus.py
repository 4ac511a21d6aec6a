"""origin_corpus.py: the origin server of the daemon benchmark.

usage: python3 origin_corpus.py CORPUS_DIR PORT_FILE

Serves GET /robots.txt with CORPUS_DIR/robots/<Host>.txt (the Host header,
lower-cased, without its port), 404 when there is no such file. Listens on
127.0.0.1 on an ephemeral port and writes the port to PORT_FILE once ready.
robotsd reaches it through --connect-to ::127.0.0.1:PORT.
"""
import http.server
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    """GET /robots.txt by Host; everything else is 404."""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        host = (self.headers.get("Host") or "").lower().rsplit(":", 1)[0]
        path = os.path.join(self.server.robots_dir, host + ".txt")
        body = None
        if self.path == "/robots.txt" and "/" not in host and host:
            try:
                with open(path, "rb") as f:
                    body = f.read()
            except OSError:
                pass
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 (the base's name)
        pass


def main():
    corpus, port_file = sys.argv[1], sys.argv[2]
    http.server.ThreadingHTTPServer.request_queue_size = 256
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.robots_dir = os.path.join(corpus, "robots")
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
