/**
 * `npm run bench`: runs every `*.bench.ts` under bench/ (or the ones named on the command line),
 * each in its own process so peak memory is its own, and merges their figures into bench/results.json
 * (git-ignored). A bench file prints one line `BENCH_RESULT {"key": {...figures}}`; keys from other
 * benches, and from e2e/grid-scale.spec.ts, are kept.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const resultsFile = path.join(root, "bench", "results.json");

function findBenches(dir: string, out: string[] = []): string[] {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) findBenches(full, out);
    else if (entry.isFile() && entry.name.endsWith(".bench.ts")) out.push(full);
  }
  return out;
}

const named = process.argv.slice(2).map((f) => path.resolve(f));
const benches = named.length ? named : findBenches(path.join(root, "bench"));
const results: Record<string, unknown> = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, "utf8")) : {};
let failed = 0;

for (const file of benches) {
  const rel = path.relative(root, file);
  console.log(`▸ ${rel}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-bench-"));
  // react-server resolves `server-only` to its empty module, as inside Next.js server code.
  const res = spawnSync("npx", ["tsx", "--conditions=react-server", file], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, DATABASE_PATH: path.join(dir, "bench.db"), LOG_LEVEL: "silent" },
    maxBuffer: 64 * 1024 * 1024,
  });
  fs.rmSync(dir, { recursive: true, force: true });
  process.stderr.write(res.stderr ?? "");
  const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  if (res.status !== 0 || !line) {
    console.error(`  ✗ ${rel} failed (exit ${res.status})\n${res.stdout}`);
    failed++;
    continue;
  }
  const figures = JSON.parse(line.slice("BENCH_RESULT ".length)) as Record<string, unknown>;
  Object.assign(results, figures);
  console.log(JSON.stringify(figures, null, 2));
}

fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
fs.writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");
console.log(`Wrote ${path.relative(root, resultsFile)}`);
process.exit(failed ? 1 : 0);
