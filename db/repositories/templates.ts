/** Metric templates: system templates (seeded in place by key) and users' own. */
import "server-only";
import { and, asc, desc, eq, isNotNull, or, type SQL } from "drizzle-orm";
import type { EvaluationLevel, MetricTemplateRow } from "../schema";
import { changes, database, exclusive, first, onStoreOpen, rows, run, transaction } from "../store";
import { metricTemplatesTable } from "../tables";

export type TemplateValues = Omit<typeof metricTemplatesTable.$inferInsert, "id" | "createdAt" | "updatedAt">;
export type SystemTemplateValues = TemplateValues & { systemKey: string };

const nowIso = () => new Date().toISOString();
/** Advisory lock key of the start-up seeding (arbitrary, fixed). */
const SEED_LOCK = 7_305_771_003;

/** System templates plus the user's own, system first, each in creation order. */
export async function listTemplates(opts: { userId: string; evaluationLevel?: EvaluationLevel; category?: string }): Promise<MetricTemplateRow[]> {
  const t = metricTemplatesTable;
  const filters: Array<SQL | undefined> = [or(eq(t.isSystem, true), eq(t.userId, opts.userId))];
  if (opts.evaluationLevel) filters.push(eq(t.evaluationLevel, opts.evaluationLevel));
  if (opts.category) filters.push(eq(t.category, opts.category));
  const db = await database();
  return db
    .select()
    .from(t)
    .where(and(...filters))
    .orderBy(desc(t.isSystem), asc(t.id));
}

export async function getTemplate({ id }: { id: number }): Promise<MetricTemplateRow | undefined> {
  const db = await database();
  return first(await db.select().from(metricTemplatesTable).where(eq(metricTemplatesTable.id, id)));
}

export async function createTemplate(values: TemplateValues): Promise<MetricTemplateRow> {
  const db = await database();
  const [row] = await db.insert(metricTemplatesTable).values(values).returning();
  return row;
}

export async function updateTemplate(id: number, values: Partial<TemplateValues>): Promise<MetricTemplateRow | undefined> {
  const db = await database();
  return first(await db.update(metricTemplatesTable).set({ ...values, updatedAt: nowIso() }).where(eq(metricTemplatesTable.id, id)).returning());
}

/** Delete a template; metrics copied from it keep their copy (their template_id becomes null). */
export async function deleteTemplate({ id }: { id: number }): Promise<boolean> {
  const db = await database();
  return changes(await db.delete(metricTemplatesTable).where(eq(metricTemplatesTable.id, id))) > 0;
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
export async function upsertSystemTemplates(templates: SystemTemplateValues[]): Promise<{ inserted: number; updated: number }> {
  return transaction(function* (tx) {
    // Servers starting at once against one PostgreSQL database seed one after the other.
    yield* exclusive(SEED_LOCK);
    const existing = new Map((yield* rows(tx.select().from(metricTemplatesTable).where(isNotNull(metricTemplatesTable.systemKey)))).map((r) => [r.systemKey, r]));
    let inserted = 0;
    let updated = 0;
    for (const wanted of templates) {
      const values = { ...wanted, isSystem: true, userId: null };
      const row = existing.get(wanted.systemKey);
      if (!row) {
        yield* run(tx.insert(metricTemplatesTable).values(values));
        inserted++;
      } else if (differs(row, wanted) || !row.isSystem || row.userId !== null) {
        yield* run(tx.update(metricTemplatesTable).set({ ...values, updatedAt: nowIso() }).where(eq(metricTemplatesTable.id, row.id)));
        updated++;
      }
    }
    return { inserted, updated };
  });
}

/** Seed the system templates every time the database is opened (and now, if it already is). */
export function seedSystemTemplatesOnOpen(templates: () => SystemTemplateValues[]): void {
  onStoreOpen(async () => {
    await upsertSystemTemplates(templates());
  });
}
