// use-node.mjs: what a crawler developer does with the npm tarball once it
// is installed: import "robotsd" (this file is copied beside the
// node_modules it was installed into, so it resolves from there and never
// from the checkout) and check URLs with the robotsd
// at $ROBOTSD_SOCKET (run by with-daemon.py). Prints one line per result;
// exits 1 on the first wrong one.
import { Client } from "robotsd";

const where = import.meta.resolve("robotsd");
console.log("robotsd from", where);
if (!where.includes("/node_modules/robotsd/")) process.exit(1);
const c = new Client();
let r = await c.check("http://a.test/private/x", "PkgBot/1.0");
console.log("private:", r.allowed, r.reason, r.crawlDelay);
if (r.allowed !== false || r.reason !== "rule" || r.crawlDelay !== 2) process.exit(1);
r = await c.check("http://a.test/public", "PkgBot/1.0");
console.log("public:", r.allowed, r.reason);
if (r.allowed !== true) process.exit(1);
await c.close();
