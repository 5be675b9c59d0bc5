/** Metric templates: system templates (seeded in place by key) and users' own. */
import "server-only";
import { and, asc, desc, eq, isNotNull, or, type SQL } from "drizzle-orm";
import { getDb, onDatabaseOpen, type Db } from "../client";
import { metricTemplatesTable, type EvaluationLevel, type MetricTemplateRow } from "../schema";

export type TemplateValues = Omit<typeof metricTemplatesTable.$inferInsert, "id" | "createdAt" | "updatedAt">;
export type SystemTemplateValues = TemplateValues & { systemKey: string };

const nowIso = () => new Date().toISOString();

/** System templates plus the user's own, system first, each in creation order. */
export async function listTemplates(opts: { userId: string; evaluationLevel?: EvaluationLevel; category?: string }): Promise<MetricTemplateRow[]> {
  const t = metricTemplatesTable;
  const filters: Array<SQL | undefined> = [or(eq(t.isSystem, true), eq(t.userId, opts.userId))];
  if (opts.evaluationLevel) filters.push(eq(t.evaluationLevel, opts.evaluationLevel));
  if (opts.category) filters.push(eq(t.category, opts.category));
  return getDb()
    .select()
    .from(t)
    .where(and(...filters))
    .orderBy(desc(t.isSystem), asc(t.id))
    .all();
}

export async function getTemplate({ id }: { id: number }): Promise<MetricTemplateRow | undefined> {
  return getDb().select().from(metricTemplatesTable).where(eq(metricTemplatesTable.id, id)).get();
}

export async function createTemplate(values: TemplateValues): Promise<MetricTemplateRow> {
  return getDb().insert(metricTemplatesTable).values(values).returning().get();
}

export async function updateTemplate(id: number, values: Partial<TemplateValues>): Promise<MetricTemplateRow | undefined> {
  return getDb()
    .update(metricTemplatesTable)
    .set({ ...values, updatedAt: nowIso() })
    .where(eq(metricTemplatesTable.id, id))
    .returning()
    .get();
}

/** Delete a template; metrics copied from it keep their copy (their template_id becomes null). */
export async function deleteTemplate({ id }: { id: number }): Promise<boolean> {
  return getDb().delete(metricTemplatesTable).where(eq(metricTemplatesTable.id, id)).run().changes > 0;
}

const comparedFields = [
  "name",
  "description",
  "evaluationLevel",
  "prompt",
  "outputType",
  "outputSchema",
  "modelName",
  "isAdvanced",
  "templateVariables",
  "category",
  "appliesTo",
  "kind",
  "check",
] as const;

function differs(row: MetricTemplateRow, wanted: SystemTemplateValues): boolean {
  return comparedFields.some((f) => JSON.stringify(row[f] ?? null) !== JSON.stringify(wanted[f] ?? null));
}

/**
 * Insert missing system templates and update changed ones in place, matched by `systemKey`, in one
 * transaction. Unchanged rows are not written, so restarts do not touch `updated_at`.
 */
export function upsertSystemTemplates(db: Db, templates: SystemTemplateValues[]): { inserted: number; updated: number } {
  return db.transaction((tx) => {
    const existing = new Map(
      tx
        .select()
        .from(metricTemplatesTable)
        .where(isNotNull(metricTemplatesTable.systemKey))
        .all()
        .map((r) => [r.systemKey, r]),
    );
    let inserted = 0;
    let updated = 0;
    for (const wanted of templates) {
      const values = { ...wanted, isSystem: true, userId: null };
      const row = existing.get(wanted.systemKey);
      if (!row) {
        tx.insert(metricTemplatesTable).values(values).run();
        inserted++;
      } else if (differs(row, wanted) || !row.isSystem || row.userId !== null) {
        tx.update(metricTemplatesTable).set({ ...values, updatedAt: nowIso() }).where(eq(metricTemplatesTable.id, row.id)).run();
        updated++;
      }
    }
    return { inserted, updated };
  });
}

/** Seed the system templates every time the database is opened (and now, if it already is). */
export function seedSystemTemplatesOnOpen(templates: () => SystemTemplateValues[]): void {
  onDatabaseOpen((db) => {
    upsertSystemTemplates(db, templates());
  });
}
