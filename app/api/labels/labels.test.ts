import { inOrder } from "@/lib/testing/seed/rows";
import { beforeAll, describe, expect, it } from "vitest";
import { getMetricRow } from "@/lib/metrics/metrics";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { addTestResult, createTestExecution } from "@/lib/testing/seed/results";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as metricItem from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as agreement from "@/app/api/agreement/route";
import * as collection from "./route";
import * as item from "./[id]/route";

const post = (body: unknown, user?: string) =>
  call(collection.POST, "POST", "/api/labels", { body, headers: user ? { "x-user-id": user } : {} });
const list = (qs: string) => call(collection.GET, "GET", `/api/labels?${qs}`);
const remove = (id: number, user?: string) => call(item.DELETE, "DELETE", `/api/labels/${id}`, { params: { id }, headers: user ? { "x-user-id": user } : {} });
const agree = (qs: string) => call(agreement.GET, "GET", `/api/agreement?${qs}`);

/** Six agent trajectories with a ground-truth outcome per conversation (the last one has none). */
const rewards = [1, 1, 0, 0, 1, undefined];
const file = JSON.stringify({
  conversations: rewards.map((reward, i) => ({
    name: `trajectory ${i}`,
    meta: reward === undefined ? { source: "sim" } : { reward, source: "sim" },
    messages: [
      { role: "user", content: `task ${i}` },
      { role: "assistant", content: `answer ${i}` },
    ],
  })),
});

let datasetId: number;
let conversationIds: number[];
let checkboxMetric: number;
let scoreMetric: number;
let assistantMessageId: number;

beforeAll(async () => {
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "trajectories" } });
  expect(imported.status).toBe(201);
  datasetId = imported.json.dataset_id ?? imported.json.dataset.id;
  const convs = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  conversationIds = convs.json.map((c: { id: number }) => c.id);
  const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: {
      dataset_id: datasetId,
      name: "Task solved",
      evaluation_level: "conversation",
      prompt: "Did the assistant solve the task? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(created.status).toBe(201);
  checkboxMetric = created.json.id;
  const score = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "Quality", evaluation_level: "message", prompt: "Rate @CURRENT_MESSAGE.output", output_type: "progress" },
  });
  expect(score.status).toBe(201);
  scoreMetric = score.json.id;
  const conv = await call((await import("@/app/api/conversations/[id]/route")).GET, "GET", "", { params: { id: conversationIds[0] } });
  assistantMessageId = conv.json.messages.find((m: { role: string }) => m.role === "assistant").id;
});

describe("POST /api/labels", () => {
  it("labels a cell as the caller, and a relabel supersedes the previous label but keeps it as history", async () => {
    const cell = { dataset_id: datasetId, pipeline_node_id: checkboxMetric, entity_type: "conversation", entity_id: conversationIds[3] };
    const first = await post({ ...cell, value: true, note: "looks right" }, "ana");
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ ...cell, conversation_id: conversationIds[3], user_id: "ana", value: true, score: 1, note: "looks right", current: true, superseded_at: null });
    const second = await post({ ...cell, value: false }, "ana");
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ value: false, score: 0, note: null, current: true });
    const other = await post({ ...cell, value: true }, "bo");
    expect(other.status).toBe(201);

    const current = await list(`dataset_id=${datasetId}&pipeline_node_id=${checkboxMetric}&user_id=ana`);
    expect(current.status).toBe(200);
    expect(current.json.map((l: { id: number }) => l.id)).toEqual([second.json.id]);
    const history = await list(`dataset_id=${datasetId}&user_id=ana&include_history=true`);
    expect(history.json.map((l: { id: number; current: boolean }) => [l.id, l.current])).toEqual([
      [second.json.id, true],
      [first.json.id, false],
    ]);
    expect(history.json[1].superseded_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const everyone = await list(`dataset_id=${datasetId}&entity_type=conversation&entity_id=${conversationIds[3]}`);
    expect(everyone.json.map((l: { user_id: string }) => l.user_id)).toEqual(["bo", "ana"]);
    expect(everyone.headers.get("x-total-count")).toBe("2");

    // Only the author deletes a label; deleting the current one leaves the history.
    expect((await remove(second.json.id, "bo")).status).toBe(403);
    expect((await remove(second.json.id, "ana")).status).toBe(204);
    expect((await remove(second.json.id, "ana")).status).toBe(404);
    const after = await list(`dataset_id=${datasetId}&user_id=ana&include_history=true`);
    expect(after.json.map((l: { id: number }) => l.id)).toEqual([first.json.id]);
    await remove(other.json.id, "bo");
    await remove(first.json.id, "ana");
  });

  it("checks the value against the metric's output type and the cell against the metric, changing nothing on refusal", async () => {
    const before = (await list(`dataset_id=${datasetId}&include_history=true`)).json.length;
    const base = { dataset_id: datasetId, pipeline_node_id: checkboxMetric, entity_type: "conversation", entity_id: conversationIds[0] };
    const refused = [
      [{ ...base, value: 0.7 }, "value", /true or false/],
      [{ ...base, value: null }, "value", /required unless a note/],
      [{ ...base, entity_type: "message", entity_id: assistantMessageId, value: true }, "entity_type", /must be conversation/],
      [{ ...base, entity_id: 999999, value: true }, "entity_id", /must be a conversation of dataset/],
      [{ ...base, pipeline_node_id: scoreMetric, entity_type: "message", entity_id: assistantMessageId, value: 1.5 }, "value", /between 0 and 1/],
      [{ ...base, pipeline_node_id: scoreMetric, entity_type: "message", entity_id: assistantMessageId - 1, value: 0.5 }, "entity_id", /assistant message/],
    ] as const;
    for (const [body, path, message] of refused) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.error.code).toBe("unprocessable");
      expect(res.json.error.details[0].path).toBe(path);
      expect(res.json.error.details[0].message).toMatch(message);
    }
    const malformed = await post({ ...base, entity_type: "turn", value: true });
    expect(malformed.status).toBe(400);
    expect((await list(`dataset_id=${datasetId}&include_history=true`)).json.length).toBe(before);

    const note = await post({ ...base, value: null, note: "unclear task" });
    expect(note.status).toBe(201);
    expect(note.json).toMatchObject({ value: null, score: null, note: "unclear task", user_id: "default" });
    const score = await post({ ...base, pipeline_node_id: scoreMetric, entity_type: "message", entity_id: assistantMessageId, value: 0.75 });
    expect(score.status).toBe(201);
    expect(score.json).toMatchObject({ score: 0.75, conversation_id: conversationIds[0] });
    await remove(note.json.id);
    await remove(score.json.id);
  });

  it("answers 404 for an unknown dataset and 400 for a bad query", async () => {
    expect((await list("dataset_id=999999")).status).toBe(404);
    expect((await list("dataset_id=abc")).status).toBe(400);
    expect((await list(`dataset_id=${datasetId}&entity_type=conversation`)).status).toBe(400);
  });
});

describe("metric reference", () => {
  it("is validated on save (422 with the reason) and returned with the metric", async () => {
    const got = await call(metricItem.GET, "GET", "", { params: { id: checkboxMetric } });
    expect(got.json.reference).toEqual({ source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } });
    const patch = (reference: unknown) => call(metricItem.PATCH, "PATCH", "", { params: { id: checkboxMetric }, body: { reference } });
    expect((await patch({ source: "meta", level: "message", path: "meta.reward" })).status).toBe(422);
    expect((await patch({ source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: "high" } })).status).toBe(422);
    expect((await patch({ source: "meta", level: "conversation", path: "reward" })).status).toBe(400);
    expect((await patch({ source: "somewhere" })).status).toBe(400);
    const unchanged = await call(metricItem.GET, "GET", "", { params: { id: checkboxMetric } });
    expect(unchanged.json.reference).toEqual(got.json.reference);
  });
});

describe("GET /api/agreement", () => {
  it("compares an execution with a meta reference on imported data: the confusion matrix lists the false pass and false fail", async () => {
    const node = await getMetricRow(checkboxMetric);
    const execution = await createTestExecution(node);
    // Judge: pass, fail, pass, fail, pass, pass against rewards 1, 1, 0, 0, 1, (none).
    await inOrder([true, false, true, false, true, true], async (value, i) =>
      await addTestResult({
        executionId: execution.id,
        node,
        entity: { type: "conversation", id: conversationIds[i], conversationId: conversationIds[i] },
        result: { value, reasoning: "r" },
        score: value ? 1 : 0,
      }),
    );
    const res = await agree(`dataset_id=${datasetId}&pipeline_node_id=${checkboxMetric}&a=execution:${execution.id}&b=reference`);
    expect(res.status).toBe(200);
    const cell = (i: number) => ({ entity_type: "conversation", entity_id: conversationIds[i], conversation_id: conversationIds[i] });
    expect(res.json.n).toBe(5);
    expect(res.json.kind).toBe("binary");
    expect(res.json.confusion).toEqual({ labels: ["pass", "fail"], counts: [[2, 1], [1, 1]], false_pass: [cell(2)], false_fail: [cell(1)] });
    // By hand: po = 3/5, pe = 0.6·0.6 + 0.4·0.4 = 0.52, kappa = 0.08/0.48 = 1/6, se = sqrt(0.24 / (5·0.48²)).
    expect(res.json.accuracy).toBeCloseTo(0.6, 12);
    // Wilson for 3/5: (0.6 + z²/10 ± z·sqrt(0.24/5 + z²/100)) / (1 + z²/5).
    const z = 1.959963984540054;
    const wilson = (sign: number) => (0.6 + (z * z) / 10 + sign * z * Math.sqrt(0.24 / 5 + (z * z) / 100)) / (1 + (z * z) / 5);
    expect(res.json.intervals.accuracy[0]).toBeCloseTo(wilson(-1), 12);
    expect(res.json.intervals.accuracy[1]).toBeCloseTo(wilson(1), 12);
    expect(res.json.kappa).toBeCloseTo(1 / 6, 12);
    const se = Math.sqrt(0.24 / (5 * 0.48 * 0.48));
    expect(res.json.intervals.kappa[0]).toBeCloseTo(1 / 6 - 1.959963984540054 * se, 9);
    // 1/6 + 1.96·se ≈ 1.06, clipped to kappa's range.
    expect(res.json.intervals.kappa[1]).toBe(1);
    expect(res.json.spearman).toBeNull();
    expect(res.json.disagreements).toEqual([
      { ...cell(1), a: false, b: true },
      { ...cell(2), a: true, b: false },
    ]);

    // The grid's latest results read the same here; labels join in once given.
    const latest = await agree(`dataset_id=${datasetId}&pipeline_node_id=${checkboxMetric}&a=latest&b=reference`);
    expect(latest.json.confusion.counts).toEqual([[2, 1], [1, 1]]);
    const none = await agree(`dataset_id=${datasetId}&pipeline_node_id=${checkboxMetric}&a=latest&b=labels`);
    expect(none.json).toMatchObject({ n: 0, accuracy: null, kappa: null, confusion: { counts: [[0, 0], [0, 0]] } });
    await post({ dataset_id: datasetId, pipeline_node_id: checkboxMetric, entity_type: "conversation", entity_id: conversationIds[2], value: false });
    await post({ dataset_id: datasetId, pipeline_node_id: checkboxMetric, entity_type: "conversation", entity_id: conversationIds[5], value: true });
    const some = await agree(`dataset_id=${datasetId}&pipeline_node_id=${checkboxMetric}&a=latest&b=labels`);
    expect(some.json).toMatchObject({ n: 2, accuracy: 0.5, confusion: { counts: [[1, 1], [0, 0]], false_pass: [cell(2)] } });
  });

  it("refuses sources it cannot read", async () => {
    const base = `dataset_id=${datasetId}&pipeline_node_id=${scoreMetric}`;
    const noReference = await agree(`${base}&a=latest&b=reference`);
    expect(noReference.status).toBe(422);
    expect(noReference.json.error.details[0].path).toBe("b");
    expect((await agree(`${base}&a=execution:999999&b=labels`)).status).toBe(404);
    expect((await agree(`${base}&a=somewhere&b=labels`)).status).toBe(400);
    expect((await agree(`dataset_id=999999&pipeline_node_id=${scoreMetric}&a=latest&b=labels`)).status).toBe(404);
  });

  it("compares scores: Spearman with ties and MAE by hand, pass/fail figures at a threshold or through a rule", async () => {
    const convApi = await import("@/app/api/conversations/[id]/route");
    const messageIds: number[] = [];
    for (const id of conversationIds.slice(0, 5)) {
      const conv = await call(convApi.GET, "GET", "", { params: { id } });
      messageIds.push(conv.json.messages.find((m: { role: string }) => m.role === "assistant").id);
    }
    const node = await getMetricRow(scoreMetric);
    const execution = await createTestExecution(node);
    const judged = [0.2, 0.4, 0.6, 0.8, 1];
    const labelled = [0.25, 0.25, 0.75, 1, 0.75];
    await inOrder(messageIds, async (id, i) => {
      await addTestResult({ executionId: execution.id, node, entity: { type: "message", id, conversationId: conversationIds[i], messageId: id }, result: { score: judged[i], reasoning: "r" }, score: judged[i] });
    });
    for (const [i, id] of messageIds.entries()) {
      expect((await post({ dataset_id: datasetId, pipeline_node_id: scoreMetric, entity_type: "message", entity_id: id, value: labelled[i] })).status).toBe(201);
    }
    const base = `dataset_id=${datasetId}&pipeline_node_id=${scoreMetric}&a=execution:${execution.id}&b=labels`;
    const res = await agree(base);
    expect(res.status).toBe(200);
    // Ranks: a 1..5; b 1.5, 1.5, 3.5, 5, 3.5 → Σdxdy = 7.5, Σdx² = 10, Σdy² = 9 → ρ = 7.5/√90.
    expect(res.json).toMatchObject({ kind: "score", n: 5, kappa: null, confusion: null });
    expect(res.json.spearman).toBeCloseTo(7.5 / Math.sqrt(90), 12);
    const half = 1.959963984540054 / Math.sqrt(2);
    expect(res.json.intervals.spearman[0]).toBeCloseTo(Math.tanh(Math.atanh(7.5 / Math.sqrt(90)) - half), 12);
    // |errors| 0.05, 0.15, 0.15, 0.2, 0.25 → 0.16.
    expect(res.json.mae).toBeCloseTo(0.16, 12);
    // Scores agree within a tolerance (progress default 0.1, said in the answer): only the 0.05 apart does.
    expect(res.json).toMatchObject({ tolerance: 0.1, threshold: null, accuracy: 0.2 });
    expect(res.json.disagreements.map((d: { entity_id: number }) => d.entity_id)).toHaveLength(4);
    expect((await agree(`${base}&tolerance=0`)).json.accuracy).toBe(0);
    expect((await agree(`${base}&tolerance=0.15`)).json.accuracy).toBe(0.6);
    expect((await agree(`${base}&tolerance=-1`)).status).toBe(400);

    const cut = await agree(`${base}&threshold=0.5`);
    expect(cut.json).toMatchObject({ threshold: 0.5, accuracy: 1, kappa: 1, confusion: { counts: [[3, 0], [0, 2]] } });

    // A pass/fail rule on a progress metric compares at 0.5 by default: judged F F T T T, rewards 1 1 0 0 1.
    const patched = await call(metricItem.PATCH, "PATCH", "", {
      params: { id: scoreMetric },
      body: { reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } } },
    });
    expect(patched.status).toBe(200);
    const ref = await agree(`dataset_id=${datasetId}&pipeline_node_id=${scoreMetric}&a=execution:${execution.id}&b=reference`);
    expect(ref.status).toBe(200);
    expect(ref.json.n).toBe(5);
    expect(ref.json.threshold).toBe(0.5);
    expect(ref.json.confusion.counts).toEqual([[1, 2], [2, 0]]);
  });
});
