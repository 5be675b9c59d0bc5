/** What a CI gate reads: the last result of each cell of some executions, with its reason, and a dataset's content fingerprint. */
import "server-only";
import { createHash } from "node:crypto";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { EvaluationLevel, ResultStatus } from "../schema";
import { database } from "../store";
import { conversationsTable, evaluationResultsTable, messagesTable } from "../tables";

export type GateCellRow = {
  executionId: number;
  pipelineNodeId: number;
  entityType: EvaluationLevel;
  entityId: number;
  conversationId: number;
  conversationName: string | null;
  /** Where the conversation sits in its dataset, and its meta: a conversation without a name is called as the grid calls it. */
  conversationPosition: number;
  conversationMeta: unknown;
  status: ResultStatus;
  result: unknown;
  score: number | null;
  error: string | null;
};

const r = evaluationResultsTable;

/** The last result of each cell of each execution. */
export async function gateCellRows(executionIds: number[]): Promise<GateCellRow[]> {
  if (executionIds.length === 0) return [];
  const db = await database();
  const latest = db
    .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
    .from(r)
    .where(inArray(r.executionId, executionIds))
    .groupBy(r.executionId, r.pipelineNodeId, r.entityType, r.entityId)
    .as("latest");
  return db
    .select({
      executionId: r.executionId,
      pipelineNodeId: r.pipelineNodeId,
      entityType: r.entityType,
      entityId: r.entityId,
      conversationId: r.conversationId,
      conversationName: conversationsTable.name,
      conversationPosition: conversationsTable.position,
      conversationMeta: conversationsTable.meta,
      status: r.status,
      result: r.result,
      score: r.score,
      error: r.error,
    })
    .from(r)
    .innerJoin(latest, eq(latest.id, r.id))
    .innerJoin(conversationsTable, eq(conversationsTable.id, r.conversationId));
}

/**
 * A fingerprint of what a dataset holds (its conversations' ids and names, every message's role and
 * text, in order): a gate's output pins the data it ran on, and changes when a conversation does.
 */
export async function datasetContentHash(datasetId: number): Promise<{ hash: string; conversations: number }> {
  const db = await database();
  const rows = await db
    .select({ conversationId: conversationsTable.id, name: conversationsTable.name, role: messagesTable.role, content: messagesTable.content })
    .from(conversationsTable)
    .leftJoin(messagesTable, eq(messagesTable.conversationId, conversationsTable.id))
    .where(and(eq(conversationsTable.datasetId, datasetId)))
    .orderBy(asc(conversationsTable.id), asc(messagesTable.position));
  const hash = createHash("sha256");
  const seen = new Set<number>();
  for (const row of rows) {
    if (!seen.has(row.conversationId)) {
      seen.add(row.conversationId);
      hash.update(`\u0001${row.conversationId}\u0002${row.name ?? ""}`);
    }
    hash.update(`\u0003${row.role ?? ""}\u0004${row.content ?? ""}`);
  }
  return { hash: `sha256:${hash.digest("hex")}`, conversations: seen.size };
}
