/** Metrics (evaluation pipeline nodes) as the API shows them, and the judge-prompt preview. */
import "server-only";
import { getConversationTree, getConversationTrees } from "@/db/repositories/datasets";
import { getStoredGoal } from "@/db/repositories/judge";
import * as repo from "@/db/repositories/metrics";
import type { PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { AppError, notFound } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { contextTokensFor, getJudgeConfig, resolveModelName } from "@/lib/judge/config";
import type { CreateMetricInput, JudgePromptPreview, Metric, PreviewInput, UpdateMetricInput } from "@/lib/schemas/metrics";
import { assertPromptVariables, definitionPatch, definitionToWire, deriveDefinition, promptAndOutput } from "./definition";
import { buildJudgePrompt, type ConversationTree, type EntityRef, type JudgeMetric } from "./resolve";
import { listPromptVersions, recordPromptVersion } from "@/db/repositories/prompt-versions";
import type { MetricReference, MetricVersion } from "@/lib/schemas/labels";
import { assertReference } from "./reference";
import { metricVerdicts } from "./metric-verdicts";
import { getTemplateRow } from "./templates";
import { isMetricVariable, metricVariableName } from "./variables";

/**
 * 422 unless every dependency is another metric of the dataset and the graph stays acyclic (the
 * message gives the cycle's path by name, e.g. "A → B → A").
 */
async function assertDependencies(datasetId: number, selfId: number | null, selfName: string, dependsOn: number[]): Promise<number[]> {
  const unique = [...new Set(dependsOn)];
  if (unique.length === 0) return unique;
  const nodes = await repo.listNodes({ datasetId });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const id of unique) {
    if (id === selfId) throw new AppError("unprocessable", "A metric cannot depend on itself", [{ path: "depends_on", message: `${id} is this metric` }]);
    if (!byId.has(id)) {
      throw new AppError("unprocessable", `Metric ${id} is not a metric of dataset ${datasetId}`, [{ path: "depends_on", message: `${id} must be a metric of the same dataset` }]);
    }
  }
  if (selfId === null) return unique; // a new metric has no dependents yet, so it cannot close a cycle
  const edges = (id: number) => (id === selfId ? unique : (byId.get(id)?.dependsOn ?? []));
  const name = (id: number) => (id === selfId ? selfName : (byId.get(id)?.name ?? String(id)));
  // Depth-first from this metric: reaching it again closes a cycle through it.
  const path: number[] = [selfId];
  const seen = new Set<number>();
  const visit = (id: number): number[] | null => {
    for (const next of edges(id)) {
      if (next === selfId) return [...path, selfId];
      if (seen.has(next)) continue;
      seen.add(next);
      path.push(next);
      const found = visit(next);
      if (found) return found;
      path.pop();
    }
    return null;
  };
  const cycle = visit(selfId);
  if (cycle) {
    const text = cycle.map(name).join(" → ");
    throw new AppError("unprocessable", `depends_on would make a cycle: ${text}`, [{ path: "depends_on", message: `cycle: ${text}` }]);
  }
  return unique;
}

/** 422 unless every `@METRIC.<name>` of the prompt names one of the metric's dependencies. */
async function assertMetricVariables(datasetId: number, templateVariables: string[], dependsOn: number[]): Promise<void> {
  const used = templateVariables.filter(isMetricVariable);
  if (used.length === 0) return;
  const names = new Map(
    (await repo
      .listNodes({ datasetId }))
      .filter((n) => dependsOn.includes(n.id))
      .map((n) => [metricVariableName(n.name).toLowerCase(), n.name]),
  );
  const unknown = used.filter((v) => !names.has(v.toLowerCase()));
  if (unknown.length) {
    throw new AppError("unprocessable", `${unknown.join(", ")} must name a metric listed in depends_on (written ${metricVariableName("Metric name")})`, unknown.map((v) => ({ path: "prompt", message: `${v} is not a dependency of this metric` })));
  }
}

export function toMetric(row: PipelineNodeRow): Metric {
  return {
    id: row.id,
    evaluation_pipeline_id: row.evaluationPipelineId,
    dataset_id: row.datasetId,
    template_id: row.templateId,
    ...definitionToWire(row),
    reference: (row.reference ?? null) as MetricReference | null,
    depends_on: row.dependsOn ?? [],
    skip_rule: row.skipRule ?? null,
    position: row.position,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** A dataset's metrics in column order; 404 for an unknown dataset. */
export async function listMetrics(datasetId: number): Promise<Metric[]> {
  await assertDatasetExists(datasetId);
  return (await repo.listNodes({ datasetId })).map(toMetric);
}

/** The metric row (what the runner judges with), or a 404 AppError. */
export async function getMetricRow(id: number): Promise<PipelineNodeRow> {
  const row = await repo.getNode({ id });
  if (!row) throw notFound("Metric", id);
  return row;
}

export async function getMetric(id: number): Promise<Metric> {
  return toMetric(await getMetricRow(id));
}

/**
 * Create a metric, appended as the dataset's last column. With `template_id` the template's fields are
 * copied (the body overrides them); the copy never follows later edits of the template.
 */
export async function createMetric(input: CreateMetricInput, userId?: string): Promise<Metric> {
  await assertDatasetExists(input.dataset_id);
  const template = input.template_id != null ? await getTemplateRow(input.template_id, userId) : undefined;
  // The body schema requires these four without a template, so the fallbacks only apply with one.
  const name = input.name ?? template?.name;
  const evaluationLevel = input.evaluation_level ?? template?.evaluationLevel;
  const kind = input.kind ?? template?.kind ?? "llm";
  if (name === undefined || evaluationLevel === undefined) {
    throw new AppError("bad_request", "name and evaluation_level are required without template_id");
  }
  const { prompt, outputType } = promptAndOutput(kind, input.prompt ?? template?.prompt, input.output_type ?? template?.outputType);
  const derived = deriveDefinition({
    kind,
    check: input.check !== undefined ? input.check : template?.check,
    prompt,
    evaluationLevel,
    outputType,
    outputSchema: input.output_schema !== undefined ? input.output_schema : template?.outputSchema,
    appliesTo: input.applies_to !== undefined ? input.applies_to : template?.appliesTo,
  });
  assertReference(input.reference, { evaluationLevel, outputType });
  const dependsOn = await assertDependencies(input.dataset_id, null, name, input.depends_on ?? []);
  await assertMetricVariables(input.dataset_id, derived.templateVariables, dependsOn);
  const row = await repo.createNode(input.dataset_id, {
    templateId: template?.id ?? null,
    name,
    description: input.description !== undefined ? input.description : (template?.description ?? null),
    evaluationLevel,
    prompt,
    outputType,
    modelName: input.model_name !== undefined ? input.model_name : (template?.modelName ?? null),
    reference: input.reference ?? null,
    dependsOn,
    skipRule: input.skip_rule ?? null,
    ...derived,
  });
  await recordPromptVersion(row);
  return toMetric(row);
}

/** Change a metric; the prompt is re-checked against the (possibly new) level and variables re-derived. */
export async function updateMetric(id: number, patch: UpdateMetricInput): Promise<Metric> {
  const row = await getMetricRow(id);
  const kind = patch.kind ?? row.kind;
  const { prompt, outputType } = promptAndOutput(kind, patch.prompt ?? row.prompt, patch.output_type ?? row.outputType);
  const derived = deriveDefinition({
    kind,
    check: patch.check !== undefined ? patch.check : row.check,
    prompt,
    evaluationLevel: patch.evaluation_level ?? row.evaluationLevel,
    outputType,
    outputSchema: patch.output_schema !== undefined ? patch.output_schema : row.outputSchema,
    // Moving a step metric to another level drops its step kinds rather than rejecting the move.
    appliesTo: patch.applies_to !== undefined ? patch.applies_to : (patch.evaluation_level ?? row.evaluationLevel) === "step" ? row.appliesTo : null,
  });
  assertReference(patch.reference !== undefined ? patch.reference : (row.reference as MetricReference | null), {
    evaluationLevel: patch.evaluation_level ?? row.evaluationLevel,
    outputType: patch.output_type ?? row.outputType,
  });
  // Metrics saved before versions were kept get their definition recorded as the first version.
  await recordPromptVersion(row);
  const dependsOn = patch.depends_on !== undefined ? await assertDependencies(row.datasetId, row.id, patch.name ?? row.name, patch.depends_on) : row.dependsOn;
  await assertMetricVariables(row.datasetId, derived.templateVariables, dependsOn);
  const updated = await repo.updateNode(
    id,
    {
      ...definitionPatch(patch),
      ...(patch.reference !== undefined && { reference: patch.reference }),
      prompt,
      outputType,
      dependsOn,
      ...(patch.skip_rule !== undefined && { skipRule: patch.skip_rule }),
      ...derived,
    },
    patch.position,
  );
  if (!updated) throw notFound("Metric", id);
  await recordPromptVersion(updated);
  return toMetric(updated);
}

/** Delete a metric and its results. */
export async function deleteMetric(id: number): Promise<void> {
  if (!await repo.deleteNode({ id })) throw notFound("Metric", id);
}

const entityLabels: Record<EvaluationLevel, string> = { conversation: "Conversation", message: "Message", step: "Step" };

/** The conversation (and dataset) an entity belongs to, or a 404 AppError. */
export async function locateEntityOrThrow(entity: EntityRef): Promise<{ conversationId: number; datasetId: number }> {
  const found = await repo.locateEntityRow(entity);
  if (!found) throw notFound(entityLabels[entity.type], entity.id);
  return found;
}

/** Load one conversation with its messages and steps, ready for `buildJudgePrompt` (404 if unknown). */
export async function loadConversationTree(conversationId: number): Promise<ConversationTree> {
  const tree = await getConversationTree({ id: conversationId });
  if (!tree) throw notFound("Conversation", conversationId);
  return tree;
}

/** Several conversations' trees in three queries, by id (unknown ids are absent: loadConversationTree gives their 404). */
export async function loadConversationTrees(conversationIds: number[]): Promise<Map<number, ConversationTree>> {
  return getConversationTrees(conversationIds);
}

/**
 * The exact system message and prompt the judge would receive for a metric (saved or not) at an entity,
 * fitted to the model's context window, with the token estimate and what had to be cut.
 */
export async function previewJudgePrompt(input: PreviewInput): Promise<JudgePromptPreview> {
  let metric: JudgeMetric;
  let datasetId: number | undefined;
  let metricModel: string | null = null;
  let saved: PipelineNodeRow | undefined;
  if (input.pipeline_node_id !== undefined) {
    const node = await getMetricRow(input.pipeline_node_id);
    saved = node;
    metric = node;
    datasetId = node.datasetId;
    metricModel = node.modelName;
  } else {
    if (input.prompt === undefined || input.evaluation_level === undefined) {
      throw new AppError("bad_request", "give pipeline_node_id, or prompt with evaluation_level");
    }
    // Lenient on output_schema (an editor previews before the schema is finished), strict on variables.
    assertPromptVariables(input.prompt, input.evaluation_level, input.output_type);
    metric = {
      prompt: input.prompt,
      evaluationLevel: input.evaluation_level,
      outputType: input.output_type ?? "progress",
      outputSchema: input.output_type === "json" ? input.output_schema : null,
    };
  }
  const entity: EntityRef = { type: input.entity_type ?? metric.evaluationLevel, id: input.entity_id };
  if (entity.type !== metric.evaluationLevel) {
    throw new AppError("unprocessable", `A ${metric.evaluationLevel}-level metric is previewed on a ${metric.evaluationLevel}, not a ${entity.type}`, [
      { path: "entity_type", message: `must be ${metric.evaluationLevel}` },
    ]);
  }
  const location = await locateEntityOrThrow(entity);
  if (datasetId !== undefined && location.datasetId !== datasetId) {
    throw new AppError("unprocessable", `${entityLabels[entity.type]} ${entity.id} is not in the metric's dataset ${datasetId}`, [
      { path: "entity_id", message: `must belong to dataset ${datasetId}` },
    ]);
  }
  // The same model choice as a run without an override: the request's, else the metric's, else the default.
  const model = resolveModelName(input.model_name, metricModel);
  const contextTokens = contextTokensFor(model);
  // A saved metric's @METRIC.<name> variables show its dependencies' latest verdicts here too.
  const metricValues = saved
    ? await metricVerdicts(saved, { ...entity, conversationId: location.conversationId }, new Map((await repo.listNodes({ datasetId: saved.datasetId })).map((n) => [n.id, n])))
    : undefined;
  const tree = await loadConversationTree(location.conversationId);
  const prompt = buildJudgePrompt({ metric, tree, entity, metricValues, contextTokens });
  return { ...prompt, model, context_tokens: contextTokens, goal: prompt.template_variables.includes("@GOAL") ? goalNote(await getStoredGoal(tree.conversation.id), model) : null };
}

/** Which goal text a preview shows, and which one a run would send (issue 34.2: the preview showed one, the run used another). */
function goalNote(stored: { goal: string | null; generatedBy: string | null } | undefined, model: string): NonNullable<JudgePromptPreview["goal"]> {
  const goal = stored?.goal;
  const goalGeneratedBy = stored?.generatedBy;
  if (goal && goalGeneratedBy) return { source: "extracted", note: `The goal ${goalGeneratedBy} extracted from this conversation (stored; every run uses it).` };
  if (goal) return { source: "imported", note: "The goal imported with this conversation (every run uses it)." };
  return getJudgeConfig().configured
    ? { source: "first_user_message", note: `No goal is stored yet: this preview shows the first user message. A run first asks ${model} for the goal (one call for this conversation, counted in the run's cost) and sends that instead.` }
    : { source: "first_user_message", note: "No goal is stored and no judge model is configured: the first user message is the goal." };
}

/** A metric's saved judge definitions, oldest first (metrics from before versions were kept start at their first save). */
export async function listMetricVersions(id: number): Promise<MetricVersion[]> {
  await getMetricRow(id);
  return (await listPromptVersions(id)).map((v) => ({
    version: v.version,
    prompt: v.prompt,
    evaluation_level: v.evaluationLevel,
    output_type: v.outputType,
    output_schema: v.outputSchema ?? null,
    model_name: v.modelName,
    created_at: v.createdAt,
  }));
}
