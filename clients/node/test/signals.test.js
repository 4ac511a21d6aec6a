// The page's own signals (check with page) and TDMRep (tdm: true) against
// the real robotsd and a real local origin server, and the client's
// checking of what robotsd sends. Expected values from the contract's
// section "Every signal, not only robots.txt" (its request example).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { CheckResult, ProtocolError } from "../index.js";
import { withDaemon } from "./helpers.js";

const ROBOTS = "User-agent: *\nDisallow: /private/\n";
const PAGE = {
  headers: [
    ["X-Robots-Tag", "noai"],
    ["Content-Usage", "train-ai=n"],
  ],
  meta: [["robots", "noindex"]],
};

const fx = withDaemon({ "sig.test": ROBOTS });

// The first 16 hex digits of the SHA-256 of s: a version, an evidence's page.
function hash16(s) {
  return createHash("sha256").update(s).digest("hex").slice(0, 16);
}

test("check with the contract's page: robots_tag, usage from the header, evidence", async () => {
  const r = await fx.client.check("http://sig.test/x", "NodeBot", { usage: true, tdm: true, page: PAGE });
  assert.equal(r.allowed, true);
  assert.deepEqual(r.robotsTag, {
    rules: ["noindex", "noai"],
    values: {},
    from: [
      { source: "header", field: "x-robots-tag", value: "noai" },
      { source: "meta", field: "robots", value: "noindex" },
    ],
  });
  assert.equal(r.usage["train-ai"], "disallowed");
  assert.deepEqual(r.usageFrom, [
    { directive: "content-usage", pattern: null, line: null, value: "train-ai=n", source: "header" },
  ]);
  // sig.test serves no tdmrep.json: a 404, the state none
  const tv = hash16("status:404");
  assert.deepEqual(r.evidence, { robots: hash16(ROBOTS), tdmrep: tv, page: "73f780eea2a13c87" });
  assert.equal(r.evidence.page, hash16("x-robots-tag: noai\ncontent-usage: train-ai=n\nmeta robots: noindex\n"));
  assert.deepEqual(r.tdm, { state: "none", reservation: null, policy: null, location: null, version: tv });
  assert.equal(r.usage.tdm, "unknown");
});

test("agent-scoped X-Robots-Tag, a disallowed URL, a plain check", async () => {
  const page = { headers: [["X-Robots-Tag", "googlebot: noindex"]] };
  const g = await fx.client.check("http://sig.test/x", "Googlebot/2.1", { page });
  assert.deepEqual(g.robotsTag.rules, ["noindex"]);
  assert.equal(g.evidence.page, "91ae3ba1092b72e2");
  const other = await fx.client.check("http://sig.test/x", "NodeBot", { page });
  assert.deepEqual(other.robotsTag, { rules: [], values: {}, from: [] });
  const d = await fx.client.check("http://sig.test/private/x", "NodeBot", { usage: true, page: PAGE });
  assert.deepEqual([d.allowed, d.robotsTag, d.usage, d.usageFrom], [false, null, null, []]);
  assert.equal(d.evidence.robots, hash16(ROBOTS));
  const plain = await fx.client.check("http://sig.test/x", "NodeBot");
  assert.deepEqual([plain.robotsTag, plain.evidence, plain.tdm], [null, null, null]);
  const many = await fx.client.checkMany(["http://sig.test/x"], "NodeBot", { tdm: true });
  assert.deepEqual([many[0].allowed, many[0].tdm], [true, {
    state: "none", reservation: null, policy: null, location: null, version: hash16("status:404"),
  }]);
  await assert.rejects(fx.client.checkMany(["http://sig.test/x"], "NodeBot", { page }), TypeError);
});

test("page: null is no page, as an absent one", async () => {
  const r = await fx.client.check("http://sig.test/x", "NodeBot", { page: null });
  assert.deepEqual([r.allowed, r.robotsTag, r.evidence], [true, null, null]);
  const many = await fx.client.checkMany(["http://sig.test/x"], "NodeBot", { page: null });
  assert.equal(many[0].allowed, true);
});

test("a page of the wrong shape is a TypeError, not sent", async () => {
  for (const page of ["x", { headers: "X-Robots-Tag: noai" }, { headers: [["a"]] }, { meta: [["a", 1]] }, { header: [] }]) {
    await assert.rejects(fx.client.check("http://sig.test/x", "NodeBot", { page }), TypeError, JSON.stringify(page));
  }
});

const OK = { ok: true, allowed: true, origin: "http://x.test", source: "cache", reason: "no_rule" };
const EV = { robots: "0123456789abcdef", tdmrep: null, page: "fedcba9876543210" };
const TAG = { rules: ["noindex"], values: { "max-snippet": "0" }, from: [{ source: "meta", field: "robots", value: "noindex" }] };

test("the new fields are checked: types, or ProtocolError", () => {
  const tdm = { state: "rules", reservation: 1, policy: "https://p/", location: "/a/*", version: "00000000000000aa", from: "header" };
  const r = new CheckResult({ ...OK, robots_tag: TAG, evidence: EV, tdm }, "u", { page: true, tdm: true });
  assert.deepEqual([r.robotsTag, r.evidence, r.tdm], [TAG, EV, tdm]);
  const bad = [
    { evidence: EV },
    { robots_tag: TAG },
    { robots_tag: [], evidence: EV },
    { robots_tag: { ...TAG, rules: "noindex" }, evidence: EV },
    { robots_tag: { ...TAG, values: { x: 0 } }, evidence: EV },
    { robots_tag: { ...TAG, from: [{ source: "meta" }] }, evidence: EV },
    { robots_tag: TAG, evidence: { ...EV, page: null } },
  ];
  for (const extra of bad) {
    assert.throws(() => new CheckResult({ ...OK, ...extra }, "u", { page: true }), ProtocolError, JSON.stringify(extra));
  }
  for (const t of [{ state: 1 }, { state: "rules", reservation: 2 }, { state: "rules", reservation: true }, ["rules"]]) {
    assert.throws(() => new CheckResult({ ...OK, tdm: t }, "u", { tdm: true }), ProtocolError, JSON.stringify(t));
  }
  const st = { directive: "content-usage", pattern: null, line: null, value: "train-ai=n" };
  assert.throws(() => new CheckResult({ ...OK, usage: null, usage_from: [st] }, "u", { usage: true }), ProtocolError);
});
