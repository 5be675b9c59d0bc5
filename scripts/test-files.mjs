// Which vitest files run on which store (docs/testing.md). `npm test` runs the files that use the store
// once on SQLite and once on PostgreSQL, and every other file once: running a file that never reaches
// the store on the second store only runs the same code again. Each test file falls in one of three
// groups, found from its imports — nothing to register:
//
//   store        it imports the store (a module under db/ other than the schema files and migrations,
//                lib/cluster/ — PostgreSQL pools and NOTIFY — or lib/testing/setup/pg-query.ts; directly or through
//                any chain of local imports), or it reads which store it runs on itself
//                (process.env.DATABASE_URL or TEST_STORE, onPostgres, runsAreQueued, dialect.queuesRuns): runs on both stores.
//   no-store     anything else: runs once, with no store at all. lib/testing/setup/vitest-setup.ts fails such
//                a file if it opens the store after all, so a wrong guess cannot pass silently.
//   own-cluster  it starts PostgreSQL clusters of its own (it imports scripts/pg-test-server.mjs): it tests
//                PostgreSQL whatever store the run is on, so it runs once.
//
// A file can name its group with a line comment `// test-stores: store|no-store|own-cluster` (e.g. a file
// that reaches the store only through a child process it spawns by path).
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const testDirs = ["app", "lib", "db", "components", "bench"];
const extensions = ["", ".ts", ".tsx", ".mts", ".mjs", ".js", "/index.ts", "/index.tsx"];
export const groups = /** @type {const} */ (["store", "no-store", "own-cluster"]);

/**
 * A module that opens or queries the store: under db/ except the table definitions and migrations, the
 * PostgreSQL pools and NOTIFY of lib/cluster/, and the raw PostgreSQL query helper for tests.
 */
function isStoreModule(rel) {
  if (rel.endsWith(".test.ts")) return false;
  if (rel.startsWith("db/")) return !/^db\/(schema[^/]*\.ts|migrations[^/]*\/)/.test(rel);
  return rel.startsWith("lib/cluster/") || rel === "lib/testing/setup/pg-query.ts";
}
/** A test that reads which store its pass is on (and is skipped on the other one, or branches). */
const readsTheStorePattern = /\bprocess\.env(?:\.|\[["'])(DATABASE_URL|TEST_STORE)\b|\b(onPostgres|runsAreQueued|queuesRuns)\b/;
/** Starting a cluster of its own makes a file a PostgreSQL test whatever store the pass is on. */
const ownClusterModule = "scripts/pg-test-server.mjs";

// `import x from "m"`, `import "m"`, `export … from "m"`, `import("m")`, `vi.mock("m")`; `import type` is erased.
const importPattern = /(?:^|[\s;])(?:import(?!\s+type\s)(?:[\s\S]*?\bfrom)?|export(?!\s+type\s)[^;"'`]*?\bfrom)\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;
const pragmaPattern = /^\s*\/\/\s*test-stores:\s*(\S+)/m;

function resolveImport(fromFile, spec) {
  let base;
  if (spec.startsWith("@/")) base = path.join(root, spec.slice(2));
  else if (spec.startsWith(".")) base = path.resolve(path.dirname(fromFile), spec);
  else return null; // a package
  for (const ext of extensions) {
    const candidate = base + ext;
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  // `./x.js` written for a `.ts` file.
  const swapped = base.replace(/\.(m?)js$/, ".$1ts");
  if (swapped !== base && fs.existsSync(swapped)) return swapped;
  return null;
}

const importsCache = new Map();
function localImports(file) {
  let found = importsCache.get(file);
  if (found) return found;
  const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  found = [];
  for (const m of text.matchAll(importPattern)) {
    const resolved = resolveImport(file, m[1] ?? m[2]);
    if (resolved) found.push(resolved);
  }
  importsCache.set(file, found);
  return found;
}

/** The first chain of local imports from `file` to a module matching `pred`, or null. */
function chainTo(file, pred) {
  const seen = new Set([file]);
  const queue = [[file]];
  while (queue.length) {
    const chain = queue.shift();
    for (const next of localImports(chain.at(-1))) {
      if (seen.has(next)) continue;
      seen.add(next);
      const rel = path.relative(root, next);
      if (pred(rel)) return [...chain, next].map((f) => path.relative(root, f));
      queue.push([...chain, next]);
    }
  }
  return null;
}

/** The group of one test file (path relative to the root or absolute) and why. */
export function classify(file) {
  const abs = path.resolve(root, file);
  const text = fs.readFileSync(abs, "utf8");
  const pragma = text.match(pragmaPattern)?.[1];
  if (pragma) {
    if (!groups.includes(pragma)) throw new Error(`${path.relative(root, abs)}: "test-stores: ${pragma}" must be one of ${groups.join(", ")}`);
    return { group: pragma, why: "says so (// test-stores:)" };
  }
  const own = chainTo(abs, (rel) => rel === ownClusterModule);
  if (own) return { group: "own-cluster", why: `starts its own cluster: ${own.join(" → ")}` };
  const store = chainTo(abs, isStoreModule);
  if (store) return { group: "store", why: store.join(" → ") };
  const reads = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "").match(readsTheStorePattern);
  if (reads) return { group: "store", why: `reads ${reads[1] ?? reads[2]}` };
  return { group: "no-store", why: "no import reaches db/" };
}

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else if (/\.test\.tsx?$/.test(entry.name)) yield p;
  }
}

/** Every vitest file, relative to the root, by group. */
export function testFilesByGroup() {
  /** @type {Record<string, string[]>} */
  const byGroup = Object.fromEntries(groups.map((g) => [g, []]));
  for (const dir of testDirs) {
    for (const file of walk(path.join(root, dir))) byGroup[classify(file).group].push(path.relative(root, file));
  }
  for (const list of Object.values(byGroup)) list.sort();
  return byGroup;
}

// `node scripts/test-files.mjs`: the groups and the reason for each file.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url).pathname)) {
  const byGroup = testFilesByGroup();
  for (const group of groups) {
    console.log(`${group} (${byGroup[group].length})`);
    for (const file of byGroup[group]) console.log(`  ${file}  — ${classify(file).why}`);
  }
}
