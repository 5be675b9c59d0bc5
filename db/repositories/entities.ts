/** The evaluable entities of a dataset (conversations, messages, steps) as a run plans and places its cells. */
import "server-only";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { EvaluationLevel } from "../schema";
import { database } from "../store";
import { conversationsTable, messagesTable, stepsTable } from "../tables";

/** Light rows of every evaluable entity of a dataset (or one conversation), in grid order. */
export async function listEntities(datasetId: number, conversationId?: number | number[]) {
  const db = await database();
  // One conversation, a set of them (an online rule's run), or the whole dataset.
  const ids = conversationId === undefined ? undefined : Array.isArray(conversationId) ? conversationId : [conversationId];
  const convWhere = ids
    ? and(eq(conversationsTable.datasetId, datasetId), inArray(conversationsTable.id, ids))
    : eq(conversationsTable.datasetId, datasetId);
  const conversations = await db
    .select({ id: conversationsTable.id, position: conversationsTable.position })
    .from(conversationsTable)
    .where(convWhere)
    .orderBy(asc(conversationsTable.position));
  const msgWhere = ids
    ? and(eq(messagesTable.datasetId, datasetId), inArray(messagesTable.conversationId, ids))
    : eq(messagesTable.datasetId, datasetId);
  const messages = await db
    .select({ id: messagesTable.id, conversationId: messagesTable.conversationId, position: messagesTable.position, role: messagesTable.role })
    .from(messagesTable)
    .where(msgWhere)
    .orderBy(asc(messagesTable.conversationId), asc(messagesTable.position));
  const stepWhere = ids ? and(eq(stepsTable.datasetId, datasetId), inArray(stepsTable.conversationId, ids)) : eq(stepsTable.datasetId, datasetId);
  const steps = await db
    .select({
      id: stepsTable.id,
      messageId: stepsTable.messageId,
      conversationId: stepsTable.conversationId,
      position: stepsTable.position,
      // What the step carries, for the metrics' applies_to (same rule as the grid's step labels).
      hasThinking: sql<boolean>`(${stepsTable.thinking} is not null and ${stepsTable.thinking} <> '')`.mapWith(Boolean),
      hasToolCall: sql<boolean>`(${stepsTable.toolCall} is not null and cast(${stepsTable.toolCall} as text) <> 'null')`.mapWith(Boolean),
      hasToolResult: sql<boolean>`(${stepsTable.toolResult} is not null and cast(${stepsTable.toolResult} as text) <> 'null')`.mapWith(Boolean),
      hasOutput: sql<boolean>`(${stepsTable.outputContent} is not null and ${stepsTable.outputContent} <> '')`.mapWith(Boolean),
    })
    .from(stepsTable)
    .where(stepWhere)
    .orderBy(asc(stepsTable.messageId), asc(stepsTable.position));
  return { conversations, messages, steps };
}

/** The conversation and message an entity belongs to, checked against its dataset. */
export async function locateEntityInDataset(
  datasetId: number,
  entityType: EvaluationLevel,
  entityId: number,
): Promise<{ conversationId: number; messageId: number | null; stepId: number | null; role: string | null } | undefined> {
  const db = await database();
  if (entityType === "conversation") {
    const [c] = await db.select({ id: conversationsTable.id }).from(conversationsTable)
      .where(and(eq(conversationsTable.id, entityId), eq(conversationsTable.datasetId, datasetId)));
    return c ? { conversationId: c.id, messageId: null, stepId: null, role: null } : undefined;
  }
  if (entityType === "message") {
    const [m] = await db.select({ id: messagesTable.id, conversationId: messagesTable.conversationId, role: messagesTable.role }).from(messagesTable)
      .where(and(eq(messagesTable.id, entityId), eq(messagesTable.datasetId, datasetId)));
    return m ? { conversationId: m.conversationId, messageId: m.id, stepId: null, role: m.role } : undefined;
  }
  const [s] = await db.select({ id: stepsTable.id, conversationId: stepsTable.conversationId, messageId: stepsTable.messageId }).from(stepsTable)
    .where(and(eq(stepsTable.id, entityId), eq(stepsTable.datasetId, datasetId)));
  return s ? { conversationId: s.conversationId, messageId: s.messageId, stepId: s.id, role: null } : undefined;
}
