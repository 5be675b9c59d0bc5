/**
 * Issue 14 part 2: metrics that depend on metrics. The run evaluates dependencies first (the judge
 * test double records the order of calls), a skip rule records cells as skipped without a judge call,
 * and cycles are rejected on save with their path.
 */
import { beforeEach, describe, expect, it } from "vitest";
import * as events from "@/app/api/evaluation-pipeline-executions/[id]/events/route";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as node from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { readSse } from "@/lib/testing/http/sse";
import { waitForExecution } from "./run";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

const createMetric = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });
const patchMetric = (id: number, body: Record<string, unknown>) => call(node.PATCH, "PATCH", "/x", { params: { id }, body });

async function runAll(datasetId: number, extra: Record<string, unknown> = {}) {
  const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, ...extra } });
  expect(started.status).toBe(202);
  await waitForExecution(started.json.id);
  return (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
}

/** The metric a recorded judge request was for, by the marker word its prompt carries. */
function markersInOrder(d: JudgeDouble): string[] {
  return d.requests
    .filter((r) => r.path === "/v1/chat/completions")
    .map((r) => (JSON.stringify(r.body).match(/MARK_(FIRST|SECOND)/) ?? ["", "?"])[1]);
}

describe("depends_on", () => {
  it("evaluates every cell of a dependency before its dependents, even when the dependent is the first column (async)", async () => {
    const sample = await loadSampleDataset();
    // Created first, so in grid order its cells come first; the dependency must still run before it.
    const second = await createMetric({ dataset_id: sample.datasetId, name: "Second", evaluation_level: "message", prompt: "MARK_SECOND @CURRENT_MESSAGE.output", output_type: "progress" });
    const first = await createMetric({ dataset_id: sample.datasetId, name: "First", evaluation_level: "message", prompt: "MARK_FIRST @CURRENT_MESSAGE.output", output_type: "progress" });
    const linked = await patchMetric(second.json.id, { depends_on: [first.json.id] });
    expect(linked.status).toBe(200);
    expect(linked.json.depends_on).toEqual([first.json.id]);

    const done = await runAll(sample.datasetId, { execution_mode: "async", batch_size: 8, no_cache: true });
    expect(done).toMatchObject({ status: "completed", total_evaluations: 18, successful_evaluations: 18 });
    const order = markersInOrder(double);
    expect(order).toHaveLength(18);
    expect(order.slice(0, 9).every((m) => m === "FIRST")).toBe(true);
    expect(order.slice(9).every((m) => m === "SECOND")).toBe(true);
  });

  it("skips cells whose dependency did not pass: recorded as skipped, no judge call, counted", async () => {
    const sample = await loadSampleDataset();
    const budget = await createMetric({ dataset_id: sample.datasetId, name: "Step budget", kind: "check", evaluation_level: "message", check: { type: "step_count", params: { max: 5 } } });
    const helpful = await createMetric({
      dataset_id: sample.datasetId,
      name: "Helpful",
      evaluation_level: "message",
      prompt: "MARK_SECOND @CURRENT_MESSAGE.output @CURRENT_MESSAGE.input",
      output_type: "progress",
      depends_on: [budget.json.id],
      skip_rule: { when: "failed" },
    });
    expect(helpful.status).toBe(201);
    expect(helpful.json.skip_rule).toEqual({ when: "failed" });

    const done = await runAll(sample.datasetId, { no_cache: true });
    // 9 check cells + 9 helpful cells; the 7-step message fails the budget, so its helpful cell is skipped.
    expect(done).toMatchObject({ status: "completed", total_evaluations: 18, successful_evaluations: 17, failed_evaluations: 0, skipped_evaluations: 1 });
    expect(markersInOrder(double)).toHaveLength(8);
    const res = (await call(results.GET, "GET", "/x?limit=100", { params: { id: done.id } })).json;
    const skipped = (res.results as Array<{ status: string; error: string; pipeline_node_id: number }>).filter((r) => r.status === "skipped");
    expect(skipped).toEqual([expect.objectContaining({ pipeline_node_id: helpful.json.id, error: "skipped: Step budget did not pass" })]);
    expect(res.aggregated[String(helpful.json.id)].total).toBe(8);

    // A stream opened after the run replays the skipped cell as it was announced live: a `complete`
    // whose result says skipped, not an `error` (the grid would show it as failed).
    const replay = await readSse(await events.GET(new Request("http://x/events"), { params: Promise.resolve({ id: String(done.id) }) }));
    const replayed = replay.filter((e) => e.data.pipeline_node_id === helpful.json.id && e.data.result?.status === "skipped");
    expect(replayed).toHaveLength(1);
    expect(replayed[0]).toMatchObject({ event: "complete", data: { status: "complete", result: { status: "skipped", error: "skipped: Step budget did not pass" } } });
    expect(replay.filter((e) => e.event === "error")).toEqual([]);
  });

  it("skips below a threshold", async () => {
    const sample = await loadSampleDataset();
    const quality = await createMetric({ dataset_id: sample.datasetId, name: "Quality", evaluation_level: "conversation", prompt: "MARK_FIRST @HISTORY", output_type: "progress" });
    const deep = await createMetric({
      dataset_id: sample.datasetId,
      name: "Deep",
      evaluation_level: "message",
      prompt: "MARK_SECOND @CURRENT_MESSAGE.output",
      output_type: "progress",
      depends_on: [quality.json.id],
      skip_rule: { when: "below", threshold: 0.5 },
    });
    // Every conversation scores 0.2: every message below it is skipped (a conversation-level dependency).
    double.addRule({ match: "MARK_FIRST", behaviour: { kind: "verdict", body: { score: 0.2, reasoning: "weak" } } });
    const done = await runAll(sample.datasetId, { no_cache: true });
    expect(done).toMatchObject({ total_evaluations: 14, successful_evaluations: 5, skipped_evaluations: 9 });
    expect(markersInOrder(double).filter((m) => m === "SECOND")).toHaveLength(0);
    expect(deep.status).toBe(201);
  });

  it("rejects a cycle on save with its path, and dependencies outside the dataset", async () => {
    const sample = await loadSampleDataset();
    const a = await createMetric({ dataset_id: sample.datasetId, name: "A", evaluation_level: "message", prompt: "a", output_type: "progress" });
    const b = await createMetric({ dataset_id: sample.datasetId, name: "B", evaluation_level: "message", prompt: "b", output_type: "progress", depends_on: [a.json.id] });
    const c = await createMetric({ dataset_id: sample.datasetId, name: "C", evaluation_level: "message", prompt: "c", output_type: "progress", depends_on: [b.json.id] });
    const cycle = await patchMetric(a.json.id, { depends_on: [c.json.id] });
    expect(cycle.status).toBe(422);
    expect(cycle.json.error.message).toBe("depends_on would make a cycle: A → C → B → A");
    const self = await patchMetric(a.json.id, { depends_on: [a.json.id] });
    expect(self.status).toBe(422);
    const other = await loadSampleDataset();
    const foreign = await createMetric({ dataset_id: other.datasetId, name: "X", evaluation_level: "message", prompt: "x", output_type: "progress", depends_on: [a.json.id] });
    expect(foreign.status).toBe(422);
    expect(foreign.json.error.details[0].path).toBe("depends_on");
    // Nothing changed.
    expect((await call(node.GET, "GET", "/x", { params: { id: a.json.id } })).json.depends_on).toEqual([]);
  });

  it("@METRIC.<name> gives the judge the dependency's latest verdict for the same entity; only dependencies may be named", async () => {
    const sample = await loadSampleDataset();
    const budget = await createMetric({ dataset_id: sample.datasetId, name: "Step budget", kind: "check", evaluation_level: "message", check: { type: "step_count", params: { max: 5 } } });
    const notDependent = await createMetric({ dataset_id: sample.datasetId, name: "Uses it", evaluation_level: "message", prompt: "MARK_SECOND @METRIC.Step_budget", output_type: "progress" });
    expect(notDependent.status).toBe(422);
    expect(notDependent.json.error.details).toEqual([{ path: "prompt", message: "@METRIC.Step_budget is not a dependency of this metric" }]);
    const uses = await createMetric({
      dataset_id: sample.datasetId,
      name: "Uses it",
      evaluation_level: "message",
      prompt: "MARK_SECOND Given the step check @METRIC.Step_budget, judge @CURRENT_MESSAGE.output",
      output_type: "progress",
      depends_on: [budget.json.id],
    });
    expect(uses.status).toBe(201);
    expect(uses.json.template_variables).toContain("@METRIC.Step_budget");
    await runAll(sample.datasetId, { no_cache: true });
    const prompts = double.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => JSON.stringify(r.body));
    expect(prompts).toHaveLength(9);
    // Each message's prompt carries its own verdict: the 7-step message the failing one, the others a pass.
    expect(prompts.filter((p) => p.includes("7 steps: more than the maximum of 5."))).toHaveLength(1);
    expect(prompts.filter((p) => p.includes("at most 5 allowed."))).toHaveLength(8);
  });
});
