/**
 * Queued runs on PostgreSQL scale with worker processes: one run of CELLS message cells against the
 * judge test double answering in 1 s, worked by 1, 2 and 4 `npm run worker` processes
 * (scripts/worker.ts), 16 judge calls in flight per process: JUDGE_MAX_CONCURRENCY, the model's ceiling for
 * the whole cluster since 2026-11-25, is set to 16 × workers (as an operator adding workers for a provider
 * that allows it would), and each run starts its workers afresh with it (with one ceiling of 16 for all,
 * 2 and 4 workers were exactly as fast as one: 1.01× and 0.99×), warmed up by a short run. This process only enqueues and waits (it works no batch). The run's
 * batch_size (256) is above what the workers can use, so the processes are the limit. Ideal: CELLS /
 * (16 × workers) seconds; the figures are the execution's duration_ms and the speed-up against one
 * worker (goal: 1.9× with 2, 3.6× with 4). Needs PostgreSQL's programs (a throwaway PostgreSQL test server is started).
 * BENCH_CLUSTER_CELLS, BENCH_CLUSTER_WORKERS (e.g. "1,4"), BENCH_WORKER_CONCURRENCY and BENCH_PROFILE_DIR
 * (a V8 CPU profile per worker) vary it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { findPgBinDir, startPgTestServer } from "../scripts/pg-test-server.mjs";
import { cpuSeconds, treeCpuSeconds } from "./support/proc";

const CELLS = Number(process.env.BENCH_CLUSTER_CELLS ?? 640);
const PER_PROCESS = 16;
const JUDGE_MS = 1000;
/** Batches a worker holds at once (WORKER_CONCURRENCY, default 4: 40 cells for its 16 calls in flight). */
const BATCHES_PER_WORKER = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 4);
const root = path.resolve(import.meta.dirname, "..");

/** CPU seconds of every PostgreSQL server process (Linux /proc). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") total += cpuSeconds(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const callTimes = (requests: Array<{ at: string; path: string }>) => requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => Date.parse(r.at));
function firstCallAfterStart(startedAt: string | null | undefined, requests: Array<{ at: string; path: string }>): number | null {
  const times = callTimes(requests);
  return startedAt && times.length ? Math.min(...times) - Date.parse(startedAt) : null;
}
function doneAfterLastAnswer(completedAt: string | null | undefined, requests: Array<{ at: string; path: string }>): number | null {
  const times = callTimes(requests);
  return completedAt && times.length ? Date.parse(completedAt) - (Math.max(...times) + JUDGE_MS) : null;
}

async function main() {
  if (!findPgBinDir()) {
    console.error("cluster bench skipped: no PostgreSQL programs (install Debian's postgresql package or set PG_BINDIR)");
    console.log(`BENCH_RESULT ${JSON.stringify({ cluster_runs: { skipped: "no PostgreSQL programs" } })}`);
    return;
  }
  const cluster = await startPgTestServer();
  // Before the first import of the store: the repositories pick PostgreSQL from DATABASE_URL.
  process.env.DATABASE_URL = cluster.url;
  process.env.LOG_LEVEL = "warn";
  const { startJudgeDouble } = await import("@/lib/testing/judge-double/server");
  const double = await startJudgeDouble({ logger: () => {}, latencyMs: JUDGE_MS });
  process.env.OPENAI_BASE_URL = double.baseURL;
  const { seedMessageCells } = await import("@/lib/testing/seed/rows");
  const { enqueueOnly } = await import("@/lib/runner/cluster-run");
  const { runBody } = await import("@/lib/schemas/executions");
  const { startExecution, waitForExecution } = await import("@/lib/runner");
  const { getExecution } = await import("@/lib/results/execution-history");
  const { closeNotifiers } = await import("@/lib/cluster/notify");
  const { closeClusterPools } = await import("@/lib/cluster/pool");
  const { stopQueue } = await import("@/lib/jobs/cell-queue");
  const { closePgDb } = await import("@/db/pg");
  enqueueOnly();

  const workers: ChildProcess[] = [];
  const stopWorkers = async () => {
    const stopping = workers.splice(0);
    for (const w of stopping) w.kill("SIGTERM");
    await Promise.all(stopping.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.on("exit", resolve)))));
  };
  const startWorker = (modelCeiling: number) =>
    new Promise<ChildProcess>((resolve, reject) => {
      // BENCH_PROFILE_DIR: each worker writes a V8 CPU profile there when it exits.
      const profile = process.env.BENCH_PROFILE_DIR;
      const [command, args] = profile
        ? [process.execPath, ["--cpu-prof", "--cpu-prof-dir", profile, "--conditions=react-server", "--import", "tsx", "scripts/worker.ts"]]
        : [path.join(root, "node_modules/.bin/tsx"), ["--conditions=react-server", "scripts/worker.ts"]];
      const child = spawn(command, args, {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: "info", JUDGE_MAX_CONCURRENCY: String(modelCeiling), WORKER_CONCURRENCY: String(BATCHES_PER_WORKER), OPENAI_API_KEY: "sk-bench" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      workers.push(child);
      child.stdout!.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes('"worker started"')) resolve(child);
      });
      child.on("exit", (code) => reject(new Error(`worker exited (${code}) before it started`)));
    });

  const figures: Record<string, unknown> = { machine: { cpus: os.cpus().length, node: process.version }, cells: CELLS, judge_latency_ms: JUDGE_MS, per_process_concurrency: PER_PROCESS, batches_per_worker: BATCHES_PER_WORKER };
  try {
    const { datasetId } = await seedMessageCells(CELLS, "cluster bench");
    // A short run before each measured one, so the workers started for it have connected, created their
    // coordination state and compiled their hot paths (a fresh worker's first call came ~1.2 s late).
    const warmUp = await seedMessageCells(4 * PER_PROCESS, "cluster bench warm-up");

    const runs: Record<string, Record<string, number | null>> = {};
    for (const n of (process.env.BENCH_CLUSTER_WORKERS ?? "1,2,4").split(",").map(Number)) {
      await stopWorkers();
      await Promise.all(Array.from({ length: n }, () => startWorker(PER_PROCESS * n)));
      double.setLatency(50);
      const warm = await startExecution(runBody.parse({ dataset_id: warmUp.datasetId, execution_mode: "async", batch_size: 256, no_cache: true }), "bench");
      await waitForExecution(warm.id);
      double.reset();
      double.setLatency(JUDGE_MS);
      const cpuBefore = { workers: workers.reduce((t, w) => t + treeCpuSeconds(w.pid), 0), postgres: postgresCpuSeconds(), load: os.loadavg()[0] };
      // no_cache: every run asks the judge again, as the first did.
      const started = await startExecution(runBody.parse({ dataset_id: datasetId, execution_mode: "async", batch_size: 256, no_cache: true }), "bench");
      await waitForExecution(started.id);
      const done = await getExecution(started.id);
      const duration = done.duration_ms ?? 0;
      runs[`workers_${n}`] = {
        duration_ms: duration,
        cells_per_second: Math.round((done.successful_evaluations / (duration / 1000)) * 10) / 10,
        ideal_ms: Math.ceil(CELLS / (PER_PROCESS * n)) * JUDGE_MS,
        succeeded: done.successful_evaluations,
        peak_in_flight: double.stats().peakInFlight,
        // Cores the workers and PostgreSQL kept busy during the run, and the machine's load when it began.
        worker_cores: Math.round(((workers.reduce((t, w) => t + treeCpuSeconds(w.pid), 0) - cpuBefore.workers) / (duration / 1000)) * 100) / 100,
        postgres_cores: Math.round(((postgresCpuSeconds() - cpuBefore.postgres) / (duration / 1000)) * 100) / 100,
        load_average_at_start: Math.round(cpuBefore.load * 100) / 100,
        // Where the time beyond the ideal goes: before the first judge call, and after the last call's
        // answer (1 s after it was sent) until the run was final.
        first_call_after_start_ms: firstCallAfterStart(done.started_at, double.requests),
        done_after_last_answer_ms: doneAfterLastAnswer(done.completed_at, double.requests),
      };
      console.error(`${n} worker(s)`, JSON.stringify(runs[`workers_${n}`]));
    }
    figures.runs = runs;
    const speedup = (n: number) => (runs.workers_1 && runs[`workers_${n}`] ? Math.round(((runs.workers_1.duration_ms ?? 0) / (runs[`workers_${n}`].duration_ms ?? 1)) * 100) / 100 : null);
    const [two, four] = [speedup(2), speedup(4)];
    figures.speedup_2 = two;
    figures.speedup_4 = four;
    figures.goal = { speedup_2: 1.9, speedup_4: 3.6 };
    figures.met = (two ?? 0) >= 1.9 && (four ?? 0) >= 3.6;
  } finally {
    await stopWorkers();
    await stopQueue({ graceMs: 0 }).catch(() => undefined);
    await closeNotifiers().catch(() => undefined);
    await closeClusterPools().catch(() => undefined);
    await closePgDb().catch(() => undefined);
    await double.close();
    await cluster.stop();
  }
  console.log(`BENCH_RESULT ${JSON.stringify({ cluster_runs: figures })}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
