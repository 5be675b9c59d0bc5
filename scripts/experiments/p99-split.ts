/**
 * Experiment for issue 11 item 9 (read p99 under load): would taking the run's work off the serving
 * process bring the 20 readers' p99 under 200 ms? Tested without touching the runner: two production
 * servers on one SQLite file (WAL), the run started through B, the readers (and the import) on A.
 *
 *   npx tsx scripts/experiments/p99-split.ts --scenario <name> [--short] [--seconds 60] [--repeat 2]
 *
 * Scenarios (the readers always hit A; A is the only process profiled when RELIABILITY_NODE_ARGS is set):
 *   single            run + import + readers on A (today's `load` section)
 *   split             run on B; import + readers on A
 *   single-noimport   run + readers on A
 *   split-noimport    run on B; readers on A
 *   import-only       import + readers on A, no run
 *   floor             readers only on A, for --seconds, on the dataset after its 10k-cell run finished
 *
 * Options: --think-ms N (each reader pauses N ms between reads), --reads health (every read is
 * GET /api/health: the per-request cost of Next.js and HTTP alone).
 *
 * Same sizes and read mix as scripts/reliability/load-and-faults.ts `loadSection`. The dataset, metrics
 * and the small finished run are prepared by a separate process that is then stopped, so A's profile
 * and CPU figures cover the measured window (plus a 3 s warm-up) only. Prints one JSON line per run and
 * appends it to /tmp/p99-split.jsonl.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../project.mjs";
import { addMetrics, agentConversations, importDataset, percentile, startRun, waitFinal } from "../reliability/data";
import { TurnscopeServer } from "../reliability/server";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const scenario = arg("scenario", "single");
const short = process.argv.includes("--short");
const floorSeconds = Number(arg("seconds", "60"));
const repeat = Number(arg("repeat", "1"));
/** Pause of each reader between its reads (0: the load section's readers, which never pause). */
const thinkMs = Number(arg("think-ms", "0"));
/** `--reads health`: every read is GET /api/health, the lightest route: what Next + HTTP cost per request. */
const readMix = arg("reads", "load");
const basePort = Number(process.env.RELIABILITY_PORT ?? 3630);
const sizes = short ? { loadConversations: 250, clients: 20, importConversations: 500 } : { loadConversations: 2_500, clients: 20, importConversations: 5_000 };
const scenarios = ["single", "split", "single-noimport", "split-noimport", "import-only", "floor"];
if (!scenarios.includes(scenario)) throw new Error(`--scenario must be one of ${scenarios.join(", ")}`);
const withRun = scenario !== "import-only" && scenario !== "floor";
const withImport = ["single", "split", "import-only"].includes(scenario);
const runOnB = scenario.startsWith("split");

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}
const pidOf = (server: TurnscopeServer) => (server as unknown as { child?: ChildProcess }).child?.pid;

/** Start a server, profiling it only when asked (RELIABILITY_NODE_ARGS applies to A alone). */
async function startServer(port: number, databasePath: string, env: Record<string, string>, profiled: boolean) {
  const nodeArgs = process.env.RELIABILITY_NODE_ARGS;
  if (!profiled) delete process.env.RELIABILITY_NODE_ARGS;
  const server = new TurnscopeServer({ port, databasePath, env });
  try {
    await server.start();
  } finally {
    if (nodeArgs !== undefined) process.env.RELIABILITY_NODE_ARGS = nodeArgs;
  }
  return server;
}

async function once() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-p99-"));
  const db = path.join(dir, "main.db");
  const double = await startJudgeDouble({ logger: () => {} });
  const env = { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-p99-experiment", JUDGE_TIMEOUT_MS: "2000", JUDGE_MAX_RETRIES: "2" };
  double.setLatency({ min: 1, max: 4 });

  // Preparation by a throw-away process: the dataset, its metrics, the small finished run the readers page through.
  const prep = await startServer(basePort + 2, db, env, false);
  const { datasetId } = await importDataset(prep, `load-${Date.now()}`, agentConversations(sizes.loadConversations, "load"));
  const metrics = await addMetrics(prep, datasetId);
  const small = await startRun(prep, { dataset_id: datasetId, pipeline_node_id: metrics.msg, entity_type: null, execution_mode: "async", batch_size: 8 });
  await waitFinal(prep, small.id, 120_000);
  let watchedId = small.id;
  if (scenario === "floor") {
    // The floor is measured on the end state of the other scenarios: all 10k results written.
    const big = await startRun(prep, { dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
    await waitFinal(prep, big.id, 15 * 60_000);
    watchedId = big.id;
  }
  await prep.stop("SIGTERM");

  const a = await startServer(basePort, db, env, true);
  const b = runOnB ? await startServer(basePort + 1, db, env, false) : undefined;
  const runner = b ?? a;

  const latencies: number[] = [];
  /** Start time (performance.now) and latency of every recorded read, to split them by the import window. */
  const timeline: Array<[number, number]> = [];
  let importWindow: [number, number] | undefined;
  const byKind: Record<string, number[]> = {};
  const failures: string[] = [];
  let recording = false;
  let running = true;
  let runId = watchedId;
  const loadReads = [
    () => `/api/datasets/${datasetId}/grid?level=conversation&limit=50&offset=${Math.floor(Math.random() * sizes.loadConversations)}`,
    () => `/api/datasets/${datasetId}/grid?level=step&limit=50&offset=${Math.floor(Math.random() * sizes.loadConversations * 2)}`,
    () => `/api/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=20`,
    () => `/api/evaluation-pipeline-executions/${runId}`,
    () => `/api/evaluation-pipeline-executions/${small.id}/results?limit=100&offset=${Math.floor(Math.random() * sizes.loadConversations)}`,
    () => `/api/datasets?limit=20`,
  ];
  const reads = readMix === "health" ? [() => "/api/health"] : loadReads;
  const client = async () => {
    while (running) {
      const kind = Math.floor(Math.random() * reads.length);
      const urlPath = reads[kind]();
      try {
        const t = performance.now();
        const res = await fetch(`${a.baseUrl}${urlPath}`);
        await res.arrayBuffer();
        const ms = performance.now() - t;
        if (recording) {
          latencies.push(ms);
          timeline.push([t, ms]);
          (byKind[urlPath.split("?")[0].replace(/\d+/g, "{id}")] ??= []).push(ms);
          if (res.status !== 200) failures.push(`${res.status} ${urlPath}`);
        }
      } catch (e) {
        if (recording) failures.push(`${(e as Error).message} ${urlPath}`);
      }
      if (thinkMs) await new Promise((r) => setTimeout(r, thinkMs));
    }
  };
  // Warm-up: route modules loaded, JIT warm, caches as in a server that has been up a while.
  const clients = Array.from({ length: sizes.clients }, client);
  await new Promise((r) => setTimeout(r, 3_000));

  const loop = monitorEventLoopDelay({ resolution: 10 });
  const logStartA = a.logs.length;
  const cpuA0 = cpuSeconds(pidOf(a));
  const cpuB0 = cpuSeconds(b && pidOf(b));
  const load0 = os.loadavg()[0];
  const harness0 = process.cpuUsage();
  loop.enable();
  recording = true;
  const started = Date.now();
  let runMs: number | null = null;
  let importMs: number | null = null;
  let cells: number | null = null;
  const importPromise = withImport
    ? (async () => {
        const data = agentConversations(sizes.importConversations, "imp");
        const t = performance.now();
        const res = await importDataset(a, `load-import-${Date.now()}`, data);
        importWindow = [t, performance.now()];
        importMs = Math.round(importWindow[1] - t);
        return res;
      })()
    : undefined;
  if (withRun) {
    const run = await startRun(runner, { dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
    runId = run.id;
    // Polled on the runner's process, as a UI on B would; the readers on A also read this execution.
    const final = await waitFinal(runner, run.id, 15 * 60_000);
    runMs = Date.now() - started;
    cells = final.successful_evaluations;
    if (final.status !== "completed") failures.push(`run ended ${final.status}`);
  } else if (!withImport) {
    await new Promise((r) => setTimeout(r, floorSeconds * 1000));
  }
  await importPromise;
  recording = false;
  const wallS = (Date.now() - started) / 1000;
  loop.disable();
  const harness = process.cpuUsage(harness0);
  const cpuA = cpuSeconds(pidOf(a)) - cpuA0;
  const cpuB = b ? cpuSeconds(pidOf(b)) - cpuB0 : null;
  running = false;
  await Promise.all(clients);

  // The route wrapper logs each request's handler time: the rest of a client's latency is queueing.
  const handlerMs: number[] = [];
  const handlerByKind: Record<string, number[]> = {};
  for (const l of a.logs.slice(logStartA)) {
    let o: { msg?: string; method?: string; path?: string; ms?: number };
    try {
      o = JSON.parse(l) as typeof o;
    } catch {
      continue;
    }
    if (o.msg !== "request" || o.method !== "GET") continue;
    handlerMs.push(o.ms ?? 0);
    (handlerByKind[(o.path ?? "").replace(/\d+/g, "{id}")] ??= []).push(o.ms ?? 0);
  }
  const busy = [...a.logs, ...(b?.logs ?? [])].filter((l) => /SQLITE_BUSY|database is locked/i.test(l)).length;
  await b?.stop("SIGTERM");
  await a.stop("SIGTERM");
  await double.close();
  fs.rmSync(dir, { recursive: true, force: true });

  // Reads in flight at any moment of the import vs the others: what the import alone does to the tail.
  const overlaps = ([t, ms]: [number, number]) => importWindow !== undefined && t < importWindow[1] && t + ms > importWindow[0];
  const duringImport = timeline.filter(overlaps).map(([, ms]) => ms);
  const outsideImport = timeline.filter((x) => !overlaps(x)).map(([, ms]) => ms);
  const result = {
    scenario,
    mode: short ? "short" : "full",
    reads_mix: readMix,
    think_ms: thinkMs,
    at: new Date(started).toISOString(),
    reads: latencies.length,
    reads_per_s: Math.round(latencies.length / wallS),
    read_errors: failures.length,
    first_errors: failures.slice(0, 3),
    sqlite_busy: busy,
    p50_ms: percentile(latencies, 50),
    p95_ms: percentile(latencies, 95),
    p99_ms: percentile(latencies, 99),
    p99_ms_by_endpoint: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, percentile(v, 99)])),
    p50_ms_by_endpoint: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, percentile(v, 50)])),
    handler_p50_ms: percentile(handlerMs, 50),
    handler_p99_ms: percentile(handlerMs, 99),
    handler_p50_ms_by_endpoint: Object.fromEntries(Object.entries(handlerByKind).map(([k, v]) => [k, percentile(v, 50)])),
    cpu_a_ms_per_read: Math.round((cpuA / Math.max(1, latencies.length)) * 1e4) / 10,
    window_s: Math.round(wallS * 10) / 10,
    reads_during_import: duringImport.length,
    p50_ms_during_import: percentile(duringImport, 50),
    max_ms_during_import: duringImport.length ? Math.round(Math.max(...duringImport)) : null,
    p99_ms_outside_import: percentile(outsideImport, 99),
    run_ms: runMs,
    cells,
    import_ms: importMs,
    cpu_a_per_s: Math.round((cpuA / wallS) * 100) / 100,
    cpu_b_per_s: cpuB === null ? null : Math.round((cpuB / wallS) * 100) / 100,
    cpu_harness_per_s: Math.round(((harness.user + harness.system) / 1e6 / wallS) * 100) / 100,
    harness_loop_delay_p99_ms: Math.round(loop.percentile(99) / 1e4) / 100,
    load_avg_1m: [Math.round(load0 * 100) / 100, Math.round(os.loadavg()[0] * 100) / 100],
    a_pid: pidOf(a),
  };
  console.log(JSON.stringify(result));
  fs.appendFileSync("/tmp/p99-split.jsonl", JSON.stringify(result) + "\n");
}

async function main() {
  ensureBuild();
  for (let i = 0; i < repeat; i++) await once();
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
