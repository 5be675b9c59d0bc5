/**
 * vitest runs test files one after another in shared worker processes (vitest.config.mts, isolate: false);
 * lib/testing/setup/vitest-setup.ts must give each file what a process of its own gave it. Two files run in one
 * worker here, each leaving an environment variable, a module's state and a process singleton behind; the
 * second must see none of the first's (without the setup's resets it sees all three).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";

it("a test file sees nothing the file before it in the same worker left: environment, modules, process state", () => {
  const root = path.join(import.meta.dirname, "..", "..", "..");
  const res = spawnSync(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "lib/testing/setup/isolation/vitest.config.mts"], {
    cwd: root,
    encoding: "utf8",
    env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("TURNSCOPE_ISOLATION_"))) as NodeJS.ProcessEnv,
    timeout: 60_000,
  });
  const out = `${res.stdout}\n${res.stderr}`;
  // Both files ran, in one process.
  const pids = [...out.matchAll(/isolation: (first|second) ran in process (\d+)/g)];
  expect(pids.map((m) => m[1]).sort(), out).toEqual(["first", "second"]);
  expect(new Set(pids.map((m) => m[2])).size, out).toBe(1);
  expect(res.status, out).toBe(0);
});
