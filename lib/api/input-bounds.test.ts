/**
 * Issue 22.5: input both stores must answer alike with a 4xx. Before: on PostgreSQL an id from 2^31 up
 * (path, query, body, `metric.<id>`, `execution:<id>`) and NUL (\u0000) in names, notes, filters and
 * imports answered 500 (SQLite: 404 and stored NUL); a saved mapping of any size was accepted.
 * Now: ids are 1..2^31−1 everywhere (400 past that), NUL in API fields is a 400 naming the field,
 * NUL in imported text becomes U+FFFD and the import says how many, and a saved mapping is at most 64 KB.
 */
import { describe, expect, it } from "vitest";
import * as agreement from "@/app/api/agreement/route";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as datasetItem from "@/app/api/datasets/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as grid from "@/app/api/datasets/[id]/grid/route";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as datasets from "@/app/api/datasets/route";
import * as execution from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as events from "@/app/api/evaluation-pipeline-executions/[id]/events/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as node from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as mappings from "@/app/api/import-mappings/route";
import * as mappingItem from "@/app/api/import-mappings/[id]/route";
import * as labels from "@/app/api/labels/route";
import * as onlineRules from "@/app/api/online-rules/route";
import * as templateItem from "@/app/api/metric-templates/[id]/route";
import { call } from "@/lib/testing/http/call";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { upload } from "@/lib/testing/http/multipart";
import { countTable } from "@/lib/testing/seed/rows";

const TOO_BIG = 2 ** 31; // PostgreSQL integer ids stop at 2^31 − 1
const LARGEST = 2 ** 31 - 1;

describe("ids from 2^31 up (400 on both stores, never 500)", () => {
  it("in a path: 400 naming the range; the largest id is a plain 404", async () => {
    const handlers = [
      datasetItem.GET,
      datasetItem.DELETE,
      conversations.GET,
      conversation.GET,
      execution.GET,
      node.GET,
      node.DELETE,
      templateItem.GET,
      mappingItem.DELETE,
      grid.GET,
    ];
    for (const handler of handlers) {
      for (const id of [TOO_BIG, 2 ** 53 - 1]) {
        const res = await call(handler, "GET", `/x/${id}`, { params: { id } });
        expect(res.status, `${id}`).toBe(400);
        expect(res.json.error.details).toEqual([{ path: "id", message: `must be an integer between 1 and ${LARGEST}` }]);
      }
      const largest = await call(handler, "GET", `/x/${LARGEST}`, { params: { id: LARGEST } });
      expect(largest.status).toBe(404);
    }
    const resumed = await call(events.GET, "GET", `/x?last_event_id=${TOO_BIG}`, { params: { id: 1 } });
    expect(resumed.status).toBe(400);
  });

  it("in a query, a body, metric.<id> in a grid filter or sort, and execution:<id> in agreement", async () => {
    const sample = await loadSampleDataset();
    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "m", evaluation_level: "conversation", prompt: "Rate @HISTORY", output_type: "checkbox" } });
    expect(metric.status).toBe(201);

    const listed = await call(nodes.GET, "GET", `/api/evaluation-pipeline-nodes?dataset_id=${TOO_BIG}`);
    expect(listed.status).toBe(400);
    expect(listed.json.error.details[0].path).toBe("dataset_id");
    // Found by the reliability suite's fuzzing on PostgreSQL (500 there): the online rules' list and body ids.
    const rules = await call(onlineRules.GET, "GET", `/api/online-rules?dataset_id=${TOO_BIG}`);
    expect(rules.status).toBe(400);
    expect(rules.json.error.details[0].path).toBe("dataset_id");
    const rule = await call(onlineRules.POST, "POST", "/x", { body: { dataset_id: TOO_BIG, pipeline_node_ids: [metric.json.id] } });
    expect(rule.status).toBe(400);

    const bodies: Array<[typeof run.POST, Record<string, unknown>, string]> = [
      [run.POST, { dataset_id: TOO_BIG }, "dataset_id"],
      [run.POST, { dataset_id: sample.datasetId, pipeline_node_id: TOO_BIG }, "pipeline_node_id"],
      [run.POST, { dataset_id: sample.datasetId, entity_type: "conversation", entity_id: TOO_BIG }, "entity_id"],
      [nodes.POST, { dataset_id: sample.datasetId, name: "x", evaluation_level: "conversation", prompt: "p @HISTORY", output_type: "checkbox", depends_on: [TOO_BIG] }, "depends_on[0]"],
      [labels.POST, { dataset_id: sample.datasetId, pipeline_node_id: metric.json.id, entity_type: "conversation", entity_id: TOO_BIG, value: true }, "entity_id"],
    ];
    for (const [handler, body, path] of bodies) {
      const res = await call(handler, "POST", "/x", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.details).toEqual([{ path, message: `must be an integer between 1 and ${LARGEST}` }]);
    }

    for (const qs of [`filter=metric.${TOO_BIG}==pass`, `filter=meta.x==1;metric.${TOO_BIG}!=none`, `sort=-metric.${TOO_BIG}`]) {
      const res = await call(grid.GET, "GET", `/x?${qs}`, { params: { id: sample.datasetId } });
      expect(res.status, qs).toBe(400);
      expect(res.json.error.message).toContain(`metric.<id> must be between 1 and ${LARGEST}`);
    }
    const largest = await call(grid.GET, "GET", `/x?filter=metric.${LARGEST}==pass`, { params: { id: sample.datasetId } });
    expect(largest.status).toBeGreaterThanOrEqual(400);
    expect(largest.status).toBeLessThan(500);

    const agree = await call(agreement.GET, "GET", `/x?dataset_id=${sample.datasetId}&pipeline_node_id=${metric.json.id}&a=execution:${TOO_BIG}&b=labels`);
    expect(agree.status).toBe(400);
    expect(agree.json.error.details[0]).toEqual({ path: "a", message: `execution:<id> must be between 1 and ${LARGEST}` });
  });
});

describe("NUL (\\u0000) in API fields: 400 naming the field, nothing written", () => {
  it("names, descriptions, prompts, notes, filters and form fields", async () => {
    const sample = await loadSampleDataset();
    const before = await countTable("datasets");
    const created = await call(datasets.POST, "POST", "/api/datasets", { body: { name: "a\u0000b" } });
    expect(created.status).toBe(400);
    expect(created.json.error.details).toEqual([{ path: "name", message: "must not contain the NUL character \\u0000" }]);
    const patched = await call(datasetItem.PATCH, "PATCH", "/x", { params: { id: sample.datasetId }, body: { description: "x\u0000" } });
    expect(patched.status).toBe(400);
    expect(patched.json.error.details[0].path).toBe("description");

    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "m", evaluation_level: "conversation", prompt: "Rate\u0000 @HISTORY", output_type: "checkbox" } });
    expect(metric.status).toBe(400);
    expect(metric.json.error.details[0].path).toBe("prompt");
    const check = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "c", kind: "check", evaluation_level: "message", check: { type: "text_contains", params: { value: "\u0000" } } } });
    expect(check.status).toBe(400);
    expect(check.json.error.details[0].path).toBe("check.params.value");

    const ok = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "m", evaluation_level: "conversation", prompt: "Rate @HISTORY", output_type: "checkbox" } });
    const label = await call(labels.POST, "POST", "/x", {
      body: { dataset_id: sample.datasetId, pipeline_node_id: ok.json.id, entity_type: "conversation", entity_id: sample.conversations[0].id, value: true, note: "fine\u0000" },
    });
    expect(label.status).toBe(400);
    expect(label.json.error.details[0].path).toBe("note");

    const filtered = await call(grid.GET, "GET", `/x?filter=${encodeURIComponent("meta.kind==a\u0000")}`, { params: { id: sample.datasetId } });
    expect(filtered.status).toBe(400);
    expect(filtered.json.error.details[0].path).toBe("filter");

    const form = await upload(createAndImport.POST, "/api/datasets/import", { file: JSON.stringify({ conversations: [{ messages: [{ role: "user", content: "hi" }] }] }), fields: { name: "n\u0000" } });
    expect(form.status).toBe(400);
    expect(form.json.error.details[0].path).toBe("name");
    const mapping = JSON.stringify({ messages: "turns", role: "who\u0000", content: "text" });
    const withMapping = await upload(createAndImport.POST, "/api/datasets/import", { file: "[]", fields: { name: "n", mapping } });
    expect(withMapping.status).toBe(400);
    expect(withMapping.json.error.details[0].path).toBe("mapping.role");

    expect(await countTable("datasets")).toBe(before);
    expect(await countTable("labels")).toBe(0);
  });
});

describe("NUL in imported conversation text: replaced with U+FFFD and counted", () => {
  it("imports every conversation with the rest of the text kept, and the outcome says how many were replaced", async () => {
    const file = JSON.stringify({
      conversations: [{ name: "nul\u0000name", meta: { "k\u0000": "v\u0000" }, messages: [{ role: "user", content: "before\u0000after" }, { role: "assistant", content: "ok" }] }],
    });
    expect(file).toContain("\\u0000");
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "nul import" } });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "(file)", message: "4 NUL characters (\\u0000) replaced with U+FFFD: NUL cannot be stored" })]),
    );
    const datasetId = res.json.dataset.id as number;
    const [conv] = (await call(conversations.GET, "GET", "/x", { params: { id: datasetId } })).json;
    expect(conv.name).toBe("nul\uFFFDname");
    expect(conv.meta).toEqual({ "k\uFFFD": "v\uFFFD" });
    const full = (await call(conversation.GET, "GET", "/x", { params: { id: conv.id } })).json;
    expect(full.messages[0].content).toBe("before\uFFFDafter");
  });
});

describe("saved import mappings are capped at 64 KB like the form's mapping field", () => {
  it("refuses a larger body with 413 and saves nothing; a normal one is saved", async () => {
    const roles = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`speaker_${i}`, "assistant"]));
    const big = await call(mappings.POST, "POST", "/api/import-mappings", { body: { name: "big", mapping: { messages: "turns", role: "who", content: "text", roles } } });
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({ code: "payload_too_large", message: "Request body too large: at most 64 KB" });
    expect((await call(mappings.GET, "GET", "/api/import-mappings")).json).toEqual([]);
    const small = await call(mappings.POST, "POST", "/api/import-mappings", { body: { name: "small", mapping: { messages: "turns", role: "who", content: "text" } } });
    expect(small.status).toBe(201);
  });
});
