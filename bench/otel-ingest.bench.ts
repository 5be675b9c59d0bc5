/**
 * Benchmark of trace ingest: OTLP protobuf exports of 512 GenAI spans (bench/support/otel-ingest-client.ts,
 * another process, two exports in flight) to POST /api/otel/v1/traces served over real HTTP, on SQLite,
 * while an evaluation run is in progress in the same server process (a judge answering in 200 ms, batch
 * 32, started again whenever it finishes). Figures: spans/s ingested, export latency p50/p99, the
 * server's memory early and late (flat means it does not grow with the spans stored), how long the
 * conversations took to catch up after the last export, and the evaluations done meanwhile.
 * OTEL_BENCH_SPANS sets the span count (default 200,000; the figures in docs/performance.md name theirs).
 */
import { spawn } from "node:child_process";
import os from "node:os";
import v8 from "node:v8";
import vm from "node:vm";
import { statement } from "@/db/sqlite-database";
import { rawRows } from "@/db/store";
import { resetConfig } from "@/lib/config";
import { startExecution, waitForExecution, type RunnerDeps } from "@/lib/runner";
import { getExecution } from "@/lib/results/execution-history";
import { serveRoutes } from "@/lib/testing/http/route-server";
import * as traces from "@/app/api/otel/v1/traces/route";
import { flushAssembly } from "@/lib/otel/ingest";
import { localModel, seedBenchDataset } from "@/bench/support/setup";
import { clientFigures } from "./support/client-output";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;

/** The judge's answer time in the run in progress: quick for a hosted model (most take 0.5-2 s). */
const JUDGE_MS = 200;

async function main() {
  const spans = Number(process.env.OTEL_BENCH_SPANS ?? 200_000);
  process.env.JUDGE_MAX_CONCURRENCY = "32";
  resetConfig();
  const server = await serveRoutes({ "/api/otel/v1/traces": traces.POST }, { record: false });
  const { datasetId, nodeId } = await seedBenchDataset(300);
  const deps: RunnerDeps = { judge: { languageModel: () => localModel(JUDGE_MS) } };

  let ingesting = true;
  let evaluations = 0;
  const runs = (async () => {
    while (ingesting) {
      const execution = await startExecution(
        { dataset_id: datasetId, pipeline_node_id: nodeId, retry: false, execution_mode: "async", batch_size: 32, no_cache: true },
        "bench",
        deps,
      );
      await waitForExecution(execution.id);
      evaluations += (await getExecution(execution.id)).successful_evaluations;
    }
  })();

  const memory: Array<{ spans: number; rss_mb: number; heap_mb: number; external_mb: number; conversations_behind: number }> = [];
  const sample = (at: number) => {
    gc();
    const m = process.memoryUsage();
    // How far the rebuilds are behind the exports (conversations with spans not yet in their messages).
    const behind = statement("select count(*) as n from otel_conversations where assembled_revision < revision").get() as { n: number };
    memory.push({ spans: at, rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed), external_mb: mb(m.external), conversations_behind: behind.n });
  };
  sample(0);
  const cpuBefore = process.cpuUsage();
  const loadBefore = os.loadavg()[0];
  const client = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", "bench/support/otel-ingest-client.ts", `${server.baseURL}/api/otel/v1/traces`, String(spans)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const clientResult = await clientFigures(client, spans, sample);
  const cpu = process.cpuUsage(cpuBefore);
  const caughtUpFrom = performance.now();
  await flushAssembly();
  const catchUpMs = Math.round(performance.now() - caughtUpFrom);
  const cpuAll = process.cpuUsage(cpuBefore);
  sample(clientResult.spans);
  ingesting = false;
  await runs;
  await server.close();

  const stored = (await rawRows<{ s: number; c: number; behind: number }>(
    "select (select count(*) from otel_spans) as s, (select count(*) from otel_conversations) as c, (select count(*) from otel_conversations where assembled_revision < revision) as behind",
  ))[0];
  const early = memory.find((m) => m.spans >= spans / 10) ?? memory[0];
  const last = memory[memory.length - 1];
  console.log(
    `BENCH_RESULT ${JSON.stringify({
      otel_ingest: {
        ...clientResult,
        stored_spans: stored.s,
        conversations: stored.c,
        conversations_behind_after_catch_up: stored.behind,
        catch_up_after_last_export_ms: catchUpMs,
        // Spans per second taken in AND rebuilt into conversations: the rate that can be kept up.
        spans_per_second_including_assembly: Math.round((clientResult.spans / (clientResult.wall_ms + catchUpMs)) * 1000),
        evaluations_during_ingest: evaluations,
        // CPU of the server process (ingest, rebuilds and the run in progress) per span, until the last
        // export was answered, and until every conversation was rebuilt: what one idle core could take,
        // whatever else the machine is doing.
        server_cpu_us_per_span: Math.round((cpu.user + cpu.system) / clientResult.spans),
        server_cpu_us_per_span_with_catch_up: Math.round((cpuAll.user + cpuAll.system) / clientResult.spans),
        load_average_1m: Math.round(((loadBefore + os.loadavg()[0]) / 2) * 10) / 10,
        rss_mb_at_10_percent: early.rss_mb,
        rss_mb_at_end: last.rss_mb,
        heap_mb_at_10_percent: early.heap_mb,
        heap_mb_at_end: last.heap_mb,
        memory_samples: memory,
      },
    })}`,
  );
  process.exit(0);
}

void main();
