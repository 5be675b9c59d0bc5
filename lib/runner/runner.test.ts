import { beforeEach, describe, expect, it } from "vitest";
import * as collection from "@/app/api/evaluation-pipeline-executions/route";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as events from "@/app/api/evaluation-pipeline-executions/[id]/events/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as goal from "@/app/api/conversations/[id]/goal/route";
import * as dataset from "@/app/api/datasets/[id]/route";
import { deleteDataset } from "@/db/repositories/datasets";
import { insertExecution, updateExecution } from "@/db/repositories/executions";
import { listResultRows } from "@/db/repositories/evaluation-results";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import { createMetric } from "@/lib/metrics";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { call } from "@/lib/testing/http/call";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { readSse } from "@/lib/testing/http/sse";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import { recoverInterruptedExecutions, waitForExecution } from "./run";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

type Setup = LoadedSample & { conv: number; msg: number; step: number };

/** The sample fixture (5 conversations, 9 assistant messages, 21 steps) with one metric per level. */
async function setup(): Promise<Setup> {
  const sample = await loadSampleDataset();
  const base = { dataset_id: sample.datasetId, output_type: "progress" as const };
  const conv = (await createMetric({ ...base, name: "Goal", evaluation_level: "conversation", prompt: "Did the assistant achieve @GOAL?\n@HISTORY" })).id;
  const msg = (await createMetric({ ...base, name: "Helpful", evaluation_level: "message", prompt: "Is @CURRENT_MESSAGE.output helpful?" })).id;
  const step = (await createMetric({ ...base, name: "Tool", evaluation_level: "step", prompt: "Judge step @STEP_NUMBER: @CURRENT_STEP.tool_call" })).id;
  return { ...sample, conv, msg, step };
}

async function start(body: Record<string, unknown>) {
  const res = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body });
  return res;
}

async function finished(id: number) {
  await waitForExecution(id);
  return (await call(item.GET, "GET", `/x/${id}`, { params: { id } })).json;
}

describe("POST /run", () => {
  it("answers 202 at once and runs every cell of the dataset in grid order (sync)", async () => {
    const s = await setup();
    const res = await start({ dataset_id: s.datasetId });
    expect(res.status).toBe(202);
    expect(res.headers.get("location")).toBe(`/api/evaluation-pipeline-executions/${res.json.id}`);
    expect(res.json).toMatchObject({ status: "pending", total_evaluations: 35, dataset_id: s.datasetId, pipeline_node_id: null });
    expect(res.json.meta).toMatchObject({ scope: "all", execution_mode: "sync", batch_size: 1, retry: false, user_id: "default" });

    const done = await finished(res.json.id);
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 35, failed_evaluations: 0, errors: [] });
    expect(done.started_at <= done.completed_at).toBe(true);
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);
    expect(done.meta.input_tokens).toBeGreaterThan(0);
    expect(done.meta.template_variables).toEqual(expect.arrayContaining(["@GOAL", "@HISTORY", "@CURRENT_MESSAGE.output"]));

    const rows = await listResultRows(res.json.id);
    expect(rows).toHaveLength(35);
    // Grid order: each conversation, then its assistant messages, each followed by its steps.
    const first = s.conversations[0];
    const assistant = first.messages.find((m) => m.role === "assistant")!;
    expect(rows.slice(0, 3).map((r) => [r.entityType, r.entityId])).toEqual([
      ["conversation", first.id],
      ["message", assistant.id],
      ["step", assistant.steps[0]],
    ]);
    // One result per cell, no duplicates.
    expect(new Set(rows.map((r) => `${r.pipelineNodeId}:${r.entityType}:${r.entityId}`)).size).toBe(35);
    // @GOAL was extracted once per conversation (5 calls); cells whose resolved prompt repeats an
    // earlier one exactly are answered from the cache.
    expect(double.count()).toBe(5 + 35 - done.meta.cached_evaluations);
  });

  it("never overlaps judge calls in sync mode", async () => {
    const s = await setup();
    double.setLatency(15);
    double.resetPeak();
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg, execution_mode: "sync", batch_size: 16 });
    const done = await finished(res.json.id);
    const peak = double.stats().peakInFlight;
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 9, meta: { execution_mode: "sync", batch_size: 1 } });
    expect(peak).toBe(1);
  });

  it("runs up to batch_size evaluations at once in async mode", async () => {
    const s = await setup();
    // No hedges here: a hedge takes one of the run's slots too, but its aborted loser stays open at the double
    // until the double sees the close, so the double counted 5 at batch 4 once on a loaded machine (the
    // hedges themselves are lib/runner/faulty-provider.test.ts and lib/judge/judge.test.ts).
    process.env.JUDGE_HEDGE = "false";
    resetConfig();
    double.setLatency(60);
    double.resetPeak();
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.step, execution_mode: "async", batch_size: 4 });
    const done = await finished(res.json.id).finally(() => {
      delete process.env.JUDGE_HEDGE;
      resetConfig();
    });
    const peak = double.stats().peakInFlight;
    expect(done).toMatchObject({ status: "completed", total_evaluations: 21, successful_evaluations: 21 });
    expect(done.meta).toMatchObject({ scope: "column", execution_mode: "async", batch_size: 4 });
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(4);
  });

  it("scopes a row to the entity's own cells and its messages' and steps' cells", async () => {
    const s = await setup();
    const conv = s.conversations[1];
    const res = await start({ dataset_id: s.datasetId, entity_type: "conversation", entity_id: conv.id });
    const assistants = conv.messages.filter((m) => m.role === "assistant").length;
    const steps = conv.messages.reduce((n, m) => n + m.steps.length, 0);
    expect(res.json.total_evaluations).toBe(1 + assistants + steps);
    expect(res.json.meta.scope).toBe("row");
    const msg = conv.messages.find((m) => m.role === "assistant" && m.steps.length)!;
    const row = await start({ dataset_id: s.datasetId, entity_type: "message", entity_id: msg.id });
    expect(row.json.total_evaluations).toBe(1 + msg.steps.length);
    await finished(res.json.id);
    await finished(row.json.id);
  });

  it("takes the seed's own body: entity_type with entity_id null is the column, or every row of that type (POST and streaming GET)", async () => {
    const s = await setup();
    // The spec's seed body, which answered 400 "entity_id is required with entity_type" before.
    const column = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv, entity_type: "conversation", entity_id: null });
    expect(column.status).toBe(202);
    expect(column.json).toMatchObject({ total_evaluations: 5, pipeline_node_id: s.conv, meta: { scope: "column", entity_type: "conversation", entity_id: null } });
    const done = await finished(column.json.id);
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 5 });
    expect(new Set((await listResultRows(column.json.id)).map((r) => r.entityType))).toEqual(new Set(["conversation"]));

    // Without a metric: every row of the type. Message rows hold message and step cells (9 + 21).
    const messageRows = await start({ dataset_id: s.datasetId, entity_type: "message", entity_id: null });
    expect(messageRows.json).toMatchObject({ total_evaluations: 30, meta: { scope: "rows", entity_type: "message" } });
    const stepRows = await start({ dataset_id: s.datasetId, entity_type: "step" });
    expect(stepRows.json).toMatchObject({ total_evaluations: 21, meta: { scope: "rows" } });
    const conversationRows = await start({ dataset_id: s.datasetId, entity_type: "conversation", entity_id: null });
    expect(conversationRows.json.total_evaluations).toBe(35);
    for (const r of [messageRows, stepRows, conversationRows]) await finished(r.json.id);

    // A metric's column of another level has no such cells: 422 naming the field.
    const mismatch = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg, entity_type: "conversation", entity_id: null });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.error.details[0].path).toBe("entity_type");

    // The streaming GET takes the same (entity_id empty or "null" = absent).
    for (const id of ["", "null"]) {
      const res = await run.GET(
        new Request(`http://localhost/api/evaluation-pipeline-executions/run?dataset_id=${s.datasetId}&pipeline_node_id=${s.conv}&entity_type=conversation&entity_id=${id}`),
        { params: Promise.resolve({}) },
      );
      expect(res.status).toBe(200);
      const events = await readSse(res);
      const last = events[events.length - 1];
      expect(last.event).toBe("done");
      expect(last.data.execution).toMatchObject({ total_evaluations: 5, meta: { scope: "column" } });
    }
  });

  it("runs one cell", async () => {
    const s = await setup();
    const msg = s.conversations[0].messages.find((m) => m.role === "assistant")!;
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg, entity_type: "message", entity_id: msg.id });
    expect(res.json).toMatchObject({ total_evaluations: 1, pipeline_node_id: s.msg, meta: { scope: "cell", entity_type: "message", entity_id: msg.id } });
    const done = await finished(res.json.id);
    expect(done.successful_evaluations).toBe(1);
    expect((await listResultRows(res.json.id))[0]).toMatchObject({ entityId: msg.id, messageId: msg.id, conversationId: s.conversations[0].id, status: "completed" });
  });

  it("refuses what does not fit with 400, 404 and 422, creating nothing", async () => {
    const s = await setup();
    const user = s.conversations[0].messages.find((m) => m.role === "user")!;
    const other = await loadSampleDataset();
    const cases: Array<[Record<string, unknown>, number]> = [
      [{}, 400],
      [{ dataset_id: "x" }, 400],
      [{ dataset_id: s.datasetId, entity_id: 5 }, 400],
      [{ dataset_id: s.datasetId, execution_mode: "parallel" }, 400],
      [{ dataset_id: s.datasetId, batch_size: 0 }, 400],
      [{ dataset_id: 999999 }, 404],
      [{ dataset_id: s.datasetId, pipeline_node_id: 999999 }, 404],
      [{ dataset_id: s.datasetId, entity_type: "message", entity_id: other.conversations[0].messages[1].id }, 404],
      [{ dataset_id: s.datasetId, pipeline_node_id: s.conv, entity_type: "message", entity_id: user.id }, 422],
      [{ dataset_id: s.datasetId, pipeline_node_id: s.msg, entity_type: "message", entity_id: user.id }, 422],
      [{ dataset_id: (await createDataset({ name: "empty", userId: "u" })).id }, 422],
    ];
    for (const [body, status] of cases) {
      const res = await start(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.json.error.code).toBeTypeOf("string");
    }
    const list = await call(collection.GET, "GET", `/api/evaluation-pipeline-executions?dataset_id=${s.datasetId}`);
    expect(list.headers.get("x-total-count")).toBe("0");
  });
});

describe("@GOAL", () => {
  it("is extracted once per conversation however many metrics and runs use it, and refreshed when asked", async () => {
    const s = await setup();
    await createMetric({ dataset_id: s.datasetId, name: "Goal 2", evaluation_level: "conversation", prompt: "Was @GOAL met? Judge strictly. @HISTORY", output_type: "checkbox" });
    await createMetric({ dataset_id: s.datasetId, name: "Msg goal", evaluation_level: "message", prompt: "Does @CURRENT_MESSAGE.output serve @GOAL?", output_type: "progress" });
    const goalCalls = () => double.requests.filter((r) => JSON.stringify(r.body).includes("What is the user's goal?")).length;
    await finished((await start({ dataset_id: s.datasetId, execution_mode: "async", batch_size: 8 })).json.id);
    expect(goalCalls()).toBe(5);
    await finished((await start({ dataset_id: s.datasetId, no_cache: true })).json.id);
    expect(goalCalls()).toBe(5);

    const conv = s.conversations[0].id;
    const stored = await call(goal.GET, "GET", "/x", { params: { id: conv } });
    expect(stored.json).toEqual({ conversation_id: conv, goal: expect.any(String), generated_by: "gpt-4o-mini" });
    double.enqueue({ kind: "verdict", body: { goal: "Book a flight to Lisbon" } });
    const refreshed = await call(goal.POST, "POST", "/x", { params: { id: conv } });
    expect(refreshed.json).toEqual({ conversation_id: conv, goal: "Book a flight to Lisbon", generated_by: "gpt-4o-mini" });
    expect(goalCalls()).toBe(6);
    expect((await call(goal.GET, "GET", "/x", { params: { id: conv } })).json.goal).toBe("Book a flight to Lisbon");
    expect((await call(goal.GET, "GET", "/x", { params: { id: 999999 } })).status).toBe(404);
    expect((await call(goal.POST, "POST", "/x", { params: { id: conv }, body: { refresh: "yes" } })).status).toBe(400);
  });
});

describe("@GOAL whatever the order of a conversation's cells", () => {
  it("is extracted for a metric that uses it even when the conversation's first cell is of a metric that does not", async () => {
    const sample = await loadSampleDataset();
    const base = { dataset_id: sample.datasetId, output_type: "progress" as const, evaluation_level: "conversation" as const };
    // The first column does not use @GOAL: its cells load each conversation first.
    await createMetric({ ...base, name: "Tone", prompt: "Is the tone right? @HISTORY" });
    await createMetric({ ...base, name: "Goal met", prompt: "Was @GOAL met? @HISTORY" });
    double.addRule({ match: "What is the user's goal?", behaviour: { kind: "verdict", body: { goal: "Get a straight answer" } } });
    const done = await finished((await start({ dataset_id: sample.datasetId })).json.id);
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 10 });
    const goalCalls = double.requests.filter((r) => JSON.stringify(r.body).includes("What is the user's goal?"));
    expect(goalCalls).toHaveLength(5);
    // Every "Goal met" prompt carries the extracted goal, not the first user message.
    const goalMet = double.requests.filter((r) => JSON.stringify(r.body).includes("Was ") && JSON.stringify(r.body).includes("met?"));
    expect(goalMet).toHaveLength(5);
    for (const r of goalMet) expect(JSON.stringify(r.body)).toContain("Get a straight answer");
  });
});

describe("the judge model's context", () => {
  it("cuts a long run's evidence to the run model's context, in the metric prompt and the goal call, never the final output", async () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ region: `r${i}`, sales: i * 37 }));
    const report = `Report:\n${Array.from({ length: 40 }, (_, i) => `finding ${i}: region r${i} grew.`).join("\n")}\nEnd.`;
    const file = JSON.stringify({
      conversations: [
        {
          messages: [
            { role: "user", content: "Summarise sales by region." },
            { role: "assistant", content: report, steps: [{ tool_call: { name: "query", arguments: {} } }, { tool_result: { rows } }, { output_content: report }] },
          ],
        },
      ],
    });
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "long run" } });
    expect(imported.status).toBe(201);
    const datasetId = imported.json.dataset_id as number;
    await createMetric({ dataset_id: datasetId, name: "Supported", evaluation_level: "conversation", prompt: "Does @HISTORY support the report for @GOAL?", output_type: "checkbox" });
    process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL = JSON.stringify({ "tiny-judge": 2500 });
    resetConfig();
    try {
      const done = await finished((await start({ dataset_id: datasetId, model_name: "tiny-judge" })).json.id);
      expect(done).toMatchObject({ status: "completed", successful_evaluations: 1 });
      const prompts = double.requests.map((r) => (r.body as { messages: Array<{ content: string }> }).messages.at(-1)!.content);
      const goalPrompt = prompts.find((p) => p.includes("What is the user's goal?"));
      const metricPrompt = prompts.find((p) => p.includes("support the report"));
      for (const prompt of [goalPrompt, metricPrompt]) {
        expect(prompt).toMatch(/\[… \d+ characters cut here to fit the judge's context …\]/);
        expect(prompt!.split(report).length - 1).toBe(1);
        // Within the 2500-token window at 3 characters a token (the system message included).
        expect(prompt!.length).toBeLessThan(2500 * 3);
      }
      // The same run on a model with the default window sends the whole tool result.
      await finished((await start({ dataset_id: datasetId, model_name: "big-judge", no_cache: true })).json.id);
      const last = (double.requests.at(-1)!.body as { messages: Array<{ content: string }> }).messages.at(-1)!.content;
      expect(last).toContain(JSON.stringify({ rows }));
      expect(last).not.toMatch(/characters cut here/);
    } finally {
      delete process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL;
      resetConfig();
    }
  });
});

describe("failures, retry and recovery", () => {
  it("records failed cells with their reason, then a retry run finishes only those", async () => {
    const s = await setup();
    double.addRule({ match: "I didn't ask you to book anything", behaviour: { kind: "http_error", status: 400, message: "boom" } });
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv });
    const done = await finished(res.json.id);
    expect(done).toMatchObject({ status: "failed", total_evaluations: 5, successful_evaluations: 4, failed_evaluations: 1 });
    expect(done.errors).toEqual([
      { pipeline_node_id: s.conv, entity_type: "conversation", entity_id: s.conversations[1].id, message: expect.stringMatching(/judge rejected the request \(400\)/) },
    ]);

    double.reset();
    const retry = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv, retry: true });
    expect(retry.json.total_evaluations).toBe(1);
    expect(await finished(retry.json.id)).toMatchObject({ status: "completed", successful_evaluations: 1 });
    // Nothing failed or missing now: a retry is refused and records no (empty) run; a dry run says 0 cells.
    const runsBefore = (await call(collection.GET, "GET", `/api/evaluation-pipeline-executions?dataset_id=${s.datasetId}`)).headers.get("x-total-count");
    const again = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv, retry: true });
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ code: "conflict", message: expect.stringMatching(/^Nothing to retry/) });
    const stream = await call(run.GET, "GET", `/api/evaluation-pipeline-executions/run?dataset_id=${s.datasetId}&pipeline_node_id=${s.conv}&retry=true`);
    expect(stream.status).toBe(409);
    expect((await call(collection.GET, "GET", `/api/evaluation-pipeline-executions?dataset_id=${s.datasetId}`)).headers.get("x-total-count")).toBe(runsBefore);
    const dry = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv, retry: true, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.json.cells).toBe(0);
  });

  it("fails every cell with one clear error when no judge is configured", async () => {
    const s = await setup();
    delete process.env.OPENAI_BASE_URL;
    resetConfig();
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg });
    const done = await finished(res.json.id);
    expect(done).toMatchObject({ status: "failed", failed_evaluations: 9, successful_evaluations: 0 });
    expect(new Set(done.errors.map((e: { message: string }) => e.message))).toEqual(
      new Set(["no judge model configured: set OPENAI_API_KEY or OPENAI_BASE_URL"]),
    );
    expect(double.count()).toBe(0);
  });

  it("marks executions a dead server left running as interrupted; a retry finishes the rest", async () => {
    const s = await setup();
    const first = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg });
    await finished(first.json.id);
    // Simulate a run that died after nothing: pending/processing rows with no live run behind them.
    const orphan = await insertExecution({ evaluationPipelineId: null, datasetId: s.datasetId, pipelineNodeId: s.step, totalEvaluations: 21, meta: {} });
    await updateExecution(orphan.id, { status: "processing", startedAt: new Date().toISOString() });
    expect(await recoverInterruptedExecutions()).toBe(1);
    const got = (await call(item.GET, "GET", "/x", { params: { id: orphan.id } })).json;
    expect(got.status).toBe("failed");
    expect(got.errors.at(-1).message).toBe("interrupted: server restarted");
    expect(got.meta.interrupted).toBe(true);
    // Nothing of it was evaluated: every cell counts as skipped, so the counts add up to the total.
    expect(got).toMatchObject({ total_evaluations: 21, successful_evaluations: 0, failed_evaluations: 0, skipped_evaluations: 21 });
    const retry = await start({ dataset_id: s.datasetId, retry: true });
    expect(retry.json.total_evaluations).toBe(5 + 21); // the message column is already complete
    await finished(retry.json.id);
  });
});

describe("async batch_size", () => {
  it("keeps at most batch_size calls at the provider, @GOAL calls included, while the next cells are prepared; each cell is announced once, before its result", async () => {
    const s = await setup();
    double.setLatency(30);
    // Without hedges, so the provider's count is exact: on a loaded machine a 30 ms call passes the
    // learnt p95 now and then, and a hedge is counted in no cell's meta when it was a @GOAL call's, or
    // reaches no provider when the first answer aborts it on its way (lib/judge/tail.ts has their tests).
    process.env.JUDGE_HEDGE = "false";
    resetConfig();
    let res: Awaited<ReturnType<typeof start>>;
    let got: Awaited<ReturnType<typeof readSse>>;
    let done: Awaited<ReturnType<typeof finished>>;
    try {
      res = await start({ dataset_id: s.datasetId, execution_mode: "async", batch_size: 3 });
      const stream = await events.GET(new Request(`http://x/api/evaluation-pipeline-executions/${res.json.id}/events`), { params: Promise.resolve({ id: String(res.json.id) }) });
      got = await readSse(stream);
      done = await finished(res.json.id);
    } finally {
      delete process.env.JUDGE_HEDGE;
      resetConfig();
    }
    expect(done).toMatchObject({ status: "completed", successful_evaluations: 35 });
    // 5 goal calls and 35 cells (less the cache's answers, plus the hedges of calls slower than the
    // provider's p95), never more than 3 at once (a hedge takes a call slot too), and 3 at once.
    expect(double.count()).toBe(5 + 35 - done.meta.cached_evaluations + (done.meta.hedges ?? 0));
    expect(double.stats().peakInFlight).toBeLessThanOrEqual(3);
    expect(double.stats().peakInFlight).toBe(3);
    const key = (e: { data: { pipeline_node_id: number; entity_type: string; entity_id: number } }) => `${e.data.pipeline_node_id}:${e.data.entity_type}:${e.data.entity_id}`;
    const processing = got.filter((e) => e.event === "processing");
    const results = got.filter((e) => e.event === "complete");
    expect(results).toHaveLength(35);
    // In process the stream is subscribed before the run's first cell; on PostgreSQL the queue may start
    // cells before it is (their results are replayed, their processing events are not).
    if (!process.env.DATABASE_URL) expect(processing).toHaveLength(35);
    expect(new Set(processing.map(key)).size).toBe(processing.length);
    for (const p of processing) expect(got.findIndex((e) => e.event === "complete" && key(e) === key(p))).toBeGreaterThan(got.indexOf(p));
  });
});

describe("limiter figures", () => {
  it("reports the live concurrency limit and the provider's 429s in processing events and in meta", async () => {
    const s = await setup();
    // The first four calls (batch_size 4, sent at once) all refused: a burst, which halves the limit.
    double.enqueue(...Array.from({ length: 4 }, () => ({ kind: "rate_limit" as const, retryAfterSeconds: 0 })));
    // A model of its own: the process-wide limiter of the default model has the earlier tests' answers
    // in its burst window, and four refusals among them would be no burst.
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg, execution_mode: "async", batch_size: 4, model_name: `burst-${Date.now()}` });
    const stream = await events.GET(new Request(`http://x/api/evaluation-pipeline-executions/${res.json.id}/events`), { params: Promise.resolve({ id: String(res.json.id) }) });
    const got = await readSse(stream);
    const processing = got.filter((e) => e.event === "processing");
    expect(processing.length).toBeGreaterThan(0);
    for (const e of processing) expect(e.data).toMatchObject({ rate_limits: expect.any(Number) });
    expect(processing.some((e) => typeof e.data.concurrency_limit === "number" && e.data.concurrency_limit >= 1)).toBe(true);
    const done = await finished(res.json.id);
    // No retries in this file, so the four 429s fail four cells; all are counted, and the limiter halved.
    expect(done.meta.rate_limits).toBe(4);
    expect(done.failed_evaluations).toBe(4);
    expect(done.meta.concurrency_limit).toBeGreaterThanOrEqual(1);
    expect(done.meta.concurrency_limit).toBeLessThan(128);
  });
});

describe("cancel", () => {
  it("aborts calls in flight, keeps finished results, writes nothing after, and 409s when final", async () => {
    const s = await setup();
    double.setLatency(150);
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.step, execution_mode: "async", batch_size: 2 });
    const id = res.json.id;
    await expect.poll(async () => (await listResultRows(id)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    // The next calls hang, so a call is surely in flight when the cancel comes (under load the cancel
    // could land between two calls, with none out to abort).
    double.enqueue({ kind: "hang" }, { kind: "hang" });
    await expect.poll(() => double.requests.some((r) => r.behaviour === "hang"), { timeout: 10_000 }).toBe(true);
    const cancel = await call(item.DELETE, "DELETE", "/x", { params: { id } });
    expect(cancel.status).toBe(200);
    expect(cancel.json.status).toBe("cancelled");
    const kept = (await listResultRows(id)).length;
    expect(kept).toBeLessThan(21);
    expect(cancel.json.successful_evaluations + cancel.json.failed_evaluations).toBe(kept);
    await expect.poll(async () => (await call(item.GET, "GET", "/x", { params: { id } })).json.skipped_evaluations).toBe(21 - (await listResultRows(id)).length);
    const after = (await call(item.GET, "GET", "/x", { params: { id } })).json;
    expect(after.successful_evaluations + after.failed_evaluations + after.skipped_evaluations).toBe(after.total_evaluations);
    await expect.poll(() => double.inFlight()).toBe(0);
    // The judge server saw the calls in flight at the cancel end without an answer (connection closed).
    expect(double.requests.some((r) => r.path === "/v1/chat/completions" && r.status === null)).toBe(true);
    await new Promise((r) => setTimeout(r, 400));
    expect((await listResultRows(id)).length).toBe(kept);
    const again = await call(item.DELETE, "DELETE", "/x", { params: { id } });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe("conflict");
    expect((await call(item.DELETE, "DELETE", "/x", { params: { id: 999999 } })).status).toBe(404);
  });
});

describe("deleting a dataset during its run", () => {
  it("cancels the run first, ends its streams with done, and deletes without a database error", async () => {
    const s = await setup();
    double.setLatency(150);
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.step, execution_mode: "async", batch_size: 2 });
    const id = res.json.id;
    await expect.poll(async () => (await listResultRows(id)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const stream = await events.GET(new Request(`http://x/api/evaluation-pipeline-executions/${id}/events`), { params: Promise.resolve({ id: String(id) }) });
    const reading = readSse(stream);
    const del = await call(dataset.DELETE, "DELETE", "/x", { params: { id: s.datasetId } });
    expect(del.status).toBe(204);
    const got = await reading;
    const last = got.at(-1)!;
    expect(last.event).toBe("done");
    expect(last.data.status).toBe("cancelled");
    expect(JSON.stringify(last.data.execution.errors)).not.toMatch(/FOREIGN KEY|run stopped/);
    expect((await call(item.GET, "GET", "/x", { params: { id } })).status).toBe(404);
    expect((await call(dataset.GET, "GET", "/x", { params: { id: s.datasetId } })).status).toBe(404);
    await expect.poll(() => double.inFlight()).toBe(0);
  });

  it("closes a stream whose execution disappears without a run to tell it", async () => {
    const s = await setup();
    const orphan = await insertExecution({ evaluationPipelineId: null, datasetId: s.datasetId, pipelineNodeId: s.step, totalEvaluations: 21, meta: {} });
    // Followed while the snapshot says it is still going on in this process? It is not: done at once.
    const first = await readSse(await events.GET(new Request("http://x/events"), { params: Promise.resolve({ id: String(orphan.id) }) }));
    expect(first.at(-1)!.event).toBe("done");
    // A run that is followed and then vanishes with its dataset: the stream closes on its own.
    double.setLatency(400);
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv });
    const stream = await events.GET(new Request("http://x/events"), { params: Promise.resolve({ id: String(res.json.id) }) });
    const reading = readSse(stream);
    await deleteDataset({ id: s.datasetId }); // behind the runner's back, as another tool on the file would
    const got = await reading; // resolves only when the stream ends
    expect(got.every((e) => e.event !== "complete" || e.data.execution_id === res.json.id)).toBe(true);
    await waitForExecution(res.json.id);
  });
});

describe("streaming", () => {
  it("follows a run: snapshot, live events in order, done, then the stream closes", async () => {
    const s = await setup();
    double.setLatency(40);
    const res = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg });
    const id = res.json.id;
    await expect.poll(async () => (await listResultRows(id)).length).toBeGreaterThanOrEqual(2);
    const stream = await events.GET(new Request(`http://x/api/evaluation-pipeline-executions/${id}/events`), { params: Promise.resolve({ id: String(id) }) });
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const got = await readSse(stream);
    const cells = got.filter((e) => e.event === "complete" || e.event === "error");
    expect(cells).toHaveLength(9);
    expect(new Set(cells.map((e) => e.data.entity_id)).size).toBe(9);
    const ids = cells.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(got.some((e) => e.event === "processing")).toBe(true);
    const last = got.at(-1)!;
    expect(last.event).toBe("done");
    expect(last.data).toMatchObject({ status: "completed", execution: { id, successful_evaluations: 9 } });
    expect(cells.at(-1)!.data.progress).toBe(100);

    // Reconnect with Last-Event-ID: only what came after, then done.
    const resume = await events.GET(
      new Request(`http://x/events`, { headers: { "last-event-id": String(ids[5]) } }),
      { params: Promise.resolve({ id: String(id) }) },
    );
    const rest = await readSse(resume);
    expect(rest.filter((e) => e.event === "complete").map((e) => Number(e.id))).toEqual(ids.slice(6));
    expect(rest.at(-1)!.event).toBe("done");
    const bad = await call(events.GET, "GET", "/x", { params: { id }, headers: { "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
  });

  it("starts a run with GET /run and streams it", async () => {
    const s = await setup();
    const res = await run.GET(new Request(`http://x/api/evaluation-pipeline-executions/run?dataset_id=${s.datasetId}&pipeline_node_id=${s.conv}&execution_mode=async&batch_size=3`), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    const got = await readSse(res);
    expect(got.filter((e) => e.event === "complete")).toHaveLength(5);
    expect(got.at(-1)).toMatchObject({ event: "done", data: { status: "completed" } });
    expect(Number(res.headers.get("x-execution-id"))).toBe(got.at(-1)!.data.execution.id);
    const bad = await call(run.GET, "GET", `/run?dataset_id=${s.datasetId}&entity_id=3`);
    expect(bad.status).toBe(400);
  });
});

describe("history", () => {
  it("lists a dataset's executions with filters, sort and paging", async () => {
    const s = await setup();
    const a = await start({ dataset_id: s.datasetId, pipeline_node_id: s.conv });
    await finished(a.json.id);
    double.addRule({ match: "helpful", behaviour: { kind: "http_error", status: 400 } });
    const b = await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg });
    await finished(b.json.id);
    const list = (q: string) => call(collection.GET, "GET", `/api/evaluation-pipeline-executions?dataset_id=${s.datasetId}${q}`);
    const all = await list("");
    expect(all.headers.get("x-total-count")).toBe("2");
    expect(all.json.map((e: { id: number }) => e.id)).toEqual([b.json.id, a.json.id]);
    expect((await list("&sort=started_at")).json.map((e: { id: number }) => e.id)).toEqual([a.json.id, b.json.id]);
    expect((await list("&status=failed")).json.map((e: { id: number }) => e.id)).toEqual([b.json.id]);
    expect((await list(`&pipeline_node_id=${s.conv}`)).json.map((e: { id: number }) => e.id)).toEqual([a.json.id]);
    const paged = await list("&limit=1&offset=1");
    expect(paged.json.map((e: { id: number }) => e.id)).toEqual([a.json.id]);
    expect(paged.headers.get("x-total-count")).toBe("2");
    expect((await list("&status=done")).status).toBe(400);
    expect((await list("&sort=name")).status).toBe(400);
    expect((await call(collection.GET, "GET", "/api/evaluation-pipeline-executions")).status).toBe(400);
    expect((await call(collection.GET, "GET", "/api/evaluation-pipeline-executions?dataset_id=999999")).status).toBe(404);
  });

  it("reports cached cells and costs nothing for an unchanged re-run", async () => {
    const s = await setup();
    const first = await finished((await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg })).json.id);
    expect(first.meta.cached_evaluations).toBe(0);
    const calls = double.count();
    const second = await finished((await start({ dataset_id: s.datasetId, pipeline_node_id: s.msg })).json.id);
    expect(second.meta).toMatchObject({ cached_evaluations: 9, input_tokens: 0, output_tokens: 0 });
    expect(double.count()).toBe(calls);
  });
});
