/** Metric templates as the API shows them: ownership rules, derived fields, and the system seed. */
import "server-only";
import * as repo from "@/db/repositories/templates";
import type { MetricTemplateRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { AppError, notFound } from "@/lib/errors";
import type { CreateTemplateInput, MetricTemplate, UpdateTemplateInput } from "@/lib/schemas/metrics";
import { definitionPatch, definitionToWire, deriveDefinition, promptAndOutput } from "./definition";
import { systemTemplates } from "./system-templates";

/** The system templates as rows to upsert, with their derived fields (validated like any template). */
export function systemTemplateValues(): repo.SystemTemplateValues[] {
  return systemTemplates.map((t) => {
    const derived = deriveDefinition(t);
    return {
      systemKey: t.key,
      name: t.name,
      description: t.description,
      evaluationLevel: t.evaluationLevel,
      prompt: t.prompt,
      outputType: t.outputType,
      outputSchema: derived.outputSchema,
      modelName: null,
      isAdvanced: derived.isAdvanced,
      templateVariables: derived.templateVariables,
      category: t.category,
      appliesTo: derived.appliesTo,
      kind: derived.kind,
      check: derived.check,
    };
  });
}

// Importing this module is enough to keep the built-in templates seeded and up to date.
repo.seedSystemTemplatesOnOpen(systemTemplateValues);

export function toTemplate(row: MetricTemplateRow): MetricTemplate {
  return {
    id: row.id,
    ...definitionToWire(row),
    category: row.category,
    is_system: row.isSystem,
    user_id: row.userId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** System templates plus the caller's own, optionally filtered. */
export async function listTemplates(opts: { userId: string; evaluationLevel?: EvaluationLevel; category?: string }): Promise<MetricTemplate[]> {
  return (await repo.listTemplates(opts)).map(toTemplate);
}

/**
 * The template row, or a 404 AppError. With `viewer`, another user's template is invisible (404):
 * callers read and copy system templates and their own; only owners change theirs.
 */
export async function getTemplateRow(id: number, viewer?: string): Promise<MetricTemplateRow> {
  const row = await repo.getTemplate({ id });
  if (!row || (viewer !== undefined && !row.isSystem && row.userId !== viewer)) throw notFound("Metric template", id);
  return row;
}

export async function getTemplate(id: number, viewer: string): Promise<MetricTemplate> {
  return toTemplate(await getTemplateRow(id, viewer));
}

export async function createTemplate(input: CreateTemplateInput, userId: string): Promise<MetricTemplate> {
  const kind = input.kind ?? "llm";
  const { prompt, outputType } = promptAndOutput(kind, input.prompt, input.output_type);
  const derived = deriveDefinition({
    prompt,
    evaluationLevel: input.evaluation_level,
    outputType,
    outputSchema: input.output_schema,
    appliesTo: input.applies_to,
    kind,
    check: input.check,
  });
  const row = await repo.createTemplate({
    name: input.name,
    description: input.description ?? null,
    evaluationLevel: input.evaluation_level,
    prompt,
    outputType,
    modelName: input.model_name ?? null,
    category: input.category ?? null,
    isSystem: false,
    userId,
    systemKey: null,
    ...derived,
  });
  return toTemplate(row);
}

/** 404 for an unknown id, 403 unless the caller owns this (non-system) template. */
async function ownedRow(id: number, userId: string, action: "change" | "delete"): Promise<MetricTemplateRow> {
  const row = await getTemplateRow(id);
  if (row.isSystem) throw new AppError("forbidden", `Metric template ${id} is a system template and cannot be ${action === "change" ? "changed" : "deleted"}; duplicate it to make your own`);
  if (row.userId !== userId) throw new AppError("forbidden", `Metric template ${id} belongs to another user`);
  return row;
}

/** Change a template the caller owns; metrics copied from it earlier keep their copy. */
export async function updateTemplate(id: number, patch: UpdateTemplateInput, userId: string): Promise<MetricTemplate> {
  const row = await ownedRow(id, userId, "change");
  const kind = patch.kind ?? row.kind;
  const { prompt, outputType } = promptAndOutput(kind, patch.prompt ?? row.prompt, patch.output_type ?? row.outputType);
  const derived = deriveDefinition({
    kind,
    check: patch.check !== undefined ? patch.check : row.check,
    prompt,
    evaluationLevel: patch.evaluation_level ?? row.evaluationLevel,
    outputType,
    outputSchema: patch.output_schema !== undefined ? patch.output_schema : row.outputSchema,
    appliesTo: patch.applies_to !== undefined ? patch.applies_to : (patch.evaluation_level ?? row.evaluationLevel) === "step" ? row.appliesTo : null,
  });
  const updated = await repo.updateTemplate(id, {
    ...definitionPatch(patch),
    ...(patch.category !== undefined && { category: patch.category }),
    prompt,
    outputType,
    ...derived,
  });
  if (!updated) throw notFound("Metric template", id);
  return toTemplate(updated);
}

/** Delete a template the caller owns, permanently; metrics made from it keep working. */
export async function deleteTemplate(id: number, userId: string): Promise<void> {
  await ownedRow(id, userId, "delete");
  if (!await repo.deleteTemplate({ id })) throw notFound("Metric template", id);
}
