/**
 * What a user gets: the production build served by `next start` with DEFAULT settings (only the judge's
 * address is set), driven over HTTP, against the judge test double in this process over real HTTP.
 *  - efficiency at a 100 ms and a 1 s judge: `async` runs with batch_size 32; ideal = ⌈cells / 32⌉ ×
 *    latency; efficiency = ideal / the execution's duration_ms (target ≥ 0.9). At 100 ms twice: the
 *    first run on the freshly started server (cold code) and the next one, on its own dataset;
 *  - under a faulty provider (issue 22): 1,000 cells at a 100 ms judge, batch_size 32, measured
 *    interleaved — clean, then 20% 429 (Retry-After 1 s) + 10% 500 + 5% hangs + 5% malformed, then 20%
 *    429 alone — for ROUNDS rounds; cells/s of each, its ratio to the clean run of its round, the 429s,
 *    hedges and final limit, how many cells failed and why (every failed cell must say why), and the
 *    load average at the start of each run; then 5,000 cells clean and at 20% 429, LONG_ROUNDS times,
 *    and the bound of an ideal client that honours Retry-After on both lengths (retry-tail-model.ts).
 * No setting is raised here: a figure met only by a raised setting would not be what users get.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { idealRatio } from "@/bench/support/retry-tail-model";
import { ensureBuild } from "../scripts/project.mjs";
import { addMetrics, agentConversations, importDataset, startRun, waitFinal } from "../scripts/reliability/data";
import { TurnscopeServer } from "../scripts/reliability/server";

const BATCH = 32;

async function main() {
  ensureBuild();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-served-bench-"));
  const double = await startJudgeDouble({ logger: () => {} });
  const server = new TurnscopeServer({
    port: Number(process.env.BENCH_PORT ?? 3511),
    databasePath: path.join(dir, "bench.db"),
    env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "warn" },
  });
  const figures: Record<string, unknown> = {};
  // Other work on a shared machine moves these figures: the 1-minute load average is kept with them.
  const loadBefore = Math.round(os.loadavg()[0] * 100) / 100;
  try {
    await server.start();
    await warmDouble(double.baseURL);
    // Four cells per conversation: the conversation, its assistant message and its two steps.
    const efficiency = async (latencyMs: number, conversations: number, tag = `s${latencyMs}`) => {
      double.reset();
      double.setLatency(latencyMs);
      const { datasetId } = await importDataset(server, `served-${tag}`, agentConversations(conversations, tag));
      await addMetrics(server, datasetId);
      const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: BATCH });
      const done = await waitFinal(server, run.id, 10 * 60_000);
      const ideal = Math.ceil(done.total_evaluations / BATCH) * latencyMs;
      const duration = done.duration_ms ?? 0;
      return {
        cells: done.total_evaluations,
        batch_size: BATCH,
        judge_latency_ms: latencyMs,
        ideal_ms: ideal,
        duration_ms: duration,
        efficiency: Math.round((ideal / duration) * 1000) / 1000,
        target: 0.9,
        met: ideal / duration >= 0.9,
        succeeded: done.successful_evaluations,
        peak_in_flight: double.stats().peakInFlight,
      };
    };
    // The first run on a freshly started server pays for cold code (JIT, first statements); a server
    // that has run before is what users meet on every later run. Both are reported; the same settings.
    // SERVED_BENCH_ONLY=faults: only the faulty-provider runs (experiments on them; settings unchanged).
    if (process.env.SERVED_BENCH_ONLY !== "faults") {
      figures.judge_100ms_first_run = await efficiency(100, 500);
      console.error("100 ms, first run", JSON.stringify(figures.judge_100ms_first_run));
      // Other conversations: the same ones would all come from the judge cache.
      figures.judge_100ms = await efficiency(100, 500, "s100-next");
      console.error("100 ms", JSON.stringify(figures.judge_100ms));
    }
    // SERVED_BENCH_ONLY=100ms skips the rest (experiments on the 100 ms figure; settings unchanged).
    if (process.env.SERVED_BENCH_ONLY !== "100ms") {
      if (process.env.SERVED_BENCH_ONLY !== "faults") {
        figures.judge_1s = await efficiency(1000, 160);
        console.error("1 s", JSON.stringify(figures.judge_1s));
      }
      figures.provider_faults = await providerFaults(server, double);
    }
  } finally {
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
    await double.close();
    if (process.env.SERVED_BENCH_KEEP_DB) console.error(`database kept: ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`BENCH_RESULT ${JSON.stringify({ served_defaults: { machine: { cpus: os.cpus().length, node: process.version, load_average_before: loadBefore, load_average_after: Math.round(os.loadavg()[0] * 100) / 100 }, ...figures } })}`);
}

/**
 * The judge test double stands in for a provider, which is warm when a run starts; the double shares
 * this process and would otherwise pay for its own cold code (its HTTP parser, JSON, rule matching)
 * during the first measured run. A few rounds of calls straight to it, none through the server: the
 * server under test stays as freshly started as before.
 */
async function warmDouble(baseURL: string) {
  const body = JSON.stringify({
    model: "warm-up",
    messages: [
      { role: "system", content: "warm-up" },
      { role: "user", content: "warm-up ".repeat(200) },
    ],
    temperature: 0,
    response_format: { type: "json_schema", json_schema: { name: "verdict", schema: { type: "object", properties: { score: { type: "number" } } } } },
  });
  for (let round = 0; round < 8; round++) {
    await Promise.all(
      Array.from({ length: BATCH }, async () => {
        const res = await fetch(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-bench" }, body });
        await res.text();
      }),
    );
  }
}

type FaultMix = { rate_limit: number; server_error: number; hang: number; malformed: number };
const SCENARIOS: Array<{ name: "clean" | "fault_mix" | "rate_limit_only"; mix: FaultMix | null; goal: number | null }> = [
  { name: "clean", mix: null, goal: null },
  { name: "fault_mix", mix: { rate_limit: 0.2, server_error: 0.1, hang: 0.05, malformed: 0.05 }, goal: 0.3 },
  { name: "rate_limit_only", mix: { rate_limit: 0.2, server_error: 0, hang: 0, malformed: 0 }, goal: 0.6 },
];
const ROUNDS = Number(process.env.SERVED_BENCH_FAULT_ROUNDS ?? 3);
/** Rounds of the long 429-only pair (5,000 cells clean, then 5,000 cells at 20% 429). */
const LONG_ROUNDS = Number(process.env.SERVED_BENCH_LONG_ROUNDS ?? 2);
const load1 = () => Math.round(os.loadavg()[0] * 100) / 100;

/** One run of 1,000 cells at a 100 ms judge under `mix` (null: clean), on a dataset of its own. */
async function faultRun(server: TurnscopeServer, double: JudgeDouble, tag: string, mix: FaultMix | null, conversations = 250) {
  double.reset();
  double.setLatency(100);
  const { datasetId } = await importDataset(server, `served-${tag}`, agentConversations(conversations, tag));
  await addMetrics(server, datasetId);
  if (mix) double.setFaults(mix, 11);
  const loadAverage = load1();
  const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: BATCH });
  const done = await waitFinal(server, run.id, 20 * 60_000);
  double.setFaults(null);
  const stats = double.stats();
  const rows = ((await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}/results`)).json?.results ?? []) as Array<{ status: string; error: string | null }>;
  const reasons: Record<string, number> = {};
  for (const r of rows.filter((x) => x.status === "failed")) {
    const reason = (r.error ?? "(no reason)").replace(/\d+/g, "N").slice(0, 90);
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  const meta = done.meta as { rate_limits?: number; concurrency_limit?: number; hedges?: number };
  return {
    status: done.status,
    cells: done.total_evaluations,
    duration_ms: done.duration_ms,
    cells_per_second: Math.round((done.total_evaluations / ((done.duration_ms ?? 1) / 1000)) * 10) / 10,
    succeeded: done.successful_evaluations,
    failed: done.failed_evaluations,
    results: rows.length,
    failed_without_reason: reasons["(no reason)"] ?? 0,
    failure_reasons: reasons,
    rate_limits: meta.rate_limits ?? null,
    hedges: meta.hedges ?? null,
    final_concurrency_limit: meta.concurrency_limit ?? null,
    judge_requests: stats.count,
    judge_replies_by_kind: stats.byKind,
    peak_in_flight: stats.peakInFlight,
    load_average_at_start: loadAverage,
  };
}

/**
 * Clean, fault mix and 429-only runs taken in turn, round after round, so the machine's shared load
 * moves them alike; each faulty run's ratio is to the clean run of its own round.
 */
async function providerFaults(server: TurnscopeServer, double: JudgeDouble) {
  // An unmeasured clean run first: the first run on a fresh server pays for cold code (with the
  // efficiency runs before, the server is warm already; alone, round 1's clean run would not be).
  await faultRun(server, double, "pf-warm-up", null);
  const rounds: Array<Record<string, Awaited<ReturnType<typeof faultRun>> & { ratio_to_clean?: number }>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const r: (typeof rounds)[number] = {};
    for (const sc of SCENARIOS) {
      r[sc.name] = await faultRun(server, double, `pf${round}-${sc.name}`, sc.mix);
      if (sc.mix) r[sc.name].ratio_to_clean = Math.round((r[sc.name].cells_per_second / r.clean.cells_per_second) * 1000) / 1000;
      console.error(`faults round ${round + 1} ${sc.name}`, JSON.stringify(r[sc.name]));
    }
    rounds.push(r);
  }
  const summary = (name: "fault_mix" | "rate_limit_only", goal: number) => {
    const ratios = rounds.map((r) => r[name].ratio_to_clean ?? 0);
    return {
      mix: SCENARIOS.find((s) => s.name === name)!.mix,
      cells_per_second: rounds.map((r) => r[name].cells_per_second),
      ratio_to_clean: ratios,
      goal,
      met: ratios.every((x) => x >= goal),
      failed: rounds.map((r) => r[name].failed),
      every_failed_cell_says_why: rounds.every((r) => r[name].failed_without_reason === 0 && r[name].results === r[name].cells),
    };
  };
  // The same 20% 429s on a run five times as long: on 1,000 cells the longest chain of 1 s waits of any
  // one cell is most of the run (see ideal_client below); on 5,000 it is not.
  const long: Array<{ clean: Awaited<ReturnType<typeof faultRun>>; rate_limit_only: Awaited<ReturnType<typeof faultRun>>; ratio_to_clean: number }> = [];
  for (let round = 0; round < LONG_ROUNDS; round++) {
    const clean = await faultRun(server, double, `pfl${round}-clean`, null, 1250);
    const limited = await faultRun(server, double, `pfl${round}-rl`, SCENARIOS[2].mix, 1250);
    const ratio = Math.round((limited.cells_per_second / clean.cells_per_second) * 1000) / 1000;
    console.error(`faults long round ${round + 1}`, JSON.stringify({ clean: clean.cells_per_second, rate_limit_only: limited.cells_per_second, ratio }));
    long.push({ clean, rate_limit_only: limited, ratio_to_clean: ratio });
  }
  const model = { slots: BATCH, latencyMs: 100, refuseShare: 0.2, retryAfterMs: 1000 };
  return {
    cells: 1000,
    judge_latency_ms: 100,
    batch_size: BATCH,
    settings: "defaults",
    /**
     * What a client that honours the 1 s Retry-After can reach at best (bench/support/retry-tail-model.ts:
     * no slot held while waiting, retries first, no overhead), mean and 10th–90th percentile over seeds.
     */
    ideal_client: {
      cells_1000: idealRatio({ ...model, cells: 1000 }, 200),
      cells_5000: idealRatio({ ...model, cells: 5000 }, 40),
    },
    rate_limit_only_5000_cells: {
      clean_cells_per_second: long.map((r) => r.clean.cells_per_second),
      cells_per_second: long.map((r) => r.rate_limit_only.cells_per_second),
      ratio_to_clean: long.map((r) => r.ratio_to_clean),
      goal: 0.6,
      met: long.every((r) => r.ratio_to_clean >= 0.6),
      failed: long.map((r) => r.rate_limit_only.failed),
      every_failed_cell_says_why: long.every((r) => r.rate_limit_only.failed_without_reason === 0 && r.rate_limit_only.results === r.rate_limit_only.cells),
    },
    clean_cells_per_second: rounds.map((r) => r.clean.cells_per_second),
    fault_mix: summary("fault_mix", 0.3),
    rate_limit_only: summary("rate_limit_only", 0.6),
    rounds,
  };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
