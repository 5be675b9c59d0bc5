// `npm test`: the whole suite — types, lint, unit and route tests, browser tests against a production
// build in Debian's Chromium, then the reliability suite in its short form; the tests, browser tests and
// reliability suite each once on SQLite and once on PostgreSQL (a throwaway test server per pass) when
// PostgreSQL is installed. `.ci/run` calls this.
import { ensureBuild, ensureDependencies, run } from "./project.mjs";
import { findPgBinDir } from "./pg-test-server.mjs";

ensureDependencies();
console.log("▸ Type check");
run("npx", ["tsc", "--noEmit", "-p", "."]);
console.log("▸ Lint");
run("npx", ["eslint", ".", "--max-warnings=0"]);
console.log("▸ Import cycles (madge: between files and between module folders)");
run("node", ["scripts/check-imports.mjs"]);
console.log("▸ Unit and route tests (vitest)");
run("npx", ["vitest", "run"]);
// The same tests on the second store: one throwaway PostgreSQL test server (lib/testing/pg-global-setup.ts).
const pgMissing = !findPgBinDir();
const pgSkipped = (what) => console.log(`▸ ${what} on PostgreSQL: SKIPPED — PostgreSQL is not installed (\`apt-get install -y postgresql\`; .ci/run installs it)`);
if (pgMissing) {
  pgSkipped("Unit and route tests");
} else {
  console.log("▸ Unit and route tests on PostgreSQL (vitest, throwaway test server)");
  run("npx", ["vitest", "run"], { env: { ...process.env, TEST_STORE: "postgres" } });
}
ensureBuild();
console.log("▸ Browser tests (Playwright, Chromium)");
// The store is named on each pass, so an exported E2E_STORE / RELIABILITY_STORE cannot change it.
run("npx", ["playwright", "test"], { env: { E2E_STORE: "sqlite" } });
console.log("▸ Reliability suite, short form (load, faults, crashes, hostile input, access)");
run("npx", ["tsx", "scripts/reliability/run.ts", "--short", "--store", "sqlite"]);
// The browser and reliability suites again with the servers on PostgreSQL, where runs are queued jobs.
if (pgMissing) {
  pgSkipped("Browser tests");
  pgSkipped("Reliability suite");
} else {
  console.log("▸ Browser tests on PostgreSQL (Playwright, Chromium, throwaway test server)");
  run("npx", ["playwright", "test"], { env: { E2E_STORE: "postgres" } });
  console.log("▸ Reliability suite on PostgreSQL, short form (throwaway test server)");
  run("npx", ["tsx", "scripts/reliability/run.ts", "--short", "--store", "postgres"]);
}
console.log(pgMissing ? "\n✓ All tests passed on SQLite; the PostgreSQL store was NOT tested (not installed)" : "\n✓ All tests passed");
