"""warm.py: have robotsd fetch every origin of a URL list, and time it.

usage: python3 warm.py [--single] SOCKET URLS_FILE

Sends one "wait":false check per distinct origin (100 to a batch), then
polls stats until no fetch runs or waits and every origin is cached;
prints seconds=, origins=, fetches=, fetch_errors=, cache_entries= and
cache_bytes= on one line. With --single, each origin is asked by a
single check of its own that waits for the fetch (as a crawler asks),
256 of them in flight on the connection at a time.
"""
import json
import socket
import sys
import time

WINDOW = 256


def main():
    args = sys.argv[1:]
    single = args[:1] == ["--single"]
    if single:
        args = args[1:]
    origins = sorted({"/".join(u.split("/")[:3]) + "/"
                      for u in open(args[1]).read().split()})
    s = socket.socket(socket.AF_UNIX)
    s.connect(args[0])
    f = s.makefile("rwb")

    def send(req):
        f.write(json.dumps(req, separators=(",", ":")).encode() + b"\n")

    def answer():
        ans = json.loads(f.readline())
        if not ans.get("ok"):
            sys.exit("warm: %r" % ans)
        return ans

    def ask(req):
        send(req)
        f.flush()
        return answer()

    before = ask({"op": "stats", "id": "s"})["stats"]
    t0 = time.monotonic()
    if single:
        # Answers may come back in any order: keep WINDOW in flight.
        sent = 0
        for i, o in enumerate(origins):
            send({"op": "check", "id": i, "agent": "Googlebot", "url": o})
            sent += 1
            if sent >= WINDOW:
                f.flush()
                answer()
                sent -= 1
        f.flush()
        for _ in range(sent):
            answer()
    else:
        for i in range(0, len(origins), 100):
            ask({"op": "check", "id": i, "agent": "Googlebot",
                 "wait": False, "urls": origins[i:i + 100]})
    while True:
        st = ask({"op": "stats", "id": "s"})["stats"]
        # Single checks have all been answered: their fetches are done.
        if (st["fetches_in_flight"] == 0 and st["fetches_queued"] == 0
                and (single or st["cache_entries"] >= before["cache_entries"]
                     + len(origins) or st["evictions"] > before["evictions"])):
            break
        if time.monotonic() - t0 > 300:
            sys.exit("warm: not done after 300 s: %r" % st)
        time.sleep(0.005)
    print("seconds=%.3f origins=%d fetches=%d fetch_errors=%d "
          "cache_entries=%d cache_bytes=%d evictions=%d"
          % (time.monotonic() - t0, len(origins),
             st["fetches"] - before["fetches"],
             st["fetch_errors"] - before["fetch_errors"],
             st["cache_entries"], st["cache_bytes"],
             st["evictions"] - before["evictions"]))


main()
