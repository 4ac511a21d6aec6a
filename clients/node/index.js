// robotsd client for Node.js: one Unix socket connection, pipelined
// newline-delimited JSON requests matched to their answers by id.

import net from "node:net";
import {
  ClientTimeoutError,
  Codes,
  ConnectionError,
  LineTooLongError,
  NotRunningError,
  ProtocolError,
  errorFromAnswer,
} from "./errors.js";

import { watch } from "./watch.js";

export * from "./errors.js";
export { AgentChange, ChangeEvent, watch } from "./watch.js";

/** Where robotsd listens unless told otherwise. */
export const DEFAULT_SOCKET = "/run/robotsd/robotsd.sock";
/** Most URLs robotsd takes in one batch check; checkMany splits at it. */
export const BATCH_LIMIT = 1000;
/** Per-call timeout (ms): a check may wait up to 65 s on a fetch. */
export const DEFAULT_TIMEOUT = 70000;
/** robotsd's default longest request line (bytes, without the newline). */
export const DEFAULT_MAX_LINE = 65536;
/** The longest answer line read (characters); a longer one is a ProtocolError. */
export const MAX_ANSWER = 64 * 1024 * 1024;
/** How long (ms) to keep trying to (re)connect before calls fail. */
export const DEFAULT_CONNECT_TIMEOUT = 5000;
// A call whose connection broke is sent again on the next one, this often.
const MAX_SENDS = 3;

/** The socket path: the argument, else $ROBOTSD_SOCKET, else the default. */
export function resolveSocket(path) {
  return path || process.env.ROBOTSD_SOCKET || DEFAULT_SOCKET;
}

/** The purposes robotsd answers usage preferences for. */
export const PURPOSES = Object.freeze(["train-ai", "search", "ai-input", "ai-use"]);
const PREFERENCES = new Set(["allowed", "disallowed", "unknown"]);
const DIRECTIVES = new Set(["content-usage", "content-signal"]);
const SCOPES = new Set(["group", "file"]);

function bad(what, v) {
  return new ProtocolError(`malformed answer: ${what} is ${JSON.stringify(v)}`);
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function want(what, v, type) {
  const ok = type === "integer" ? Number.isInteger(v) : typeof v === type;
  if (!ok) throw bad(what, v);
  return v;
}

function oneOf(what, v, set) {
  if (!set.has(v)) throw bad(what, v);
  return v;
}

function parseRule(what, r) {
  if (r === null || r === undefined) return null;
  if (!isObject(r)) throw bad(what, r);
  return {
    directive: oneOf(`${what}.directive`, r.directive, new Set(["allow", "disallow"])),
    pattern: want(`${what}.pattern`, r.pattern, "string"),
    line: want(`${what}.line`, r.line, "integer"),
  };
}

/** An answer's `usage`: null (a disallowed URL) or purpose -> preference. */
function parseUsage(v) {
  if (v === null) return null;
  if (!isObject(v)) throw bad("usage", v);
  const out = {};
  for (const p of PURPOSES) if (!(p in v)) throw bad(`usage["${p}"]`, undefined);
  for (const [k, p] of Object.entries(v)) out[k] = oneOf(`usage["${k}"]`, p, PREFERENCES);
  return Object.freeze(out);
}

function parseUsageFrom(v) {
  if (!Array.isArray(v)) throw bad("usage_from", v);
  return v.map((st, i) => {
    const what = `usage_from[${i}]`;
    if (!isObject(st)) throw bad(what, st);
    const out = {
      directive: oneOf(`${what}.directive`, st.directive, DIRECTIVES),
      pattern: nullable(`${what}.pattern`, st.pattern, "string"),
      line: nullable(`${what}.line`, st.line, "integer"),
      value: want(`${what}.value`, st.value, "string"),
    };
    if (st.scope !== undefined) out.scope = oneOf(`${what}.scope`, st.scope, SCOPES);
    if (st.source !== undefined) out.source = want(`${what}.source`, st.source, "string");
    if (out.source !== "header" && (out.pattern === null || out.line === null)) throw bad(what, st);
    return out;
  });
}

function nullable(what, v, type) {
  return v === null ? null : want(what, v, type);
}

/** An answer's `robots_tag`: null (a disallowed URL) or {rules, values, from}. */
function parseRobotsTag(v) {
  if (v === null) return null;
  if (!isObject(v)) throw bad("robots_tag", v);
  if (!Array.isArray(v.rules)) throw bad("robots_tag.rules", v.rules);
  if (!isObject(v.values)) throw bad("robots_tag.values", v.values);
  if (!Array.isArray(v.from)) throw bad("robots_tag.from", v.from);
  const values = {};
  for (const [k, x] of Object.entries(v.values)) values[k] = want(`robots_tag.values["${k}"]`, x, "string");
  return {
    rules: v.rules.map((r, i) => want(`robots_tag.rules[${i}]`, r, "string")),
    values,
    from: v.from.map((f, i) => {
      const what = `robots_tag.from[${i}]`;
      if (!isObject(f)) throw bad(what, f);
      return {
        source: want(`${what}.source`, f.source, "string"),
        field: want(`${what}.field`, f.field, "string"),
        value: want(`${what}.value`, f.value, "string"),
      };
    }),
  };
}

function parseEvidence(v) {
  if (!isObject(v)) throw bad("evidence", v);
  return {
    robots: nullable("evidence.robots", v.robots, "string"),
    tdmrep: nullable("evidence.tdmrep", v.tdmrep, "string"),
    page: want("evidence.page", v.page, "string"),
  };
}

/** An answer's `tdm`: null (a disallowed URL, or not answered) or its fields. */
function parseTdm(v) {
  if (v === null || v === undefined) return null;
  if (!isObject(v)) throw bad("tdm", v);
  const out = {
    state: want("tdm.state", v.state, "string"),
    reservation: v.reservation == null ? null : oneOf("tdm.reservation", v.reservation, new Set([0, 1])),
    policy: v.policy == null ? null : want("tdm.policy", v.policy, "string"),
    location: v.location == null ? null : want("tdm.location", v.location, "string"),
    version: v.version == null ? null : want("tdm.version", v.version, "string"),
  };
  if (v.from !== undefined) out.from = want("tdm.from", v.from, "string");
  return out;
}

/** The robots_tag, evidence and tdm of answer onto result r, as asked. */
function signals(r, answer, asked) {
  if (asked.page) {
    if (!("robots_tag" in answer) || !("evidence" in answer)) {
      throw new ProtocolError("page sent and not answered (a robotsd without the page's signals?)");
    }
    r.robotsTag = parseRobotsTag(answer.robots_tag);
    r.evidence = parseEvidence(answer.evidence);
  }
  if (asked.tdm) r.tdm = parseTdm(answer.tdm);
}

function pairs(what, v) {
  if (v === undefined) return [];
  const ok = (p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === "string");
  if (!Array.isArray(v) || !v.every(ok)) {
    throw new TypeError(`page.${what} must be an array of [name, value] string pairs`);
  }
  return v.map((p) => [p[0], p[1]]);
}

/** The request's `page` from {headers, meta}; TypeError for another shape. */
function pageOf(page) {
  if (!isObject(page) || Object.keys(page).some((k) => k !== "headers" && k !== "meta")) {
    throw new TypeError("page must be {headers: [[name, value], ...], meta: [[name, content], ...]}");
  }
  return { headers: pairs("headers", page.headers), meta: pairs("meta", page.meta) };
}

function parseTokens(v) {
  if (!isObject(v)) throw bad("tokens", v);
  const out = {};
  for (const [k, t] of Object.entries(v)) {
    const what = `tokens["${k}"]`;
    if (!isObject(t)) throw bad(what, t);
    out[k] = { allowed: want(`${what}.allowed`, t.allowed, "boolean"), rule: parseRule(`${what}.rule`, t.rule) };
  }
  return out;
}

/** The usage and tokens fields of a request from check options. */
function extras(req, opts) {
  if (opts.wait === false) req.wait = false;
  if (opts.usage) req.usage = true;
  if (opts.tokens !== undefined) {
    if (!Array.isArray(opts.tokens) || !opts.tokens.every((t) => typeof t === "string")) {
      throw new TypeError("tokens must be an array of strings");
    }
    req.tokens = [...opts.tokens];
  }
  if (opts.tdm) req.tdm = true;
  if (opts.page !== undefined && opts.page !== null) req.page = pageOf(opts.page);
  return req;
}

/** One URL's verdict (or, in a batch, its error). */
export class CheckResult {
  /**
   * `asked`: whether the request asked for usage and tokens; an answer with
   * a verdict that lacks them or has them of the wrong type throws
   * ProtocolError.
   */
  constructor(answer, url, asked = {}) {
    this.url = typeof answer.url === "string" ? answer.url : url;
    this.pending = answer.pending === true;
    if (answer.ok === true && !this.pending && typeof answer.allowed !== "boolean") {
      throw new ProtocolError(`robotsd answered allowed=${JSON.stringify(answer.allowed)}, not a boolean`);
    }
    this.allowed = typeof answer.allowed === "boolean" ? answer.allowed : null;
    this.origin = answer.origin ?? null;
    this.source = answer.source ?? null;
    this.reason = answer.reason ?? null;
    this.rule = answer.rule
      ? { directive: answer.rule.directive, pattern: answer.rule.pattern, line: answer.rule.line }
      : null;
    this.crawlDelay = answer.crawl_delay ?? null;
    this.expiresIn = answer.expires_in ?? null;
    this.httpStatus = answer.http_status ?? null;
    // why an unreachable origin is: {code, message} (docs/protocol.md)
    this.cause =
      answer.cause && typeof answer.cause === "object"
        ? { code: String(answer.cause.code ?? "other"), message: String(answer.cause.message ?? "") }
        : null;
    // the robots.txt version the verdict came from (docs/protocol.md)
    this.version = answer.version == null ? null : want("version", answer.version, "string");
    this.error = answer.ok === false ? errorFromAnswer(answer.error, this.url) : null;
    if (answer.ok === true) {
      // required: missing is an error, never a default
      for (const f of this.pending ? ["origin"] : ["origin", "source", "reason"]) want(f, answer[f], "string");
    }
    this.usage = null;
    this.usageFrom = null;
    this.tokens = null;
    this.robotsTag = null;
    this.evidence = null;
    this.tdm = null;
    if (answer.ok === false || this.pending) return;
    if (asked.page || asked.tdm) signals(this, answer, asked);
    if (asked.usage) {
      if (!("usage" in answer) || !("usage_from" in answer)) {
        throw new ProtocolError("usage asked for and not answered (a robotsd without usage preferences?)");
      }
      this.usage = parseUsage(answer.usage);
      this.usageFrom = parseUsageFrom(answer.usage_from);
    }
    if (asked.tokens) {
      if (!("tokens" in answer)) {
        throw new ProtocolError("tokens asked for and not answered (a robotsd without control tokens?)");
      }
      this.tokens = parseTokens(answer.tokens);
    }
  }
}

/** The entries of a history answer, newest first. */
function parseHistory(v) {
  if (!Array.isArray(v)) throw bad("versions", v);
  return v.map((e, i) => {
    const what = `versions[${i}]`;
    if (!isObject(e)) throw bad(what, e);
    return {
      version: want(`${what}.version`, e.version, "string"),
      firstSeen: want(`${what}.first_seen`, e.first_seen, "integer"),
      lastSeen: want(`${what}.last_seen`, e.last_seen, "integer"),
      httpStatus: e.http_status === null ? null : want(`${what}.http_status`, e.http_status, "integer"),
      state: want(`${what}.state`, e.state, "string"),
    };
  });
}

function asked(opts) {
  return {
    usage: Boolean(opts.usage),
    tokens: opts.tokens !== undefined,
    page: opts.page !== undefined && opts.page !== null,
    tdm: Boolean(opts.tdm),
  };
}

function camel(key) {
  return key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function camelize(v) {
  if (Array.isArray(v)) return v.map(camelize);
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) out[camel(k)] = camelize(x);
  return out;
}

/**
 * A robotsd client. Calls may be made at once from anywhere: they share one
 * connection, opened on the first call and reopened when robotsd restarts.
 */
export class Client {
  constructor(options = {}) {
    this.socketPath = resolveSocket(options.socket);
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT;
    this.connectTimeout = options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT;
    this.maxLine = options.maxLine ?? DEFAULT_MAX_LINE;
    this._nextId = 1;
    this._pending = new Map(); // id -> call, in sending order
    this._raw = []; // calls sent by sendRaw, waiting for an id:null answer
    this._sock = null;
    this._gen = 0; // connection generation a call was last written on
    this._connecting = false;
    this._retryTimer = null;
    this._closed = false;
    this._buf = "";
    this._maxAccepted = 0;
    this._answered = false;
    this._timer = null; // one timer for every call's timeout, at the soonest
    this._timerAt = Infinity;
  }

  /**
   * May `agent` fetch `url`? `{wait: false}` answers pending at once;
   * `{usage: true}` adds the site's usage preferences (usage, usageFrom),
   * `{tokens: [...]}` the verdicts for those control tokens (tokens),
   * `{page: {headers, meta}}` what came with the fetched page (robotsTag,
   * evidence), `{tdm: true}` the TDMRep answer (tdm; null while robotsd
   * does not answer it).
   */
  async check(url, agent, opts = {}) {
    const req = extras({ op: "check", url, agent }, opts);
    return new CheckResult(await this.request(req, opts), url, asked(opts));
  }

  /**
   * Checks many URLs for one agent, in batches of at most BATCH_LIMIT URLs
   * and maxLine bytes; the results come in the order of `urls`. Each batch
   * is sent once the one before is answered: a batch of uncached origins
   * may hold up to 1000 of the 1024 checks robotsd lets a connection wait
   * on fetches, and once answered its origins are cached for the next. The
   * timeout is for the whole call.
   */
  async checkMany(urls, agent, opts = {}) {
    if (opts.page !== undefined && opts.page !== null) throw new TypeError("a page goes with a check of one URL, not checkMany");
    const out = new Array(urls.length);
    const deadline = Date.now() + (opts.timeout ?? this.timeout);
    for (const { start, list, error } of this._batches(urls, agent, opts)) {
      if (error) {
        out[start] = new CheckResult({ ok: false, error }, list[0]);
        continue;
      }
      const req = extras({ op: "check", urls: list, agent }, opts);
      const ans = await this.request(req, { timeout: Math.max(0, deadline - Date.now()) });
      ans.results.forEach((r, i) => (out[start + i] = new CheckResult(r, list[i], asked(opts))));
    }
    return out;
  }

  // Cuts urls into runs that fit one request line; a URL too long to send
  // even alone gets a line_too_long error of its own.
  *_batches(urls, agent, opts) {
    const probe = extras({ op: "check", urls: [], agent, id: Number.MAX_SAFE_INTEGER }, opts);
    const base = Buffer.byteLength(JSON.stringify(probe));
    let start = 0;
    let size = base;
    for (let i = 0; i < urls.length; i++) {
      const add = Buffer.byteLength(JSON.stringify(urls[i])) + 1; // and a comma
      if (base + add > this.maxLine) {
        if (i > start) yield { start, list: urls.slice(start, i) };
        const message = `a URL of ${add - 1} bytes does not fit in maxLine (${this.maxLine})`;
        yield { start: i, list: [urls[i]], error: { code: Codes.LINE_TOO_LONG, message } };
        start = i + 1;
        size = base;
        continue;
      }
      if (i - start >= BATCH_LIMIT || size + add > this.maxLine) {
        yield { start, list: urls.slice(start, i) };
        start = i;
        size = base;
      }
      size += add;
    }
    if (start < urls.length) yield { start, list: urls.slice(start) };
  }

  /** Starts fetches of the origins of `urls` without waiting for them. */
  warm(urls, agent, opts = {}) {
    return this.checkMany(typeof urls === "string" ? [urls] : urls, agent, {
      ...opts,
      wait: false,
    });
  }

  /** What the cache holds for an origin (camelCase fields). */
  async inspect(origin, opts = {}) {
    const ans = await this.request({ op: "inspect", origin }, opts);
    delete ans.id;
    delete ans.ok;
    return camelize(ans);
  }

  /**
   * The last distinct robots.txt versions of a cached origin, newest (the
   * current one) first; rejects with NotCachedError for one not cached.
   */
  async history(origin, opts = {}) {
    if (typeof origin !== "string") throw new TypeError("history needs an origin string");
    return parseHistory((await this.request({ op: "history", origin }, opts)).versions);
  }

  /** Drops one origin from the cache; resolves to the entries dropped. */
  async purge(origin, opts = {}) {
    return (await this.request({ op: "purge", origin }, opts)).purged;
  }

  /** Drops every origin from the cache; resolves to the entries dropped. */
  async purgeAll(opts = {}) {
    return (await this.request({ op: "purge", all: true }, opts)).purged;
  }

  /** robotsd's counters, under the protocol's names (cache_entries, ...). */
  async stats(opts = {}) {
    return (await this.request({ op: "stats" }, opts)).stats;
  }

  /** robotsd's version. */
  async ping(opts = {}) {
    return (await this.request({ op: "ping" }, opts)).version;
  }

  /**
   * Sends any request object (its id is set here) and resolves to the whole
   * answer; an ok:false answer rejects with its typed error.
   */
  request(req, opts = {}) {
    const timeout = opts.timeout ?? this.timeout;
    if (this._closed) return Promise.reject(new ConnectionError("the client is closed"));
    const id = this._nextId++;
    const line = JSON.stringify({ ...req, id }) + "\n";
    const bytes = Buffer.byteLength(line) - 1;
    if (bytes > this.maxLine) {
      return Promise.reject(
        new LineTooLongError(`request of ${bytes} bytes is over maxLine (${this.maxLine})`),
      );
    }
    return this._enqueue({ id, line, bytes, timeout });
  }

  /**
   * Sends one raw line (no id is added): for lines robotsd answers with
   * "id":null, such as bad_json. Resolves or rejects with that answer.
   */
  sendRaw(line, opts = {}) {
    if (this._closed) return Promise.reject(new ConnectionError("the client is closed"));
    const text = line.endsWith("\n") ? line : line + "\n";
    return this._enqueue({ id: null, line: text, bytes: 0, timeout: opts.timeout ?? this.timeout });
  }

  /**
   * The change feed: an async iterator of ChangeEvent for `origins` (none:
   * all) and `agents` (none: "*") on a connection of its own, which
   * connects and subscribes again after robotsd restarts; `signal` ends it.
   */
  watch(opts = {}) {
    return watch(this.socketPath, { timeout: this.timeout, ...opts });
  }

  /** Fails the calls in flight and closes the connection. */
  close() {
    this._closed = true;
    clearTimeout(this._retryTimer);
    clearTimeout(this._timer);
    this._timer = null;
    this._failAll(new ConnectionError("the client is closed"));
    const sock = this._sock;
    this._sock = null;
    if (!sock || sock.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      sock.once("close", () => resolve());
      sock.destroy();
    });
  }

  _enqueue(call) {
    return new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
      call.sends = 0;
      call.gen = -1;
      call.deadline = performance.now() + call.timeout;
      this._arm(call.deadline);
      if (call.id === null) this._raw.push(call);
      else this._pending.set(call.id, call);
      if (this._sock) this._write(call);
      else this._connect();
    });
  }

  _write(call) {
    call.gen = this._gen;
    call.sends++;
    this._sock.ref();
    this._sock.write(call.line);
  }

  // Arms the timeout timer for `deadline` unless it fires sooner already.
  // One timer serves every call: a call answered leaves it be (setting and
  // clearing a timer per call was a large part of a check's own time).
  // Unref'd: what keeps the process alive while calls wait is the socket
  // (ref'd while it has calls) or the pause before connecting again.
  _arm(deadline) {
    if (this._timer && this._timerAt <= deadline) return;
    clearTimeout(this._timer);
    this._timerAt = deadline;
    this._timer = setTimeout(() => this._sweep(), Math.max(1, Math.ceil(deadline - performance.now())));
    this._timer.unref();
  }

  // The timer fired: expire every call past its deadline, arm for the next.
  _sweep() {
    this._timer = null;
    this._timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const call of [...this._pending.values(), ...this._raw]) {
      if (call.deadline <= now) this._expire(call);
      else next = Math.min(next, call.deadline);
    }
    if (next < Infinity) this._arm(next);
  }

  _settle(call, err, value) {
    if (call.id === null) {
      const i = this._raw.indexOf(call);
      if (i >= 0) this._raw.splice(i, 1);
    } else {
      this._pending.delete(call.id);
    }
    if (this._sock && this._pending.size === 0 && this._raw.length === 0) this._sock.unref();
    if (err) call.reject(err);
    else call.resolve(value);
  }

  _expire(call) {
    this._settle(call, new ClientTimeoutError(`no answer from robotsd within ${call.timeout} ms`));
    // An answer still arriving when a call gave up is not read on: the
    // connection closes (the other calls on it are sent again).
    if (this._buf.length > 0 && this._sock) this._sock.destroy();
  }

  _failAll(err) {
    for (const call of [...this._pending.values(), ...this._raw]) this._settle(call, err);
  }

  // Opens the connection, retrying (ENOENT, ECONNREFUSED while robotsd
  // restarts) with a growing pause for up to connectTimeout.
  _connect() {
    if (this._sock || this._connecting || this._closed) return;
    this._connecting = true;
    const started = Date.now();
    let pause = 20;
    const attempt = () => {
      const sock = net.createConnection(this.socketPath);
      const onError = (err) => {
        sock.destroy();
        const busy = this._pending.size > 0 || this._raw.length > 0;
        if (this._closed || !busy || Date.now() - started + pause > this.connectTimeout) {
          this._connecting = false;
          const down = err.code === "ENOENT" || err.code === "ECONNREFUSED";
          const msg = `cannot connect to robotsd at ${this.socketPath}: ${err.message}`;
          this._failAll(
            down
              ? new NotRunningError(this.socketPath, err.message, { cause: err })
              : new ConnectionError(msg, { cause: err }),
          );
          return;
        }
        this._retryTimer = setTimeout(attempt, pause);
        pause = Math.min(pause * 2, 500);
      };
      sock.once("error", onError);
      sock.once("connect", () => {
        sock.removeListener("error", onError);
        this._connecting = false;
        if (this._closed) sock.destroy();
        else this._attach(sock);
      });
    };
    attempt();
  }

  _attach(sock) {
    this._sock = sock;
    this._gen++;
    this._buf = "";
    this._maxAccepted = 0;
    this._answered = false;
    sock.setEncoding("utf8");
    sock.on("data", (chunk) => this._onData(chunk));
    sock.on("error", () => {}); // "close" follows
    sock.on("close", () => this._onClose(sock));
    for (const call of [...this._pending.values(), ...this._raw]) {
      if (call.gen !== this._gen) this._write(call);
    }
    if (this._pending.size === 0 && this._raw.length === 0) sock.unref();
  }

  // The connection broke (robotsd stopped or restarts): calls in flight
  // are sent again on a new connection (every op is idempotent), raw lines
  // and calls already sent MAX_SENDS times fail.
  _onClose(sock) {
    if (this._sock !== sock) return;
    this._sock = null;
    if (this._closed) return;
    const lost = new ConnectionError("robotsd closed the connection");
    for (const call of [...this._pending.values(), ...this._raw]) {
      if (call.id === null || call.sends >= MAX_SENDS) this._settle(call, lost);
    }
    if (this._pending.size === 0) return;
    // closed before answering anything (refused as one connection too
    // many, or robotsd stopping): pause before trying again
    if (this._answered) this._connect();
    else this._retryTimer = setTimeout(() => this._connect(), 100);
  }

  _onData(chunk) {
    // Only the new chunk is searched for a line's end: a long line costs
    // time in proportion to its length, not to its square.
    let nl = chunk.indexOf("\n");
    if (nl >= 0) nl += this._buf.length;
    this._buf += chunk;
    let start = 0;
    for (; nl >= 0; nl = this._buf.indexOf("\n", start)) {
      const line = this._buf.slice(start, nl);
      start = nl + 1;
      let ans;
      try {
        ans = JSON.parse(line);
      } catch {
        continue; // not an answer robotsd would send: nothing to match
      }
      if (ans !== null && typeof ans === "object" && !Array.isArray(ans)) this._onAnswer(ans, line);
      if (!this._sock) break; // refused: read no further
    }
    this._buf = this._buf.slice(start);
    if (this._buf.length > MAX_ANSWER && this._sock) {
      // Never read on: fail what waits on this connection, and close it.
      this._failAll(new ProtocolError(`robotsd sent an answer line longer than ${MAX_ANSWER} bytes`));
      this._buf = "";
      this._sock.destroy();
    }
  }

  _onAnswer(ans, line) {
    this._answered = true;
    const why = unasked(ans, line, this._nextId, this._raw.length > 0);
    if (why) {
      // Not robotsd speaking: fail what waits on this connection, close it.
      this._failAll(new ProtocolError(why));
      this._sock.destroy();
      this._sock = null;
      return;
    }
    if (ans.id === null) {
      this._onAnonymous(ans);
      return;
    }
    const call = this._pending.get(ans.id);
    if (!call) return; // its caller timed out: dropped
    this._maxAccepted = Math.max(this._maxAccepted, call.bytes);
    if (ans.ok === true) this._settle(call, null, ans);
    else this._settle(call, errorFromAnswer(ans.error));
  }

  // An answer with "id":null: to a raw line, a line over robotsd's limit,
  // or a connection refused as one too many.
  _onAnonymous(ans) {
    const err = ans.ok === false ? errorFromAnswer(ans.error) : null;
    if (this._raw.length > 0) {
      this._settle(this._raw[0], err, ans);
      return;
    }
    if (!err) return;
    if (err.code === Codes.OVERLOADED) {
      this._failAll(err);
      return;
    }
    if (err.code === Codes.LINE_TOO_LONG) {
      const call = this._tooLong();
      if (call) this._settle(call, err);
    }
  }

  // The call a line_too_long answer is about: robotsd reads lines in order,
  // so the first one sent on this connection that is longer than every line
  // it has answered by id (else the longest in flight).
  _tooLong() {
    let longest = null;
    for (const call of this._pending.values()) {
      if (call.gen !== this._gen) continue;
      if (call.bytes > this._maxAccepted) return call;
      if (!longest || call.bytes > longest.bytes) longest = call;
    }
    return longest;
  }
}

/**
 * Why answer `ans` (parsed from `line`) is for no request this client
 * sent, or null: it must have exactly one "id", written as an id sent
 * (an integer below `nextId`, in its digits: 5.0, "5" or true is not 5),
 * or null for an error answer or the answer to a raw line (`raw`).
 */
function unasked(ans, line, nextId, raw) {
  const ids = leadingId(line) ?? topLevel(line, "id");
  if (ids.length !== 1) return `robotsd sent an answer with ${ids.length} ids`;
  if (ids[0] === "null") {
    return raw || ans.ok === false ? null : "robotsd sent an ok answer of id null, and no request went without an id";
  }
  const id = ans.id;
  if (Number.isSafeInteger(id) && id >= 1 && id < nextId && ids[0] === String(id)) return null;
  return `robotsd answered id ${ids[0]}, which was not sent`;
}

const STRING = /"(?:[^"\\]|\\.)*"/y;

/**
 * The id of `line` as robotsd writes it, first: `{"id":DIGITS,` and no
 * other `"id"` nor `\u` escape anywhere after it, so that no other member
 * can be an id (one in a string is written `\"id\"`); null for any other
 * line, which
 * topLevel reads. Reads the line once, natively, instead of walking it.
 */
function leadingId(line) {
  if (!line.startsWith('{"id":')) return null;
  const comma = line.indexOf(",", 6);
  // an escape could spell a second "id" key (\u0069d)
  if (comma < 7 || comma > 26 || line.includes('"id"', comma) || line.includes("\\u", comma)) return null;
  const digits = line.slice(6, comma);
  return /^[1-9][0-9]*$/.test(digits) ? [digits] : null;
}

/** The raw text of every value of `key` in the JSON object `line`. */
function topLevel(line, key) {
  const out = [];
  let i = line.indexOf("{") + 1;
  let depth = 0;
  let name = null; // the member's key, once read
  let start = -1;
  for (; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      STRING.lastIndex = i;
      const m = STRING.exec(line);
      if (depth === 0 && name === null) name = JSON.parse(m[0]);
      i += m[0].length - 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === ":" && depth === 0) start = i + 1;
    if (depth < 0 || (depth === 0 && c === ",")) {
      if (name === key) out.push(line.slice(start, i).trim());
      name = null;
      if (depth < 0) break;
    }
  }
  return out;
}

/** A new Client (see Client's options). */
export function connect(options) {
  return new Client(options);
}
