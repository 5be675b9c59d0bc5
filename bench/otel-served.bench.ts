/**
 * Trace ingest as a user gets it: the production build served by `next start` with DEFAULT settings
 * (only the judge's address is set), the exports of bench/support/otel-ingest-client.ts (another process,
 * OTLP protobuf, 512 spans an export, two in flight) posted to it over HTTP, while an evaluation run is
 * in progress on it (1,200 cells at a 200 ms judge double, batch 32, started again whenever it ends).
 * Two passes: closed loop (two exports in flight, as fast as the server answers: the most it ingests),
 * then open loop at OTEL_SERVED_BENCH_RATE spans/s (an export every 512/rate s, answered or not: the
 * latency exporters sending that much see, counted from when each export was due).
 * Figures: spans/s, export latency p50/p99, how long the conversations took to catch up after the last
 * export, spans/s including that, the server's resident memory (its whole process tree) as the spans
 * grow, the evaluations done meanwhile and the load average. OTEL_SERVED_BENCH_SPANS sets the span
 * count (default 200,000). What is behind — conversations still to rebuild, counted in the served database
 * (read-only; SQLite's WAL lets a reader in beside the server), and exports answered but still in the trace
 * inbox (lib/otel/inbox.ts: their spans not stored yet) — is caught up when both are 0.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../scripts/project.mjs";
import { addMetrics, agentConversations, importDataset, startRun, waitFinal } from "../scripts/reliability/data";
import { TurnscopeServer } from "../scripts/reliability/server";
import { INBOX_SUFFIX, inboxDir } from "@/lib/otel/store-export";
import { treeCpuSeconds, treeRssMb } from "./support/proc";
import { clientFigures } from "./support/client-output";

const JUDGE_MS = 200;
/** The open-loop phase: spans/s offered (OTEL_SERVED_BENCH_RATE) and how many (OTEL_SERVED_BENCH_RATE_SPANS). */
const RATE = Number(process.env.OTEL_SERVED_BENCH_RATE ?? 5000);
const RATE_SPANS = Number(process.env.OTEL_SERVED_BENCH_RATE_SPANS ?? 100_000);

async function main() {
  const spans = Number(process.env.OTEL_SERVED_BENCH_SPANS ?? 200_000);
  ensureBuild();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-otel-served-bench-"));
  const databasePath = path.join(dir, "bench.db");
  const double = await startJudgeDouble({ logger: () => {} });
  double.setLatency(JUDGE_MS);
  const server = new TurnscopeServer({
    port: Number(process.env.BENCH_PORT ?? 3511),
    databasePath,
    env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "warn" },
  });
  const loadBefore = os.loadavg()[0];
  let figures: Record<string, unknown> = {};
  try {
    await server.start();
    const pid = server.pid;
    if (pid === undefined) throw new Error("the server has no process id");
    const { datasetId } = await importDataset(server, "run in progress", agentConversations(300, "otel-bench"));
    await addMetrics(server, datasetId);

    let ingesting = true;
    let evaluations = 0;
    let round = 0;
    const runs = (async () => {
      while (ingesting) {
        // Each round with the judge cache off: every cell is a judge call, as on new conversations.
        const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 32, no_cache: true });
        evaluations += (await waitFinal(server, run.id, 30 * 60_000)).successful_evaluations;
        round++;
      }
    })();

    const db = new Database(databasePath, { readonly: true, fileMustExist: true });
    // Behind: conversations still to rebuild, and exports answered whose spans the trace inbox has not stored yet.
    const inbox = inboxDir(path.resolve(databasePath));
    const waitingExports = () => (fs.existsSync(inbox) ? fs.readdirSync(inbox).filter((n) => n.endsWith(INBOX_SUFFIX)).length : 0);
    const staleConversations = () => (db.prepare("select count(*) as n from otel_conversations where assembled_revision < revision").get() as { n: number }).n;
    const behind = () => staleConversations() + waitingExports();
    const memory: Array<{ spans: number; rss_mb: number; conversations_behind: number; exports_in_inbox: number }> = [{ spans: 0, rss_mb: treeRssMb(pid), conversations_behind: 0, exports_in_inbox: 0 }];
    /** One pass of the exporting client (rate 0: closed loop, as fast as the server takes them). */
    const exportSpans = async (count: number, rate: number) => {
      const client = spawn(
        process.execPath,
        ["--import", "tsx", "--conditions=react-server", "bench/support/otel-ingest-client.ts", `${server.baseUrl}/api/otel/v1/traces`, String(count), String(rate)],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      const base = memory.at(-1)!.spans;
      return await clientFigures(client, count, (sent) => memory.push({ spans: base + sent, rss_mb: treeRssMb(pid), conversations_behind: staleConversations(), exports_in_inbox: waitingExports() }));
    };
    const clientResult = await exportSpans(spans, 0);
    const caughtUpFrom = performance.now();
    while (behind() > 0) await new Promise((r) => setTimeout(r, 100));
    const catchUpMs = Math.round(performance.now() - caughtUpFrom);
    memory.push({ spans: clientResult.spans, rss_mb: treeRssMb(pid), conversations_behind: 0, exports_in_inbox: 0 });
    // Then at a steady OTEL_SERVED_BENCH_RATE spans/s (open loop): the export latency exporters sending
    // that much see, the run still in progress.
    const cpuBefore = treeCpuSeconds(pid);
    const atRate = await exportSpans(RATE_SPANS, RATE);
    const rateCatchUpFrom = performance.now();
    while (behind() > 0) await new Promise((r) => setTimeout(r, 100));
    const rateCatchUpMs = Math.round(performance.now() - rateCatchUpFrom);
    // The server's CPU (every thread) from the first export at the rate to the last conversation rebuilt: the run in progress's too.
    const rateCpuUsPerSpan = Math.round(((treeCpuSeconds(pid) - cpuBefore) * 1e6) / atRate.spans);
    memory.push({ spans: clientResult.spans + atRate.spans, rss_mb: treeRssMb(pid), conversations_behind: 0, exports_in_inbox: 0 });
    const loadEnd = os.loadavg()[0];
    ingesting = false;
    await runs;
    const stored = db.prepare("select (select count(*) from otel_spans) as s, (select count(*) from otel_conversations) as c").get() as { s: number; c: number };
    db.close();
    const early = memory.find((m) => m.spans >= spans / 10) ?? memory[0];
    figures = {
      closed_loop: "two exports in flight, each sent when the last was answered: the most the server ingests",
      ...clientResult,
      at_rate: {
        ...atRate,
        catch_up_after_last_export_ms: rateCatchUpMs,
        server_cpu_us_per_span_with_run: rateCpuUsPerSpan,
        goal: "export p99 < 200 ms at >= 5,000 spans/s",
        met: atRate.spans_per_second >= 0.98 * RATE && RATE >= 5000 && atRate.export_ms_p99 < 200,
      },
      stored_spans: stored.s,
      conversations: stored.c,
      catch_up_after_last_export_ms: catchUpMs,
      spans_per_second_including_assembly: Math.round((clientResult.spans / (clientResult.wall_ms + catchUpMs)) * 1000),
      evaluations_during_ingest: evaluations,
      evaluation_rounds: round,
      judge_latency_ms: JUDGE_MS,
      load_average_1m: Math.round(((loadBefore + loadEnd) / 2) * 10) / 10,
      rss_mb_at_10_percent: early.rss_mb,
      rss_mb_at_end: memory[memory.length - 1].rss_mb,
      memory_samples: memory,
    };
  } finally {
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
    await double.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`BENCH_RESULT ${JSON.stringify({ otel_ingest_served: figures })}`);
  process.exit(0);
}

void main();
