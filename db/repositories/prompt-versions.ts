/** The version history of metrics' judge definitions (prompt, level, output, model). */
import "server-only";
import { and, asc, desc, eq, inArray, lte, sql } from "drizzle-orm";
import { getDb } from "../client";
import { metricPromptVersionsTable, type MetricPromptVersionRow, type PipelineNodeRow } from "../schema";

type Definition = Pick<PipelineNodeRow, "id" | "prompt" | "evaluationLevel" | "outputType" | "outputSchema" | "modelName">;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Record the metric's definition as a new version when it differs from the last one recorded (or none
 * is). Returns the version in effect.
 */
export async function recordPromptVersion(node: Definition): Promise<MetricPromptVersionRow> {
  return getDb().transaction((tx) => {
    const last = tx
      .select()
      .from(metricPromptVersionsTable)
      .where(eq(metricPromptVersionsTable.pipelineNodeId, node.id))
      .orderBy(desc(metricPromptVersionsTable.version))
      .limit(1)
      .get();
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
    return tx
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
      .returning()
      .get();
  });
}

/** A metric's versions, oldest first. */
export async function listPromptVersions(pipelineNodeId: number): Promise<MetricPromptVersionRow[]> {
  return getDb()
    .select()
    .from(metricPromptVersionsTable)
    .where(eq(metricPromptVersionsTable.pipelineNodeId, pipelineNodeId))
    .orderBy(asc(metricPromptVersionsTable.version))
    .all();
}

/** For each metric, the version in effect at `at` (the last one recorded at or before it). */
export async function promptVersionsAt(pipelineNodeIds: number[], at: string): Promise<Map<number, MetricPromptVersionRow>> {
  if (pipelineNodeIds.length === 0) return new Map();
  const v = metricPromptVersionsTable;
  const latest = getDb()
    .select({ id: sql<number>`max(${v.id})`.as("version_id") })
    .from(v)
    .where(and(inArray(v.pipelineNodeId, pipelineNodeIds), lte(v.createdAt, at)))
    .groupBy(v.pipelineNodeId)
    .as("latest");
  const rows = getDb().select({ v }).from(v).innerJoin(latest, eq(latest.id, v.id)).all();
  return new Map(rows.map((r) => [r.v.pipelineNodeId, r.v]));
}
