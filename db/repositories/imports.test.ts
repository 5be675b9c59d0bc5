import { describe, expect, it } from "vitest";
import { countTable } from "@/lib/testing/seed/rows";
import { rawRows } from "../store";
import { createDataset } from "./datasets";
import type { Conversation } from "@/lib/conversation";
import { insertConversationsBulk } from "./imports";

async function counts() {
  return { datasets: await countTable("datasets"), conversations: await countTable("conversations"), messages: await countTable("messages"), steps: await countTable("steps") };
}

const conversation = (meta: unknown = { k: 1 }): Conversation => ({
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

  it("links every message and step to its own conversation across statements of 1,000, 100, 10 and 1 rows", async () => {
    // 1,111 conversations (1,000 + 100 + 10 + 1 rows on PostgreSQL), each named after its index, with
    // messages and steps whose text names it too: a row paired with another row's id would show.
    const many: Conversation[] = Array.from({ length: 1111 }, (_, i) => ({
      name: `c${i}`,
      description: null,
      meta: { i },
      agents: null,
      messages: [
        { role: "user", content: `u${i}`, meta: null, steps: [] },
        {
          role: "assistant",
          content: `a${i}`,
          meta: { i },
          steps: [{ thinking: `t${i}`, toolCall: { name: `f${i}` }, toolResult: null, outputContent: null, outputStructured: null, modelName: null, agentName: null }],
        },
      ],
    }));
    const result = await insertConversationsBulk({ create: { name: "many", description: null, userId: "u" } }, many);
    if (!result.ok) throw new Error("insert failed");
    expect(result).toMatchObject({ conversations: 1111, messages: 2222, steps: 1111 });
    const rows = await rawRows<{ name: string; position: number; content: string; mpos: number; thinking: string | null }>(
      `select c.name, c.position, m.content, m.position as mpos, s.thinking from conversations c
         join messages m on m.conversation_id = c.id left join steps s on s.message_id = m.id and s.conversation_id = c.id
       where c.dataset_id = ? order by c.position, m.position`,
      [result.datasetId],
    );
    expect(rows).toHaveLength(2222);
    rows.forEach((r, k) => {
      const i = Math.floor(k / 2);
      expect([r.name, Number(r.position), Number(r.mpos)]).toEqual([`c${i}`, i, k % 2]);
      expect([r.content, r.thinking]).toEqual(k % 2 ? [`a${i}`, `t${i}`] : [`u${i}`, null]);
    });
  });
});
