/**
 * Issue 48, finding 13: a generation's dry run counts what the run really sends — the whole history on
 * every turn, the system prompt, the simulator's instructions and opening line on each of its calls — and
 * is checked against a real run's spend through the public routes, the judge double as the target and the
 * simulator (it bills each call's messages at 4 characters a token, as the estimate counts them). With the
 * target answering as the source did, the estimate is the spend; answering as long as the source's
 * longest reply, `estimated_cost_usd_high` is.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { writeConversations } from "@/db/repositories/conversation-writes";
import { lockRow, transaction } from "@/db/store";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import type { Conversation } from "@/lib/conversation";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { waitForGeneration } from "./index";

const PRICE = { input: 1, output: 4 }; // USD per million tokens, as a small model's

let double: JudgeDouble;
let datasetId: number;
let targetId: number;
const source: Array<{ system: string | null; turns: Array<[string, string]> }> = [];

const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ["booking", "flight", "refund", "seat", "passenger", "baggage", "change"][(i * 7 + seed) % 7]).join(" ");

beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": PRICE });
  resetConfig();
  // Three conversations of 2–4 turns, a long system prompt on two, replies of very different lengths.
  for (let c = 0; c < 3; c++) {
    const turns: Array<[string, string]> = [];
    for (let k = 0; k < 2 + c; k++) turns.push([`${words(6 + 3 * k, c + k)}?`, `${words(10 + 25 * ((k + c) % 3), k)}.`]);
    source.push({ system: c < 2 ? `You are the airline's agent. ${words(150, c)}.` : null, turns });
  }
  const d = await createDataset({ name: "estimate source", userId: "default" });
  datasetId = d.id;
  const conversations: Conversation[] = source.map((s, i) => ({
    name: `c${i}`, description: null, meta: null, agents: null,
    messages: [
      ...(s.system ? [{ role: "system" as const, content: s.system, meta: null, steps: [] }] : []),
      ...s.turns.flatMap(([u, a]) => [{ role: "user" as const, content: u, meta: null, steps: [] }, { role: "assistant" as const, content: a, meta: null, steps: [] }]),
    ],
  }));
  await transaction(function* () {
    yield* lockRow("datasets", d.id);
    return yield* writeConversations(d.id, conversations.map((conversation) => ({ conversation })), new Date().toISOString());
  });
  const t = await call(targets.POST, "POST", "/x", { body: { name: "candidate", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } });
  expect(t.status, t.text).toBe(201);
  targetId = t.json.id;
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  delete process.env.JUDGE_PRICES;
  resetConfig();
  await double?.close();
});

beforeEach(() => double.reset());

/** The dry run, then the same request run for real (one conversation at a time, so the double's queue answers in order). */
async function estimateThenRun(body: Record<string, unknown>) {
  const request = { source_dataset_id: datasetId, target_id: targetId, batch_size: 1, ...body };
  const dry = await call(generations.POST, "POST", "/x", { body: { ...request, dry_run: true } });
  expect(dry.status, dry.text).toBe(200);
  expect(double.count()).toBe(0);
  const started = await call(generations.POST, "POST", "/x", { body: request });
  expect(started.status, started.text).toBe(202);
  await waitForGeneration(started.json.id);
  const g = (await call(generationItem.GET, "GET", "/x", { params: { id: started.json.id } })).json;
  expect(g.status, g.error).toBe("completed");
  return { estimate: dry.json, spent: g.usage as { target_calls: number; simulator_calls: number; input_tokens: number; output_tokens: number; cost_usd: number } };
}

const replies = () => source.flatMap((s) => s.turns.map(([, a]) => a));
const within = (estimate: number, spent: number, share: number) => expect(Math.abs(estimate - spent) / spent, `estimate ${estimate} vs spent ${spent}`).toBeLessThanOrEqual(share);

describe("a generation's dry run against the spend of the same run (issue 48, finding 13)", () => {
  it("replay: the growing history on every turn, the system prompt included — the estimate is the spend when the target answers as the source did", async () => {
    double.enqueue(...replies().map((content) => ({ kind: "text" as const, content })));
    const { estimate, spent } = await estimateThenRun({ mode: "replay" });
    expect(estimate.target_calls).toBe(spent.target_calls);
    within(estimate.estimated_input_tokens, spent.input_tokens, 0.02);
    within(estimate.estimated_output_tokens, spent.output_tokens, 0.02);
    within(estimate.estimated_cost_usd, spent.cost_usd, 0.02);
    expect(estimate.estimated_cost_usd_high).toBeGreaterThan(estimate.estimated_cost_usd);
  });

  it("replay against a target that answers at length: the spend reaches estimated_cost_usd_high, far above the source-length estimate", async () => {
    const longest = Math.max(...replies().map((r) => r.length));
    double.setDefault({ kind: "text", content: "x".repeat(longest) });
    const { estimate, spent } = await estimateThenRun({ mode: "replay" });
    expect(spent.cost_usd).toBeGreaterThan(estimate.estimated_cost_usd * 1.2);
    within(estimate.estimated_cost_usd_high, spent.cost_usd, 0.02);
  });

  it("next_turn: the source's history before each assistant turn", async () => {
    double.enqueue(...replies().map((content) => ({ kind: "text" as const, content })));
    const { estimate, spent } = await estimateThenRun({ mode: "next_turn" });
    expect(estimate.target_calls).toBe(spent.target_calls);
    within(estimate.estimated_cost_usd, spent.cost_usd, 0.02);
  });

  it("simulate: each simulator call carries its instructions, its opening line and the conversation so far; each target call the conversation", async () => {
    // Each conversation's simulated user and target answer as long as that conversation's average turns, which
    // the estimate assumes (a tag in the user's text tells the target's calls apart); never the stop token.
    const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    source.forEach((s, c) => {
      const scenario = s.turns[0][0];
      const user = `z${c}z${"u".repeat(mean(s.turns.map(([u]) => u.length)) - 3)}`;
      double.addRule({ match: new RegExp(`You play the USER[\\s\\S]*${escape(scenario)}`), behaviour: { kind: "text", content: user } });
    });
    source.forEach((s, c) => double.addRule({ match: `z${c}z`, behaviour: { kind: "text", content: "a".repeat(mean(s.turns.map(([, a]) => a.length))) } }));
    const { estimate, spent } = await estimateThenRun({ mode: "simulate", max_turns: 4 });
    expect([estimate.target_calls, estimate.simulator_calls]).toEqual([spent.target_calls, spent.simulator_calls]);
    within(estimate.simulator.input_tokens + estimate.target.input_tokens, spent.input_tokens, 0.02);
    within(estimate.estimated_cost_usd, spent.cost_usd, 0.02);
  });
});
