/**
 * Online rules through their routes and the sweep: conversations arrive as spans (the OTLP ingest
 * functions), finish when no span came for idle_seconds (an injected clock), and are judged once per
 * revision by ordinary runs — sampled by a hash, on SQLite and on PostgreSQL (through the queue).
 */
import { beforeEach, describe, expect, it } from "vitest";
import * as rulesRoute from "@/app/api/online-rules/route";
import * as ruleRoute from "@/app/api/online-rules/[id]/route";
import * as liveRoute from "@/app/api/datasets/[id]/live/route";
import * as executionRoute from "@/app/api/evaluation-pipeline-executions/[id]/route";
import { claimFinishedConversations, markTaken, takeSweepLease } from "@/db/repositories/online";
import { otelConversationState } from "@/db/repositories/otel";
import { rawRows, rawRun } from "@/db/store";
import { createMetric } from "@/lib/metrics";
import { flushAssembly, ingestExport } from "@/lib/otel/ingest";
import type { OtelSpan } from "@/lib/otel/types";
import { waitForExecution } from "@/lib/runner";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { sampledFor, sweepOnlineRules, type RuleSweep } from "./sweep";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0", JUDGE_PRICES: JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 1000 } }) });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

let seq = 0;
const hex = (n: number, len: number) => n.toString(16).padStart(len, "0");

/** One model call of a conversation, carrying its whole history so far (as GenAI instrumentations send it). */
function chatSpan(service: string, key: string, turns: number): OtelSpan {
  const history = [];
  for (let t = 0; t < turns; t++) {
    history.push({ role: "user", parts: [{ type: "text", content: `question ${t} of ${key}` }] });
    if (t < turns - 1) history.push({ role: "assistant", parts: [{ type: "text", content: `answer ${t} of ${key}` }] });
  }
  const start = (BigInt(1_780_000_000_000) + BigInt(++seq)) * BigInt(1_000_000);
  return {
    traceId: hex(++seq, 32),
    spanId: hex(++seq, 16),
    parentSpanId: null,
    name: "chat m",
    kind: 1,
    startNs: start.toString(),
    endNs: (start + BigInt(1_000_000)).toString(),
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "m",
      "gen_ai.conversation.id": key,
      "gen_ai.input.messages": JSON.stringify(history),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: `answer ${turns - 1} of ${key}` }] }]),
    },
    events: [],
    status: { code: 0 },
    resource: { "service.name": service },
    scope: { name: "test" },
  };
}

/** `n` conversations of one turn each, stored and rebuilt; returns the dataset id. */
async function arrive(service: string, keys: string[], turns = 1): Promise<number> {
  for (let i = 0; i < keys.length; i += 500) {
    await ingestExport("default", { spans: keys.slice(i, i + 500).map((k) => chatSpan(service, k, turns)), rejected: 0, errors: [] });
  }
  await flushAssembly();
  const rows = await rawRows<{ id: number }>("select id from datasets where name = ? order by id limit 1", [service]);
  return rows[0].id;
}

/** Two minutes from now: every conversation that arrived so far has been quiet for longer than 60 s. */
const later = () => new Date(Date.now() + 120_000);

/** Sweep until a pass claims nothing, waiting for each run the sweep started. */
async function sweepUntilIdle(now: () => Date = later): Promise<RuleSweep[]> {
  const passes: RuleSweep[] = [];
  for (let i = 0; i < 50; i++) {
    const pass = await sweepOnlineRules({ now: now() });
    passes.push(...pass);
    for (const p of pass) if (p.executionId) await waitForExecution(p.executionId);
    if (pass.every((p) => p.claimed === 0 && p.skipped !== "running")) return passes;
  }
  throw new Error(`the sweep never settled: ${JSON.stringify(passes.slice(-4))}`);
}

async function metricFor(datasetId: number): Promise<number> {
  return (await createMetric({ dataset_id: datasetId, name: "Helpful", evaluation_level: "conversation", output_type: "progress", prompt: "Was the assistant helpful?\n@HISTORY" })).id;
}

const postRule = (body: Record<string, unknown>) => call(rulesRoute.POST, "POST", "/api/online-rules", { body });

async function resultsByConversation(ruleId: number): Promise<Map<number, number>> {
  const rows = await rawRows<{ conversation_id: number; n: number | string }>(
    "select r.conversation_id, count(*) as n from evaluation_results r join online_rule_runs rr on rr.execution_id = r.execution_id where rr.rule_id = ? group by r.conversation_id",
    [ruleId],
  );
  return new Map(rows.map((r) => [r.conversation_id, Number(r.n)]));
}

describe("online rules: the API", () => {
  it("creates, reads, lists, changes and deletes a rule; bad input is a clear 4xx and changes nothing", async () => {
    const datasetId = await arrive("api-svc", ["a1"]);
    const metric = await metricFor(datasetId);
    const created = await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric] });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      dataset_id: datasetId,
      pipeline_node_ids: [metric],
      filter: null,
      sample_rate: 1,
      idle_seconds: 60,
      max_cost_usd_per_day: null,
      enabled: true,
      spent_usd_today: 0,
      evaluated: 0,
      last_error: null,
    });
    const id = created.json.id;
    expect((await call(ruleRoute.GET, "GET", `/x/${id}`, { params: { id } })).json).toEqual(created.json);
    expect((await call(rulesRoute.GET, "GET", `/api/online-rules?dataset_id=${datasetId}`)).json).toEqual([created.json]);

    const patched = await call(ruleRoute.PATCH, "PATCH", `/x/${id}`, { params: { id }, body: { sample_rate: 0.25, max_cost_usd_per_day: 2, filter: "meta.service.name==api-svc" } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ sample_rate: 0.25, max_cost_usd_per_day: 2, filter: "meta.service.name==api-svc", idle_seconds: 60 });

    for (const [body, path] of [
      [{ dataset_id: datasetId, pipeline_node_ids: [metric], sample_rate: 1.5 }, "sample_rate"],
      [{ dataset_id: datasetId, pipeline_node_ids: [] }, "pipeline_node_ids"],
      [{ dataset_id: datasetId, pipeline_node_ids: [metric], idle_seconds: 0 }, "idle_seconds"],
      [{ dataset_id: datasetId, pipeline_node_ids: [metric], max_cost_usd_per_day: -1 }, "max_cost_usd_per_day"],
      [{ dataset_id: datasetId, pipeline_node_ids: [metric], filter: "nonsense" }, "filter"],
      [{ dataset_id: datasetId, pipeline_node_ids: [metric], colour: "red" }, "(root)"],
    ] as const) {
      const res = await postRule(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await postRule({ dataset_id: 999_999, pipeline_node_ids: [metric] })).status).toBe(404);
    const foreign = await postRule({ dataset_id: datasetId, pipeline_node_ids: [999_999] });
    expect(foreign.status).toBe(422);
    expect(foreign.json.error.details[0].path).toBe("pipeline_node_ids");
    expect((await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric], filter: "metric.999999==pass" })).status).toBe(422);
    expect((await call(ruleRoute.PATCH, "PATCH", "/x/999999", { params: { id: 999_999 }, body: { enabled: false } })).status).toBe(404);
    expect((await call(ruleRoute.PATCH, "PATCH", `/x/${id}`, { params: { id }, body: {} })).status).toBe(400);
    expect((await call(rulesRoute.GET, "GET", `/api/online-rules?dataset_id=${datasetId}`)).json).toHaveLength(1);

    expect((await call(ruleRoute.DELETE, "DELETE", `/x/${id}`, { params: { id } })).status).toBe(204);
    expect((await call(ruleRoute.GET, "GET", `/x/${id}`, { params: { id } })).status).toBe(404);
    expect((await call(ruleRoute.DELETE, "DELETE", `/x/${id}`, { params: { id } })).status).toBe(404);
  });
});

describe("online rules: the sweep", () => {
  it("with sample_rate 0.5 evaluates about half of 1,000 finished conversations, each exactly once, by runs triggered by the rule", async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `conv-${i}`);
    const arrivedFrom = new Date();
    const datasetId = await arrive("half-svc", keys);
    const metric = await metricFor(datasetId);
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric], sample_rate: 0.5 })).json;

    // Nothing has been quiet for 60 s yet: the sweep takes nothing. Its clock is the moment the spans began to
    // arrive, not the wall clock: on a loaded machine storing 1,000 conversations took over a minute, and the
    // first ones were then quiet for real.
    expect((await sweepOnlineRules({ now: arrivedFrom }))[0]).toMatchObject({ claimed: 0, evaluated: 0 });

    const passes = await sweepUntilIdle();
    const claimed = passes.filter((p) => p.ruleId === rule.id).reduce((n, p) => n + p.claimed, 0);
    expect(claimed).toBe(1000);
    const counts = await resultsByConversation(rule.id);
    expect(counts.size).toBeGreaterThan(430);
    expect(counts.size).toBeLessThan(570);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);

    // The ones evaluated are exactly those the hash picks: sweeping again does not re-roll.
    const picked = new Set<number>();
    for (const key of keys) {
      const state = (await otelConversationState(datasetId, key))!;
      if (sampledFor(rule.id, state.id, 0.5)) picked.add(state.conversationId!);
    }
    expect(new Set(counts.keys())).toEqual(picked);
    expect((await sweepUntilIdle()).reduce((n, p) => n + p.claimed, 0)).toBe(0);
    expect((await resultsByConversation(rule.id)).size).toBe(counts.size);

    const read = (await call(ruleRoute.GET, "GET", `/x/${rule.id}`, { params: { id: rule.id } })).json;
    expect(read.evaluated).toBe(counts.size);
    expect(read.spent_usd_today).toBeGreaterThan(0);
    const runs = passes.filter((p) => p.executionId);
    const execution = (await call(executionRoute.GET, "GET", "/x", { params: { id: runs[0].executionId! } })).json;
    expect(execution.meta.trigger).toBe(`rule:${rule.id}`);
    expect(execution.status).toBe("completed");
  }, 120_000);

  it("claims each revision once even when sweeps race (one statement per claim)", async () => {
    const datasetId = await arrive("race-svc", Array.from({ length: 300 }, (_, i) => `race-${i}`));
    const metric = await metricFor(datasetId);
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric] })).json;
    const opts = { after: "", finishedBy: later().toISOString(), now: new Date().toISOString(), staleBefore: new Date(Date.now() - 60_000).toISOString(), limit: 120 };
    // Rounds of six claims at once (on PostgreSQL, six connections) until one round finds nothing left.
    const all: number[] = [];
    for (let round = 0; round < 20; round++) {
      const claims = await Promise.all(Array.from({ length: 6 }, () => claimFinishedConversations(rule.id, datasetId, opts)));
      if (claims.every((c) => c.length === 0)) break;
      all.push(...claims.flat().map((c) => c.otelConversationId));
    }
    expect(all).toHaveLength(300);
    expect(new Set(all).size).toBe(300);
    // Decided, as the sweep that claims them does: claims left undecided are a dead sweep's, taken again later.
    await markTaken(rule.id, all, null, new Date().toISOString());
  });

  it("a sweep whose process died between its claim and its run costs a lease, not the conversations", async () => {
    const datasetId = await arrive("dead-svc", ["d1", "d2", "d3"]);
    const metric = await metricFor(datasetId);
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric] })).json;
    // The dead process: it took the rule's lease and claimed the three conversations, then nothing.
    const t0 = later();
    const at = (ms: number) => new Date(t0.getTime() + ms);
    expect(await takeSweepLease(rule.id, t0, 60_000)).toBe(true);
    const claim = (now: Date) =>
      claimFinishedConversations(rule.id, datasetId, { after: "", finishedBy: now.toISOString(), now: now.toISOString(), staleBefore: new Date(now.getTime() - 60_000).toISOString(), limit: 200 });
    expect(await claim(t0)).toHaveLength(3);
    // Within the lease another process neither sweeps the rule nor takes the fresh claims.
    const mine = async (now: Date) => (await sweepOnlineRules({ now })).find((p) => p.ruleId === rule.id)!;
    expect(await mine(at(30_000))).toMatchObject({ skipped: "busy", claimed: 0 });
    expect(await claim(at(30_000))).toHaveLength(0);
    // After it, the undecided claims are taken again and judged, each once.
    const pass = await mine(at(90_000));
    expect(pass).toMatchObject({ claimed: 3, evaluated: 3 });
    await waitForExecution(pass.executionId!);
    await sweepUntilIdle(() => at(200_000));
    const counts = await resultsByConversation(rule.id);
    expect([...counts.values()]).toEqual([1, 1, 1]);
    // Decided claims are never taken again, however old.
    expect(await claim(at(10 * 60_000))).toHaveLength(0);
  });

  it("evaluates a conversation again when it grows, and only that one", async () => {
    const datasetId = await arrive("grow-svc", ["g1", "g2", "g3"]);
    const metric = await metricFor(datasetId);
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric] })).json;
    await sweepUntilIdle();
    const g2 = (await otelConversationState(datasetId, "g2"))!;
    expect((await resultsByConversation(rule.id)).get(g2.conversationId!)).toBe(1);

    // g2 gets a second turn: a new revision, quiet again two minutes later.
    await arrive("grow-svc", ["g2"], 2);
    expect((await otelConversationState(datasetId, "g2"))!.revision).toBe(g2.revision + 1);
    const passes = await sweepUntilIdle(() => new Date(Date.now() + 120_000));
    expect(passes.reduce((n, p) => n + p.claimed, 0)).toBe(1);
    const counts = await resultsByConversation(rule.id);
    expect(counts.get(g2.conversationId!)).toBe(2);
    expect([...counts.values()].sort()).toEqual([1, 1, 2]);
  });

  it("refuses a daily cap that could never be reached: a judge metric whose model has no price (issue 34.6)", async () => {
    const datasetId = await arrive("unpriced-svc", ["u-1"]);
    const unpriced = (await createMetric({ dataset_id: datasetId, name: "Unpriced", evaluation_level: "conversation", output_type: "progress", prompt: "Helpful?\n@HISTORY", model_name: "no-price-model" })).id;
    const refused = await postRule({ dataset_id: datasetId, pipeline_node_ids: [unpriced], max_cost_usd_per_day: 1 });
    expect(refused.status).toBe(422);
    expect(refused.json.error.details).toEqual([{ path: "max_cost_usd_per_day", message: "needs a price for no-price-model in JUDGE_PRICES" }]);
    // Without a cap the rule is fine; a cap added later is refused the same way.
    const rule = await postRule({ dataset_id: datasetId, pipeline_node_ids: [unpriced] });
    expect(rule.status).toBe(201);
    const patched = await call(ruleRoute.PATCH, "PATCH", `/x/${rule.json.id}`, { params: { id: rule.json.id }, body: { max_cost_usd_per_day: 1 } });
    expect(patched.status).toBe(422);
    await call(ruleRoute.DELETE, "DELETE", `/x/${rule.json.id}`, { params: { id: rule.json.id } });
  });

  it("stops for the day at max_cost_usd_per_day: the run is cancelled for budget and the sweep starts no other", async () => {
    const datasetId = await arrive("budget-svc", Array.from({ length: 40 }, (_, i) => `b-${i}`));
    const metric = await metricFor(datasetId);
    // Each judged conversation costs a few tenths of a dollar at these prices: the cap holds about three.
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric], max_cost_usd_per_day: 1 })).json;
    const passes = await sweepUntilIdle();
    const started = passes.filter((p) => p.executionId);
    expect(started).toHaveLength(1);
    const execution = (await call(executionRoute.GET, "GET", "/x", { params: { id: started[0].executionId! } })).json;
    expect(execution).toMatchObject({ status: "cancelled", meta: { stop_reason: "budget", max_cost_usd: 1, trigger: `rule:${rule.id}` } });
    expect(passes.at(-1)!.skipped).toBe("budget");
    const read = (await call(ruleRoute.GET, "GET", `/x/${rule.id}`, { params: { id: rule.id } })).json;
    expect(read.spent_usd_today).toBeGreaterThanOrEqual(1);
    expect(read.spent_usd_today).toBeLessThan(1 + 8 * 0.6); // within one batch (8 calls) of the cap
    expect(double.count()).toBeLessThan(40);
    // Issue 33.11: `evaluated` counts what was evaluated, not what the stopped run had claimed (40 before).
    const judged = (await resultsByConversation(rule.id)).size;
    expect(judged).toBeLessThan(40);
    expect(read.evaluated).toBe(judged);
    // The next day the budget allows more: the conversations the stopped run never reached are taken again.
    const nextDay = () => new Date(Date.now() + 86_400_000 + 120_000);
    await sweepUntilIdle(nextDay);
    const after = (await resultsByConversation(rule.id)).size;
    expect(after).toBeGreaterThan(judged);
    const reread = (await call(ruleRoute.GET, "GET", `/x/${rule.id}`, { params: { id: rule.id } })).json;
    expect(reread.evaluated).toBe(after);
  });

  it("records why a rule could not start its run, and takes those conversations again once it can", async () => {
    const datasetId = await arrive("error-svc", ["e1", "e2"]);
    const metric = await metricFor(datasetId);
    const other = await metricFor(datasetId);
    const rule = (await postRule({ dataset_id: datasetId, pipeline_node_ids: [metric, other] })).json;
    await rawRun("delete from pipeline_nodes where id = ?", [other]);
    const failed = (await sweepOnlineRules({ now: later() })).find((p) => p.ruleId === rule.id)!;
    expect(failed.skipped).toBe("error");
    const read = (await call(ruleRoute.GET, "GET", `/x/${rule.id}`, { params: { id: rule.id } })).json;
    expect(read.last_error).toMatch(/not a metric of dataset/);

    await call(ruleRoute.PATCH, "PATCH", `/x/${rule.id}`, { params: { id: rule.id }, body: { pipeline_node_ids: [metric] } });
    await sweepUntilIdle();
    expect((await resultsByConversation(rule.id)).size).toBe(2);
    expect((await call(ruleRoute.GET, "GET", `/x/${rule.id}`, { params: { id: rule.id } })).json).toMatchObject({ last_error: null, evaluated: 2 });

    const live = await call(liveRoute.GET, "GET", `/api/datasets/${datasetId}/live`, { params: { id: datasetId } });
    expect(live.status).toBe(200);
    expect(live.json.conversations.map((c: { key: string }) => c.key).sort()).toEqual(["e1", "e2"]);
    expect(live.json.conversations.every((c: { evaluated_revision: number; revision: number }) => c.evaluated_revision === c.revision)).toBe(true);
    expect(live.json.scores).toEqual([{ bucket: expect.stringMatching(/:00:00\.000Z$/), pipeline_node_id: metric, mean: expect.any(Number), count: 2 }]);
    expect(live.json.rules.map((r: { id: number }) => r.id)).toEqual([rule.id]);
  });
});
