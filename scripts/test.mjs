// `npm test`: the whole suite — types, lint, unit and route tests, browser tests against a production
// build in Debian's Chromium, then the reliability suite in its short form. `.ci/run` calls this.
import { ensureBuild, ensureDependencies, run } from "./project.mjs";

ensureDependencies();
console.log("▸ Type check");
run("npx", ["tsc", "--noEmit", "-p", "."]);
console.log("▸ Lint");
run("npx", ["eslint", ".", "--max-warnings=0"]);
console.log("▸ Unit and route tests (vitest)");
run("npx", ["vitest", "run"]);
ensureBuild();
console.log("▸ Browser tests (Playwright, Chromium)");
run("npx", ["playwright", "test"]);
console.log("▸ Reliability suite, short form (load, faults, crashes, hostile input, access)");
run("npx", ["tsx", "scripts/reliability/run.ts", "--short"]);
console.log("\n✓ All tests passed");
