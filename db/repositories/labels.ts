/** Human labels of cells: the only place the labels table is queried. */
import "server-only";
import { and, count, desc, eq, isNull, type SQL } from "drizzle-orm";
import { getDb } from "../client";
import { labelsTable, type EvaluationLevel, type LabelRow } from "../schema";

export type NewLabel = Omit<typeof labelsTable.$inferInsert, "id" | "createdAt" | "supersededAt">;

const nowIso = () => new Date().toISOString();

/** Save a label; the same user's current label of that cell, if any, becomes history in the same transaction. */
export async function insertLabel(values: NewLabel): Promise<LabelRow> {
  return getDb().transaction((tx) => {
    tx.update(labelsTable)
      .set({ supersededAt: nowIso() })
      .where(
        and(
          eq(labelsTable.pipelineNodeId, values.pipelineNodeId),
          eq(labelsTable.entityType, values.entityType),
          eq(labelsTable.entityId, values.entityId),
          eq(labelsTable.userId, values.userId),
          isNull(labelsTable.supersededAt),
        ),
      )
      .run();
    return tx.insert(labelsTable).values(values).returning().get();
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
  const db = getDb();
  const items = db.select().from(labelsTable).where(where(f)).orderBy(desc(labelsTable.id)).limit(f.limit).offset(f.offset).all();
  const total = db.select({ n: count() }).from(labelsTable).where(where(f)).get()?.n ?? 0;
  return { items, total };
}

/** Every current label of a metric (optionally of one user), newest first. */
export async function currentLabelRows(pipelineNodeId: number, userId?: string): Promise<LabelRow[]> {
  return getDb()
    .select()
    .from(labelsTable)
    .where(
      and(
        eq(labelsTable.pipelineNodeId, pipelineNodeId),
        isNull(labelsTable.supersededAt),
        userId !== undefined ? eq(labelsTable.userId, userId) : undefined,
      ),
    )
    .orderBy(desc(labelsTable.id))
    .all();
}

export async function getLabelRow(id: number): Promise<LabelRow | undefined> {
  return getDb().select().from(labelsTable).where(eq(labelsTable.id, id)).get();
}

export async function deleteLabelRow(id: number): Promise<boolean> {
  return getDb().delete(labelsTable).where(eq(labelsTable.id, id)).returning({ id: labelsTable.id }).get() !== undefined;
}
