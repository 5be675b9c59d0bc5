/**
 * What each source says about a metric's cells, read in one query per source: an execution's results,
 * the latest result per cell (the grid), and a meta field of the entity's conversation or message.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import type { EvaluationLevel, ResultStatus } from "../schema";
import { database } from "../store";
import { conversationsTable, evaluationResultsTable, messagesTable, stepsTable } from "../tables";
import { fromJsonField, jsonField } from "./json-fields";

export type ResultReadingRow = {
  entityType: EvaluationLevel;
  entityId: number;
  conversationId: number;
  status: ResultStatus;
  result: unknown;
  score: number | null;
  modelName: string | null;
};

const r = evaluationResultsTable;
const readingColumns = {
  entityType: r.entityType,
  entityId: r.entityId,
  conversationId: r.conversationId,
  status: r.status,
  result: r.result,
  score: r.score,
  modelName: r.modelName,
};

/** The last result of each cell of one metric within one execution. */
export async function executionReadingRows(executionId: number, pipelineNodeId: number): Promise<ResultReadingRow[]> {
  const db = await database();
  const latest = db
    .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
    .from(r)
    .where(and(eq(r.executionId, executionId), eq(r.pipelineNodeId, pipelineNodeId)))
    .groupBy(r.entityType, r.entityId)
    .as("latest");
  return db.select(readingColumns).from(r).innerJoin(latest, eq(latest.id, r.id));
}

/** The latest result of each cell of one metric across executions: what the grid shows. */
export async function latestReadingRows(pipelineNodeId: number, entityType: EvaluationLevel): Promise<ResultReadingRow[]> {
  const db = await database();
  const latest = db
    .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
    .from(r)
    .where(and(eq(r.pipelineNodeId, pipelineNodeId), eq(r.entityType, entityType)))
    .groupBy(r.entityId)
    .as("latest");
  return db.select(readingColumns).from(r).innerJoin(latest, eq(latest.id, r.id));
}

export type MetaReadingRow = {
  entityId: number;
  conversationId: number;
  /** The field's SQL value (JSON true/false arrive as 1/0, hence `jsonType`). */
  value: number | string | null;
  /** SQLite's json_type of the field: null when absent, else `true`, `false`, `integer`, `real`, `text`, `null`, … */
  jsonType: string | null;
};


/**
 * A meta field for every entity of a metric level in a dataset (assistant messages for the message
 * level), read from the entity's conversation or (message and step levels) its message.
 */
export async function metaReadingRows(datasetId: number, level: EvaluationLevel, from: "conversation" | "message", metaPath: string): Promise<MetaReadingRow[]> {
  const db = await database();
  // `meta.a.b` → the keys a, b inside the meta object.
  const keys = metaPath.split(".").slice(1);
  const field = (meta: typeof conversationsTable.meta | typeof messagesTable.meta) => jsonField(meta, keys);
  if (level === "conversation") {
    const rows = await db
      .select({ entityId: conversationsTable.id, conversationId: conversationsTable.id, ...field(conversationsTable.meta) })
      .from(conversationsTable)
      .where(eq(conversationsTable.datasetId, datasetId));
    return rows.map(fromJsonField);
  }
  if (level === "message") {
    const rows = await db
      .select({
        entityId: messagesTable.id,
        conversationId: messagesTable.conversationId,
        ...field(from === "message" ? messagesTable.meta : conversationsTable.meta),
      })
      .from(messagesTable)
      .innerJoin(conversationsTable, eq(conversationsTable.id, messagesTable.conversationId))
      .where(and(eq(messagesTable.datasetId, datasetId), eq(messagesTable.role, "assistant")));
    return rows.map(fromJsonField);
  }
  const rows = await db
    .select({
      entityId: stepsTable.id,
      conversationId: stepsTable.conversationId,
      ...field(from === "message" ? messagesTable.meta : conversationsTable.meta),
    })
    .from(stepsTable)
    .innerJoin(messagesTable, eq(messagesTable.id, stepsTable.messageId))
    .innerJoin(conversationsTable, eq(conversationsTable.id, stepsTable.conversationId))
    .where(eq(stepsTable.datasetId, datasetId));
  return rows.map(fromJsonField);
}

export type CellResultRow = ResultReadingRow & { pipelineNodeId: number; inputTokens: number; outputTokens: number };

/** The last result of every cell (metric × entity) of one execution. */
export async function executionCellRows(executionId: number, pipelineNodeId?: number): Promise<CellResultRow[]> {
  const db = await database();
  const latest = db
    .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
    .from(r)
    .where(and(eq(r.executionId, executionId), pipelineNodeId !== undefined ? eq(r.pipelineNodeId, pipelineNodeId) : undefined))
    .groupBy(r.pipelineNodeId, r.entityType, r.entityId)
    .as("latest");
  return db
    .select({ ...readingColumns, pipelineNodeId: r.pipelineNodeId, inputTokens: r.inputTokens, outputTokens: r.outputTokens })
    .from(r)
    .innerJoin(latest, eq(latest.id, r.id));
}

/** A metric's results saved in [from, to) (to: null for no end), oldest first: what a prompt version judged. */
export async function resultReadingsBetween(pipelineNodeId: number, from: string, to: string | null): Promise<Array<ResultReadingRow & { id: number }>> {
  const db = await database();
  return db
    .select({ id: r.id, ...readingColumns })
    .from(r)
    .where(and(eq(r.pipelineNodeId, pipelineNodeId), sql`${r.createdAt} >= ${from}`, to === null ? undefined : sql`${r.createdAt} < ${to}`))
    .orderBy(r.id);
}
