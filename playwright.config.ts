import { defineConfig, type PlaywrightTestConfig } from "@playwright/test";

type WebServer = Extract<NonNullable<PlaywrightTestConfig["webServer"]>, unknown[]>[number];

/**
 * Playwright workers side by side (E2E_WORKERS, default 3: a worker mostly waits on the app and the judge).
 * The specs script the judge test double (`/__double/latency`, `/enqueue`, `/rules`, `/reset`) and count what is in the database, so each worker
 * has servers of its own: slot k (Playwright's TEST_PARALLEL_INDEX, stable across a worker's restarts) gets
 * its own judge double and app server, on the base ports + k × PORT_STRIDE, each app server on its own
 * database. The runner starts every slot's servers (webServer below); each worker loads this file again
 * with TEST_PARALLEL_INDEX set, and points E2E_PORT / E2E_JUDGE_PORT — which the specs and
 * e2e/workspace-helpers.ts read — and baseURL at its slot's servers before any spec is loaded.
 *
 * One sign-in server (API_TOKEN set) serves every worker of a pass, on the base app port + 2
 * (E2E_GUARDED_URL), judging through a double of its own that no spec scripts (base judge port + 2): its
 * specs name what they create uniquely and count nothing store-wide, so they need no server per worker;
 * each further one cost a server start and its idle loops.
 */
const workers = Number(process.env.E2E_WORKERS ?? 3);
if (!Number.isInteger(workers) || workers < 1) throw new Error(`E2E_WORKERS must be a whole number ≥ 1, not ${process.env.E2E_WORKERS}`);
const PORT_STRIDE = 10;
// A worker inherits the runner's environment, so these are the base ports in the worker too (it loads
// this file once, then moves E2E_PORT / E2E_JUDGE_PORT to its slot below).
const basePort = Number(process.env.E2E_PORT ?? 3210);
const baseJudgePort = Number(process.env.E2E_JUDGE_PORT ?? 4010);
const guardedToken = "e2e-token-for-the-guarded-server";
/** The ports of one worker's servers. */
function slotPorts(slot: number) {
  return { port: basePort + slot * PORT_STRIDE, judgePort: baseJudgePort + slot * PORT_STRIDE };
}
const guardedPort = basePort + 2;
const guardedJudgePort = baseJudgePort + 2;
process.env.E2E_GUARDED_URL = `http://127.0.0.1:${guardedPort}`;
const workerSlot = process.env.TEST_PARALLEL_INDEX;
const { port, judgePort } = slotPorts(Number(workerSlot ?? 0));
if (workerSlot !== undefined) {
  process.env.E2E_PORT = String(port);
  process.env.E2E_JUDGE_PORT = String(judgePort);
}
const baseURL = `http://127.0.0.1:${port}`;
const traceModes = ["off", "on", "retain-on-failure", "on-first-retry", "retain-on-first-failure"] as const;
const traceMode = (process.env.E2E_TRACE ?? "off") as (typeof traceModes)[number];
if (!traceModes.includes(traceMode)) throw new Error(`E2E_TRACE must be one of ${traceModes.join(", ")}, not ${process.env.E2E_TRACE}`);
/**
 * E2E_STORE=postgres: the app servers run on PostgreSQL — one throwaway PostgreSQL test server for the whole run
 * (scripts/pg-test-server.mjs, started first and stopped last: Playwright sets web servers up in order and
 * tears them down in reverse), a fresh database per server (scripts/e2e-server.mjs). The cluster's URL
 * reaches the later servers through the runner's environment: Playwright copies the named group of the
 * `wait.stdout` match into process.env. E2E_PG_ADMIN_URL set beforehand names a cluster to use instead.
 */
const store = process.env.E2E_STORE ?? "sqlite";
if (store !== "sqlite" && store !== "postgres") throw new Error(`E2E_STORE must be sqlite or postgres, not ${store}`);
const pgCluster =
  store === "postgres" && !process.env.E2E_PG_ADMIN_URL
    ? [
        {
          command: "node scripts/pg-test-server.mjs start",
          wait: { stdout: /DATABASE_URL=(?<E2E_PG_ADMIN_URL>\S+)/ },
          // SIGTERM, so the cluster is stopped and its directory removed (its watchdog would also do it).
          gracefulShutdown: { signal: "SIGTERM" as const, timeout: 30_000 },
          reuseExistingServer: false,
          timeout: 120_000,
        },
      ]
    : [];

/**
 * E2E_STORE_DEPENDENT=1 (`npm test`'s PostgreSQL pass): leave out the specs tagged @store-independent —
 * they drive pages whose outcome the store cannot change, and run on SQLite (docs/testing.md). An
 * untagged spec runs on both stores.
 */
const storeDependentOnly = process.env.E2E_STORE_DEPENDENT === "1";
const dbBase = store === "postgres" ? "e2e-pg" : "e2e";
/** The specs that take longest (over 35 s each on SQLite, alone): they start first. */
const longSpecs = /\/(analyst-day|realdata-import|import|workspace)\.spec\.ts$/;

/** Browser tests against the production build, in Debian's Chromium (never a downloaded browser). */
export default defineConfig({
  testDir: "e2e",
  // One folder per store: npm test runs the two passes at once, and Playwright empties its folder first.
  outputDir: store === "postgres" ? "test-results/e2e-postgres" : "test-results/e2e-sqlite",
  // npm test runs the browser passes beside vitest and each other on 2 cores (docs/testing.md): at a load of
  // 10–20 a page that shows in 1 s on a quiet machine took over 10. These bound how long a spec waits for
  // what it asserts, not how fast the product must be (the benchmarks measure that).
  timeout: 90_000,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers,
  reporter: [["list"]],
  ...(storeDependentOnly ? { grepInvert: /@store-independent/ } : {}),
  // The longest specs first (a project runs its files before the next project's): started last, one of them
  // kept a single worker busy for the pass's last ~25 s while the other two had finished (docs/testing.md).
  projects: [
    { name: "long", testMatch: longSpecs },
    { name: "rest", testIgnore: longSpecs },
  ],
  use: {
    baseURL,
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    screenshot: "only-on-failure",
    // Recording a trace costs a third of the pass's CPU (screenshots and DOM snapshots of every action,
    // 223 → 155 CPU-s for the SQLite pass), paid on every passing test: off by default; E2E_TRACE=
    // retain-on-failure (or on) records them again (docs/testing.md).
    trace: traceMode,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // One origin under test: no renderer per site, no spare renderer kept warm, at most three renderers, and no
        // paint holding between same-origin pages. The SQLite pass took 5 % less machine CPU (242 against 256 s,
        // three interleaved pairs; docs/testing.md); the pages behave the same.
        "--disable-site-isolation-trials",
        "--disable-features=SpareRendererForSitePerProcess,IsolateOrigins,site-per-process,PaintHolding",
        "--renderer-process-limit=3",
      ],
    },
  },
  webServer: [
    ...pgCluster,
    ...Array.from({ length: workers }, (_, slot) => slotServers(slot)).flat(),
    ...guardedServers(),
  ],
});

/** One worker's judge double and app server, each app server on a database of its own. */
function slotServers(slot: number): WebServer[] {
  const { port, judgePort } = slotPorts(slot);
  // Slot 0 keeps the name of a one-worker run (e2e.db; on PostgreSQL e2e-pg.db's name e2e_pg): the two
  // stores' passes run at once, so neither removes the other's files.
  const suffix = slot === 0 ? "" : `-${slot}`;
  // The first app server builds when the sources changed; the later ones serve that build (scripts/e2e-server.mjs).
  return pair(port, judgePort, "/api/health", `${dbBase}${suffix}.db`, slot === 0 ? {} : { E2E_REUSE_BUILD: "1" });
}

/** The pass's sign-in server (API_TOKEN set) on its own database, and the judge double it alone uses. */
function guardedServers(): WebServer[] {
  return pair(guardedPort, guardedJudgePort, "/api/session", `${dbBase}-guarded.db`, { API_TOKEN: guardedToken, E2E_REUSE_BUILD: "1" });
}

/** A judge double and the app server judging through it (scripts/e2e-server.mjs), ready when `readyPath` answers. */
function pair(port: number, judgePort: number, readyPath: string, dbName: string, extraEnv: Record<string, string> = {}): WebServer[] {
  return [
    {
      // node with tsx as a loader, not `npx tsx`: npm exec and the tsx launcher cost ~1 s of CPU per double.
      command: `node --import tsx lib/testing/judge-double/cli.ts --port ${judgePort}`,
      url: `http://127.0.0.1:${judgePort}/v1/models`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: "ignore",
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `http://127.0.0.1:${port}${readyPath}`,
      env: { E2E_PORT: String(port), E2E_JUDGE_PORT: String(judgePort), E2E_DB_NAME: dbName, E2E_STORE: store, ...extraEnv },
      reuseExistingServer: false,
      timeout: 300_000,
      stdout: "pipe",
    },
  ];
}
