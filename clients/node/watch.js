// robotsd's change feed for Node.js: Client.watch() and watch().
//
// A watch takes a connection of its own (robotsd answers nothing else on a
// watching connection): it sends {"op":"watch",...}, checks the
// {"ok":true,"watching":N} answer, then yields every "changed" line as a
// ChangeEvent. When the connection breaks (robotsd restarted) or robotsd
// drops a watcher that read too slowly, it connects again with a growing
// pause and subscribes again; changes made meanwhile are not replayed.

import net from "node:net";
import { ConnectionError, errorFromAnswer } from "./errors.js";

const PAUSE = 50; // ms before connecting again, doubling ...
const PAUSE_MAX = 2000; // ... up to this
const MAX_LINE = 64 << 20; // an event line, at most (robotsd's --max-output)

/** What a change means for one agent. */
export class AgentChange {
  constructor(d) {
    this.newlyDisallowed = Array.isArray(d.newly_disallowed) ? d.newly_disallowed : [];
    this.newlyAllowed = Array.isArray(d.newly_allowed) ? d.newly_allowed : [];
    this.usageChanged = typeof d.usage_changed === "boolean" ? d.usage_changed : null;
  }
}

/** One version change of an origin's robots.txt. */
export class ChangeEvent {
  constructor(e) {
    this.origin = e.origin;
    this.old = e.old ?? null;
    this.new = e.new;
    this.at = e.at;
    this.state = e.state;
    this.agents = {};
    for (const [name, d] of Object.entries(e.agents ?? {})) {
      this.agents[name] = d && typeof d === "object" ? new AgentChange(d) : null;
    }
  }
}

function watchLine(origins, agents) {
  const req = { op: "watch", id: 1 };
  if (origins && origins.length > 0) req.origins = [...origins];
  else req.all = true;
  if (agents && agents.length > 0) req.agents = [...agents];
  return JSON.stringify(req) + "\n";
}

class Refused extends Error {
  constructor(err) {
    super(err.message);
    this.err = err;
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Lines of one subscription: connect, send, check the answer, then yield
 * events until the connection ends. Throws Refused for a refused request.
 */
async function* subscription(path, line, timeout, signal) {
  const sock = net.createConnection(path);
  const onAbort = () => sock.destroy();
  signal?.addEventListener("abort", onAbort, { once: true });
  const queue = [];
  let wake = null;
  let ended = false;
  let buf = "";
  const push = (v) => {
    queue.push(v);
    if (wake) wake();
  };
  sock.setEncoding("utf8");
  sock.on("connect", () => sock.write(line));
  sock.on("data", (chunk) => {
    buf += chunk;
    if (buf.length > MAX_LINE) return sock.destroy();
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  sock.on("error", () => {});
  sock.on("close", () => {
    ended = true;
    if (wake) wake();
  });
  const timer = setTimeout(() => sock.destroy(), timeout);
  let answered = false;
  try {
    for (;;) {
      while (queue.length === 0 && !ended) await new Promise((r) => (wake = r));
      wake = null;
      if (queue.length === 0) return;
      let v;
      try {
        v = JSON.parse(queue.shift());
      } catch {
        continue;
      }
      if (!answered) {
        clearTimeout(timer);
        if (v?.ok !== true) throw new Refused(errorFromAnswer(v?.error));
        answered = true;
        continue;
      }
      if (v?.event === "dropped") return;
      if (v?.event === "changed") yield new ChangeEvent(v);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    sock.destroy();
  }
}

/**
 * The change feed of robotsd at `path` for `origins` (none: all) and
 * `agents` (none: "*"), as an endless async iterator of ChangeEvent; it
 * ends when `signal` aborts (or the loop breaks). A request robotsd
 * refuses throws its error.
 */
export async function* watch(path, { origins, agents, signal, timeout = 70000 } = {}) {
  const line = watchLine(origins, agents);
  let pause = PAUSE;
  while (!signal?.aborted) {
    let got = false;
    try {
      for await (const ev of subscription(path, line, timeout, signal)) {
        got = true;
        pause = PAUSE;
        yield ev;
      }
    } catch (e) {
      if (e instanceof Refused) throw e.err;
      if (!(e instanceof ConnectionError)) throw e;
    }
    if (signal?.aborted) return;
    await sleep(got ? PAUSE : pause, signal);
    pause = Math.min(pause * 2, PAUSE_MAX);
  }
}
