/**
 * Measure on each store a benchmark names (SCALE_STORES, TRACE_STORE_STORES): SQLite in a new temporary
 * database file, PostgreSQL on a throwaway test server (scripts/pg-test-server.mjs; skipped, saying so, where
 * PostgreSQL's programs are not installed). `measure` gets the environment that points a child process at it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type BenchStore = "sqlite" | "postgres";

export async function onEachStore<R>(
  stores: readonly string[],
  opts: { name: string; keepSqlite?: boolean },
  measure: (store: BenchStore, env: NodeJS.ProcessEnv) => R,
): Promise<Array<{ store: BenchStore; result: R }>> {
  const out: Array<{ store: BenchStore; result: R }> = [];
  for (const store of stores) {
    if (store === "sqlite") {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `turnscope-${opts.name}-`));
      try {
        out.push({ store, result: measure(store, { ...process.env, DATABASE_URL: "", DATABASE_PATH: path.join(dir, `${opts.name}.db`) }) });
      } finally {
        if (opts.keepSqlite) console.log(`  kept ${dir}`);
        else fs.rmSync(dir, { recursive: true, force: true });
      }
    } else if (store === "postgres") {
      const { findPgBinDir, startPgTestServer } = await import("../../scripts/pg-test-server.mjs");
      if (!findPgBinDir()) {
        console.log("  postgres: skipped (PostgreSQL's programs are not installed)");
        continue;
      }
      const server = await startPgTestServer();
      try {
        out.push({ store, result: measure(store, { ...process.env, DATABASE_URL: server.url }) });
      } finally {
        await server.stop();
      }
    } else throw new Error(`unknown store ${store}`);
  }
  return out;
}
