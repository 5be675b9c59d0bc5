import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatElapsed, phaseOf } from "@/scripts/progress.mjs";
import { root } from "@/scripts/project.mjs";

// The first `npm start` builds for minutes; Turbopack's compile printed nothing for about seven of them on
// a loaded machine (issue 51). scripts/progress.mjs runs each long step: its output passes through, and a
// silence gets a line saying what is being done and for how long.
const progress = path.join(root, "scripts", "progress.mjs");

function runStep(script: string, every = 150) {
  return spawnSync(process.execPath, [progress, `--every=${every}`, "Building the app", process.execPath, "-e", script], { encoding: "utf8", timeout: 20_000 });
}

describe("scripts/progress.mjs", () => {
  it("passes the command's output through and, while it is silent, says what it is doing and for how long", () => {
    const res = runStep("console.log('   Creating an optimized production build ...'); setTimeout(() => {}, 1200)");
    expect(res.status).toBe(0);
    expect(res.stdout).toContain("Creating an optimized production build ...");
    const beats = res.stdout.split("\n").filter((line) => line.includes("so far"));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    // A beat may come before the command's first line (Node starting slowly on a loaded machine); those after it name the phase.
    expect(beats.some((b) => /… compiling the app \(Turbopack.*\) — \d+ s so far/.test(b))).toBe(true);
    expect(res.stdout).toMatch(/✓ Building the app: \d+ s/);
  });

  it("says nothing extra while the command keeps printing", () => {
    const res = runStep("let n = 0; const t = setInterval(() => { console.log('line ' + n); if (++n === 8) clearInterval(t); }, 50)", 400);
    expect(res.status).toBe(0);
    expect(res.stdout).not.toContain("so far");
  });

  it("exits with the command's status and prints no success line when it fails", () => {
    const res = runStep("console.error('Type error: boom'); process.exit(3)");
    expect(res.status).toBe(3);
    expect(res.stderr).toContain("Type error: boom");
    expect(res.stdout).not.toContain("✓");
  });

  it("names Next's phases as a user knows them, else the step", () => {
    expect(phaseOf("Building the app", "\u001b[32m✓\u001b[39m Compiled successfully in 2.1min")).toBe("type-checking");
    expect(phaseOf("Building the app", "   Collecting page data ...")).toBe("collecting page data");
    expect(phaseOf("Installing dependencies", "")).toBe("Installing dependencies");
    expect(formatElapsed(42_400)).toBe("42 s");
    expect(formatElapsed(185_000)).toBe("3 min 05 s");
  });
});
