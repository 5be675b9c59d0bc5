/**
 * Issue 37 through the public routes: targets of the three kinds driven by real clients — the judge double
 * as the `openai_chat` model and as the simulator, and an AI SDK agent (`streamText` with a tool, served by
 * a route of this test, its model the judge double) behind `http_json` and `ai_sdk_ui`. Each generated
 * conversation is an ordinary conversation linked to its source; a target that fails one call in ten is
 * never counted as a pass; header secrets are never echoed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { convertToModelMessages, generateText, stepCountIs, streamText, tool, type UIMessage } from "ai";
import { z } from "zod";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as compare from "@/app/api/evaluation-pipeline-executions/compare/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as cancel from "@/app/api/generations/[id]/cancel/route";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as evaluate from "@/app/api/generations/[id]/evaluate/route";
import * as executionItem from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as nodeItem from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import { waitForExecution } from "@/lib/runner/run";
import * as generations from "@/app/api/generations/route";
import * as targetItem from "@/app/api/targets/[id]/route";
import * as targets from "@/app/api/targets/route";
import { resetConfig } from "@/lib/config";
import { openAIChatModel } from "@/lib/judge/call";
import { call } from "@/lib/testing/http/call";
import { serveRoutes, type RouteServer } from "@/lib/testing/http/route-server";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, readSampleFixture, type LoadedSample } from "@/lib/testing/seed/sample";
import { until } from "@/lib/testing/setup/until";
import { waitForGeneration } from "./index";

let double: JudgeDouble;
let agent: RouteServer;
let sample: LoadedSample;
let agentCalls = 0;
let failEvery = 0;
let seenKey: string | null = null;

beforeAll(async () => {
  double = await startJudgeDouble();
  const model = () => openAIChatModel(double.baseURL, "agent-key", "agent-model");
  const lookup = tool({ description: "Look an order up", inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ found: true, q }) });
  agent = await serveRoutes(
    {
      // The team's own agent service: {messages} in, {reply, tools} out.
      "/agent": async (req) => {
        agentCalls++;
        seenKey = req.headers.get("x-agent-key");
        if (failEvery && agentCalls % failEvery === 0) return new Response("overloaded", { status: 500 });
        const body = (await req.json()) as { messages: Array<{ role: "user" | "assistant" | "system"; content: string }> };
        const system = body.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n") || undefined;
        const messages = body.messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role as "user" | "assistant", content: m.content }));
        const res = await generateText({ model: model(), system, messages, tools: { lookup }, stopWhen: stepCountIs(3) });
        return Response.json({ data: { reply: res.text }, tools: res.steps.flatMap((s) => s.toolCalls.map((c) => ({ name: c.toolName, arguments: c.input }))) });
      },
      // An AI SDK chat route, as an app built with useChat serves it.
      "/chat": async (req) => {
        const { messages } = (await req.json()) as { messages: UIMessage[] };
        const result = streamText({ model: model(), messages: await convertToModelMessages(messages), tools: { lookup }, stopWhen: stepCountIs(3) });
        return result.toUIMessageStreamResponse();
      },
    },
    { record: false },
  );
  sample = await loadSampleDataset({ name: "generation source" });
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  delete process.env.AGENT_KEY;
  delete process.env.TARGET_SECRET_ENV;
  resetConfig();
  await agent?.close();
  await double?.close();
});

beforeEach(() => {
  double.reset();
  failEvery = 0;
  agentCalls = 0;
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.AGENT_KEY = "s3cret-agent-key";
  // An admin lets targets read this one variable (issue 48: no other name of the environment may be sent).
  process.env.TARGET_SECRET_ENV = "AGENT_KEY";
  resetConfig();
});

async function target(body: Record<string, unknown>): Promise<number> {
  const res = await call(targets.POST, "POST", "/api/targets", { body });
  expect(res.status, res.text).toBe(201);
  return res.json.id as number;
}

async function generate(body: Record<string, unknown>) {
  const res = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, ...body } });
  expect(res.status, res.text).toBe(202);
  await waitForGeneration(res.json.id);
  return (await call(generationItem.GET, "GET", "/x", { params: { id: res.json.id } })).json;
}

async function conversationsOf(datasetId: number) {
  const list = (await call(conversations.GET, "GET", "/x?limit=500", { params: { id: datasetId } })).json as Array<{ id: number }>;
  const out = [];
  for (const c of list) out.push((await call(conversation.GET, "GET", "/x", { params: { id: c.id } })).json);
  return out as Array<{ meta: Record<string, unknown>; messages: Array<{ role: string; content: string | null; meta: Record<string, unknown> | null; steps: Array<{ tool_call: { name: string } | null; tool_result: unknown }> }> }>;
}

const agentTarget = (kind: "http_json" | "ai_sdk_ui") =>
  kind === "http_json"
    ? { name: "agent service", kind, url: `${agent.baseURL}/agent`, request_template: '{"messages": {{messages}}, "session": "{{session_id}}"}', reply_path: "data.reply", steps_path: "tools", headers: { "x-agent-key": "${env:AGENT_KEY}" } }
    : { name: "chat route", kind, url: `${agent.baseURL}/chat` };

describe("generations (issue 37)", () => {
  it("next_turn against an openai_chat model: a candidate beside each original, every conversation linked to its source", async () => {
    const id = await target({ name: "candidate model", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini", headers: { authorization: "Bearer ${env:AGENT_KEY}" } });
    const shown = await call(targetItem.GET, "GET", "/x", { params: { id } });
    expect(shown.json.header_names).toEqual(["authorization"]);
    expect(shown.text).not.toContain("s3cret");
    expect(shown.text).not.toContain("env:AGENT_KEY");

    const g = await generate({ target_id: id, mode: "next_turn" });
    expect(g).toMatchObject({ status: "completed", total: sample.conversations.length, completed: sample.conversations.length, failed: 0 });
    const assistants = sample.conversations.reduce((n, c) => n + c.messages.filter((m) => m.role === "assistant").length, 0);
    expect(g.usage.target_calls).toBe(assistants);
    expect(double.stats().billed.replies).toBe(assistants);
    expect(g.usage.input_tokens).toBe(double.stats().billed.prompt_tokens);
    // The provider saw the key from the environment.
    // The provider got the key as a bearer (the double records it masked; the http_json test reads the value itself).
    expect(double.requests.map((r) => r.headers.authorization)).toEqual(Array(assistants).fill("Bearer ***"));
    const made = await conversationsOf(g.dataset_id);
    expect(made.map((c) => c.meta.source_conversation_id).sort()).toEqual(sample.conversations.map((c) => c.id).sort());
    for (const c of made) {
      expect(c.meta).toMatchObject({ repeat: 0, generation_id: g.id, target: "candidate model", stop_reason: "end_of_source" });
      const replies = c.messages.filter((m) => m.role === "assistant");
      expect(replies.every((m) => m.meta && "original_content" in m.meta && m.content)).toBe(true);
    }
  });

  it("replay through an AI SDK agent behind http_json and ai_sdk_ui: the agent's tool calls come back as steps", async () => {
    for (const kind of ["http_json", "ai_sdk_ui"] as const) {
      double.reset();
      // Each turn, the agent's model first calls the tool, then answers.
      double.addRule({ match: "Look an order up", behaviour: { kind: "default" } });
      const id = await target(agentTarget(kind));
      double.setDefault({ kind: "text", content: "Here is what I found." });
      double.addRule({ match: /^(?![\s\S]*found)[\s\S]*$/, behaviour: { kind: "tool_calls", calls: [{ name: "lookup", arguments: { q: "order" } }] } });
      const g = await generate({ target_id: id, mode: "replay", conversation_ids: [sample.conversations[0].id] });
      expect(g, kind).toMatchObject({ status: "completed", completed: 1, failed: 0, stop_reasons: { end_of_source: 1 } });
      const [made] = await conversationsOf(g.dataset_id);
      const users = sample.conversations[0].messages.filter((m) => m.role === "user").length;
      expect(made.messages.filter((m) => m.role === "user")).toHaveLength(users);
      const replies = made.messages.filter((m) => m.role === "assistant");
      expect(replies).toHaveLength(users);
      expect(replies[0].steps.some((s) => s.tool_call?.name === "lookup"), `${kind}: ${JSON.stringify(replies[0])}`).toBe(true);
      expect(replies[0].content).toContain("Here is what I found.");
      expect(made.meta).toHaveProperty("diverged_at");
      if (kind === "http_json") expect(seenKey).toBe("s3cret-agent-key");
    }
  });

  it("a target that fails one call in ten is never a pass: those conversations stop with target_error and count as failed", async () => {
    failEvery = 10;
    const id = await target(agentTarget("http_json"));
    const g = await generate({ target_id: id, mode: "replay", repeats: 4 });
    const failedCalls = Math.floor(agentCalls / 10);
    expect(failedCalls).toBeGreaterThan(0);
    expect(g.failed).toBe(g.stop_reasons.target_error);
    expect(g.stop_reasons.target_error).toBe(failedCalls);
    expect(g.completed + g.failed).toBe(g.total);
    const made = await conversationsOf(g.dataset_id);
    const broken = made.filter((c) => c.meta.stop_reason === "target_error");
    expect(broken).toHaveLength(failedCalls);
    for (const c of broken) expect(String(c.meta.error)).toMatch(/answered 500/);
  });

  it("counts each target call as it ends, not when its conversation is written: a process that dies mid-conversation leaves them counted", async () => {
    const id = await target({ name: "hangs on the second turn", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    // The sample's first conversation has two assistant turns: the first call is answered, the second hangs.
    const [first] = readSampleFixture().conversations;
    const secondUser = first.messages.filter((m) => m.role === "user")[1].content as string;
    double.addRule({ match: secondUser, behaviour: { kind: "hang" } });
    const res = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: id, mode: "next_turn", conversation_ids: [sample.conversations[0].id], batch_size: 1 } });
    expect(res.status, res.text).toBe(202);
    const read = async () => (await call(generationItem.GET, "GET", "/x", { params: { id: res.json.id } })).json;
    try {
      await until("the second call to reach the target", () => double.requests.length === 2, 8_000);
      // What a process killed now would leave: the answered call counted, no conversation written yet.
      await until("the answered call to be saved", async () => (await read()).usage.target_calls >= 1, 8_000);
      expect(await read()).toMatchObject({ status: "processing", completed: 0, usage: { target_calls: 1, input_tokens: double.stats().billed.prompt_tokens } });
    } finally {
      await call(cancel.POST, "POST", "/x", { params: { id: res.json.id } });
      await waitForGeneration(res.json.id);
    }
    expect((await read()).status).toBe("cancelled");
  });

  it("simulate: the judge double plays the user from the scenario in meta until its stop token or max_turns; errors of the simulator counted apart", async () => {
    const id = await target({ name: "candidate model", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    double.addRule({ match: "You play the USER", behaviour: { kind: "text", content: "I need to change my flight. ###STOP###" } });
    const stopped = await generate({ target_id: id, mode: "simulate", max_turns: 3, conversation_ids: [sample.conversations[0].id] });
    expect(stopped).toMatchObject({ status: "completed", completed: 1, stop_reasons: { stop_token: 1 } });
    const [first] = await conversationsOf(stopped.dataset_id);
    expect(first.messages.map((m) => [m.role, m.content])).toEqual([["user", "I need to change my flight."]]);
    expect(first.meta.scenario).toBeTruthy();

    double.reset();
    double.addRule({ match: "You play the USER", behaviour: { kind: "text", content: "Can you help me?" } });
    const long = await generate({ target_id: id, mode: "simulate", max_turns: 2, conversation_ids: [sample.conversations[0].id], simulator: { stop_token: "<<DONE>>" } });
    expect(long).toMatchObject({ completed: 1, stop_reasons: { max_turns: 1 }, usage: { simulator_calls: 2, target_calls: 2 } });

    double.reset();
    double.addRule({ match: "You play the USER", behaviour: { kind: "http_error", status: 400, message: "bad simulator request" } });
    const broken = await generate({ target_id: id, mode: "simulate", max_turns: 2, conversation_ids: [sample.conversations[0].id] });
    expect(broken).toMatchObject({ status: "failed", failed: 1, stop_reasons: { simulator_error: 1, target_error: 0 } });
  });

  it("sixteen conversations at once share the generation's cancel signal without Node warning of a listener leak", async () => {
    const id = await target({ name: "candidate model", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini", max_concurrency: 16 });
    double.addRule({ match: "You play the USER", behaviour: { kind: "text", content: "Can you help me?" } });
    double.setLatency(50);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const g = await generate({ target_id: id, mode: "simulate", max_turns: 1, repeats: 4, batch_size: 16 });
      expect(g).toMatchObject({ status: "completed", completed: 20 });
      // Node reports a warning on the next tick after the listener that crossed the limit.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
  });

  it("compares a generation with its source, paired by source conversation: flips, pass^k and pass@k over repeats", async () => {
    const id = await target({ name: "candidate model", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    double.setDefault({ kind: "text", content: "All of it is checked now." });
    const g = await generate({ target_id: id, mode: "replay", repeats: 2 });
    expect(g).toMatchObject({ status: "completed", completed: 2 * sample.conversations.length });
    const metric = (datasetId: number) =>
      call(nodes.POST, "POST", "/x", { body: { dataset_id: datasetId, name: "says checked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "checked" } } } });
    expect((await metric(sample.datasetId)).status).toBe(201);
    expect((await metric(g.dataset_id)).status).toBe(201);
    const runOf = async (datasetId: number) => {
      const started = await call(run.POST, "POST", "/x", { body: { dataset_id: datasetId } });
      await waitForExecution(started.json.id);
      return started.json.id as number;
    };
    const a = await runOf(sample.datasetId);
    const b = await runOf(g.dataset_id);
    const same = await call(compare.GET, "GET", `/x?a=${a}&b=${b}`);
    expect(same.status).toBe(422); // cell by cell needs one dataset
    const res = await call(compare.GET, "GET", `/x?a=${a}&b=${b}&pair_by=source`);
    expect(res.status, res.text).toBe(200);
    const n = sample.conversations.length;
    expect(res.json.metrics).toEqual([
      expect.objectContaining({ name: "says checked", pairs: n, repeats: 2, a_pass_rate: 0, b_pass_rate: 1, worse: 0, better: n, pass_hat_k: 1, pass_at_k: 1, target_errors: 0 }),
    ]);
    expect(res.json.cells).toHaveLength(n);
    expect(res.json.cells[0].b).toHaveLength(2);
  });

  it("refuses what it cannot do with a clear 4xx and creates nothing: an unknown target, foreign conversations, a filter; dry_run sends nothing", async () => {
    const id = await target({ name: "m", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    expect((await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: 999999, mode: "replay" } })).status).toBe(404);
    expect((await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: id, mode: "replay", conversation_ids: [999999] } })).status).toBe(422);
    expect((await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: id, mode: "replay", filter: "meta.x==1" } })).status).toBe(422);
    expect((await call(targets.POST, "POST", "/x", { body: { name: "x", kind: "http_json", url: "http://127.0.0.1:1/a" } })).status).toBe(400);
    const dry = await call(generations.POST, "POST", "/x", { body: { source_dataset_id: sample.datasetId, target_id: id, mode: "next_turn", dry_run: true, repeats: 2 } });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ conversations: 2 * sample.conversations.length });
    expect(double.count()).toBe(0);
  });

  it("evaluate and compare with the source in one call: the source's metric copied by name, both datasets run, the comparison paired by source", async () => {
    const id = await target({ name: "candidate model", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    double.setDefault({ kind: "text", content: "All of it is checked now." });
    const g = await generate({ target_id: id, mode: "replay" });
    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "mentions checked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "checked" } } } });
    expect(metric.status, metric.text).toBe(201);
    const foreign = await call(evaluate.POST, "POST", "/x", { params: { id: g.id }, body: { pipeline_node_ids: [999999] } });
    expect(foreign.status).toBe(422);
    expect(foreign.json.error.details[0].path).toBe("pipeline_node_ids");
    const res = await call(evaluate.POST, "POST", "/x", { params: { id: g.id }, body: { pipeline_node_ids: [metric.json.id] } });
    expect(res.status, res.text).toBe(202);
    const { source_execution: a, generated_execution: b, compare_url, metrics } = res.json;
    expect(a.dataset_id).toBe(sample.datasetId);
    expect(b.dataset_id).toBe(g.dataset_id);
    expect(metrics).toEqual([{ name: "mentions checked", source_id: metric.json.id, generated_id: expect.any(Number) }]);
    expect(compare_url).toBe(`/datasets/${g.dataset_id}/compare-source?a=${a.id}&b=${b.id}`);
    await waitForExecution(a.id);
    await waitForExecution(b.id);
    const compared = await call(compare.GET, "GET", `/x?a=${a.id}&b=${b.id}&pair_by=source`);
    expect(compared.json.metrics).toEqual([expect.objectContaining({ name: "mentions checked", pairs: sample.conversations.length, b_pass_rate: 1 })]);
    // Again: the copy is reused, not made twice.
    const again = await call(evaluate.POST, "POST", "/x", { params: { id: g.id }, body: { pipeline_node_ids: [metric.json.id] } });
    expect(again.json.metrics[0].generated_id).toBe(metrics[0].generated_id);
    await waitForExecution(again.json.source_execution.id);
    await waitForExecution(again.json.generated_execution.id);
  });

  it("evaluate copies what a chosen metric depends on: the copy's dependency, skip rule and @METRIC read the generated side's own verdicts", async () => {
    const id = await target({ name: "candidate with deps", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" });
    double.setDefault({ kind: "text", content: "All of it is verified now." });
    const g = await generate({ target_id: id, mode: "replay" });
    double.reset(); // the judge's own verdicts from here on
    const gate = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "says verified", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "verified" } } } });
    expect(gate.status, gate.text).toBe(201);
    const judged = await call(nodes.POST, "POST", "/x", {
      body: { dataset_id: sample.datasetId, name: "worth reading", evaluation_level: "conversation", output_type: "checkbox", prompt: "Given @METRIC.says_verified, is @HISTORY worth reading?", depends_on: [gate.json.id], skip_rule: { when: "failed" } },
    });
    expect(judged.status, judged.text).toBe(201);
    // Only the dependent metric is chosen; its dependency comes with it, first.
    const res = await call(evaluate.POST, "POST", "/x", { params: { id: g.id }, body: { pipeline_node_ids: [judged.json.id] } });
    expect(res.status, res.text).toBe(202);
    const { source_execution: a, generated_execution: b, metrics } = res.json as { source_execution: { id: number }; generated_execution: { id: number }; metrics: Array<{ name: string; source_id: number; generated_id: number }> };
    expect(metrics.map((m) => [m.name, m.source_id])).toEqual([["says verified", gate.json.id], ["worth reading", judged.json.id]]);
    const copy = (await call(nodeItem.GET, "GET", "/x", { params: { id: metrics[1].generated_id } })).json;
    expect(copy).toMatchObject({ dataset_id: g.dataset_id, depends_on: [metrics[0].generated_id], skip_rule: { when: "failed" } });
    await waitForExecution(a.id);
    await waitForExecution(b.id);
    const ran = async (executionId: number) => (await call(executionItem.GET, "GET", "/x", { params: { id: executionId } })).json as { status: string; total_evaluations: number; skipped_evaluations: number };
    const n = sample.conversations.length;
    // The source never says "verified": every judged cell is skipped there. Every generated reply says it: none is.
    expect(await ran(a.id)).toMatchObject({ status: "completed", total_evaluations: 2 * n, skipped_evaluations: n });
    expect(await ran(b.id)).toMatchObject({ status: "completed", total_evaluations: 2 * n, skipped_evaluations: 0 });
  });
});
