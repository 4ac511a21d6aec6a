#!/usr/bin/env python3
"""Redis memory per origin of robotsd's shared tier, on the bench corpus.

Runs the real robotsd with --redis for a private redis-server (no
persistence) and every origin sent to a local origin server on the corpus
(bench/origin_corpus.py, so the origins are http://HOST), has it fetch every
origin of the corpus (checks of 100 origins at a time) and publish each, so
that Redis holds exactly what robotsd writes, then reports per origin: the
robots.txt bytes (capped at 500 KiB as robotsd caps them), the stored
value's bytes (STRLEN), Redis's MEMORY USAGE of the key, and the growth of
Redis's used_memory from before robotsd started to after it stopped.

usage: bench/tier_memory.py [CORPUS_DIR]   (default: unpack
       bench/corpus.tar.xz into a temporary directory)
env:   ROBOTSD (default: the _build/werror build)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTSD = os.environ.get("ROBOTSD") or os.path.join(
    HERE, "..", "_build", "werror", "robotsd")
MAX_BODY = 512000  # ROBOTS_MAX_BODY
ENTRY = "robotsd:v1:e:{%s}"


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Redis:
    """A minimal blocking RESP client over a Unix socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buf = self.sock.makefile("rb")

    def reply(self):
        line = self.buf.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.buf.read(n + 2)[:-2]
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        return rest

    def call(self, *args):
        self.sock.sendall(resp(*args))
        return self.reply()

    def pipeline(self, commands):
        """Every command's reply, in order."""
        out = []
        for i in range(0, len(commands), 1000):
            batch = commands[i:i + 1000]
            self.sock.sendall(b"".join(resp(*c) for c in batch))
            out += [self.reply() for _ in batch]
        return out


class Robotsd:
    """A robotsd client over its Unix socket: one request, one answer."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.f = self.sock.makefile("rwb")

    def ask(self, req):
        self.f.write(json.dumps(req, separators=(",", ":")).encode() + b"\n")
        self.f.flush()
        ans = json.loads(self.f.readline())
        if not ans.get("ok"):
            sys.exit("tier_memory: robotsd answered %r" % ans)
        return ans


def used_memory(r):
    for line in r.call("INFO", "memory").decode().splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory in INFO")


def corpus_dir(tmp):
    if len(sys.argv) > 1:
        return sys.argv[1]
    with tarfile.open(os.path.join(HERE, "corpus.tar.xz")) as tar:
        tar.extractall(tmp)
    return tmp


def wait_for(pred, what, timeout=600):
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            sys.exit("tier_memory: no %s after %d s" % (what, timeout))
        time.sleep(0.05)


def start(argv, tmp, name):
    log = open(os.path.join(tmp, name + ".log"), "wb")
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=log)


def publish_all(tmp, corpus, redis_url, origins):
    """robotsd fetches every origin from the corpus and publishes it."""
    port_file = os.path.join(tmp, "port")
    origin = start([sys.executable, os.path.join(HERE, "origin_corpus.py"),
                    corpus, port_file], tmp, "origin")
    sock = os.path.join(tmp, "robotsd.sock")
    daemon = None
    try:
        wait_for(lambda: os.path.exists(port_file), "origin server", 30)
        with open(port_file) as f:
            port = int(f.read())
        daemon = start([ROBOTSD, "-f", "-c", "/dev/null", "-s", sock,
                        "--log-level", "warn", "--redis", redis_url,
                        "--connect-to", "::127.0.0.1:%d" % port], tmp,
                       "robotsd")
        wait_for(lambda: os.path.exists(sock), "robotsd socket", 30)
        c = Robotsd(sock)
        wait_for(lambda: c.ask({"op": "stats"})["stats"]["redis_up_0"],
                 "Redis connection", 30)
        for i in range(0, len(origins), 100):
            c.ask({"op": "check", "id": i, "agent": "Googlebot",
                   "urls": [o + "/" for o in origins[i:i + 100]]})
        wait_for(lambda: c.ask({"op": "stats"})["stats"]["shared_publishes"]
                 >= len(origins), "publish of every origin")
        st = c.ask({"op": "stats"})["stats"]
        if st["shared_local"] or st["fetches"] != len(origins):
            sys.exit("tier_memory: not every origin fetched and published "
                     "once: %r" % st)
        c.sock.close()
        return st
    finally:
        for p in (daemon, origin):
            if p is not None:
                p.terminate()
                p.wait()


def main():
    tmp = tempfile.mkdtemp(prefix="tier-memory.")
    sock = os.path.join(tmp, "redis.sock")
    server = start(["redis-server", "--port", "0", "--unixsocket", sock,
                    "--save", "", "--appendonly", "no"], tmp, "redis")
    try:
        corpus = corpus_dir(tmp)
        robots = os.path.join(corpus, "robots")
        names = sorted(n for n in os.listdir(robots) if n.endswith(".txt"))
        origins = ["http://" + n[:-len(".txt")] for n in names]
        wait_for(lambda: os.path.exists(sock), "redis-server socket", 30)
        r = Redis(sock)
        before = used_memory(r)
        st = publish_all(tmp, corpus, "unix://" + sock, origins)
        after = used_memory(r)  # robotsd gone: its connections too
        keys = [ENTRY % o for o in origins]
        sizes = r.pipeline([("STRLEN", k) for k in keys])
        usage = r.pipeline([("MEMORY", "USAGE", k, "SAMPLES", "0")
                            for k in keys])
        if 0 in sizes or None in usage or r.call("DBSIZE") != len(keys):
            sys.exit("tier_memory: Redis does not hold exactly one entry "
                     "per origin")
        body_bytes = sum(min(os.path.getsize(os.path.join(robots, n)),
                             MAX_BODY) for n in names)
        n = len(origins)
        print("origins: %d (fetches %d, fetch errors %d, publishes %d)"
              % (n, st["fetches"], st["fetch_errors"],
                 st["shared_publishes"]))
        print("robots.txt bytes per origin (capped): %.0f" % (body_bytes / n))
        print("value bytes per origin (STRLEN): %.0f" % (sum(sizes) / n))
        print("MEMORY USAGE per origin: %.0f" % (sum(usage) / n))
        print("redis used_memory per origin: %.0f" % ((after - before) / n))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
