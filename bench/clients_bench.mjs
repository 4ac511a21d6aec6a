// clients_bench.mjs: the Node client against a bare socket loop, one
// figure per run (bench/clients-bench.sh, make bench).
//
// usage: node clients_bench.mjs MODE SOCKET URLS SECONDS
//
// MODE bare: write the very line Client.check writes, await its answer
// line; client: await Client.check, one call at a time. Both check the
// URLs of URLS in turn as Googlebot for SECONDS (after 0.3 s of warm-up)
// and print "rate=CHECKS_PER_SECOND"; pair runs both in turns of 64
// checks and prints "bare=CHECKS_PER_SECOND client=CHECKS_PER_SECOND
// bare_cpu_us=US client_cpu_us=US", the CPU time spent per check in each
// (on a loaded machine a steadier figure than the rates).
// Profile with node --cpu-prof.
import { readFileSync } from "node:fs";
import net from "node:net";
import { Client } from "../clients/node/index.js";

const AGENT = "Googlebot";
const WARMUP = 300;

async function timed(step, urls, secs) {
  let i = 0;
  const warm = Date.now() + WARMUP;
  while (Date.now() < warm) await step(urls[i++ % urls.length]);
  const t0 = performance.now();
  const end = t0 + secs * 1000;
  let n = 0;
  for (;;) {
    for (let k = 0; k < 64; k++) await step(urls[i++ % urls.length]);
    n += 64;
    const t = performance.now();
    if (t >= end) return (n * 1000) / (t - t0);
  }
}

// The bare loop and the client in turns of 64 checks, in one process, so
// that both see the same load: their checks/s.
async function pair(path, urls, secs) {
  const steps = [await bareStep(path), clientStep(path)];
  const spent = [0, 0];
  const used = [0, 0]; // CPU microseconds
  let i = 0;
  let n = 0;
  const warm = Date.now() + WARMUP;
  while (Date.now() < warm) for (const step of steps) for (let k = 0; k < 8; k++) await step(urls[i++ % urls.length]);
  for (const end = Date.now() + secs * 1000; Date.now() < end; n += 64) {
    for (let s = 0; s < 2; s++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      for (let k = 0; k < 64; k++) await steps[s](urls[i++ % urls.length]);
      const c = process.cpuUsage(c0);
      spent[s] += performance.now() - t0;
      used[s] += c.user + c.system;
    }
  }
  steps[0].sock.destroy();
  await steps[1].client.close();
  const rate = (k) => ((n * 1000) / spent[k]).toFixed(0);
  const cpu = (k) => (used[k] / n).toFixed(1);
  return `bare=${rate(0)} client=${rate(1)} bare_cpu_us=${cpu(0)} client_cpu_us=${cpu(1)}`;
}

async function bareStep(path) {
  const sock = net.createConnection(path);
  await new Promise((resolve, reject) => {
    sock.once("connect", resolve);
    sock.once("error", reject);
  });
  sock.setEncoding("utf8");
  let buf = "";
  let waiting = null;
  sock.on("data", (chunk) => {
    buf += chunk;
    const nl = buf.indexOf("\n");
    if (nl >= 0 && waiting) {
      buf = buf.slice(nl + 1);
      const w = waiting;
      waiting = null;
      w();
    }
  });
  let id = 0;
  const step = (url) =>
    new Promise((resolve) => {
      waiting = resolve;
      sock.write(JSON.stringify({ op: "check", url, agent: AGENT, id: ++id }) + "\n");
    });
  step.sock = sock;
  return step;
}

function clientStep(path) {
  const c = new Client({ socket: path });
  const step = async (url) => {
    if ((await c.check(url, AGENT)).allowed === null) throw new Error(`no verdict for ${url}`);
  };
  step.client = c;
  return step;
}

async function bare(path, urls, secs) {
  const step = await bareStep(path);
  const rate = await timed(step, urls, secs);
  step.sock.destroy();
  return `rate=${rate.toFixed(0)}`;
}

async function client(path, urls, secs) {
  const step = clientStep(path);
  const rate = await timed(step, urls, secs);
  await step.client.close();
  return `rate=${rate.toFixed(0)}`;
}

const [mode, path, urlFile, secs] = process.argv.slice(2);
const modes = { bare, client, pair };
if (!modes[mode] || !secs) {
  console.error("usage: node clients_bench.mjs bare|client|pair SOCKET URLS SECONDS");
  process.exit(2);
}
const urls = readFileSync(urlFile, "utf8").split("\n").filter((u) => u !== "");
console.log(await modes[mode](path, urls, Number(secs)));
