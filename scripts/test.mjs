// `npm test`: the whole suite — types, lint, unit and route tests, browser tests against a production
// build in Debian's Chromium, then the reliability suite in its short form. Everything that can behave
// differently on the two stores runs on SQLite and on PostgreSQL (a throwaway cluster) when PostgreSQL is
// installed; what cannot runs once (docs/testing.md says what runs where, and how a new test is placed).
// Prints the time of each step at the end, and fails if the suite outgrew its budget
// (TEST_BUDGET_SECONDS, see docs/testing.md). `.ci/run` calls this.
import { spawn, spawnSync } from "node:child_process";
import { ensureBuild, ensureDependencies, root } from "./project.mjs";
import { findPgBinDir } from "./pg-test-server.mjs";

const started = performance.now();
/** @type {Array<{ name: string; seconds: number }>} */
const steps = [];

function summary() {
  const total = (performance.now() - started) / 1000;
  const width = Math.max(...steps.map((s) => s.name.length), 5);
  console.log("\nTime per step:");
  for (const s of steps) console.log(`  ${s.name.padEnd(width)}  ${s.seconds.toFixed(1).padStart(6)} s`);
  console.log(`  ${"total".padEnd(width)}  ${total.toFixed(1).padStart(6)} s`);
  return total;
}

/** Run one step with inherited output and time it; on failure, print the times so far and exit. */
function step(name, cmd, args, env = {}) {
  console.log(`▸ ${name}`);
  const t = performance.now();
  const res = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  steps.push({ name, seconds: (performance.now() - t) / 1000 });
  if (res.status !== 0) {
    console.error(`\n✗ ${name}: ${cmd} ${args.join(" ")} failed (exit ${res.status ?? res.signal})`);
    summary();
    process.exit(res.status ?? 1);
  }
}

/** A step that runs in-process (install, build), timed the same way. */
function timed(name, fn) {
  const t = performance.now();
  fn();
  steps.push({ name, seconds: (performance.now() - t) / 1000 });
}

/**
 * Commands that use one core each, run side by side; each one's output is printed in one piece when it
 * ends, so the two never interleave.
 */
async function together(name, commands) {
  console.log(`▸ ${name}`);
  const t = performance.now();
  const results = await Promise.all(
    commands.map(
      ({ cmd, args }) =>
        new Promise((resolve) => {
          const child = spawn(cmd, args, { cwd: root, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
          let output = "";
          child.stdout.on("data", (c) => (output += c));
          child.stderr.on("data", (c) => (output += c));
          child.on("close", (code, signal) => {
            process.stdout.write(output);
            resolve({ cmd, args, code: code ?? signal });
          });
        }),
    ),
  );
  steps.push({ name, seconds: (performance.now() - t) / 1000 });
  const failed = results.filter((r) => r.code !== 0);
  if (failed.length) {
    for (const f of failed) console.error(`\n✗ ${name}: ${f.cmd} ${f.args.join(" ")} failed (exit ${f.code})`);
    summary();
    process.exit(1);
  }
}

timed("install dependencies", () => ensureDependencies());
await together("Type check, lint and import cycles", [
  { cmd: "npx", args: ["tsc", "--noEmit", "-p", "."] },
  { cmd: "npx", args: ["eslint", ".", "--max-warnings=0"] },
  // madge: no cycle between files or between module folders (docs/code.md).
  { cmd: "node", args: ["scripts/check-imports.mjs"] },
]);

const pgMissing = !findPgBinDir();
const pgSkipped = (what) =>
  console.log(`▸ ${what} on PostgreSQL: SKIPPED — PostgreSQL is not installed (\`apt-get install -y postgresql\`; .ci/run installs it)`);

// One vitest run: the files that use the store on each store (the PostgreSQL ones in one throwaway
// cluster), every other file once (vitest.config.mts, scripts/test-files.mjs).
if (pgMissing) {
  pgSkipped("Unit and route tests");
  step("Unit and route tests (vitest, SQLite)", "npx", ["vitest", "run"], { TEST_STORE: "sqlite" });
} else {
  step("Unit and route tests (vitest, SQLite and PostgreSQL)", "npx", ["vitest", "run"], { TEST_STORE: "both" });
}

timed("build (next build)", () => ensureBuild());
// The store is named on each pass, so an exported E2E_STORE / RELIABILITY_STORE cannot change it.
step("Browser tests (Playwright, Chromium, SQLite)", "npx", ["playwright", "test"], { E2E_STORE: "sqlite", E2E_STORE_DEPENDENT: "0" });
step("Reliability suite, short form (SQLite)", "npx", ["tsx", "scripts/reliability/run.ts", "--short", "--store", "sqlite"]);
// Again with the servers on PostgreSQL, where runs are queued jobs: only what can behave differently
// there (docs/testing.md) — the browser specs not tagged @store-independent, the reliability sections
// not marked so in scripts/reliability/run.ts.
if (pgMissing) {
  pgSkipped("Browser tests");
  pgSkipped("Reliability suite");
} else {
  step("Browser tests on PostgreSQL (Playwright, throwaway cluster)", "npx", ["playwright", "test"], { E2E_STORE: "postgres", E2E_STORE_DEPENDENT: "1" });
  step("Reliability suite on PostgreSQL, short form (throwaway cluster)", "npx", [
    "tsx",
    "scripts/reliability/run.ts",
    "--short",
    "--store",
    "postgres",
    "--store-dependent",
  ]);
}

const total = summary();
const budget = Number(process.env.TEST_BUDGET_SECONDS ?? 0);
console.log(pgMissing ? "\n✓ All tests passed on SQLite; the PostgreSQL store was NOT tested (not installed)" : "\n✓ All tests passed");
if (budget > 0 && total > budget) {
  console.error(`✗ The suite took ${total.toFixed(0)} s, over its budget of TEST_BUDGET_SECONDS=${budget} s (docs/testing.md: where the time goes)`);
  process.exit(1);
}
