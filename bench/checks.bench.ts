/**
 * Benchmark of check metrics through the real runner (plan → check → persist → stream): 100,000
 * message-level check cells (10,000 conversations × 10 assistant turns) in one run, every event
 * consumed by a subscriber, heap measured after GC before and after. Target: under 10 s.
 * Run with `npm run bench bench/checks.bench.ts`; no threshold fails the run, the figures are to read.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { getDb } from "@/db/sqlite-database";
import { createNode } from "@/db/repositories/metrics";
import { createDataset } from "@/lib/datasets";
import { startExecution, subscribe, waitForExecution } from "@/lib/runner";
import { getExecution } from "@/lib/results/execution-history";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heapMb = () => {
  gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
};

async function seed(conversations: number): Promise<{ datasetId: number; nodeId: number }> {
  const dataset = await createDataset({ name: `checks bench ${conversations}`, userId: "bench" });
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content, meta) values (?, ?, ?, ?, ?, ?)");
  sqlite.transaction(() => {
    for (let i = 0; i < conversations; i++) {
      const c = Number(conv.run(dataset.id, i, `c${i}`).lastInsertRowid);
      for (let t = 0; t < 10; t++) {
        msg.run(c, dataset.id, 2 * t, "user", `Question ${t} about order ${i}?`, null);
        // One answer in seven breaks the latency budget, so both verdicts are written.
        msg.run(c, dataset.id, 2 * t + 1, "assistant", `Answer ${t}: order ${i} ships tomorrow.`, JSON.stringify({ latency_ms: (i * 10 + t) % 7 === 0 ? 2500 : 900 }));
      }
    }
  })();
  const node = await createNode(dataset.id, {
    name: "latency budget",
    evaluationLevel: "message",
    prompt: "",
    outputType: "checkbox",
    templateVariables: [],
    isAdvanced: false,
    kind: "check",
    check: { type: "meta_budget", params: { path: "meta.latency_ms", op: "<=", value: 2000, aggregate: "none" } },
  });
  return { datasetId: dataset.id, nodeId: node.id };
}

async function run(conversations: number, mode: "sync" | "async", batch: number) {
  const { datasetId, nodeId } = await seed(conversations);
  const heapBefore = heapMb();
  let peakHeap = 0;
  const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed / 2 ** 20)), 50);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const execution = await startExecution({ dataset_id: datasetId, pipeline_node_id: nodeId, retry: false, execution_mode: mode, batch_size: batch, no_cache: true }, "bench");
  let streamed = 0;
  const unsubscribe = subscribe(execution.id, (e) => {
    if (e.event === "complete" || e.event === "error") streamed++;
  });
  await waitForExecution(execution.id);
  const ms = performance.now() - started;
  clearInterval(sampler);
  unsubscribe();
  const used = process.cpuUsage(cpu);
  const final = await getExecution(execution.id);
  const passed = getDb().$client.prepare("select count(*) as n from evaluation_results where execution_id = ? and score = 1").get(execution.id) as { n: number };
  return {
    cells: final.total_evaluations,
    completed: final.successful_evaluations,
    passed: passed.n,
    streamed_events: streamed,
    wall_ms: Math.round(ms),
    cells_per_second: Math.round((final.total_evaluations / ms) * 1000),
    cpu_us_per_cell: Math.round(((used.user + used.system) / final.total_evaluations) * 10) / 10,
    heap_growth_mb: Math.round((heapMb() - heapBefore) * 10) / 10,
    peak_heap_mb: Math.round(peakHeap),
  };
}

async function main() {
  await run(100, "async", 32); // warm-up
  if (process.env.CHECKS_BENCH_ONLY) {
    // Profiling aid: one run of the given number of conversations.
    console.log(JSON.stringify(await run(Number(process.env.CHECKS_BENCH_ONLY), "async", 32)));
    process.exit(0);
  }
  const small = await run(1_000, "async", 32);
  const big = await run(10_000, "async", 32);
  console.log(
    "BENCH_RESULT " +
      JSON.stringify({
        checks_100k_cells: { ...big, target_ms: 10_000, meets_target: big.wall_ms < 10_000 },
        checks_10k_cells: small,
        checks_memory: {
          heap_growth_mb_10k: small.heap_growth_mb,
          heap_growth_mb_100k: big.heap_growth_mb,
          note: "heap after GC, before vs after a run: flat means no growth per cell",
        },
      }),
  );
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
