// Shared by the start and test commands: install dependencies and build only when needed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
/** Next's CLI run with this Node directly, so signals reach the server (npx would sit in between). */
export const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");

// What the build reads — and, since `next build` is also npm test's type check, every file tsconfig.json
// includes (tests, scripts, browser specs, config files): a change to any of them builds (and checks) again
// when npm test asks for a build. `npm start` builds and checks the product only (tsconfig.build.json),
// and only `productInputs` decide whether its build is current.
// Not next-env.d.ts: `next build` writes it (it is git-ignored), so with it every build's stamp would be
// stale at once, and the next step to ensure a build would build again.
export const buildInputs = [
  "app",
  "components",
  "lib",
  "db",
  "public",
  "e2e",
  "scripts",
  "bench",
  "instrumentation.ts",
  "proxy.ts",
  "next.config.ts",
  "vitest.config.mts",
  "playwright.config.ts",
  "drizzle.config.ts",
  "drizzle.pg.config.ts",
  "postcss.config.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "package-lock.json",
];

/** What a product build (npm start's: the app, type-checked without tests or scripts) reads. */
export const productInputs = ["app", "components", "lib", "db", "public", "instrumentation.ts", "proxy.ts", "next.config.ts", "postcss.config.mjs", "tsconfig.json", "tsconfig.build.json", "package-lock.json"];

/**
 * Run a command in the project root with inherited output; exit the process if it fails. With `progress`
 * (what the step is, e.g. "Building the app"), through scripts/progress.mjs: its output still passes
 * through, a line every ~10 s of silence says what it is doing and for how long, and its time is printed
 * at the end — a first `npm start` is never silent for minutes.
 */
export function run(cmd, args, opts = {}) {
  const { progress, ...rest } = opts;
  const argv = progress ? [process.execPath, [path.join(root, "scripts", "progress.mjs"), progress, cmd, ...args]] : [cmd, args];
  const res = spawnSync(argv[0], argv[1], { cwd: root, stdio: "inherit", ...rest, env: { ...process.env, ...rest.env } });
  if (res.status !== 0) {
    console.error(`\n✗ ${cmd} ${args.join(" ")} failed (exit ${res.status ?? res.signal})`);
    process.exit(res.status ?? 1);
  }
}

/** The one native module: compiled from source at install (node-gyp), most of a fresh install's time. */
const nativeBinary = path.join(root, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");

/**
 * Install when node_modules is missing or older than package-lock.json. `npm install` rather than
 * `npm ci`: the lock file only lists the platform builds our registry carries, which `npm ci` refuses.
 * Packages are installed with their install scripts off, then the native module is built
 * (`ensureNativeModules`) — at once here, or, with `{ native: false }`, later by the caller: `npm test`
 * compiles it beside the type check and lint, which do not need it. `--prefer-offline`: a package the
 * lock file pins and npm's cache holds is taken from the cache without asking the registry whether its
 * listing changed (nothing the lock file pins can change); anything missing is still fetched. A fresh
 * clone's install went 46 → 35 s (65 → 49 s of CPU) here.
 */
export function ensureDependencies({ native = true } = {}) {
  const marker = path.join(root, "node_modules", ".package-lock.json");
  const lock = path.join(root, "package-lock.json");
  const stale = () => !fs.existsSync(marker) || fs.statSync(marker).mtimeMs < fs.statSync(lock).mtimeMs;
  if (stale()) {
    // One install at a time: the README starts the judge double and `npm start` together on a fresh clone.
    withInstallLock(() => {
      if (!stale()) return;
      console.log("▸ Installing dependencies (npm install)…");
      run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline"], { progress: "Installing dependencies" });
    });
  }
  if (native) withInstallLock(() => ensureNativeModules());
}

/** Run `fn` holding a lock directory (mkdir is atomic) that names its process; a live holder is waited for, a dead one's lock taken over. */
function withInstallLock(fn) {
  const dir = path.join(root, ".install-lock");
  const owner = path.join(dir, "pid");
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (!holderAlive(owner)) fs.rmSync(dir, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  const release = () => fs.rmSync(dir, { recursive: true, force: true });
  process.once("exit", release); // run() exits the process when a command fails
  try {
    fn();
  } finally {
    release();
    process.off("exit", release);
  }
}

function holderAlive(owner) {
  const pid = Number(fs.existsSync(owner) ? fs.readFileSync(owner, "utf8") : NaN);
  // Just made by another process that has not written its pid yet: alive.
  if (!Number.isInteger(pid)) return Date.now() - (fs.statSync(path.dirname(owner), { throwIfNoEntry: false })?.mtimeMs ?? 0) < 5_000;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether the native module still has to be built (a fresh install, or an install that stopped half-way). */
export function nativeModulesMissing() {
  return !fs.existsSync(nativeBinary);
}

/** Run the install scripts that `ensureDependencies` left out: better-sqlite3's build, esbuild's check. */
export function ensureNativeModules() {
  if (!nativeModulesMissing()) return;
  console.log("▸ Building the native module (npm rebuild better-sqlite3)…");
  run("npm", ["rebuild", "better-sqlite3", "esbuild"], { progress: "Compiling the native module (better-sqlite3)" });
}

function* walk(p) {
  if (!fs.existsSync(p)) return;
  const stat = fs.statSync(p);
  if (stat.isFile()) {
    yield p;
    return;
  }
  for (const entry of fs.readdirSync(p).sort()) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    yield* walk(path.join(p, entry));
  }
}

/**
 * Files under the build's inputs that runs write, not sources: the browser tests' grid figures
 * (e2e/grid-scale.spec.ts) and `npm run bench` write bench/results.json, which made the next `npm start`
 * or `npm test` after every test run build again.
 */
const writtenByRuns = new Set(["bench/results.json"]);

/** A hash of every file under `inputs` (paths relative to `base`, the project unless a test names another tree). */
export function sourceFingerprint(inputs = buildInputs, base = root) {
  const hash = createHash("sha256");
  for (const input of inputs) {
    for (const file of walk(path.join(base, input))) {
      const rel = path.relative(base, file);
      if (writtenByRuns.has(rel.split(path.sep).join("/"))) continue;
      hash.update(rel);
      hash.update(fs.readFileSync(file));
    }
  }
  return hash.digest("hex");
}

/**
 * `next build` unless .next holds a build of exactly the current sources. `checkTests` (npm test): the
 * build's type check covers every file (tests, scripts, specs), else the product only; `typeCheck: false`
 * (`npm start`): none — serving does not need one, and a user's first start should not wait for it
 * (npm test checks every file). A build that checked more serves every caller that asks for less.
 */
export function ensureBuild({ checkTests = false, typeCheck = true } = {}) {
  const stamp = path.join(root, ".next", "turnscope-source.sha256");
  const all = `all:${sourceFingerprint(buildInputs)}`;
  const productSources = sourceFingerprint(productInputs);
  const product = `product:${productSources}`;
  const unchecked = `unchecked:${productSources}`;
  const built = fs.existsSync(path.join(root, ".next", "BUILD_ID")) && fs.existsSync(stamp) ? fs.readFileSync(stamp, "utf8") : "";
  if (built === all || (!checkTests && built === product) || (!checkTests && !typeCheck && built === unchecked)) return;
  const check = checkTests ? "type-checking tests and scripts too" : typeCheck ? "type-checking the product" : "no type check: npm test does it";
  console.log(`▸ Building the app (next build, ${check})…`);
  // A clone's first build (no .next yet) writes no Turbopack cache: a fresh clone, CI or a first `npm start`
  // builds once, and writing the cache cost about 10 s of CPU (of ~80). Later builds write and read it.
  const firstBuild = !fs.existsSync(path.join(root, ".next"));
  // Next's CLI run with this Node (not npx: one process less), its output passed through.
  run(process.execPath, [nextBin, "build"], {
    progress: "Building the app",
    env: { NEXT_TELEMETRY_DISABLED: "1", TURNSCOPE_TYPECHECK: checkTests ? "all" : typeCheck ? "product" : "none", ...(firstBuild ? { TURNSCOPE_BUILD_CACHE: "0" } : {}) },
  });
  fs.writeFileSync(stamp, checkTests ? all : typeCheck ? product : unchecked);
}

// `node scripts/project.mjs build|native`: ensureBuild (checking tests too) / ensureNativeModules as
// commands (npm test runs them beside other steps).
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(root, "scripts", "project.mjs")) {
  if (process.argv[2] === "build") ensureBuild({ checkTests: true });
  else if (process.argv[2] === "native") ensureNativeModules();
  else if (process.argv[2]) throw new Error(`scripts/project.mjs: unknown command ${process.argv[2]} (build, native)`);
}
