// Import cycles, checked with madge (`npm run lint` and `npm test` run this): no file may import itself
// through others, and no module folder (lib/<name>, db/<name>, db) may reach itself through other
// folders (db/repositories above the store, db) — arrows between modules point one way (docs: shared ARCHITECTURE "The way data flows").
// Tests, benchmarks (bench/) and lib/testing are test support: they may import any module, so they take
// part in the file check only. The other way is refused: product code (app, components, db, lib but
// lib/testing) never imports test support — no arrow of the product points up into bench/ or lib/testing.
import path from "node:path";
import { pathToFileURL } from "node:url";
import madge from "madge";

/**
 * The module a file belongs to: lib/<dir>, a single lib/<file>, db/repositories, the store itself (db:
 * its schemas, connections and dialects, db/dialect included), or the top folder.
 */
export function moduleOf(file) {
  const parts = file.split("/");
  if (parts[0] === "lib") return parts.length > 2 ? `lib/${parts[1]}` : file.replace(/\.(ts|tsx|mjs|js)$/, "");
  if (parts[0] === "db") return parts[1] === "repositories" ? "db/repositories" : "db";
  return parts.length > 1 ? parts[0] : file;
}

/** Tests, benchmarks and their helpers (bench/, lib/testing/): not part of the product. */
export const isTestSupport = (file) => /\.(test|bench)\.tsx?$/.test(file) || file.startsWith("lib/testing/") || file.startsWith("bench/");

/** Strongly connected groups of more than one node (Tarjan), each sorted, in a stable order. */
function cyclesOf(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const out = [];
  const visit = (v) => {
    state.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!state.has(w)) {
        visit(w);
        state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
      } else if (state.get(w).onStack) state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
    }
    if (state.get(v).low === state.get(v).index) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        state.get(w).onStack = false;
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!state.has(v)) visit(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/**
 * The import cycles under `roots` (folders relative to `baseDir`): `files` as madge finds them, and
 * `folders` between modules, each with the imports that close it; and `upward`, each import of test
 * support (a test, a benchmark, bench/, lib/testing/) by product code, as `file -> dependency`.
 */
export async function checkImports({ baseDir = process.cwd(), roots = ["app", "components", "lib", "db", "bench"], tsConfig = "tsconfig.json" } = {}) {
  const result = await madge(
    roots.map((r) => path.join(baseDir, r)),
    { baseDir, fileExtensions: ["ts", "tsx"], tsConfig: path.join(baseDir, tsConfig), excludeRegExp: [/node_modules/] },
  );
  const files = result.circular();
  const graph = new Map();
  const why = new Map();
  const upward = [];
  for (const [file, deps] of Object.entries(result.obj())) {
    if (isTestSupport(file)) continue;
    for (const dep of deps) if (isTestSupport(dep)) upward.push(`${file} -> ${dep}`);
    const from = moduleOf(file);
    for (const dep of deps) {
      const to = moduleOf(dep);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
      const key = `${from} -> ${to}`;
      if (!why.has(key)) why.set(key, `${file} -> ${dep}`);
    }
  }
  const folders = cyclesOf(graph).map((group) => ({
    modules: group,
    imports: [...why.entries()].filter(([key]) => group.includes(key.split(" -> ")[0]) && group.includes(key.split(" -> ")[1])).map(([, e]) => e),
  }));
  return { files, folders, upward: upward.sort() };
}

/** The cycles of checkImports alone: `files` and `folders`. */
export async function findImportCycles(options = {}) {
  const { files, folders } = await checkImports(options);
  return { files, folders };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { files, folders, upward } = await checkImports();
  for (const cycle of files) console.error(`import cycle between files: ${cycle.join(" -> ")} -> ${cycle[0]}`);
  for (const cycle of folders) {
    console.error(`import cycle between modules ${cycle.modules.join(", ")}:`);
    for (const edge of cycle.imports) console.error(`  ${edge}`);
  }
  for (const edge of upward) console.error(`product code imports test support (bench/, lib/testing/, a test or a benchmark): ${edge}`);
  if (files.length || folders.length || upward.length) process.exit(1);
  console.log("No import cycles between files or module folders, and no import of test support by product code.");
}
