/**
 * The dataset grid: one page of rows (conversations, assistant messages or steps) with, per metric of
 * that level, the latest result across executions. A page costs the same few queries at any size.
 */
import "server-only";
import { latestResultsFor } from "@/db/repositories/executions";
import * as repo from "@/db/repositories/grid";
import type { EvaluationLevel, EvaluationResultRow } from "@/db/schema";
import { assertDatasetExists } from "@/lib/datasets";
import { stepKindsOf } from "@/lib/metrics/step-kinds";
import type { GridRow } from "@/lib/schemas/executions";

export type GridQuery = { level: EvaluationLevel; conversation_id?: number; limit: number; offset: number };

const LABEL_CHARS = 80;

/** First ~80 characters of a message on one line. */
export function messageLabel(content: string | null): string {
  const line = (content ?? "").replace(/\s+/g, " ").trim();
  if (!line) return "(no content)";
  return line.length > LABEL_CHARS ? `${line.slice(0, LABEL_CHARS - 1).trimEnd()}…` : line;
}

/** What a step does, e.g. `tool_call search_flights`, `tool_result`, `output`, `thinking`. */
export function stepLabel(step: Pick<repo.StepGridRow, "hasThinking" | "hasToolCall" | "hasToolResult" | "hasOutput" | "toolName">): string {
  if (step.hasToolCall) return step.toolName ? `tool_call ${step.toolName}` : "tool_call";
  if (step.hasToolResult) return "tool_result";
  if (step.hasOutput) return "output";
  if (step.hasThinking) return "thinking";
  return "(empty step)";
}

type Entity = Omit<GridRow, "cells">;

function entityPage(datasetId: number, q: GridQuery): { entities: Entity[]; total: number } {
  const opts = { datasetId, conversationId: q.conversation_id, limit: q.limit, offset: q.offset };
  if (q.level === "conversation") {
    const { items, total } = repo.listConversationPage(opts);
    const entities = items.map((c) => ({
      entity_type: "conversation" as const,
      entity_id: c.id,
      conversation_id: c.id,
      message_id: null,
      step_id: null,
      position: c.position,
      label: c.name?.trim() ? c.name : `Conversation ${c.position + 1}`,
      role: null,
      step_kinds: null,
    }));
    return { entities, total };
  }
  if (q.level === "message") {
    const { items, total } = repo.listAssistantMessagePage(opts);
    const entities = items.map((m) => ({
      entity_type: "message" as const,
      entity_id: m.id,
      conversation_id: m.conversationId,
      message_id: m.id,
      step_id: null,
      position: m.position,
      label: messageLabel(m.snippet),
      role: m.role,
      step_kinds: null,
    }));
    return { entities, total };
  }
  const { items, total } = repo.listStepPage(opts);
  const entities = items.map((s) => ({
    entity_type: "step" as const,
    entity_id: s.id,
    conversation_id: s.conversationId,
    message_id: s.messageId,
    step_id: s.id,
    position: s.position,
    label: stepLabel(s),
    step_kinds: stepKindsOf(s),
    // The role of the message the step belongs to.
    role: s.role,
  }));
  return { entities, total };
}

function toCell(r: EvaluationResultRow): GridRow["cells"][string] {
  return { status: r.status, result: r.result ?? null, error: r.error, execution_id: r.executionId, updated_at: r.createdAt };
}

/** A page of grid rows with their latest cells (404 for an unknown dataset). */
export function getGridPage(datasetId: number, q: GridQuery): { items: GridRow[]; total: number } {
  assertDatasetExists(datasetId);
  const { entities, total } = entityPage(datasetId, q);
  // Results whose metric has since moved to another level are not this level's columns.
  const columns = repo.listNodeIdsAtLevel(datasetId, q.level);
  const latest = latestResultsFor(columns, q.level, entities.map((e) => e.entity_id));
  const cellsByEntity = new Map<number, GridRow["cells"]>();
  for (const r of latest) {
    let cells = cellsByEntity.get(r.entityId);
    if (!cells) cellsByEntity.set(r.entityId, (cells = {}));
    cells[String(r.pipelineNodeId)] = toCell(r);
  }
  return { items: entities.map((e) => ({ ...e, cells: cellsByEntity.get(e.entity_id) ?? {} })), total };
}
