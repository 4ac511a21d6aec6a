// Compiled by types.test.js with tsc --strict against index.d.ts: the
// declarations cover the whole surface and keep codes typed.
import {
  CheckResult,
  Client,
  ClientTimeoutError,
  Codes,
  HistoryEntry,
  NotCachedError,
  Evidence,
  Page,
  Preference,
  ProtocolError,
  PURPOSES,
  Purpose,
  RobotsTag,
  RobotsdError,
  Tdm,
  TokenVerdict,
  UsageFrom,
  resolveSocket,
} from "robotsd";

const c = new Client({ socket: resolveSocket(), timeout: 1000, maxLine: 65536 });

async function main(): Promise<void> {
  const r: CheckResult = await c.check("http://a.test/", "A", { wait: false, timeout: 10 });
  const allowed: boolean | null = r.allowed;
  const delay: number | null = r.crawlDelay;
  const many: CheckResult[] = await c.checkMany(["http://a.test/"], "A", { usage: true, tokens: ["Google-Extended"] });
  const u = await c.check("http://a.test/", "A", { usage: true, tokens: ["Google-Extended"] });
  if (u.usage !== null) {
    const train: Preference = u.usage["train-ai"];
    const byPurpose: Preference[] = PURPOSES.map((p: Purpose) => u.usage![p]);
    if (train === "disallowed") console.log(byPurpose);
  }
  const from: UsageFrom[] = u.usageFrom ?? [];
  const scope: "group" | "file" | undefined = from[0]?.scope;
  const verdict: TokenVerdict | undefined = u.tokens?.["google-extended"];
  console.log(from.map((s) => `${s.directive} ${s.pattern} ${s.line} ${s.value}`), scope, verdict?.allowed, verdict?.rule?.line);
  const page: Page = { headers: [["X-Robots-Tag", "noai"]], meta: [["robots", "noindex"]] };
  const p = await c.check("http://a.test/", "A", { page, tdm: true });
  const tag: RobotsTag | null = p.robotsTag;
  const evid: Evidence | null = p.evidence;
  const tdm: Tdm | null = p.tdm;
  const res: 0 | 1 | null | undefined = tdm?.reservation;
  const src: string | undefined = p.usageFrom?.[0]?.source;
  console.log(tag?.rules, tag?.from[0]?.field, evid?.page, res, src);
  const warm: CheckResult[] = await c.warm("http://a.test/", "A");
  const e = await c.inspect("a.test");
  const n: number = e.bodyBytes + (await c.purge("a.test")) + (await c.purgeAll());
  const hits: number = (await c.stats()).hits;
  const rv: string | null = (await c.check("http://a.test/", "A")).version;
  const hist: HistoryEntry[] = await c.history("a.test");
  const first: string = hist[0].version;
  const seen: number = hist[0].firstSeen + hist[0].lastSeen + (hist[0].httpStatus ?? 0);
  const ev: string | null = e.version;
  console.log(rv, first, seen, ev, hist[0].state === "rules");
  const version: string = await c.ping();
  const answer: Record<string, unknown> = await c.request({ op: "ping" });
  try {
    await c.sendRaw("{");
  } catch (err) {
    if (err instanceof NotCachedError) {
      const code: "not_cached" = err.code;
      console.log(code);
    }
    if (err instanceof ProtocolError) {
      const code: "protocol" = err.code;
      console.log(code);
    }
    if (err instanceof ClientTimeoutError) {
      const code: "timeout" = err.code;
      console.log(code);
    }
    if (err instanceof RobotsdError && err.code === Codes.BAD_URL) console.log(err.url);
  }
  console.log(allowed, delay, many.length, warm.length, n, hits, version, answer, e.retry.failStreak);
  await c.close();
}

void main();
