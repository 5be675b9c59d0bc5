import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
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
// In a tree of its own: npm test's build fingerprints the project's bench/ while this runs.
it("bench/results.json, which test and bench runs write, does not make the next start build again; a source does", () => {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-fingerprint-"));
  try {
    fs.mkdirSync(path.join(tree, "bench"));
    fs.writeFileSync(path.join(tree, "bench", "bench.ts"), "export {};\n");
    const at = sourceFingerprint(["bench"], tree);
    fs.writeFileSync(path.join(tree, "bench", "results.json"), JSON.stringify({ written_by: "build-inputs.test.ts", at: Date.now() }));
    expect(sourceFingerprint(["bench"], tree)).toBe(at);
    fs.writeFileSync(path.join(tree, "bench", "fingerprint-probe.txt"), "a source file the fingerprint must see\n");
    expect(sourceFingerprint(["bench"], tree)).not.toBe(at);
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
});
