/**
 * Issue 14: check metrics run in the same "run all" as LLM metrics, through the public routes. Check
 * cells never reach the judge (requests counted on the judge test double), cost zero tokens, and their
 * results, aggregates and grid cells look like any checkbox metric's.
 */
import { beforeEach, describe, expect, it } from "vitest";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as node from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as templates from "@/app/api/metric-templates/route";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { createDataset } from "@/lib/datasets";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { subscribe, type RunEvent } from "./events";
import { waitForExecution } from "./run";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

const createMetric = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });

type Result = { pipeline_node_id: number; entity_id: number; conversation_id: number; status: string; result: { value: boolean; reasoning: string }; model_name: string; input_tokens: number; output_tokens: number };

describe("check metrics in a run", () => {
  it("mixes check and LLM metrics in one run all: check cells make no judge request and cost no tokens", async () => {
    const sample = await loadSampleDataset();
    const llm = await createMetric({ dataset_id: sample.datasetId, name: "Helpful", evaluation_level: "message", prompt: "Is @CURRENT_MESSAGE.output helpful? @CURRENT_MESSAGE.input", output_type: "progress" });
    const steps = await createMetric({ dataset_id: sample.datasetId, name: "Few steps", kind: "check", evaluation_level: "message", check: { type: "step_count", params: { max: 5 } } });
    const valid = await createMetric({ dataset_id: sample.datasetId, name: "Valid call", kind: "check", evaluation_level: "step", check: { type: "tool_call_valid" } });
    expect([llm.status, steps.status, valid.status]).toEqual([201, 201, 201]);
    expect(valid.json).toMatchObject({ kind: "check", output_type: "checkbox", check: { type: "tool_call_valid", params: { allow_unknown_params: false } }, applies_to: ["tool_call"] });

    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: sample.datasetId, execution_mode: "async", batch_size: 8 } });
    expect(started.status).toBe(202);
    // 9 assistant messages (twice: LLM and step budget) and 7 tool-call steps.
    expect(started.json.total_evaluations).toBe(9 + 9 + 7);
    await waitForExecution(started.json.id);
    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 25, failed_evaluations: 0, skipped_evaluations: 0 });
    // Only the nine LLM cells reached the judge (or its cache).
    expect(double.count() + done.meta.cached_evaluations).toBe(9);

    const res = (await call(results.GET, "GET", "/x?limit=1000", { params: { id: started.json.id } })).json;
    const checkResults = (res.results as Result[]).filter((r) => r.pipeline_node_id !== llm.json.id);
    expect(checkResults).toHaveLength(16);
    for (const r of checkResults) {
      expect(r).toMatchObject({ status: "completed", input_tokens: 0, output_tokens: 0 });
      expect(r.model_name).toMatch(/^check:/);
      expect(typeof r.result.value).toBe("boolean");
      expect(r.result.reasoning.length).toBeGreaterThan(0);
    }
    // "Refund via handoff" has 7 steps in one message: the only message over the budget.
    const handoff = sample.conversations.find((c) => c.name === "Refund via handoff")!;
    const overBudget = checkResults.filter((r) => r.pipeline_node_id === steps.json.id && !r.result.value);
    expect(overBudget.map((r) => r.conversation_id)).toEqual([handoff.id]);
    expect(overBudget[0].result.reasoning).toBe("7 steps: more than the maximum of 5.");
    // "Wrong tool arguments" calls a tool with arguments that do not match its declaration.
    const wrong = sample.conversations.find((c) => c.name === "Wrong tool arguments")!;
    const invalid = checkResults.filter((r) => r.pipeline_node_id === valid.json.id && !r.result.value);
    expect(invalid.length).toBeGreaterThan(0);
    expect(invalid.every((r) => r.conversation_id === wrong.id)).toBe(true);
    const agg = res.aggregated[String(steps.json.id)];
    expect(agg.total).toBe(9);
    expect(agg.average_score).toBeCloseTo(8 / 9);
  });

  it("validates the check on save: 422 with the reason, nothing created", async () => {
    const sample = await loadSampleDataset();
    const unknown = await createMetric({ dataset_id: sample.datasetId, name: "x", kind: "check", evaluation_level: "conversation", check: { type: "magic" } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.error.details).toEqual([{ path: "check.type", message: 'unknown check type "magic"' }]);
    const badParams = await createMetric({ dataset_id: sample.datasetId, name: "x", kind: "check", evaluation_level: "message", check: { type: "text_regex", params: { pattern: "(" } } });
    expect(badParams.status).toBe(422);
    expect(badParams.json.error.details[0].path).toBe("check.params.pattern");
    const wrongLevel = await createMetric({ dataset_id: sample.datasetId, name: "x", kind: "check", evaluation_level: "step", check: { type: "message_count", params: { max: 2 } } });
    expect(wrongLevel.status).toBe(422);
    const missing = await createMetric({ dataset_id: sample.datasetId, name: "x", kind: "check", evaluation_level: "step" });
    expect(missing.status).toBe(400);
    const listed = await call(nodes.GET, "GET", `/x?dataset_id=${sample.datasetId}`);
    expect(listed.json).toEqual([]);

    const ok = await createMetric({ dataset_id: sample.datasetId, name: "Budget", kind: "check", evaluation_level: "message", check: { type: "meta_budget", params: { path: "meta.latency_ms", value: 2000 } } });
    expect(ok.status).toBe(201);
    const patched = await call(node.PATCH, "PATCH", "/x", { params: { id: ok.json.id }, body: { check: { type: "meta_budget", params: { path: "meta.latency_ms", op: "~", value: 1 } } } });
    expect(patched.status).toBe(422);
    expect(patched.json.error.details[0].path).toBe("check.params.op");
  });

  it("lists built-in check templates beside the LLM ones, and a metric made from one runs without the judge", async () => {
    const sample = await loadSampleDataset();
    const list = (await call(templates.GET, "GET", "/api/metric-templates")).json as Array<{ id: number; name: string; kind: string; check: { type: string } | null; is_system: boolean }>;
    const checks = list.filter((t) => t.kind === "check");
    expect(checks.length).toBeGreaterThanOrEqual(5);
    expect(list.some((t) => t.kind === "llm")).toBe(true);
    const validCall = checks.find((t) => t.check?.type === "tool_call_valid")!;
    expect(validCall.is_system).toBe(true);
    const metric = await createMetric({ dataset_id: sample.datasetId, template_id: validCall.id });
    expect(metric.status).toBe(201);
    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: metric.json.id } });
    await waitForExecution(started.json.id);
    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    expect(done).toMatchObject({ status: "completed", total_evaluations: 7, successful_evaluations: 7 });
    expect(double.count()).toBe(0);
  });

  it("saves check cells in multi-row chunks: every cell announced processing then once complete, ids increasing, counters add up", async () => {
    // 130 conversations × 1 assistant message, three check metrics: 390 cells, more than one insert of 100
    // rows and a remainder, with passes, fails and skips.
    const dataset = await createDataset({ name: "chunked checks", userId: "test" });
    for (let i = 0; i < 130; i++) await insertConversationFixture(dataset.id, { position: i, name: `c${i}` });
    const fast = await createMetric({ dataset_id: dataset.id, name: "Fast", kind: "check", evaluation_level: "message", check: { type: "meta_budget", params: { path: "meta.latency_ms", value: 10 } } });
    const slowOk = await createMetric({ dataset_id: dataset.id, name: "Under 2s", kind: "check", evaluation_level: "message", check: { type: "meta_budget", params: { path: "meta.latency_ms", value: 2000 } } });
    const gated = await createMetric({ dataset_id: dataset.id, name: "Gated", kind: "check", evaluation_level: "message", check: { type: "step_count", params: { max: 5 } }, depends_on: [fast.json.id], skip_rule: { when: "failed" } });
    expect([fast.status, slowOk.status, gated.status]).toEqual([201, 201, 201]);

    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: dataset.id } });
    expect(started.status).toBe(202);
    const events: RunEvent[] = [];
    const unsubscribe = subscribe(started.json.id, (e) => events.push(e));
    await waitForExecution(started.json.id);
    unsubscribe();

    const done = (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    // latency_ms is 12: over 10 (fails), under 2000 (passes); "Gated" depends on the failing one: skipped.
    expect(done).toMatchObject({ status: "completed", total_evaluations: 390, successful_evaluations: 260, failed_evaluations: 0, skipped_evaluations: 130 });
    expect(double.count()).toBe(0);

    const key = (e: { data: { pipeline_node_id: number; entity_id: number } }) => `${e.data.pipeline_node_id}:${e.data.entity_id}`;
    const processing = events.filter((e) => e.event === "processing");
    const complete = events.filter((e): e is Extract<RunEvent, { event: "complete" }> => e.event === "complete");
    expect(processing).toHaveLength(390);
    expect(complete).toHaveLength(390);
    expect(new Set(complete.map(key)).size).toBe(390);
    // Each cell's processing event comes before its result.
    const firstSeen = new Map<string, number>();
    events.forEach((e, i) => {
      if (e.event === "processing") firstSeen.set(key(e), i);
    });
    events.forEach((e, i) => {
      if (e.event === "complete") expect(firstSeen.get(key(e))).toBeLessThan(i);
    });
    for (let i = 1; i < complete.length; i++) expect(complete[i].id).toBeGreaterThan(complete[i - 1].id);
    expect(complete.at(-1)!.data.progress).toBe(100);
    expect(events.at(-1)!.event).toBe("done");

    // The events carry what was saved: same ids, statuses and verdicts as the results endpoint.
    const res = (await call(results.GET, "GET", "/x?limit=1000", { params: { id: started.json.id } })).json;
    const saved = res.results as Array<{ id: number; status: string; pipeline_node_id: number; result: { value: boolean } | null; created_at: string }>;
    expect(saved.map((r) => r.id)).toEqual(complete.map((e) => e.id));
    expect(complete.map((e) => e.data.result)).toEqual(saved);
    expect(saved.filter((r) => r.pipeline_node_id === fast.json.id).every((r) => r.result?.value === false)).toBe(true);
    expect(saved.filter((r) => r.pipeline_node_id === slowOk.json.id).every((r) => r.result?.value === true)).toBe(true);
    expect(saved.filter((r) => r.pipeline_node_id === gated.json.id).every((r) => r.status === "skipped")).toBe(true);
  });
});
