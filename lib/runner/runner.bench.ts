/**
 * Benchmark: the runner's own cost per evaluated cell. A 2,000-cell async run (500 agent conversations,
 * one metric per level) against the judge test double in a separate process, so the CPU time measured
 * here is the server's share: planning, prompts, the AI SDK call, parsing, saving and events.
 * Run with `npm run bench`; no thresholds, figures to read.
 */
import { spawn } from "node:child_process";
import { getDb } from "@/db/client";
import { createNode } from "@/db/repositories/metrics";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import { startExecution, waitForExecution } from "@/lib/runner";
import { getExecution } from "@/lib/runner/queries";

const CONVERSATIONS = 500;

function seed(datasetId: number): void {
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content) values (?, ?, ?, ?, ?)");
  const step = sqlite.prepare(
    "insert into steps (message_id, conversation_id, dataset_id, position, tool_call, tool_result) values (?, ?, ?, ?, ?, ?)",
  );
  sqlite.transaction(() => {
    for (let i = 0; i < CONVERSATIONS; i++) {
      const c = Number(conv.run(datasetId, i, `c${i}`).lastInsertRowid);
      msg.run(c, datasetId, 0, "user", `Where is order ${i}?`);
      const a = Number(msg.run(c, datasetId, 1, "assistant", `Order ${i} ships tomorrow.`).lastInsertRowid);
      step.run(a, c, datasetId, 0, JSON.stringify({ name: "lookup", arguments: { order: i } }), null);
      step.run(a, c, datasetId, 1, null, JSON.stringify({ status: "shipping", order: i }));
    }
  })();
}

async function main() {
  // Started with this Node directly (not npx) so that killing it really stops it.
  const double = spawn(process.execPath, ["--import", "tsx", "lib/testing/judge-double/cli.ts", "--port", "0"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const url = await new Promise<string>((resolve) =>
    double.stdout!.on("data", (d: Buffer) => {
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString());
      if (m) resolve(m[0]);
    }),
  );
  process.env.OPENAI_BASE_URL = `${url}/v1`;
  process.env.JUDGE_MAX_CONCURRENCY = "16";
  resetConfig();

  const dataset = createDataset({ name: "runner bench", userId: "bench" });
  seed(dataset.id);
  const node = (level: "conversation" | "message" | "step", prompt: string) =>
    createNode(dataset.id, { name: level, evaluationLevel: level, prompt, outputType: "progress", templateVariables: [], isAdvanced: true });
  node("conversation", "Rate the conversation @HISTORY");
  node("message", "Rate @CURRENT_MESSAGE.output given @CURRENT_MESSAGE.input");
  node("step", "Rate step @STEP_NUMBER: @CURRENT_STEP.tool_call @CURRENT_STEP.tool_result");

  const cpu = process.cpuUsage();
  const started = performance.now();
  const execution = startExecution(
    { dataset_id: dataset.id, retry: false, execution_mode: "async", batch_size: 16, no_cache: true },
    "bench",
  );
  await waitForExecution(execution.id);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const final = getExecution(execution.id);
  double.kill("SIGTERM");
  const cpuMs = (used.user + used.system) / 1000;
  console.log(
    "BENCH_RESULT " +
      JSON.stringify({
        runner_async_batch16: {
          cells: final.total_evaluations,
          completed: final.successful_evaluations,
          wall_ms: Math.round(ms),
          cells_per_second: Math.round((final.total_evaluations / ms) * 1000),
          server_cpu_ms_per_cell: Math.round((cpuMs / final.total_evaluations) * 100) / 100,
        },
      }),
  );
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
