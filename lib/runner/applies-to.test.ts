/**
 * Issue 11 item 8: a step metric judges only the step kinds it declares in `applies_to`. Other steps are
 * no cells of a run (no judge call, no result, in no aggregate) and the grid marks them by their kinds.
 */
import { beforeEach, describe, expect, it } from "vitest";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as node from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as grid from "@/app/api/datasets/[id]/grid/route";
import * as templates from "@/app/api/metric-templates/route";
import { readSampleFixture, loadSampleDataset } from "@/lib/testing/seed/sample";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { waitForExecution } from "./run";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

/** Steps of the sample fixture that carry a tool call, in fixture order. */
function toolCallSteps(sample: Awaited<ReturnType<typeof loadSampleDataset>>): number[] {
  const fixture = readSampleFixture();
  const ids: number[] = [];
  sample.conversations.forEach((c, ci) =>
    c.messages.forEach((m, mi) =>
      m.steps.forEach((stepId, si) => {
        const step = fixture.conversations[ci].messages[mi].steps?.[si];
        if (step?.tool_call != null) ids.push(stepId);
      }),
    ),
  );
  return ids;
}

async function createMetric(body: Record<string, unknown>) {
  return call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });
}

describe("applies_to", () => {
  it("runs a tool_call step metric on tool-call steps only: no judge call, result or aggregate for the others", async () => {
    const sample = await loadSampleDataset();
    const toolSteps = toolCallSteps(sample);
    const allSteps = sample.conversations.flatMap((c) => c.messages.flatMap((m) => m.steps));
    expect(toolSteps.length).toBeGreaterThan(0);
    expect(toolSteps.length).toBeLessThan(allSteps.length);

    const created = await createMetric({
      dataset_id: sample.datasetId,
      name: "Tool choice",
      evaluation_level: "step",
      // @STEP_NUMBER and the tool call make every prompt distinct, so no cell is answered from the cache.
      prompt: "Judge step @STEP_NUMBER of @CURRENT_STEPS_COUNT: @CURRENT_STEP.tool_call in @CURRENT_MESSAGE.input",
      output_type: "progress",
      applies_to: ["tool_call"],
    });
    expect(created.status).toBe(201);
    expect(created.json.applies_to).toEqual(["tool_call"]);

    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: sample.datasetId } });
    expect(started.status).toBe(202);
    expect(started.json.total_evaluations).toBe(toolSteps.length);
    await waitForExecution(started.json.id);
    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    expect(done).toMatchObject({ status: "completed", successful_evaluations: toolSteps.length, failed_evaluations: 0 });
    expect(double.count() + done.meta.cached_evaluations).toBe(toolSteps.length);

    const res = (await call(results.GET, "GET", `/x?limit=1000`, { params: { id: started.json.id } })).json;
    expect(res.results.map((r: { entity_id: number }) => r.entity_id).sort()).toEqual([...toolSteps].sort());
    expect(res.aggregated[String(created.json.id)].total).toBe(toolSteps.length);

    const page = await call(grid.GET, "GET", `/api/datasets/${sample.datasetId}/grid?level=step&limit=100`, { params: { id: sample.datasetId } });
    expect(page.status).toBe(200);
    const key = String(created.json.id);
    expect(Number(page.headers.get("x-total-count"))).toBe(allSteps.length);
    for (const row of page.json as Array<{ entity_id: number; step_kinds: string[]; cells: Record<string, unknown> }>) {
      const isToolCall = toolSteps.includes(row.entity_id);
      expect(row.step_kinds.includes("tool_call")).toBe(isToolCall);
      expect(row.cells[key] !== undefined).toBe(isToolCall);
    }
  });

  it("rejects a run of one cell the metric does not apply to with a 422 naming the kinds", async () => {
    const sample = await loadSampleDataset();
    const toolSteps = new Set(toolCallSteps(sample));
    const other = sample.conversations.flatMap((c) => c.messages.flatMap((m) => m.steps)).find((id) => !toolSteps.has(id))!;
    const created = await createMetric({
      dataset_id: sample.datasetId,
      name: "Tool choice",
      evaluation_level: "step",
      prompt: "Judge @CURRENT_STEP.tool_call",
      output_type: "progress",
      applies_to: ["tool_call"],
    });
    const res = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", {
      body: { dataset_id: sample.datasetId, pipeline_node_id: created.json.id, entity_type: "step", entity_id: other },
    });
    expect(res.status).toBe(422);
    expect(res.json.error.message).toContain("tool_call");
    expect(double.count()).toBe(0);
  });

  it("rejects applies_to on a message metric (422) and drops it when a step metric moves to another level", async () => {
    const sample = await loadSampleDataset();
    const bad = await createMetric({
      dataset_id: sample.datasetId,
      name: "Helpful",
      evaluation_level: "message",
      prompt: "Is @CURRENT_MESSAGE.output helpful?",
      output_type: "progress",
      applies_to: ["output"],
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details).toEqual([expect.objectContaining({ path: "applies_to" })]);
    const empty = await createMetric({ dataset_id: sample.datasetId, name: "x", evaluation_level: "step", prompt: "p", output_type: "progress", applies_to: [] });
    expect(empty.status).toBe(400);

    const step = await createMetric({ dataset_id: sample.datasetId, name: "Out", evaluation_level: "step", prompt: "Judge it", output_type: "progress", applies_to: ["output", "thinking"] });
    expect(step.json.applies_to).toEqual(["thinking", "output"]);
    const moved = await call(node.PATCH, "PATCH", "/x", { params: { id: step.json.id }, body: { evaluation_level: "conversation" } });
    expect(moved.status).toBe(200);
    expect(moved.json.applies_to).toBeNull();
  });

  it("the built-in Tool Selection template judges tool_call steps only", async () => {
    const list = await call(templates.GET, "GET", "/api/metric-templates?evaluation_level=step");
    const byName = new Map((list.json.items ?? list.json).map((t: { name: string; applies_to: unknown }) => [t.name, t.applies_to]));
    expect(byName.get("Tool Selection")).toEqual(["tool_call"]);
    expect(byName.get("Output Grounding")).toEqual(["output"]);
  });
});
