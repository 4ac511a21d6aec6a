// The client against the real robotsd and a real local origin server.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  BATCH_LIMIT,
  BadJsonError,
  BadRequestError,
  BadUrlError,
  CheckResult,
  Client,
  ClientTimeoutError,
  ConnectionError,
  DEFAULT_CONNECT_TIMEOUT,
  LineTooLongError,
  NotCachedError,
  NotRunningError,
  OverloadedError,
  RobotsdError,
  TimeoutError,
  UnknownOpError,
  UnsupportedSchemeError,
} from "../index.js";
import { Daemon, Origin, sleep } from "./helpers.js";

const AGENT = "NodeBot/1.0 (+https://bot.example)";
const ROBOTS = "User-agent: nodebot\nCrawl-delay: 2\nDisallow: /private/\nAllow: /private/ok\n";

let origin;
let daemon;
let client;

before(async () => {
  origin = await new Origin().listen();
  origin.robots("site.test", ROBOTS);
  daemon = new Daemon(origin, ["--fetch-timeout", "3"]);
  await daemon.start();
  client = new Client({ socket: daemon.socket });
});

after(async () => {
  // whatever before() got to start is stopped, so the process can end
  await client?.close();
  origin?.release();
  const status = await daemon?.stop();
  const log = daemon?.logText();
  daemon?.cleanup();
  await origin?.close();
  if (daemon) assert.equal(status, 0, `robotsd exit status:\n${log}`);
});

test("a disallowed URL names the deciding rule; the next check is cached", async () => {
  const r = await client.check("http://site.test/private/x", AGENT);
  assert.ok(r instanceof CheckResult);
  assert.equal(r.allowed, false);
  assert.equal(r.pending, false);
  assert.equal(r.reason, "rule");
  assert.deepEqual(r.rule, { directive: "disallow", pattern: "/private/", line: 3 });
  assert.equal(r.origin, "http://site.test");
  assert.equal(r.source, "fetched");
  assert.equal(r.httpStatus, 200);
  assert.equal(r.crawlDelay, 2);
  assert.equal(r.expiresIn, 86400);
  assert.equal(r.url, "http://site.test/private/x");
  const again = await client.check("http://site.test/private/y", AGENT);
  assert.equal(again.source, "cache");
  assert.equal(origin.hitsOf("site.test").length, 1);
});

test("an allowed URL: the longer allow rule wins, or no rule matches", async () => {
  const r = await client.check("http://site.test/private/ok", AGENT);
  assert.equal(r.allowed, true);
  assert.deepEqual(r.rule, { directive: "allow", pattern: "/private/ok", line: 4 });
  const free = await client.check("http://site.test/public", AGENT);
  assert.equal(free.allowed, true);
  assert.equal(free.reason, "no_rule");
  assert.equal(free.rule, null);
  const other = await client.check("http://site.test/private/x", "OtherBot");
  assert.equal(other.allowed, true, "the nodebot group does not apply to OtherBot");
  assert.equal(other.crawlDelay, null);
});

test("checkMany splits 2,500 URLs into batches of 1,000 and keeps their order", async () => {
  origin.robots("batch.test", "User-agent: *\nDisallow: /odd/\n");
  const urls = [];
  for (let i = 0; i < 2500; i++) urls.push(`http://batch.test/${i % 2 ? "odd" : "even"}/${i}`);
  const before = (await client.stats()).requests;
  const results = await client.checkMany(urls, AGENT);
  const requests = (await client.stats()).requests - before;
  assert.equal(BATCH_LIMIT, 1000);
  assert.equal(requests, 4, "3 batch requests and one stats request");
  assert.equal(results.length, 2500);
  results.forEach((r, i) => {
    assert.equal(r.url, urls[i]);
    assert.equal(r.allowed, i % 2 === 0, urls[i]);
    assert.equal(r.error, null);
  });
  assert.equal(origin.hitsOf("batch.test").length, 1);
});

test("checkMany also splits so that no line is over maxLine", async () => {
  const small = new Client({ socket: daemon.socket, maxLine: 4096 });
  const urls = [];
  for (let i = 0; i < 1000; i++) urls.push(`http://batch.test/${i % 2 ? "odd" : "even"}/${i}`);
  urls.push("http://batch.test/" + "c".repeat(5000));
  const before = (await client.stats()).requests;
  const results = await small.checkMany(urls, AGENT);
  const requests = (await client.stats()).requests - before - 1;
  const bytes = urls.reduce((n, u) => n + u.length + 3, 0);
  assert.ok(requests >= Math.ceil((bytes - 5003) / 4096), `${requests} requests`);
  assert.ok(requests <= Math.ceil((bytes - 5003) / 3900) + 1, `${requests} requests`);
  results.slice(0, 1000).forEach((r, i) => assert.equal(r.allowed, i % 2 === 0, urls[i]));
  assert.ok(results[1000].error instanceof LineTooLongError);
  assert.equal(results[1000].url, urls[1000]);
  await small.close();
});

// Every URL of an uncached origin waits on a fetch, and robotsd lets at
// most 1024 checks of a connection wait at once: 1,100 such URLs are all
// answered only if the second batch goes once the first is answered.
test("checkMany of 1,100 URLs of uncached origins: none overloaded", async () => {
  const hosts = [];
  const urls = [];
  for (let h = 0; h < 550; h++) {
    const host = `uncached${h}.test`;
    origin.robots(host, "User-agent: *\nDisallow: /odd/\n");
    hosts.push(host);
    urls.push(`http://${host}/even/1`, `http://${host}/odd/2`);
  }
  const results = await client.checkMany(urls, AGENT);
  const overloaded = results.filter((r) => r.error instanceof OverloadedError).length;
  assert.equal(overloaded, 0, `${overloaded} of ${urls.length} URLs overloaded`);
  results.forEach((r, i) => {
    assert.equal(r.error, null, urls[i]);
    assert.equal(r.url, urls[i]);
    assert.equal(r.allowed, i % 2 === 0, urls[i]);
    assert.equal(r.source, "fetched", urls[i]);
  });
  for (const host of hosts) assert.equal(origin.hitsOf(host).length, 1, host);
});

test("a batch carries a per-URL error beside the verdicts", async () => {
  const results = await client.checkMany(["http://site.test/a", "gopher://x/"], AGENT);
  assert.equal(results[0].allowed, true);
  assert.ok(results[1].error instanceof UnsupportedSchemeError);
  assert.equal(results[1].error.url, "gopher://x/");
  assert.equal(results[1].allowed, null);
});

test("wait:false answers pending at once, and the origin is fetched in the background", async () => {
  origin.robots("warm.test", "User-agent: *\nDisallow: /\n", { hold: true });
  const r = await client.check("http://warm.test/a", AGENT, { wait: false });
  assert.equal(r.pending, true);
  assert.equal(r.allowed, null);
  assert.equal(r.origin, "http://warm.test");
  const [w] = await client.warm("http://warm.test/b", AGENT);
  assert.equal(w.pending, true);
  assert.equal((await client.inspect("http://warm.test")).state, "pending");
  origin.release();
  const done = await client.check("http://warm.test/c", AGENT);
  assert.equal(done.allowed, false);
  assert.equal(origin.hitsOf("warm.test").length, 1);
});

test("inspect, purge, purgeAll, stats and ping", async () => {
  await client.check("http://site.test/", AGENT);
  const e = await client.inspect("http://site.test");
  assert.equal(e.origin, "http://site.test");
  assert.equal(e.state, "rules");
  assert.equal(e.httpStatus, 200);
  assert.equal(e.bodyBytes, ROBOTS.length);
  assert.equal(e.finalUrl, "http://site.test/robots.txt");
  assert.deepEqual(e.groups, [{ agents: ["nodebot"], rules: 2, crawlDelay: 2 }]);
  assert.equal(e.retry.failStreak, 0);
  assert.equal(await client.purge("http://site.test"), 1);
  assert.equal(await client.purge("http://site.test"), 0);
  await assert.rejects(client.inspect("http://site.test"), NotCachedError);
  await client.check("http://site.test/", AGENT);
  assert.ok((await client.purgeAll()) >= 1);
  const s = await client.stats();
  assert.equal(s.cache_entries, 0);
  assert.equal(typeof s.requests, "number");
  assert.match(await client.ping(), /^\d+\.\d+\.\d+/);
});

test("every error code robotsd answers is a typed error", async () => {
  const loose = new Client({ socket: daemon.socket, maxLine: 1 << 20 });
  const cases = [
    [client.request({ op: "check", url: "http://site.test/" }), BadRequestError, "bad_request"],
    [client.request({ op: "frobnicate" }), UnknownOpError, "unknown_op"],
    [client.check("http://", AGENT), BadUrlError, "bad_url"],
    [client.check("mailto:x@site.test", AGENT), UnsupportedSchemeError, "unsupported_scheme"],
    [client.inspect("http://nowhere.test"), NotCachedError, "not_cached"],
    [client.sendRaw("{not json"), BadJsonError, "bad_json"],
    // over robotsd's 64 KiB, with a client told robotsd takes more
    [loose.check("http://site.test/" + "a".repeat(70000), AGENT), LineTooLongError, "line_too_long"],
  ];
  for (const [p, cls, code] of cases) {
    await assert.rejects(p, (err) => {
      assert.ok(err instanceof cls, `${err}`);
      assert.ok(err instanceof RobotsdError);
      assert.equal(err.code, code);
      assert.ok(err.message.length > 0);
      return true;
    });
  }
  assert.equal((await client.check("http://site.test/private/x", AGENT)).allowed, false);
  assert.equal((await loose.check("http://site.test/private/x", AGENT)).allowed, false);
  await loose.close();
});

test("a line over the client's maxLine fails before it is sent", async () => {
  const small = new Client({ socket: daemon.socket, maxLine: 100 });
  const before = (await client.stats()).requests;
  await assert.rejects(small.check("http://site.test/" + "b".repeat(200), AGENT), LineTooLongError);
  assert.equal((await client.stats()).requests - before, 1, "only the stats request reached robotsd");
  await small.close();
});

test("too many connections: OverloadedError", async () => {
  const d = await new Daemon(origin, ["--max-connections", "1"]).start();
  const a = new Client({ socket: d.socket });
  const b = new Client({ socket: d.socket, connectTimeout: 200 });
  try {
    // the daemon may not have seen its start probe's connection close yet
    for (let i = 0; ; i++) {
      try {
        await a.ping();
        break;
      } catch (err) {
        if (!(err instanceof OverloadedError) || i >= 100) throw err;
        await sleep(20);
      }
    }
    // robotsd writes its one line and closes at once; a request that
    // crosses that close may meet EPIPE before the line is read, so try
    // until the line is seen, failing on anything but these two errors.
    let seen = null;
    for (let i = 0; i < 20 && !seen; i++) {
      await b.ping().then(
        () => assert.fail("a second connection was accepted"),
        (err) => {
          if (err instanceof OverloadedError) seen = err;
          else assert.ok(err instanceof ConnectionError, `${err}`);
        },
      );
    }
    assert.ok(seen, "no overloaded answer in 20 tries");
    assert.equal(seen.code, "overloaded");
    assert.equal(seen.message, "too many connections");
  } finally {
    await a.close();
    await b.close();
    assert.equal(await d.stop(), 0);
    d.cleanup();
  }
});

test("robotsd's own timeout (a check still queued when it stops) is a TimeoutError", async () => {
  // As the daemon's tests do: one fetch at a time, qa.test's is held until
  // its 2 s fetch timeout, qb.test's is queued behind it; on SIGTERM the
  // check of qb.test cannot end before the drain's deadline (--stop-timeout 3).
  origin.robots("qa.test", "User-agent: *\nDisallow: /\n", { hold: true });
  origin.robots("qb.test", "User-agent: *\nDisallow: /\n", { hold: true });
  const d = new Daemon(origin, ["--fetch-timeout", "2", "--max-fetches", "1", "--stop-timeout", "3"]);
  const c = new Client({ socket: d.socket, connectTimeout: 200 });
  try {
    await d.start();
    const a = c.check("http://qa.test/", AGENT).catch((err) => err);
    const b = c.check("http://qb.test/", AGENT).catch((err) => err);
    for (let i = 0; i < 500 && origin.hitsOf("qa.test").length === 0; i++) await sleep(10);
    assert.equal(origin.hitsOf("qa.test").length, 1);
    d.proc.kill("SIGTERM");
    const ra = await a;
    assert.ok(ra instanceof CheckResult, `${ra}`);
    assert.equal(ra.reason, "unreachable");
    const eb = await b;
    assert.ok(eb instanceof TimeoutError, `${eb}`);
    assert.ok(!(eb instanceof ClientTimeoutError));
    assert.equal(eb.code, "timeout");
    assert.equal(await d.exited, 0);
  } finally {
    await c.close();
    origin.release();
    d.cleanup();
  }
});

test("a call times out on its own timeout; the late answer is dropped", async () => {
  origin.robots("slow.test", "User-agent: *\nDisallow: /\n", { hold: true });
  const t0 = Date.now();
  await assert.rejects(client.check("http://slow.test/x", AGENT, { timeout: 300 }), (err) => {
    assert.ok(err instanceof ClientTimeoutError);
    assert.ok(err instanceof TimeoutError);
    assert.equal(err.code, "timeout");
    return true;
  });
  assert.ok(Date.now() - t0 >= 290);
  origin.release();
  const r = await client.check("http://slow.test/y", AGENT);
  assert.equal(r.allowed, false);
  assert.match(await client.ping(), /^\d/);
});

test("calls' timeouts share one timer: a short one behind a long one ends on time", async () => {
  origin.robots("slow2.test", "User-agent: *\nDisallow: /\n", { hold: true });
  const long = client.check("http://slow2.test/a", AGENT, { timeout: 60000 });
  const t0 = Date.now();
  await assert.rejects(client.check("http://slow2.test/b", AGENT, { timeout: 300 }), ClientTimeoutError);
  const waited = Date.now() - t0;
  assert.ok(waited >= 290 && waited < 5000, `timed out after ${waited} ms`);
  origin.release();
  assert.equal((await long).allowed, false, "the long call is still answered");
});

test("no robotsd at the socket: ConnectionError after connectTimeout", async () => {
  const c = new Client({ socket: daemon.dir + "/absent.sock", connectTimeout: 200 });
  await assert.rejects(c.ping(), ConnectionError);
  await c.close();
  await assert.rejects(c.ping(), ConnectionError, "a closed client refuses calls");
});

test("not running: NotRunningError naming the socket, no file or a dead socket file", async () => {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(tmpdir() + "/robotsd-node-");
  const dead = dir + "/dead.sock"; // a socket file nobody listens on
  const { execFileSync } = await import("node:child_process");
  execFileSync("python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", dead]);
  try {
    for (const path of [dir + "/absent.sock", dead]) {
      const c = new Client({ socket: path, timeout: 60000, connectTimeout: 600 });
      const t0 = Date.now();
      await assert.rejects(c.ping(), (e) => {
        assert.ok(e instanceof NotRunningError, e);
        assert.ok(e instanceof ConnectionError);
        assert.equal(e.code, "connection");
        assert.equal(e.socket, path);
        assert.ok(e.message.includes(path), e.message);
        return true;
      });
      const took = Date.now() - t0;
      assert.ok(took >= 300 && took < 5000, `gave up after ${took} ms`);
      await c.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(DEFAULT_CONNECT_TIMEOUT, 5000);
  assert.equal(new Client({ socket: "/nonexistent" }).connectTimeout, 5000);
});

test("an unreachable verdict carries its cause", async () => {
  origin.robots("down.test", "", { status: 503 });
  const r = await client.check("http://down.test/x", AGENT);
  assert.equal(r.reason, "unreachable");
  assert.deepEqual(r.cause, { code: "http_503", message: "HTTP status 503" });
  const [row] = await client.checkMany(["http://down.test/y"], AGENT);
  assert.deepEqual(row.cause, { code: "http_503", message: "HTTP status 503" });
  assert.equal((await client.check("http://site.test/x", AGENT)).cause, null);
});

test("the socket comes from the option, then ROBOTSD_SOCKET, then the default", () => {
  const saved = process.env.ROBOTSD_SOCKET;
  try {
    process.env.ROBOTSD_SOCKET = "/tmp/env.sock";
    assert.equal(new Client({ socket: "/tmp/opt.sock" }).socketPath, "/tmp/opt.sock");
    assert.equal(new Client().socketPath, "/tmp/env.sock");
    delete process.env.ROBOTSD_SOCKET;
    assert.equal(new Client().socketPath, "/run/robotsd/robotsd.sock");
  } finally {
    if (saved === undefined) delete process.env.ROBOTSD_SOCKET;
    else process.env.ROBOTSD_SOCKET = saved;
  }
});

test("1,000 checks in flight on one client are each answered to their caller", async () => {
  const hosts = 20;
  for (let h = 0; h < hosts; h++) {
    origin.robots(`c${h}.test`, `User-agent: *\nDisallow: /no-${h}/\n`);
  }
  const calls = [];
  for (let i = 0; i < 1000; i++) {
    const h = i % hosts;
    const blocked = i % 3 === 0;
    const url = `http://c${h}.test/${blocked ? "no" : "yes"}-${h}/${i}`;
    calls.push(client.check(url, AGENT).then((r) => ({ r, url, h, blocked })));
  }
  const done = await Promise.all(calls);
  assert.equal(done.length, 1000);
  for (const { r, url, h, blocked } of done) {
    assert.equal(r.url, url);
    assert.equal(r.origin, `http://c${h}.test`, url);
    assert.equal(r.allowed, !blocked, url);
    if (blocked) assert.equal(r.rule.pattern, `/no-${h}/`, url);
  }
  for (let h = 0; h < hosts; h++) assert.equal(origin.hitsOf(`c${h}.test`).length, 1);
});

test("a robotsd restart is survived by reconnecting", async () => {
  origin.robots("restart.test", "User-agent: *\nDisallow: /x\n");
  assert.equal((await client.check("http://restart.test/x", AGENT)).allowed, false);
  assert.equal(await daemon.stop(), 0);
  // asked while robotsd is down: answered once it is back
  const during = client.check("http://restart.test/y", AGENT);
  await sleep(200);
  await daemon.start();
  assert.equal((await during).allowed, true);
  const r = await client.check("http://restart.test/x", AGENT);
  assert.equal(r.allowed, false);
  assert.equal(r.source, "cache", "the new robotsd fetched it for the check made while it started");
});
