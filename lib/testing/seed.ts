/** Test-only helpers that put rows straight into the database, before the import pipeline exists. */
import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { database, first, rawRows, rows, run, transaction } from "@/db/store";
import { conversationsTable, messagesTable, stepsTable } from "@/db/tables";

/** One conversation (user, assistant with a tool call and an output step, user) in a dataset. */
export async function insertConversationFixture(datasetId: number, opts: { position?: number; name?: string } = {}) {
  const ids = await transaction(function* (tx) {
    const [conv] = yield* rows(
      tx
        .insert(conversationsTable)
        .values({
          datasetId,
          position: opts.position ?? 0,
          name: opts.name ?? "fixture",
          meta: { channel: "web", n: [1, 2] },
          agents: [{ name: "agent", tools: { lookup: { parameters: { q: "string" } } } }],
        })
        .returning(),
    );
    const msg = (position: number, role: "user" | "assistant", content: string, meta?: unknown) =>
      rows(tx.insert(messagesTable).values({ conversationId: conv.id, datasetId, position, role, content, meta }).returning());
    yield* msg(0, "user", "find x");
    const [assistant] = yield* msg(1, "assistant", "found x", { latency_ms: 12, nested: { ok: true } });
    yield* msg(2, "user", "thanks");
    yield* run(
      tx.insert(stepsTable).values([
        { messageId: assistant.id, conversationId: conv.id, datasetId, position: 0, toolCall: { name: "lookup", arguments: { q: "x" } } },
        { messageId: assistant.id, conversationId: conv.id, datasetId, position: 1, outputContent: "done", agentName: "agent" },
      ]),
    );
    return { conversationId: conv.id, assistantMessageId: assistant.id };
  });
  return {
    ...ids,
    /** Rows left for this dataset, to prove cascades. */
    countRows: async () => ({
      conversations: await countWhere(conversationsTable, conversationsTable.datasetId, datasetId),
      messages: await countWhere(messagesTable, messagesTable.datasetId, datasetId),
      steps: await countWhere(stepsTable, stepsTable.datasetId, datasetId),
    }),
  };
}

async function countWhere(table: SQLiteTable, column: SQLiteColumn, value: number): Promise<number> {
  const db = await database();
  return first(await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(table).where(eq(column, value)))?.n ?? 0;
}

/** Rows in a table now, on either store (tests checking that a refused request wrote nothing). */
export async function countTable(table: string): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  return Number((await rawRows<{ n: number }>(`select count(*) as n from ${table}`))[0].n);
}

/** Run `fn` over the items one after the other (an async forEach that waits for each). */
export async function inOrder<T>(items: readonly T[], fn: (item: T, index: number) => Promise<unknown>): Promise<void> {
  for (const [index, item] of items.entries()) await fn(item, index);
}
