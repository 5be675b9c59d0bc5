/**
 * Issue 48, finding 13, through the public routes, the judge double as the target and the simulator: a
 * generation's `max_cost_usd` is checked before every call to either, so the spend stops within the calls
 * already in flight (at most one per conversation at once), never at the end of every conversation going;
 * a budget that cannot be kept (a model without a price) is refused before anything is sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { waitForGeneration } from "./index";

/** USD per million tokens: a call of a few hundred tokens costs a few tenths of a cent. */
const PRICE = { input: 10, output: 10 };
const perToken = PRICE.input / 1_000_000;

let double: JudgeDouble;
let sample: LoadedSample;

beforeAll(async () => {
  double = await startJudgeDouble();
  sample = await loadSampleDataset({ name: "budget source" });
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  delete process.env.JUDGE_PRICES;
  resetConfig();
  await double?.close();
});

beforeEach(() => {
  double.reset();
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": PRICE });
  resetConfig();
});

async function target(body: Record<string, unknown>): Promise<number> {
  const res = await call(targets.POST, "POST", "/api/targets", { body });
  expect(res.status, res.text).toBe(201);
  return res.json.id as number;
}

describe("a generation's max_cost_usd (issue 48, finding 13)", () => {
  it("stops new calls once reached: the spend ends within the calls in flight, and the stop reason says the budget", async () => {
    const concurrency = 4;
    const id = await target({ name: "priced candidate", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini", max_concurrency: concurrency });
    double.addRule({ match: "You play the USER", behaviour: { kind: "text", content: "Can you help me with my booking, please?" } });
    double.setDefault({ kind: "text", content: "Of course. Which booking is it, and what should change?" });
    double.setLatency(25);
    // 10 conversations of up to 10 turns (20 calls each), 4 at once: 200 calls without a budget. The
    // budget is about 20 calls' worth, so 4 conversations are mid-way when it is reached.
    const maxCost = 0.05;
    const started = await call(generations.POST, "POST", "/api/generations", {
      body: { source_dataset_id: sample.datasetId, target_id: id, mode: "simulate", max_turns: 10, repeats: 2, max_cost_usd: maxCost },
    });
    expect(started.status, started.text).toBe(202);
    await waitForGeneration(started.json.id);
    const g = (await call(generationItem.GET, "GET", "/x", { params: { id: started.json.id } })).json;

    expect(g.status).toBe("cancelled");
    expect(g.stop_reason).toBe("budget");
    expect(g.error).toMatch(/^budget reached: \$0\.0\d+ spent of max_cost_usd \$0\.05; no call was started after it/);
    // Every call the provider answered is counted, and priced.
    const billed = double.billedReplies();
    expect(g.usage.target_calls + g.usage.simulator_calls).toBe(billed.length);
    const cost = billed.reduce((n, b) => n + (b.prompt_tokens + b.completion_tokens) * perToken, 0);
    expect(g.usage.cost_usd).toBeCloseTo(cost, 9);
    expect(g.usage.cost_usd).toBeGreaterThanOrEqual(maxCost);
    // The replies in the order the provider sent them: the one that reached the budget, then at most the
    // other conversations' calls already out (one each), and nothing started after it.
    let sum = 0;
    const reached = billed.findIndex((b) => (sum += (b.prompt_tokens + b.completion_tokens) * perToken) >= maxCost);
    expect(reached).toBeGreaterThan(0);
    expect(billed.length - (reached + 1)).toBeLessThanOrEqual(concurrency - 1);
    expect(billed.length).toBeLessThan(200);
    // Conversations stopped mid-way by the budget are not written; the finished ones are whole.
    const written = (await call(conversations.GET, "GET", "/x?limit=100", { params: { id: g.dataset_id } })).json as unknown[];
    expect(written.length).toBe(g.completed + g.failed);
    expect(g.stop_reasons.max_turns).toBe(g.completed);
  });

  it("is refused with 422 naming max_cost_usd, and nothing sent, when a model it would count has no price or nothing reports tokens", async () => {
    const unpriced = await target({ name: "unpriced candidate", kind: "openai_chat", url: double.baseURL, model: "no-price-model" });
    const res = await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: unpriced, mode: "replay", max_cost_usd: 1 } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.details).toEqual([{ path: "max_cost_usd", message: "target unpriced candidate's model no-price-model has no price in JUDGE_PRICES" }]);

    const priced = await target({ name: "priced", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    const simulator = await call(generations.POST, "POST", "/x", {
      body: { source_dataset_id: sample.datasetId, target_id: priced, mode: "simulate", simulator: { model: "free-model" }, max_cost_usd: 1 },
    });
    expect(simulator.status, simulator.text).toBe(422);
    expect(simulator.json.error.message).toContain("the simulator's model free-model has no price");

    const agent = await target({ name: "agent", kind: "http_json", url: `${double.baseURL}/agent`, request_template: '{"m": {{messages}}}', reply_path: "reply" });
    const noTokens = await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: agent, mode: "replay", max_cost_usd: 1 } });
    expect(noTokens.status, noTokens.text).toBe(422);
    expect(noTokens.json.error.message).toContain("reports no token usage");
    expect(double.count()).toBe(0);

    // Without a budget the same requests are accepted.
    const dry = await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: unpriced, mode: "replay", dry_run: true } });
    expect(dry.status).toBe(200);
  });
});
