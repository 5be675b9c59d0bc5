import { beforeEach, describe, expect, it } from "vitest";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as list from "@/app/api/evaluation-pipeline-executions/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { listResultRows } from "@/db/repositories/evaluation-results";
import { costOf } from "@/lib/judge";
import { createMetric } from "@/lib/metrics";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { processSingleton } from "@/lib/process-state";
import { waitForExecution } from "./run";

// $1 per thousand tokens either way: every judged cell costs a few tenths of a dollar.
// No hedged requests: a hedge's loser is counted at the winner's tokens (lib/judge/judge.ts), an estimate of
// what a provider bills for it; this double does not bill it, so the token equality below holds without hedges
// (lib/judge/judge.test.ts checks the hedge's count against a double that bills abandoned requests).
const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0", JUDGE_HEDGE: "false", JUDGE_PRICES: JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 1000 } }) });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

/** The sample (9 assistant messages, 21 steps) with a message metric and a step metric: 30 judge cells, each prompt different. */
async function setup() {
  const sample = await loadSampleDataset();
  const base = { dataset_id: sample.datasetId, output_type: "progress" as const };
  const message = (await createMetric({ ...base, name: "Helpful", evaluation_level: "message", prompt: "Is @CURRENT_MESSAGE.output helpful?" })).id;
  await createMetric({ ...base, name: "Tool", evaluation_level: "step", prompt: "Judge step @STEP_NUMBER of message @CURRENT_MESSAGE.output: @CURRENT_STEP.tool_call @CURRENT_STEP.tool_result @CURRENT_STEP.output_content @CURRENT_STEP.thinking" });
  return { datasetId: sample.datasetId, message };
}

const post = (body: Record<string, unknown>) => call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body });

async function finished(id: number) {
  await waitForExecution(id);
  return (await call(item.GET, "GET", `/x/${id}`, { params: { id } })).json;
}

async function cellCosts(executionId: number): Promise<number[]> {
  return (await listResultRows(executionId)).map((r) => costOf(r.modelName ?? "", r.inputTokens ?? 0, r.outputTokens ?? 0) ?? 0);
}

describe("max_cost_usd", () => {
  for (const mode of [
    { execution_mode: "sync", batch_size: 1 },
    { execution_mode: "async", batch_size: 4 },
  ] as const) {
    it(`stops a ${mode.execution_mode} run within one batch of its limit, cancelled for budget with its results kept`, async () => {
      const { datasetId } = await setup();
      // What one cell costs, from a full run of the same cells on another dataset's copy: the budget is four cells' worth.
      const full = await post({ dataset_id: datasetId, ...mode, no_cache: true });
      const all = await finished(full.json.id);
      expect(all.status).toBe("completed");
      const costs = await cellCosts(full.json.id);
      expect(costs).toHaveLength(30);
      const biggest = Math.max(...costs);
      const limit = costs.slice(0, 4).reduce((a, b) => a + b, 0);

      const billedBefore = double.stats().billed;
      const res = await post({ dataset_id: datasetId, ...mode, no_cache: true, max_cost_usd: limit });
      expect(res.status).toBe(202);
      expect(res.json.meta.max_cost_usd).toBe(limit);
      const done = await finished(res.json.id);
      expect(done.status).toBe("cancelled");
      expect(done.meta.stop_reason).toBe("budget");
      expect(done.errors.at(-1).message).toMatch(/^budget reached/);
      const spent = (await cellCosts(res.json.id)).reduce((a, b) => a + b, 0);
      // Reached, and over it by less than one batch of calls (docs/online.md). On PostgreSQL no call goes
      // out and no reply is saved once the saved spend is at the limit, whatever the machine's load.
      const story = `spent ${spent} of ${limit} (biggest cell ${biggest}), ${done.successful_evaluations} cells saved`;
      expect(spent, story).toBeGreaterThanOrEqual(limit);
      expect(spent - limit, story).toBeLessThanOrEqual(mode.batch_size * biggest + 1e-9);
      // Every reply the provider billed is counted in the run, saved or not (issue 33.11: a queued run's
      // replies landing after its budget was reached were dropped uncounted), and only calls already out
      // when the limit was reached go past it.
      await new Promise((r) => setTimeout(r, 200)); // replies of calls still out when the run ended
      const final = await finished(res.json.id);
      const billed = double.stats().billed;
      expect(final.meta.input_tokens).toBe(billed.prompt_tokens - billedBefore.prompt_tokens);
      expect(final.meta.output_tokens).toBe(billed.completion_tokens - billedBefore.completion_tokens);
      expect(final.meta.cost_usd).toBeGreaterThanOrEqual(spent - 1e-9);
      // Only the calls out when the limit was reached go past it, in process and queued alike (a queued run's
      // batches in one process share what landed and waits for its save: each batch counting only its own
      // let the others start calls past the limit).
      expect(final.meta.cost_usd - limit, story).toBeLessThanOrEqual(mode.batch_size * biggest + 1e-9);
      // Partial results kept; the rest left for a retry.
      expect(done.successful_evaluations).toBeGreaterThanOrEqual(4);
      expect(done.successful_evaluations).toBeLessThan(30);
      const retry = await post({ dataset_id: datasetId, retry: true });
      // The first, full run answered every cell already: nothing to retry, and no empty run recorded.
      expect(retry.status).toBe(409);
    });
  }

  // In process only: on PostgreSQL a reply saved between the batch's two budget readings can still let one
  // more call out (cells.ts, stillUnderBudget; the notes say why it was not closed), within the bound above.
  it.skipIf(Boolean(process.env.DATABASE_URL))("counts a reply before its call slot is given back: at batch_size 1, the call that reaches the budget is the last one sent", async () => {
    const { datasetId } = await setup();
    const full = await finished((await post({ dataset_id: datasetId, no_cache: true })).json.id);
    expect(full.status).toBe("completed");
    // Any one cell reaches this budget: the reply that lands first reaches it.
    const limit = Math.min(...(await cellCosts(full.id)));
    const billedBefore = double.stats().billed.replies;
    const done = await finished((await post({ dataset_id: datasetId, no_cache: true, execution_mode: "async", batch_size: 1, max_cost_usd: limit })).json.id);
    expect(done.meta.stop_reason).toBe("budget");
    // One slot: the next cell waited for it, and found the budget reached (before, the slot was given back
    // before the reply was counted, and the waiting cell sent a second call past the limit).
    expect(double.stats().billed.replies - billedBefore).toBe(1);
    expect(done.successful_evaluations).toBe(1);
  });

  it("counts a billed reply whose repair the budget refused: the cell is saved failed with its tokens, not dropped", async () => {
    const { datasetId } = await setup();
    // Every reply is unusable: each cell's first call is billed, then its repair call would need the budget.
    double.setDefault({ kind: "text", content: "I think it is fine." });
    const billedBefore = double.stats().billed;
    const done = await finished((await post({ dataset_id: datasetId, no_cache: true, execution_mode: "async", batch_size: 1, max_cost_usd: 1e-6 })).json.id);
    expect(done.meta.stop_reason).toBe("budget");
    const billed = double.stats().billed;
    expect(billed.replies - billedBefore.replies).toBe(1);
    // The one billed reply is the run's: a failed cell saying why, with its tokens and cost.
    expect(done.failed_evaluations).toBe(1);
    expect(done.errors[0].message).toMatch(/invalid judge output/);
    expect(done.meta.input_tokens).toBe(billed.prompt_tokens - billedBefore.prompt_tokens);
    expect(done.meta.output_tokens).toBe(billed.completion_tokens - billedBefore.completion_tokens);
  });

  // Queued runs: a batch stops its calls on replies landed in this process that are not saved yet. If those
  // replies then count for less than it read (counted twice in one reading, or never saved), the saved spend
  // stays under the limit and the cells the batch never started would be nobody's: the run would never end.
  it.skipIf(!process.env.DATABASE_URL)("a queued batch that stopped its calls short of the budget is worked again, and the run ends", async () => {
    const { datasetId } = await setup();
    // Replies of this process "landed" but never saved, worth far more than the limit, while the run starts.
    const landed = processSingleton("runner.cluster.landed-usd", () => new Map<number, number>());
    let phantom = true;
    const get = landed.get.bind(landed);
    landed.get = (id: number) => (phantom ? 1_000 : get(id));
    try {
      const res = await post({ dataset_id: datasetId, no_cache: true, execution_mode: "async", batch_size: 4, max_cost_usd: 500 });
      expect(res.status).toBe(202);
      // Every batch stops its calls at once; none is judged while the phantom spend stands.
      await new Promise((r) => setTimeout(r, 500));
      expect(double.count()).toBe(0);
      phantom = false;
      const done = await finished(res.json.id);
      // Worked again, the batches judge every cell: the run completes, under its budget.
      expect(done).toMatchObject({ status: "completed", successful_evaluations: 30 });
    } finally {
      landed.get = get;
    }
  });

  it("refuses a budget that is not a positive number with 400 and starts nothing", async () => {
    const { datasetId } = await setup();
    for (const max_cost_usd of [0, -1, "5"]) {
      const res = await post({ dataset_id: datasetId, max_cost_usd });
      expect(res.status).toBe(400);
      expect(res.json.error.details[0].path).toBe("max_cost_usd");
    }
    expect((await call(list.GET, "GET", `/x?dataset_id=${datasetId}`)).json).toEqual([]);
    expect(double.count()).toBe(0);
  });
});

describe("dry_run", () => {
  it("answers cells, judge calls, cache hits, tokens and cost, creates nothing, and matches the real run", async () => {
    const { datasetId, message } = await setup();
    // The message column judged before: those cells' prompts are in the verdict cache.
    const firstMessages = await post({ dataset_id: datasetId, pipeline_node_id: message });
    await finished(firstMessages.json.id);
    const callsBefore = double.count();

    const res = await post({ dataset_id: datasetId, dry_run: true });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      cells: 30,
      judge_calls: 21,
      goal_extractions: 0,
      cached: 9,
      checks: 0,
      estimated_input_tokens: expect.any(Number),
      estimated_output_tokens: expect.any(Number),
      estimated_cost_usd: expect.any(Number),
    });
    expect(res.json.estimated_input_tokens).toBeGreaterThan(21 * 20);
    expect(res.json.estimated_cost_usd).toBeCloseTo((res.json.estimated_input_tokens + res.json.estimated_output_tokens) / 1000, 9);
    // Nothing created, nobody asked.
    expect(double.count()).toBe(callsBefore);
    expect((await call(list.GET, "GET", `/x?dataset_id=${datasetId}`)).json).toHaveLength(1);

    // The real run: the same cells, the same cache hits.
    const real = await finished((await post({ dataset_id: datasetId })).json.id);
    expect(real.total_evaluations).toBe(res.json.cells);
    expect(real.meta.cached_evaluations).toBe(res.json.cached);
    expect(double.count() - callsBefore).toBe(res.json.judge_calls);
    // Tokens estimated within a factor of two of what the judge reported.
    expect(res.json.estimated_input_tokens / real.meta.input_tokens).toBeGreaterThan(0.5);
    expect(res.json.estimated_input_tokens / real.meta.input_tokens).toBeLessThan(2);

    // no_cache: every judge cell is a call; without a price for the model, tokens only.
    const fresh = await post({ dataset_id: datasetId, dry_run: true, no_cache: true, model_name: "unpriced-model" });
    expect(fresh.json).toMatchObject({ cells: 30, judge_calls: 30, cached: 0, estimated_cost_usd: null });
  });

  it("names the @GOAL extractions apart, and the run counts their tokens and cost (issue 33.11)", async () => {
    const sample = await loadSampleDataset({ name: `goals ${Date.now()}` });
    await createMetric({ dataset_id: sample.datasetId, name: "Goal", evaluation_level: "conversation", output_type: "progress", prompt: "Did the assistant reach @GOAL?\n@HISTORY" });
    const estimate = (await post({ dataset_id: sample.datasetId, dry_run: true, no_cache: true })).json;
    const conversations = sample.conversations.length;
    expect(estimate).toMatchObject({ cells: conversations, goal_extractions: conversations, judge_calls: 2 * conversations });
    double.reset();
    const run = await finished((await post({ dataset_id: sample.datasetId, no_cache: true, execution_mode: "async", batch_size: 4 })).json.id);
    const billed = double.stats().billed;
    expect(billed.replies).toBe(2 * conversations);
    // Every token the provider billed is the run's, and priced: before, the extractions' half was missing.
    expect(run.meta.input_tokens).toBe(billed.prompt_tokens);
    expect(run.meta.output_tokens).toBe(billed.completion_tokens);
    expect(run.meta.cost_usd).toBeCloseTo((billed.prompt_tokens + billed.completion_tokens) / 1000, 9);
  });

  it("answers 404/422 for what a run would refuse, and 400 for a bad body", async () => {
    const { datasetId } = await setup();
    expect((await post({ dataset_id: 999_999, dry_run: true })).status).toBe(404);
    expect((await post({ dataset_id: datasetId, dry_run: true, pipeline_node_ids: [999_999] })).status).toBe(422);
    expect((await post({ dataset_id: datasetId, dry_run: "yes" })).status).toBe(400);
  });
});
