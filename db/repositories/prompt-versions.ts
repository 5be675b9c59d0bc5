/** The version history of metrics' judge definitions (prompt, level, output, model). */
import "server-only";
import { and, asc, desc, eq, inArray, lte, sql } from "drizzle-orm";
import type { MetricPromptVersionRow, PipelineNodeRow } from "../schema";
import { database, rows, transaction } from "../store";
import { metricPromptVersionsTable } from "../tables";

type Definition = Pick<PipelineNodeRow, "id" | "prompt" | "evaluationLevel" | "outputType" | "outputSchema" | "modelName">;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Record the metric's definition as a new version when it differs from the last one recorded (or none
 * is). Returns the version in effect.
 */
export async function recordPromptVersion(node: Definition): Promise<MetricPromptVersionRow> {
  return transaction(function* (tx) {
    const [last] = yield* rows(
      tx
        .select()
        .from(metricPromptVersionsTable)
        .where(eq(metricPromptVersionsTable.pipelineNodeId, node.id))
        .orderBy(desc(metricPromptVersionsTable.version))
        .limit(1),
    );
    if (
      last &&
      last.prompt === node.prompt &&
      last.evaluationLevel === node.evaluationLevel &&
      last.outputType === node.outputType &&
      last.modelName === node.modelName &&
      same(last.outputSchema, node.outputSchema)
    ) {
      return last;
    }
    const [inserted] = yield* rows(
      tx
      .insert(metricPromptVersionsTable)
      .values({
        pipelineNodeId: node.id,
        version: (last?.version ?? 0) + 1,
        prompt: node.prompt,
        evaluationLevel: node.evaluationLevel,
        outputType: node.outputType,
        outputSchema: node.outputSchema ?? null,
        modelName: node.modelName,
      })
      .returning(),
    );
    return inserted;
  });
}

/** A metric's versions, oldest first. */
export async function listPromptVersions(pipelineNodeId: number): Promise<MetricPromptVersionRow[]> {
  const db = await database();
  return db
    .select()
    .from(metricPromptVersionsTable)
    .where(eq(metricPromptVersionsTable.pipelineNodeId, pipelineNodeId))
    .orderBy(asc(metricPromptVersionsTable.version));
}

/** For each metric, the version in effect at `at` (the last one recorded at or before it). */
export async function promptVersionsAt(pipelineNodeIds: number[], at: string): Promise<Map<number, MetricPromptVersionRow>> {
  if (pipelineNodeIds.length === 0) return new Map();
  const v = metricPromptVersionsTable;
  const db = await database();
  const latest = db
    .select({ id: sql<number>`max(${v.id})`.as("version_id") })
    .from(v)
    .where(and(inArray(v.pipelineNodeId, pipelineNodeIds), lte(v.createdAt, at)))
    .groupBy(v.pipelineNodeId)
    .as("latest");
  const found = await db.select({ v }).from(v).innerJoin(latest, eq(latest.id, v.id));
  return new Map(found.map((r) => [r.v.pipelineNodeId, r.v]));
}
