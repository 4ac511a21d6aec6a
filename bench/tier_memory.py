#!/usr/bin/env python3
"""Redis memory per origin of robotsd's shared tier, on the bench corpus.

Encodes every robots.txt of the corpus as the tier stores it (value format
version 1, docs/scaling.md: the capped body plus its fetch metadata), SETs
each under its entry key with an expiry in a private redis-server (no
persistence), and reports the value bytes and Redis's used_memory per
origin. Usage: bench/tier_memory.py [CORPUS_DIR] (default: unpack
bench/corpus.tar.xz into a temporary directory).
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib

MAX_BODY = 512000
HEADER_LEN = 56


def encode(origin, body, now_ms):
    """One tier value, as src/robotsd/tier_value.c writes it."""
    body = body[:MAX_BODY]
    strings = [origin.encode(), (origin + "/robots.txt").encode(), b"", body]
    header = struct.pack(">BBHIqqqqqq", 1, 0, 200, 0, now_ms,
                         now_ms + 86400000, now_ms + 172800000, 0, 0, 0)
    payload = header + b"".join(struct.pack(">I", len(s)) + s
                                for s in strings)
    total = 12 + len(payload) + 4
    out = b"RBTV" + struct.pack(">HHI", 1, HEADER_LEN, total) + payload
    return out + struct.pack(">I", zlib.crc32(out))


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
        return rest

    def call(self, *args):
        self.sock.sendall(resp(*args))
        return self.reply()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(resp(*c) for c in commands))
        for _ in commands:
            self.reply()


def used_memory(r):
    info = r.call("INFO", "memory").decode()
    for line in info.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory in INFO")


def corpus_dir(tmp):
    if len(sys.argv) > 1:
        return sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    with tarfile.open(os.path.join(here, "corpus.tar.xz")) as tar:
        tar.extractall(tmp)
    return tmp


def main():
    tmp = tempfile.mkdtemp(prefix="tier-memory.")
    sock = os.path.join(tmp, "redis.sock")
    server = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "",
         "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        robots = os.path.join(corpus_dir(tmp), "robots")
        for _ in range(500):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        r = Redis(sock)
        before = used_memory(r)
        now_ms = int(time.time() * 1000)
        names = sorted(os.listdir(robots))
        value_bytes = body_bytes = 0
        batch = []
        for name in names:
            with open(os.path.join(robots, name), "rb") as f:
                body = f.read()
            origin = "https://" + name[:-len(".txt")]
            value = encode(origin, body, now_ms)
            value_bytes += len(value)
            body_bytes += min(len(body), MAX_BODY)
            batch.append(("SET", "robotsd:v1:e:{%s}" % origin, value,
                          "PX", 86400000))
            if len(batch) == 1000:
                r.pipeline(batch)
                batch = []
        r.pipeline(batch)
        after = used_memory(r)
        n = len(names)
        print("origins: %d" % n)
        print("robots.txt bytes per origin (capped): %.0f" % (body_bytes / n))
        print("value bytes per origin: %.0f" % (value_bytes / n))
        print("redis used_memory per origin: %.0f" % ((after - before) / n))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
