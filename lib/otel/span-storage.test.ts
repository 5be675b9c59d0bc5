/**
 * How a span is kept (issue 52): its `data` without what its columns hold, compressed on SQLite, and read
 * back whole — by the rebuild, the trace read and the API — whichever way an older row was kept.
 */
import { describe, expect, it } from "vitest";
import { dialect } from "@/db/dialect";
import { loadTraceSpans } from "@/db/repositories/otel";
import { rawRows, rawRun } from "@/db/store";
import { flushAssembly } from "@/lib/otel/ingest";
import { call } from "@/lib/testing/http/call";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as datasets from "@/app/api/datasets/route";
import { POST } from "@/app/api/otel/v1/traces/route";

const hex = (n: number, len: number) => n.toString(16).padStart(len, "0");
const attrs = (o: Record<string, string>) => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: v } }));
let seq = 0;

/** One export of one chat span; returns its trace id. */
async function send(service: string, key: string, answer: string, name = "chat m"): Promise<string> {
  const start = BigInt(1_780_000_000_000_000_000) + BigInt(++seq) * BigInt(1_000_000);
  const traceId = hex(++seq + 0x7700, 32);
  const span = {
    traceId,
    spanId: hex(++seq + 0x7700, 16),
    name,
    kind: 1,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(5_000_000)).toString(),
    attributes: attrs({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "m",
      "gen_ai.conversation.id": key,
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `Question of ${key}: ${"why ".repeat(40)}` }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: answer }], finish_reason: "stop" }]),
    }),
    status: {},
  };
  const body = { resourceSpans: [{ resource: { attributes: attrs({ "service.name": service }) }, scopeSpans: [{ scope: { name: "test" }, spans: [span] }] }] };
  const res = await POST(new Request("http://localhost/api/otel/v1/traces", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), {
    params: Promise.resolve({}),
  });
  expect(res.status).toBe(200);
  return traceId;
}

async function transcript(service: string): Promise<string[]> {
  await flushAssembly();
  const list = await call(datasets.GET, "GET", "/api/datasets?limit=500");
  const id = (list.json as Array<{ id: number; name: string }>).find((d) => d.name === service)!.id;
  const rows = (await call(conversations.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } })).json as Array<{ id: number }>;
  expect(rows).toHaveLength(1);
  const full = (await call(conversation.GET, "GET", `/api/conversations/${rows[0].id}`, { params: { id: rows[0].id } })).json as { messages: Array<{ content: string }> };
  return full.messages.map((m) => m.content);
}

const rowOf = async (traceId: string) =>
  (await rawRows<{ dataset_id: number; name: string; data: unknown }>("select dataset_id, name, data from otel_spans where trace_id = ?", [traceId]))[0];

describe("how spans are kept", () => {
  it("keeps a span's data without its columns' fields, compressed on SQLite, and reads it back whole", async () => {
    const traceId = await send("storage-a", "conv-a", "Because of the tides.");
    const row = await rowOf(traceId);
    if (dialect.name === "sqlite") {
      expect(row.data).toBeInstanceOf(Uint8Array);
    } else {
      expect(typeof row.data === "string" ? row.data : JSON.stringify(row.data)).not.toContain(traceId);
    }
    const text = row.data instanceof Uint8Array ? (await import("node:zlib")).inflateRawSync(row.data).toString("utf8") : typeof row.data === "string" ? row.data : JSON.stringify(row.data);
    const kept = JSON.parse(text) as Record<string, unknown>;
    expect(kept).not.toHaveProperty("traceId");
    expect(kept).not.toHaveProperty("spanId");
    expect(kept).not.toHaveProperty("startNs");
    expect(kept).not.toHaveProperty("name");
    if (dialect.name === "sqlite") expect((row.data as Uint8Array).length).toBeLessThan(text.length);

    const [span] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    expect(span).toMatchObject({ traceId, name: "chat m", startNs: expect.stringMatching(/^\d{19}$/) });
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(await transcript("storage-a")).toEqual([`Question of conv-a: ${"why ".repeat(40)}`, "Because of the tides."]);
  });

  it("keeps a name longer than its column in the data, so it reads back uncut", async () => {
    const long = `chat ${"m".repeat(1_200)}`;
    const traceId = await send("storage-b", "conv-b", "Long names stay.", long);
    const row = await rowOf(traceId);
    expect(row.name).toHaveLength(1_000);
    const [span] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    expect(span.name).toBe(long);
  });

  it("reads a span kept whole as JSON text, as stores before this kept them", async () => {
    const traceId = await send("storage-c", "conv-c", "First answer.");
    const row = await rowOf(traceId);
    const [whole] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    // Put the row back as an older store wrote it: every field, as JSON text.
    await rawRun("update otel_spans set data = ? where trace_id = ?", [JSON.stringify({ ...whole, name: "chat old" }), traceId]);
    const [again] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    expect(again).toEqual({ ...whole, name: "chat old" });
    await send("storage-c", "conv-c", "Second answer.");
    expect(await transcript("storage-c")).toEqual([`Question of conv-c: ${"why ".repeat(40)}`, "First answer.", `Question of conv-c: ${"why ".repeat(40)}`, "Second answer."]);
  });
});
