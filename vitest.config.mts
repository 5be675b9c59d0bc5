import os from "node:os";
import path from "node:path";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { testFilesByGroup } from "./scripts/test-files.mjs";

/**
 * Which store the suite runs on (docs/testing.md):
 *   TEST_STORE unset or sqlite   every file, the store on SQLite (a temporary file per test file)
 *   TEST_STORE=postgres          every file, the store on PostgreSQL (a database per test file, cloned
 *                                from one migrated template, in one throwaway cluster)
 *   TEST_STORE=both              what `npm test` runs: the files that use the store on each store, every
 *                                other file once — one run, one worker pool
 * The files that use the store are found from their imports (scripts/test-files.mjs, which says how to
 * put a file in another group); `node scripts/test-files.mjs` lists the groups and why.
 */
const storeSetting = process.env.TEST_STORE ?? "sqlite";
if (!["sqlite", "postgres", "both"].includes(storeSetting)) throw new Error(`TEST_STORE must be sqlite, postgres or both, not ${storeSetting}`);
const files = testFilesByGroup();

const onStore = (store: "sqlite" | "postgres"): TestProjectInlineConfiguration => ({
  extends: true,
  test: {
    name: store,
    include: files.store,
    env: { TEST_STORE: store },
    // One worker process runs file after file; lib/testing/setup/vitest-setup.ts gives each its own modules, state and store.
    isolate: false,
    ...(store === "postgres" ? { globalSetup: ["lib/testing/setup/pg-global-setup.ts"] } : {}),
  },
});

export default defineConfig({
  resolve: {
    alias: {
      "@": import.meta.dirname,
      // `server-only` throws outside React server components; tests call server modules directly.
      "server-only": path.join(import.meta.dirname, "lib/testing/setup/server-only-stub.ts"),
    },
  },
  test: {
    environment: "node",
    setupFiles: ["lib/testing/setup/vitest-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // One worker per core (vitest's default is one fewer: one on 2 cores, where this took the step from
    // 334 to 611 s). Most of a file's time is waiting (child processes, PostgreSQL, the judge double), so
    // the tests must hold on a loaded machine: they wait on events and conditions, not on wall-clock
    // time. VITEST_MAX_WORKERS=<n> overrides.
    maxWorkers: process.env.VITEST_MAX_WORKERS ? Number(process.env.VITEST_MAX_WORKERS) : os.availableParallelism(),
    projects: [
      ...(storeSetting === "both" ? [onStore("sqlite"), onStore("postgres")] : [onStore(storeSetting as "sqlite" | "postgres")]),
      // Never opens the store (vitest-setup.ts fails it if it does): once, whatever the store setting.
      { extends: true, test: { name: "no-store", include: files["no-store"], env: { TEST_STORE: "none" }, isolate: false } },
      // Starts PostgreSQL clusters of its own (or is about PostgreSQL only): once, whatever the setting.
      { extends: true, test: { name: "own-cluster", include: files["own-cluster"], env: { TEST_STORE: "sqlite" } } },
    ],
  },
});
