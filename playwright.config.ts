import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3210);
const judgePort = Number(process.env.E2E_JUDGE_PORT ?? 4010);
const baseURL = `http://127.0.0.1:${port}`;
/** A second app server with API_TOKEN set, for the sign-in tests (e2e/auth.spec.ts). */
const guardedPort = port + 2;
const guardedToken = "e2e-token-for-the-guarded-server";

/** Browser tests against the production build, in Debian's Chromium (never a downloaded browser). */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
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
      env: { E2E_PORT: String(port), E2E_JUDGE_PORT: String(judgePort) },
      reuseExistingServer: false,
      timeout: 300_000,
      stdout: "pipe",
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `http://127.0.0.1:${guardedPort}/api/session`,
      env: { E2E_PORT: String(guardedPort), E2E_JUDGE_PORT: String(judgePort), E2E_DB_NAME: "e2e-guarded.db", API_TOKEN: guardedToken },
      reuseExistingServer: false,
      timeout: 300_000,
      stdout: "pipe",
    },
  ],
});
