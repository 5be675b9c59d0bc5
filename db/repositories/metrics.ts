/** Metrics (evaluation pipeline nodes), each dataset's pipeline, and where an evaluated entity lives. */
import "server-only";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { EvaluationLevel, PipelineNodeRow } from "../schema";
import { database, first, lockRow, rows, run, transaction } from "../store";
import { conversationsTable, evaluationPipelinesTable, messagesTable, pipelineNodesTable, stepsTable } from "../tables";

export type NodeValues = Omit<
  typeof pipelineNodesTable.$inferInsert,
  "id" | "evaluationPipelineId" | "datasetId" | "position" | "createdAt" | "updatedAt"
>;

const nowIso = () => new Date().toISOString();

/** A dataset's metrics in column order. */
export async function listNodes({ datasetId }: { datasetId: number }): Promise<PipelineNodeRow[]> {
  const db = await database();
  return db
    .select()
    .from(pipelineNodesTable)
    .where(eq(pipelineNodesTable.datasetId, datasetId))
    .orderBy(asc(pipelineNodesTable.position), asc(pipelineNodesTable.id));
}

export async function getNode({ id }: { id: number }): Promise<PipelineNodeRow | undefined> {
  const db = await database();
  return first(await db.select().from(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)));
}

/** Append a metric as the dataset's last column, creating the dataset's pipeline with its first metric. */
export async function createNode(datasetId: number, values: NodeValues): Promise<PipelineNodeRow> {
  return transaction(function* (tx) {
    yield* lockRow("datasets", datasetId);
    let [pipeline] = yield* rows(tx.select({ id: evaluationPipelinesTable.id }).from(evaluationPipelinesTable).where(eq(evaluationPipelinesTable.datasetId, datasetId)));
    pipeline ??= (yield* rows(tx.insert(evaluationPipelinesTable).values({ datasetId, name: "Evaluation pipeline" }).returning({ id: evaluationPipelinesTable.id })))[0];
    const [next] = yield* rows(
      tx
        .select({ n: sql<number>`coalesce(max(${pipelineNodesTable.position}) + 1, 0)`.mapWith(Number) })
        .from(pipelineNodesTable)
        .where(eq(pipelineNodesTable.datasetId, datasetId)),
    );
    const [row] = yield* rows(tx.insert(pipelineNodesTable).values({ ...values, datasetId, evaluationPipelineId: pipeline.id, position: next?.n ?? 0 }).returning());
    return row;
  });
}

/**
 * Update a metric; with `position`, move it to that column (clamped) and renumber the others 0..n-1.
 */
export async function updateNode(id: number, values: Partial<NodeValues>, position?: number): Promise<PipelineNodeRow | undefined> {
  return transaction(function* (tx) {
    const [row] = yield* rows(tx.update(pipelineNodesTable).set({ ...values, updatedAt: nowIso() }).where(eq(pipelineNodesTable.id, id)).returning());
    if (!row || position === undefined) return row;
    yield* lockRow("datasets", row.datasetId);
    const others = (
      yield* rows(
        tx
          .select({ id: pipelineNodesTable.id })
          .from(pipelineNodesTable)
          .where(and(eq(pipelineNodesTable.datasetId, row.datasetId), ne(pipelineNodesTable.id, id)))
          .orderBy(asc(pipelineNodesTable.position), asc(pipelineNodesTable.id)),
      )
    ).map((r) => r.id);
    others.splice(Math.min(position, others.length), 0, id);
    for (const [index, nodeId] of others.entries()) {
      yield* run(tx.update(pipelineNodesTable).set({ position: index }).where(eq(pipelineNodesTable.id, nodeId)));
    }
    const [moved] = yield* rows(tx.select().from(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)));
    return moved;
  });
}

/** Delete a metric (its results go with it through the foreign key) and close the gap in the columns. */
export async function deleteNode({ id }: { id: number }): Promise<boolean> {
  return transaction(function* (tx) {
    const [row] = yield* rows(tx.delete(pipelineNodesTable).where(eq(pipelineNodesTable.id, id)).returning());
    if (!row) return false;
    yield* run(
      tx
        .update(pipelineNodesTable)
        .set({ position: sql`${pipelineNodesTable.position} - 1` })
        .where(and(eq(pipelineNodesTable.datasetId, row.datasetId), sql`${pipelineNodesTable.position} > ${row.position}`)),
    );
    return true;
  });
}

/** The conversation and dataset an entity belongs to, or undefined when it does not exist. */
export async function locateEntityRow(entity: { type: EvaluationLevel; id: number }): Promise<{ conversationId: number; datasetId: number } | undefined> {
  const db = await database();
  if (entity.type === "conversation") {
    return first(
      await db.select({ conversationId: conversationsTable.id, datasetId: conversationsTable.datasetId }).from(conversationsTable).where(eq(conversationsTable.id, entity.id)),
    );
  }
  if (entity.type === "message") {
    return first(await db.select({ conversationId: messagesTable.conversationId, datasetId: messagesTable.datasetId }).from(messagesTable).where(eq(messagesTable.id, entity.id)));
  }
  return first(await db.select({ conversationId: stepsTable.conversationId, datasetId: stepsTable.datasetId }).from(stepsTable).where(eq(stepsTable.id, entity.id)));
}
