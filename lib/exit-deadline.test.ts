import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { SHUTDOWN_EXIT_MARGIN_MS } from "./exit-deadline";

// A stopping process whose drain never ends (here: a timer that keeps it busy for ever, as a reconnect
// loop to a store that went away does) still exits, with status 1, once grace + margin have passed.
it("a process that does not finish stopping exits with status 1 at grace + SHUTDOWN_EXIT_MARGIN_MS", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-exit-"));
  const script = path.join(dir, "stuck.ts");
  fs.writeFileSync(
    script,
    `import { exitByDeadline } from ${JSON.stringify(path.join(import.meta.dirname, "exit-deadline"))};
setInterval(() => {}, 50);
exitByDeadline(200, "test shutdown");
process.stdout.write("armed " + Date.now() + "\\n");
`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    env: { ...process.env, LOG_LEVEL: "error" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  await Promise.race([new Promise<void>((resolve) => child.stdout.on("data", () => out.includes("armed") && resolve())), exited]);
  const code = await exited;
  // When the child armed its deadline, as it says: the line reaches this process later on a loaded machine,
  // and timing from its arrival made the child look early (5,063 ms against a floor of 5,100).
  const armedAt = Number(/armed (\d+)/.exec(out)?.[1] ?? NaN);
  fs.rmSync(dir, { recursive: true, force: true });
  const took = Date.now() - armedAt;
  expect(code, out).toBe(1);
  expect(out).toContain("test shutdown did not end in time: exiting now");
  expect(took).toBeGreaterThanOrEqual(200 + SHUTDOWN_EXIT_MARGIN_MS - 100);
}, 30_000);
