/**
 * The CI gate's overhead (issue 38: under 1 s beyond the run): the production build served with default
 * settings, the judge double at 100 ms; `npx turnscope eval` run as a pipeline runs it, on a dataset of
 * 100 conversations and one judge metric, ROUNDS times. Overhead = the command's wall time − the run's
 * own duration_ms (what a direct API client would wait for anyway): process start, the credential check,
 * resolving the dataset and metrics, polling, the gate's verdict and the three reports.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild, root } from "../scripts/project.mjs";
import { importDataset } from "../scripts/reliability/data";
import { TurnscopeServer } from "../scripts/reliability/server";

const ROUNDS = 3;

async function main() {
  ensureBuild();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-gate-bench-"));
  const double = await startJudgeDouble({ logger: () => {} });
  double.setLatency(100);
  const server = new TurnscopeServer({ port: Number(process.env.BENCH_PORT ?? 3511), databasePath: path.join(dir, "bench.db"), env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "warn" } });
  const rounds: Array<{ wall_ms: number; run_ms: number; overhead_ms: number; exit: number | null }> = [];
  try {
    await server.start();
    for (let r = 0; r < ROUNDS; r++) {
      const conversations = Array.from({ length: 100 }, (_, i) => ({ name: `c${i}`, messages: [{ role: "user", content: `Question ${i} of round ${r}` }, { role: "assistant", content: `Answer ${i}` }] }));
      const { datasetId } = await importDataset(server, `gate-${r}`, { conversations });
      await server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: datasetId, name: "helpful", evaluation_level: "conversation", output_type: "progress", prompt: "Was it helpful?\n@HISTORY" });
      const t0 = performance.now();
      // Not spawnSync: the judge double answers from this process's event loop.
      const res = await run(process.execPath, [path.join(root, "bin", "turnscope.mjs"), "eval", "--url", server.baseUrl, "--dataset", String(datasetId), "--batch-size", "32", "--json", path.join(dir, `r${r}.json`), "--junit", path.join(dir, `r${r}.xml`), "--markdown", path.join(dir, `r${r}.md`)]);
      const wall = performance.now() - t0;
      const report = JSON.parse(fs.readFileSync(path.join(dir, `r${r}.json`), "utf8")) as { executions: Array<{ duration_ms: number }> };
      const runMs = report.executions.reduce((n, e) => n + (e.duration_ms ?? 0), 0);
      rounds.push({ wall_ms: Math.round(wall), run_ms: runMs, overhead_ms: Math.round(wall - runMs), exit: res.status });
    }
  } finally {
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
    await double.close();
  }
  const overheads = rounds.map((r) => r.overhead_ms).sort((a, b) => a - b);
  const median = overheads[Math.floor(overheads.length / 2)];
  console.log(`BENCH_RESULT ${JSON.stringify({ gate_overhead: { machine: { cpus: os.cpus().length, node: process.version, load_average: Math.round(os.loadavg()[0] * 100) / 100 }, rounds, median_overhead_ms: median, goal_ms: 1000, met: median < 1000 } })}`);
}

function run(cmd: string, args: string[]): Promise<{ status: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: "ignore" });
    child.on("exit", (status) => resolve({ status }));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
