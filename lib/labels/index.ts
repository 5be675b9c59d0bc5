/**
 * Human labels of cells: one current label per (metric, entity, user), a relabel superseding the last
 * one and keeping it as history. A label's value is checked against the metric's output type.
 */
import "server-only";
import { locateEntityInDataset } from "@/db/repositories/entities";
import * as repo from "@/db/repositories/labels";
import type { LabelRow, PipelineNodeRow } from "@/db/schema";
import type { OutputType } from "@/lib/vocabulary";
import { AppError, notFound } from "@/lib/errors";
import { checkVerdict } from "@/lib/judge/verdicts";
import { assertDatasetExists } from "@/lib/datasets";
import { getMetricRow } from "@/lib/metrics/metrics";
import type { CreateLabelInput, Label, ListLabelsQuery } from "@/lib/schemas/labels";
import { labelScore } from "./readings";

export function toLabel(row: LabelRow): Label {
  return {
    id: row.id,
    dataset_id: row.datasetId,
    pipeline_node_id: row.pipelineNodeId,
    entity_type: row.entityType,
    entity_id: row.entityId,
    conversation_id: row.conversationId,
    user_id: row.userId,
    value: row.value ?? null,
    score: row.score,
    note: row.note,
    current: row.supersededAt === null,
    superseded_at: row.supersededAt,
    created_at: row.createdAt,
  };
}

const unprocessable = (path: string, message: string) => new AppError("unprocessable", `Invalid label: ${path} ${message}`, [{ path, message }]);

/** Why a value is not one the metric's result could hold, or undefined when it is. */
function valueProblem(node: Pick<PipelineNodeRow, "outputType" | "outputSchema">, value: unknown): string | undefined {
  const type: OutputType = node.outputType;
  switch (type) {
    case "checkbox":
      return typeof value === "boolean" ? undefined : "must be true or false for a checkbox metric";
    case "progress":
      return typeof value === "number" && value >= 0 && value <= 1 ? undefined : "must be a score between 0 and 1 for a progress metric";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number for a number metric";
    case "text":
      return typeof value === "string" && value.length <= 5000 ? undefined : "must be a string (at most 5000 characters) for a text metric";
    case "json": {
      const check = checkVerdict("json", node.outputSchema, value);
      return check.ok ? undefined : `must match the metric's output schema: ${check.reason}`;
    }
  }
}

/** Label a cell as the caller; the caller's earlier label of that cell becomes history. */
export async function createLabel(input: CreateLabelInput, userId: string): Promise<Label> {
  await assertDatasetExists(input.dataset_id);
  const node = await getMetricRow(input.pipeline_node_id);
  if (node.datasetId !== input.dataset_id) throw unprocessable("pipeline_node_id", `must be a metric of dataset ${input.dataset_id}`);
  if (input.entity_type !== node.evaluationLevel) {
    throw unprocessable("entity_type", `must be ${node.evaluationLevel}, the level of metric ${node.id}`);
  }
  const place = await locateEntityInDataset(input.dataset_id, input.entity_type, input.entity_id);
  if (!place) throw unprocessable("entity_id", `must be a ${input.entity_type} of dataset ${input.dataset_id}`);
  if (input.entity_type === "message" && place.role !== "assistant") {
    throw unprocessable("entity_id", "must be an assistant message (message-level metrics evaluate those)");
  }
  const value = input.value ?? null;
  const note = input.note?.trim() ? input.note : null;
  if (value === null && note === null) throw unprocessable("value", "is required unless a note is given");
  if (value !== null) {
    const problem = valueProblem(node, value);
    if (problem) throw unprocessable("value", problem);
  }
  const row = await repo.insertLabel({
    datasetId: input.dataset_id,
    pipelineNodeId: node.id,
    entityType: input.entity_type,
    entityId: input.entity_id,
    conversationId: place.conversationId,
    userId,
    value,
    score: labelScore(node.outputType, value),
    note,
  });
  return toLabel(row);
}

/** Labels of a dataset, newest first (current ones unless history is asked for). */
export async function listLabels(q: ListLabelsQuery): Promise<{ items: Label[]; total: number }> {
  await assertDatasetExists(q.dataset_id);
  if ((q.entity_type === undefined) !== (q.entity_id === undefined)) {
    throw new AppError("bad_request", "Invalid query parameter (give entity_type and entity_id together)", [
      { path: q.entity_type === undefined ? "entity_type" : "entity_id", message: "is required with the other" },
    ]);
  }
  const { items, total } = await repo.listLabelRows({
    datasetId: q.dataset_id,
    pipelineNodeId: q.pipeline_node_id,
    userId: q.user_id,
    entity: q.entity_type && q.entity_id ? { type: q.entity_type, id: q.entity_id } : undefined,
    includeHistory: q.include_history,
    limit: q.limit,
    offset: q.offset,
  });
  return { items: items.map(toLabel), total };
}

/** Delete one of the caller's labels (403 for another user's). Earlier versions stay as history. */
export async function deleteLabel(id: number, userId: string): Promise<void> {
  const row = await repo.getLabelRow(id);
  if (!row) throw notFound("Label", id);
  if (row.userId !== userId) throw new AppError("forbidden", `Label ${id} belongs to another user`);
  await repo.deleteLabelRow(id);
}
