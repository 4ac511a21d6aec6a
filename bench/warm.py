"""warm.py: have robotsd fetch every origin of a URL list, and time it.

usage: python3 warm.py [--single | --tdm] SOCKET URLS_FILE

Sends one "wait":false check per distinct origin (100 to a batch), then
polls stats until no fetch runs or waits. An origin is done once a check
of it is answered with a verdict: cached, whether this pass or an earlier
one fetched it. The origins answered "pending" are then asked again by
checks that wait (an origin evicted meanwhile, or too large for
--cache-max-bytes, is fetched again and answered), and those answered
"overloaded" or "timeout" again after that, until every origin is done.
Prints seconds=, origins=, fetches=, fetch_errors=, cache_entries=,
cache_bytes= and evictions= on one line. With --single, the first round
asks each origin by a single check of its own that waits for the fetch
(as a crawler asks), 256 of them in flight on the connection at a time.
With --tdm, every check carries "tdm":true and waits (batches), so that
each origin's tdmrep.json is fetched too.
"""
import json
import socket
import sys
import time

WINDOW = 256
BATCH = 100
TIMEOUT = 300  # seconds
RETRY = ("overloaded", "timeout")  # codes of answers to ask again


def settled(origin, ans):
    """Whether ans, the answer to a check of origin, is a verdict (from
    the cache, or from the fetch a waiting check waited for); False for
    "pending" and the codes of RETRY; any other error ends warm.py."""
    if ans.get("ok"):
        return not ans.get("pending")
    if ans.get("error", {}).get("code") in RETRY:
        return False
    sys.exit("warm: %s: %r" % (origin, ans))


def main():
    args = sys.argv[1:]
    single = args[:1] == ["--single"]
    tdm = args[:1] == ["--tdm"]
    if single or tdm:
        args = args[1:]
    origins = sorted({"/".join(u.split("/")[:3]) + "/"
                      for u in open(args[1]).read().split()})
    s = socket.socket(socket.AF_UNIX)
    s.connect(args[0])
    f = s.makefile("rwb")

    def send(req):
        f.write(json.dumps(req, separators=(",", ":")).encode() + b"\n")

    def answer():
        line = f.readline()
        if not line:
            sys.exit("warm: robotsd closed the connection")
        return json.loads(line)

    def ask(req):
        """The answer to req, which must be ok."""
        send(req)
        f.flush()
        ans = answer()
        if not ans.get("ok"):
            sys.exit("warm: %r" % ans)
        return ans

    def stats():
        return ask({"op": "stats", "id": "s"})["stats"]

    def ask_singly(todo):
        """A waiting check of each origin, WINDOW in flight; answers may
        come back in any order. The origins not settled."""
        answers = {}
        for i, o in enumerate(todo):
            send({"op": "check", "id": i, "agent": "Googlebot", "url": o})
            if i + 1 - len(answers) >= WINDOW:
                f.flush()
                a = answer()
                answers[a["id"]] = a
        f.flush()
        while len(answers) < len(todo):
            a = answer()
            answers[a["id"]] = a
        return [o for i, o in enumerate(todo)
                if not settled(o, answers[i])]

    def ask_batches(todo, wait):
        """Batch checks of the origins, BATCH to a line. The origins not
        settled."""
        left = []
        for i in range(0, len(todo), BATCH):
            part = todo[i:i + BATCH]
            req = {"op": "check", "id": i, "agent": "Googlebot",
                   "wait": wait or tdm, "urls": part}
            if tdm:
                req["tdm"] = True
            res = ask(req)["results"]
            left += [o for o, a in zip(part, res) if not settled(o, a)]
        return left

    def idle(todo):
        """Stats once no fetch runs or waits."""
        while True:
            st = stats()
            if st["fetches_in_flight"] == 0 and st["fetches_queued"] == 0:
                return st
            pause(todo, st)

    def pause(todo, st):
        """A short sleep, or the end past TIMEOUT."""
        if time.monotonic() - t0 > TIMEOUT:
            sys.exit("warm: not done after %d s, %d origins not answered "
                     "yet: %r" % (TIMEOUT, len(todo), st))
        time.sleep(0.005)

    before = stats()
    t0 = time.monotonic()
    todo = ask_singly(origins) if single else ask_batches(origins, False)
    st = idle(todo)
    while todo:
        todo = ask_batches(todo, True)
        if todo:
            pause(todo, st)
        st = idle(todo)
    print("seconds=%.3f origins=%d fetches=%d fetch_errors=%d "
          "cache_entries=%d cache_bytes=%d evictions=%d"
          % (time.monotonic() - t0, len(origins),
             st["fetches"] - before["fetches"],
             st["fetch_errors"] - before["fetch_errors"],
             st["cache_entries"], st["cache_bytes"],
             st["evictions"] - before["evictions"]))


main()
