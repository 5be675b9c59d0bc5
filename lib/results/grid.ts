/**
 * The dataset grid: one page of rows (conversations, assistant messages or steps) with, per metric of
 * that level, the latest result across executions. A page costs the same few queries at any size.
 */
import "server-only";
import { latestResultsFor, rollupsFor } from "@/db/repositories/evaluation-results";
import * as repo from "@/db/repositories/grid";
import { getNode } from "@/db/repositories/metrics";
import type { EvaluationResultRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { AppError } from "@/lib/errors";
import { conversationLabel } from "@/lib/conversation-label";
import { assertDatasetExists } from "@/lib/datasets";
import { decodeCursor, encodeCursor } from "@/lib/datasets/cursor";
import { stepKindsOf } from "@/lib/metrics/step-kinds";
import type { GridRow } from "@/lib/schemas/executions";

export type GridQuery = {
  level: EvaluationLevel;
  conversation_id?: number;
  limit: number;
  offset: number;
  meta?: string;
  sort?: string;
  filter?: string;
  cursor?: string;
};



const unprocessable = (path: string, message: string) => new AppError("unprocessable", `Invalid query parameter ${path}: ${message}`, [{ path, message }]);

/** A metric named by `metric.<id>` in sort/filter: it must be one of this dataset's metrics at the grid's level. */
async function metricAtLevel(datasetId: number, level: EvaluationLevel, id: number, param: string) {
  const node = await getNode({ id });
  if (!node || node.datasetId !== datasetId) throw unprocessable(param, `metric ${id} is not a metric of dataset ${datasetId}`);
  if (node.evaluationLevel !== level) throw unprocessable(param, `metric ${id} is a ${node.evaluationLevel}-level metric; the grid shows ${level} rows`);
  return node;
}

/** `true`/`false` as SQLite reads JSON booleans (1/0), numbers as numbers, quoted or bare text as text. */
function comparable(raw: string): string | number {
  if (raw === "true") return 1;
  if (raw === "false") return 0;
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const quoted = /^"(.*)"$/.exec(raw);
  return quoted ? quoted[1] : raw;
}

const conditionPattern = /^(meta\.(.+?)|metric\.(\d+))(==|!=|>=|<=|>|<)(.+)$/;

/** The zod-checked `meta`, `sort` and `filter` parameters as the repository's extras (422 for a metric it cannot use). */
export async function parseGridExtras(datasetId: number, q: GridQuery): Promise<repo.GridExtras | undefined> {
  if (!q.meta && !q.sort && !q.filter) return undefined;
  const extras: repo.GridExtras = { metaPaths: q.meta ? q.meta.split(",") : [], conditions: [] };
  if (q.sort) {
    const descending = q.sort.startsWith("-");
    const field = descending ? q.sort.slice(1) : q.sort;
    if (field.startsWith("meta.")) extras.sort = { kind: "meta", path: field.slice(5), descending };
    else {
      const node = await metricAtLevel(datasetId, q.level, Number(field.slice(7)), "sort");
      extras.sort = { kind: "score", nodeId: node.id, descending };
    }
  }
  for (const clause of q.filter ? q.filter.split(";") : []) {
    const m = conditionPattern.exec(clause);
    if (!m) throw unprocessable("filter", `cannot read condition "${clause}"`);
    const [, , metaPath, metricId, op, raw] = m as unknown as [string, string, string | undefined, string | undefined, repo.CompareOp, string];
    if (metaPath !== undefined) {
      extras.conditions.push({ kind: "meta", path: metaPath, op, value: comparable(raw) });
      continue;
    }
    const node = await metricAtLevel(datasetId, q.level, Number(metricId), "filter");
    if (raw === "pass" || raw === "fail" || raw === "failed" || raw === "none") {
      if (op !== "==" && op !== "!=") throw unprocessable("filter", `${raw} compares with == or != only`);
      if ((raw === "pass" || raw === "fail") && node.outputType !== "checkbox") {
        throw unprocessable("filter", `metric ${node.id} is a ${node.outputType} metric; pass/fail is for checkbox metrics, compare its score with a number`);
      }
      extras.conditions.push({ kind: "verdict", nodeId: node.id, negate: op === "!=", verdict: raw });
      continue;
    }
    const value = comparable(raw);
    if (typeof value !== "number") throw unprocessable("filter", `metric ${node.id} compares with a number, pass, fail, failed or none, not "${raw}"`);
    extras.conditions.push({ kind: "score", nodeId: node.id, op, value });
  }
  return extras;
}

/** Meta columns as JSON values, keyed by the keys asked for. */
function metaValues(paths: string[], row: Record<string, string | null>): Record<string, unknown> {
  return Object.fromEntries(paths.map((path, i) => {
    const text = row[`meta_${i}`];
    return [path, text === null || text === undefined ? null : (JSON.parse(text) as unknown)];
  }));
}

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

export type GridEntity = Omit<GridRow, "cells">;

export type PageTotals = { total: number; totalKind: repo.TotalKind; nextCursor: string | null };

export async function entityPage(datasetId: number, q: GridQuery): Promise<{ entities: GridEntity[] } & PageTotals> {
  const extras = await parseGridExtras(datasetId, q);
  let after: number | undefined;
  if (q.cursor !== undefined) {
    if (q.level !== "conversation") throw unprocessable("cursor", "pages the conversation level only; page messages and steps with offset");
    if (q.sort) throw unprocessable("cursor", "pages the grid in grid order; with a sort, page with offset");
    if (q.offset) throw unprocessable("cursor", "replaces offset: send one or the other");
    after = decodeCursor(q.cursor);
  }
  const opts = { datasetId, conversationId: q.conversation_id, limit: q.limit, offset: q.offset, extras, after };
  const meta = (row: { meta: Record<string, string | null> }) => (extras?.metaPaths.length ? { meta: metaValues(extras.metaPaths, row.meta) } : {});
  if (q.level === "conversation") {
    const { items, total, totalKind } = await repo.listConversationPage(opts);
    const last = items[items.length - 1];
    const nextCursor = !q.sort && items.length === q.limit && last ? encodeCursor(last.position) : null;
    const entities = items.map((c) => ({
      entity_type: "conversation" as const,
      entity_id: c.id,
      conversation_id: c.id,
      message_id: null,
      step_id: null,
      position: c.position,
      label: conversationLabel({ name: c.name, position: c.position, meta: c.labelMeta, firstUser: c.firstUser }),
      role: null,
      ...meta(c),
      step_kinds: null,
    }));
    return { entities, total, totalKind, nextCursor };
  }
  if (q.level === "message") {
    const { items, total } = await repo.listAssistantMessagePage(opts);
    const entities = items.map((m) => ({
      entity_type: "message" as const,
      entity_id: m.id,
      conversation_id: m.conversationId,
      message_id: m.id,
      step_id: null,
      position: m.position,
      label: messageLabel(m.snippet),
      role: m.role,
      ...meta(m),
      step_kinds: null,
    }));
    return { entities, total, totalKind: "exact", nextCursor: null };
  }
  const { items, total } = await repo.listStepPage(opts);
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
    ...meta(s),
  }));
  return { entities, total, totalKind: "exact", nextCursor: null };
}

function toCell(r: EvaluationResultRow): GridRow["cells"][string] {
  return { status: r.status, result: r.result ?? null, error: r.error, execution_id: r.executionId, updated_at: r.createdAt };
}

/** A page of grid rows with their latest cells (404 for an unknown dataset). */
export async function getGridPage(datasetId: number, q: GridQuery): Promise<{ items: GridRow[] } & PageTotals> {
  // A page with rows proves the dataset exists; only an empty one needs asking (404 or an empty page).
  // With a sort or filter the check comes first, so an unknown dataset is a 404 before its metrics are checked.
  const viewed = Boolean(q.meta || q.sort || q.filter);
  if (viewed) await assertDatasetExists(datasetId);
  const { entities, total, totalKind, nextCursor } = await entityPage(datasetId, q);
  if (!viewed && total === 0) await assertDatasetExists(datasetId);
  // Results whose metric has since moved to another level are not this level's columns.
  const columns = await repo.listNodeIdsAtLevel(datasetId, q.level);
  const latest = await latestResultsFor(columns, q.level, entities.map((e) => e.entity_id));
  const cellsByEntity = new Map<number, GridRow["cells"]>();
  for (const r of latest) {
    let cells = cellsByEntity.get(r.entityId);
    if (!cells) cellsByEntity.set(r.entityId, (cells = {}));
    cells[String(r.pipelineNodeId)] = toCell(r);
  }
  const rollups = q.level === "conversation" ? await rollupsOf(datasetId, entities.map((e) => e.entity_id)) : null;
  return {
    items: entities.map((e) => ({
      ...e,
      cells: cellsByEntity.get(e.entity_id) ?? {},
      ...(rollups ? { rollups: rollups.get(e.entity_id) ?? {} } : {}),
    })),
    total,
    totalKind,
    nextCursor,
  };
}

/** Conversation rows' summaries of their message- and step-level metrics' latest cells. */
async function rollupsOf(datasetId: number, conversationIds: number[]): Promise<Map<number, NonNullable<GridRow["rollups"]>>> {
  const out = new Map<number, NonNullable<GridRow["rollups"]>>();
  if (conversationIds.length === 0) return out;
  for (const level of ["message", "step"] as const) {
    const nodes = await repo.listNodeIdsAtLevel(datasetId, level);
    for (const r of await rollupsFor(nodes, level, conversationIds)) {
      let row = out.get(r.conversationId);
      if (!row) out.set(r.conversationId, (row = {}));
      row[String(r.pipelineNodeId)] = { completed: r.completed, failed: r.failed, mean: r.scored > 0 && r.scoreSum !== null ? r.scoreSum / r.scored : null };
    }
  }
  return out;
}
