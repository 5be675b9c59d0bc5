import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { buildInputs, root, sourceFingerprint } from "@/scripts/project.mjs";

// `next build` is npm test's type check, and it is skipped when none of its inputs changed: so every file
// the type check reads (tsconfig.json: every .ts/.tsx/.mts file) must be one of them, or a change to it
// alone would go unchecked.
it("every TypeScript file of the repository is an input of the build, so changing it builds and type-checks again", () => {
  const files = execFileSync("git", ["ls-files", "*.ts", "*.tsx", "*.mts"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
  expect(files.length).toBeGreaterThan(100);
  const covered = (file: string) => buildInputs.some((input) => file === input || file.startsWith(`${input}/`));
  expect(files.filter((f) => !covered(f))).toEqual([]);
});

// Nor may an input be a file the build writes itself (git-ignored, like next-env.d.ts): a fresh clone
// has none, the build makes one, and the stamp it wrote would no longer match — every later step that
// ensures a build would build again (two at once fail: "Another next build process is already running").
it("no input of the build is a git-ignored file the build writes itself", () => {
  const ignored = buildInputs.filter((input) => {
    try {
      execFileSync("git", ["check-ignore", "-q", "--no-index", input], { cwd: root });
      return true;
    } catch {
      return false;
    }
  });
  expect(ignored).toEqual([]);
});

// Nor may what a run writes under an input count as a change: the browser tests' grid figures and
// `npm run bench` write bench/results.json, and the next `npm start` or `npm test` built again after every test run.
it("bench/results.json, which test and bench runs write, does not make the next start build again; a source does", () => {
  const file = path.join(root, "bench", "results.json");
  const probe = path.join(root, "bench", "fingerprint-probe.txt");
  const before = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
  try {
    const at = sourceFingerprint();
    fs.writeFileSync(file, JSON.stringify({ written_by: "build-inputs.test.ts", at: Date.now() }));
    expect(sourceFingerprint()).toBe(at);
    fs.writeFileSync(probe, "a source file the fingerprint must see\n");
    expect(sourceFingerprint()).not.toBe(at);
  } finally {
    if (before) fs.writeFileSync(file, before);
    else fs.rmSync(file, { force: true });
    fs.rmSync(probe, { force: true });
  }
});
