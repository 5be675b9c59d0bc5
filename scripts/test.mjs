// `npm test`: the whole suite — types, lint, unit and route tests, browser tests against a production
// build in Debian's Chromium, then the reliability suite in its short form. `.ci/run` calls this.
import { ensureBuild, ensureDependencies, run } from "./project.mjs";
import { findPgBinDir } from "./pg-cluster.mjs";

ensureDependencies();
console.log("▸ Type check");
run("npx", ["tsc", "--noEmit", "-p", "."]);
console.log("▸ Lint");
run("npx", ["eslint", ".", "--max-warnings=0"]);
console.log("▸ Unit and route tests (vitest)");
run("npx", ["vitest", "run"]);
// The same tests on the second store: one throwaway PostgreSQL cluster (lib/testing/pg-global-setup.ts).
const pgMissing = !findPgBinDir();
if (pgMissing) {
  console.log("▸ Unit and route tests on PostgreSQL: SKIPPED — PostgreSQL is not installed (`apt-get install -y postgresql`; .ci/run installs it)");
} else {
  console.log("▸ Unit and route tests on PostgreSQL (vitest, throwaway cluster)");
  run("npx", ["vitest", "run"], { env: { ...process.env, TEST_STORE: "postgres" } });
}
ensureBuild();
console.log("▸ Browser tests (Playwright, Chromium)");
run("npx", ["playwright", "test"]);
console.log("▸ Reliability suite, short form (load, faults, crashes, hostile input, access)");
run("npx", ["tsx", "scripts/reliability/run.ts", "--short"]);
console.log(pgMissing ? "\n✓ All tests passed on SQLite; the PostgreSQL store was NOT tested (not installed)" : "\n✓ All tests passed");
