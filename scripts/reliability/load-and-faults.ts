import fs from "node:fs";
/**
 * Load: concurrent readers while a large async run and an import are in progress.
 * Faults: a run against a judge that rate-limits, errors, hangs and garbles, then a clean retry.
 */
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { addMetrics, agentConversations, check, gridCells, importDataset, percentile, startRun, waitFinal, type Check } from "./data";
import type { TurnscopeServer } from "./server";

export type Sizes = { loadConversations: number; clients: number; importConversations: number; faultConversations: number };

export async function loadSection(server: TurnscopeServer, double: JudgeDouble, sizes: Sizes) {
  const checks: Check[] = [];
  double.reset();
  double.setLatency({ min: 1, max: 4 });
  const { datasetId } = await importDataset(server, `load-${Date.now()}`, agentConversations(sizes.loadConversations, "load"));
  const metrics = await addMetrics(server, datasetId);
  // A small finished execution whose results the readers fetch while the big one runs.
  const small = await startRun(server, { dataset_id: datasetId, pipeline_node_id: metrics.msg, entity_type: null, execution_mode: "async", batch_size: 8 });
  await waitFinal(server, small.id, 120_000);

  const logStart = server.logs.length;
  const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
  const cells = sizes.loadConversations * 4;
  check(checks, "the run plans one cell per (metric, entity)", run.total_evaluations === cells, run);
  const importPromise = importDataset(server, `load-import-${Date.now()}`, agentConversations(sizes.importConversations, "imp"));

  const latencies: number[] = [];
  const byKind: Record<string, number[]> = {};
  const failures: string[] = [];
  let running = true;
  const reads = [
    () => `/api/datasets/${datasetId}/grid?level=conversation&limit=50&offset=${Math.floor(Math.random() * sizes.loadConversations)}`,
    () => `/api/datasets/${datasetId}/grid?level=step&limit=50&offset=${Math.floor(Math.random() * sizes.loadConversations * 2)}`,
    () => `/api/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=20`,
    () => `/api/evaluation-pipeline-executions/${run.id}`,
    () => `/api/evaluation-pipeline-executions/${small.id}/results?limit=100&offset=${Math.floor(Math.random() * sizes.loadConversations)}`,
    () => `/api/datasets?limit=20`,
  ];
  const client = async () => {
    while (running) {
      const kind = Math.floor(Math.random() * reads.length);
      const path = reads[kind]();
      try {
        // Time to the last byte, without parsing: the client's own work is not the server's latency.
        const t = performance.now();
        const res = await fetch(`${server.baseUrl}${path}`, { headers: server.authHeaders() });
        await res.arrayBuffer();
        const ms = performance.now() - t;
        latencies.push(ms);
        (byKind[path.split("?")[0].replace(/\d+/g, "{id}")] ??= []).push(ms);
        if (res.status !== 200) failures.push(`${res.status} ${path}`);
      } catch (e) {
        failures.push(`${(e as Error).message} ${path}`);
      }
    }
  };
  const clients = Array.from({ length: sizes.clients }, client);
  const started = Date.now();
  const final = await waitFinal(server, run.id, 15 * 60_000);
  const runMs = Date.now() - started;
  const imported = await importPromise;
  running = false;
  await Promise.all(clients);

  // The store refusing work under contention: SQLite's busy lock; PostgreSQL's deadlocks, serialisation
  // failures, lock timeouts and exhausted connection slots.
  const contention =
    server.store === "postgres"
      ? /deadlock detected|could not serialize|lock timeout|canceling statement due to|too many clients|remaining connection slots|timeout exceeded when trying to connect/i
      : /SQLITE_BUSY|database is locked/i;
  const busy = server.logs.slice(logStart).filter((l) => contention.test(l));
  // RELIABILITY_SERVER_LOG=<file>: the server's log lines of this section (one JSON request line per read, with its handler ms).
  if (process.env.RELIABILITY_SERVER_LOG) fs.writeFileSync(process.env.RELIABILITY_SERVER_LOG, server.logs.slice(logStart).join("\n") + "\n");
  check(checks, "no reader got an error", failures.length === 0, failures.slice(0, 5));
  check(checks, server.store === "postgres" ? "no deadlock, lock timeout or connection exhaustion in the server log" : "no SQLITE_BUSY in the server log", busy.length === 0, busy.slice(0, 3));
  check(checks, "the run completed every cell", final.status === "completed" && final.successful_evaluations === final.total_evaluations, final);
  check(checks, "the import during the run succeeded", imported.status === 201);

  const results = await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}/results`);
  const keys = (results.json?.results ?? []) as Array<{ pipeline_node_id: number; entity_type: string; entity_id: number }>;
  const unique = new Set(keys.map((r) => `${r.pipeline_node_id}:${r.entity_type}:${r.entity_id}`));
  check(checks, "every cell has exactly one result (none lost, none duplicated)", keys.length === final.total_evaluations && unique.size === keys.length, { results: keys.length, unique: unique.size, total: final.total_evaluations });
  const p99 = percentile(latencies, 99);
  return {
    checks,
    figures: {
      cells: final.total_evaluations,
      clients: sizes.clients,
      reads: latencies.length,
      read_errors: failures.length,
      store: server.store,
      [server.store === "postgres" ? "lock_or_pool_errors" : "sqlite_busy"]: busy.length,
      p50_ms: percentile(latencies, 50),
      p95_ms: percentile(latencies, 95),
      p99_ms: p99,
      p99_target_ms: 200,
      p99_ms_by_endpoint: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, percentile(v, 99)])),
      p50_ms_by_endpoint: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, percentile(v, 50)])),
      p99_under_target: p99 < 200,
      run_ms: runMs,
      cells_per_second: Math.round((final.total_evaluations / runMs) * 1000),
      results: keys.length,
      duplicates: keys.length - unique.size,
      concurrent_import_conversations: sizes.importConversations,
    },
  };
}

export async function faultSection(server: TurnscopeServer, double: JudgeDouble, sizes: Sizes) {
  const checks: Check[] = [];
  double.reset();
  double.setLatency({ min: 1, max: 5 });
  const { datasetId } = await importDataset(server, `faults-${Date.now()}`, agentConversations(sizes.faultConversations, "f"));
  await addMetrics(server, datasetId);
  double.setFaults({ rate_limit: 0.2, server_error: 0.1, hang: 0.05, malformed: 0.05 }, 7);
  const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
  const final = await waitFinal(server, run.id, 15 * 60_000);
  const stats = double.stats();
  double.setFaults(null);

  const results = (await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}/results`)).json;
  const rows = (results?.results ?? []) as Array<{ status: string; error: string | null }>;
  const failedWithoutReason = rows.filter((r) => r.status === "failed" && !r.error);
  check(checks, "the run ended (completed or failed), nothing stuck in processing", final.status === "completed" || final.status === "failed", final.status);
  check(checks, "completed + failed = total", final.successful_evaluations + final.failed_evaluations === final.total_evaluations, final);
  check(checks, "every cell has a result", rows.length === final.total_evaluations, { rows: rows.length, total: final.total_evaluations });
  check(checks, "every failed cell says why", failedWithoutReason.length === 0);
  const active = await server.request("GET", `/api/evaluation-pipeline-executions?dataset_id=${datasetId}&status=processing`);
  check(checks, "no execution left processing", active.headers.get("x-total-count") === "0");

  let retryRun: { status: string; total: number; completed: number } | null = null;
  if (final.failed_evaluations > 0) {
    const retry = await startRun(server, { dataset_id: datasetId, retry: true, execution_mode: "async", batch_size: 16 });
    const retried = await waitFinal(server, retry.id, 10 * 60_000);
    retryRun = { status: retried.status, total: retry.total_evaluations, completed: retried.successful_evaluations };
    check(checks, "the retry run evaluates exactly the failed cells", retry.total_evaluations === final.failed_evaluations, { retry: retry.total_evaluations, failed: final.failed_evaluations });
    check(checks, "the retry run completes them once the faults stop", retried.status === "completed", retried);
  } else {
    // Every cell survived the faults through its own retries: a retry run has nothing to do and is refused (409).
    const retry = await server.request("POST", "/api/evaluation-pipeline-executions/run", { dataset_id: datasetId, retry: true });
    check(checks, "with no failed cell a retry is refused (409) and records no run", retry.status === 409, { status: retry.status });
  }
  const levels = await Promise.all(["conversation", "message", "step"].map((l) => gridCells(server, datasetId, l)));
  const statuses = levels.flatMap((m) => [...m.values()]);
  check(checks, "every cell of the dataset is now completed", statuses.length === final.total_evaluations && statuses.every((s) => s === "completed"), { cells: statuses.length });
  return {
    checks,
    figures: {
      cells: final.total_evaluations,
      fault_mix: { rate_limit: 0.2, server_error: 0.1, hang: 0.05, malformed: 0.05 },
      judge_requests: stats.count,
      judge_replies_by_kind: stats.byKind,
      first_run: { status: final.status, completed: final.successful_evaluations, failed: final.failed_evaluations },
      retry_run: retryRun,
    },
  };
}
