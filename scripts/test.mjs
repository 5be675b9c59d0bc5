// `npm test`: the whole suite — lint, the build (which is the type check), unit and route tests, browser
// tests against the production build in Debian's Chromium, and the reliability suite in its short form. Everything that can behave
// differently on the two stores runs on SQLite and on PostgreSQL (a throwaway cluster) when PostgreSQL is
// installed; what cannot runs once (docs/testing.md says what runs where, and how a new test is placed).
//
// The steps run side by side: each starts as soon as the steps it needs are done (the browser and
// reliability suites need the build; nothing else needs anything but the install), because most of
// them spend their time waiting on servers, browsers and timers, not on the cores (in aggregate the
// suite is CPU-bound: docs/testing.md, How the steps run). Each step's output
// goes to test-results/logs/<step>.log as it comes and is printed in one piece when the step ends. The
// first step that fails stops the others. At the end it prints when each step started and ended, the
// wall time and the CPU time, and fails if the suite outgrew its budget (TEST_BUDGET_SECONDS, see
// docs/testing.md). `.ci/run` calls this.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ensureDependencies, nativeModulesMissing, root } from "./project.mjs";
import { findPgBinDir } from "./pg-test-server.mjs";

const started = performance.now();
let clockTicks = /** @type {number | undefined} */ (undefined);
/** The kernel's clock ticks per second, in which /proc counts CPU time. */
const ticksPerSecond = () => (clockTicks ??= Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100);
const seconds = (t) => (t - started) / 1000;
const logDir = path.join(root, "test-results", "logs");

const install = performance.now();
const machineAtStart = machineCpu();
const cpuBeforeInstall = childrenCpuSeconds();
// The native module (better-sqlite3, compiled from source: most of a fresh install) is built as a step
// of the plan below, beside the type check and lint, which do not need it.
ensureDependencies({ native: false });
const installSeconds = (performance.now() - install) / 1000;
/** CPU of the children reaped so far: each step's CPU is what was added when it ended. */
let cpuSeen = childrenCpuSeconds();
const installCpu = cpuSeen === undefined || cpuBeforeInstall === undefined ? undefined : cpuSeen - cpuBeforeInstall;

const pgMissing = !findPgBinDir();
/** The second pass's servers listen this many ports above the first's, so both passes run at once. */
const secondPassPortOffset = 100;
const e2ePort = Number(process.env.E2E_PORT ?? 3210);
const e2eJudgePort = Number(process.env.E2E_JUDGE_PORT ?? 4010);
const reliabilityPort = Number(process.env.RELIABILITY_PORT ?? 3411);

/**
 * @typedef {{ id: string; name: string; cmd: string; args: string[]; env?: Record<string, string>; after?: string[]; background?: boolean }} Step
 * The suite. A step starts once every step named in its `after` has passed (a step not in the plan,
 * such as the native build when it is already done, counts as passed). A `background` step times
 * nothing and nothing waits for it (the type check, lint, import cycles): it runs under `nice 10`.
 * (Each step is a session of its own, and where the kernel groups sessions — autogroup, on by default
 * on Debian — the CPU is shared between sessions whatever the nice inside them; niced as a whole
 * session, those checks starved to the end of the run.)
 *
 * The browser passes start after vitest, not beside it: all at once on 2 cores (load 20–25) vitest took
 * 542 s instead of ~300, for no gain overall (the suite is CPU-bound in aggregate: docs/testing.md). The store is named on each
 * pass, so an exported E2E_STORE / RELIABILITY_STORE / TEST_STORE cannot change it.
 * @type {Step[]}
 */
const plan = [
  ...(nativeModulesMissing() ? [{ id: "native", name: "Native module (npm rebuild better-sqlite3)", cmd: "node", args: ["scripts/project.mjs", "native"] }] : []),
  { id: "lint", name: "Lint (ESLint)", cmd: "npx", args: ["eslint", ".", "--max-warnings=0"], background: true },
  // madge: no cycle between files or between module folders (docs/code.md).
  { id: "cycles", name: "Import cycles (madge)", cmd: "node", args: ["scripts/check-imports.mjs"], background: true },
  // One vitest run: the files that use the store on each store (the PostgreSQL ones in one throwaway
  // cluster), every other file once (vitest.config.mts, scripts/test-files.mjs).
  pgMissing
    ? { id: "vitest", name: "Unit and route tests (vitest, SQLite)", cmd: "npx", args: ["vitest", "run"], env: { TEST_STORE: "sqlite" }, after: ["native"] }
    : { id: "vitest", name: "Unit and route tests (vitest, SQLite and PostgreSQL)", cmd: "npx", args: ["vitest", "run"], env: { TEST_STORE: "both" }, after: ["native"] },
  // The build does not load the native module, so it starts at once; the browser passes wait for it.
  // It is also the type check: next build checks every file tsconfig.json includes (tests and scripts
  // too) and the route types it generates, which a separate `tsc` would not (it took 31 s of CPU again).
  { id: "build", name: "Build and type check (next build)", cmd: "node", args: ["scripts/project.mjs", "build"] },
  {
    id: "e2e-sqlite",
    name: "Browser tests (Playwright, Chromium, SQLite)",
    cmd: "npx",
    args: ["playwright", "test"],
    env: { E2E_STORE: "sqlite", E2E_STORE_DEPENDENT: "0" },
    after: ["build", "vitest"],
  },
  {
    id: "reliability-sqlite",
    name: "Reliability suite, short form (SQLite)",
    cmd: "npx",
    args: ["tsx", "scripts/reliability/run.ts", "--short", "--store", "sqlite"],
    after: ["build", "native"],
  },
  // Again with the servers on PostgreSQL, where runs are queued jobs: only what can behave differently
  // there (docs/testing.md) — the browser specs not tagged @store-independent, the reliability sections
  // not marked so in scripts/reliability/run.ts. On ports of their own, beside the SQLite pass.
  ...(pgMissing
    ? []
    : [
        {
          id: "e2e-postgres",
          name: "Browser tests on PostgreSQL (Playwright, throwaway cluster)",
          cmd: "npx",
          args: ["playwright", "test"],
          env: {
            E2E_STORE: "postgres",
            E2E_STORE_DEPENDENT: "1",
            // Its pages are the SQLite pass's: the screenshots for people are taken there.
            E2E_SCREENSHOTS: "0",
            E2E_PORT: String(e2ePort + secondPassPortOffset),
            E2E_JUDGE_PORT: String(e2eJudgePort + secondPassPortOffset),
          },
          after: ["build", "vitest"],
        },
        {
          id: "reliability-postgres",
          name: "Reliability suite on PostgreSQL, short form (throwaway cluster)",
          cmd: "npx",
          args: ["tsx", "scripts/reliability/run.ts", "--short", "--store", "postgres", "--store-dependent"],
          env: { RELIABILITY_PORT: String(reliabilityPort + secondPassPortOffset) },
          after: ["build", "native"],
        },
      ]),
];

/** @type {Map<string, { step: Step; child?: import("node:child_process").ChildProcess; start?: number; end?: number; cpu?: number; status?: "passed" | "failed" | "stopped"; code?: number | string }>} */
const state = new Map(plan.map((step) => [step.id, { step }]));
let failure = /** @type {string | undefined} */ (undefined);
fs.mkdirSync(logDir, { recursive: true });

/** Start one step in a process group of its own (so stopping it stops its servers and browsers too). */
function launch(id) {
  const s = state.get(id);
  const { step } = s;
  s.start = performance.now();
  console.log(`▸ ${step.name} — started at ${seconds(s.start).toFixed(0)} s`);
  const logFile = path.join(logDir, `${id}.log`);
  const log = fs.createWriteStream(logFile);
  let output = "";
  s.child = spawn(step.background ? "nice" : step.cmd, step.background ? ["-n", "10", step.cmd, ...step.args] : step.args, {
    cwd: root,
    env: { ...process.env, ...step.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  for (const stream of [s.child.stdout, s.child.stderr]) {
    stream.on("data", (chunk) => {
      output += chunk;
      log.write(chunk);
    });
  }
  return new Promise((resolve) => {
    s.child.on("exit", () => {
      const cpu = childrenCpuSeconds();
      if (cpu !== undefined && cpuSeen !== undefined) s.cpu = cpu - cpuSeen;
      cpuSeen = cpu;
    });
    s.child.on("close", (code, signal) => {
      log.end();
      s.end = performance.now();
      s.code = code ?? signal ?? "?";
      const took = ((s.end - s.start) / 1000).toFixed(1);
      if (failure && code !== 0) {
        s.status = "stopped";
        console.log(`▸ ${step.name} — stopped after ${took} s (output: ${path.relative(root, logFile)})`);
      } else {
        s.status = code === 0 ? "passed" : "failed";
        console.log(`\n━━ ${step.name} — ${s.status} in ${took} s ━━`);
        process.stdout.write(output.endsWith("\n") || output === "" ? output : `${output}\n`);
        if (s.status === "failed" && !failure) {
          failure = id;
          stopAll();
        }
      }
      resolve(undefined);
    });
  });
}

/** Signal every step's process group, also when its first process has ended (a server it started may be left). */
function signalAll(signal) {
  for (const s of state.values()) {
    if (!s.child?.pid) continue;
    try {
      process.kill(-s.child.pid, signal);
    } catch {
      // the group is gone
    }
  }
}

/**
 * Stop every running step's process group as Ctrl-C would: SIGINT first, which Playwright, vitest and the
 * reliability suite answer by stopping the servers they started in process groups of their own (a
 * SIGTERMed Playwright leaves its web servers running); SIGTERM after 10 s, SIGKILL after 20 s.
 */
function stopAll() {
  signalAll("SIGINT");
  setTimeout(() => signalAll("SIGTERM"), 10_000).unref();
  setTimeout(() => signalAll("SIGKILL"), 20_000).unref();
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    failure ??= signal;
    stopAll();
    setTimeout(() => process.exit(130), 21_000).unref();
  });
}

/** Run the plan: start every step whose prerequisites passed, until none is left to start. */
async function runPlan() {
  const running = new Map();
  for (;;) {
    if (!failure) {
      for (const [id, s] of state) {
        if (s.start !== undefined || running.has(id)) continue;
        if ((s.step.after ?? []).every((dep) => !state.has(dep) || state.get(dep).status === "passed")) running.set(id, launch(id).then(() => id));
      }
    }
    if (running.size === 0) return;
    running.delete(await Promise.race(running.values()));
  }
}

/** The machine's busy and total CPU seconds since boot, all cores, from /proc/stat (Linux). */
function machineCpu() {
  try {
    const lines = fs.readFileSync("/proc/stat", "utf8").split("\n");
    const [, user, nice, system, idle, iowait, irq, softirq, steal] = lines[0].trim().split(/\s+/).map(Number);
    const ticks = ticksPerSecond();
    const busy = user + nice + system + irq + softirq + steal;
    return { busy: busy / ticks, all: (busy + idle + iowait) / ticks, cores: lines.filter((l) => /^cpu\d/.test(l)).length };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of this process's finished children, from /proc (Linux), in seconds. */
function childrenCpuSeconds() {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = ticksPerSecond();
    // After the ")" field 3 (state) is index 0, so cutime (16) and cstime (17) are 13 and 14.
    return (Number(fields[13]) + Number(fields[14])) / ticks;
  } catch {
    return undefined;
  }
}

function summary() {
  const total = seconds(performance.now());
  const rows = [...state.values()];
  const width = Math.max(...rows.map((s) => s.step.name.length), 24);
  const cpuText = (cpu) => (cpu === undefined ? "" : `${cpu.toFixed(0).padStart(5)} s CPU`);
  console.log("\nTime per step (seconds from the start of npm test; steps overlap):");
  console.log(`  ${"install dependencies".padEnd(width)}  ${"0".padStart(6)} → ${installSeconds.toFixed(1).padStart(6)}  ${installSeconds.toFixed(1).padStart(6)} s  ${cpuText(installCpu)}`);
  for (const s of rows) {
    if (s.start === undefined) {
      console.log(`  ${s.step.name.padEnd(width)}  not started`);
      continue;
    }
    const end = s.end ?? performance.now();
    console.log(
      `  ${s.step.name.padEnd(width)}  ${seconds(s.start).toFixed(1).padStart(6)} → ${seconds(end).toFixed(1).padStart(6)}  ${((end - s.start) / 1000).toFixed(1).padStart(6)} s  ${cpuText(s.cpu)}  ${s.status ?? ""}`,
    );
  }
  const cpu = childrenCpuSeconds();
  const load = fs.existsSync("/proc/loadavg") ? fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") : "?";
  console.log(`  ${"total".padEnd(width)}  ${total.toFixed(1).padStart(16)} s wall${cpu === undefined ? "" : `, ${cpu.toFixed(0)} s CPU of the steps' own processes`}; load average ${load}`);
  // The steps' servers, browsers and PostgreSQL run in process groups of their own, so the CPU above
  // misses them: the machine's busy time over the run counts everything (and anything else running).
  const machine = machineCpu();
  if (machine && machineAtStart) {
    const busy = machine.busy - machineAtStart.busy;
    const all = machine.all - machineAtStart.all;
    console.log(`  ${"the machine, all processes".padEnd(width)}  ${busy.toFixed(0).padStart(16)} s CPU busy of ${all.toFixed(0)} s on ${machine.cores} cores (${((100 * busy) / all).toFixed(0)}%)`);
  }
  return total;
}

await runPlan();
const total = summary();
if (failure) {
  // What the stopped steps left behind (a server whose parent ended first) goes too.
  signalAll("SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  signalAll("SIGKILL");
  const s = state.get(failure);
  console.error(s ? `\n✗ ${s.step.name}: ${s.step.cmd} ${s.step.args.join(" ")} failed (exit ${s.code}); the steps still running were stopped` : `\n✗ stopped (${failure})`);
  process.exit(1);
}
if (pgMissing) {
  console.log("\n▸ PostgreSQL: SKIPPED — not installed (`apt-get install -y postgresql`; .ci/run installs it): vitest, the browser tests and the reliability suite ran on SQLite only");
  console.log("✓ All tests passed on SQLite; the PostgreSQL store was NOT tested (not installed)");
} else {
  console.log("\n✓ All tests passed");
}
const budget = Number(process.env.TEST_BUDGET_SECONDS ?? 0);
if (budget > 0 && total > budget) {
  console.error(`✗ The suite took ${total.toFixed(0)} s, over its budget of TEST_BUDGET_SECONDS=${budget} s (docs/testing.md: where the time goes)`);
  process.exit(1);
}
