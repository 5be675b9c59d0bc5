/**
 * Crashes and shutdowns: SIGKILL during a run and during an import, SIGTERM during a run. After each,
 * the database must be intact, nothing half-written, and a retry must finish the work.
 */
import Database from "better-sqlite3";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { addMetrics, agentConversations, check, gridCells, importDataset, startRun, waitFinal, waitUntil, type Check } from "./data";
import type { TurnscopeServer } from "./server";

function integrity(databasePath: string): string {
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma("integrity_check", { simple: true }) as string) ?? "unknown";
  } finally {
    db.close();
  }
}

function rowCounts(databasePath: string) {
  const db = new Database(databasePath, { readonly: true });
  try {
    const n = (t: string) => (db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n;
    return { datasets: n("datasets"), conversations: n("conversations"), messages: n("messages"), steps: n("steps") };
  } finally {
    db.close();
  }
}

async function allCompleted(server: TurnscopeServer, datasetId: number, expected: number): Promise<boolean> {
  const statuses = (await Promise.all(["conversation", "message", "step"].map((l) => gridCells(server, datasetId, l)))).flatMap((m) => [...m.values()]);
  return statuses.length === expected && statuses.every((s) => s === "completed");
}

export async function killDuringRun(server: TurnscopeServer, double: JudgeDouble, conversations: number) {
  const checks: Check[] = [];
  double.reset();
  double.setLatency(20);
  const { datasetId } = await importDataset(server, `kill-run-${Date.now()}`, agentConversations(conversations, "k"));
  await addMetrics(server, datasetId);
  const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 4 });
  await waitUntil(
    "some results before the kill",
    async () => ((await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}`)).json?.successful_evaluations ?? 0) >= Math.min(40, run.total_evaluations / 4),
    60_000,
  );
  await server.stop("SIGKILL");
  const afterKill = integrity(server.options.databasePath);
  await server.start();
  const interrupted = (await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}`)).json;
  const kept = interrupted.successful_evaluations + interrupted.failed_evaluations;
  check(checks, "database intact after SIGKILL", afterKill === "ok", afterKill);
  check(checks, "the killed run is failed with 'interrupted: server restarted'", interrupted.status === "failed" && interrupted.errors.some((e: { message: string }) => e.message === "interrupted: server restarted"), interrupted);
  check(checks, "results saved before the kill are kept", kept > 0 && kept < run.total_evaluations, { kept });
  double.setLatency(0);
  const retry = await startRun(server, { dataset_id: datasetId, retry: true, execution_mode: "async", batch_size: 8 });
  const retried = await waitFinal(server, retry.id, 5 * 60_000);
  check(checks, "a retry run evaluates only what is missing", retry.total_evaluations === run.total_evaluations - interrupted.successful_evaluations, { retry: retry.total_evaluations, kept });
  check(checks, "and finishes it", retried.status === "completed" && (await allCompleted(server, datasetId, run.total_evaluations)), retried);
  return { checks, figures: { cells: run.total_evaluations, results_before_kill: kept, retried_cells: retry.total_evaluations, integrity: afterKill } };
}

export async function killDuringImport(server: TurnscopeServer, conversations: number, delaysMs: number[]) {
  const checks: Check[] = [];
  const outcomes: Array<{ delay_ms: number; landed: string; integrity: string }> = [];
  const body = JSON.stringify(agentConversations(conversations, "big"));
  for (const delay of delaysMs) {
    const before = rowCounts(server.options.databasePath);
    const form = new FormData();
    form.set("file", new Blob([body], { type: "application/json" }), "big.json");
    form.set("name", `kill-import-${delay}`);
    form.set("get_feedback", "false");
    const pending = fetch(`${server.baseUrl}/api/datasets/import`, { method: "POST", body: form, headers: server.authHeaders() }).then(
      (r) => r.status,
      () => 0,
    );
    await new Promise((r) => setTimeout(r, delay));
    await server.stop("SIGKILL");
    const status = await pending;
    const ok = integrity(server.options.databasePath);
    await server.start();
    const after = rowCounts(server.options.databasePath);
    const nothing = after.datasets === before.datasets && after.conversations === before.conversations && after.messages === before.messages;
    const complete =
      after.datasets === before.datasets + 1 && after.conversations === before.conversations + conversations && after.messages === before.messages + conversations * 2;
    const landed = nothing ? "nothing written" : complete ? "import had committed" : "PARTIAL";
    outcomes.push({ delay_ms: delay, landed, integrity: ok });
    check(checks, `kill ${delay} ms into a ${conversations}-conversation import leaves all or nothing`, nothing || complete, { before, after, status });
    check(checks, `database intact after the kill at ${delay} ms`, ok === "ok", ok);
  }
  return { checks, figures: { file_bytes: body.length, outcomes } };
}

export async function sigtermDuringRun(server: TurnscopeServer, double: JudgeDouble, graceMs: number) {
  const checks: Check[] = [];
  double.reset();
  double.setLatency(400);
  const { datasetId } = await importDataset(server, `sigterm-${Date.now()}`, agentConversations(30, "t"));
  await addMetrics(server, datasetId);
  const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 4 });
  await waitUntil("cells in flight", async () => double.inFlight() > 0, 30_000);
  const exitMs = await server.stop("SIGTERM", graceMs + 15_000);
  const exit = server.exitInfo();
  check(checks, "the server exits on SIGTERM within the grace period", exitMs < graceMs + 5_000, { exitMs, exit });
  check(checks, "and exits cleanly", exit.code === 0, exit);
  double.setLatency(0);
  await server.start();
  const after = (await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}`)).json;
  const kept = after.successful_evaluations + after.failed_evaluations;
  check(checks, "cells in flight at SIGTERM finished and were saved", after.successful_evaluations >= 1, after);
  check(checks, "the unfinished run is marked for retry (failed, interrupted)", after.status === "failed" && after.errors.some((e: { message: string }) => e.message.startsWith("interrupted")), after);
  const retry = await startRun(server, { dataset_id: datasetId, retry: true, execution_mode: "async", batch_size: 8 });
  const retried = await waitFinal(server, retry.id, 120_000);
  check(checks, "a retry run finishes the rest", retried.status === "completed" && (await allCompleted(server, datasetId, run.total_evaluations)), retried);
  return { checks, figures: { grace_ms: graceMs, exit_ms: exitMs, results_kept: kept, retried_cells: retry.total_evaluations } };
}

/**
 * `npm start` (scripts/start.mjs) owns the server it starts: stopping it — politely or with SIGKILL —
 * stops the server, so no unowned server keeps the port and the database.
 */
export async function startScriptOwnsServer(port: number, databasePath: string) {
  const { spawn } = await import("node:child_process");
  const checks: Check[] = [];
  const figures: Record<string, number> = {};
  const listening = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200;
    } catch {
      return false;
    }
  };
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    const child = spawn(process.execPath, ["scripts/start.mjs"], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: String(port), HOSTNAME_BIND: "127.0.0.1", DATABASE_PATH: databasePath, LOG_LEVEL: "warn" },
      stdio: "ignore",
    });
    try {
      await waitUntil("npm start serves", listening, 60_000);
      const t = Date.now();
      child.kill(signal);
      const stopped = await waitUntil(`the server stops after ${signal} to npm start`, async () => !(await listening()), 20_000).then(
        () => true,
        () => false,
      );
      figures[`${signal.toLowerCase()}_stop_ms`] = Date.now() - t;
      check(checks, `${signal} to npm start's process stops the server it started`, stopped);
    } finally {
      child.kill("SIGKILL");
    }
    // Whatever happened, leave nothing listening for the next section.
    await waitUntil("port free", async () => !(await listening()), 30_000).catch(() => undefined);
  }
  return { checks, figures };
}
