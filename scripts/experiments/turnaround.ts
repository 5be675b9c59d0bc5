/**
 * Where a run at a 100 ms judge loses time against the ideal (issue 11: served efficiency 0.83): the
 * in-process runner on SQLite against the judge test double in its own process over HTTP, batch 32,
 * 2,000 message cells. From the runner's own events: per cell, processing → complete (the cell's time,
 * judge latency included); per lane, complete → the next processing (the turnaround no judge waits in).
 *   DATABASE_PATH=/tmp/x.db npx tsx --conditions=react-server scripts/experiments/turnaround.ts [latencyMs]
 */
import { spawn } from "node:child_process";
import { PerformanceObserver } from "node:perf_hooks";
import { getDb } from "@/db/client";
import { createNode } from "@/db/repositories/metrics";
import { resetConfig } from "@/lib/config";
import { warmJudgeThread } from "@/lib/judge/call-thread";
import { createDataset } from "@/lib/datasets";
import { startExecution, subscribe, waitForExecution } from "@/lib/runner";
import { getExecution } from "@/lib/runner/queries";

const latency = Number(process.argv[2] ?? 100);
const BATCH = 32;

async function main() {
  const double = spawn(process.execPath, [...(process.env.DOUBLE_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.DOUBLE_PROF}`] : []), "--import", "tsx", "lib/testing/judge-double/cli.ts", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve) =>
    double.stdout!.on("data", (d: Buffer) => {
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString());
      if (m) resolve(m[0]);
    }),
  );
  await fetch(`${url}/__double/latency`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(latency) });
  process.env.OPENAI_BASE_URL = `${url}/v1`;
  process.env.OPENAI_API_KEY = "sk-x";
  resetConfig();
  const dataset = await createDataset({ name: "turnaround", userId: "bench" });
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content) values (?, ?, ?, ?, ?)");
  sqlite.transaction(() => {
    for (let i = 0; i < 200; i++) {
      const c = Number(conv.run(dataset.id, i, `c${i}`).lastInsertRowid);
      for (let t = 0; t < 10; t++) {
        msg.run(c, dataset.id, 2 * t, "user", `Question ${t} about order ${i}?`);
        msg.run(c, dataset.id, 2 * t + 1, "assistant", `Answer ${t}: order ${i} ships tomorrow.`);
      }
    }
  })();
  const node = await createNode(dataset.id, {
    name: "helpful", evaluationLevel: "message", prompt: "Rate @CURRENT_MESSAGE.output given @CURRENT_MESSAGE.input", outputType: "progress",
    templateVariables: ["@CURRENT_MESSAGE.output", "@CURRENT_MESSAGE.input"], isAdvanced: true,
  });
  if (process.env.WAL_AUTOCHECKPOINT) sqlite.pragma(`wal_autocheckpoint = ${Number(process.env.WAL_AUTOCHECKPOINT)}`);
  // The server starts its judge thread when it starts (instrumentation.ts); so does this run.
  await warmJudgeThread();
  const gcs: number[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.duration > 5) gcs.push(Math.round(e.duration));
  }).observe({ entryTypes: ["gc"] });
  const stalls: string[] = [];
  const t0 = performance.now();
  console.error(`run starts at ${(t0 / 1000).toFixed(2)} s of the process`);
  const cpu = process.cpuUsage();
  const execution = await startExecution({ dataset_id: dataset.id, pipeline_node_id: node.id, retry: false, execution_mode: "async", batch_size: BATCH, no_cache: true }, "bench");
  const started = new Map<number, number>();
  const cellMs: number[] = [];
  const ends: number[] = [];
  const starts: number[] = [];
  let lag = 0;
  let lagMax = 0;
  let lagN = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    const l = now - last - 5;
    lag += Math.max(0, l);
    lagMax = Math.max(lagMax, l);
    if (l > 20) stalls.push(`${Math.round(l)}@${Math.round(now - t0)}`);
    lagN++;
    last = now;
  }, 5);
  subscribe(execution.id, (e) => {
    const t = performance.now();
    const d = e.data as { entity_id?: number };
    if (e.event === "processing" && d.entity_id) {
      started.set(d.entity_id, t);
      starts.push(t);
    } else if ((e.event === "complete" || e.event === "error") && d.entity_id) {
      cellMs.push(t - (started.get(d.entity_id) ?? t));
      ends.push(t);
    }
  });
  await waitForExecution(execution.id);
  clearInterval(probe);
  const used = process.cpuUsage(cpu);
  const done = await getExecution(execution.id);
  const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) * p)];
  const ideal = Math.ceil(done.total_evaluations / BATCH) * latency;
  // Turnaround: each start after the first BATCH follows some earlier end; pair them in order.
  const sortedEnds = [...ends].sort((a, b) => a - b);
  const turn = starts.slice(BATCH).map((s, i) => s - sortedEnds[i]);
  console.log(JSON.stringify({
    latency, cells: done.total_evaluations, duration_ms: done.duration_ms, ideal_ms: ideal, efficiency: Math.round((ideal / (done.duration_ms ?? 1)) * 1000) / 1000,
    cpu_ms_per_cell: Math.round(((used.user + used.system) / 1000 / done.total_evaluations) * 100) / 100,
    cell_ms: { p50: Math.round(q(cellMs, 0.5)), p90: Math.round(q(cellMs, 0.9)), p99: Math.round(q(cellMs, 0.99)), mean: Math.round(cellMs.reduce((a, b) => a + b, 0) / cellMs.length) },
    turnaround_ms: { p50: Math.round(q(turn, 0.5) * 10) / 10, p90: Math.round(q(turn, 0.9) * 10) / 10, mean: Math.round((turn.reduce((a, b) => a + b, 0) / turn.length) * 10) / 10 },
    first_start_ms_after_started_at: Math.round(starts[0] - (performance.now() - (Date.now() - Date.parse(done.started_at!)))),
    stalls_over_20ms: stalls, gc_over_5ms: gcs,
    loop_lag: { mean_ms: Math.round((lag / lagN) * 10) / 10, max_ms: Math.round(lagMax) },
  }));
  double.kill("SIGINT");
  await new Promise((r) => double.on("exit", r));
  process.exit(0);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
