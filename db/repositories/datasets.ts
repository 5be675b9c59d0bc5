/** Datasets and their conversations, messages and steps: the only place these tables are queried. */
import "server-only";
import { asc, count, desc, eq, sql } from "drizzle-orm";
import { getDb } from "../client";
import {
  conversationsTable,
  datasetsTable,
  messagesTable,
  stepsTable,
  type ConversationRow,
  type DatasetRow,
} from "../schema";

export type DatasetWithCounts = DatasetRow & {
  conversationCount: number;
  messageCount: number;
  stepCount: number;
};

const countsSelection = {
  // Column references are written out in full: inside a sub-select drizzle would print a bare "id".
  conversationCount: sql<number>`(select count(*) from conversations c where c.dataset_id = "datasets"."id")`,
  messageCount: sql<number>`(select count(*) from messages m where m.dataset_id = "datasets"."id")`,
  stepCount: sql<number>`(select count(*) from steps s where s.dataset_id = "datasets"."id")`,
};

const nowIso = () => new Date().toISOString();

export function createDataset(input: { name: string; description?: string | null; userId: string }): DatasetWithCounts {
  const row = getDb()
    .insert(datasetsTable)
    .values({ name: input.name, description: input.description ?? null, userId: input.userId })
    .returning()
    .get();
  return { ...row, conversationCount: 0, messageCount: 0, stepCount: 0 };
}

export function getDataset({ id }: { id: number }): DatasetWithCounts | undefined {
  return getDb()
    .select({ ...datasetColumns(), ...countsSelection })
    .from(datasetsTable)
    .where(eq(datasetsTable.id, id))
    .get();
}

export function datasetExists({ id }: { id: number }): boolean {
  return !!getDb().select({ id: datasetsTable.id }).from(datasetsTable).where(eq(datasetsTable.id, id)).get();
}

export function listDatasets(opts: { limit: number; offset: number; userId?: string }): {
  items: DatasetWithCounts[];
  total: number;
} {
  const db = getDb();
  const where = opts.userId ? eq(datasetsTable.userId, opts.userId) : undefined;
  const items = db
    .select({ ...datasetColumns(), ...countsSelection })
    .from(datasetsTable)
    .where(where)
    .orderBy(desc(datasetsTable.createdAt), desc(datasetsTable.id))
    .limit(opts.limit)
    .offset(opts.offset)
    .all();
  const total = db.select({ n: count() }).from(datasetsTable).where(where).get()?.n ?? 0;
  return { items, total };
}

export function updateDataset(
  id: number,
  patch: { name?: string; description?: string | null },
): DatasetWithCounts | undefined {
  const values: Partial<typeof datasetsTable.$inferInsert> = { updatedAt: nowIso() };
  if (patch.name !== undefined) values.name = patch.name;
  if (patch.description !== undefined) values.description = patch.description;
  const updated = getDb().update(datasetsTable).set(values).where(eq(datasetsTable.id, id)).returning().get();
  return updated ? getDataset({ id }) : undefined;
}

/** Delete a dataset; foreign keys cascade to conversations, messages, steps, metrics, executions, results. */
export function deleteDataset({ id }: { id: number }): boolean {
  const result = getDb().delete(datasetsTable).where(eq(datasetsTable.id, id)).run();
  return result.changes > 0;
}

export type ConversationWithCounts = ConversationRow & { messageCount: number; stepCount: number };

const conversationCounts = {
  messageCount: sql<number>`(select count(*) from messages m where m.conversation_id = "conversations"."id")`,
  stepCount: sql<number>`(select count(*) from steps s where s.conversation_id = "conversations"."id")`,
};

export function listConversations(opts: { datasetId: number; limit: number; offset: number }): {
  items: ConversationWithCounts[];
  total: number;
} {
  const db = getDb();
  const where = eq(conversationsTable.datasetId, opts.datasetId);
  const items = db
    .select({ ...conversationColumns(), ...conversationCounts })
    .from(conversationsTable)
    .where(where)
    .orderBy(asc(conversationsTable.position))
    .limit(opts.limit)
    .offset(opts.offset)
    .all();
  const total = db.select({ n: count() }).from(conversationsTable).where(where).get()?.n ?? 0;
  return { items, total };
}

/** One conversation with its messages and their steps, in position order (three queries in all). */
export function getConversationTree({ id }: { id: number }) {
  const db = getDb();
  const conversation = db
    .select({ ...conversationColumns(), ...conversationCounts })
    .from(conversationsTable)
    .where(eq(conversationsTable.id, id))
    .get();
  if (!conversation) return undefined;
  const messages = db
    .select()
    .from(messagesTable)
    .where(eq(messagesTable.conversationId, id))
    .orderBy(asc(messagesTable.position))
    .all();
  const steps = messages.length
    ? db
        .select()
        .from(stepsTable)
        .where(eq(stepsTable.conversationId, id))
        .orderBy(asc(stepsTable.messageId), asc(stepsTable.position))
        .all()
    : [];
  const stepsByMessage = new Map<number, typeof steps>();
  for (const step of steps) {
    const list = stepsByMessage.get(step.messageId) ?? [];
    list.push(step);
    stepsByMessage.set(step.messageId, list);
  }
  return {
    conversation,
    messages: messages.map((m) => ({ ...m, steps: stepsByMessage.get(m.id) ?? [] })),
  };
}

function datasetColumns() {
  const { id, name, description, userId, createdAt, updatedAt } = datasetsTable;
  return { id, name, description, userId, createdAt, updatedAt };
}

function conversationColumns() {
  const { id, datasetId, position, name, description, meta, agents, goal, goalGeneratedBy, createdAt } =
    conversationsTable;
  return { id, datasetId, position, name, description, meta, agents, goal, goalGeneratedBy, createdAt };
}
