/**
 * Pages of the dataset grid's rows: conversations, assistant messages or steps of a dataset, in grid
 * order (conversation position, then message position, then step position). Each page is one query
 * plus one count, whatever its size; labels are cut in SQL so long contents never leave the database.
 */
import "server-only";
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { getDb } from "../client";
import { conversationsTable, messagesTable, pipelineNodesTable, stepsTable, type EvaluationLevel } from "../schema";

export type PageOpts = { datasetId: number; conversationId?: number; limit: number; offset: number };

/** Enough of a message's content for a one-line label. */
const SNIPPET_CHARS = 200;

export type ConversationGridRow = { id: number; position: number; name: string | null };

export function listConversationPage(opts: PageOpts): { items: ConversationGridRow[]; total: number } {
  const db = getDb();
  const c = conversationsTable;
  const where = and(eq(c.datasetId, opts.datasetId), opts.conversationId ? eq(c.id, opts.conversationId) : undefined);
  const items = db
    .select({ id: c.id, position: c.position, name: c.name })
    .from(c)
    .where(where)
    .orderBy(asc(c.position))
    .limit(opts.limit)
    .offset(opts.offset)
    .all();
  const total = db.select({ n: count() }).from(c).where(where).get()?.n ?? 0;
  return { items, total };
}

export type MessageGridRow = {
  id: number;
  conversationId: number;
  position: number;
  role: string;
  snippet: string | null;
};

/** Assistant messages only: message-level metrics evaluate those. */
export function listAssistantMessagePage(opts: PageOpts): { items: MessageGridRow[]; total: number } {
  const db = getDb();
  const m = messagesTable;
  const where = and(
    eq(m.datasetId, opts.datasetId),
    eq(m.role, "assistant"),
    opts.conversationId ? eq(m.conversationId, opts.conversationId) : undefined,
  );
  const items = db
    .select({
      id: m.id,
      conversationId: m.conversationId,
      position: m.position,
      role: m.role,
      snippet: sql<string | null>`substr(${m.content}, 1, ${SNIPPET_CHARS})`,
    })
    .from(m)
    .innerJoin(conversationsTable, eq(conversationsTable.id, m.conversationId))
    .where(where)
    .orderBy(asc(conversationsTable.position), asc(m.position))
    .limit(opts.limit)
    .offset(opts.offset)
    .all();
  const total = db.select({ n: count() }).from(m).where(where).get()?.n ?? 0;
  return { items, total };
}

export type StepGridRow = {
  id: number;
  messageId: number;
  conversationId: number;
  position: number;
  role: string;
  hasThinking: boolean;
  hasToolCall: boolean;
  hasToolResult: boolean;
  hasOutput: boolean;
  toolName: string | null;
};

const present = (column: SQLiteColumn) =>
  sql<boolean>`(${column} is not null and ${column} <> '')`.mapWith(Boolean);

export function listStepPage(opts: PageOpts): { items: StepGridRow[]; total: number } {
  const db = getDb();
  const s = stepsTable;
  const where = and(eq(s.datasetId, opts.datasetId), opts.conversationId ? eq(s.conversationId, opts.conversationId) : undefined);
  const items = db
    .select({
      id: s.id,
      messageId: s.messageId,
      conversationId: s.conversationId,
      position: s.position,
      role: messagesTable.role,
      hasThinking: present(s.thinking),
      hasToolCall: sql<boolean>`(${s.toolCall} is not null and ${s.toolCall} <> 'null')`.mapWith(Boolean),
      hasToolResult: sql<boolean>`(${s.toolResult} is not null and ${s.toolResult} <> 'null')`.mapWith(Boolean),
      hasOutput: present(s.outputContent),
      // Tool calls are `{name, arguments}` objects; anything else has no name to show.
      toolName: sql<string | null>`case when json_valid(${s.toolCall}) and json_type(${s.toolCall}) = 'object'
        then cast(json_extract(${s.toolCall}, '$.name') as text) end`,
    })
    .from(s)
    .innerJoin(messagesTable, eq(messagesTable.id, s.messageId))
    .innerJoin(conversationsTable, eq(conversationsTable.id, s.conversationId))
    .where(where)
    .orderBy(asc(conversationsTable.position), asc(messagesTable.position), asc(s.position))
    .limit(opts.limit)
    .offset(opts.offset)
    .all();
  const total = db.select({ n: count() }).from(s).where(where).get()?.n ?? 0;
  return { items, total };
}

/** Ids of a dataset's metrics at one level: the grid's columns for that level. */
export function listNodeIdsAtLevel(datasetId: number, level: EvaluationLevel): number[] {
  return getDb()
    .select({ id: pipelineNodesTable.id })
    .from(pipelineNodesTable)
    .where(and(eq(pipelineNodesTable.datasetId, datasetId), eq(pipelineNodesTable.evaluationLevel, level)))
    .all()
    .map((r) => r.id);
}

/**
 * Top-level keys of a dataset's conversation `meta` objects, sorted: the export's `meta.<key>` columns.
 * One query; conversations whose meta is not an object add none.
 */
export function listConversationMetaKeys(datasetId: number): string[] {
  return getDb()
    .all<{ key: string }>(
      sql`select distinct j.key as key from ${conversationsTable} c, json_each(c.meta) j
          where c.dataset_id = ${datasetId} and c.meta is not null and json_valid(c.meta) and json_type(c.meta) = 'object'
          order by j.key`,
    )
    .map((r) => r.key);
}

export type ConversationInfoRow = { id: number; name: string | null; position: number; meta: unknown };

/** Name, position and meta of the given conversations (one query). */
export function listConversationInfo(ids: number[]): ConversationInfoRow[] {
  if (ids.length === 0) return [];
  const c = conversationsTable;
  return getDb()
    .select({ id: c.id, name: c.name, position: c.position, meta: c.meta })
    .from(c)
    .where(inArray(c.id, ids))
    .all();
}
