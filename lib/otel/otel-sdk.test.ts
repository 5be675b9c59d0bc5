/**
 * Real clients end to end: the OpenTelemetry JS SDK with its OTLP HTTP exporters (JSON and protobuf)
 * and the AI SDK's generateText with tools and experimental_telemetry against the judge double, all
 * exporting over HTTP to the served route; the conversation is read back through the conversations API.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRows } from "@/db/store";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { upload } from "@/lib/testing/http/multipart";
import { serveRoutes, type RouteServer } from "@/lib/testing/http/route-server";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as datasets from "@/app/api/datasets/route";
import * as importFile from "@/app/api/datasets/import/route";
import * as traces from "@/app/api/otel/v1/traces/route";
import { flushAssembly } from "./ingest";

let server: RouteServer;
let double: JudgeDouble;

beforeAll(async () => {
  server = await serveRoutes({ "/api/otel/v1/traces": traces.POST });
  double = await startJudgeDouble();
});
afterAll(async () => {
  await server.close();
  await double.close();
});

function provider(kind: "json" | "proto", resource: Record<string, string>) {
  const options = { url: `${server.baseURL}/api/otel/v1/traces` };
  const exporter: SpanExporter = kind === "json" ? new JsonExporter(options) : new ProtoExporter(options);
  return new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 4, scheduledDelayMillis: 10 })],
  });
}

async function datasetNamed(name: string): Promise<number> {
  const list = await call(datasets.GET, "GET", "/api/datasets?limit=500");
  const found = (list.json as Array<{ id: number; name: string }>).find((d) => d.name === name);
  if (!found) throw new Error(`no dataset ${name}`);
  return found.id;
}

async function conversationsOf(datasetId: number) {
  const list = await call(conversations.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  if (list.status !== 200) throw new Error(`conversations of dataset ${datasetId}: ${list.status} ${list.text}`);
  const out = [];
  for (const c of list.json as Array<{ id: number }>) {
    out.push((await call(conversation.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  }
  return out;
}

/** What a conversation says, without ids, positions or timestamps. */
type Shown = { role: string; content: string | null; steps: Array<Record<string, unknown>> };
function shown(c: { messages: Array<{ role: string; content: string | null; steps: Array<Record<string, unknown>> }> }, withNames = false): Shown[] {
  return c.messages.map((m) => ({
    role: m.role,
    content: m.content,
    steps: m.steps.map((s) => {
      const step: Record<string, unknown> = { thinking: s.thinking, tool_call: s.tool_call, tool_result: s.tool_result, output_content: s.output_content };
      if (withNames) Object.assign(step, { model_name: s.model_name, agent_name: s.agent_name });
      return step;
    }),
  }));
}

const counts = async () =>
  (await rawRows<{ s: number; m: number; st: number; c: number }>(
    "select (select count(*) from otel_spans) as s, (select count(*) from messages) as m, (select count(*) from steps) as st, (select count(*) from conversations) as c",
  ))[0];

describe("the OpenTelemetry SDK exporting GenAI spans", () => {
  for (const kind of ["json", "proto"] as const) {
    it(`${kind}: an agent's chat and tool spans become one conversation, message by message`, async () => {
      const tp = provider(kind, { "service.name": `svc-${kind}`, "service.version": "1.4.2", "deployment.environment.name": "staging" });
      const tracer = tp.getTracer("agent");
      const history: unknown[] = [{ role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }];
      {
        const agent = tracer.startSpan("invoke_agent weather", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_bot", "gen_ai.conversation.id": `c-${kind}` } });
        // No context manager is registered here: the agent span is the children's parent explicitly.
        const inAgent = trace.setSpan(ROOT_CONTEXT, agent);
        const chat1 = tracer.startSpan("chat gpt-x", {
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-x",
            "gen_ai.conversation.id": `c-${kind}`,
            "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Be brief." }]),
            "gen_ai.input.messages": JSON.stringify(history),
            "gen_ai.output.messages": JSON.stringify([
              { role: "assistant", parts: [{ type: "reasoning", content: "Need the weather tool." }, { type: "tool_call", id: "t1", name: "get_weather", arguments: { city: "Paris" } }], finish_reason: "tool_call" },
            ]),
            "gen_ai.usage.input_tokens": 20,
            "gen_ai.usage.output_tokens": 7,
          },
        }, inAgent);
        chat1.end();
        const toolSpan = tracer.startSpan("execute_tool get_weather", {
          attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "t1", "gen_ai.tool.call.arguments": '{"city":"Paris"}', "gen_ai.tool.call.result": '{"temp_c":21}' },
        }, inAgent);
        toolSpan.end();
        const chat2 = tracer.startSpan("chat gpt-x", {
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-x",
            "gen_ai.input.messages": JSON.stringify([
              ...history,
              { role: "assistant", parts: [{ type: "tool_call", id: "t1", name: "get_weather", arguments: { city: "Paris" } }] },
              { role: "tool", parts: [{ type: "tool_call_response", id: "t1", result: { temp_c: 21 } }] },
            ]),
            "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "21°C in Paris." }], finish_reason: "stop" }]),
            "gen_ai.usage.input_tokens": 40,
            "gen_ai.usage.output_tokens": 5,
          },
        }, inAgent);
        chat2.end();
        agent.end();
      }
      await tp.forceFlush();
      await tp.shutdown();
      expect(server.requests.filter((r) => r.path === "/api/otel/v1/traces").every((r) => r.status === 200)).toBe(true);
      await flushAssembly();

      const ds = await datasetNamed(`svc-${kind}`);
      const all = await conversationsOf(ds);
      expect(all).toHaveLength(1);
      const [conv] = all;
      expect(conv.name).toBe(`c-${kind}`);
      expect(conv.meta).toMatchObject({ source: "opentelemetry", service_name: `svc-${kind}`, service_version: "1.4.2", deployment_environment: "staging", span_count: 4 });
      expect(conv.agents).toEqual([{ name: "weather_bot" }]);
      expect(shown(conv, true)).toEqual([
        { role: "system", content: "Be brief.", steps: [] },
        { role: "user", content: "Weather in Paris?", steps: [] },
        {
          role: "assistant",
          content: "21°C in Paris.",
          steps: [
            { thinking: "Need the weather tool.", tool_call: null, tool_result: null, output_content: null, model_name: "gpt-x", agent_name: "weather_bot" },
            { thinking: null, tool_call: { id: "t1", name: "get_weather", arguments: { city: "Paris" } }, tool_result: null, output_content: null, model_name: "gpt-x", agent_name: "weather_bot" },
            { thinking: null, tool_call: null, tool_result: { temp_c: 21 }, output_content: null, model_name: null, agent_name: "weather_bot" },
            { thinking: null, tool_call: null, tool_result: null, output_content: "21°C in Paris.", model_name: "gpt-x", agent_name: "weather_bot" },
          ],
        },
      ]);
      expect(conv.messages[2].meta).toMatchObject({ model: "gpt-x", agent: "weather_bot", input_tokens: 60, output_tokens: 12, model_calls: 2 });
      expect(typeof conv.messages[2].meta.latency_ms).toBe("number");
    });
  }
});

/** A travel agent session through the AI SDK: two user turns, each with a tool call. */
async function travelSession(sessionId: string) {
  const tp = provider("proto", { "service.name": "travel-app", "turnscope.dataset": "live travel" });
  const tracer = tp.getTracer("ai");
  const model = createOpenAI({ baseURL: double.baseURL, apiKey: "test" }).chat("gpt-4o-mini");
  const tools = {
    search_flights: tool({
      description: "Search flights",
      inputSchema: jsonSchema<{ origin: string; destination: string }>({ type: "object", properties: { origin: { type: "string" }, destination: { type: "string" } }, required: ["origin", "destination"] }),
      execute: async ({ origin, destination }) => ({ flights: [{ id: "TP218", from: origin, to: destination, price_usd: 612 }] }),
    }),
    book_flight: tool({
      description: "Book a flight",
      inputSchema: jsonSchema<{ flight_id: string }>({ type: "object", properties: { flight_id: { type: "string" } }, required: ["flight_id"] }),
      execute: async ({ flight_id }) => ({ status: "confirmed", flight_id, confirmation: "K7Q2LM" }),
    }),
  };
  const telemetry = { isEnabled: true, tracer, functionId: "travel_agent", metadata: { sessionId } };
  const system = "You are a travel assistant.";
  double.enqueue(
    { kind: "tool_calls", calls: [{ id: "call_search", name: "search_flights", arguments: { origin: "BOS", destination: "LIS" } }] },
    { kind: "text", content: "TP218 for $612. Book it?" },
    { kind: "tool_calls", calls: [{ id: "call_book", name: "book_flight", arguments: { flight_id: "TP218" } }] },
    { kind: "text", content: "Booked: K7Q2LM." },
  );
  const messages: ModelMessage[] = [{ role: "user", content: "Flight from Boston to Lisbon please." }];
  const first = await generateText({ model, system, messages, tools, stopWhen: stepCountIs(5), experimental_telemetry: telemetry });
  messages.push(...first.response.messages, { role: "user", content: "Yes, book it." });
  const second = await generateText({ model, system, messages, tools, stopWhen: stepCountIs(5), experimental_telemetry: telemetry });
  messages.push(...second.response.messages);
  await tp.forceFlush();
  await tp.shutdown();
  return { system, messages };
}

describe("the AI SDK's generateText with tools and experimental_telemetry", () => {
  it("rebuilds the session message by message, equal to the same conversation imported as a file; replaying every export changes nothing", async () => {
    const before = server.requests.length;
    const { system, messages } = await travelSession("sess-travel");
    const exports = server.requests.slice(before);
    expect(exports.length).toBeGreaterThan(1);
    expect(exports.every((r) => r.status === 200 && r.headers["content-type"] === "application/x-protobuf")).toBe(true);
    await flushAssembly();

    const ds = await datasetNamed("live travel");
    const lives = await conversationsOf(ds);
    expect(lives).toHaveLength(1);
    const [live] = lives;
    expect(live.name).toBe("sess-travel");
    expect(live.meta).toMatchObject({ service_name: "travel-app", conversation_key: "sess-travel" });
    expect(shown(live, true)).toEqual([
      { role: "system", content: system, steps: [] },
      { role: "user", content: "Flight from Boston to Lisbon please.", steps: [] },
      {
        role: "assistant",
        content: "TP218 for $612. Book it?",
        steps: [
          { thinking: null, tool_call: { id: "call_search", name: "search_flights", arguments: { origin: "BOS", destination: "LIS" } }, tool_result: null, output_content: null, model_name: "gpt-4o-mini", agent_name: "travel_agent" },
          { thinking: null, tool_call: null, tool_result: { flights: [{ id: "TP218", from: "BOS", to: "LIS", price_usd: 612 }] }, output_content: null, model_name: null, agent_name: "travel_agent" },
          { thinking: null, tool_call: null, tool_result: null, output_content: "TP218 for $612. Book it?", model_name: "gpt-4o-mini", agent_name: "travel_agent" },
        ],
      },
      { role: "user", content: "Yes, book it.", steps: [] },
      {
        role: "assistant",
        content: "Booked: K7Q2LM.",
        steps: [
          { thinking: null, tool_call: { id: "call_book", name: "book_flight", arguments: { flight_id: "TP218" } }, tool_result: null, output_content: null, model_name: "gpt-4o-mini", agent_name: "travel_agent" },
          { thinking: null, tool_call: null, tool_result: { status: "confirmed", flight_id: "TP218", confirmation: "K7Q2LM" }, output_content: null, model_name: null, agent_name: "travel_agent" },
          { thinking: null, tool_call: null, tool_result: null, output_content: "Booked: K7Q2LM.", model_name: "gpt-4o-mini", agent_name: "travel_agent" },
        ],
      },
    ]);
    expect(live.messages[2].meta).toMatchObject({ model: "gpt-4o-mini", agent: "travel_agent", model_calls: 2 });
    expect(live.messages[2].meta.input_tokens).toBeGreaterThan(0);
    expect(live.agents).toEqual([expect.objectContaining({ name: "travel_agent", tools: expect.objectContaining({ search_flights: expect.objectContaining({ name: "search_flights" }) }) })]);

    // The same session as an OpenAI chat export file, imported: the same messages and steps.
    const chat = [
      { role: "system", content: system },
      ...messages.map((m) => {
        if (m.role === "user") return { role: "user", content: m.content };
        if (m.role === "assistant" && typeof m.content !== "string") {
          const calls = m.content.filter((p) => p.type === "tool-call");
          const text = m.content.filter((p) => p.type === "text").map((p) => p.text).join("");
          return { role: "assistant", content: text || null, ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.toolCallId, type: "function", function: { name: c.toolName, arguments: JSON.stringify(c.input) } })) } : {}) };
        }
        if (m.role === "tool") {
          const r = m.content[0];
          return { role: "tool", tool_call_id: r.type === "tool-result" ? r.toolCallId : "", content: JSON.stringify(r.type === "tool-result" && r.output.type === "json" ? r.output.value : null) };
        }
        return m;
      }),
    ];
    const imported = await upload(importFile.POST, "/api/datasets/import", { file: JSON.stringify([{ messages: chat }]), fields: { name: "as a file" } });
    expect(imported.status).toBe(201);
    const [fromFile] = await conversationsOf(imported.json.dataset_id);
    expect(shown(live)).toEqual(shown(fromFile));

    // Every export again, twice: nothing changes.
    const snapshot = await counts();
    const state = await rawRows<{ revision: number }>("select revision from otel_conversations order by id");
    for (let round = 0; round < 2; round++) {
      for (const r of exports) {
        const res = await fetch(`${server.baseURL}${r.path}`, { method: "POST", headers: { "content-type": r.headers["content-type"] }, body: new Uint8Array(r.body) });
        expect(res.status).toBe(200);
      }
    }
    await flushAssembly();
    expect(await counts()).toEqual(snapshot);
    expect(await rawRows<{ revision: number }>("select revision from otel_conversations order by id")).toEqual(state);
    const [again] = await conversationsOf(ds);
    expect(again).toEqual(live);
  });
});
