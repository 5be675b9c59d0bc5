import { describe, expect, it } from "vitest";
import { countTable } from "@/lib/testing/seed";
import { rawRows } from "../store";
import { createDataset } from "./datasets";
import { insertConversationsBulk, type BulkConversation } from "./imports";

async function counts() {
  return { datasets: await countTable("datasets"), conversations: await countTable("conversations"), messages: await countTable("messages"), steps: await countTable("steps") };
}

const conversation = (meta: unknown = { k: 1 }): BulkConversation => ({
  name: "c",
  description: null,
  meta,
  agents: null,
  messages: [
    { role: "user", content: "hi", meta: null, steps: [] },
    {
      role: "assistant",
      content: "hello",
      meta: null,
      steps: [{ thinking: "t", toolCall: null, toolResult: null, outputContent: null, outputStructured: null, modelName: null, agentName: null }],
    },
  ],
});

describe("insertConversationsBulk", () => {
  it("rolls back everything, dataset included, when a row fails half-way through", async () => {
    const before = await counts();
    // A BigInt cannot be serialised: the second conversation throws after the first was inserted.
    await expect(
      insertConversationsBulk({ create: { name: "half", description: null, userId: "u" } }, [conversation(), conversation({ n: 1n })]),
    ).rejects.toThrow();
    expect(await counts()).toEqual(before);
  });

  it("inserts nothing into a dataset that does not exist", async () => {
    const before = await counts();
    expect(await insertConversationsBulk({ datasetId: 987654 }, [conversation()])).toEqual({ ok: false, reason: "dataset_not_found" });
    expect(await counts()).toEqual(before);
  });

  it("returns the counts it wrote and stores JSON exactly", async () => {
    const dataset = await createDataset({ name: "bulk", userId: "u" });
    const meta = { nested: { a: [1, "2", null] }, "weird key": true };
    const result = await insertConversationsBulk({ datasetId: dataset.id }, [conversation(meta), conversation()]);
    expect(result).toEqual({ ok: true, datasetId: dataset.id, created: false, conversations: 2, messages: 4, steps: 2, at: expect.any(String) });
    const row = await rawRows<{ meta: string; position: number }>("select meta, position from conversations where dataset_id = ? order by position", [dataset.id]);
    expect(row.map((r) => r.position)).toEqual([0, 1]);
    expect(JSON.parse(row[0].meta)).toEqual(meta);
  });
});
