/**
 * Benchmark of the execution engine, end to end (plan → judge through the AI SDK → persist → stream):
 *  - instant: 10,000 message-level evaluations with a judge that answers at once (an in-process AI SDK
 *    model), async batch 32, every event consumed by a subscriber — target ≥ 1,000 evaluations/s;
 *  - latency: 2,000 evaluations with a judge that takes 100 ms, batch 32 — ideal 6.25 s, target ≤ 1.15×;
 *  - http: 2,000 evaluations against the judge test double over real HTTP (another process);
 *  - memory: heap after GC before and after each run (results live in SQLite, not in memory).
 * Run with `npm run bench`; no thresholds fail the run, the figures are to read.
 */
import { spawn } from "node:child_process";
import v8 from "node:v8";
import vm from "node:vm";
import { resetConfig } from "@/lib/config";
import { startExecution, subscribe, waitForExecution, type RunnerDeps } from "@/lib/runner";
import { getExecution } from "@/lib/results/execution-history";
import { localModel, seedBenchDataset } from "@/bench/support/setup";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heapMb = () => {
  gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
};


async function run(conversations: number, batch: number, deps: RunnerDeps) {
  const { datasetId, nodeId } = await seedBenchDataset(conversations);
  const heapBefore = heapMb();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const execution = await startExecution(
    { dataset_id: datasetId, pipeline_node_id: nodeId, retry: false, execution_mode: "async", batch_size: batch, no_cache: true },
    "bench",
    deps,
  );
  let streamed = 0;
  const unsubscribe = subscribe(execution.id, (e) => {
    if (e.event === "complete" || e.event === "error") streamed++;
  });
  await waitForExecution(execution.id);
  const ms = performance.now() - started;
  unsubscribe();
  const used = process.cpuUsage(cpu);
  const final = await getExecution(execution.id);
  return {
    evaluations: final.total_evaluations,
    completed: final.successful_evaluations,
    streamed_events: streamed,
    wall_ms: Math.round(ms),
    evaluations_per_second: Math.round((final.total_evaluations / ms) * 1000),
    cpu_ms_per_evaluation: Math.round(((used.user + used.system) / 1000 / final.total_evaluations) * 100) / 100,
    heap_growth_mb: Math.round((heapMb() - heapBefore) * 10) / 10,
  };
}

async function main() {
  process.env.JUDGE_MAX_CONCURRENCY = "32";
  resetConfig();
  // A first small run warms up modules, JIT and statement caches, so the heap figures below are the runs' own.
  await run(50, 32, { judge: { languageModel: () => localModel(0) } });
  const instantSmall = await run(200, 32, { judge: { languageModel: () => localModel(0) } });
  const instant = await run(1_000, 32, { judge: { languageModel: () => localModel(0) } });
  const latency = await run(200, 32, { judge: { languageModel: () => localModel(100) } });
  const idealMs = (latency.evaluations / 32) * 100;

  // The same engine against the judge test double over real HTTP, in its own process.
  const double = spawn(process.execPath, ["--import", "tsx", "lib/testing/judge-double/cli.ts", "--port", "0"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const url = await new Promise<string>((resolve) =>
    double.stdout!.on("data", (d: Buffer) => {
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString());
      if (m) resolve(m[0]);
    }),
  );
  process.env.OPENAI_BASE_URL = `${url}/v1`;
  resetConfig();
  const http = await run(200, 32, {});
  double.kill("SIGTERM");

  console.log(
    "BENCH_RESULT " +
      JSON.stringify({
        runner_instant_judge_10k: { ...instant, target_evaluations_per_second: 1000, meets_target: instant.evaluations_per_second >= 1000 },
        runner_instant_judge_2k: instantSmall,
        runner_100ms_judge_2k_batch32: {
          ...latency,
          ideal_ms: idealMs,
          ratio_to_ideal: Math.round((latency.wall_ms / idealMs) * 100) / 100,
          target_ratio: 1.15,
          meets_target: latency.wall_ms <= idealMs * 1.15,
        },
        runner_http_judge_double_2k: http,
        runner_memory: {
          heap_growth_mb_2k: instantSmall.heap_growth_mb,
          heap_growth_mb_10k: instant.heap_growth_mb,
          note: "heap after GC, before vs after a run: flat means no growth per evaluation",
        },
      }),
  );
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
