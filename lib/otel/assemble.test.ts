/** Spans → conversation, as units: the conventions read, history kept once, arrival order irrelevant. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleConversation, ConversationAssembly } from "./assemble";
import { decodeJsonExport, decodeProtobufExport, encodeProtobufExport } from "./decode";
import { conversationKeyOf, datasetNameOf } from "./grouping";
import type { Attributes, OtelEvent, OtelSpan } from "./types";

let n = 0;
function span(start: number, attributes: Attributes, extra: Partial<OtelSpan> = {}): OtelSpan {
  n++;
  const ns = (BigInt("1780000000000000000") + BigInt(start) * BigInt(1_000_000)).toString();
  const end = (BigInt(ns) + BigInt(2_000_000)).toString();
  return {
    traceId: "a".repeat(32),
    spanId: n.toString(16).padStart(16, "0"),
    parentSpanId: null,
    name: "span",
    kind: 1,
    startNs: ns,
    endNs: end,
    attributes,
    events: [],
    status: { code: 0 },
    resource: { "service.name": "svc" },
    scope: { name: "t" },
    ...extra,
  };
}
const ev = (name: string, attributes: Attributes): OtelEvent => ({ name, timeNs: "1780000000000000000", attributes });
const shape = (c: ReturnType<typeof assembleConversation>) =>
  c.messages.map((m) => ({ role: m.role, content: m.content, steps: m.steps.map((s) => ({ thinking: s.thinking, toolCall: s.toolCall, toolResult: s.toolResult, output: s.outputContent })) }));

describe("grouping", () => {
  it("names the conversation by gen_ai.conversation.id, else session.id, else the AI SDK's sessionId", () => {
    expect(conversationKeyOf({ attributes: { "gen_ai.conversation.id": "g", "session.id": "s", "ai.telemetry.metadata.sessionId": "a" } })).toBe("g");
    expect(conversationKeyOf({ attributes: { "session.id": "s", "ai.telemetry.metadata.sessionId": "a" } })).toBe("s");
    expect(conversationKeyOf({ attributes: { "ai.telemetry.metadata.sessionId": "a" } })).toBe("a");
    expect(conversationKeyOf({ attributes: { "gen_ai.conversation.id": " " } })).toBeUndefined();
    expect(datasetNameOf({ "turnscope.dataset": "D", "service.name": "S" })).toBe("D");
    expect(datasetNameOf({ "service.name": "S" })).toBe("S");
    expect(datasetNameOf({})).toBe("OpenTelemetry");
  });
});

describe("assembleConversation", () => {
  it("reads the older per-message events and gen_ai.choice", () => {
    const first = span(0, { "gen_ai.request.model": "old-model" }, {
      events: [
        ev("gen_ai.system.message", { content: "Be kind." }),
        ev("gen_ai.user.message", { content: "What is 2+2?" }),
        ev("gen_ai.choice", { index: 0, finish_reason: "tool_calls", message: JSON.stringify({ role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "calc", arguments: '{"expr":"2+2"}' } }] }) }),
      ],
    });
    const second = span(10, { "gen_ai.request.model": "old-model" }, {
      events: [
        ev("gen_ai.system.message", { content: "Be kind." }),
        ev("gen_ai.user.message", { content: "What is 2+2?" }),
        ev("gen_ai.assistant.message", { tool_calls: JSON.stringify([{ id: "c1", type: "function", function: { name: "calc", arguments: '{"expr":"2+2"}' } }]) }),
        ev("gen_ai.tool.message", { content: "4", id: "c1" }),
        ev("gen_ai.choice", { index: 0, finish_reason: "stop", message: JSON.stringify({ role: "assistant", content: "It is 4." }) }),
      ],
    });
    expect(shape(assembleConversation("k", [first, second]))).toEqual([
      { role: "system", content: "Be kind.", steps: [] },
      { role: "user", content: "What is 2+2?", steps: [] },
      {
        role: "assistant",
        content: "It is 4.",
        steps: [
          { thinking: null, toolCall: { id: "c1", name: "calc", arguments: { expr: "2+2" } }, toolResult: null, output: null },
          // As the file import reads a tool message's text: JSON objects and arrays are parsed, other text stays text.
          { thinking: null, toolCall: null, toolResult: "4", output: null },
          { thinking: null, toolCall: null, toolResult: null, output: "It is 4." },
        ],
      },
    ]);
  });

  it("reads structured (not JSON text) message attributes and `result` in tool_call_response", () => {
    const s = span(0, {
      "gen_ai.input.messages": [
        { role: "user", parts: [{ type: "text", content: "hi" }] },
        { role: "assistant", parts: [{ type: "tool_call", id: "t", name: "lookup", arguments: { q: "x" } }] },
        { role: "tool", parts: [{ type: "tool_call_response", id: "t", result: "found" }] },
      ],
      "gen_ai.output.messages": [{ role: "assistant", parts: [{ type: "text", content: "done" }], finish_reason: "stop" }],
    });
    const c = assembleConversation("k", [s]);
    expect(shape(c)[1].steps.map((x) => x.toolResult)).toEqual([null, "found", null]);
    expect(c.messages[1].meta).toMatchObject({ finish_reason: "stop", model_calls: 1 });
  });

  it("adds a tool result only an execute_tool span holds, when the run ended on the call", () => {
    const chat = span(0, {
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Delete file a.txt" }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", id: "d1", name: "rm", arguments: '{"path":"a.txt"}' }] }]),
    });
    const tool = span(5, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "rm", "gen_ai.tool.call.id": "d1", "gen_ai.tool.call.result": "ok" });
    expect(shape(assembleConversation("k", [chat, tool]))[1]).toEqual({
      role: "assistant",
      content: null,
      steps: [
        { thinking: null, toolCall: { id: "d1", name: "rm", arguments: { path: "a.txt" } }, toolResult: null, output: null },
        { thinking: null, toolCall: null, toolResult: "ok", output: null },
      ],
    });
  });

  it("appends turn by turn when each call carries only its newest message", () => {
    const turns = ["one", "two", "three"].map((t, i) =>
      span(i * 10, {
        "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: t }] }]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: `re: ${t}` }] }]),
      }),
    );
    expect(shape(assembleConversation("k", turns)).map((m) => m.content)).toEqual(["one", "re: one", "two", "re: two", "three", "re: three"]);
  });

  it("keeps the history once whatever order the spans arrive in", () => {
    const user = (t: string) => ({ role: "user", parts: [{ type: "text", content: t }] });
    const bot = (t: string) => ({ role: "assistant", parts: [{ type: "text", content: t }] });
    const history: unknown[] = [];
    const spans: OtelSpan[] = [];
    for (let i = 0; i < 6; i++) {
      history.push(user(`q${i}`));
      spans.push(span(i * 10, { "gen_ai.input.messages": JSON.stringify(history), "gen_ai.output.messages": JSON.stringify([bot(`a${i}`)]) }));
      history.push(bot(`a${i}`));
    }
    spans.push(span(3, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper" }));
    const expected = assembleConversation("k", spans);
    expect(expected.messages).toHaveLength(12);
    fc.assert(
      fc.property(fc.shuffledSubarray(spans, { minLength: spans.length, maxLength: spans.length }), (shuffled) => {
        expect(assembleConversation("k", shuffled)).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });
});

describe("ConversationAssembly (spans a few at a time)", () => {
  /** An agent session: per turn an invoke_agent span, a chat span calling a tool, the tool span, a chat span answering. */
  function session(turns: number): OtelSpan[][] {
    const history: unknown[] = [];
    const out: OtelSpan[][] = [];
    for (let t = 0; t < turns; t++) {
      const traceId = (t + 1).toString(16).padStart(32, "0");
      const agent = span(t * 100, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": t % 2 ? "planner" : "support", "gen_ai.agent.description": `agent ${t}` }, { traceId });
      history.push({ role: "user", parts: [{ type: "text", content: `q${t}` }] });
      const call = { role: "assistant", parts: [{ type: "tool_call", id: `c${t}`, name: "lookup", arguments: { t } }] };
      const result = { role: "tool", parts: [{ type: "tool_call_response", id: `c${t}`, response: { ok: t } }] };
      const answer = { role: "assistant", parts: [{ type: "reasoning", content: `think ${t}` }, { type: "text", content: `a${t}` }] };
      const child = (start: number, attributes: Attributes) => span(t * 100 + start, attributes, { traceId, parentSpanId: agent.spanId });
      const defs = JSON.stringify([{ type: "function", name: "lookup", description: "find", parameters: {} }]);
      const first = child(1, { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.tool.definitions": defs, "gen_ai.input.messages": JSON.stringify(history), "gen_ai.output.messages": JSON.stringify([call]) });
      const tool = child(2, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": `c${t}`, "gen_ai.tool.call.result": JSON.stringify({ ok: t }) });
      const second = child(3, { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.input.messages": JSON.stringify([...history, call, result]), "gen_ai.output.messages": JSON.stringify([answer]) });
      history.push(call, result, answer);
      // As a batch span processor sends them: children end (and are exported) before their agent span.
      out.push([first, tool, second, agent]);
    }
    return out;
  }

  /** Feed chunks one by one as the ingest does: start again from every span so far when a call goes before one merged. */
  function feed(chunks: OtelSpan[][]): { result: ReturnType<typeof assembleConversation>; restarts: number } {
    let assembly = new ConversationAssembly();
    const seen: OtelSpan[] = [];
    let restarts = 0;
    for (const chunk of chunks) {
      seen.push(...chunk);
      if (!assembly.add(chunk)) {
        restarts++;
        assembly = new ConversationAssembly();
        expect(assembly.add(seen)).toBe(true);
      }
      expect(assembly.result("k")).toEqual(assembleConversation("k", seen));
    }
    return { result: assembly.result("k"), restarts };
  }

  it("turn by turn, each span read once, equals the conversation assembled from all spans (agent spans arriving after their calls)", () => {
    const turns = session(4);
    const whole = assembleConversation("k", turns.flat());
    expect(whole.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(whole.messages[3].meta).toMatchObject({ agent: "planner", model: "m", model_calls: 2 });
    // The agent span of each turn comes in the next export, after the next turn's first calls.
    const chunks = turns.map((t, i) => [...t.slice(0, 3), ...(i > 0 ? [turns[i - 1][3]] : [])]);
    chunks.push([turns[3][3]]);
    const { result, restarts } = feed(chunks);
    expect(restarts).toBe(0);
    expect(result).toEqual(whole);
  });

  it("spans in any chunks and any order end as the conversation assembled from all of them", () => {
    const all = session(3).flat();
    const expected = assembleConversation("k", all);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: all.length, maxLength: all.length }),
        (order, sizes) => {
          const chunks: OtelSpan[][] = [];
          for (let at = 0, i = 0; at < order.length; at += sizes[i++]) chunks.push(order.slice(at, at + sizes[i]));
          expect(feed(chunks).result).toEqual(expected);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("decoding", () => {
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
        scopeSpans: [
          {
            scope: { name: "lib", version: "1.0" },
            spans: [
              {
                traceId: "0AF7651916CD43DD8448EB211C80319C",
                spanId: "B7AD6B7169203331",
                name: "chat",
                kind: 3,
                startTimeUnixNano: "1780000000123456789",
                endTimeUnixNano: "1780000000223456789",
                attributes: [
                  { key: "n", value: { intValue: "42" } },
                  { key: "big", value: { intValue: "9007199254740993" } },
                  { key: "f", value: { doubleValue: 0.5 } },
                  { key: "b", value: { boolValue: true } },
                  { key: "arr", value: { arrayValue: { values: [{ stringValue: "x" }, { intValue: "1" }] } } },
                  { key: "kv", value: { kvlistValue: { values: [{ key: "inner", value: { stringValue: "y" } }] } } },
                ],
                events: [{ timeUnixNano: "1780000000133456789", name: "gen_ai.user.message", attributes: [{ key: "content", value: { stringValue: "hi" } }] }],
                status: { code: 2, message: "boom" },
              },
            ],
          },
        ],
      },
    ],
  };

  it("reads OTLP JSON: hex ids, int64 as strings, enums as integers, nested values", () => {
    const { spans, rejected } = decodeJsonExport(JSON.stringify(request));
    expect(rejected).toBe(0);
    expect(spans[0]).toEqual({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      parentSpanId: null,
      name: "chat",
      kind: 3,
      startNs: "1780000000123456789",
      endNs: "1780000000223456789",
      attributes: { n: 42, big: "9007199254740993", f: 0.5, b: true, arr: ["x", 1], kv: { inner: "y" } },
      events: [{ name: "gen_ai.user.message", timeNs: "1780000000133456789", attributes: { content: "hi" } }],
      status: { code: 2, message: "boom" },
      resource: { "service.name": "svc" },
      scope: { name: "lib", version: "1.0" },
    });
  });

  it("reads the same request as protobuf to the same spans", () => {
    const asProto = JSON.parse(JSON.stringify(request)) as typeof request;
    const s = asProto.resourceSpans[0].scopeSpans[0].spans[0] as Record<string, unknown>;
    s.traceId = Buffer.from(request.resourceSpans[0].scopeSpans[0].spans[0].traceId, "hex");
    s.spanId = Buffer.from(request.resourceSpans[0].scopeSpans[0].spans[0].spanId, "hex");
    const pb = decodeProtobufExport(encodeProtobufExport(asProto));
    expect(pb).toEqual(decodeJsonExport(JSON.stringify(request)));
  });
});
