import { execFileSync } from "node:child_process";
import { expect, it } from "vitest";
import { buildInputs, root } from "@/scripts/project.mjs";

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
