/**
 * Issue 53.2: verdicts back onto the traces. An agent's spans come in through the served OTLP receiver
 * (the OpenTelemetry SDK's own protobuf exporter), a run judges the conversation, and every finished cell
 * leaves as a `gen_ai.evaluation.result` span in the source trace, a child of the span that wrote what was
 * judged. The collector here is a recording server in front of the project's own receiver: what it got is
 * decoded by the receiver's OTLP decoder (the OpenTelemetry .proto definitions), and the receiver accepts
 * it without the conversation growing (an online rule would otherwise judge it again, for ever).
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as datasets from "@/app/api/datasets/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as exportStatus from "@/app/api/otel/evaluation-export/route";
import * as traces from "@/app/api/otel/v1/traces/route";
import { resetConfig } from "@/lib/config";
import { waitForExecution } from "@/lib/runner/run";
import { call } from "@/lib/testing/http/call";
import { serveRoutes, type RouteServer } from "@/lib/testing/http/route-server";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { decodeProtobufExport } from "./decode";
import { flushAssembly } from "./ingest";
import { flushEvaluationExport, startEvaluationExport, stopEvaluationExport } from "./export";
import type { OtelSpan } from "./types";

let receiver: RouteServer;
let collector: RouteServer;
let failNext = 0;

beforeAll(async () => {
  receiver = await serveRoutes({ "/api/otel/v1/traces": traces.POST });
  // The collector: 503 while `failNext` lasts (the exporter retries), else the project's receiver answers.
  collector = await serveRoutes({
    "/v1/traces": async (req) => {
      if (failNext > 0) {
        failNext--;
        return new Response("busy", { status: 503, headers: { "retry-after": "0" } });
      }
      return traces.POST(req, { params: Promise.resolve({}) });
    },
  });
});

afterAll(async () => {
  await stopEvaluationExport();
  delete process.env.OTEL_EVALUATION_ENDPOINT;
  delete process.env.OTEL_EVALUATION_SCOPE;
  resetConfig();
  await receiver.close();
  await collector.close();
});

/** Two chat spans of one agent in one trace, sent by the SDK's protobuf exporter to the served receiver. */
async function sendAgentTrace(service: string): Promise<{ traceId: string; chatSpanIds: string[] }> {
  const tp = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${receiver.baseURL}/api/otel/v1/traces` }), { scheduledDelayMillis: 10 })],
  });
  const tracer = tp.getTracer("agent");
  const agent = tracer.startSpan("invoke_agent helper", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper" } });
  const inAgent = trace.setSpan(ROOT_CONTEXT, agent);
  const user1 = { role: "user", parts: [{ type: "text", content: "Where is my order 42?" }] };
  const reply1 = { role: "assistant", parts: [{ type: "text", content: "It ships tomorrow." }], finish_reason: "stop" };
  const user2 = { role: "user", parts: [{ type: "text", content: "Thanks, and can I change the address?" }] };
  const reply2 = { role: "assistant", parts: [{ type: "text", content: "Yes: reply with the new address." }], finish_reason: "stop" };
  const chat = (input: unknown[], output: unknown) =>
    tracer.startSpan("chat gpt-x", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x", "gen_ai.input.messages": JSON.stringify(input), "gen_ai.output.messages": JSON.stringify([output]) } }, inAgent);
  const first = chat([user1], reply1);
  first.end();
  const second = chat([user1, reply1, user2], reply2);
  second.end();
  agent.end();
  await tp.forceFlush();
  await tp.shutdown();
  await flushAssembly();
  return { traceId: agent.spanContext().traceId, chatSpanIds: [first.spanContext().spanId, second.spanContext().spanId] };
}

async function datasetNamed(name: string): Promise<number> {
  const list = (await call(datasets.GET, "GET", "/api/datasets?limit=500")).json as Array<{ id: number; name: string }>;
  return list.find((d) => d.name === name)!.id;
}

/** Every span the collector received, decoded by the receiver's own OTLP decoder. */
const received = (): OtelSpan[] => collector.requests.filter((r) => r.status === 200).flatMap((r) => decodeProtobufExport(new Uint8Array(r.body)).spans);

describe("verdicts back onto the traces", () => {
  it("each finished cell of a traced conversation leaves as a gen_ai.evaluation.result span under the span it judged, retried past a 503", async () => {
    process.env.OTEL_EVALUATION_ENDPOINT = `${collector.baseURL}/v1/traces`;
    resetConfig();
    startEvaluationExport();
    const { traceId, chatSpanIds } = await sendAgentTrace("traced-agent-53");
    const datasetId = await datasetNamed("traced-agent-53");
    const convs = (await call(conversations.GET, "GET", "/x", { params: { id: datasetId } })).json as Array<{ id: number }>;
    expect(convs).toHaveLength(1);
    const before = (await call(conversation.GET, "GET", "/x", { params: { id: convs[0].id } })).json;
    const assistantIds = (before.messages as Array<{ id: number; role: string }>).filter((m) => m.role === "assistant").map((m) => m.id);
    expect(assistantIds).toHaveLength(2);
    // A pass/fail check per assistant message, and one over the whole conversation.
    const perMessage = await call(nodes.POST, "POST", "/x", { body: { dataset_id: datasetId, name: "Mentions the order", kind: "check", evaluation_level: "message", check: { type: "text_contains", params: { value: "tomorrow" } } } });
    const whole = await call(nodes.POST, "POST", "/x", { body: { dataset_id: datasetId, name: "Short enough", kind: "check", evaluation_level: "conversation", check: { type: "message_count", params: { max: 10 } } } });
    expect(perMessage.status, perMessage.text).toBe(201);
    expect(whole.status, whole.text).toBe(201);
    failNext = 1;
    const started = await call(run.POST, "POST", "/x", { body: { dataset_id: datasetId } });
    expect(started.status, started.text).toBe(202);
    await waitForExecution(started.json.id);
    await flushEvaluationExport();

    const spans = received().filter((s) => s.name === "gen_ai.evaluation.result");
    expect(spans).toHaveLength(3);
    for (const s of spans) expect(s.traceId).toBe(traceId);
    const byMessage = spans.filter((s) => s.attributes["gen_ai.evaluation.name"] === "Mentions the order");
    expect(byMessage.map((s) => s.parentSpanId).sort()).toEqual([...chatSpanIds].sort());
    const first = byMessage.find((s) => s.parentSpanId === chatSpanIds[0])!;
    const second = byMessage.find((s) => s.parentSpanId === chatSpanIds[1])!;
    expect(first.attributes).toMatchObject({ "gen_ai.evaluation.score.label": "pass", "gen_ai.evaluation.score.value": 1, "turnscope.execution.id": started.json.id });
    expect(second.attributes).toMatchObject({ "gen_ai.evaluation.score.label": "fail", "gen_ai.evaluation.score.value": 0 });
    expect(String(second.attributes["gen_ai.evaluation.explanation"])).toContain("tomorrow");
    expect(second.events.map((e) => e.name)).toEqual(["gen_ai.evaluation.result"]);
    // The conversation-level verdict hangs under the call that ended the conversation.
    const overall = spans.find((s) => s.attributes["gen_ai.evaluation.name"] === "Short enough")!;
    expect(overall.parentSpanId).toBe(chatSpanIds[1]);
    expect(collector.requests.some((r) => r.status === 503)).toBe(true);
    const counts = (await call(exportStatus.GET, "GET", "/api/otel/evaluation-export")).json;
    expect(counts).toMatchObject({ enabled: true, exported: 3, failed: 0, dropped: 0, queued: 0 });

    // The receiver took them (200) and the conversation did not grow: nothing to judge again.
    await flushAssembly();
    const after = (await call(conversation.GET, "GET", "/x", { params: { id: convs[0].id } })).json;
    expect(after.messages).toHaveLength(before.messages.length);
    expect(after.meta.span_count).toBe(before.meta.span_count);
    // Nor did they become conversations of their own (the spans' service is Turnscope's).
    const names = ((await call(datasets.GET, "GET", "/api/datasets?limit=500")).json as Array<{ name: string }>).map((d) => d.name);
    expect(names).not.toContain("turnscope");
  });

  it("a conversation that came with no trace is skipped (counted), unless OTEL_EVALUATION_SCOPE=all gives it a trace of its own", async () => {
    const sample = await loadSampleDataset({ name: "untraced-53" });
    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "Few messages", kind: "check", evaluation_level: "conversation", check: { type: "message_count", params: { max: 50 } } } });
    const countBefore = (await call(exportStatus.GET, "GET", "/x")).json;
    const spansBefore = received().length;
    const first = await call(run.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, pipeline_node_id: metric.json.id } });
    await waitForExecution(first.json.id);
    await flushEvaluationExport();
    const skipped = (await call(exportStatus.GET, "GET", "/x")).json;
    expect(skipped.skipped - countBefore.skipped).toBe(sample.conversations.length);
    expect(received().length).toBe(spansBefore);

    process.env.OTEL_EVALUATION_SCOPE = "all";
    resetConfig();
    const second = await call(run.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, pipeline_node_id: metric.json.id } });
    await waitForExecution(second.json.id);
    await flushEvaluationExport();
    const fresh = received().slice(spansBefore);
    expect(fresh).toHaveLength(sample.conversations.length);
    expect(new Set(fresh.map((s) => s.traceId)).size).toBe(sample.conversations.length);
    for (const s of fresh) expect(s.attributes["turnscope.execution.id"]).toBe(second.json.id);
  });
});
