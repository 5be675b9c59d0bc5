/** Test-only helpers that put rows straight into the database, before the import pipeline exists. */
import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { database, first, rawRows, rows, run, transaction } from "@/db/store";
import { conversationsTable, messagesTable, stepsTable } from "@/db/tables";
import { createDataset } from "@/lib/datasets";
import { createMetric } from "@/lib/metrics";

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

/**
 * A dataset of `n` conversations, each a user question and an assistant answer that names its cell
 * (`answer cell-<i>-end`), with one message-level judge metric: n cells (cluster tests and bench).
 */
export async function seedMessageCells(n: number, name: string): Promise<{ datasetId: number; metricId: number }> {
  const ds = await createDataset({ name, userId: "test" });
  const db = await database();
  for (let from = 0; from < n; from += 500) {
    const count = Math.min(500, n - from);
    const convs = await db
      .insert(conversationsTable)
      .values(Array.from({ length: count }, (_, i) => ({ datasetId: ds.id, position: from + i, name: `c${from + i}` })))
      .returning({ id: conversationsTable.id });
    await db.insert(messagesTable).values(
      convs.flatMap((c, i) => [
        { conversationId: c.id, datasetId: ds.id, position: 0, role: "user" as const, content: `question ${from + i}` },
        { conversationId: c.id, datasetId: ds.id, position: 1, role: "assistant" as const, content: `answer cell-${from + i}-end` },
      ]),
    );
  }
  const metric = await createMetric({ dataset_id: ds.id, name: "Judge", evaluation_level: "message", prompt: "Rate this answer: @CURRENT_MESSAGE.output", output_type: "progress" });
  return { datasetId: ds.id, metricId: metric.id };
}
