import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { countResults, executionNodeIds, insertMessageResult, loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import * as templates from "../metric-templates/route";
import * as templateItem from "../metric-templates/[id]/route";
import * as datasetItem from "../datasets/[id]/route";
import * as collection from "./route";
import * as item from "./[id]/route";
import * as preview from "./preview/route";
import * as conversationItem from "@/app/api/conversations/[id]/route";
import { storeGoal } from "@/db/repositories/judge";
import * as createAndImport from "../datasets/import/route";
import * as conversationsRoute from "../datasets/[id]/conversations/route";
import { upload } from "@/lib/testing/http/multipart";

const metricKeys = [
  "applies_to",
  "check",
  "created_at",
  "dataset_id",
  "depends_on",
  "description",
  "evaluation_level",
  "evaluation_pipeline_id",
  "id",
  "is_advanced",
  "kind",
  "model_name",
  "name",
  "output_schema",
  "output_type",
  "position",
  "prompt",
  "reference",
  "skip_rule",
  "template_id",
  "template_variables",
  "updated_at",
];

const create = (body: unknown) => call(collection.POST, "POST", "/api/evaluation-pipeline-nodes", { body });
const list = (datasetId: number | string) => call(collection.GET, "GET", `/api/evaluation-pipeline-nodes?dataset_id=${datasetId}`);
const get = (id: number) => call(item.GET, "GET", `/api/evaluation-pipeline-nodes/${id}`, { params: { id } });
const patch = (id: number, body: unknown) => call(item.PATCH, "PATCH", `/api/evaluation-pipeline-nodes/${id}`, { body, params: { id } });
const remove = (id: number) => call(item.DELETE, "DELETE", `/api/evaluation-pipeline-nodes/${id}`, { params: { id } });
const runPreview = (body: unknown) => call(preview.POST, "POST", "/api/evaluation-pipeline-nodes/preview", { body });

const scratch = {
  name: "Polite reply",
  evaluation_level: "message",
  prompt: "Is @CURRENT_MESSAGE.output a polite answer to @CURRENT_MESSAGE.input?",
  output_type: "checkbox",
};

let sample: LoadedSample;
let other: LoadedSample;
let systemTemplateId: number;

beforeAll(async () => {
  sample = await loadSampleDataset();
  other = await loadSampleDataset({ name: "other" });
  const all = (await call(templates.GET, "GET", "/api/metric-templates")).json as Array<{ id: number; name: string }>;
  systemTemplateId = all.find((t) => t.name === "Response Helpfulness")!.id;
});

describe("POST /api/evaluation-pipeline-nodes", () => {
  it("creates a metric from a template (a copy with overrides), creating the dataset's pipeline", async () => {
    const res = await create({ dataset_id: sample.datasetId, template_id: systemTemplateId, name: "Helpfulness (strict)" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(metricKeys);
    const template = (await call(templateItem.GET, "GET", "", { params: { id: systemTemplateId } })).json;
    expect(res.json).toMatchObject({
      dataset_id: sample.datasetId,
      template_id: systemTemplateId,
      name: "Helpfulness (strict)",
      description: template.description,
      evaluation_level: "message",
      prompt: template.prompt,
      output_type: "progress",
      is_advanced: true,
      template_variables: template.template_variables,
      position: 0,
    });
    const second = await create({ dataset_id: sample.datasetId, ...scratch });
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ template_id: null, position: 1, evaluation_pipeline_id: res.json.evaluation_pipeline_id });
    expect(second.json.template_variables).toEqual(["@CURRENT_MESSAGE.output", "@CURRENT_MESSAGE.input"]);
  });

  it("keeps its copy when the template is later edited or deleted", async () => {
    const t = (await call(templates.POST, "POST", "/api/metric-templates", { body: { ...scratch, name: "Mine" } })).json;
    const metric = (await create({ dataset_id: other.datasetId, template_id: t.id })).json;
    expect(metric).toMatchObject({ name: "Mine", prompt: scratch.prompt, template_id: t.id });
    await call(templateItem.PATCH, "PATCH", "", { params: { id: t.id }, body: { name: "Renamed", prompt: "@CONTENT?" } });
    expect((await get(metric.id)).json).toMatchObject({ name: "Mine", prompt: scratch.prompt });
    expect((await call(templateItem.DELETE, "DELETE", "", { params: { id: t.id } })).status).toBe(204);
    const after = await get(metric.id);
    expect(after.status).toBe(200);
    expect(after.json).toMatchObject({ name: "Mine", prompt: scratch.prompt, template_id: null });
    const p = await runPreview({ pipeline_node_id: metric.id, entity_id: other.conversations[0].messages[2].id });
    expect(p.status).toBe(200);
  });

  it("cannot copy another user's template (it is invisible to them)", async () => {
    const t = (await call(templates.POST, "POST", "/api/metric-templates", { body: { ...scratch, name: "Private" }, headers: { "x-user-id": "alice" } })).json;
    const stolen = await call(collection.POST, "POST", "/api/evaluation-pipeline-nodes", {
      body: { dataset_id: other.datasetId, template_id: t.id },
      headers: { "x-user-id": "bob" },
    });
    expect(stolen.status).toBe(404);
    const own = await call(collection.POST, "POST", "/api/evaluation-pipeline-nodes", {
      body: { dataset_id: other.datasetId, template_id: t.id },
      headers: { "x-user-id": "alice" },
    });
    expect(own.status).toBe(201);
  });

  it("requires name, evaluation_level, prompt and output_type without a template (400 per field)", async () => {
    const res = await create({ dataset_id: sample.datasetId, name: "x" });
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { path: string }) => d.path).sort()).toEqual(["evaluation_level", "output_type", "prompt"]);
    expect((await create({ ...scratch })).status).toBe(400);
    expect((await create({ ...scratch, dataset_id: "1" })).status).toBe(400);
  });

  it("404s for an unknown dataset or template, 422 for variables of another level", async () => {
    const noDataset = await create({ ...scratch, dataset_id: 999_999 });
    expect(noDataset.status).toBe(404);
    expect(noDataset.json.error.message).toBe("Dataset 999999 does not exist");
    const noTemplate = await create({ dataset_id: sample.datasetId, template_id: 999_999 });
    expect(noTemplate.status).toBe(404);
    expect(noTemplate.json.error.message).toBe("Metric template 999999 does not exist");

    const wrongLevel = await create({ ...scratch, dataset_id: sample.datasetId, prompt: "@STEP_NUMBER and @CONTENT" });
    expect(wrongLevel.status).toBe(422);
    expect(wrongLevel.json.error.message).toContain("@STEP_NUMBER");
    expect(wrongLevel.json.error.message).toContain("Valid variables at the message level:");
    // Overriding a template's level re-checks its prompt.
    const overridden = await create({ dataset_id: sample.datasetId, template_id: systemTemplateId, evaluation_level: "conversation" });
    expect(overridden.status).toBe(422);
  });
});

describe("list, get, patch and delete", () => {
  it("lists a dataset's metrics in column order; 400 without dataset_id, 404 for an unknown dataset", async () => {
    const ds = await loadSampleDataset({ name: "ordering" });
    const ids: number[] = [];
    for (const name of ["a", "b", "c"]) ids.push((await create({ ...scratch, name, dataset_id: ds.datasetId })).json.id);
    const res = await list(ds.datasetId);
    expect(res.status).toBe(200);
    expect(res.json.map((m: { name: string; position: number }) => [m.name, m.position])).toEqual([["a", 0], ["b", 1], ["c", 2]]);
    expect((await call(collection.GET, "GET", "/api/evaluation-pipeline-nodes")).status).toBe(400);
    expect((await list("x")).status).toBe(400);
    expect((await list(999_999)).status).toBe(404);

    // Moving a column renumbers the others; deleting one closes the gap.
    const moved = await patch(ids[2], { position: 0 });
    expect(moved.json.position).toBe(0);
    expect((await list(ds.datasetId)).json.map((m: { name: string }) => m.name)).toEqual(["c", "a", "b"]);
    await patch(ids[2], { position: 99 });
    expect((await list(ds.datasetId)).json.map((m: { name: string; position: number }) => [m.name, m.position])).toEqual([["a", 0], ["b", 1], ["c", 2]]);
    expect((await remove(ids[0])).status).toBe(204);
    expect((await list(ds.datasetId)).json.map((m: { name: string; position: number }) => [m.name, m.position])).toEqual([["b", 0], ["c", 1]]);
    const appended = await create({ ...scratch, name: "d", dataset_id: ds.datasetId });
    expect(appended.json.position).toBe(2);
  });

  it("patches fields, re-derives variables, and validates the level (422) without changing the metric", async () => {
    const { json: m } = await create({ ...scratch, dataset_id: sample.datasetId });
    const res = await patch(m.id, { prompt: "Was it kind? Contact me@example.com", output_type: "progress", description: "kindness" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ is_advanced: false, template_variables: [], output_type: "progress", description: "kindness" });
    const toStep = await patch(m.id, { evaluation_level: "step", prompt: "@CURRENT_STEP.tool_call fine?" });
    expect(toStep.json).toMatchObject({ evaluation_level: "step", template_variables: ["@CURRENT_STEP.tool_call"] });
    const bad = await patch(m.id, { evaluation_level: "conversation" });
    expect(bad.status).toBe(422);
    expect((await get(m.id)).json.evaluation_level).toBe("step");
    expect((await patch(m.id, {})).status).toBe(400);
    expect((await patch(m.id, { position: -1 })).status).toBe(400);
    expect((await patch(999_999, { name: "x" })).status).toBe(404);
  });

  it("deletes a metric with its results; executions stay, without the metric", async () => {
    const { json: m } = await create({ ...scratch, dataset_id: other.datasetId });
    const c = other.conversations[0];
    await insertMessageResult({ datasetId: other.datasetId, pipelineNodeId: m.id, conversationId: c.id, messageId: c.messages[2].id });
    expect(await countResults(m.id)).toBe(1);
    expect((await remove(m.id)).status).toBe(204);
    expect(await countResults(m.id)).toBe(0);
    expect(await executionNodeIds(other.datasetId)).toContain(null);
    expect((await get(m.id)).status).toBe(404);
    expect((await remove(m.id)).status).toBe(404);
  });

  it("goes with its dataset", async () => {
    const ds = await loadSampleDataset({ name: "doomed" });
    const { json: m } = await create({ ...scratch, dataset_id: ds.datasetId });
    await call(datasetItem.DELETE, "DELETE", "", { params: { id: ds.datasetId } });
    expect((await get(m.id)).status).toBe(404);
  });
});

describe("POST /api/evaluation-pipeline-nodes/preview", () => {
  it("returns the exact judge text for a prompt at a real message", async () => {
    const c = sample.conversations[0];
    const res = await runPreview({ prompt: "Reply: @CONTENT\nBefore: @PREVIOUS_ASSISTANT_MSG", evaluation_level: "message", entity_type: "message", entity_id: c.messages[2].id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual([
      "budget_tokens",
      "context_tokens",
      "goal",
      "missing",
      "model",
      "prompt",
      "system",
      "template_variables",
      "token_estimate",
      "truncated",
    ]);
    expect(res.json.prompt).toBe(
      'Reply: <conversation_data name="@CONTENT">\nI found TP218 departing 18:05 and arriving 06:30 for $612. Shall I book it?\n</conversation_data>\nBefore: (none)',
    );
    expect(res.json.template_variables).toEqual(["@CONTENT", "@PREVIOUS_ASSISTANT_MSG"]);
    expect(res.json.missing).toEqual(["@PREVIOUS_ASSISTANT_MSG"]);
    expect(res.json.system).toMatch(/"score": <number from 0 to 1>/);
    expect(res.json.goal).toBeNull();
  });

  it("says which goal text a @GOAL prompt sends: the first user message until a run extracts one, then the stored goal (issue 34.2)", async () => {
    const fresh = await loadSampleDataset({ name: `goal preview ${Date.now()}` });
    const c = fresh.conversations[0];
    process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/v1";
    resetConfig();
    try {
      const before = await runPreview({ prompt: "Goal: @GOAL", evaluation_level: "conversation", entity_id: c.id });
      expect(before.json.goal).toEqual({ source: "first_user_message", note: expect.stringContaining("A run first asks gpt-4o-mini for the goal (one call for this conversation") });
    } finally {
      delete process.env.OPENAI_BASE_URL;
      resetConfig();
    }
    await storeGoal(c.id, "Book a flight", "gpt-4o-mini");
    const after = await runPreview({ prompt: "Goal: @GOAL", evaluation_level: "conversation", entity_id: c.id });
    expect(after.json.goal).toEqual({ source: "extracted", note: "The goal gpt-4o-mini extracted from this conversation (stored; every run uses it)." });
    expect(after.json.prompt).toContain("Book a flight");
    const shown = await call(conversationItem.GET, "GET", "/x", { params: { id: c.id } });
    expect(shown.json).toMatchObject({ goal: "Book a flight", goal_generated_by: "gpt-4o-mini" });
  });

  describe("fitting the judge model's context", () => {
    afterEach(() => {
      delete process.env.JUDGE_CONTEXT_TOKENS;
      delete process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL;
      resetConfig();
    });
    const history = (c: LoadedSample["conversations"][number], model_name?: string) =>
      runPreview({ prompt: "Did the agent help?\n@HISTORY", evaluation_level: "conversation", entity_id: c.id, model_name });

    it("reports the model, its context, the token estimate and no cut when the transcript fits", async () => {
      const res = await history(sample.conversations[0]);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ model: "gpt-4o-mini", context_tokens: 128_000, budget_tokens: 128_000 - 2048, truncated: [] });
      expect(res.json.token_estimate).toBe(Math.ceil((res.json.system.length + res.json.prompt.length) / 3));
      expect(res.json.prompt).not.toMatch(/characters cut|more characters/);
    });

    it("cuts the middle of long items for a small model named in JUDGE_CONTEXT_TOKENS_BY_MODEL, never the final output", async () => {
      // An agent run whose tool result and final report are both long, imported the way a user would.
      const rows = Array.from({ length: 200 }, (_, i) => ({ region: `r${i}`, sales: i * 37 }));
      const report = `Report:\n${Array.from({ length: 60 }, (_, i) => `finding ${i}: region r${i} grew.`).join("\n")}\nEnd of report.`;
      const file = JSON.stringify({
        conversations: [
          {
            name: "long run",
            messages: [
              { role: "user", content: "Summarise sales by region." },
              {
                role: "assistant",
                content: report,
                steps: [{ tool_call: { name: "query", arguments: { q: "sales" } } }, { tool_result: { rows } }, { output_content: report }],
              },
            ],
          },
        ],
      });
      const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "long" } });
      expect(imported.status).toBe(201);
      const datasetId = imported.json.dataset_id as number;
      const conversations = await call(conversationsRoute.GET, "GET", "", { params: { id: datasetId } });
      const conversationId = conversations.json[0].id as number;

      process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL = JSON.stringify({ "tiny-judge": 2000 });
      resetConfig();
      const ask = (model_name?: string) =>
        runPreview({ prompt: "Is the report supported?\n@HISTORY", evaluation_level: "conversation", entity_id: conversationId, model_name });
      const full = await ask();
      expect(full.json.truncated).toEqual([]);
      expect(full.json.prompt).toContain(JSON.stringify({ rows }));
      expect(full.json.prompt.split(report).length - 1).toBe(1);

      const res = await ask("tiny-judge");
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        model: "tiny-judge",
        context_tokens: 2000,
        budget_tokens: 1500,
        truncated: [{ item: "@HISTORY: message 2 (assistant) step 2 tool_result", removed_characters: expect.any(Number) }],
      });
      const removed = res.json.truncated[0].removed_characters as number;
      expect(res.json.prompt).toContain(`[… ${removed} characters cut here to fit the judge's context …]`);
      expect(res.json.token_estimate).toBeLessThanOrEqual(1500);
      expect(res.json.token_estimate).toBeLessThan(full.json.token_estimate);
      expect(res.json.system).toMatch(/shortened to fit your context window/);
      // The final report arrives whole and once; the tool result keeps its beginning and end.
      expect(res.json.prompt.split(report).length - 1).toBe(1);
      const json = JSON.stringify({ rows });
      expect(res.json.prompt).toContain(json.slice(0, 80));
      expect(res.json.prompt).toContain(json.slice(-80));
    });

    it("uses JUDGE_CONTEXT_TOKENS for models not in the map, and rejects a blank model name", async () => {
      process.env.JUDGE_CONTEXT_TOKENS = "900";
      resetConfig();
      const res = await history(sample.conversations[0], "some-model");
      expect(res.json).toMatchObject({ model: "some-model", context_tokens: 900, budget_tokens: 675 });
      expect((await history(sample.conversations[0], " ")).status).toBe(400);
    });
  });

  it("previews a saved metric (entity_type defaults to its level) with its output format", async () => {
    const schema = { type: "object", properties: { score: { type: "number" }, ok: { type: "boolean" } }, required: ["score", "ok"] };
    const { json: m } = await create({ dataset_id: sample.datasetId, name: "Steps", evaluation_level: "step", prompt: "Step @STEP_NUMBER: @CURRENT_STEP.thinking", output_type: "json", output_schema: schema });
    const c = sample.conversations[0];
    const res = await runPreview({ pipeline_node_id: m.id, entity_id: c.messages[2].steps[0] });
    expect(res.status).toBe(200);
    expect(res.json.prompt).toContain("Step 1: <conversation_data");
    expect(res.json.system).toContain(JSON.stringify(schema));
  });

  it("appends default context in basic mode, at a conversation", async () => {
    const c = sample.conversations[3];
    const res = await runPreview({ prompt: "Was the user satisfied?", evaluation_level: "conversation", entity_id: c.id });
    expect(res.status).toBe(200);
    expect(res.json.prompt).toContain('Conversation to evaluate:\n<conversation_data name="transcript">\n[user]: Can you explain what a Roth IRA is');
    expect(res.json.template_variables).toEqual([]);
  });

  it("404s for an unknown entity or metric, 422 for a level mismatch, bad variables or another dataset's entity", async () => {
    const c = sample.conversations[0];
    const unknownMessage = await runPreview({ prompt: "@CONTENT", evaluation_level: "message", entity_id: 999_999 });
    expect(unknownMessage.status).toBe(404);
    expect(unknownMessage.json.error.message).toBe("Message 999999 does not exist");
    expect((await runPreview({ pipeline_node_id: 999_999, entity_id: c.id })).status).toBe(404);

    const mismatch = await runPreview({ prompt: "@CONTENT", evaluation_level: "message", entity_type: "step", entity_id: c.messages[2].steps[0] });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.error.details).toEqual([{ path: "entity_type", message: "must be message" }]);

    const badVariable = await runPreview({ prompt: "@STEP_NUMBER", evaluation_level: "conversation", entity_id: c.id });
    expect(badVariable.status).toBe(422);

    const { json: m } = await create({ ...scratch, dataset_id: sample.datasetId });
    const foreign = await runPreview({ pipeline_node_id: m.id, entity_id: other.conversations[0].messages[2].id });
    expect(foreign.status).toBe(422);
  });

  it.each([
    [{ entity_id: 1 }, "prompt"],
    [{ prompt: "x", entity_id: 1 }, "evaluation_level"],
    [{ prompt: "x", evaluation_level: "message" }, "entity_id"],
    [{ pipeline_node_id: 1, prompt: "x", entity_id: 1 }, "pipeline_node_id"],
    [{ prompt: "x", evaluation_level: "message", entity_type: "turn", entity_id: 1 }, "entity_type"],
  ])("rejects a malformed body %# with 400 naming %s", async (body, field) => {
    const res = await runPreview(body);
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toContain(field);
  });
});
