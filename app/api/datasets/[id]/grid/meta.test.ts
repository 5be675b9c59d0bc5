import { inOrder } from "@/lib/testing/seed/rows";
import { beforeAll, describe, expect, it } from "vitest";
import { getMetricRow } from "@/lib/metrics/metrics";
import { gridRowSchema } from "@/lib/schemas/executions";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { addTestResult, createTestExecution } from "@/lib/testing/seed/results";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as grid from "./route";

const rewards = [1, 1, 0, 0, 1, undefined];
const file = JSON.stringify({
  conversations: rewards.map((reward, i) => ({
    name: `trajectory ${i}`,
    meta: { ...(reward === undefined ? {} : { reward }), task: { kind: i % 2 ? "search" : "booking" }, solved: reward === 1 },
    messages: [
      { role: "user", content: `task ${i}` },
      { role: "assistant", content: `answer ${i}` },
    ],
  })),
});

let datasetId: number;
let judge: number;
let messageMetric: number;
const get = (qs: string) => call(grid.GET, "GET", `/api/datasets/${datasetId}/grid?${qs}`, { params: { id: datasetId } });
const names = (res: { json: Array<{ label: string }> }) => res.json.map((r) => r.label.replace("trajectory ", ""));

beforeAll(async () => {
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "trajectories" } });
  expect(imported.status).toBe(201);
  datasetId = imported.json.dataset_id;
  const create = async (body: Record<string, unknown>) =>
    (await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: datasetId, prompt: "Judge @HISTORY", ...body } })).json.id as number;
  judge = await create({ name: "Solved", evaluation_level: "conversation", output_type: "checkbox" });
  messageMetric = await create({ name: "Polite", evaluation_level: "message", prompt: "Polite? @CURRENT_MESSAGE.output", output_type: "checkbox" });
  const node = await getMetricRow(judge);
  const execution = await createTestExecution(node);
  const rows = (await get("")).json as Array<{ entity_id: number }>;
  // Judge: pass, fail, pass, fail, (failed), (never run)
  await inOrder([true, false, true, false], async (value, i) =>
    await addTestResult({ executionId: execution.id, node, entity: { type: "conversation", id: rows[i].entity_id, conversationId: rows[i].entity_id }, result: { value }, score: value ? 1 : 0 }),
  );
  await addTestResult({ executionId: execution.id, node, entity: { type: "conversation", id: rows[4].entity_id, conversationId: rows[4].entity_id }, status: "failed", error: "timeout" });
});

describe("GET /api/datasets/{id}/grid with meta columns, filter and sort", () => {
  it("returns the asked meta keys on each row, null when absent, with their JSON types", async () => {
    const res = await get("meta=reward,task.kind,solved");
    expect(res.status).toBe(200);
    for (const row of res.json) gridRowSchema.parse(row);
    expect(res.json.map((r: { meta: unknown }) => r.meta)).toEqual([
      { reward: 1, "task.kind": "booking", solved: true },
      { reward: 1, "task.kind": "search", solved: true },
      { reward: 0, "task.kind": "booking", solved: false },
      { reward: 0, "task.kind": "search", solved: false },
      { reward: 1, "task.kind": "booking", solved: true },
      { reward: null, "task.kind": "search", solved: false },
    ]);
    expect((await get("")).json[0].meta).toBeUndefined();
  });

  it("filters on a meta field and the judge's verdict together: reward = 0 and judge = pass", async () => {
    const res = await get(`filter=meta.reward==0;metric.${judge}==pass&meta=reward`);
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["2"]);
    expect(res.headers.get("x-total-count")).toBe("1");
    expect(names(await get(`filter=meta.reward>=1;metric.${judge}==fail`))).toEqual(["1"]);
    expect(names(await get(`filter=metric.${judge}==failed`))).toEqual(["4"]);
    expect(names(await get(`filter=metric.${judge}==none`))).toEqual(["5"]);
    expect(names(await get(`filter=metric.${judge}!=pass`))).toEqual(["1", "3", "4", "5"]);
    expect(names(await get(`filter=metric.${judge}>=1`))).toEqual(["0", "2"]);
    expect(names(await get("filter=meta.task.kind==search"))).toEqual(["1", "3", "5"]);
    expect(names(await get("filter=meta.solved==true"))).toEqual(["0", "1", "4"]);
    // Rows without the field never match, whatever the operator.
    expect(names(await get("filter=meta.reward!=1"))).toEqual(["2", "3"]);
  });

  it("sorts by a meta field or a metric's latest score, rows without a value last, pages counting the filtered rows", async () => {
    expect(names(await get("sort=meta.reward"))).toEqual(["2", "3", "0", "1", "4", "5"]);
    expect(names(await get("sort=-meta.reward"))).toEqual(["0", "1", "4", "2", "3", "5"]);
    expect(names(await get(`sort=-metric.${judge}`))).toEqual(["0", "2", "1", "3", "4", "5"]);
    const page = await get("sort=-meta.reward&filter=meta.reward>=0&limit=2&offset=2");
    expect(names(page)).toEqual(["4", "2"]);
    expect(page.headers.get("x-total-count")).toBe("5");
  });

  it("gives message rows their conversation's meta", async () => {
    const res = await get("level=message&meta=reward&filter=meta.reward==0");
    expect(res.status).toBe(200);
    expect(res.json.map((r: { label: string; meta: unknown }) => [r.label, r.meta])).toEqual([
      ["answer 2", { reward: 0 }],
      ["answer 3", { reward: 0 }],
    ]);
  });

  it("refuses malformed parameters (400) and metrics it cannot use (422)", async () => {
    expect((await get("filter=reward==0")).status).toBe(400);
    expect((await get("sort=meta.")).status).toBe(400);
    expect((await get("meta=a b")).status).toBe(400);
    const otherLevel = await get(`filter=metric.${messageMetric}==pass`);
    expect(otherLevel.status).toBe(422);
    expect(otherLevel.json.error.details[0]).toMatchObject({ path: "filter" });
    expect((await get("sort=metric.999999")).status).toBe(422);
    expect((await get(`filter=metric.${judge}>=high`)).status).toBe(422);
    expect((await get(`filter=metric.${judge}>=pass`)).status).toBe(422);
  });
});
