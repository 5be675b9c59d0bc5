// The app server Playwright starts: a production build on a fresh database, judging through the
// judge test double (never a real provider). E2E_STORE=postgres: a fresh database in the cluster of
// E2E_PG_ADMIN_URL (started by playwright.config.ts) instead of a SQLite file.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ensureBuild, nextBin, root } from "./project.mjs";

// A build of the current sources, type-checked or not: npm test builds (and checks every file) before its
// browser passes, and a browser spec run alone needs no type check either (the build `npm start` made serves).
// E2E_REUSE_BUILD=1 (every server of a pass but the first, playwright.config.ts): the first server built the
// sources as they were; building again because a file changed since would swap .next under the servers
// already answering ("This page couldn't load" in a checkout being edited meanwhile).
const reuse = process.env.E2E_REUSE_BUILD === "1" && fs.existsSync(path.join(root, ".next", "BUILD_ID"));
if (!reuse) ensureBuild({ typeCheck: false });
const dir = path.join(root, "e2e", ".artifacts");
fs.mkdirSync(dir, { recursive: true });
// A second server (the sign-in tests, API_TOKEN set) runs beside the first with its own database.
const db = path.join(dir, process.env.E2E_DB_NAME ?? "e2e.db");
for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(db + suffix, { force: true });
const store = process.env.E2E_STORE ?? "sqlite";
const databaseUrl = store === "postgres" ? await freshPgDatabase(path.basename(db, ".db")) : undefined;

/** A new, empty database named after the SQLite file it stands in for (`e2e`, `e2e_guarded`). */
async function freshPgDatabase(base) {
  const adminUrl = process.env.E2E_PG_ADMIN_URL;
  if (!adminUrl) throw new Error("E2E_STORE=postgres needs E2E_PG_ADMIN_URL (playwright.config.ts starts a cluster and sets it)");
  const name = base.replace(/[^a-z0-9]+/gi, "_").toLowerCase();
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const port = process.env.E2E_PORT ?? "3210";
// Idle keep-alive sockets stay open 65 s, not Node's 5 s: a spec's request after a pause of about 5 s
// could reuse a socket the server was closing just then (ECONNRESET on a grid read, seen under load).
const child = spawn(process.execPath, [nextBin, "start", "-p", port, "-H", "127.0.0.1", "--keepAliveTimeout", "65000"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    // Turnscope drains runs on SIGTERM itself (lib/shutdown.ts) instead of Next.js closing at once.
    NEXT_MANUAL_SIG_HANDLE: "true",
    DATABASE_PATH: db,
    // Unset on SQLite (spawn drops undefined values), so an exported DATABASE_URL cannot leak in.
    DATABASE_URL: databaseUrl,
    OPENAI_BASE_URL: `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? "4010"}/v1`,
    OPENAI_API_KEY: "test-key-for-the-judge-double",
    // The default judge model priced, as a team with a daily cap has it (a cap over unpriced models is refused).
    JUDGE_PRICES: JSON.stringify({ "gpt-4o-mini": { input: 0.15, output: 0.6 } }),
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    // The Live page's spec waits for online rules to judge conversations: sweep every second.
    ONLINE_SWEEP_INTERVAL_MS: process.env.ONLINE_SWEEP_INTERVAL_MS ?? "1000",
  },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
