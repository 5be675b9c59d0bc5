/**
 * Issue 22.1 through the public routes: check metrics whose patterns backtrack catastrophically on
 * JavaScript's RegExp (`(a+)+$` over 30 `a`s and a `b`: 73 s per cell before, doubling per character)
 * run in a run like any other, while the server keeps answering: a `GET /api/datasets` sent while the
 * first cell is being checked answers within a second, and every cell ends with a verdict or its reason.
 */
import { describe, expect, it } from "vitest";
import * as datasets from "@/app/api/datasets/route";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import { database } from "@/db/store";
import { pipelineNodesTable } from "@/db/tables";
import { eq } from "drizzle-orm";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { subscribe } from "./events";
import { waitForExecution } from "./run";

const evil = `${"a".repeat(30)}b`;
const createMetric = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });

async function importEvil(n: number): Promise<number> {
  const conversations = Array.from({ length: n }, (_, i) => ({
    name: `evil ${i}`,
    messages: [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: evil,
        steps: [{ tool_call: { name: "lookup", arguments: { q: "x" } }, tool_result: { error: evil } }, { output_content: JSON.stringify({ v: evil }) }],
      },
    ],
  }));
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: JSON.stringify({ conversations }), fields: { name: "redos" } });
  expect(res.status).toBe(201);
  return res.json.dataset.id as number;
}

type Result = { pipeline_node_id: number; status: string; result: { value: boolean; reasoning: string } | null; error: string | null };

describe("a catastrophic user pattern in a run (issue 22.1)", () => {
  it("text_regex, tool_error and json_schema (a+)+$ cells get verdicts while a concurrent read answers within 1 s", async () => {
    const datasetId = await importEvil(3);
    const metrics = await Promise.all([
      createMetric({ dataset_id: datasetId, name: "regex", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: "(a+)+$" } } }),
      createMetric({ dataset_id: datasetId, name: "tool error", kind: "check", evaluation_level: "step", check: { type: "tool_error", params: { pattern: "^(a+)+$" } } }),
      createMetric({ dataset_id: datasetId, name: "schema", kind: "check", evaluation_level: "step", check: { type: "json_schema", params: { schema: { type: "object", properties: { v: { type: "string", pattern: "^(a+)+$" } } } } } }),
    ]);
    expect(metrics.map((m) => m.status)).toEqual([201, 201, 201]);

    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, execution_mode: "async" } });
    expect(started.status).toBe(202);
    // The read goes out the moment the first check cell starts, so it waits behind that cell's pattern if anything does.
    const read = new Promise<{ status: number; ms: number }>((resolve) => {
      const unsubscribe = subscribe(started.json.id, (e) => {
        if (e.event !== "processing") return;
        unsubscribe();
        const t0 = performance.now();
        void call(datasets.GET, "GET", "/api/datasets").then((res) => resolve({ status: res.status, ms: performance.now() - t0 }));
      });
    });
    const answered = await read;
    expect(answered.status).toBe(200);
    expect(answered.ms).toBeLessThan(1000);

    await waitForExecution(started.json.id);
    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    // 3 assistant messages; per conversation one tool-result step (tool_error) and one output step (json_schema).
    expect(done).toMatchObject({ status: "completed", total_evaluations: 9, successful_evaluations: 9, failed_evaluations: 0 });
    const res = (await call(results.GET, "GET", "/x?limit=100", { params: { id: started.json.id } })).json.results as Result[];
    const of = (i: number) => res.filter((r) => r.pipeline_node_id === metrics[i].json.id);
    expect(of(0).map((r) => r.result)).toEqual(Array(3).fill({ value: false, reasoning: "the message does not match /(a+)+$/." }));
    expect(of(1).map((r) => r.result?.value)).toEqual([true, true, true]);
    expect(of(2).map((r) => r.result)).toEqual(Array(3).fill({ value: false, reasoning: `the step's output does not match the JSON Schema: /v must match pattern "^(a+)+$".` }));
  });

  it("a pattern RE2 refuses is refused on save; one already stored fails its cells with the reason and the run goes on", async () => {
    const datasetId = await importEvil(2);
    const refused = await createMetric({ dataset_id: datasetId, name: "backref", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: "(a)\\1" } } });
    expect(refused.status).toBe(422);
    expect(refused.json.error.details).toEqual([{ path: "check.params.pattern", message: expect.stringContaining("RE2 syntax") }]);

    // A metric saved before patterns ran on RE2: valid for RegExp, not for RE2.
    const stored = await createMetric({ dataset_id: datasetId, name: "stored", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: "a" } } });
    const fine = await createMetric({ dataset_id: datasetId, name: "fine", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: "b$" } } });
    const db = await database();
    await db.update(pipelineNodesTable).set({ check: { type: "text_regex", params: { pattern: "(a)\\1(?=b)" } } }).where(eq(pipelineNodesTable.id, stored.json.id));

    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId } });
    await waitForExecution(started.json.id);
    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    // A run with failed cells ends "failed"; the other metric's cells still have their verdicts.
    expect(done).toMatchObject({ status: "failed", total_evaluations: 4, successful_evaluations: 2, failed_evaluations: 2 });
    const res = (await call(results.GET, "GET", "/x?limit=100", { params: { id: started.json.id } })).json.results as Result[];
    for (const r of res.filter((r) => r.pipeline_node_id === stored.json.id)) {
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/check\.params\.pattern is not accepted .*RE2 syntax/);
    }
    expect(res.filter((r) => r.pipeline_node_id === fine.json.id).map((r) => r.result?.value)).toEqual([true, true]);
  });
});
