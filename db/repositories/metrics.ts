/** Metrics (evaluation pipeline nodes), each dataset's pipeline, and where an evaluated entity lives. */
import "server-only";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import { getDb } from "../client";
import {
  conversationsTable,
  evaluationPipelinesTable,
  messagesTable,
  pipelineNodesTable,
  stepsTable,
  type EvaluationLevel,
  type PipelineNodeRow,
} from "../schema";

export type NodeValues = Omit<
  typeof pipelineNodesTable.$inferInsert,
  "id" | "evaluationPipelineId" | "datasetId" | "position" | "createdAt" | "updatedAt"
>;

const nowIso = () => new Date().toISOString();

/** A dataset's metrics in column order. */
export async function listNodes({ datasetId }: { datasetId: number }): Promise<PipelineNodeRow[]> {
  return getDb()
    .select()
    .from(pipelineNodesTable)
    .where(eq(pipelineNodesTable.datasetId, datasetId))
    .orderBy(asc(pipelineNodesTable.position), asc(pipelineNodesTable.id))
    .all();
}

export async function getNode({ id }: { id: number }): Promise<PipelineNodeRow | undefined> {
  return getDb().select().from(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)).get();
}

/** Append a metric as the dataset's last column, creating the dataset's pipeline with its first metric. */
export async function createNode(datasetId: number, values: NodeValues): Promise<PipelineNodeRow> {
  return getDb().transaction((tx) => {
    let pipeline = tx
      .select({ id: evaluationPipelinesTable.id })
      .from(evaluationPipelinesTable)
      .where(eq(evaluationPipelinesTable.datasetId, datasetId))
      .get();
    pipeline ??= tx
      .insert(evaluationPipelinesTable)
      .values({ datasetId, name: "Evaluation pipeline" })
      .returning({ id: evaluationPipelinesTable.id })
      .get();
    const next =
      tx
        .select({ n: sql<number>`coalesce(max(${pipelineNodesTable.position}) + 1, 0)` })
        .from(pipelineNodesTable)
        .where(eq(pipelineNodesTable.datasetId, datasetId))
        .get()?.n ?? 0;
    return tx
      .insert(pipelineNodesTable)
      .values({ ...values, datasetId, evaluationPipelineId: pipeline.id, position: next })
      .returning()
      .get();
  });
}

/**
 * Update a metric; with `position`, move it to that column (clamped) and renumber the others 0..n-1.
 */
export async function updateNode(id: number, values: Partial<NodeValues>, position?: number): Promise<PipelineNodeRow | undefined> {
  return getDb().transaction((tx) => {
    const row = tx
      .update(pipelineNodesTable)
      .set({ ...values, updatedAt: nowIso() })
      .where(eq(pipelineNodesTable.id, id))
      .returning()
      .get();
    if (!row || position === undefined) return row;
    const others = tx
      .select({ id: pipelineNodesTable.id })
      .from(pipelineNodesTable)
      .where(and(eq(pipelineNodesTable.datasetId, row.datasetId), ne(pipelineNodesTable.id, id)))
      .orderBy(asc(pipelineNodesTable.position), asc(pipelineNodesTable.id))
      .all()
      .map((r) => r.id);
    others.splice(Math.min(position, others.length), 0, id);
    others.forEach((nodeId, index) => {
      tx.update(pipelineNodesTable).set({ position: index }).where(eq(pipelineNodesTable.id, nodeId)).run();
    });
    return tx.select().from(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)).get();
  });
}

/** Delete a metric (its results go with it through the foreign key) and close the gap in the columns. */
export async function deleteNode({ id }: { id: number }): Promise<boolean> {
  return getDb().transaction((tx) => {
    const row = tx.delete(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)).returning().get();
    if (!row) return false;
    tx.update(pipelineNodesTable)
      .set({ position: sql`${pipelineNodesTable.position} - 1` })
      .where(and(eq(pipelineNodesTable.datasetId, row.datasetId), sql`${pipelineNodesTable.position} > ${row.position}`))
      .run();
    return true;
  });
}

/** The conversation and dataset an entity belongs to, or undefined when it does not exist. */
export async function locateEntityRow(entity: { type: EvaluationLevel; id: number }): Promise<{ conversationId: number; datasetId: number } | undefined> {
  const db = getDb();
  if (entity.type === "conversation") {
    const row = db
      .select({ conversationId: conversationsTable.id, datasetId: conversationsTable.datasetId })
      .from(conversationsTable)
      .where(eq(conversationsTable.id, entity.id))
      .get();
    return row;
  }
  if (entity.type === "message") {
    return db
      .select({ conversationId: messagesTable.conversationId, datasetId: messagesTable.datasetId })
      .from(messagesTable)
      .where(eq(messagesTable.id, entity.id))
      .get();
  }
  return db
    .select({ conversationId: stepsTable.conversationId, datasetId: stepsTable.datasetId })
    .from(stepsTable)
    .where(eq(stepsTable.id, entity.id))
    .get();
}
