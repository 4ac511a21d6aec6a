// Client.watch against the real robotsd and a real local origin server:
// typed events of real fetches, a refused request thrown, and a watch that
// outlives a restart of robotsd (it subscribes again by itself and the
// next change still arrives).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AgentChange, BadRequestError, ChangeEvent, Client } from "../index.js";
import { Daemon, Origin, sleep } from "./helpers.js";

const ORIGIN = "http://w.test";
let origin;
let daemon;
let client;

before(async () => {
  origin = await new Origin().listen();
  origin.robots("w.test", "User-agent: *\nDisallow: /a/\nAllow: /a/b\n");
  daemon = new Daemon(origin);
  await daemon.start();
  client = new Client({ socket: daemon.socket });
});

after(async () => {
  await client.close();
  assert.equal(await daemon.stop(), 0);
  daemon.cleanup();
  await origin.close();
});

async function watchers() {
  return (await client.stats()).feed_watchers;
}

async function until(pred) {
  for (let end = Date.now() + 20000; Date.now() < end; await sleep(20)) {
    if (await pred()) return;
  }
  assert.fail("condition not met in 20 s");
}

// Purge the origin and check it: a new entry, a change from none.
async function fetchAnew() {
  await client.purge(ORIGIN);
  assert.equal((await client.check(ORIGIN + "/a/x", "foobot")).allowed, false);
  return (await client.inspect(ORIGIN)).version;
}

function expect(ev, version) {
  assert.ok(ev instanceof ChangeEvent);
  assert.deepEqual(
    { origin: ev.origin, old: ev.old, new: ev.new, state: ev.state },
    { origin: ORIGIN, old: null, new: version, state: "rules" },
  );
  assert.ok(ev.agents["FooBot/2"] instanceof AgentChange);
  assert.deepEqual(ev.agents["FooBot/2"].newlyDisallowed, ["/a/"]);
  assert.deepEqual(ev.agents["FooBot/2"].newlyAllowed, ["/a/b"]);
  assert.equal(ev.agents["FooBot/2"].usageChanged, false);
}

test("watch yields typed events and survives a robotsd restart", async () => {
  const ac = new AbortController();
  const it = client.watch({ origins: [ORIGIN], agents: ["FooBot/2"], signal: ac.signal });
  const first = it.next();
  await until(async () => (await watchers()) === 1);
  const v1 = await fetchAnew();
  expect((await first).value, v1);
  assert.equal(await daemon.stop(), 0);
  await daemon.start();
  const second = it.next();
  await until(async () => (await watchers()) === 1);
  const v2 = await fetchAnew();
  expect((await second).value, v2);
  ac.abort();
  assert.equal((await it.next()).done, true);
});

test("a refused watch throws its error", async () => {
  const it = client.watch({ agents: [""] });
  await assert.rejects(it.next(), BadRequestError);
});
