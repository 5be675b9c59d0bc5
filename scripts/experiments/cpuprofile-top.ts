/**
 * Top self-time functions of a V8 .cpuprofile (as written by `node --cpu-prof`), and the same time
 * grouped by where the code lives (Next.js server, React, zod, drizzle, better-sqlite3, our code, GC…).
 *
 *   npx tsx scripts/experiments/cpuprofile-top.ts <file.cpuprofile> [--top 30] [--from-s 10]
 *
 * `--from-s` drops the first seconds (start-up, warm-up) so the figures cover the measured window.
 */
import fs from "node:fs";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const file = process.argv[2];
if (!file) throw new Error("usage: cpuprofile-top.ts <file.cpuprofile> [--top N] [--from-s S]");
const opt = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const top = opt("top", 30);
const fromUs = opt("from-s", 0) * 1e6;
const toUs = opt("to-s", Infinity) * 1e6;
const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
/** `--incl <regex>` (repeatable): inclusive time of samples with a frame whose name or file matches. */
const inclusive = process.argv.flatMap((a, i) => (process.argv[i - 1] === "--incl" ? [new RegExp(a)] : []));
const inclusiveUs = inclusive.map(() => 0);
function stackMatches(id: number, re: RegExp): boolean {
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur)!.callFrame;
    if (re.test(f.functionName) || re.test(f.url)) return true;
  }
  return false;
}

function area(url: string, name: string): string {
  if (name === "(garbage collector)") return "GC";
  if (name === "(idle)") return "idle";
  if (name === "(program)") return "(program: native/unattributed)";
  if (!url) return "native/builtin";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1].startsWith("next") && /compiled\/(react|react-dom)/.test(url) ? `next (react)` : m[1];
  if (url.includes(".next/server/chunks") || url.includes(".next/server/app")) return "app (our code, bundled)";
  if (url.startsWith("node:")) return "node core";
  return url.split("/").slice(-2).join("/");
}

/** `--mark <regex>`: print when (seconds into the profile) stacks matching it first and last ran. */
const markAt = process.argv.indexOf("--mark");
if (markAt >= 0) {
  const re = new RegExp(process.argv[markAt + 1]);
  let at = 0;
  const hits: number[] = [];
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (stackMatches(profile.samples[i], re)) hits.push(at / 1e6);
  }
  console.log(`mark ${re}: ${hits.length} samples, first at ${hits[0]?.toFixed(2)} s, last at ${hits.at(-1)?.toFixed(2)} s`);
}

const self = new Map<number, number>();
const areas = new Map<string, number>();
let t = 0;
let total = 0;
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  if (t < fromUs || t > toUs) continue;
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const node = byId.get(profile.samples[i])!;
  if (node.callFrame.functionName === "(idle)") {
    idle += dt;
    continue;
  }
  total += dt;
  self.set(node.id, (self.get(node.id) ?? 0) + dt);
  inclusive.forEach((re, k) => {
    if (stackMatches(node.id, re)) inclusiveUs[k] += dt;
  });
  const a = area(node.callFrame.url, node.callFrame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + dt);
}

// Merge nodes with the same function (same name, file, line) across call paths.
const merged = new Map<string, number>();
for (const [id, us] of self) {
  const f = byId.get(id)!.callFrame;
  const key = `${f.functionName || "(anonymous)"}  ${f.url.replace(/^.*node_modules\//, "~/").replace(/^.*\.next\//, ".next/")}:${f.lineNumber + 1}`;
  merged.set(key, (merged.get(key) ?? 0) + us);
}
const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const pct = (us: number) => ((100 * us) / total).toFixed(1).padStart(5);
console.log(`busy ${ms(total)} ms, idle ${ms(idle)} ms (${((100 * total) / (total + idle)).toFixed(0)}% busy)`);
console.log("\nby area (self time):");
for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 20)) console.log(`${ms(us)} ms ${pct(us)}%  ${a}`);
inclusive.forEach((re, k) => console.log(`inclusive ${ms(inclusiveUs[k])} ms ${pct(inclusiveUs[k])}%  stacks matching ${re}`));
console.log(`\ntop ${top} functions (self time):`);
for (const [k, us] of [...merged].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${ms(us)} ms ${pct(us)}%  ${k}`);
