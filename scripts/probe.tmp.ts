import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { addMetrics, agentConversations, importDataset, startRun, waitFinal } from "./reliability/data";
import { TurnscopeServer } from "./reliability/server";
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "probe-"));
  const double = await startJudgeDouble({ logger: () => {} });
  const server = new TurnscopeServer({ port: 3519, databasePath: path.join(dir, "b.db"), env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk", LOG_LEVEL: "warn" } });
  await server.start();
  try {
    double.setLatency(100);
    const { datasetId } = await importDataset(server, "p", agentConversations(Number(process.env.N ?? 500), "p"));
    const m = await addMetrics(server, datasetId);
    const body = process.env.ONLY === "msg" ? { pipeline_node_id: m.msg } : {};
    const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 32, ...body });
    const done = await waitFinal(server, run.id, 600_000);
    const res = (await server.request("GET", `/api/evaluation-pipeline-executions/${run.id}/results`)).json.results as Array<{ execution_time: number; created_at: string; entity_type: string }>;
    const et = res.map((r) => r.execution_time).sort((a, b) => a - b);
    const q = (p: number) => et[Math.floor((et.length - 1) * p)];
    console.log({ cells: done.total_evaluations, duration: done.duration_ms, ideal: Math.ceil(done.total_evaluations / 32) * 100, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: et.at(-1) });
    const byType: Record<string, number[]> = {};
    for (const r of res) (byType[r.entity_type] ??= []).push(r.execution_time);
    for (const [k, v] of Object.entries(byType)) console.log(k, v.length, Math.round(v.reduce((a, b) => a + b, 0) / v.length));
  } finally {
    await server.stop();
    await double.close();
  }
}
main();
