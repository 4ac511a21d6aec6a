#!/usr/bin/env python3
"""recheck_bench.py CORPUS_DIR OUT_DIR: a WARC file of the corpus's
robots.txt files (each a 2xx capture of https://HOST/robots.txt on
2024-01-01), written with the standard library only, and urls.txt: the
corpus URLs with a fetch time each, repeated to at least 1,000,000
lines."""
import gzip
import os
import sys
import uuid

corpus, out = sys.argv[1], sys.argv[2]
with open(os.path.join(out, "corpus.warc.gz"), "wb") as w:
    for name in sorted(os.listdir(os.path.join(corpus, "robots"))):
        host = name[:-4]
        with open(os.path.join(corpus, "robots", name), "rb") as f:
            body = f.read()
        http = b"HTTP/1.1 200 OK\r\n\r\n" + body
        head = ("WARC/1.0\r\nWARC-Type: response\r\n"
                "WARC-Record-ID: <urn:uuid:%s>\r\n"
                "WARC-Date: 2024-01-01T00:00:00Z\r\n"
                "WARC-Target-URI: https://%s/robots.txt\r\n"
                "Content-Length: %d\r\n\r\n"
                % (uuid.uuid4(), host, len(http))).encode()
        w.write(gzip.compress(head + http + b"\r\n\r\n", 1))
with open(os.path.join(corpus, "urls.txt")) as f:
    urls = [u.split()[0] for u in f if u.strip()]
with open(os.path.join(out, "recheck-urls.txt"), "w") as f:
    n = 0
    while n < 1000000:
        for u in urls:
            f.write("%s 2024-06-01T00:00:00Z\n" % u)
        n += len(urls)
