/**
 * The trace store's retention (issue 52): a live conversation quiet for longer than its dataset's retention
 * loses its spans, traces and live record; the conversation built from them stays as it is; 0 keeps spans
 * for good; a span arriving later under the same key starts a new conversation.
 */
import { afterEach, describe, expect, it } from "vitest";
import { rawRows, rawRun } from "@/db/store";
import { getConfig, resetConfig } from "@/lib/config";
import { flushAssembly } from "@/lib/otel/ingest";
import { call } from "@/lib/testing/http/call";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as datasets from "@/app/api/datasets/route";
import { sendChatSpan } from "@/lib/testing/seed/otel-chat";
import { sweepExpiredSpans } from "./retention";

const DAY = 86_400_000;

/** One export: a chat span of conversation `key` in dataset (service) `service`, answering `answer`. */
async function send(service: string, key: string, answer: string) {
  await sendChatSpan({ service, key, answer });
}

async function datasetNamed(name: string): Promise<number> {
  const list = await call(datasets.GET, "GET", "/api/datasets?limit=500");
  return (list.json as Array<{ id: number; name: string }>).find((d) => d.name === name)!.id;
}

/** The dataset's conversations as the API shows them: each one's message contents. */
async function transcripts(name: string): Promise<string[][]> {
  const id = await datasetNamed(name);
  const list = await call(conversations.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
  const out: string[][] = [];
  for (const c of list.json as Array<{ id: number }>) {
    const full = (await call(conversation.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json as { messages: Array<{ content: string }> };
    out.push(full.messages.map((m) => m.content));
  }
  return out;
}

const stored = async (name: string) => {
  const id = await datasetNamed(name);
  const [row] = await rawRows<{ spans: number; live: number; traces: number }>(
    `select (select count(*) from otel_spans where dataset_id = ?) as spans, (select count(*) from otel_conversations where dataset_id = ?) as live,
      (select count(*) from otel_traces where dataset_id = ?) as traces`,
    [id, id, id],
  );
  return { spans: Number(row.spans), live: Number(row.live), traces: Number(row.traces) };
};

afterEach(() => {
  delete process.env.OTEL_RETENTION_DAYS;
  delete process.env.OTEL_RETENTION_DAYS_BY_DATASET;
  resetConfig();
});

describe("trace store retention", () => {
  it("deletes the spans of conversations quiet past the retention, keeps the conversations, and honours per-dataset days", async () => {
    process.env.OTEL_RETENTION_DAYS_BY_DATASET = JSON.stringify({ "retention keep": 0, "retention short": 2 });
    resetConfig();
    await send("retention default", "r-1", "First answer.");
    await send("retention default", "r-1", "Second answer.");
    await send("retention default", "r-2", "Another answer.");
    await send("retention keep", "k-1", "Kept answer.");
    await send("retention short", "s-1", "Short-lived answer.");
    await flushAssembly();
    const before = await transcripts("retention default");
    expect(before).toHaveLength(2);
    expect(await stored("retention default")).toEqual({ spans: 3, live: 2, traces: 3 });

    // Within every retention: nothing goes.
    expect(await sweepExpiredSpans(Date.now() + 1 * DAY)).toEqual({ conversations: 0, spans: 0 });
    // Past 2 days: the short dataset's only.
    expect(await sweepExpiredSpans(Date.now() + 3 * DAY)).toEqual({ conversations: 1, spans: 1 });
    expect(await stored("retention short")).toEqual({ spans: 0, live: 0, traces: 0 });
    expect(await transcripts("retention short")).toEqual([["Question of s-1", "Short-lived answer."]]);
    // Past the default 30 days: the default dataset's too; 0 keeps the other's for good.
    expect(await sweepExpiredSpans(Date.now() + 31 * DAY)).toEqual({ conversations: 2, spans: 3 });
    expect(await stored("retention default")).toEqual({ spans: 0, live: 0, traces: 0 });
    expect(await stored("retention keep")).toEqual({ spans: 1, live: 1, traces: 1 });
    expect(await sweepExpiredSpans(Date.now() + 3650 * DAY)).toEqual({ conversations: 0, spans: 0 });
    // The conversations built from the expired spans are as they were.
    expect(await transcripts("retention default")).toEqual(before);

    // A span under an expired key later: a new conversation; the old one unchanged.
    await send("retention default", "r-1", "Much later.");
    await flushAssembly();
    const after = await transcripts("retention default");
    expect(after).toHaveLength(3);
    expect(after.slice(0, 2)).toEqual(before);
    expect(after[2]).toEqual(["Question of r-1", "Much later."]);
  });

  it("never expires a conversation still waiting for its rebuild", async () => {
    await send("retention pending", "p-1", "Pending answer.");
    await flushAssembly();
    const id = await datasetNamed("retention pending");
    await rawRun("update otel_conversations set revision = revision + 1 where dataset_id = ?", [id]);
    // (Other tests' datasets in this database may expire meanwhile: read this one's rows.)
    await sweepExpiredSpans(Date.now() + 365 * DAY);
    expect(await stored("retention pending")).toEqual({ spans: 1, live: 1, traces: 1 });
    await rawRun("update otel_conversations set assembled_revision = revision where dataset_id = ?", [id]);
    await sweepExpiredSpans(Date.now() + 365 * DAY);
    expect(await stored("retention pending")).toEqual({ spans: 0, live: 0, traces: 0 });
  });

  it("refuses a retention setting it cannot read, naming it", () => {
    for (const [key, value] of [
      ["OTEL_RETENTION_DAYS", "-1"],
      ["OTEL_RETENTION_DAYS", "a week"],
      ["OTEL_RETENTION_DAYS_BY_DATASET", "{not json"],
      ["OTEL_RETENTION_DAYS_BY_DATASET", '{"a": -2}'],
      ["OTEL_RETENTION_DAYS_BY_DATASET", "[7]"],
    ]) {
      process.env[key] = value;
      resetConfig();
      expect(() => getConfig(), `${key}=${value}`).toThrow(key);
      delete process.env[key];
    }
    resetConfig();
    expect(getConfig().OTEL_RETENTION_DAYS).toBe(30);
  });
});
