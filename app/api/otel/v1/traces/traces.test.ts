/** POST /api/otel/v1/traces through its route handler: encodings, bad bodies, partial success, retries, late spans. */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { rawRows } from "@/db/store";
import { resetConfig } from "@/lib/config";
import { decodeProtobufResponse, encodeProtobufExport } from "@/lib/otel/decode";
import { drainInbox } from "@/lib/otel/inbox";
import { flushAssembly } from "@/lib/otel/ingest";
import { call } from "@/lib/testing/http/call";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as datasets from "@/app/api/datasets/route";
import { POST } from "./route";

const URL_ = "http://localhost/api/otel/v1/traces";

/** Post an export; then (unless `answerOnly`) wait until the trace inbox has stored its spans (lib/otel/inbox.ts). */
async function post(body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }, opts: { answerOnly?: boolean } = {}) {
  const req = new Request(URL_, { method: "POST", headers, body: typeof body === "string" ? body : new Uint8Array(body) });
  const res = await POST(req, { params: Promise.resolve({}) });
  if (!opts.answerOnly) await drainInbox();
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers.get("content-type"), bytes, json: json as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

let seq = 0;
const hex = (n: number, len: number) => n.toString(16).padStart(len, "0");
const newTrace = () => hex(++seq + 0x1000, 32);
const newSpanId = () => hex(++seq + 0x1000, 16);
const str = (v: string) => ({ stringValue: v });
const attrs = (o: Record<string, string | number>) =>
  Object.entries(o).map(([key, v]) => ({ key, value: typeof v === "number" ? { intValue: String(v) } : str(v) }));

type SpanSpec = { traceId: string; spanId?: string; name: string; start: number; attributes: Record<string, string | number>; parentSpanId?: string };
const base = BigInt("1780000000000000000");
function span(s: SpanSpec) {
  const start = base + BigInt(s.start) * BigInt(1_000_000);
  return {
    traceId: s.traceId,
    spanId: s.spanId ?? newSpanId(),
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: 1,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(5_000_000)).toString(),
    attributes: attrs(s.attributes),
    status: {},
  };
}
const request = (service: string, spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: attrs({ "service.name": service }) }, scopeSpans: [{ scope: { name: "test" }, spans }] }],
});

async function datasetNamed(name: string): Promise<number | undefined> {
  const list = await call(datasets.GET, "GET", "/api/datasets?limit=500");
  return (list.json as Array<{ id: number; name: string }>).find((d) => d.name === name)?.id;
}
async function conversationsOf(name: string) {
  const id = await datasetNamed(name);
  if (id === undefined) return [];
  const list = await call(conversations.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
  const out = [];
  for (const c of list.json as Array<{ id: number }>) out.push((await call(conversation.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  return out;
}

/** A three-call conversation in GenAI form: chat (tool call), execute_tool, chat (answer). */
function agentSpans(traceId: string, conversationId: string) {
  const user = { role: "user", parts: [{ type: "text", content: "Convert 10 USD to EUR" }] };
  const call1 = { role: "assistant", parts: [{ type: "tool_call", id: "x1", name: "fx", arguments: { amount: 10, from: "USD", to: "EUR" } }] };
  return [
    span({ traceId, name: "chat m", start: 0, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.conversation.id": conversationId, "gen_ai.input.messages": JSON.stringify([user]), "gen_ai.output.messages": JSON.stringify([call1]) } }),
    span({ traceId, name: "execute_tool fx", start: 10, attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fx", "gen_ai.tool.call.id": "x1", "gen_ai.tool.call.result": '{"eur":9.2}' } }),
    span({
      traceId,
      name: "chat m",
      start: 20,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.conversation.id": conversationId,
        "gen_ai.input.messages": JSON.stringify([user, call1, { role: "tool", parts: [{ type: "tool_call_response", id: "x1", response: { eur: 9.2 } }] }]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "That is 9.20 EUR." }], finish_reason: "stop" }]),
      },
    }),
  ];
}

afterEach(() => {
  delete process.env.OTEL_MAX_BODY_BYTES;
  delete process.env.API_TOKEN;
  delete process.env.OTEL_ASSEMBLY_CACHE_SPANS;
  resetConfig();
});

describe("POST /api/otel/v1/traces: what it accepts", () => {
  it("answers 415 to other content types and encodings, 400 to unreadable bodies, never storing anything", async () => {
    const before = (await rawRows<{ n: number }>("select count(*) as n from otel_spans"))[0].n;
    expect((await post("{}", { "content-type": "text/plain" })).status).toBe(415);
    expect((await post("{}", {})).status).toBe(415);
    expect((await post("{}", { "content-type": "application/json", "content-encoding": "br" })).status).toBe(415);
    const badJson = await post("{not json", { "content-type": "application/json" });
    expect(badJson.status).toBe(400);
    expect(badJson.json.error.code).toBe("bad_request");
    expect((await post("[1,2]", { "content-type": "application/json" })).status).toBe(400);
    expect((await post('{"resourceSpans": 5}', { "content-type": "application/json" })).status).toBe(400);
    expect((await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), { "content-type": "application/x-protobuf" })).status).toBe(400);
    expect((await post(new Uint8Array([1, 2, 3]), { "content-type": "application/json", "content-encoding": "gzip" })).status).toBe(400);
    expect((await post(new Uint8Array([0xc3, 0x28]), { "content-type": "application/json" })).status).toBe(400);
    expect((await rawRows<{ n: number }>("select count(*) as n from otel_spans"))[0].n).toBe(before);
  });

  it("answers 413 above OTEL_MAX_BODY_BYTES, as sent or after gunzip", async () => {
    process.env.OTEL_MAX_BODY_BYTES = "2000";
    resetConfig();
    const big = JSON.stringify(request("big", [span({ traceId: newTrace(), name: "x".repeat(3000), start: 0, attributes: {} })]));
    const res = await post(big);
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe("payload_too_large");
    expect(res.json.error.message).toContain("OTEL_MAX_BODY_BYTES");
    const bomb = gzipSync(Buffer.from(" ".repeat(100_000)));
    expect(bomb.length).toBeLessThan(2000);
    expect((await post(bomb, { "content-type": "application/json", "content-encoding": "gzip" })).status).toBe(413);
  });

  it("is locked by the API token like every other route", async () => {
    process.env.API_TOKEN = "s3cret";
    resetConfig();
    const body = JSON.stringify(request("locked", []));
    expect((await post(body)).status).toBe(401);
    expect((await post(body, { "content-type": "application/json", authorization: "Bearer s3cret" })).status).toBe(200);
  });

  it("takes gzip, answers {} in JSON, and the protobuf response encoded for protobuf requests", async () => {
    const body = JSON.stringify(request("gz", agentSpans(newTrace(), "gz-1")));
    const json = await post(gzipSync(Buffer.from(body)), { "content-type": "application/json", "content-encoding": "gzip" });
    expect(json.status).toBe(200);
    expect(json.type).toBe("application/json");
    expect(json.json).toEqual({});
    const pb = await post(encodeProtobufExport({ resourceSpans: [] }), { "content-type": "application/x-protobuf" });
    expect(pb.status).toBe(200);
    expect(pb.type).toBe("application/x-protobuf");
    expect(decodeProtobufResponse(pb.bytes)).toEqual({});
  });

  it("rejects spans without valid ids as a partial success, in the request's encoding, and keeps the rest", async () => {
    const good = span({ traceId: newTrace(), name: "plain", start: 0, attributes: {} });
    const bad = { ...span({ traceId: newTrace(), name: "bad", start: 0, attributes: {} }), traceId: "zz" };
    const res = await post(JSON.stringify(request("partial", [good, bad])));
    expect(res.status).toBe(200);
    expect(res.json.partialSuccess.rejectedSpans).toBe(1);
    expect(res.json.partialSuccess.errorMessage).toContain("traceId");
    expect((await rawRows<{ n: number }>("select count(*) as n from otel_spans where span_id = ?", [good.spanId]))[0].n).toBe(1);

    const pbBody = encodeProtobufExport({
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(3, 1), name: "short id" }] }] }],
    });
    const pb = await post(pbBody, { "content-type": "application/x-protobuf" });
    expect(pb.status).toBe(200);
    expect(decodeProtobufResponse(pb.bytes)).toMatchObject({ partialSuccess: { rejectedSpans: 1, errorMessage: expect.stringContaining("spanId") } });
  });

  it("never answers 5xx, whatever JSON arrives", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
        const wrapped = fc.sample(fc.constantFrom(value, { resourceSpans: [value] }, { resourceSpans: [{ scopeSpans: [{ spans: [value] }] }] }), 1)[0];
        const res = await post(JSON.stringify(wrapped));
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });
});

describe("POST /api/otel/v1/traces: spans into conversations", () => {
  it("spans sent out of order, in separate exports, give the same conversation as in order", async () => {
    const [c1, tool, c2] = agentSpans(newTrace(), "ooo-a");
    for (const s of [c2, tool, c1]) expect((await post(JSON.stringify(request("order-late", [s])))).status).toBe(200);
    const inOrder = agentSpans(newTrace(), "ooo-b");
    expect((await post(JSON.stringify(request("order-ok", inOrder)))).status).toBe(200);
    await flushAssembly();
    const [late] = await conversationsOf("order-late");
    const [ok] = await conversationsOf("order-ok");
    const strip = (c: { messages: Array<{ role: string; content: string; steps: Array<{ tool_call: unknown; tool_result: unknown; output_content: unknown }> }> }) =>
      c.messages.map((m) => ({ role: m.role, content: m.content, steps: m.steps.map((s) => [s.tool_call, s.tool_result, s.output_content]) }));
    expect(strip(late)).toEqual(strip(ok));
    expect(strip(ok)).toEqual([
      { role: "user", content: "Convert 10 USD to EUR", steps: [] },
      {
        role: "assistant",
        content: "That is 9.20 EUR.",
        steps: [
          [{ id: "x1", name: "fx", arguments: { amount: 10, from: "USD", to: "EUR" } }, null, null],
          [null, { eur: 9.2 }, null],
          [null, null, "That is 9.20 EUR."],
        ],
      },
    ]);
  });

  it("a conversation that grows keeps its earlier messages (and their ids) and adds the new turn", async () => {
    const traceId = newTrace();
    const spans = agentSpans(traceId, "grow-1");
    await post(JSON.stringify(request("grow", spans)));
    await flushAssembly();
    const [first] = await conversationsOf("grow");
    const before = (await rawRows<{ revision: number; assembled_revision: number; last_span_at: string }>("select revision, assembled_revision, last_span_at from otel_conversations where key = ?", ["grow-1"]))[0];
    expect(before.assembled_revision).toBe(before.revision);

    const history = JSON.parse(String((spans[2].attributes.find((a) => a.key === "gen_ai.input.messages")!.value as { stringValue: string }).stringValue));
    const turn2 = span({
      traceId: newTrace(),
      name: "chat m",
      start: 100,
      attributes: {
        "gen_ai.conversation.id": "grow-1",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": JSON.stringify([...history, { role: "assistant", parts: [{ type: "text", content: "That is 9.20 EUR." }] }, { role: "user", parts: [{ type: "text", content: "Thanks!" }] }]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "You're welcome." }] }]),
      },
    });
    await post(JSON.stringify(request("grow", [turn2])));
    const grown = (await rawRows<{ revision: number; assembled_revision: number }>("select revision, assembled_revision from otel_conversations where key = ?", ["grow-1"]))[0];
    expect(grown.revision).toBe(before.revision + 1);
    expect(grown.assembled_revision).toBe(before.revision);
    await flushAssembly();
    const [second] = await conversationsOf("grow");
    expect(second.id).toBe(first.id);
    expect(second.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "Convert 10 USD to EUR"],
      ["assistant", "That is 9.20 EUR."],
      ["user", "Thanks!"],
      ["assistant", "You're welcome."],
    ]);
    expect(second.messages.slice(0, 2).map((m: { id: number }) => m.id)).toEqual(first.messages.map((m: { id: number }) => m.id));
  });

  it("a trace first grouped by its own id moves to the conversation a later span names", async () => {
    const traceId = newTrace();
    const [c1, tool, c2] = agentSpans(traceId, "moved-1");
    const unnamed = (s: typeof c1) => ({ ...s, attributes: s.attributes.filter((a) => a.key !== "gen_ai.conversation.id") });
    await post(JSON.stringify(request("moving", [unnamed(c1)])));
    await flushAssembly();
    const early = await conversationsOf("moving");
    expect(early.map((c) => c.name)).toEqual([traceId]);
    await post(JSON.stringify(request("moving", [tool, c2])));
    await flushAssembly();
    const later = await conversationsOf("moving");
    expect(later.map((c) => c.name)).toEqual(["moved-1"]);
    expect(later[0].messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(later[0].messages[1].steps).toHaveLength(3);
    expect((await rawRows<{ n: number }>("select count(*) as n from otel_conversations where key = ?", [traceId]))[0].n).toBe(0);
    // The conversation counts the spans the trace brought with it, not only those of the export that moved it.
    expect((await rawRows<{ n: number }>("select span_count as n from otel_conversations where key = ?", ["moved-1"])).map((r) => Number(r.n))).toEqual([3]);
  });

  it("rebuilt pass after pass from the spans each export brought, a conversation equals the one rebuilt once from all of them", async () => {
    // Four turns of an agent; the first call of turn 3 arrives after turn 4 (a model call that goes
    // before one already read: the conversation is read whole again), each agent span an export late.
    const session = () => {
    const history: unknown[] = [];
    const exports: unknown[][] = [];
    let late: unknown;
    let lateCall: unknown;
    for (let t = 0; t < 4; t++) {
      const traceId = newTrace();
      const agent = span({ traceId, name: "invoke_agent", start: t * 100, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": `agent-${t % 2}`, "gen_ai.conversation.id": "passes" } });
      history.push({ role: "user", parts: [{ type: "text", content: `q${t}` }] });
      const toolCall = { role: "assistant", parts: [{ type: "tool_call", id: `p${t}`, name: "fx", arguments: { t } }] };
      const result = { role: "tool", parts: [{ type: "tool_call_response", id: `p${t}`, response: { ok: t } }] };
      const answer = { role: "assistant", parts: [{ type: "text", content: `a${t}` }] };
      const chat = (start: number, input: unknown[], output: unknown[]) =>
        span({ traceId, parentSpanId: agent.spanId, name: "chat m", start: t * 100 + start, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.conversation.id": "passes", "gen_ai.input.messages": JSON.stringify(input), "gen_ai.output.messages": JSON.stringify(output) } });
      const first = chat(1, [...history], [toolCall]);
      const tool = span({ traceId, parentSpanId: agent.spanId, name: "execute_tool fx", start: t * 100 + 2, attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fx", "gen_ai.tool.call.id": `p${t}`, "gen_ai.tool.call.result": JSON.stringify({ ok: t }) } });
      const second = chat(3, [...history, toolCall, result], [answer]);
      history.push(toolCall, result, answer);
      exports.push([...(t === 2 ? [] : [first]), tool, second, ...(late ? [late] : [])]);
      if (t === 2) lateCall = first;
      late = agent;
    }
    exports.push([late, lateCall]);
    return exports;
    };
    for (const spans of session()) {
      expect((await post(JSON.stringify(request("passes", spans)))).status).toBe(200);
      await flushAssembly();
    }
    process.env.OTEL_ASSEMBLY_CACHE_SPANS = "0";
    resetConfig();
    expect((await post(JSON.stringify(request("passes-once", session().flat())))).status).toBe(200);
    await flushAssembly();
    const [passes] = await conversationsOf("passes");
    const [once] = await conversationsOf("passes-once");
    // The two copies differ only in their ids and their dataset.
    const strip = (c: { meta: Record<string, unknown>; agents: unknown; messages: Array<{ role: string; content: string; meta: Record<string, unknown> | null; steps: unknown[] }> }) => ({
      meta: { ...c.meta, service_name: null, trace_ids: (c.meta.trace_ids as string[]).length },
      agents: c.agents,
      messages: c.messages.map((m) => ({
        role: m.role,
        content: m.content,
        meta: m.meta && { ...m.meta, trace_id: null, span_id: null },
        steps: m.steps.map((s) => ({ ...(s as object), id: null, message_id: null, conversation_id: null, created_at: null })),
      })),
    });
    expect(strip(passes)).toEqual(strip(once));
    expect(passes.messages.map((m: { content: string }) => m.content)).toEqual(["q0", "a0", "q1", "a1", "q2", "a2", "q3", "a3"]);
    expect(passes.messages.filter((m: { role: string }) => m.role === "assistant").map((m: { meta: { agent: string } }) => m.meta.agent)).toEqual(["agent-0", "agent-1", "agent-0", "agent-1"]);
  });

  it("the dataset is turnscope.dataset, else service.name, created once", async () => {
    const named = {
      resourceSpans: [{ resource: { attributes: attrs({ "service.name": "svc-x", "turnscope.dataset": "Support bot (prod)" }) }, scopeSpans: [{ spans: agentSpans(newTrace(), "ds-1") }] }],
    };
    await post(JSON.stringify(named));
    await post(JSON.stringify({ resourceSpans: [{ ...named.resourceSpans[0], scopeSpans: [{ spans: agentSpans(newTrace(), "ds-2") }] }] }));
    await flushAssembly();
    const list = await call(datasets.GET, "GET", "/api/datasets?limit=500");
    expect((list.json as Array<{ name: string }>).filter((d) => d.name === "Support bot (prod)")).toHaveLength(1);
    expect((list.json as Array<{ name: string }>).some((d) => d.name === "svc-x")).toBe(false);
    expect((await conversationsOf("Support bot (prod)")).map((c) => c.name).sort()).toEqual(["ds-1", "ds-2"]);
  });

  it("exports arriving at once, sharing conversations and traces, while conversations are rebuilt: every span counted once, nothing fails", async () => {
    // 24 conversations of three spans each; every export carries one span of each of 8 conversations, in an
    // order of its own, so exports count up the same conversations at once and one trace arrives in three.
    const convs = Array.from({ length: 24 }, (_, i) => ({ key: `burst-${i}`, spans: agentSpans(newTrace(), `burst-${i}`) }));
    const exports: unknown[][] = [];
    for (let e = 0; e < 9; e++) {
      const part = convs.filter((_, i) => i % 3 === e % 3).map((c) => c.spans[Math.floor(e / 3)]);
      exports.push(e % 2 ? part.reverse() : part);
    }
    // The dataset exists first: exports that create it take turns (one creates it, the others wait and find it).
    expect((await post(JSON.stringify(request("burst", agentSpans(newTrace(), "burst-first"))))).status).toBe(200);
    const answers = await Promise.all([...exports.map((spans) => post(JSON.stringify(request("burst", spans)))), flushAssembly(), flushAssembly()]);
    expect(answers.slice(0, exports.length).map((a) => (a as { status: number }).status)).toEqual(exports.map(() => 200));
    await flushAssembly();
    const stored = await conversationsOf("burst");
    expect(stored.map((c) => c.name).sort()).toEqual(["burst-first", ...convs.map((c) => c.key)].sort());
    for (const c of stored) {
      expect(c.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
      expect(c.messages[1].steps).toHaveLength(3);
    }
    const counts = await rawRows<{ key: string; span_count: number; revision: number; assembled_revision: number }>(
      "select c.key, c.span_count, c.revision, c.assembled_revision from otel_conversations c join datasets d on d.id = c.dataset_id where d.name = 'burst' and c.key <> 'burst-first' order by c.key",
    );
    // Only the named conversations are left (a trace grouped by its own id until its named span came moved there).
    expect(counts.map((r) => r.key)).toEqual(convs.map((c) => c.key).sort());
    expect(counts.map((r) => Number(r.span_count))).toEqual(convs.map(() => 3));
    expect(counts.filter((r) => Number(r.assembled_revision) !== Number(r.revision))).toEqual([]);
  });
});

describe("POST /api/otel/v1/traces: stored off the request loop (issue 50)", () => {
  // On SQLite an input-pool thread decodes the export and stores its spans with a connection of its own; the
  // server's writes meanwhile wait for it without holding the loop. Before, the spans were stored on the loop
  // in one transaction: 50,000 of them held every request for seconds.
  it.skipIf(Boolean(process.env.DATABASE_URL))("an export of 50,000 spans: stored, health reads within 1 s, the server's writes done meanwhile", async () => {
    process.env.OTEL_MAX_BODY_BYTES = String(64 * 1024 * 1024);
    resetConfig();
    const body = (() => {
      const spans = [];
      for (let c = 0; c < 5_000; c++) {
        const traceId = newTrace();
        for (let i = 0; i < 10; i++) {
          spans.push(span({ traceId, name: "chat m", start: i, attributes: { "gen_ai.operation.name": "chat", "gen_ai.conversation.id": `loop-${c}`, "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `turn ${i} of ${c}` }] }]) } }));
        }
      }
      return JSON.stringify(request("off-loop", spans));
    })();
    const { healthReadBoundMs, whileReadingHealth } = await import("@/lib/testing/http/health-reads");
    const written: number[] = [];
    const seen = await whileReadingHealth(async () => {
      // Answered once decoded; its spans are then stored from the trace inbox: reads and writes go on until they are.
      const answer = post(body, undefined, { answerOnly: true }).then(async (res) => (await drainInbox(), res));
      // A run in progress writes as the export is stored (here: datasets created one after another).
      let done = false;
      void answer.finally(() => (done = true));
      for (let i = 0; !done && i < 500; i++) {
        const res = await call(datasets.POST, "POST", "/api/datasets", { body: { name: `written meanwhile ${i}` } });
        written.push(res.status);
        await new Promise((r) => setTimeout(r, 20));
      }
      return answer;
    });
    expect(seen.result.status).toBe(200);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((s) => s === 201)).toBe(true);
    const stored = await rawRows<{ n: number }>("select count(*) as n from otel_spans s join datasets d on d.id = s.dataset_id where d.name = 'off-loop'");
    expect(Number(stored[0].n)).toBe(50_000);
    await flushAssembly();
    const conversations = await rawRows<{ n: number }>("select count(*) as n from otel_conversations c join datasets d on d.id = c.dataset_id where d.name = 'off-loop' and c.assembled_revision = c.revision");
    expect(Number(conversations[0].n)).toBe(5_000);
  }, 120_000);

  it.skipIf(Boolean(process.env.DATABASE_URL))("an export that arrives while another connection holds SQLite's writer waits for it off the loop", async () => {
    // Another connection (another process, an import's write thread) takes the write lock for 1.5 s.
    const { databaseFile } = await import("@/db/sqlite-database");
    const { holdSqliteWriter } = await import("@/lib/testing/setup/hold-sqlite-writer");
    const { released } = await holdSqliteWriter(databaseFile()!, { forMs: 1500 });
    const { healthReadBoundMs, whileReadingHealth } = await import("@/lib/testing/http/health-reads");
    const seen = await whileReadingHealth(() => post(JSON.stringify(request("behind-the-lock", agentSpans(newTrace(), "behind-1")))));
    await released;
    expect(seen.result.status).toBe(200);
    // Stored on a thread, which waited for the lock: the loop answered meanwhile. Before, the store waited
    // for it in SQLite's busy handler on the loop, 1.5 s without a request answered.
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
    await flushAssembly();
    expect((await conversationsOf("behind-the-lock")).map((c) => c.name)).toEqual(["behind-1"]);
  });
});
