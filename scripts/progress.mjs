// `node scripts/progress.mjs [--every=<ms>] "<what>" <command> [args…]`: run a long command with its output passed
// through, and never leave the terminal silent: when the command has printed nothing for ~10 s, a line
// says what it is doing (from the last thing it printed) and how long it has taken. Ends with a line
// giving the step's time. The exit status is the command's. Used by scripts/project.mjs for the install,
// the native module's compile and `next build` (whose Turbopack compile prints nothing for minutes on a
// loaded machine).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Seconds as people read them: "42 s", "3 min 05 s". */
export function formatElapsed(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** What a command is doing, from the last line it printed (Next's build phases named as a user knows them). */
export function phaseOf(what, lastLine) {
  const line = lastLine.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").trim();
  const phases = [
    [/Creating an optimized production build/i, "compiling the app (Turbopack; it prints nothing until it is done)"],
    [/Compiled successfully|Running TypeScript|Checking validity of types/i, "type-checking"],
    [/Collecting page data/i, "collecting page data"],
    [/Generating static pages/i, "generating static pages"],
    [/Finalizing page optimization|Collecting build traces/i, "finishing the build"],
  ];
  for (const [pattern, phase] of phases) if (pattern.test(line)) return phase;
  return what;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `--every=<ms>` (tests): how long a silence lasts before a progress line; 10 s otherwise.
  const every = process.argv[2]?.startsWith("--every=") ? Number(process.argv[2].slice(8)) : undefined;
  const HEARTBEAT_MS = every ?? 10_000;
  const [what, cmd, ...args] = process.argv.slice(every === undefined ? 2 : 3);
  if (!what || !cmd) {
    console.error('usage: node scripts/progress.mjs "<what>" <command> [args…]');
    process.exit(2);
  }
  const started = Date.now();
  let lastOutput = started;
  let lastLine = "";
  const child = spawn(cmd, args, { stdio: ["inherit", "pipe", "pipe"] });
  const pass = (stream, out) =>
    stream.on("data", (chunk) => {
      out.write(chunk);
      lastOutput = Date.now();
      const lines = chunk.toString().split(/\r?\n/).filter((l) => l.trim() !== "");
      if (lines.length > 0) lastLine = lines.at(-1);
    });
  pass(child.stdout, process.stdout);
  pass(child.stderr, process.stderr);
  const timer = setInterval(() => {
    if (Date.now() - lastOutput < HEARTBEAT_MS) return;
    lastOutput = Date.now();
    console.log(`  … ${phaseOf(what, lastLine)} — ${formatElapsed(Date.now() - started)} so far`);
  }, Math.min(1000, HEARTBEAT_MS));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    console.error(`✗ ${what}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code) => {
    clearInterval(timer);
    if (code === 0) console.log(`✓ ${what}: ${formatElapsed(Date.now() - started)}`);
    process.exit(code ?? 1);
  });
}
