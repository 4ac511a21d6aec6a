// index.d.ts compiles under tsc --strict and describes the whole surface
// (test/types/use.ts). run-tests installs TypeScript from npm and sets $TSC;
// without it this test is skipped.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("the TypeScript declarations type-check a program using every call", (t) => {
  if (!process.env.TSC) {
    t.skip("TSC is not set");
    return;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "robotsd-types-"));
  try {
    const dest = path.join(tmp, "node_modules", "robotsd");
    fs.mkdirSync(dest, { recursive: true });
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    for (const f of [...pkg.files, "package.json"]) fs.copyFileSync(path.join(pkgDir, f), path.join(dest, f));
    fs.copyFileSync(path.join(pkgDir, "test", "types", "use.ts"), path.join(tmp, "use.ts"));
    fs.writeFileSync(path.join(tmp, "bad.ts"), 'import { CodedError } from "robotsd";\n');
    fs.writeFileSync(path.join(tmp, "badpref.ts"),
      'import type { Preference } from "robotsd";\nexport const p: Preference = "yes";\n');
    const tsc = (file) =>
      execFileSync(process.env.TSC, ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution",
        "nodenext", "--target", "es2022", file], { cwd: tmp, encoding: "utf8", stdio: "pipe" });
    try {
      tsc("use.ts");
    } catch (err) {
      assert.fail(`tsc use.ts:\n${err.stdout}${err.stderr}`);
    }
    assert.throws(() => tsc("bad.ts"), (err) => /'CodedError' locally, but it is not exported/.test(err.stdout));
    // the tri-state is a union, not any string
    assert.throws(() => tsc("badpref.ts"), (err) => /'"yes"' is not assignable to type 'Preference'/.test(err.stdout));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
