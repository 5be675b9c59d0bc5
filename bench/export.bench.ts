/**
 * Benchmark: exporting an execution's results as CSV, XLSX and JSON through the route handler,
 * consuming the stream as a client would, for 10,000 and 100,000 results. Reports time, rows/s,
 * bytes, peak RSS above the pre-export baseline, and the peak live memory (heap + buffers after a
 * GC) the export holds: the 100k/10k ratios show memory does not grow with the number of rows. Run with `npm run bench`; no thresholds, figures to read.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { closeDb, getDb } from "@/db/sqlite-database";
import { insertExecution } from "@/db/repositories/executions";
import { createNode } from "@/db/repositories/metrics";
import type { OutputType, PipelineNodeRow } from "@/db/schema";
import { createDataset } from "@/lib/datasets";
import { GET as exportRoute } from "@/app/api/evaluation-pipeline-executions/[id]/export/route";
import { GET as resultsRoute } from "@/app/api/evaluation-pipeline-executions/[id]/results/route";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const SIZES = [10_000, 100_000];
const OUTPUT_TYPES: OutputType[] = ["progress", "checkbox", "number", "text", "json"];
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function seedConversations(datasetId: number, count: number): number[] {
  const sqlite = getDb().$client;
  const insert = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  return sqlite.transaction(() =>
    Array.from({ length: count }, (_, i) => Number(insert.run(datasetId, i, `Conversation ${i}`).lastInsertRowid)),
  )();
}

function verdict(type: OutputType, i: number): { result: unknown; score: number | null } {
  const reasoning = `Result ${i}: the assistant answered the question, cited the order number and offered a follow-up step.`;
  const p = (i % 101) / 100;
  switch (type) {
    case "progress":
      return { result: { score: p, reasoning }, score: p };
    case "checkbox":
      return { result: { value: i % 3 !== 0, reasoning }, score: i % 3 !== 0 ? 1 : 0 };
    case "number":
      return { result: { value: (i % 41) - 20, reasoning }, score: (i % 41) - 20 };
    case "text":
      return { result: { value: reasoning }, score: null };
    case "json":
      return { result: { score: p, label: p > 0.5 ? "good" : "poor", reasoning }, score: p };
    case "pairwise":
      return { result: { winner: p > 0.5 ? "A" : "B", reasoning }, score: p > 0.5 ? 1 : 0 };
  }
}

/** One execution with `rows` results spread over the metrics, inserted in one transaction. */
async function seedExecution(nodes: PipelineNodeRow[], conversations: number[], rows: number): Promise<number> {
  const sqlite = getDb().$client;
  const node0 = nodes[0];
  const exec = await insertExecution({ evaluationPipelineId: node0.evaluationPipelineId, datasetId: node0.datasetId, pipelineNodeId: null, totalEvaluations: rows, meta: {} });
  const insert = sqlite.prepare(`insert into evaluation_results
    (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id, result, score, status, error,
     model_name, input_tokens, output_tokens, execution_time, cached)
    values (?, ?, ?, 'conversation', ?, ?, ?, ?, ?, ?, 'gpt-4o-mini', 420, 38, ?, ?)`);
  sqlite.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const node = nodes[i % nodes.length];
      const conv = conversations[Math.floor(i / nodes.length) % conversations.length];
      const failed = i % 50 === 49;
      const v = verdict(node.outputType, i);
      insert.run(exec.id, node.id, node.datasetId, conv, conv, failed ? null : JSON.stringify(v.result), failed ? null : v.score,
        failed ? "failed" : "completed", failed ? "judge timed out" : null, 300 + (i % 700), i % 4 === 0 ? 1 : 0);
    }
    sqlite.prepare("update pipeline_executions set status = 'completed', successful_evaluations = ? where id = ?").run(rows, exec.id);
  })();
  return exec.id;
}

type Handler = typeof exportRoute;

/**
 * Call a route and read the body to the end as a client would. With `measureMemory`, collect garbage
 * every few chunks and sample what is still live (heap + buffers): the memory the export holds, not
 * garbage waiting for the collector. Without it, time the run undisturbed and sample RSS.
 */
async function consume(handler: Handler, url: string, id: number, measureMemory: boolean) {
  gc();
  const live = () => {
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
  };
  const base = live();
  let peak = base;
  const started = performance.now();
  const res = await handler(new Request(`http://localhost${url}`), { params: Promise.resolve({ id: String(id) }) });
  if (res.status !== 200 || !res.body) throw new Error(`${url}: status ${res.status}`);
  const reader = res.body.getReader();
  let bytes = 0;
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (++chunks % 32 === 0) {
      if (measureMemory) gc();
      const now = live();
      peak = { heap: Math.max(peak.heap, now.heap), rss: Math.max(peak.rss, now.rss) };
    }
  }
  const ms = performance.now() - started;
  return { ms, bytes, heapDelta: peak.heap - base.heap, rssDelta: peak.rss - base.rss };
}

async function main() {
  const ds = await createDataset({ name: "export bench", userId: "bench" });
  const conversations = seedConversations(ds.id, 20_000);
  const nodes = [];
  for (const outputType of OUTPUT_TYPES) {
    nodes.push(await createNode(ds.id, { name: `${outputType} metric`, evaluationLevel: "conversation", prompt: "Judge it.", outputType }));
  }
  const figures: Record<string, Record<string, unknown>> = {};
  const heapBySize: Record<number, Record<string, number>> = {};
  for (const rows of SIZES) {
    const seedStart = performance.now();
    const execId = await seedExecution(nodes, conversations, rows);
    const seedMs = performance.now() - seedStart;
    const label = `${rows / 1000}k`;
    const out: Record<string, number | string> = { results: rows, seed_ms: Math.round(seedMs) };
    heapBySize[rows] = {};
    const runs: Array<[string, Handler, string]> = [
      ["csv", exportRoute, `/api/evaluation-pipeline-executions/${execId}/export?format=csv`],
      ["xlsx", exportRoute, `/api/evaluation-pipeline-executions/${execId}/export?format=xlsx`],
      ["json", exportRoute, `/api/evaluation-pipeline-executions/${execId}/export?format=json`],
      ["results", resultsRoute, `/api/evaluation-pipeline-executions/${execId}/results`],
    ];
    for (const [name, handler, url] of runs) {
      const timed = await consume(handler, url, execId, false);
      const memory = await consume(handler, url, execId, true);
      out[`${name}_ms`] = Math.round(timed.ms);
      out[`${name}_rows_per_s`] = Math.round(rows / (timed.ms / 1000));
      out[`${name}_mb`] = mb(timed.bytes);
      out[`${name}_peak_rss_delta_mb`] = mb(timed.rssDelta);
      out[`${name}_peak_live_memory_delta_mb`] = mb(memory.heapDelta);
      heapBySize[rows][name] = memory.heapDelta;
    }
    figures[`export_${label}_results`] = out;
  }
  const [small, large] = SIZES;
  // Side by side rather than a ratio: at 10k some exports hold well under 1 MB, and a ratio of two
  // near-zero figures says nothing. Flat means memory does not follow the number of rows.
  const scaling: Record<string, unknown> = {
    note: `peak live memory (heap + buffers, after GC) above baseline, MB: ${small / 1000}k vs ${large / 1000}k results`,
  };
  for (const name of Object.keys(heapBySize[large])) {
    scaling[name] = { [`${small / 1000}k_mb`]: mb(heapBySize[small][name]), [`${large / 1000}k_mb`]: mb(heapBySize[large][name]) };
  }
  figures.export_memory_scaling = scaling;
  figures[`export_${large / 1000}k_results`].peak_rss_mb = mb(process.resourceUsage().maxRSS * 1024);
  figures[`export_${large / 1000}k_results`].node = process.version;
  figures[`export_${large / 1000}k_results`].measured_at = new Date().toISOString();
  closeDb();
  console.log(`BENCH_RESULT ${JSON.stringify(figures)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
