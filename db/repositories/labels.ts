/** Human labels of cells: the only place the labels table is queried. */
import "server-only";
import { and, count, countDistinct, desc, eq, isNull, type SQL } from "drizzle-orm";
import type { EvaluationLevel, LabelRow } from "../schema";
import { database, first, lockRow, rows, run, transaction } from "../store";
import { labelsTable } from "../tables";

export type NewLabel = Omit<typeof labelsTable.$inferInsert, "id" | "createdAt" | "supersededAt">;

const nowIso = () => new Date().toISOString();

/** Save a label; the same user's current label of that cell, if any, becomes history in the same transaction. */
export async function insertLabel(values: NewLabel): Promise<LabelRow> {
  return transaction(function* (tx) {
    // One current label per user and cell, even when two saves of it race (PostgreSQL).
    yield* lockRow("pipeline_nodes", values.pipelineNodeId);
    yield* run(
      tx
      .update(labelsTable)
      .set({ supersededAt: nowIso() })
      .where(
        and(
          eq(labelsTable.pipelineNodeId, values.pipelineNodeId),
          eq(labelsTable.entityType, values.entityType),
          eq(labelsTable.entityId, values.entityId),
          eq(labelsTable.userId, values.userId),
          isNull(labelsTable.supersededAt),
        ),
      ),
    );
    const [row] = yield* rows(tx.insert(labelsTable).values(values).returning());
    return row;
  });
}

export type LabelFilter = {
  datasetId: number;
  pipelineNodeId?: number;
  userId?: string;
  entity?: { type: EvaluationLevel; id: number };
  includeHistory?: boolean;
};

function where(f: LabelFilter): SQL | undefined {
  return and(
    eq(labelsTable.datasetId, f.datasetId),
    f.pipelineNodeId !== undefined ? eq(labelsTable.pipelineNodeId, f.pipelineNodeId) : undefined,
    f.userId !== undefined ? eq(labelsTable.userId, f.userId) : undefined,
    f.entity ? and(eq(labelsTable.entityType, f.entity.type), eq(labelsTable.entityId, f.entity.id)) : undefined,
    f.includeHistory ? undefined : isNull(labelsTable.supersededAt),
  );
}

/** Labels newest first, one page, and how many match. */
export async function listLabelRows(f: LabelFilter & { limit: number; offset: number }): Promise<{ items: LabelRow[]; total: number }> {
  const db = await database();
  const items = await db.select().from(labelsTable).where(where(f)).orderBy(desc(labelsTable.id)).limit(f.limit).offset(f.offset);
  const total = first(await db.select({ n: count() }).from(labelsTable).where(where(f)))?.n ?? 0;
  return { items, total };
}

/** Every current label of a metric (optionally of one user), newest first. */
export async function currentLabelRows(pipelineNodeId: number, userId?: string): Promise<LabelRow[]> {
  const db = await database();
  return db
    .select()
    .from(labelsTable)
    .where(
      and(
        eq(labelsTable.pipelineNodeId, pipelineNodeId),
        isNull(labelsTable.supersededAt),
        userId !== undefined ? eq(labelsTable.userId, userId) : undefined,
      ),
    )
    .orderBy(desc(labelsTable.id));
}

export async function getLabelRow(id: number): Promise<LabelRow | undefined> {
  const db = await database();
  return first(await db.select().from(labelsTable).where(eq(labelsTable.id, id)));
}

export async function deleteLabelRow(id: number): Promise<boolean> {
  const db = await database();
  return (await db.delete(labelsTable).where(eq(labelsTable.id, id)).returning({ id: labelsTable.id })).length > 0;
}

/** Everyone with a current label anywhere, with how many and on how many datasets (the People page's label authors). */
export async function labelAuthorRows(): Promise<Array<{ userId: string; labels: number; datasets: number }>> {
  const db = await database();
  const found = await db
    .select({ userId: labelsTable.userId, labels: count(), datasets: countDistinct(labelsTable.datasetId) })
    .from(labelsTable)
    .where(isNull(labelsTable.supersededAt))
    .groupBy(labelsTable.userId)
    .orderBy(labelsTable.userId);
  return found.map((r) => ({ userId: r.userId, labels: Number(r.labels), datasets: Number(r.datasets) }));
}
