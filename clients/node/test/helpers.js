// Real parts for the tests: a local HTTP origin server and the real
// robotsd ($ROBOTSD) on a private socket, every origin sent to the server
// with --connect-to.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

import { Client } from "../index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const top = process.env.top_srcdir || path.resolve(here, "..", "..", "..");
export const ROBOTSD = process.env.ROBOTSD || path.join(top, "_build", "werror", "robotsd");

/** An HTTP origin: per-host robots.txt scenarios, and a log of hits. */
export class Origin {
  constructor() {
    this.scenarios = new Map(); // host -> {status, body, hold}
    this.hits = []; // "host path"
    this.held = [];
    this.server = http.createServer((req, res) => this._serve(req, res));
  }

  listen() {
    return new Promise((resolve) => {
      this.server.listen(0, "127.0.0.1", () => {
        this.port = this.server.address().port;
        resolve(this);
      });
    });
  }

  /** host's /robots.txt answers status with body (hold: not until release). */
  robots(host, body, { status = 200, hold = false } = {}) {
    this.scenarios.set(host, { status, body, hold });
  }

  hitsOf(host) {
    return this.hits.filter((h) => h.startsWith(host + " "));
  }

  release() {
    for (const fn of this.held.splice(0)) fn();
  }

  close() {
    this.release();
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  _serve(req, res) {
    const host = (req.headers.host || "").replace(/:\d+$/, "");
    this.hits.push(`${host} ${req.url}`);
    const sc = req.url === "/robots.txt" ? this.scenarios.get(host) : undefined;
    const answer = () => {
      const status = sc ? sc.status : 404;
      const body = sc ? sc.body : "not found\n";
      res.writeHead(status, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) });
      res.end(body);
    };
    if (sc && sc.hold) this.held.push(answer);
    else answer();
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function canConnect(sockPath) {
  return new Promise((resolve) => {
    const s = net.createConnection(sockPath);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** The real robotsd on its own socket in a fresh temporary directory. */
export class Daemon {
  constructor(origin, extra = []) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "robotsd-node-"));
    this.socket = path.join(this.dir, "robotsd.sock");
    const conf = path.join(this.dir, "empty.conf");
    fs.writeFileSync(conf, "");
    this.args = ["-f", "-c", conf, "-s", this.socket, "--log-level", "debug",
      "--connect-to", `::127.0.0.1:${origin.port}`, ...extra];
    this.log = path.join(this.dir, "stderr.log");
  }

  /** Starts robotsd and waits (bounded) until its socket accepts. */
  async start() {
    const out = fs.openSync(this.log, "a");
    this.proc = spawn(ROBOTSD, this.args, { stdio: ["ignore", out, out] });
    fs.closeSync(out);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, sig) => resolve(sig || code)));
    const end = Date.now() + 20000;
    while (Date.now() < end) {
      if (this.proc.exitCode !== null) break;
      if (await canConnect(this.socket)) return this;
      await sleep(20);
    }
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
    const how = this.proc.exitCode !== null ? `exited with status ${this.proc.exitCode}` : "did not start";
    throw new Error(`robotsd (${ROBOTSD}) ${how} on ${this.socket}:\n${this.logText()}`);
  }

  /** SIGTERM; resolves to the exit status (0 expected). */
  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return this.proc?.exitCode;
    this.proc.kill("SIGTERM");
    return this.exited;
  }

  logText() {
    try {
      return fs.readFileSync(this.log, "utf8").split("\n").slice(-40).join("\n");
    } catch {
      return "(no log)";
    }
  }

  cleanup() {
    if (this.proc && this.proc.exitCode === null) this.proc.kill("SIGKILL");
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Registers node:test before/after hooks that start an Origin serving
 * `robots` (host -> body), a Daemon with `extra` arguments and a Client on
 * its socket, and stop them (the daemon must exit with status 0). The
 * returned fixture holds `origin`, `daemon` and `client` once started.
 */
export function withDaemon(robots, extra = []) {
  const fx = {};
  before(async () => {
    fx.origin = await new Origin().listen();
    for (const [host, body] of Object.entries(robots)) fx.origin.robots(host, body);
    fx.daemon = new Daemon(fx.origin, extra);
    await fx.daemon.start();
    fx.client = new Client({ socket: fx.daemon.socket });
  });
  after(async () => {
    await fx.client?.close();
    const status = await fx.daemon?.stop();
    const log = fx.daemon?.logText();
    fx.daemon?.cleanup();
    await fx.origin?.close();
    if (fx.daemon) assert.equal(status, 0, `robotsd exit status:\n${log}`);
  });
  return fx;
}

export { sleep };
