/**
 * The served build's CPU-bound throughput (issue 35.5): a judge that answers at once, so cells/s is the
 * server's own work per cell — 4,000 message-level cells, `async` at batch 64, default settings, over HTTP,
 * the judge test double in this process. With BENCH_BASELINE_DIR (a built checkout of another commit,
 * e.g. 79897ab: docs/performance.md says how) both builds are served and measured in turns, ROUNDS times,
 * in one sitting, and the ratio of their medians is the figure: the machine's other load moves both alike.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../scripts/project.mjs";
import { agentConversations, importDataset, startRun, waitFinal } from "../scripts/reliability/data";
import { TurnscopeServer } from "../scripts/reliability/server";
import { treeCpuSeconds } from "./support/proc";

const CELLS = Number(process.env.INSTANT_BENCH_CELLS ?? 4000);
const BATCH = 64;
const ROUNDS = Number(process.env.INSTANT_BENCH_ROUNDS ?? 5);
/**
 * The unmeasured first run of each build: long enough for V8 to have optimised the per-cell path (with
 * 200 cells the first measured run of either build still spent 1.3–1.6× the CPU per cell of the later ones).
 */
const WARM_UP_CELLS = 2000;

type Side = { name: string; server: TurnscopeServer; dir: string };

async function main() {
  ensureBuild();
  const double = await startJudgeDouble({ logger: () => {} });
  const sides: Side[] = [];
  const side = (name: string, port: number, root?: string): Side => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `turnscope-instant-${name}-`));
    const server = new TurnscopeServer({ port, root, databasePath: path.join(dir, "bench.db"), env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "warn" } });
    return { name, server, dir };
  };
  sides.push(side("this", Number(process.env.BENCH_PORT ?? 3521)));
  const baseline = process.env.BENCH_BASELINE_DIR;
  if (baseline) sides.push(side("baseline", Number(process.env.BENCH_PORT ?? 3521) + 1, path.resolve(baseline)));
  const loadBefore = Math.round(os.loadavg()[0] * 100) / 100;
  const perSide: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s.name, []]));
  // The server's CPU per cell (its process tree, the judge thread included) from the run's start to its end:
  // less moved by the machine's other load than cells/s, which waits for a core.
  const cpuPerCell: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s.name, []]));
  /** Hedged second requests per run (`meta.hedges`; a build before them has none): each is a whole extra call. */
  const hedges: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s.name, []]));
  try {
    for (const s of sides) await s.server.start();
    // One untimed warm-up run each (cold code, the judge thread's start; WARM_UP_CELLS), then the timed turns.
    for (let round = -1; round < ROUNDS; round++) {
      for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
        double.reset();
        double.setLatency(0);
        const tag = `${s.name}-${round + 1}`;
        const { datasetId } = await importDataset(s.server, `instant-${tag}`, agentConversations(round < 0 ? WARM_UP_CELLS : CELLS, tag));
        const metric = await s.server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: datasetId, name: "message quality", evaluation_level: "message", prompt: "Rate @CURRENT_MESSAGE.output", output_type: "progress" });
        if (metric.status !== 201) throw new Error(`metric: ${metric.status} ${metric.text}`);
        const cpuBefore = treeCpuSeconds(s.server.pid);
        const run = await startRun(s.server, { dataset_id: datasetId, pipeline_node_id: metric.json.id, execution_mode: "async", batch_size: BATCH });
        const done = await waitFinal(s.server, run.id, 10 * 60_000);
        const cpuMs = (treeCpuSeconds(s.server.pid) - cpuBefore) * 1000;
        if (done.successful_evaluations !== done.total_evaluations) throw new Error(`${s.name}: ${done.successful_evaluations} of ${done.total_evaluations} cells succeeded`);
        if (round >= 0) {
          hedges[s.name].push(Number((done.meta as { hedges?: number } | null)?.hedges ?? 0));
          perSide[s.name].push(Math.round((done.total_evaluations / (done.duration_ms ?? 1)) * 1000));
          cpuPerCell[s.name].push(Math.round((cpuMs / done.total_evaluations) * 1000) / 1000);
        }
      }
    }
  } finally {
    for (const s of sides) {
      await s.server.stop().catch(() => {});
      fs.rmSync(s.dir, { recursive: true, force: true });
    }
    await double.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const figures: Record<string, unknown> = {
    cells: CELLS,
    batch_size: BATCH,
    rounds: ROUNDS,
    cells_per_s: perSide.this,
    median_cells_per_s: median(perSide.this),
    server_cpu_ms_per_cell: cpuPerCell.this,
    median_server_cpu_ms_per_cell: median(cpuPerCell.this),
    hedges: hedges.this,
    load_average_before: loadBefore,
    load_average_after: Math.round(os.loadavg()[0] * 100) / 100,
  };
  if (baseline) {
    figures.baseline = { dir: baseline, cells_per_s: perSide.baseline, median_cells_per_s: median(perSide.baseline), server_cpu_ms_per_cell: cpuPerCell.baseline, median_server_cpu_ms_per_cell: median(cpuPerCell.baseline) };
    figures.ratio_to_baseline = Math.round((median(perSide.this) / median(perSide.baseline)) * 1000) / 1000;
    // Above 1: this build spends less of the server's CPU per cell than the baseline.
    figures.cpu_ratio_to_baseline = Math.round((median(cpuPerCell.baseline) / median(cpuPerCell.this)) * 1000) / 1000;
    figures.target = 1.0;
  }
  console.log(`BENCH_RESULT ${JSON.stringify({ served_instant_judge: figures })}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
