/**
 * Issue 33.1–33.3 through the public routes: check cells whose work grows faster than their text ran on
 * the event loop with no bound — `.{0,490}X` (flag i) over a 1 MB message held every other request
 * 15–16 s, the fence-stripping of valid_json/json_schema backtracked on "```" + 400,000 newlines (48 s),
 * `uniqueItems` over 30,000 items took 16 s. Now such cells run on the check thread: a read sent while
 * they are checked answers within a second, and a cell past CHECK_TIMEOUT_MS fails saying so.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as datasets from "@/app/api/datasets/route";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import { resetConfig } from "@/lib/config";
import { withoutFence } from "@/lib/checks/json-output";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { checksStoppedForTime } from "./check-thread";
import { subscribe } from "./events";
import { waitForExecution } from "./run";

const createMetric = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });

async function importTexts(texts: string[]): Promise<number> {
  const conversations = texts.map((content, i) => ({ name: `big ${i}`, messages: [{ role: "user", content: "go" }, { role: "assistant", content }] }));
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: JSON.stringify({ conversations }), fields: { name: "unbounded" } });
  expect(res.status).toBe(201);
  return res.json.dataset.id as number;
}

type Result = { pipeline_node_id: number; status: string; result: { value: boolean; reasoning: string } | null; error: string | null };

/**
 * Start a run of the dataset; resolves with how long a read sent at its first `processing` event took, and
 * the longest the event loop went without turning while the run went on (any cell checked on it shows there).
 */
async function runWhileReading(datasetId: number): Promise<{ id: number; readMs: number; readStatus: number; longestStallMs: number }> {
  let last = performance.now();
  let longestStallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - last);
    last = now;
  }, 20);
  const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, execution_mode: "async" } });
  expect(started.status).toBe(202);
  const read = await new Promise<{ status: number; ms: number }>((resolve) => {
    const unsubscribe = subscribe(started.json.id, (e) => {
      if (e.event !== "processing") return;
      unsubscribe();
      const t0 = performance.now();
      void call(datasets.GET, "GET", "/api/datasets").then((res) => resolve({ status: res.status, ms: performance.now() - t0 }));
    });
  });
  await waitForExecution(started.json.id);
  clearInterval(ticker);
  return { id: started.json.id, readMs: read.ms, readStatus: read.status, longestStallMs };
}

afterEach(() => {
  delete process.env.CHECK_TIMEOUT_MS;
  resetConfig();
});

describe("checks over input nobody bounded (issue 33.1–33.3)", () => {
  it("a counted-repetition regex over a 1 MB message: reads answer within 1 s, the cell fails naming its time budget", async () => {
    process.env.CHECK_TIMEOUT_MS = "500";
    resetConfig();
    const datasetId = await importTexts(["a".repeat(1_000_000), "short text with an X"]);
    const metric = await createMetric({ dataset_id: datasetId, name: "regex", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: ".{0,490}X", flags: "i" } } });
    expect(metric.status).toBe(201);
    const before = checksStoppedForTime();
    const done = await runWhileReading(datasetId);
    expect(done.readStatus).toBe(200);
    expect(done.readMs).toBeLessThan(1000);
    expect(done.longestStallMs).toBeLessThan(1000);
    expect(checksStoppedForTime()).toBe(before + 1);
    const res = (await call(results.GET, "GET", "/x?limit=100", { params: { id: done.id } })).json.results as Result[];
    const sorted = res.sort((a, b) => Number(a.status === "failed") - Number(b.status === "failed"));
    expect(sorted.map((r) => r.status)).toEqual(["completed", "failed"]);
    expect(sorted[0].result?.value).toBe(true);
    expect(sorted[1].error).toMatch(/^The check took longer than its time budget of 500 ms \(CHECK_TIMEOUT_MS\) over 1,000,\d{3} characters of text, and was stopped\.$/);
  });

  it("the fence of valid_json is stripped in linear time (a fence and 400,000 newlines)", () => {
    const hostile = `\`\`\`${"\n".repeat(400_000)}x`;
    const t0 = performance.now();
    expect(withoutFence(hostile)).toBe(hostile.trim());
    // Linear: well under the 48 s the backtracking pattern took (a bound 100× above the expected time, not a timing test).
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(withoutFence('```json\n{"a": 1}\n```')).toBe('\n{"a": 1}\n');
    expect(JSON.parse(withoutFence('```JSON {"a": 1}```'))).toEqual({ a: 1 });
    expect(withoutFence("```")).toBe("```");
  });

  it("valid_json over a hostile fence and uniqueItems over 30,000 items: reads answer within 1 s, every cell ends", async () => {
    const datasetId = await importTexts([`\`\`\`${"\n".repeat(400_000)}x`, JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ i })))]);
    const json = await createMetric({ dataset_id: datasetId, name: "json", kind: "check", evaluation_level: "message", check: { type: "valid_json", params: {} } });
    const unique = await createMetric({ dataset_id: datasetId, name: "unique", kind: "check", evaluation_level: "message", check: { type: "json_schema", params: { schema: { type: "array", uniqueItems: true } } } });
    expect([json.status, unique.status]).toEqual([201, 201]);
    const done = await runWhileReading(datasetId);
    expect(done.readStatus).toBe(200);
    expect(done.readMs).toBeLessThan(1000);
    expect(done.longestStallMs).toBeLessThan(1000);
    const res = (await call(results.GET, "GET", "/x?limit=100", { params: { id: done.id } })).json.results as Result[];
    expect(res).toHaveLength(4);
    const fence = res.find((r) => r.pipeline_node_id === json.json.id && r.result?.value === false);
    expect(fence?.result?.reasoning).toMatch(/is not valid JSON/);
    // The 30,000 items are either found unique within the budget or stopped with the reason: never a stall.
    const items = res.find((r) => r.pipeline_node_id === unique.json.id && (r.status === "failed" || r.result?.value === true));
    expect(items).toBeDefined();
    if (items?.status === "failed") expect(items.error).toMatch(/time budget of 2000 ms \(CHECK_TIMEOUT_MS\)/);
  });
});

describe("a check's JSON Schema is bounded before it is compiled (issue 33.4)", () => {
  it("3,000 patterns (169 KB) and 10,000 levels of nesting are refused with 422 naming the limit", async () => {
    const datasetId = await importTexts(["{}"]);
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 3000; i++) properties[`p${i}`] = { type: "string", pattern: `^[a-z]{0,40}x${i}$` };
    const wide = await createMetric({ dataset_id: datasetId, name: "wide", kind: "check", evaluation_level: "message", check: { type: "json_schema", params: { schema: { type: "object", properties } } } });
    expect(wide.status).toBe(422);
    expect(wide.json.error.details).toEqual([{ path: "check.params.schema", message: "is not a valid JSON Schema: the schema is larger than 32 KB (as JSON)" }]);

    // Written as text: JSON.stringify of 10,000 levels overflows the test's own stack.
    const deep = `${'{"type":"array","items":'.repeat(10_000)}{"type":"string"}${"}".repeat(10_000)}`;
    const rawBody = `{"dataset_id":${datasetId},"name":"deep","kind":"check","evaluation_level":"message","check":{"type":"json_schema","params":{"schema":${deep}}}}`;
    const nested = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { rawBody, headers: { "content-type": "application/json" } });
    // Since issue 48.10 a body nested past MAX_JSON_DEPTH (128) is refused before it is parsed.
    expect(nested.status).toBe(400);
    expect(nested.json.error.message).toMatch(/^Request body nested too deep: more than 128 levels of arrays and objects \(MAX_JSON_DEPTH\)/);
    // Within it, a schema deeper than its own 32 levels is refused by the schema's limit, as before.
    const deeper = `${'{"type":"array","items":'.repeat(40)}{"type":"string"}${"}".repeat(40)}`;
    const within = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", {
      rawBody: rawBody.replace(deep, deeper),
      headers: { "content-type": "application/json" },
    });
    expect(within.status).toBe(422);
    expect(within.json.error.details[0].message).toBe("is not a valid JSON Schema: the schema is nested more than 32 levels deep");

    const many: Record<string, unknown> = {};
    for (let i = 0; i < 101; i++) many[`p${i}`] = { pattern: `a${i}` };
    const patterns = await createMetric({ dataset_id: datasetId, name: "many", kind: "check", evaluation_level: "message", check: { type: "json_schema", params: { schema: { properties: many } } } });
    expect(patterns.status).toBe(422);
    expect(patterns.json.error.details[0].message).toBe("is not a valid JSON Schema: the schema has 101 patterns, more than 100");

    const fine = await createMetric({ dataset_id: datasetId, name: "fine", kind: "check", evaluation_level: "message", check: { type: "json_schema", params: { schema: { type: "object", properties: { a: { pattern: "^x" } } } } } });
    expect(fine.status).toBe(201);
  });
});
