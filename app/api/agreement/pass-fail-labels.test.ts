/**
 * Issue 51.2 through GET /api/agreement: a score metric labelled pass/fail (the review queue stores 1 and
 * 0) is compared as the labels are — pass/fail at the metric's threshold — by default. Compared "as scores
 * within 0.1", the judge's 0.80 never equalled a label's 1.0: accuracy 0 and every cell a disagreement,
 * those where both said pass included. `compare=scores` still asks for scores; a threshold is still obeyed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as labels from "@/app/api/labels/route";
import { getMetricRow } from "@/lib/metrics/metrics";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { addTestResult, createTestExecution } from "@/lib/testing/seed/results";
import * as agreement from "./route";

const agree = (qs: string) => call(agreement.GET, "GET", `/api/agreement?${qs}`);
const N = 10;
/** People's verdicts: the first six pass, the last four fail. */
const passes = Array.from({ length: N }, (_, i) => i < 6);

let base: string;
let conversationIds: number[];

beforeAll(async () => {
  const file = JSON.stringify({
    conversations: Array.from({ length: N }, (_, i) => ({ name: `case ${i}`, messages: [{ role: "user", content: `q${i}` }, { role: "assistant", content: `a${i}` }] })),
  });
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "pass/fail labels" } });
  expect(imported.status).toBe(201);
  const datasetId = imported.json.dataset_id as number;
  conversationIds = (await call(conversationsRoute.GET, "GET", "/x", { params: { id: datasetId } })).json.map((c: { id: number }) => c.id);
  const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "Helpful", evaluation_level: "conversation", prompt: "How helpful? @HISTORY", output_type: "progress" },
  });
  expect(created.status).toBe(201);
  const node = await getMetricRow(created.json.id);
  const execution = await createTestExecution(node);
  // The judge (as the judge double answers) gives every cell 0.80.
  for (const id of conversationIds) {
    await addTestResult({ executionId: execution.id, node, entity: { type: "conversation", id, conversationId: id }, result: { score: 0.8, reasoning: "r" }, score: 0.8 });
  }
  for (const [i, id] of conversationIds.entries()) {
    const res = await call(labels.POST, "POST", "/api/labels", {
      body: { dataset_id: datasetId, pipeline_node_id: node.id, entity_type: "conversation", entity_id: id, value: passes[i] ? 1 : 0 },
    });
    expect(res.status).toBe(201);
  }
  base = `dataset_id=${datasetId}&pipeline_node_id=${node.id}&a=execution:${execution.id}&b=labels`;
});

describe("a score metric against pass/fail labels (issue 51.2)", () => {
  it("compares as pass/fail at the metric's threshold by default: the six both called pass agree", async () => {
    const res = await agree(base);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ kind: "score", compared_as: "pass_fail", threshold: 0.5, n: N, accuracy: 0.6 });
    expect(res.json.confusion.counts).toEqual([
      [6, 4],
      [0, 0],
    ]);
    expect(res.json.disagreements.map((d: { entity_id: number }) => d.entity_id)).toEqual(conversationIds.slice(6));
    expect(res.json.confusion.false_pass.map((d: { entity_id: number }) => d.entity_id)).toEqual(conversationIds.slice(6));
  });

  it("compares as scores only when asked, and obeys a threshold given", async () => {
    const scores = await agree(`${base}&compare=scores`);
    expect(scores.json).toMatchObject({ compared_as: "scores", threshold: null, tolerance: 0.1, accuracy: 0 });
    const tolerance = await agree(`${base}&tolerance=0.2`);
    expect(tolerance.json).toMatchObject({ compared_as: "scores", accuracy: 0.6 });
    const high = await agree(`${base}&threshold=0.9`);
    expect(high.json).toMatchObject({ compared_as: "pass_fail", threshold: 0.9, accuracy: 0.4 });
    const asked = await agree(`${base}&compare=pass_fail&threshold=0.5`);
    expect(asked.json).toMatchObject({ compared_as: "pass_fail", accuracy: 0.6 });
    expect((await agree(`${base}&compare=sideways`)).status).toBe(400);
  });
});
