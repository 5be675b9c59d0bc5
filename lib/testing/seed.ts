/** Test-only helpers that put rows straight into the database, before the import pipeline exists. */
import { eq, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { conversationsTable, messagesTable, stepsTable } from "@/db/schema";

/** One conversation (user, assistant with a tool call and an output step, user) in a dataset. */
export function insertConversationFixture(datasetId: number, opts: { position?: number; name?: string } = {}) {
  const db = getDb();
  return db.transaction((tx) => {
    const conv = tx
      .insert(conversationsTable)
      .values({
        datasetId,
        position: opts.position ?? 0,
        name: opts.name ?? "fixture",
        meta: { channel: "web", n: [1, 2] },
        agents: [{ name: "agent", tools: { lookup: { parameters: { q: "string" } } } }],
      })
      .returning()
      .get();
    const msg = (position: number, role: "user" | "assistant", content: string, meta?: unknown) =>
      tx.insert(messagesTable).values({ conversationId: conv.id, datasetId, position, role, content, meta }).returning().get();
    msg(0, "user", "find x");
    const assistant = msg(1, "assistant", "found x", { latency_ms: 12, nested: { ok: true } });
    msg(2, "user", "thanks");
    tx.insert(stepsTable)
      .values([
        { messageId: assistant.id, conversationId: conv.id, datasetId, position: 0, toolCall: { name: "lookup", arguments: { q: "x" } } },
        { messageId: assistant.id, conversationId: conv.id, datasetId, position: 1, outputContent: "done", agentName: "agent" },
      ])
      .run();
    return {
      conversationId: conv.id,
      assistantMessageId: assistant.id,
      /** Rows left for this dataset, to prove cascades. */
      countRows: () => ({
        conversations: countWhere(conversationsTable, conversationsTable.datasetId, datasetId),
        messages: countWhere(messagesTable, messagesTable.datasetId, datasetId),
        steps: countWhere(stepsTable, stepsTable.datasetId, datasetId),
      }),
    };
  });
}

function countWhere(table: SQLiteTable, column: SQLiteColumn, value: number): number {
  return getDb().select({ n: sql<number>`count(*)` }).from(table).where(eq(column, value)).get()?.n ?? 0;
}
