// check.mjs DIR: read every robotsd-*.warc.gz file of DIR (oldest first)
// with warcio, the independent WARC reader of the Webrecorder project, and
// check both digests of every record against SHA-256 computed here (Node's
// crypto): WARC-Block-Digest over the whole block, WARC-Payload-Digest over
// what follows the HTTP headers (warcio's own split). Prints one JSON line
// per record (its WARC headers, HTTP status and headers, the payload as
// base64, the digests' verdicts) and exits 1 if any digest is wrong.
import { createHash } from "node:crypto";
import { createReadStream, readdirSync } from "node:fs";
import { join } from "node:path";
import { WARCParser } from "warcio";

const ABC = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

// RFC 4648 base32, padded.
function base32(buf) {
  let out = "", acc = 0, bits = 0;
  for (const b of buf) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ABC[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= 0xff;
  }
  if (bits > 0) out += ABC[(acc << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
}

// 1 when the labelled digest ("sha256:" base32 or hex) is that of bytes.
function digestOk(label, bytes) {
  if (!label || !label.startsWith("sha256:")) return false;
  const d = createHash("sha256").update(bytes).digest();
  const v = label.slice(7);
  return v === base32(d) || v.toLowerCase() === d.toString("hex");
}

function headersOf(h) {
  const out = [];
  for (const [k, v] of h.headers) out.push([k, v]);
  return out;
}

async function* records(path, parseHttp) {
  const parser = new WARCParser(createReadStream(path), {
    parseHttp,
    keepHeadersCase: true,
  });
  for await (const r of parser) {
    yield r;
  }
}

async function main() {
  const dir = process.argv[2];
  const files = readdirSync(dir)
    .filter((n) => /^robotsd-\d{14}-\d{5}\.warc\.gz$/.test(n))
    .sort();
  let bad = 0;
  for (const name of files) {
    const path = join(dir, name);
    // Pass 1: the raw block of each record.
    const blocks = [];
    for await (const r of records(path, false)) {
      blocks.push(Buffer.from(await r.readFully()));
    }
    // Pass 2: warcio's parse of the HTTP part and its payload.
    let i = 0;
    for await (const r of records(path, true)) {
      const block = blocks[i++];
      const row = {
        file: name,
        type: r.warcType,
        warc: headersOf(r.warcHeaders),
        length: block.length,
        block_ok: digestOk(r.warcBlockDigest, block),
      };
      if (r.httpHeaders) {
        const payload = Buffer.from(await r.readFully(false));
        row.status = r.httpHeaders.statusCode;
        row.statusline = r.httpHeaders.statusline;
        row.http = headersOf(r.httpHeaders);
        row.payload = payload.toString("base64");
        row.payload_ok = digestOk(r.warcPayloadDigest, payload);
        if (!row.payload_ok) bad++;
      }
      if (!row.block_ok) bad++;
      process.stdout.write(JSON.stringify(row) + "\n");
    }
    if (i !== blocks.length) {
      process.stderr.write(`${name}: the two passes disagree\n`);
      bad++;
    }
  }
  // exitCode, not exit(): a piped stdout must be written out first
  process.exitCode = bad ? 1 : 0;
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exitCode = 2;
});
