/**
 * Each test file gets its own temporary SQLite file, so files run in parallel without sharing state.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-test-"));
process.env.DATABASE_PATH = path.join(dir, "test.db");
process.env.LOG_LEVEL ??= "silent";
// Never reach a real provider from tests: judge tests start the judge test double and set these.
delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
delete process.env.API_TOKEN;

afterAll(async () => {
  const { closeDb } = await import("@/db/client");
  closeDb();
  fs.rmSync(dir, { recursive: true, force: true });
});
