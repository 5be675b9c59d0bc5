/**
 * Pairwise comparisons through the API (issue 38.5), the judge test double answering: a judge that
 * always picks the reply shown first (every pair a tie, first_position_rate 1), a judge that prefers one
 * reply wherever it is shown (consistent wins), Bradley–Terry over three candidates, the budget, and
 * the refusals.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { writeConversations } from "@/db/repositories/conversation-writes";
import { lockRow, transaction } from "@/db/store";
import type { Conversation } from "@/lib/conversation";
import { dialect } from "@/db/dialect";
import { cancelComparisonRow, renewComparisonLease } from "@/db/repositories/comparisons";
import { resetConfig } from "@/lib/config";
import { recoverComparisons, sweepExpiredComparisons, waitForComparison } from "@/lib/comparisons";
import { createDataset } from "@/lib/datasets";
import { call } from "@/lib/testing/http/call";
import { stopLease } from "@/lib/jobs";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as rankings from "@/app/api/rankings/route";
import * as create from "./route";
import * as item from "./[id]/route";
import * as cancel from "./[id]/cancel/route";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

const chat = (question: string, answer: string, meta: unknown = null): Conversation => ({
  name: question,
  description: null,
  meta,
  agents: null,
  messages: [
    { role: "user", content: question, meta: null, steps: [] },
    { role: "assistant", content: answer, meta: null, steps: [] },
  ],
});

async function dataset(name: string, conversations: Conversation[]): Promise<{ id: number; conversationIds: number[] }> {
  const d = await createDataset({ name, userId: "default" });
  const written = await transaction(function* () {
    yield* lockRow("datasets", d.id);
    return yield* writeConversations(d.id, conversations.map((conversation) => ({ conversation })), new Date().toISOString());
  });
  return { id: d.id, conversationIds: written.conversationIds };
}

/** A source dataset of three questions and a "generated" one answering each, linked by meta.source_conversation_id. */
async function sourceAndGenerated(sourceAnswer: string, generatedAnswer: string) {
  const source = await dataset("source", [0, 1, 2].map((i) => chat(`question ${i}`, `${sourceAnswer} ${i}`)));
  const generated = await dataset(
    "generated",
    source.conversationIds.map((id, i) => chat(`question ${i}`, `${generatedAnswer} ${i}`, { source_conversation_id: id, repeat: 0 })),
  );
  return { source, generated };
}

async function pairwiseMetric(datasetId: number, level: "conversation" | "message" = "conversation") {
  const res = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "Better reply", evaluation_level: level, prompt: "Which reply answers @LAST_USER_MSG better?\nA: @CANDIDATE_A\nB: @CANDIDATE_B", output_type: "pairwise" },
  });
  expect(res.status, res.text).toBe(201);
  return res.json.id as number;
}

async function compare(body: Record<string, unknown>) {
  const started = await call(create.POST, "POST", "/api/comparisons", { body });
  expect(started.status, started.text).toBe(202);
  await waitForComparison(started.json.id);
  const done = await call(item.GET, "GET", `/api/comparisons/${started.json.id}`, { params: { id: started.json.id } });
  expect(done.status).toBe(200);
  return done.json;
}

/** A comparison whose judge calls hang: started (202) and with a call in flight. */
async function hangingComparison(extra: Record<string, unknown> = {}) {
  const { source, generated } = await sourceAndGenerated("fine", "also fine");
  const metric = await pairwiseMetric(source.id);
  double.setDefault({ kind: "hang" });
  const started = await call(create.POST, "POST", "/api/comparisons", { body: { pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${generated.id}`, pair_by: "source_conversation", ...extra } });
  expect(started.status, started.text).toBe(202);
  // Its own work under way: the comparison says processing and a call of this test is open (open(), not
  // inFlight(), which also counts an earlier test's aborted calls whose close the double has not yet heard).
  await expect.poll(async () => (await call(item.GET, "GET", "/x", { params: { id: started.json.id } })).json.status, { timeout: 20_000 }).toBe("processing");
  await expect.poll(() => double.open(), { timeout: 20_000 }).toBeGreaterThan(0);
  return started;
}

/** The judge prefers the reply carrying `word`, wherever it is shown. */
function prefer(d: JudgeDouble, ...words: string[]) {
  for (const word of words) {
    d.addRule({ match: new RegExp(`name="@CANDIDATE_A">[^<]*${word}`), behaviour: { kind: "verdict", body: { winner: "A", reasoning: `A says ${word}` } } });
    d.addRule({ match: new RegExp(`name="@CANDIDATE_B">[^<]*${word}`), behaviour: { kind: "verdict", body: { winner: "B", reasoning: `B says ${word}` } } });
  }
}

describe("POST /api/comparisons", () => {
  it("a judge that always picks the first reply shown: every pair a tie, consistency 0, first_position_rate 1", async () => {
    const { source, generated } = await sourceAndGenerated("fine", "also fine");
    const metric = await pairwiseMetric(source.id);
    // The double's default verdict is the schema's first enum value: "A", whichever reply is first.
    const done = await compare({ pipeline_node_id: metric, a: `dataset:${generated.id}`, b: `dataset:${source.id}`, pair_by: "source_conversation" });
    expect(done).toMatchObject({ status: "completed", total: 3, pairs: 3, wins_a: 0, wins_b: 0, ties: 3, consistency: 0, first_position_rate: 1, judge_calls: 6, failed: 0 });
    expect(done.win_rate_a.estimate).toBe(0.5);
    expect(done.results).toHaveLength(3);
    expect(done.results[0]).toMatchObject({ verdict_ab: "A", verdict_ba: "A", outcome: "tie", a: { conversation_id: generated.conversationIds[0], message_id: null }, b: { conversation_id: source.conversationIds[0] } });
    // Each pair went to the judge twice, once in each order, with the input both replies answer.
    const prompts = double.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => JSON.stringify(r.body));
    expect(prompts).toHaveLength(6);
    expect(prompts.filter((p) => /@CANDIDATE_A\\">[^<]*also fine 0/.test(p))).toHaveLength(1);
    expect(prompts.filter((p) => /@CANDIDATE_B\\">[^<]*also fine 0/.test(p))).toHaveLength(1);
    expect(prompts.every((p) => p.includes("question"))).toBe(true);
  });

  it("a judge that prefers one reply wherever it is shown: consistent wins for it", async () => {
    const { source, generated } = await sourceAndGenerated("GOOD", "poor");
    const metric = await pairwiseMetric(source.id);
    prefer(double, "GOOD");
    const done = await compare({ pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${generated.id}`, pair_by: "source_conversation" });
    // a (the source) picked in both orders on all 3 pairs: win rate 3/3, Wilson [3/(3 + z²), 1] = [0.4385, 1].
    expect(done).toMatchObject({ pairs: 3, wins_a: 3, wins_b: 0, ties: 0, consistency: 1, first_position_rate: 0.5 });
    expect(done.win_rate_a.estimate).toBe(1);
    expect(done.win_rate_a.interval[0]).toBeCloseTo(0.4385, 4);
    expect(done.win_rate_a.interval[1]).toBe(1);
    expect(done.results.every((r: { verdict_ab: string; verdict_ba: string; outcome: string }) => r.verdict_ab === "A" && r.verdict_ba === "B" && r.outcome === "a")).toBe(true);
    expect(done.results[0].reasoning_ab).toBe("A says GOOD");
  });

  it("ranks three candidates with Bradley–Terry, the strongest first", async () => {
    const source = await dataset("gold", [0, 1, 2].map((i) => chat(`question ${i}`, `GOOD ${i}`)));
    const meta = (i: number) => ({ source_conversation_id: source.conversationIds[i], repeat: 0 });
    // The judge likes LUCKY best, then GOOD, then OKAY, BAD least. gold against ok: GOOD, GOOD beat OKAY, LUCKY beats
    // GOOD → 2–1; ok against weak: OKAY beats BAD, LUCKY beats OKAY, LUCKY beats BAD → 2–1; gold against weak: 2–1.
    // Records: gold 4–2, ok 3–3, weak 2–4; every two met three times, so the strengths follow the records.
    const ok = await dataset("ok", ["OKAY 0", "OKAY 1", "LUCKY 2"].map((answer, i) => chat(`question ${i}`, answer, meta(i))));
    const weak = await dataset("weak", ["BAD 0", "LUCKY 1", "BAD 2"].map((answer, i) => chat(`question ${i}`, answer, meta(i))));
    const metric = await pairwiseMetric(source.id);
    prefer(double, "LUCKY", "GOOD", "OKAY");
    const ids: number[] = [];
    for (const [a, b] of [[source.id, ok.id], [ok.id, weak.id], [source.id, weak.id]]) {
      ids.push((await compare({ pipeline_node_id: metric, a: `dataset:${a}`, b: `dataset:${b}`, pair_by: "source_conversation" })).id);
    }
    const res = await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${metric}&comparisons=${ids.join(",")}&iterations=200`);
    expect(res.status, res.text).toBe(200);
    const cands = res.json.candidates as Array<{ candidate: string; strength: number; interval: [number, number]; wins: number; losses: number; ties: number }>;
    expect(cands.map((c) => c.candidate)).toEqual([`dataset:${source.id}`, `dataset:${ok.id}`, `dataset:${weak.id}`]);
    expect(cands.map((c) => [c.wins, c.losses])).toEqual([[4, 2], [3, 3], [2, 4]]);
    expect(cands.reduce((s, c) => s + c.strength, 0)).toBeCloseTo(1, 9);
    for (const c of cands) expect(c.interval[0]).toBeLessThanOrEqual(c.strength + 1e-9);
    // Strengths only add up over comparisons that link every candidate, under one metric.
    const apart = await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${metric}&comparisons=${ids[0]}`);
    expect(apart.status, apart.text).toBe(200);
    const otherMetric = await pairwiseMetric(ok.id);
    const wrong = await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${otherMetric}&comparisons=${ids.join(",")}`);
    expect([wrong.status, wrong.json.error.message]).toEqual([422, expect.stringMatching(/another metric/)]);
    // The same query, the same answer (the bootstrap is seeded).
    expect((await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${metric}&comparisons=${ids.join(",")}&iterations=200`)).json).toEqual(res.json);
  });

  it("stops starting pairs at max_cost_usd, keeping the pairs judged", async () => {
    process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": { input: 1_000_000, output: 1_000_000 } });
    try {
      const { source, generated } = await sourceAndGenerated("fine", "also fine");
      const metric = await pairwiseMetric(source.id);
      const done = await compare({ pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${generated.id}`, pair_by: "source_conversation", batch_size: 1, max_cost_usd: 0.01, model_name: "gpt-4o-mini" });
      expect(done).toMatchObject({ status: "cancelled", pairs: 1, judge_calls: 2 });
      expect(done.error).toMatch(/budget reached/);
      expect(done.usage.cost_usd).toBeGreaterThan(0.01);
    } finally {
      delete process.env.JUDGE_PRICES;
    }
  });

  it("cancel stops a comparison at once: calls in flight aborted, nothing written after, a second cancel is 409", async () => {
    const started = await hangingComparison();
    const cancelled = await call(cancel.POST, "POST", "/x", { params: { id: started.json.id } });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ status: "cancelled", pairs: 0, error: "cancelled" });
    expect(cancelled.json.results.every((r: { outcome: unknown; error: unknown }) => r.outcome === null && r.error === null)).toBe(true);
    expect((await call(cancel.POST, "POST", "/x", { params: { id: started.json.id } })).status).toBe(409);
    // The aborted calls are closed at the provider too, not left running.
    await expect.poll(() => double.inFlight(), { timeout: 10_000 }).toBe(0);
  });

  it("a cancel from another process stops this one's calls at its next lease renewal, nothing written after", async () => {
    // Renewed every second (a third of the lease, 1 s at least).
    process.env.JOB_VISIBILITY_TIMEOUT_SECONDS = "3";
    resetConfig();
    try {
      const started = await hangingComparison();
      // What the cancel route of another process writes (lib/jobs ends the row first); this process hears of
      // it when it next renews the lease (before, it went on calling the judge until the calls timed out).
      expect(await cancelComparisonRow(started.json.id, "cancelled", new Date().toISOString())).toBe(true);
      const stopped = await Promise.race([waitForComparison(started.json.id).then(() => "stopped"), new Promise((r) => setTimeout(() => r("still calling"), 8_000))]);
      expect(stopped).toBe("stopped");
      await expect.poll(() => double.inFlight(), { timeout: 10_000 }).toBe(0);
      const after = await call(item.GET, "GET", "/x", { params: { id: started.json.id } });
      expect(after.json).toMatchObject({ status: "cancelled", pairs: 0, error: "cancelled" });
      expect(after.json.results.every((r: { outcome: unknown; error: unknown }) => r.outcome === null && r.error === null)).toBe(true);
    } finally {
      delete process.env.JOB_VISIBILITY_TIMEOUT_SECONDS;
      resetConfig();
    }
  });

  it("a comparison a stopped server left unfinished ends failed at the next start on SQLite, saying so (left alone on PostgreSQL)", async () => {
    const started = await hangingComparison();
    // What the start-up does (instrumentation.ts) after a server died with this comparison in flight.
    const recovered = await recoverComparisons();
    const after = await call(item.GET, "GET", "/x", { params: { id: started.json.id } });
    if (dialect.queuesRuns) {
      expect(recovered).toBe(0);
      expect(after.json.status).toBe("processing");
      expect((await call(cancel.POST, "POST", "/x", { params: { id: started.json.id } })).status).toBe(200);
    } else {
      expect(recovered).toBeGreaterThanOrEqual(1);
      expect(after.json).toMatchObject({ status: "failed", error: "interrupted: the server stopped while this comparison ran; start it again" });
      expect((await call(cancel.POST, "POST", "/x", { params: { id: started.json.id } })).status).toBe(409);
    }
  });

  it("a comparison whose process died (its lease ran out) ends failed at the next sweep of any process; one being worked is left alone", async () => {
    const alive = await hangingComparison();
    const dead = await hangingComparison({ no_cache: true });
    // The process working `dead` stopped renewing its lease a while ago (as a killed process does).
    // A renewal already under way lands before the lease is moved to the past (it would move it back).
    await stopLease(`comparison ${dead.json.id}`);
    await renewComparisonLease(dead.json.id, new Date(Date.now() - 1000).toISOString());
    expect(await sweepExpiredComparisons(new Date().toISOString())).toBe(1);
    const ended = await call(item.GET, "GET", "/x", { params: { id: dead.json.id } });
    expect(ended.json).toMatchObject({ status: "failed", error: "interrupted: the process judging it stopped; start it again" });
    expect(["pending", "processing"]).toContain((await call(item.GET, "GET", "/x", { params: { id: alive.json.id } })).json.status);
    expect((await call(cancel.POST, "POST", "/x", { params: { id: alive.json.id } })).status).toBe(200);
  });

  it("refuses what it cannot compare with a 4xx that says why, creating nothing", async () => {
    const { source, generated } = await sourceAndGenerated("x", "y");
    const metric = await pairwiseMetric(source.id);
    const post = (body: Record<string, unknown>) => call(create.POST, "POST", "/api/comparisons", { body });
    const pointwise = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: source.id, name: "Helpful", evaluation_level: "conversation", prompt: "Rate @HISTORY", output_type: "progress" } });
    let res = await post({ pipeline_node_id: pointwise.json.id, a: `dataset:${source.id}`, b: `dataset:${generated.id}`, pair_by: "source_conversation" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/not pairwise/)]);
    res = await post({ pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${generated.id}`, pair_by: "siblings" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/leave b out/)]);
    res = await post({ pipeline_node_id: metric, a: `dataset:${source.id}`, pair_by: "siblings" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/judged per message/)]);
    res = await post({ pipeline_node_id: metric, a: `dataset:${source.id}`, pair_by: "source_conversation" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/give b/)]);
    res = await post({ pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${source.id}`, pair_by: "source_conversation" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/same dataset/)]);
    res = await post({ pipeline_node_id: metric, a: "dataset:999999", b: `dataset:${source.id}`, pair_by: "source_conversation" });
    expect(res.status).toBe(404);
    res = await post({ pipeline_node_id: metric, a: "dataset:abc", b: `dataset:${source.id}`, pair_by: "source_conversation" });
    expect(res.status).toBe(400);
    const unrelated = await dataset("unrelated", [chat("q", "a")]);
    res = await post({ pipeline_node_id: metric, a: `dataset:${source.id}`, b: `dataset:${unrelated.id}`, pair_by: "source_conversation" });
    expect([res.status, res.json.error.message]).toEqual([422, expect.stringMatching(/Nothing to compare/)]);
    expect((await call(item.GET, "GET", "/api/comparisons/999999", { params: { id: 999999 } })).status).toBe(404);
    expect((await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${metric}&comparisons=999999`)).status).toBe(404);
    expect((await call(rankings.GET, "GET", `/api/rankings?pipeline_node_id=${metric}&comparisons=1;2`)).status).toBe(400);
    expect(double.count()).toBe(0);
    // A pairwise metric compares two replies: a run refuses it by name.
    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: source.id, pipeline_node_id: metric } });
    expect([started.status, started.json.error.message]).toEqual([422, expect.stringMatching(/pairwise/)]);
  });

  it("checks a pairwise prompt on save: both candidates, conversation-level variables, no step level", async () => {
    const { source } = await sourceAndGenerated("x", "y");
    const save = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: source.id, name: "P", output_type: "pairwise", evaluation_level: "message", ...body } });
    expect((await save({ prompt: "Compare @CANDIDATE_A" })).json.error.message).toMatch(/add @CANDIDATE_B/);
    expect((await save({ prompt: "@CURRENT_MESSAGE.output vs @CANDIDATE_A @CANDIDATE_B" })).status).toBe(422);
    expect((await save({ prompt: "Which is better?", evaluation_level: "step" })).json.error.message).toMatch(/not step/);
    expect((await save({ prompt: "Which is better?" })).status).toBe(201);
    const pointwise = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: source.id, name: "Q", output_type: "progress", evaluation_level: "message", prompt: "Rate @CANDIDATE_A" } });
    expect(pointwise.json.error.details[0].message).toMatch(/only in pairwise metrics/);
  });
});
