/**
 * Each test file gets its own temporary SQLite file — or, in the PostgreSQL project (TEST_STORE=postgres,
 * see vitest.config.mts and lib/testing/setup/pg-global-setup.ts), its own database in the run's cluster,
 * cloned from the migrated template — so files run in parallel without sharing state. A file of the
 * no-store group (TEST_STORE=none, scripts/test-files.mjs) gets no store, and fails if it opens one.
 *
 * A worker process runs file after file (vitest.config.mts: `isolate: false`; a new process per file cost
 * half the store files' CPU in loading packages again). What the new process gave each file, this gives
 * it: the environment as the worker started, the app's own modules evaluated anew (packages under
 * node_modules stay loaded), the process state of lib/process-state.ts empty; and at the end of a file,
 * what it left running is stopped as a process exit would — runs, the online sweep, the judge thread,
 * comparisons, alignments, lease renewals, trace rebuilds, on PostgreSQL the queue, notifications and
 * pools — before its store is closed and removed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, inject, vi } from "vitest";

type TestGlobals = typeof globalThis & { __turnscope?: Map<string, unknown>; __turnscopeWorkerEnv?: NodeJS.ProcessEnv };
const shared = globalThis as TestGlobals;
shared.__turnscopeWorkerEnv ??= { ...process.env };
for (const key of Object.keys(process.env)) if (!(key in shared.__turnscopeWorkerEnv)) delete process.env[key];
Object.assign(process.env, shared.__turnscopeWorkerEnv);
vi.resetModules();
delete shared.__turnscope;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-test-"));
process.env.DATABASE_PATH = path.join(dir, "test.db");
process.env.LOG_LEVEL ??= "silent";
// Never reach a real provider from tests: judge tests start the judge test double and set these.
delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
delete process.env.API_TOKEN;
const store = process.env.TEST_STORE ?? "sqlite";
// Set by a PostgreSQL project only; inherited from a shell that ran the app, it would choose the store.
if (store !== "postgres") delete process.env.DATABASE_URL;

let pgDatabase: { admin: string; name: string } | undefined;
if (store === "postgres") {
  const adminUrl = inject("pgAdminUrl");
  const template = inject("pgTemplate");
  if (!adminUrl || !template) throw new Error("TEST_STORE=postgres needs the cluster of lib/testing/setup/pg-global-setup.ts");
  const { default: pg } = await import("pg");
  const name = `test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${template}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // Read by db/tables.ts when the first repository is imported, which happens after this file.
  process.env.DATABASE_URL = url.toString();
  pgDatabase = { admin: adminUrl, name };
}

/** Stop what the file left running, as the end of its process did: only what it started (nothing else is loaded for it). */
async function stopBackgroundWork(): Promise<void> {
  const state = shared.__turnscope;
  if (!state) return;
  const sweep = state.get("online.sweep") as { timer?: unknown; running?: unknown } | undefined;
  if (sweep?.timer || sweep?.running) await (await import("@/lib/online/sweep")).stopOnlineSweep();
  // In-process runs (lib/jobs jobs of the kind "run"): drained before the threads their calls use stop.
  const running = state.get("jobs.active") as Map<string, unknown> | undefined;
  if ([...(running?.keys() ?? [])].some((key) => key.startsWith("run "))) await (await import("@/lib/runner/run")).drainRuns(0);
  const thread = state.get("judge-thread") as { thread?: unknown } | undefined;
  if (thread?.thread) await (await import("@/lib/judge/call-thread")).stopJudgeThread();
  const checkThread = state.get("check-thread") as { thread?: unknown } | undefined;
  if (checkThread?.thread) await (await import("@/lib/runner/check-thread")).stopCheckThread();
  const generations = state.get("generation.queue") as { started?: unknown } | undefined;
  if (generations?.started) await (await import("@/lib/generation/queue")).drainGenerations(0);
  // Work that outlived its test (a comparison left hanging, an alignment, a lease renewal, a scheduled
  // rebuild of traced conversations) would reach for the store after this file's is gone: its modules still
  // read this file's DATABASE_URL. The store refuses such a caller (db/pg.ts; it used to close the next
  // file's pool), so the work would only fail noisily in the next file's time: it is stopped here.
  const jobs = state.get("jobs.active") as Map<string, { controller: AbortController; finished: Promise<void> }> | undefined;
  if (jobs?.size) {
    for (const j of jobs.values()) j.controller.abort(new Error("the test file ended"));
    await Promise.allSettled([...jobs.values()].map((j) => j.finished));
  }
  const leases = state.get("jobs.leases") as Map<string, ReturnType<typeof setInterval>> | undefined;
  for (const timer of leases?.values() ?? []) clearInterval(timer);
  leases?.clear();
  const assembler = state.get("otel.assembler") as { timer?: unknown; running?: unknown } | undefined;
  const inbox = state.get("otel.inbox") as { running?: unknown } | undefined;
  if (state.get("otel.inbox-pass")) await (await import("@/lib/otel/inbox")).stopInboxPass();
  if (assembler?.timer || assembler?.running || inbox?.running) await (await import("@/lib/otel/ingest")).flushAssembly();
}

afterAll(async () => {
  await stopBackgroundWork();
  if (store === "none") {
    const opened = fs.existsSync(process.env.DATABASE_PATH!);
    fs.rmSync(dir, { recursive: true, force: true });
    if (!opened) return;
    throw new Error(
      "This test file opened the store, but scripts/test-files.mjs put it in the no-store group (no import of it reaches db/), " +
        "so it would run on SQLite only: add the line `// test-stores: store` to it (docs/testing.md).",
    );
  }
  const { closeDb } = await import("@/db/sqlite-database");
  closeDb();
  fs.rmSync(dir, { recursive: true, force: true });
  if (pgDatabase) {
    // Queued runs: this file's in-process worker, its queue client and notification connections.
    const { stopQueue } = await import("@/lib/jobs/cell-queue");
    await stopQueue({ graceMs: 0 });
    const { closeNotifiers } = await import("@/lib/cluster/notify");
    await closeNotifiers();
    const { closeClusterPools } = await import("@/lib/cluster/pool");
    await closeClusterPools();
    // The store's open hooks (seeding the system templates) finish before their pool closes.
    await (shared as { [key: symbol]: { ready?: Promise<void> } | undefined })[Symbol.for("turnscope.pg.ready")]?.ready?.catch(() => undefined);
    const { closePgDb } = await import("@/db/pg");
    await closePgDb();
    const { default: pg } = await import("pg");
    const admin = new pg.Client({ connectionString: pgDatabase.admin });
    await admin.connect();
    await admin.query(`drop database if exists ${pgDatabase.name} with (force)`);
    await admin.end();
  }
});
