/**
 * How a span is kept (issue 52): its `data` without what its columns hold, compressed on SQLite when
 * OTEL_SPAN_COMPRESSION is on, and read back whole — by the rebuild, the trace read and the API — whichever
 * way a row was kept.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dialect } from "@/db/dialect";
import { loadTraceSpans } from "@/db/repositories/otel";
import { rawRows, rawRun } from "@/db/store";
import { resetConfig } from "@/lib/config";
import { flushAssembly } from "@/lib/otel/ingest";
import { call } from "@/lib/testing/http/call";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as datasets from "@/app/api/datasets/route";
import { sendChatSpan } from "@/lib/testing/seed/otel-chat";

const question = (key: string) => `Question of ${key}: ${"why ".repeat(40)}`;
const send = (service: string, key: string, answer: string, name?: string) => sendChatSpan({ service, key, answer, name, question: question(key) });

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

afterEach(() => {
  delete process.env.OTEL_SPAN_COMPRESSION;
  resetConfig();
});

describe("how spans are kept", () => {
  it("keeps a span's data as JSON without its columns' fields by default", async () => {
    const traceId = await send("storage-plain", "conv-p", "Plainly kept.");
    const row = await rowOf(traceId);
    expect(row.data).not.toBeInstanceOf(Uint8Array);
    const kept = (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Record<string, unknown>;
    expect(kept).not.toHaveProperty("traceId");
    expect(kept).toHaveProperty("attributes");
    const [span] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    expect(span).toMatchObject({ traceId, name: "chat m" });
    expect(await transcript("storage-plain")).toEqual([question("conv-p"), "Plainly kept."]);
  });

  it("with OTEL_SPAN_COMPRESSION=on keeps it compressed on SQLite (as JSON on PostgreSQL), and reads it back whole", async () => {
    process.env.OTEL_SPAN_COMPRESSION = "on";
    resetConfig();
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
    expect(await transcript("storage-a")).toEqual([question("conv-a"), "Because of the tides."]);
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
    process.env.OTEL_SPAN_COMPRESSION = "on";
    resetConfig();
    const traceId = await send("storage-c", "conv-c", "First answer.");
    const row = await rowOf(traceId);
    const [whole] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    // Put the row back as an older store wrote it: every field, as JSON text.
    await rawRun("update otel_spans set data = ? where trace_id = ?", [JSON.stringify({ ...whole, name: "chat old" }), traceId]);
    const [again] = (await loadTraceSpans(row.dataset_id, traceId)) as Array<Record<string, unknown>>;
    expect(again).toEqual({ ...whole, name: "chat old" });
    await send("storage-c", "conv-c", "Second answer.");
    expect(await transcript("storage-c")).toEqual([question("conv-c"), "First answer.", question("conv-c"), "Second answer."]);
  });
});

describe("OTEL_SPAN_COMPRESSION", () => {
  it("is refused at start unless on or off, naming the setting", async () => {
    process.env.OTEL_SPAN_COMPRESSION = "yes";
    resetConfig();
    const { getConfig } = await import("@/lib/config");
    expect(() => getConfig()).toThrow(/OTEL_SPAN_COMPRESSION/);
  });
});
