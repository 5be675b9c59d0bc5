/**
 * Which conversations a generation sends, and what it would cost, through the public route: `filter` (the
 * grid's filter language) alone and with `conversation_ids`, a filter it cannot read refused with 422
 * naming it and nothing created; `dry_run` answers the target's and the simulator's calls, tokens and cost
 * (JUDGE_PRICES, or null with a note), sending nothing and creating nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as datasets from "@/app/api/datasets/route";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as targets from "@/app/api/targets/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { waitForGeneration } from "./index";

let double: JudgeDouble;
let sample: LoadedSample;
let targetId: number;

beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  resetConfig();
  sample = await loadSampleDataset({ name: "selection source" });
  const t = await call(targets.POST, "POST", "/x", { body: { name: "candidate", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } });
  targetId = t.json.id as number;
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  delete process.env.JUDGE_PRICES;
  resetConfig();
  await double?.close();
});

beforeEach(() => {
  double.reset();
  delete process.env.JUDGE_PRICES;
  resetConfig();
});

const post = (body: Record<string, unknown>) => call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: targetId, mode: "replay", ...body } });
const datasetCount = async () => Number((await call(datasets.GET, "GET", "/api/datasets?limit=1")).headers.get("x-total-count"));

async function sourcesOf(body: Record<string, unknown>): Promise<number[]> {
  const res = await post(body);
  expect(res.status, res.text).toBe(202);
  await waitForGeneration(res.json.id);
  const g = (await call(generationItem.GET, "GET", "/x", { params: { id: res.json.id } })).json;
  const list = (await call(conversations.GET, "GET", "/x?limit=500", { params: { id: g.dataset_id } })).json as Array<{ meta: { source_conversation_id: number } }>;
  return list.map((c) => c.meta.source_conversation_id).sort((a, b) => a - b);
}

describe("a generation's source conversations and its dry run (issue 37)", () => {
  it("filter chooses the conversations the grid's filter shows; with conversation_ids, the named ones that match", async () => {
    const [lisbon, wrongTool, refund] = sample.conversations;
    expect(await sourcesOf({ filter: "meta.channel==web" })).toEqual([lisbon.id]);
    expect(await sourcesOf({ filter: "meta.channel!=nothing" })).toEqual([lisbon.id, wrongTool.id].sort((a, b) => a - b)); // rows without the field never match
    expect(await sourcesOf({ filter: "meta.channel==mobile", conversation_ids: [wrongTool.id, refund.id] })).toEqual([wrongTool.id]);
    // The generation says what chose its conversations.
    const res = await post({ filter: "meta.channel==web", dry_run: false });
    await waitForGeneration(res.json.id);
    expect(res.json.params).toMatchObject({ filter: "meta.channel==web", conversation_ids: null });
    expect(res.json.total).toBe(1);
  });

  it("a filter it cannot read, a metric of another dataset, or one matching nothing: 422 naming filter, nothing created, nothing sent", async () => {
    const other = await loadSampleDataset({ name: "other" });
    const foreign = await call(nodes.POST, "POST", "/x", { body: { dataset_id: other.datasetId, name: "m", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "x" } } } });
    expect(foreign.status, foreign.text).toBe(201);
    const before = await datasetCount();
    for (const filter of ["channel==web", "meta.channel~web", `metric.${foreign.json.id}==pass`, "meta.channel==nowhere"]) {
      const res = await post({ filter });
      expect(res.status, `${filter}: ${res.text}`).toBe(422);
      expect(res.json.error.details[0].path).toBe("filter");
      expect(res.json.error.message).toMatch(/filter/i);
    }
    const named = await post({ filter: "meta.channel==web", conversation_ids: [sample.conversations[1].id] });
    expect(named.status).toBe(422);
    expect(named.json.error.message).toContain("none of the conversation_ids");
    expect(await datasetCount()).toBe(before);
    expect(double.count()).toBe(0);
  });

  it("dry_run: the target's calls with their tokens and cost from JUDGE_PRICES; a model without a price is null and said; nothing created or sent", async () => {
    const before = await datasetCount();
    const assistants = sample.conversations.reduce((n, c) => n + c.messages.filter((m) => m.role === "assistant").length, 0);
    const unpriced = await post({ mode: "next_turn", dry_run: true, repeats: 2 });
    expect(unpriced.status, unpriced.text).toBe(200);
    expect(unpriced.json).toMatchObject({ conversations: 2 * sample.conversations.length, target_calls: 2 * assistants, simulator_calls: 0, estimated_cost_usd: null, simulator: null });
    expect(unpriced.json.target).toMatchObject({ model: "gpt-4o-mini", calls: 2 * assistants, cost_usd: null });
    expect(unpriced.json.estimated_input_tokens).toBeGreaterThan(0);
    expect(unpriced.json.notes.join(" ")).toContain("gpt-4o-mini has no price in JUDGE_PRICES");

    process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": { input: 1, output: 2 }, "sim-model": { input: 10, output: 20 } });
    resetConfig();
    const priced = await post({ mode: "next_turn", dry_run: true });
    const t = priced.json.target;
    expect(t.cost_usd).toBeCloseTo((t.input_tokens * 1 + t.output_tokens * 2) / 1e6, 12);
    expect(priced.json.estimated_cost_usd).toBeCloseTo(t.cost_usd, 12);

    const simulated = await post({ mode: "simulate", dry_run: true, max_turns: 3, simulator: { model: "sim-model" }, conversation_ids: [sample.conversations[0].id] });
    expect(simulated.status, simulated.text).toBe(200);
    expect(simulated.json).toMatchObject({ conversations: 1, target_calls: 3, simulator_calls: 3, simulator: { model: "sim-model", calls: 3 } });
    const s = simulated.json.simulator;
    expect(s.cost_usd).toBeCloseTo((s.input_tokens * 10 + s.output_tokens * 20) / 1e6, 12);
    expect(simulated.json.estimated_cost_usd).toBeCloseTo(s.cost_usd + simulated.json.target.cost_usd, 12);

    const unpricedSimulator = await post({ mode: "simulate", dry_run: true, simulator: { model: "unknown-sim" } });
    expect(unpricedSimulator.json.estimated_cost_usd).toBeNull();
    expect(unpricedSimulator.json.target.cost_usd).not.toBeNull();
    expect(unpricedSimulator.json.notes.join(" ")).toContain("unknown-sim has no price");

    expect(await datasetCount()).toBe(before);
    expect(double.count()).toBe(0);
  });

  it("lists generations newest first, all or those of one source dataset, with X-Total-Count", async () => {
    const first = await post({ conversation_ids: [sample.conversations[0].id] });
    const second = await post({ conversation_ids: [sample.conversations[1].id] });
    await waitForGeneration(first.json.id);
    await waitForGeneration(second.json.id);
    const mine = await call(generations.GET, "GET", `/api/generations?source_dataset_id=${sample.datasetId}&limit=2`);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.json.map((g: { id: number }) => g.id)).toEqual([second.json.id, first.json.id]);
    expect(Number(mine.headers.get("x-total-count"))).toBeGreaterThanOrEqual(2);
    const other = await loadSampleDataset({ name: "never generated from" });
    const none = await call(generations.GET, "GET", `/api/generations?source_dataset_id=${other.datasetId}`);
    expect(none.json).toEqual([]);
    expect(none.headers.get("x-total-count")).toBe("0");
    expect((await call(generations.GET, "GET", "/api/generations?limit=0")).status).toBe(400);
  });
});
