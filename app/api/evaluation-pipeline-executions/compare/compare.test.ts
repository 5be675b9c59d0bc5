import { beforeAll, describe, expect, it } from "vitest";
import { updateExecution } from "@/db/repositories/executions";
import { getMetricRow } from "@/lib/metrics/metrics";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture, inOrder } from "@/lib/testing/seed/rows";
import { addTestResult, createTestDataset, createTestExecution } from "@/lib/testing/seed/results";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as metricItem from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as versions from "@/app/api/evaluation-pipeline-nodes/[id]/versions/route";
import * as compare from "./route";

const get = (qs: string) => call(compare.GET, "GET", `/api/evaluation-pipeline-executions/compare?${qs}`);
const tick = () => new Promise((r) => setTimeout(r, 5));

let fx: {
  convs: number[];
  solved: number;
  quality: number;
  runA: number;
  runB: number;
  otherRun: number;
};

beforeAll(async () => {
  const ds = await createTestDataset("compare");
  const convs: number[] = [];
  for (const position of [0, 1, 2]) convs.push((await insertConversationFixture(ds.id, { position, name: `c${position}` })).conversationId);
  const create = async (body: Record<string, unknown>) =>
    (await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: ds.id, evaluation_level: "conversation", ...body } })).json.id as number;
  const solved = await create({ name: "Solved", prompt: "Solved? @HISTORY", output_type: "checkbox" });
  const quality = await create({ name: "Quality", prompt: "Rate @HISTORY", output_type: "progress" });
  await tick();
  const solvedNode = await getMetricRow(solved);
  const qualityNode = await getMetricRow(quality);
  const add = async (run: number, node: typeof solvedNode, i: number, result: unknown, score: number | null, model: string, status: "completed" | "failed" = "completed") =>
    await addTestResult({
      executionId: run,
      node,
      entity: { type: "conversation", id: convs[i], conversationId: convs[i] },
      result,
      score,
      status,
      error: status === "failed" ? "timeout" : null,
      extra: { modelName: model, inputTokens: 100, outputTokens: 10 },
    });

  const a = await createTestExecution(solvedNode);
  await updateExecution(a.id, { meta: { ...(a.meta as object), model: "judge-alpha", input_tokens: 600, output_tokens: 60, cost_usd: 0.0012 } });
  await inOrder([true, true, false], async (v, i) => await add(a.id, solvedNode, i, { value: v, reasoning: "r" }, v ? 1 : 0, "judge-alpha"));
  await inOrder([0.5, 0.75, 1], async (s, i) => await add(a.id, qualityNode, i, { score: s, reasoning: "r" }, s, "judge-alpha"));
  await tick();
  // The Solved prompt is edited between the runs; Quality's is not.
  expect((await call(metricItem.PATCH, "PATCH", "", { params: { id: solved }, body: { prompt: "Was the task solved in full? @HISTORY" } })).status).toBe(200);
  await tick();
  const b = await createTestExecution(solvedNode);
  await updateExecution(b.id, { meta: { ...(b.meta as object), model: "judge-beta", input_tokens: 500, output_tokens: 50, cost_usd: null } });
  await inOrder([false, true, false], async (v, i) => await add(b.id, solvedNode, i, { value: v, reasoning: "r" }, v ? 1 : 0, "judge-beta"));
  await add(b.id, qualityNode, 0, { score: 1, reasoning: "r" }, 1, "judge-beta");
  await add(b.id, qualityNode, 1, { score: 0.25, reasoning: "r" }, 0.25, "judge-beta");
  await add(b.id, qualityNode, 2, null, null, "judge-beta", "failed");

  const other = await createTestDataset("elsewhere");
  await insertConversationFixture(other.id);
  const otherNode = await getMetricRow(await (async () => (await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: other.id, name: "x", evaluation_level: "conversation", prompt: "x @HISTORY", output_type: "checkbox" } })).json.id as number)());
  const otherRun = (await createTestExecution(otherNode)).id;
  fx = { convs, solved, quality, runA: a.id, runB: b.id, otherRun };
});

describe("GET /api/evaluation-pipeline-executions/compare", () => {
  it("pairs every cell of two runs: both verdicts, flips and score deltas", async () => {
    const res = await get(`a=${fx.runA}&b=${fx.runB}`);
    expect(res.status).toBe(200);
    const solvedCells = res.json.cells.filter((c: { pipeline_node_id: number }) => c.pipeline_node_id === fx.solved);
    expect(solvedCells.map((c: { a: { value: unknown }; b: { value: unknown }; flip: boolean; delta: number }) => [c.a.value, c.b.value, c.flip, c.delta])).toEqual([
      [true, false, true, -1],
      [true, true, false, 0],
      [false, false, false, 0],
    ]);
    const quality = res.json.cells.filter((c: { pipeline_node_id: number }) => c.pipeline_node_id === fx.quality);
    expect(quality.map((c: { delta: number | null; flip: boolean }) => [c.delta, c.flip])).toEqual([
      [0.5, true],
      [-0.5, true],
      [null, false],
    ]);
    expect(quality[2]).toMatchObject({ entity_id: fx.convs[2], a: { status: "completed", score: 1 }, b: { status: "failed", value: null } });
  });

  it("totals each run and names what changed per metric: the model for both, the prompt version for the edited one", async () => {
    const res = await get(`a=${fx.runA}&b=${fx.runB}`);
    expect(res.json.a).toMatchObject({ id: fx.runA, model: "judge-alpha", models: ["judge-alpha"], results: 6, completed: 6, failed: 0, input_tokens: 600, output_tokens: 60, cost_usd: 0.0012 });
    expect(res.json.b).toMatchObject({ id: fx.runB, model: "judge-beta", models: ["judge-beta"], results: 6, completed: 5, failed: 1, input_tokens: 500, cost_usd: null });
    const [solved, quality] = res.json.metrics;
    expect(solved).toMatchObject({ pipeline_node_id: fx.solved, n: 3, flips: 1, changed: ["model", "prompt"], models: { a: ["judge-alpha"], b: ["judge-beta"] } });
    expect(solved.accuracy).toBeCloseTo(2 / 3, 12);
    expect(solved.mean_delta).toBeCloseTo(-1 / 3, 12);
    expect(solved.prompt_version.a).toMatchObject({ version: 1, prompt: "Solved? @HISTORY" });
    expect(solved.prompt_version.b).toMatchObject({ version: 2, prompt: "Was the task solved in full? @HISTORY" });
    // Quality: two cells judged by both runs, ranks reversed.
    expect(quality).toMatchObject({ pipeline_node_id: fx.quality, n: 2, flips: 2, changed: ["model"], mean_delta: 0 });
    expect(quality.prompt_version.a.version).toBe(1);
    expect(quality.prompt_version.b.version).toBe(1);
    expect(quality.spearman).toBe(-1);

    const one = await get(`a=${fx.runA}&b=${fx.runB}&pipeline_node_id=${fx.quality}`);
    expect(one.json.metrics.map((m: { pipeline_node_id: number }) => m.pipeline_node_id)).toEqual([fx.quality]);
    expect(one.json.cells).toHaveLength(3);
  });

  it("refuses runs it cannot compare", async () => {
    expect((await get(`a=${fx.runA}&b=999999`)).status).toBe(404);
    const across = await get(`a=${fx.runA}&b=${fx.otherRun}`);
    expect(across.status).toBe(422);
    expect(across.json.error.details[0].path).toBe("b");
    expect((await get(`a=${fx.runA}`)).status).toBe(400);
    expect((await get("a=x&b=1")).status).toBe(400);
  });
});

describe("GET /api/evaluation-pipeline-nodes/{id}/versions", () => {
  it("lists the metric's prompt versions, oldest first, a save without a definition change adding none", async () => {
    expect((await call(metricItem.PATCH, "PATCH", "", { params: { id: fx.solved }, body: { name: "Solved (renamed)" } })).status).toBe(200);
    const res = await call(versions.GET, "GET", "", { params: { id: fx.solved } });
    expect(res.status).toBe(200);
    expect(res.json.map((v: { version: number; prompt: string }) => [v.version, v.prompt])).toEqual([
      [1, "Solved? @HISTORY"],
      [2, "Was the task solved in full? @HISTORY"],
    ]);
    expect((await call(versions.GET, "GET", "", { params: { id: 999999 } })).status).toBe(404);
  });
});
