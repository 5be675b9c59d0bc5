/**
 * Issue 51.3 through the routes, against the judge double: a rewritten rubric that lost a variable the
 * metric's prompt uses (@HISTORY, @GOAL: the judge would never see the conversation) is no candidate —
 * no prompt to promote, not even forced, and the reason said; a rewrite that keeps them still is one. With
 * the file's reward as the truth, annotators who disagree with each other are not warned about.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as labels from "@/app/api/labels/route";
import { clearJudgeCache } from "@/db/repositories/judge";
import { waitForAlignment } from "@/lib/align";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import * as collection from "./route";
import * as item from "./[id]/route";
import * as promote from "./[id]/promote/route";

let double: JudgeDouble;
const N = 24;
const PROMPT = "Goal: @GOAL\n\nWas the customer's request resolved? @HISTORY";

async function dataset(name: string) {
  const file = JSON.stringify({
    conversations: Array.from({ length: N }, (_, i) => ({
      name: `case${i}`,
      meta: { reward: i % 2 === 0 ? 1 : 0 },
      messages: [
        { role: "user", content: `case${i} where is my refund` },
        { role: "assistant", content: i % 2 === 0 ? "refund approved and processed" : "unable to locate the account" },
      ],
    })),
  });
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name } });
  expect(imported.status).toBe(201);
  const datasetId = imported.json.dataset_id as number;
  const convs = await call(conversationsRoute.GET, "GET", "/x", { params: { id: datasetId } });
  const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: {
      dataset_id: datasetId,
      name: "Resolved",
      evaluation_level: "conversation",
      prompt: PROMPT,
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(created.status, created.text).toBe(201);
  const metricId = created.json.id as number;
  // Two annotators who disagree on every cell they both labelled.
  for (const [i, c] of (convs.json as Array<{ id: number }>).slice(0, 10).entries()) {
    for (const [user, value] of [["ann", i % 2 === 0], ["bob", i % 2 !== 0]] as const) {
      const res = await call(labels.POST, "POST", "/api/labels", {
        body: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "conversation", entity_id: c.id, value },
        headers: { "x-user-id": user },
      });
      expect(res.status).toBe(201);
    }
  }
  return metricId;
}

async function aligned(metricId: number) {
  const res = await call(collection.POST, "POST", "/api/alignments", { body: { pipeline_node_id: metricId, truth: "reference", strategies: ["rewrite"], folds: 3 } });
  expect(res.status, res.text).toBe(202);
  await waitForAlignment(res.json.id);
  const got = await call(item.GET, "GET", "/x", { params: { id: res.json.id } });
  expect(got.json.status, got.json.error).toBe("completed");
  return got.json;
}

beforeAll(async () => {
  double = await startJudgeDouble();
});
afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
  await double?.close();
});
beforeEach(async () => {
  // The optimiser is asked the same thing in both tests: its first answer must not be served from the cache.
  await clearJudgeCache();
  double.reset();
  process.env.OPENAI_BASE_URL = double.baseURL;
  resetConfig();
});

describe("a rewritten rubric must keep the variables the original needs (issue 51.3)", () => {
  it("one that lost @HISTORY and @GOAL is no candidate: no prompt, the reason said, promote refused even forced; no annotator warning with the reward as truth", async () => {
    const metricId = await dataset("lost variables");
    double.addRule({ match: "You improve the rubric", behaviour: { kind: "verdict", body: { rubric: "Resolved means the refund went through." } } });
    const a = await aligned(metricId);
    expect(a.warnings).toEqual([]);
    expect(a.annotator_kappa).toBeNull();
    const rewrite = a.candidates.find((c: { strategy: string }) => c.strategy === "rewrite");
    expect(rewrite.prompt).toBeUndefined();
    expect(rewrite.beats_baseline).toBe(false);
    expect(rewrite.error).toMatch(/lost @GOAL, @HISTORY, which the metric's prompt uses: the judge would not see them/);
    expect(a.recommended).toBeNull();
    const forced = await call(promote.POST, "POST", "/x", { params: { id: a.id }, body: { strategy: "rewrite", force: true } });
    expect(forced.status).toBe(409);
    expect(forced.json.error.message).toMatch(/no prompt to promote: .*lost @GOAL, @HISTORY/);
  });

  it("one that keeps them is a candidate, promotable when forced", async () => {
    const metricId = await dataset("kept variables");
    double.addRule({ match: "You improve the rubric", behaviour: { kind: "verdict", body: { rubric: "Goal: @GOAL. Resolved means the refund went through. @HISTORY" } } });
    const a = await aligned(metricId);
    const rewrite = a.candidates.find((c: { strategy: string }) => c.strategy === "rewrite");
    expect(rewrite, JSON.stringify(rewrite)).toBeDefined();
    expect(rewrite.prompt, JSON.stringify(rewrite)).toBe("Goal: @GOAL. Resolved means the refund went through. @HISTORY");
    expect(rewrite.error).toBeNull();
    const forced = await call(promote.POST, "POST", "/x", { params: { id: a.id }, body: { strategy: "rewrite", force: true } });
    expect(forced.status, forced.text).toBe(200);
  });
});
