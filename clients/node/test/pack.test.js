// npm pack gives a clean tarball (only the package's files, robotsd's
// licence among them) that installs and imports by its name.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("npm pack holds only the package files and the licence, and the tarball imports as robotsd", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "robotsd-pack-"));
  try {
    const env = { ...process.env, npm_config_cache: path.join(tmp, "npm-cache"), npm_config_update_notifier: "false" };
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: pkgDir, env, encoding: "utf8" });
    const [info] = JSON.parse(out);
    assert.equal(info.name, "robotsd");
    const files = info.files.map((f) => f.path).sort();
    assert.deepEqual(files, ["LICENSE", "README.md", "errors.js", "index.d.ts", "index.js", "package.json",
      "watch.js"]);
    const listed = execFileSync("tar", ["tzf", path.join(tmp, info.filename)], { encoding: "utf8" });
    assert.deepEqual(listed.trim().split("\n").sort(), files.map((f) => "package/" + f));
    const dest = path.join(tmp, "app", "node_modules", "robotsd");
    fs.mkdirSync(dest, { recursive: true });
    execFileSync("tar", ["xzf", path.join(tmp, info.filename), "-C", dest, "--strip-components=1"]);
    // BSD-2-Clause, the text of the repository's LICENSE (README.md, "Licence").
    assert.equal(JSON.parse(fs.readFileSync(path.join(dest, "package.json"), "utf8")).license, "BSD-2-Clause");
    assert.equal(fs.readFileSync(path.join(dest, "LICENSE"), "utf8"),
      fs.readFileSync(path.join(pkgDir, "..", "..", "LICENSE"), "utf8"));
    const script = 'import { Client, RobotsdError, BATCH_LIMIT } from "robotsd";' +
      'console.log(typeof Client, typeof RobotsdError, BATCH_LIMIT)';
    const got = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: path.join(tmp, "app"), encoding: "utf8" });
    assert.equal(got.trim(), "function function 1000");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
