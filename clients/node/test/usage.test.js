// Usage preferences and control tokens against the real robotsd and a real
// local origin server, and the client's checking of what robotsd sends.
// Expected values follow docs/usage-preferences.md: per directive the
// longest match decides (ties most restrictive), file-scope Content-Signal
// lines apply to every agent, the directives combine per purpose most
// restrictively.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { CheckResult, Client, PURPOSES, ProtocolError } from "../index.js";
import { Daemon, Origin } from "./helpers.js";

const ROBOTS = [
  "Content-Signal: search=yes, ai-input=no", // 1: file scope
  "User-agent: *", // 2
  "Disallow: /private/", // 3
  "Content-Usage: train-ai=y", // 4
  "Content-Usage: /news/ train-ai=n", // 5
  "",
  "User-agent: Google-Extended", // 7
  "Disallow: /", // 8
  "",
].join("\n");

let origin;
let daemon;
let client;

before(async () => {
  origin = await new Origin().listen();
  origin.robots("use.test", ROBOTS);
  origin.robots("gone.test", "", { status: 404 });
  daemon = new Daemon(origin);
  await daemon.start();
  client = new Client({ socket: daemon.socket });
});

after(async () => {
  await client?.close();
  const status = await daemon?.stop();
  const log = daemon?.logText();
  daemon?.cleanup();
  await origin?.close();
  if (daemon) assert.equal(status, 0, `robotsd exit status:\n${log}`);
});

// A Content-Usage line's scope may be absent or "group".
function statements(list) {
  return list.map((s) => ({ scope: "group", ...s }));
}

const SIGNAL = { directive: "content-signal", pattern: "/", line: 1, value: "search=yes, ai-input=no", scope: "file" };

test("check with usage: per URL and purpose, with the deciding lines", async () => {
  const r = await client.check("http://use.test/news/a", "NodeBot", { usage: true });
  assert.equal(r.allowed, true);
  assert.deepEqual({ ...r.usage }, { "train-ai": "disallowed", search: "allowed", "ai-input": "disallowed", "ai-use": "unknown" });
  assert.deepEqual(statements(r.usageFrom), [
    SIGNAL,
    { directive: "content-usage", pattern: "/news/", line: 5, value: "train-ai=n", scope: "group" },
  ]);
  assert.equal(r.tokens, null);
  const s = await client.check("http://use.test/x", "NodeBot", { usage: true });
  assert.deepEqual({ ...s.usage }, { "train-ai": "allowed", search: "allowed", "ai-input": "disallowed", "ai-use": "unknown" });
  const plain = await client.check("http://use.test/x", "NodeBot");
  assert.equal(plain.usage, null);
  assert.equal(plain.usageFrom, null);
});

test("a disallowed URL has usage null; tokens answer whatever the agent's verdict", async () => {
  const r = await client.check("http://use.test/private/x", "NodeBot", {
    usage: true,
    tokens: ["Google-Extended", "Applebot-Extended"],
  });
  assert.equal(r.allowed, false);
  assert.equal(r.usage, null);
  assert.deepEqual(r.usageFrom, []);
  assert.deepEqual(r.tokens, {
    "google-extended": { allowed: false, rule: { directive: "disallow", pattern: "/", line: 8 } },
    "applebot-extended": { allowed: false, rule: { directive: "disallow", pattern: "/private/", line: 3 } },
  });
});

test("checkMany carries usage and tokens per URL", async () => {
  const res = await client.checkMany(["http://use.test/a", "http://use.test/private/b", "http://gone.test/c"], "NodeBot", {
    usage: true,
    tokens: ["Google-Extended"],
  });
  assert.deepEqual(
    res.map((r) => [r.allowed, r.usage?.["train-ai"] ?? null, r.tokens["google-extended"].allowed]),
    [
      [true, "allowed", false],
      [false, null, false],
      [true, "unknown", true], // 4xx: allow all, every purpose unknown
    ],
  );
  assert.deepEqual({ ...res[2].usage }, Object.fromEntries(PURPOSES.map((p) => [p, "unknown"])));
  assert.deepEqual(res[2].usageFrom, []);
});

test("tokens must be an array of strings", async () => {
  await assert.rejects(client.check("http://use.test/", "A", { tokens: "Google-Extended" }), TypeError);
});

const OK = { ok: true, allowed: true, origin: "http://u", source: "cache", reason: "no_rule" };
const USAGE = { "train-ai": "allowed", search: "unknown", "ai-input": "disallowed", "ai-use": "unknown" };
const ST = { directive: "content-usage", pattern: "/", line: 1, value: "train-ai=y" };

test("answers of the wrong shape are ProtocolErrors, not values", () => {
  const good = new CheckResult(
    { ...OK, usage: USAGE, usage_from: [ST], tokens: { g: { allowed: true, rule: null } } },
    "u",
    { usage: true, tokens: true },
  );
  assert.deepEqual({ ...good.usage }, USAGE);
  assert.deepEqual(good.usageFrom, [ST]);
  const bad = [
    [{ usage: ["train-ai"], usage_from: [] }, { usage: true }],
    [{ usage: { ...USAGE, search: "yes" }, usage_from: [] }, { usage: true }],
    [{ usage: { search: "allowed" }, usage_from: [] }, { usage: true }], // purposes missing
    [{ usage: USAGE, usage_from: {} }, { usage: true }],
    [{ usage: USAGE, usage_from: [{ ...ST, line: "1" }] }, { usage: true }],
    [{ usage: USAGE, usage_from: [{ ...ST, line: 1.5 }] }, { usage: true }],
    [{ usage: USAGE, usage_from: [{ ...ST, directive: "license" }] }, { usage: true }],
    [{ usage: USAGE, usage_from: [{ ...ST, scope: "site" }] }, { usage: true }],
    [{ usage: USAGE }, { usage: true }],
    [{}, { usage: true }], // asked for, not answered: an older robotsd
    [{ tokens: { g: { allowed: "false", rule: null } } }, { tokens: true }],
    [{ tokens: { g: { allowed: true, rule: { directive: "allow", pattern: 1, line: 1 } } } }, { tokens: true }],
    [{ tokens: ["g"] }, { tokens: true }],
    [{}, { tokens: true }],
  ];
  for (const [extra, asked] of bad) {
    assert.throws(() => new CheckResult({ ...OK, ...extra }, "u", asked), ProtocolError, JSON.stringify(extra));
  }
  // pending and failed answers carry neither
  const p = new CheckResult({ ok: true, pending: true, origin: "http://u" }, "u", { usage: true, tokens: true });
  assert.equal(p.usage, null);
});
