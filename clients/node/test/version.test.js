// Versions against the real robotsd on its test clock: a check names the
// SHA-256 prefix of the robots.txt body it used, history lists the
// versions an origin had.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, test } from "node:test";

import { Client, NotCachedError } from "../index.js";
import { Daemon, Origin, sleep } from "./helpers.js";

const ONE = "User-agent: *\nDisallow: /private/\n";
const TWO = "User-agent: *\nDisallow: /secret/\n";

/** robotsd's version of a body: the first 16 hex digits of its SHA-256. */
function versionOf(text) {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
}

let origin;
let daemon;
let client;

before(async () => {
  origin = await new Origin().listen();
  origin.robots("v.test", ONE);
  daemon = new Daemon(origin, ["--test-clock"]);
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

/** Polls inspect until the origin is cached with no fetch under way. */
async function fetched(o) {
  const end = Date.now() + 30000;
  for (;;) {
    const e = await client.inspect(o);
    if (!e.fetching && e.state !== "pending") return e;
    assert.ok(Date.now() < end, `${o} still fetching: ${JSON.stringify(e)}`);
    await sleep(20);
  }
}

test("a check's version is the SHA-256 prefix of the body; history lists both versions", async () => {
  const v1 = versionOf(ONE);
  const v2 = versionOf(TWO);
  assert.equal((await client.check("http://v.test/x", "A")).version, v1);
  assert.equal((await client.check("http://v.test/robots.txt", "A")).version, null);
  const rows = await client.checkMany(["http://v.test/y", "http://v.test/robots.txt", "gopher://v.test/"], "A");
  assert.deepEqual(
    rows.map((r) => r.version),
    [v1, null, null],
  );
  assert.ok(rows[2].error);
  assert.deepEqual(
    (await client.history("http://v.test")).map((e) => e.version),
    [v1],
  );

  origin.robots("v.test", TWO);
  await client.request({ op: "clock", advance: 86400 + 1 });
  await client.check("http://v.test/x", "A"); // refreshes in the background
  for (let end = Date.now() + 30000; origin.hitsOf("v.test").length < 2; await sleep(20)) {
    assert.ok(Date.now() < end, "no refresh");
  }
  const e = await fetched("http://v.test");
  assert.equal(e.version, v2);
  assert.equal((await client.check("http://v.test/x", "A")).version, v2);
  assert.deepEqual(
    (await client.checkMany(["http://v.test/z"], "A")).map((r) => r.version),
    [v2],
  );
  const h = await client.history("HTTP://v.test:80");
  assert.deepEqual(
    h.map((x) => [x.version, x.httpStatus, x.state]),
    [
      [v2, 200, "rules"],
      [v1, 200, "rules"],
    ],
  );
  assert.equal(h[0].firstSeen, Math.trunc(e.fetchedAt));
  assert.ok(h[1].firstSeen <= h[1].lastSeen && h[1].lastSeen < h[0].firstSeen, JSON.stringify(h));
  await assert.rejects(client.history("http://nothere.test"), NotCachedError);
  await assert.rejects(client.history(null), TypeError);
});
