"""warm.py: have robotsd fetch every origin of a URL list, and time it.

usage: python3 warm.py SOCKET URLS_FILE

Sends one "wait":false check per distinct origin (100 to a batch), then
polls stats until no fetch runs or waits and every origin is cached;
prints seconds=, origins=, fetches=, fetch_errors=, cache_entries= and
cache_bytes= on one line.
"""
import json
import socket
import sys
import time


def main():
    origins = sorted({"/".join(u.split("/")[:3]) + "/"
                      for u in open(sys.argv[2]).read().split()})
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    f = s.makefile("rwb")

    def ask(req):
        f.write(json.dumps(req, separators=(",", ":")).encode() + b"\n")
        f.flush()
        ans = json.loads(f.readline())
        if not ans.get("ok"):
            sys.exit("warm: %r" % ans)
        return ans

    before = ask({"op": "stats", "id": "s"})["stats"]
    t0 = time.monotonic()
    for i in range(0, len(origins), 100):
        ask({"op": "check", "id": i, "agent": "Googlebot", "wait": False,
             "urls": origins[i:i + 100]})
    while True:
        st = ask({"op": "stats", "id": "s"})["stats"]
        if (st["fetches_in_flight"] == 0 and st["fetches_queued"] == 0
                and st["cache_entries"] >= before["cache_entries"]
                + len(origins)):
            break
        if time.monotonic() - t0 > 300:
            sys.exit("warm: not done after 300 s: %r" % st)
        time.sleep(0.005)
    print("seconds=%.3f origins=%d fetches=%d fetch_errors=%d "
          "cache_entries=%d cache_bytes=%d"
          % (time.monotonic() - t0, len(origins),
             st["fetches"] - before["fetches"],
             st["fetch_errors"] - before["fetch_errors"],
             st["cache_entries"], st["cache_bytes"]))


main()
