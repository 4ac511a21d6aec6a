"""warcread.py: a small WARC 1.1 reader of its own (Python's standard
library only), for machines without warcio: reads every robotsd-*.warc.gz
file of a directory, oldest first, checks that each record is a gzip member
of its own, and checks both digests of every record against SHA-256
computed here: WARC-Block-Digest over the whole block, WARC-Payload-Digest
over what follows the HTTP headers. Gives the same rows as check.mjs."""
import base64
import hashlib
import os
import re
import zlib

NAME = re.compile(r"^robotsd-\d{14}-\d{5}\.warc\.gz$")


def members(data):
    """The decompressed gzip members of data, one by one."""
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = d.decompress(data) + d.flush()
        if not d.eof:
            raise ValueError("a gzip member is cut short")
        yield out
        data = d.unused_data


def digest_ok(label, data):
    if not label or not label.startswith("sha256:"):
        return False
    d = hashlib.sha256(data).digest()
    v = label[len("sha256:"):]
    return v == base64.b32encode(d).decode() or v.lower() == d.hex()


def headers(text):
    """A header block's (name, value) pairs, in order."""
    out = []
    for line in text.split("\r\n"):
        if line:
            k, _, v = line.partition(":")
            out.append([k, v.strip()])
    return out


def record(name, raw):
    """One record (a whole gzip member) as a check.mjs row."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"WARC/1.1\r\n"):
        raise ValueError("%s: not a WARC/1.1 record" % name)
    warc = headers(head.decode("utf-8").split("\r\n", 1)[1])
    w = {k.lower(): v for k, v in warc}
    n = int(w["content-length"])
    block, tail = rest[:n], rest[n:]
    if len(block) != n or tail != b"\r\n\r\n":
        raise ValueError("%s: block length or record end wrong" % name)
    row = {"file": name, "type": w.get("warc-type"), "warc": warc,
           "length": n, "block_ok": digest_ok(w.get("warc-block-digest"),
                                              block)}
    if w.get("content-type", "").startswith("application/http"):
        h, sep, payload = block.partition(b"\r\n\r\n")
        text = h.decode("iso-8859-1")
        statusline, _, rest_h = text.partition("\r\n")
        row["status"] = int(statusline.split(" ")[1])
        row["statusline"] = statusline
        row["http"] = headers(rest_h)
        row["payload"] = base64.b64encode(payload).decode()
        row["payload_ok"] = digest_ok(w.get("warc-payload-digest"), payload)
    return row


def read_dir(d):
    rows = []
    for name in sorted(n for n in os.listdir(d) if NAME.match(n)):
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
        rows.extend(record(name, m) for m in members(data))
    return rows
