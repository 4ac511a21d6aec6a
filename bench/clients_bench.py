"""clients_bench.py: the Python client against a bare socket loop and
Protego, one figure per run (bench/clients-bench.sh, make bench).

usage: clients_bench.py MODE SOCKET URLS ROBOTS_DIR SECONDS

MODE is one of
  bare      sendall + readline of the very line Client.check writes
  sync      robotsd.Client.check, one call at a time
  async64   robotsd.AsyncClient.check, 64 tasks each with one in flight
  protego   Protego can_fetch on robots.txt files parsed beforehand
  json      bare, with json.dumps of each request and json.loads of each
            answer
  parse     Protego, each origin's file parsed before its URLs are
            checked, the parse timed with them (URLS is grouped by
            origin)
  many      robotsd.Client.check_many, 100 URLs a call: URL verdicts/s
  pair      bare and sync in turns of 64 checks, in one process: prints
            "bare=CHECKS_PER_SECOND client=CHECKS_PER_SECOND"
  cprofile  sync under cProfile (the top functions on stderr)
Every mode checks the URLs of URLS in turn as Googlebot for SECONDS
(after 0.3 s of warm-up) and prints "rate=CHECKS_PER_SECOND"."""
import asyncio
import json
import os
import socket
import sys
import time
from urllib.parse import urlsplit

AGENT = "Googlebot"
WARMUP = 0.3


def timed(step, urls, secs):
    """Call step(url) over urls in turn: checks/s after the warm-up."""
    n, i, t0 = 0, 0, time.monotonic()
    end_warm = t0 + WARMUP
    while time.monotonic() < end_warm:
        step(urls[i % len(urls)])
        i += 1
    t0 = time.monotonic()
    end = t0 + secs
    while True:
        for _ in range(64):
            step(urls[i % len(urls)])
            i += 1
        n += 64
        t = time.monotonic()
        if t >= end:
            return n / (t - t0)


def pair(step_a, step_b, urls, secs):
    """step_a and step_b over urls in turns of 64 checks for secs seconds
    (after the warm-up), so that both see the same load: their checks/s."""
    spent, i, n = [0.0, 0.0], 0, 0
    end = time.monotonic() + WARMUP
    while time.monotonic() < end:
        for step in (step_a, step_b):
            for _ in range(8):
                step(urls[i % len(urls)])
                i += 1
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for k, step in enumerate((step_a, step_b)):
            t0 = time.monotonic()
            for _ in range(64):
                step(urls[i % len(urls)])
                i += 1
            spent[k] += time.monotonic() - t0
        n += 64
    return n / spent[0], n / spent[1]


def bare_step(path, decode=False):
    """The bare loop's step: sendall of the line Client.check writes (the
    same keys in the same order, a new id each), readline of the answer;
    with decode, json.loads of it too."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    rd = s.makefile("rb")
    ids = iter(range(1, 1 << 62))

    def step(u):
        s.sendall((json.dumps({"op": "check", "url": u, "agent": AGENT,
                               "id": next(ids)}, separators=(",", ":"),
                              ensure_ascii=False) + "\n").encode())
        line = rd.readline()
        if not line.endswith(b"\n"):
            raise SystemExit("robotsd closed the connection")
        if decode and json.loads(line).get("allowed") is None:
            raise SystemExit("no verdict for %s" % u)
    return step


def sync_step(path):
    import robotsd
    c = robotsd.Client(path)

    def step(u):
        if c.check(u, AGENT).allowed is None:
            raise SystemExit("no verdict for %s" % u)
    return step


def bare(path, urls, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    rd = s.makefile("rb")
    lines = [(json.dumps({"op": "check", "url": u, "agent": AGENT,
                          "id": i + 1}, separators=(",", ":"),
                         ensure_ascii=False) + "\n").encode()
             for i, u in enumerate(urls)]
    it = iter(range(1 << 62))

    def step(_):
        s.sendall(lines[next(it) % len(lines)])
        if not rd.readline().endswith(b"\n"):
            raise SystemExit("robotsd closed the connection")
    return timed(step, urls, secs)


def sync(path, urls, secs):
    import robotsd
    c = robotsd.Client(path)

    def step(u):
        if c.check(u, AGENT).allowed is None:
            raise SystemExit("no verdict for %s" % u)
    return timed(step, urls, secs)


def async64(path, urls, secs):
    import robotsd

    async def main():
        c = robotsd.AsyncClient(path)
        await c.check(urls[0], AGENT)
        count = [0]
        stop = [False]

        async def worker(k):
            i = k
            while not stop[0]:
                await c.check(urls[i % len(urls)], AGENT)
                i += 64
                count[0] += 1
        tasks = [asyncio.ensure_future(worker(k)) for k in range(64)]
        await asyncio.sleep(WARMUP)
        n0, t0 = count[0], time.monotonic()
        await asyncio.sleep(secs)
        n1, t1 = count[0], time.monotonic()
        stop[0] = True
        await asyncio.gather(*tasks)
        await c.close()
        return (n1 - n0) / (t1 - t0)
    return asyncio.run(main())


def json_loop(path, urls, secs):
    return timed(bare_step(path, decode=True), urls, secs)


def many(path, urls, secs):
    import robotsd
    c = robotsd.Client(path)
    batches = [urls[i:i + 100] for i in range(0, len(urls), 100)]
    it = iter(range(1 << 62))

    def step(_):
        for r in c.check_many(batches[next(it) % len(batches)], AGENT):
            if r.allowed is None:
                raise SystemExit("no verdict for %s" % r.url)
    # timed() counts calls: a call is 100 URLs (the last batch fewer)
    return timed(step, urls, secs) * len(urls) / len(batches)


def robots_file(robots_dir, host):
    """The corpus robots.txt of host as text, or None (a 404)."""
    try:
        with open(os.path.join(robots_dir, host + ".txt"), "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def parse(_path, urls, secs, robots_dir):
    from protego import Protego
    files = {}
    for u in urls:
        host = urlsplit(u).hostname
        if host not in files:
            files[host] = robots_file(robots_dir, host)
    hosts = [urlsplit(u).hostname for u in urls]
    state = {"host": None, "p": None}
    it = iter(range(1 << 62))

    def step(_):
        i = next(it) % len(urls)
        if hosts[i] != state["host"]:  # a new origin: parse its file
            text = files[hosts[i]]
            state["host"] = hosts[i]
            state["p"] = Protego.parse(text) if text is not None else None
        if state["p"] is not None:
            state["p"].can_fetch(urls[i], AGENT)
    return timed(step, urls, secs)


def protego(_path, urls, secs, robots_dir):
    from protego import Protego
    parsed = {}
    for u in urls:
        host = urlsplit(u).hostname
        if host in parsed:
            continue
        text = robots_file(robots_dir, host)
        parsed[host] = Protego.parse(text) if text is not None else None
    hosts = {u: urlsplit(u).hostname for u in urls}

    def step(u):
        p = parsed[hosts[u]]
        if p is not None:
            p.can_fetch(u, AGENT)
    return timed(step, urls, secs)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    mode, path, url_file, robots_dir, secs = sys.argv[1:]
    with open(url_file) as f:
        urls = [line.strip() for line in f if line.strip()]
    secs = float(secs)
    if mode in ("protego", "parse"):
        rate = globals()[mode](path, urls, secs, robots_dir)
    elif mode == "json":
        rate = json_loop(path, urls, secs)
    elif mode == "cprofile":
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
        rate = sync(path, urls, secs)
        pr.disable()
        pstats.Stats(pr, stream=sys.stderr).sort_stats(
            "tottime").print_stats(25)
    elif mode == "pair":
        a, b = pair(bare_step(path), sync_step(path), urls, secs)
        print("bare=%.0f client=%.0f" % (a, b))
        return
    elif mode in ("bare", "sync", "async64", "many"):
        rate = globals()[mode](path, urls, secs)
    else:
        sys.exit(__doc__)
    print("rate=%.0f" % rate)


if __name__ == "__main__":
    main()
