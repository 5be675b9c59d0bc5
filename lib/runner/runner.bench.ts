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
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { getDb } from "@/db/sqlite-database";
import { createNode } from "@/db/repositories/metrics";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import { startExecution, subscribe, waitForExecution, type RunnerDeps } from "@/lib/runner";
import { getExecution } from "@/lib/results/execution-history";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heapMb = () => {
  gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
};

/** A dataset of `conversations` × 10 assistant turns, with one message-level metric. */
async function seed(conversations: number): Promise<{ datasetId: number; nodeId: number }> {
  const dataset = await createDataset({ name: `runner bench ${conversations}`, userId: "bench" });
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content) values (?, ?, ?, ?, ?)");
  sqlite.transaction(() => {
    for (let i = 0; i < conversations; i++) {
      const c = Number(conv.run(dataset.id, i, `c${i}`).lastInsertRowid);
      for (let t = 0; t < 10; t++) {
        msg.run(c, dataset.id, 2 * t, "user", `Question ${t} about order ${i}-${conversations}?`);
        msg.run(c, dataset.id, 2 * t + 1, "assistant", `Answer ${t}: order ${i}-${conversations} ships tomorrow.`);
      }
    }
  })();
  const node = await createNode(dataset.id, {
    name: "helpful",
    evaluationLevel: "message",
    prompt: "Rate @CURRENT_MESSAGE.output given @CURRENT_MESSAGE.input",
    outputType: "progress",
    templateVariables: ["@CURRENT_MESSAGE.output", "@CURRENT_MESSAGE.input"],
    isAdvanced: true,
  });
  return { datasetId: dataset.id, nodeId: node.id };
}

/** An AI SDK model answering in-process after `delayMs` (0: at once). */
function localModel(delayMs: number): LanguageModelV3 {
  const text = JSON.stringify({ score: 0.8, reasoning: "fine" });
  const answer = (): LanguageModelV3GenerateResult => ({
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 12, text: 12, reasoning: 0 },
    },
    warnings: [],
  });
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: `bench-${delayMs}`,
    supportedUrls: {},
    doGenerate: (options: LanguageModelV3CallOptions) =>
      delayMs === 0
        ? Promise.resolve(answer())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => resolve(answer()), delayMs);
            options.abortSignal?.addEventListener("abort", () => {
              clearTimeout(timer);
              reject(options.abortSignal?.reason);
            });
          }),
    doStream: () => Promise.reject(new Error("not used")),
  };
}

async function run(conversations: number, batch: number, deps: RunnerDeps) {
  const { datasetId, nodeId } = await seed(conversations);
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
