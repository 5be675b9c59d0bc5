import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { metaFieldsSchema, referencePreviewSchema } from "@/lib/schemas/references";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as metaFields from "@/app/api/datasets/[id]/meta-fields/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as item from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as labels from "@/app/api/labels/route";
import * as grid from "@/app/api/datasets/[id]/grid/route";
import * as preview from "./route";

// Rewards 1, 0.5, 0, 1 and one trajectory without a reward; the assistant replies carry a rank.
const rewards = [1, 0.5, 0, 1, undefined];
const file = JSON.stringify({
  conversations: rewards.map((reward, i) => ({
    name: `trajectory ${i}`,
    meta: { ...(reward === undefined ? {} : { reward }), task: { id: `t${i}`, kind: i % 2 ? "search" : "booking" }, tags: ["a"] },
    messages: [
      { role: "user", content: `task ${i}` },
      { role: "assistant", content: `answer ${i}`, meta: { rank: i % 3 } },
    ],
  })),
});

let datasetId: number;
let solved: number;
let polite: number;
let score: number;
const post = (id: number, body: unknown) => call(preview.POST, "POST", `/api/evaluation-pipeline-nodes/${id}/reference-preview`, { params: { id }, body });

beforeAll(async () => {
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "trajectories" } });
  expect(imported.status).toBe(201);
  datasetId = imported.json.dataset_id;
  const create = async (body: Record<string, unknown>) =>
    (await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: datasetId, prompt: "Judge @HISTORY", ...body } })).json.id as number;
  solved = await create({ name: "Solved", evaluation_level: "conversation", output_type: "checkbox" });
  score = await create({ name: "Goal", evaluation_level: "conversation", output_type: "progress" });
  polite = await create({ name: "Polite", evaluation_level: "message", prompt: "Polite? @CURRENT_MESSAGE.output", output_type: "checkbox" });
});

describe("GET /api/datasets/{id}/meta-fields", () => {
  it("lists the scalar fields of conversation and message meta with counts and examples, most common first", async () => {
    const res = await call(metaFields.GET, "GET", `/api/datasets/${datasetId}/meta-fields`, { params: { id: datasetId } });
    expect(res.status).toBe(200);
    metaFieldsSchema.parse(res.json);
    expect(res.json.sampled).toEqual({ conversation: 5, message: 5 });
    expect(res.json.conversation).toEqual([
      { path: "meta.task.id", types: ["string"], count: 5, examples: ["t0", "t1", "t2", "t3", "t4"] },
      { path: "meta.task.kind", types: ["string"], count: 5, examples: ["booking", "search"] },
      { path: "meta.reward", types: ["number"], count: 4, examples: [1, 0.5, 0] },
    ]);
    expect(res.json.message).toEqual([{ path: "meta.rank", types: ["number"], count: 5, examples: [0, 1, 2] }]);
  });

  it("404s for a dataset that does not exist", async () => {
    const res = await call(metaFields.GET, "GET", "/api/datasets/999999/meta-fields", { params: { id: 999999 } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
  });
});

describe("POST /api/evaluation-pipeline-nodes/{id}/reference-preview", () => {
  it("counts pass and fail under a rule, and the cells without the field", async () => {
    const res = await post(solved, { reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } } });
    expect(res.status).toBe(200);
    referencePreviewSchema.parse(res.json);
    expect(res.json).toMatchObject({ cells: 5, read: 4, missing: 1, pass: 2, fail: 2, other: 0 });
    expect(res.json.readings.map((r: { value: unknown }) => r.value)).toEqual([true, false, false, true]);
  });

  it("reads the field itself for a score metric without a rule", async () => {
    const res = await post(score, { reference: { source: "meta", level: "conversation", path: "meta.reward" } });
    expect(res.json).toMatchObject({ cells: 5, read: 4, pass: 0, fail: 0, other: 4 });
    expect(res.json.readings.map((r: { value: unknown }) => r.value)).toEqual([1, 0.5, 0, 1]);
  });

  it("reads message meta for a message metric, one cell per assistant message", async () => {
    const res = await post(polite, { reference: { source: "meta", level: "message", path: "meta.rank", rule: { op: "==", value: 0 } } });
    expect(res.json).toMatchObject({ cells: 5, read: 5, pass: 2, fail: 3 });
    expect(res.json.readings.every((r: { entity_type: string }) => r.entity_type === "message")).toBe(true);
  });

  it("previews the saved reference when none is given, and labels as a reference", async () => {
    expect((await post(solved, {})).json).toMatchObject({ reference: null, cells: 5, read: 0, missing: 5 });
    const saved = await call(item.PATCH, "PATCH", `/api/evaluation-pipeline-nodes/${solved}`, {
      params: { id: solved },
      body: { reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: "==", value: 0 } } },
    });
    expect(saved.status).toBe(200);
    expect((await post(solved, {})).json).toMatchObject({ pass: 1, fail: 3, missing: 1 });

    const rows = (await call(grid.GET, "GET", `/api/datasets/${datasetId}/grid?level=conversation`, { params: { id: datasetId } })).json;
    const label = await call(labels.POST, "POST", "/api/labels", {
      body: { dataset_id: datasetId, pipeline_node_id: solved, entity_type: "conversation", entity_id: rows[2].entity_id, value: true },
    });
    expect(label.status).toBe(201);
    const res = await post(solved, { reference: { source: "labels" } });
    expect(res.json).toMatchObject({ cells: 5, read: 1, pass: 1, fail: 0, missing: 4 });
    expect(res.json.readings).toEqual([{ entity_type: "conversation", entity_id: rows[2].entity_id, value: true }]);
  });

  it("rejects a reference the metric could not save with the reason, and a bad body with 400", async () => {
    const bad = await post(polite, { reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: "high" } } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details).toEqual([{ path: "reference.rule.value", message: "must be a number with >=" }]);
    const path = await post(solved, { reference: { source: "meta", level: "conversation", path: "reward" } });
    expect(path.status).toBe(400);
    expect((await post(999999, {})).status).toBe(404);
  });
});
