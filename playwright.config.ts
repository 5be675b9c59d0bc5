import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3210);
const judgePort = Number(process.env.E2E_JUDGE_PORT ?? 4010);
const baseURL = `http://127.0.0.1:${port}`;
/** A second app server with API_TOKEN set, for the sign-in tests (e2e/auth.spec.ts). */
const guardedPort = port + 2;
const guardedToken = "e2e-token-for-the-guarded-server";
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

/** Browser tests against the production build, in Debian's Chromium (never a downloaded browser). */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  ...(storeDependentOnly ? { grepInvert: /@store-independent/ } : {}),
  use: {
    baseURL,
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
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
      ],
    },
  },
  webServer: [
    ...pgCluster,
    {
      command: `npx tsx lib/testing/judge-double/cli.ts --port ${judgePort}`,
      url: `http://127.0.0.1:${judgePort}/v1/models`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: "ignore",
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `${baseURL}/api/health`,
      env: { E2E_PORT: String(port), E2E_JUDGE_PORT: String(judgePort), E2E_STORE: store },
      reuseExistingServer: false,
      timeout: 300_000,
      stdout: "pipe",
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `http://127.0.0.1:${guardedPort}/api/session`,
      env: { E2E_PORT: String(guardedPort), E2E_JUDGE_PORT: String(judgePort), E2E_DB_NAME: "e2e-guarded.db", E2E_STORE: store, API_TOKEN: guardedToken },
      reuseExistingServer: false,
      timeout: 300_000,
      stdout: "pipe",
    },
  ],
});
