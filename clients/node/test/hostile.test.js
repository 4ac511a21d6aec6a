// The client against a daemon that breaks the protocol: a scripted Unix
// socket peer in robotsd's place, not robotsd.

import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { Client, ConnectionError, MAX_ANSWER, ProtocolError } from "../index.js";

// A peer answering each request line with answer(sock, request).
async function peer(answer) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "robotsd-node-"));
  const socketPath = path.join(dir, "robotsd.sock");
  const server = net.createServer((sock) => {
    let buf = "";
    sock.on("error", () => {});
    sock.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        answer(sock, JSON.parse(line));
      }
    });
  });
  await new Promise((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    close() {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("an answer line over MAX_ANSWER is a ProtocolError, read no further", async () => {
  let sent = 0;
  const p = await peer((sock, req) => {
    sock.write(`{"id":${req.id},"ok":true,"pad":"`);
    const chunk = "x".repeat(1 << 20);
    const more = () => {
      while (sent < 4 * MAX_ANSWER && !sock.destroyed) {
        sent += chunk.length;
        if (!sock.write(chunk)) return sock.once("drain", more);
      }
    };
    more();
  });
  const c = new Client({ socket: p.socketPath, timeout: 20000 });
  try {
    await assert.rejects(c.check("http://a.test/", "A"), (err) => {
      assert.ok(err instanceof ProtocolError && err instanceof ConnectionError, String(err));
      assert.match(err.message, /longer than 67108864 bytes/);
      return true;
    });
    assert.ok(sent < 2 * MAX_ANSWER, `the client took ${sent} bytes`);
  } finally {
    c.close();
    p.close();
  }
});

test('allowed:"false" (a string) is a ProtocolError, never a verdict', async () => {
  const p = await peer((sock, req) => {
    sock.write(JSON.stringify({ id: req.id, ok: true, allowed: "false", origin: "http://a.test" }) + "\n");
  });
  const c = new Client({ socket: p.socketPath, timeout: 20000 });
  try {
    await assert.rejects(c.check("http://a.test/", "A"), ProtocolError);
  } finally {
    c.close();
    p.close();
  }
});

test("a version that is neither a string nor null is a ProtocolError", async () => {
  for (const version of [7, false, ["ab"]]) {
    const p = await peer((sock, req) => {
      sock.write(JSON.stringify({ id: req.id, ok: true, allowed: true, origin: "http://a.test", version }) + "\n");
    });
    const c = new Client({ socket: p.socketPath, timeout: 20000 });
    try {
      await assert.rejects(c.check("http://a.test/", "A"), (err) => {
        assert.ok(err instanceof ProtocolError, String(err));
        assert.ok(err.message.includes(`version is ${JSON.stringify(version)}`), err.message);
        return true;
      });
    } finally {
      c.close();
      p.close();
    }
  }
});

// Answers for no request the client sent: never handed to the waiting
// call, which fails with ProtocolError at once (not at its timeout).
test("an answer the client did not ask for is a ProtocolError", async () => {
  const verdict = '"ok":true,"allowed":true,"origin":"http://a.test","source":"cache","reason":"no_rule"';
  const cases = [
    ["null", () => `{"id":null,${verdict}}`, /ok answer of id null/],
    ["float", (id) => `{"id":${id}.0,${verdict}}`, /id 1\.0,/],
    ["exponent", (id) => `{"id":${id}e0,${verdict}}`, /id 1e0,/],
    ["string", (id) => `{"id":"${id}",${verdict}}`, /id "1",/],
    ["bool", () => `{"id":true,${verdict}}`, /id true,/],
    ["never sent", (id) => `{"id":${id + 1000},${verdict}}`, /id 1001,/],
    ["two ids", (id) => `{"id":${id},${verdict},"id":${id}}`, /with 2 ids/],
    ["two ids, one escaped", (id) => `{"id":${id},${verdict},"\\u0069d":${id}}`, /with 2 ids/],
    ["no id", () => `{${verdict}}`, /with 0 ids/],
  ];
  for (const [name, line, why] of cases) {
    const p = await peer((sock, req) => sock.write(line(req.id) + "\n"));
    const c = new Client({ socket: p.socketPath, timeout: 20000 });
    try {
      await assert.rejects(c.check("http://a.test/", "A"), (err) => {
        assert.ok(err instanceof ProtocolError, `${name}: ${err}`);
        assert.match(err.message, why, name);
        return true;
      });
    } finally {
      c.close();
      p.close();
    }
  }
});

// A verdict's allowed, origin, source and reason, a pending answer's
// origin: missing is an error, never a default.
test("an answer without a required field is a ProtocolError", async () => {
  const verdict = { ok: true, allowed: true, origin: "http://a.test", source: "cache", reason: "no_rule" };
  const cases = ["allowed", "origin", "source", "reason"].map((f) => [f, {}]);
  cases.push(["origin", { wait: false }]);
  for (const [field, opts] of cases) {
    const p = await peer((sock, req) => {
      const a = opts.wait === false ? { ok: true, pending: true } : { ...verdict };
      delete a[field];
      sock.write(JSON.stringify({ id: req.id, ...a }) + "\n");
    });
    const c = new Client({ socket: p.socketPath, timeout: 20000 });
    try {
      await assert.rejects(c.check("http://a.test/", "A", opts), (err) => {
        assert.ok(err instanceof ProtocolError, `${field}: ${err}`);
        assert.match(err.message, new RegExp(`${field}`), field);
        return true;
      });
    } finally {
      c.close();
      p.close();
    }
  }
});
