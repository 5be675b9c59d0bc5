/**
 * Judge alignment at size (issue 39): 200 labelled conversations × 5 folds × 3 strategies (few_shot,
 * rewrite, threshold), against an in-process judge model that answers after JUDGE_DELAY_MS (default 0:
 * the server's own work per call; 50: how well calls overlap). Reported beside an ordinary run of the same
 * 200 cells on the engine: calls, wall time, calls/s and CPU per call, so alignment's per-call efficiency
 * reads against the engine's usual one.
 */
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { getDb } from "@/db/sqlite-database";
import { createNode } from "@/db/repositories/metrics";
import { getAlignment, startAlignment, waitForAlignment } from "@/lib/align";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import { createLabel } from "@/lib/labels";
import { getExecution } from "@/lib/results/execution-history";
import { startExecution, waitForExecution } from "@/lib/runner";

const N = 200;
const DELAYS = (process.env.ALIGN_BENCH_DELAYS ?? "0,50").split(",").map(Number);

/** A judge whose score follows the conversation's words ("resolved" scores high), and an optimiser that returns a rubric. */
function model(delayMs: number): LanguageModelV3 {
  const answer = (prompt: string): LanguageModelV3GenerateResult => {
    const optimiser = prompt.includes("You improve the rubric");
    // The judged item only, not the examples a few-shot prompt quotes (this model does not follow them).
    const item = prompt.split("=== End of examples ===").pop() ?? prompt;
    const score = /refund issued/.test(item) ? 0.7 : /still waiting/.test(item) ? 0.4 : 0.55;
    const text = JSON.stringify(optimiser ? { rubric: "Resolved means the refund was issued. @HISTORY" } : { score, reasoning: "bench" });
    return {
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: Math.ceil(prompt.length / 4), noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 12, text: 12, reasoning: 0 } },
      warnings: [],
    };
  };
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: `align-bench-${delayMs}`,
    supportedUrls: {},
    doGenerate: (options: LanguageModelV3CallOptions) => {
      const prompt = JSON.stringify(options.prompt);
      return delayMs === 0 ? Promise.resolve(answer(prompt)) : new Promise((resolve) => setTimeout(() => resolve(answer(prompt)), delayMs));
    },
    doStream: () => Promise.reject(new Error("not used")),
  };
}

async function seed(tag: string): Promise<{ datasetId: number; nodeId: number }> {
  const dataset = await createDataset({ name: `align bench ${tag}`, userId: "bench" });
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content) values (?, ?, ?, ?, ?)");
  const ids: number[] = [];
  sqlite.transaction(() => {
    for (let i = 0; i < N; i++) {
      const c = Number(conv.run(dataset.id, i, `c${i}`).lastInsertRowid);
      ids.push(c);
      msg.run(c, dataset.id, 0, "user", `Order ${i}-${tag}: where is my refund?`);
      msg.run(c, dataset.id, 1, "assistant", i % 3 === 0 ? "Your refund issued today." : i % 3 === 1 ? "You are still waiting, sorry." : "Let me check the order.");
    }
  })();
  const node = await createNode(dataset.id, {
    name: "resolved",
    evaluationLevel: "conversation",
    prompt: "How well was the request resolved? @HISTORY",
    outputType: "progress",
    templateVariables: ["@HISTORY"],
    isAdvanced: true,
  });
  // People pass the conversations where the refund was issued, and one in five of the others.
  for (const [i, id] of ids.entries()) {
    await createLabel({ dataset_id: dataset.id, pipeline_node_id: node.id, entity_type: "conversation", entity_id: id, value: i % 3 === 0 || i % 5 === 0 ? 1 : 0 }, "bench");
  }
  return { datasetId: dataset.id, nodeId: node.id };
}

async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return { value, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

async function main() {
  process.env.JUDGE_MAX_CONCURRENCY = "16";
  resetConfig();
  const figures: Record<string, unknown> = { labels: N, folds: 5, strategies: ["few_shot", "rewrite", "threshold"] };
  for (const delay of DELAYS) {
    const deps = { judge: { languageModel: () => model(delay) } };
    const { datasetId, nodeId } = await seed(`engine-${delay}`);
    const engine = await measure(async () => {
      const e = await startExecution({ dataset_id: datasetId, pipeline_node_id: nodeId, retry: false, execution_mode: "async", batch_size: 16, no_cache: true }, "bench", deps);
      await waitForExecution(e.id);
      return getExecution(e.id);
    });
    const aligned = await seed(`align-${delay}`);
    const align = await measure(async () => {
      const started = await startAlignment({ pipeline_node_id: aligned.nodeId, truth: "labels", strategies: ["few_shot", "rewrite", "threshold"], folds: 5, seed: 1, max_examples: 8, dry_run: false }, "bench", deps);
      if (started.dryRun) throw new Error("unexpected dry run");
      await waitForAlignment(started.alignment.id);
      return getAlignment(started.alignment.id);
    });
    const a = align.value;
    if (a.status !== "completed") throw new Error(`alignment ${a.status}: ${a.error}`);
    const calls = a.usage.judge_calls + a.usage.optimizer_calls + a.usage.cached;
    const engineCalls = engine.value.total_evaluations;
    figures[`judge_delay_${delay}ms`] = {
      engine_run: { calls: engineCalls, wall_ms: Math.round(engine.ms), calls_per_s: Math.round((engineCalls / engine.ms) * 1000), cpu_ms_per_call: Math.round((engine.cpuMs / engineCalls) * 100) / 100 },
      alignment: {
        calls,
        judge_calls: a.usage.judge_calls,
        optimizer_calls: a.usage.optimizer_calls,
        wall_ms: Math.round(align.ms),
        calls_per_s: Math.round((calls / align.ms) * 1000),
        cpu_ms_per_call: Math.round((align.cpuMs / calls) * 100) / 100,
        recommended: a.recommended,
        delta_kappa: Object.fromEntries(a.candidates.map((c) => [c.strategy, c.delta_kappa.estimate === null ? null : Math.round(c.delta_kappa.estimate * 1000) / 1000])),
      },
      per_call_time_ratio: Math.round((align.ms / calls / (engine.ms / engineCalls)) * 100) / 100,
    };
  }
  console.log(`BENCH_RESULT ${JSON.stringify({ alignment: figures })}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
