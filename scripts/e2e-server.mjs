// The app server Playwright starts: a production build on a fresh database, judging through the
// judge test double (never a real provider).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ensureBuild, nextBin, root } from "./project.mjs";

ensureBuild();
const dir = path.join(root, "e2e", ".artifacts");
fs.mkdirSync(dir, { recursive: true });
// A second server (the sign-in tests, API_TOKEN set) runs beside the first with its own database.
const db = path.join(dir, process.env.E2E_DB_NAME ?? "e2e.db");
for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(db + suffix, { force: true });

const port = process.env.E2E_PORT ?? "3210";
const child = spawn(process.execPath, [nextBin, "start", "-p", port, "-H", "127.0.0.1"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    // Turnscope drains runs on SIGTERM itself (lib/shutdown.ts) instead of Next.js closing at once.
    NEXT_MANUAL_SIG_HANDLE: "true",
    DATABASE_PATH: db,
    OPENAI_BASE_URL: `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? "4010"}/v1`,
    OPENAI_API_KEY: "test-key-for-the-judge-double",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
